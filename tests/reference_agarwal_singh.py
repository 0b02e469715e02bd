"""Plain per-run references for Agarwal & Singh (ICML 2017), written from the
boxes: Algorithm 1/3 with Algorithm 2 (a PrivateSum tree kept as an explicit
dict of populated dyadic nodes) and Algorithm 4 around Algorithm 5.

Draw order, shared with the vectorised code so both can run on one stream:
per round, the padding of L̃_{t−1} (the sum of its r_t fresh draws, drawn in
one step with the same law as in algorithms/agarwal_singh/full_info.py; at
t = 1 the ⌈log T⌉ draws of Algorithm 1 line 2), then one uniform to sample the expert
(FTRL), then in the update one N-vector for the node round t populates.
Bandit: one uniform to sample i_t, then one Laplace draw for Z_t(i_t).
"""
from __future__ import annotations

import math

from algorithms.core import sample_one


class RefTreeFTRL:
    """Algorithm 1 (``kind="ftrl"``, entropic R) or Algorithm 3
    (``kind="ftpl"``) over the simplex, with TreeBasedAgg (Algorithm 2)."""

    def __init__(self, N, T, draws, noise, pad, kind, eta=None):
        self.N, self.T, self.draws, self.noise, self.kind, self.eta = N, T, draws, noise, kind, eta
        self.pad = pad
        self.nodes = {}        # (level, end round) -> noisy N-vector, populated nodes only
        self.losses = []
        self.t = 0
        self.released = []     # node values in release order

    def _noisy_prefix(self, rng):
        """Algorithm 2 lines 3–6 for L̃_t, t = self.t: the minimal set S of
        populated nodes covering 1..t (t's binary digits from the top), plus
        ⌈log T⌉ − |S| fresh draws."""
        t, total, q = self.t, [0.0] * self.N, 0
        end = 0
        for j in reversed(range(max(t.bit_length(), 1))):
            if t >> j & 1:
                end += 2 ** j
                v = self.nodes[(j, end)]
                total = [a + b for a, b in zip(total, v)]
                q += 1
        if self.draws - q > 0:
            z = self.pad(rng, self.draws - q, self.N)
            total = [a + b for a, b in zip(total, z)]
        return total

    def act(self, rng):
        L = self._noisy_prefix(rng)                      # L̃_{t−1}
        if self.kind == "ftrl":
            m = min(L)
            w = [math.exp(-self.eta * (x - m)) for x in L]
            s = sum(w)
            self.x = [wi / s for wi in w]                # argmin η⟨x, L̃⟩ + Σ x log x
            return sample_one(self.x, rng.random())
        i = min(range(self.N), key=lambda k: L[k])      # argmin ⟨x, L̃⟩ over Δ_N
        self.x = [1.0 if k == i else 0.0 for k in range(self.N)]
        return i

    def feed(self, row, rng):
        self.t += 1
        self.losses.append(list(row))
        t = self.t
        j = (t & -t).bit_length() - 1                   # the node that completes at t
        exact = [sum(self.losses[s][k] for s in range(t - 2 ** j, t)) for k in range(self.N)]
        z = self.noise(rng, self.N)
        self.nodes[(j, t)] = [a + b for a, b in zip(exact, z)]
        self.released.append(self.nodes[(j, t)])


def laplace(lam):
    return lambda rng, n: list(rng.laplace(0.0, lam, (1, n))[0])


def gauss(sigma):
    return lambda rng, n: list(rng.normal(0.0, sigma, (1, n))[0])


def laplace_pad(lam):
    """Σ of r Lap(λ) draws = λ(Gamma(r) − Gamma(r))."""
    return lambda rng, r, n: list(lam * (rng.standard_gamma(r, (1, n))[0]
                                         - rng.standard_gamma(r, (1, n))[0]))


def gauss_pad(sigma):
    """Σ of r 𝒩(0, σ²) draws = σ√r·𝒩(0, 1)."""
    return lambda rng, r, n: list(sigma * math.sqrt(r) * rng.standard_normal((1, n))[0])


class RefPrivateEXP2:
    """Algorithm 4 around Algorithm 5 (μ uniform)."""

    def __init__(self, N, eta, gamma, lam):
        self.N, self.eta, self.gamma, self.lam = N, eta, gamma, lam
        self.q = [1.0 / N] * N                           # Alg 5 line 1

    def act(self, rng):
        self.p = [(1 - self.gamma) * qi + self.gamma / self.N for qi in self.q]   # line 3
        self.i = sample_one(self.p, rng.random())
        return self.i

    def feed(self, loss, rng):
        noisy = loss + rng.laplace(0.0, self.lam, 1)[0]   # Alg 4 lines 3–5 (Z_t(i_t) only)
        self.released = noisy
        est = noisy / self.p[self.i]                       # Alg 5 line 4: P_t⁺ e_i e_iᵀ ℓ̃
        w = [qi * math.exp(-self.eta * est) if k == self.i else qi
             for k, qi in enumerate(self.q)]               # line 5
        s = sum(w)
        self.q = [wi / s for wi in w]


def play_bandit(ref, losses, rng):
    """One run of a per-run bandit reference (``act(rng)``, ``feed(loss,
    rng)``, ``released``) on the loss table ``losses``: the arms it plays and
    the noisy loss it releases each round."""
    acts, rel = [], []
    for row in losses:
        i = ref.act(rng)
        ref.feed(row[i], rng)
        acts.append(i)
        rel.append(ref.released)
    return acts, rel
