"""Plain per-run references for the Agarwal & Singh instances the findings
added, written from the boxes: Algorithm 1 with R(x) = ‖x‖₂² over the unit
ℓ₂ ball (Corollary 3.2.2) and over [−1, 1]^N (Corollary 3.2.3), on the
PrivateSum tree of Algorithm 2; and Algorithm 4 (Lemma 4.2) around a base
bandit learner, here Algorithm 5 (EXP2) or any per-run learner with
``act(rng)`` / ``feed(loss, rng)``.

Draw order, shared with the vectorised code: per round the padding of
L̃_{t−1}, then (in the update) one N-vector for the node round t completes
(the tree, as ``RefTreeFTRL``); for Algorithm 4, the base learner's draws
when it acts, then one Laplace draw for Z_t(i_t), then the base learner's
update.
"""
from __future__ import annotations

import math

from algorithms.core import sample_one
from tests.reference_agarwal_singh import RefTreeFTRL


class RefTreeOLO(RefTreeFTRL):
    """Algorithm 1 line 5 with R(x) = ‖x‖₂²: x_t = argmin_{x ∈ 𝒳} η⟨x, L̃⟩ +
    ‖x‖₂², i.e. the point of 𝒳 nearest to −ηL̃/2 (``body`` "sphere": the
    unit ℓ₂ ball; "cube": [−1, 1]^N), computed coordinate by coordinate."""

    def __init__(self, N, T, draws, noise, pad, body, eta):
        super().__init__(N, T, draws, noise, pad, "olo", eta)
        self.body = body

    def act(self, rng):
        L = self._noisy_prefix(rng)
        u = [-self.eta * v / 2.0 for v in L]           # unconstrained minimiser
        if self.body == "sphere":
            norm = math.sqrt(sum(v * v for v in u))
            self.x = [v / norm for v in u] if norm > 1.0 else u
        else:
            self.x = [min(1.0, max(-1.0, v)) for v in u]
        return 0


class RefEXP2:
    """Algorithm 5 (μ uniform) on its own: the base learner of Algorithm 4."""

    def __init__(self, N, eta, gamma):
        self.N, self.eta, self.gamma = N, eta, gamma
        self.q = [1.0 / N] * N

    def act(self, rng):
        self.p = [(1 - self.gamma) * qi + self.gamma / self.N for qi in self.q]
        self.i = sample_one(self.p, rng.random())
        return self.i

    def feed(self, fed, rng):
        est = fed / self.p[self.i]
        w = [qi * math.exp(-self.eta * est) if k == self.i else qi for k, qi in enumerate(self.q)]
        s = sum(w)
        self.q = [wi / s for wi in w]


class RefCanary:
    """The threshold canary as a per-run base learner: arm 1 until its first
    feedback, then arm 2 forever iff that feedback was ≥ ``c``."""

    def __init__(self, c):
        self.c, self.switch, self.fed = c, False, False

    def act(self, rng):
        return 1 if self.switch else 0

    def feed(self, fed, rng):
        if not self.fed:
            self.fed, self.switch = True, fed >= self.c


class RefReduction:
    """Algorithm 4 𝒜′(𝒜, Lap^N(λ)): output the base learner's x̃_t = e_{i_t},
    observe ⟨l_t, x̃_t⟩ = l_t(i_t), forward l_t(i_t) + ⟨Z_t, x̃_t⟩ = l_t(i_t) +
    Z_t(i_t) to the base learner."""

    def __init__(self, base, lam):
        self.base, self.lam = base, lam

    def act(self, rng):
        self.i = self.base.act(rng)
        return self.i

    def feed(self, loss, rng):
        self.released = loss + rng.laplace(0.0, self.lam, 1)[0]
        self.base.feed(self.released, rng)
