"""Per-run reference of Algorithm 1 PRIVATEBANDIT (Ene, Nguyen & Vladu, AAAI
2021), written line by line from the box with plain Python loops and lists,
one run.  Slow on purpose: the oracle the vectorised learner is tested against.

Draw order (the same as the vectorised learner with one run): first the
padding of s̃_0 (``start``: ⌈log₂ T_round⌉ draws of n noise values); each
round n standard normals for u_t (line 8); at the end of each batch n noise
draws for the tree block that batch completes (line 13), then the padding
that tops s̃_R up to ⌈log₂ T_round⌉ draws (Theorem 4).
"""
from __future__ import annotations

import math


def lmo(domain: str, g: list) -> list:
    n = len(g)
    v = [0.0] * n
    if domain == "simplex":
        i = min(range(n), key=lambda k: (g[k], k))
        v[i] = 1.0
    else:
        i = max(range(n), key=lambda k: (abs(g[k]), -k))
        v[i] = -math.copysign(1.0, g[i]) if g[i] != 0 else 0.0
    return v


def f_value(row, y) -> float:
    v = sum(a * yi for a, yi in zip(row[1:-1], y)) - row[-1]
    return abs(v) if row[0] == 1 else v


class RefPrivateBandit:
    def __init__(self, n, T, domain, tbatch, eta, zeta, cg_iters, noise, scale):
        self.n, self.T, self.domain = n, T, domain
        self.tbatch, self.eta, self.zeta, self.cg_iters = tbatch, eta, zeta, cg_iters
        self.noise, self.scale = noise, scale
        self.n_rounds = T // tbatch
        # x̃_0 = argmin_D ½‖x‖²: the centre of the domain.
        self.xt = [1.0 / n] * n if domain == "simplex" else [0.0] * n
        self.s_prev = None               # s̃_0: ``start``
        self.g = [0.0] * n               # line 5
        self.t = 0
        # Binary counter over batches: exact open block sums, released values.
        L = int(self.n_rounds).bit_length()
        self.alpha = [[0.0] * n for _ in range(L)]
        self.noisy = [[0.0] * n for _ in range(L)]
        self.releases = []
        # Theorem 4: every prefix sum carries log T_round draws (T_round the
        # tree's length), counted as ⌈log₂ T_round⌉.
        self.draws = (self.n_rounds - 1).bit_length() if self.n_rounds >= 1 else 0
        # Played points read s̃_0..s̃_{T_round−2}, and s̃_{T_round−1} when
        # rounds are left over: the blocks released by then are the transcript.
        leftover = T > self.n_rounds * tbatch
        self.last_read = max(self.n_rounds - (1 if leftover else 2), 0)

    def start(self, rng):
        """s̃_0: the tree's first output, padding alone."""
        self.s_prev = self.padding(self.draws, rng)

    def padding(self, r, rng):
        total = [0.0] * self.n
        for _ in range(r):
            total = [a + b for a, b in zip(total, self.draw_noise(rng))]
        return total

    def draw_noise(self, rng):
        if self.noise == "laplace":
            return [float(v) for v in rng.laplace(0.0, self.scale, self.n)]
        return [float(v) for v in rng.normal(0.0, self.scale, self.n)]

    def cg(self, s):
        x = list(self.xt)
        for _ in range(self.cg_iters):
            g = [xi + self.eta * si for xi, si in zip(x, s)]
            v = lmo(self.domain, g)
            d = [vi - xi for vi, xi in zip(v, x)]
            dd = sum(di * di for di in d)
            gd = sum(gi * di for gi, di in zip(g, d))
            step = min(max(-gd / dd, 0.0), 1.0) if dd > 0 else 0.0
            x = [xi + step * di for xi, di in zip(x, d)]
        return x

    def act(self, rng):
        z = [float(v) for v in rng.standard_normal(self.n)]       # line 8
        nz = math.sqrt(sum(v * v for v in z))
        self.u = [v / nz for v in z]
        self.y = [xi + self.zeta * ui for xi, ui in zip(self.xt, self.u)]   # line 9
        return self.y

    def feed(self, row, rng):
        self.t += 1
        t = self.t
        if t > self.n_rounds * self.tbatch:
            return
        F = self.n / self.zeta * f_value(row, self.y)             # line 10
        self.g = [gi + F * ui for gi, ui in zip(self.g, self.u)]  # line 11
        if t % self.tbatch:
            return
        R = t // self.tbatch
        j = (R & -R).bit_length() - 1          # the block batch R completes
        block = list(self.g)
        for k in range(j):                     # absorbs the lower open blocks
            block = [b + a for b, a in zip(block, self.alpha[k])]
            self.alpha[k] = [0.0] * self.n
        self.alpha[j] = block
        self.noisy[j] = [b + e for b, e in zip(block, self.draw_noise(rng))]
        if R <= self.last_read:
            self.releases.append(list(self.noisy[j]))
        s_new = [0.0] * self.n                 # line 13: s̃_R from R's set bits
        for k in range(len(self.noisy)):
            if R >> k & 1:
                s_new = [a + b for a, b in zip(s_new, self.noisy[k])]
        pad = self.padding(self.draws - bin(R).count("1"), rng)
        s_new = [a + b for a, b in zip(s_new, pad)]
        self.xt = self.cg(self.s_prev)         # line 14 (stale sum s̃_{R−1})
        self.s_prev = s_new
        self.g = [0.0] * self.n
