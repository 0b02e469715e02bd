"""A plain per-run DP-FTRL (Kairouz et al. 2021) on linear losses over the
simplex, written from the algorithm's description, drawing in the
vectorised learner's order: per round, one uniform to sample the expert
from x_t, then one N(0, σ²I) vector for the tree node the round completes."""
from __future__ import annotations

import numpy as np


def project(v):
    """Euclidean projection onto the simplex, one vector, by a plain loop."""
    u = sorted(v, reverse=True)
    total, keep, kept_sum = 0.0, 0, 0.0
    for i, ui in enumerate(u):
        total += ui
        if ui - (total - 1.0) / (i + 1) > 0:
            keep, kept_sum = i + 1, total
    theta = (kept_sum - 1.0) / keep
    return [max(vi - theta, 0.0) for vi in v]


def ref_dp_ftrl(L, sigma, lam, rng):
    """(experts, points) of one run on losses ``L`` (T, N)."""
    T, N = L.shape
    nodes = {}                       # level -> noisy sum of its latest completed block
    G = np.zeros(N)                  # noisy prefix sum of the rounds fed so far
    experts, points = [], []
    for t in range(1, T + 1):
        x = project((-G / lam).tolist())
        points.append(x)
        u = rng.random(1)[0]
        c, e = 0.0, N - 1
        for i in range(N - 1):
            c += x[i]
            if u < c:
                e = i
                break
        experts.append(e)
        size = t & -t
        j = size.bit_length() - 1
        block = L[t - size:t].sum(axis=0)
        nodes[j] = block + rng.normal(0.0, sigma, (1, N))[0]
        G = sum((nodes[k] for k in nodes if (t >> k) & 1), np.zeros(N))
    return experts, points
