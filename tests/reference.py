"""Plain per-run reference implementations, written line by line from the
algorithm boxes of Asi, Raman & Talwar (ICML 2025).  Slow on purpose: they
are the oracle the vectorised code is tested against.

Each draws its randomness in the order the box does (one uniform to sample an
action, Laplace noise when the box adds it), which is also the order the
vectorised code uses with one run, so the two can be compared on the same
random stream.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.core import sample_one


class RefEXP3:
    """Algorithm 3 (EXP3 with mixing)."""

    def __init__(self, K, eta, gamma):
        self.K, self.eta, self.gamma = K, eta, gamma
        self.logw = [0.0] * K  # line 1: w_1(i) = 1

    def dist(self):
        m = max(self.logw)
        w = [math.exp(x - m) for x in self.logw]
        s = sum(w)
        return [(1 - self.gamma) * wi / s + self.gamma / self.K for wi in w]  # line 4

    def act(self, rng):
        self.P = self.dist()
        return sample_one(self.P, rng.random())  # line 5

    def feed(self, i, loss, rng):
        self.logw[i] -= self.eta * loss / self.P[i]  # lines 6-7 (only I_t has ℓ̂ ≠ 0)


class RefHTINF:
    """HTINF, α = 2, as algorithms/private_bandits/htinf.py describes it; the FTRL step solved by plain
    bisection (a different numerical method from the vectorised Newton)."""

    THETA = 1 - 2 ** (-1 / 3)

    def __init__(self, K, sigma):
        self.K, self.sigma, self.L, self.t = K, sigma, [0.0] * K, 0

    def dist(self):
        eta = 1 / (self.sigma * math.sqrt(self.t + 1))
        a = [eta * x for x in self.L]
        lo, hi = -min(a) + 1.0, -min(a) + math.sqrt(self.K)
        for _ in range(200):
            mid = (lo + hi) / 2
            if sum((ai + mid) ** -2 for ai in a) > 1:
                lo = mid
            else:
                hi = mid
        x = [(ai + (lo + hi) / 2) ** -2 for ai in a]
        s = sum(x)
        return [xi / s for xi in x]

    def act(self, rng):
        self.x = self.dist()
        return sample_one(self.x, rng.random())

    def feed(self, i, loss, rng):
        self.t += 1
        eta = 1 / (self.sigma * math.sqrt(self.t))
        if abs(loss) <= self.THETA * math.sqrt(self.x[i]) / eta:
            self.L[i] += loss / self.x[i]


class RefFTPL:
    """Algorithm 4 (argmin in line 11; M_t = M when no redraw matches)."""

    def __init__(self, K, eta, M):
        self.K, self.eta, self.M, self.L = K, eta, M, np.zeros(K)

    def act(self, rng):
        z = rng.laplace(0, 1 / self.eta, self.K)           # line 4
        return int(np.argmin(self.L + z))                  # line 5

    def feed(self, i, loss, rng):
        m_t = self.M
        for k in range(1, self.M + 1):                     # lines 8-13
            z = rng.laplace(0, 1 / self.eta, self.K)
            if int(np.argmin(self.L + z)) == i:
                m_t = k
                break
        self.L[i] += loss * m_t                            # lines 17-18


class RefAlg1:
    """Algorithm 1 around a reference base learner, over a whole horizon."""

    def __init__(self, base, tau, epsilon, T):
        self.base, self.tau, self.eps, self.T = base, tau, epsilon, T

    def run(self, losses, rng):
        tau, actions, j, total = self.tau, [], 1, 0.0
        n_batches = self.T // tau
        for t in range(1, self.T + 1):
            if t == (j - 1) * tau + 1 and j <= n_batches:   # line 4
                I_j = self.base.act(rng)                    # line 5
            actions.append(I_j)                             # line 7
            if j <= n_batches:
                total += losses[t - 1][I_j]
                if t == j * tau:                            # line 9
                    mean = total / tau                      # line 10
                    z = rng.laplace(0, 1 / (tau * self.eps))
                    self.base.feed(I_j, mean + z, rng)      # line 11
                    j, total = j + 1, 0.0                   # line 12
        return actions


class RefAlg5:
    """Algorithm 5 around a reference bandit learner over N experts (which
    itself may be RefAlg1-like; here it is any object with act/feed)."""

    def __init__(self, base):
        self.base = base

    def run(self, losses, advice, rng):
        actions = []
        for t in range(len(losses)):
            J = self.base.act(rng)                          # line 7
            I = sample_one(list(advice[t][J]), rng.random())  # line 5, for j = J only
            actions.append(I)                               # line 8
            self.base.feed(J, losses[t][I], rng)            # line 9
        return actions


class BatchedBase:
    """Algorithm 1 as a per-round bandit learner (so Algorithm 5 can wrap it)."""

    def __init__(self, base, tau, epsilon, T):
        self.base, self.tau, self.eps, self.T = base, tau, epsilon, T
        self.t, self.total, self.I = 0, 0.0, None

    def act(self, rng):
        if self.t % self.tau == 0 and self.t + self.tau <= self.T:
            self.I = self.base.act(rng)
        return self.I

    def feed(self, i, loss, rng):
        self.t += 1
        if self.t > (self.T // self.tau) * self.tau:
            return
        self.total += loss
        if self.t % self.tau == 0:
            z = rng.laplace(0, 1 / (self.tau * self.eps))
            self.base.feed(self.I, self.total / self.tau + z, rng)
            self.total = 0.0


def ref_ldp_exp4(losses, advice, K, N, eta, gamma, epsilon, rng):
    """Algorithm 6."""
    logw, actions = [0.0] * N, []
    for t in range(len(losses)):
        m = max(logw)
        w = [math.exp(x - m) for x in logw]
        P = [x / sum(w) for x in w]                                         # line 5
        Q = [(1 - gamma) * sum(P[j] * advice[t][j][i] for j in range(N)) + gamma / K
             for i in range(K)]                                             # line 6
        I = sample_one(Q, rng.random())                                     # line 7
        actions.append(I)
        noisy = losses[t][I] + rng.laplace(0, 1 / epsilon)                  # line 8
        est = noisy / Q[I]                                                  # line 9
        for j in range(N):
            logw[j] -= eta * advice[t][j][I] * est                          # lines 10-11
    return actions


def ref_batched_exp4(losses, advice, K, N, eta, gamma, tau, scale, rng):
    """Algorithm 2."""
    logw, actions, r = [0.0] * N, [], 1
    acc = [0.0] * N
    for t in range(1, len(losses) + 1):
        if t == (r - 1) * tau + 1:                                          # line 5
            m = max(logw)
            w = [math.exp(x - m) for x in logw]
            P = [x / sum(w) for x in w]                                     # line 6
        mu = advice[t - 1]
        Q = [(1 - gamma) * sum(P[j] * mu[j][i] for j in range(N)) + gamma / K
             for i in range(K)]                                             # line 8
        I = sample_one(Q, rng.random())                                     # line 9
        actions.append(I)
        for j in range(N):                                                  # line 11
            acc[j] += mu[j][I] * losses[t - 1][I] / Q[I]
        if t == r * tau:                                                    # line 12
            z = rng.laplace(0, scale, N)
            for j in range(N):
                logw[j] -= eta * (acc[j] / tau + z[j])                      # lines 14-15
            acc, r = [0.0] * N, r + 1                                       # line 16
    return actions
