"""Per-run reference implementations of Algorithms 1–3 of Asi, Raman & Saha
("Tracking the Best Expert Privately"), plain loops written from the boxes.
They draw randomness in the order the vectorised learners do with one run:
Algorithm 1 draws N Laplace values at each decision; Algorithm 2 draws ρ at
start, then per round the decision noise (if any), 2t standard exponentials
for the t query noises ν = b(E − E′) (all t possible window starts, used or
not) and one candidate ρ for a restarted instance; Algorithm 3 draws one
uniform to sample J_t, then N Laplace values.
"""
from __future__ import annotations

import math

from algorithms.core import sample_one


def _argmin(xs):
    best = 0
    for i, x in enumerate(xs):
        if x < xs[best]:
            best = i
    return best


def _pow2(tau):
    return tau >= 2 and (tau & (tau - 1)) == 0


def ref_lazy(losses, b, rng):
    """Algorithm 1: j_t = argmin_j Σ_{i=t/2}^{t−1} ℓ_i(j) + Z_t(j) at t = 2^ℓ."""
    T, N = len(losses), len(losses[0])
    j, out = 0, []                                    # line 1: j_0 = expert 1
    for t in range(1, T + 1):
        if _pow2(t):
            z = rng.laplace(0.0, b, size=(1, N))[0]
            sums = [sum(losses[i - 1][k] for i in range(t // 2, t)) for k in range(N)]
            j = _argmin([sums[k] + z[k] for k in range(N)])
        out.append(j)
    return out


def ref_svt(losses, epsilon, rng, restart="literal", sensitivity=1.0, scale=1.0):
    """Algorithm 2, line by line (t_i = start of the current instance)."""
    T, N = len(losses), len(losses[0])
    e2 = epsilon / 2
    b_rnm, b_rho, b_nu = 2 / e2, 2 * sensitivity / e2, 4 * sensitivity / e2
    beta = 1 / T
    alpha = 16 * (2 * math.log(T) + math.log(2 / beta)) / epsilon

    def reg(w):
        return 16 * math.log(N * T / beta) / epsilon + 9 * math.sqrt(w * math.log(T * N / beta))

    start, j, out, played = 1, 0, [], []
    rho = rng.laplace(0.0, b_rho, size=1)[0]
    for t in range(1, T + 1):
        tau = t - start + 1
        if _pow2(tau):
            z = rng.laplace(0.0, b_rnm, size=(1, N))[0]
            lo = start + tau // 2 - 1                  # local window [τ/2, τ−1]
            sums = [sum(losses[i - 1][k] for i in range(lo, t)) for k in range(N)]
            j = _argmin([sums[k] + z[k] for k in range(N)])
        elif tau == 1:
            j = 0                                      # a fresh instance plays j_0
        out.append(j)
        played.append(losses[t - 1][j])
        e1 = rng.standard_exponential(size=(1, t))[0]
        e2_ = rng.standard_exponential(size=(1, t))[0]
        fired = False
        for s in range(start, t + 1):                  # w = t − s ≤ t − t_i
            w = t - s
            regret = sum(played[s - 1:t]) - min(
                sum(losses[i - 1][k] for i in range(s, t + 1)) for k in range(N))
            q = regret - scale * (reg(w) + alpha + 1)
            if q + b_nu * (e1[s - 1] - e2_[s - 1]) >= rho:
                fired = True
                break
        rho_new = rng.laplace(0.0, b_rho, size=1)[0]
        if fired:
            rho = rho_new
            start = t if restart == "literal" else t + 1
    return out


def project_bisect(v, c):
    """max(c, κ v_i) with Σ = 1, κ by bisection (a different method from the
    sorted closed form of the vectorised code)."""
    lo, hi = 0.0, 1.0 / max(min(x for x in v if x > 0), 1e-300)
    for _ in range(200):
        mid = (lo + hi) / 2
        if sum(max(c, mid * x) for x in v) > 1:
            hi = mid
        else:
            lo = mid
    k = (lo + hi) / 2
    return [max(c, k * x) for x in v]


def ref_adaptive(losses, eta, clip, b, rng):
    """Algorithm 3: J_t ~ w_t; ℓ̃_t = ℓ_t + Lap(b)^N; w_{t+1} = KL projection of
    w_t e^{−η ℓ̃_t} onto the clipped simplex.  Returns (actions, weights)."""
    T, N = len(losses), len(losses[0])
    w = [1.0 / N] * N
    acts, ws = [], []
    for t in range(T):
        ws.append(list(w))
        acts.append(sample_one(w, rng.random(size=1)[0]))
        z = rng.laplace(0.0, b, size=(1, N))[0]
        lv = [math.log(w[i]) - eta * (losses[t][i] + z[i]) for i in range(N)]
        m = max(lv)
        v = [math.exp(x - m) for x in lv]
        s = sum(v)
        w = project_bisect([x / s for x in v], clip)
    return acts, ws
