"""The DP testers' benchmark mechanisms as learners over a stream of query
answers (``feedback="stream"``: each round reads its row, then answers).

Every learner draws its randomness in a fixed order, which the per-run
references in ``tests/reference_dp_testers.py`` follow draw for draw:

* noisy releases: each round, one Laplace array (runs, width) in ``feed``;
* truncated geometric: one integer u ∈ [1, d] per run in ``feed``;
* report-noisy-max: one noise array (runs, K) in ``feed``;
* sparse vector: ρ (runs,) in ``init``; each round in ``feed`` the query
  noise ν (runs,) (if any), then the fresh numeric noise (if any), then a
  candidate ρ (runs,) (if it resamples), for every run, aborted or not;
* RAPPOR: each round uniforms (runs, m) for the permanent response, then
  (full RAPPOR) uniforms (runs, m) for the instantaneous one;
* counters: one Laplace value (runs,) per round.

May import: numpy, ``algorithms.core`` and ``algorithms.backend``.
"""
from __future__ import annotations

import numpy as np

from ..backend import as_device, xp_of
from ..core import Finite, Gaussian, Laplace, Learner, TranscriptModel

BELOW, ABOVE, ABORTED = 0, 1, 2


def _zeros(state):
    # The code of a mechanism that releases only numbers (numpy on any
    # backend: the simulation gathers the codes there).
    return np.zeros(state["n"], dtype=np.int64)


# ------------------------------------------------------- Laplace releases
def noisy_release(width: int, scale: float, copies: int = 1, prefix: bool = False,
                  gaussian: bool = False) -> Learner:
    """Each round releases its answers (each repeated ``copies`` times) plus
    independent Laplace(``scale``) noise — N(0, ``scale``²) with
    ``gaussian`` — the point is the release, or with ``prefix`` the running
    sum of the releases (prefix sums)."""
    d = width * copies

    def init(runs, rng):
        xp = xp_of(rng)
        return {"n": runs, "y": xp.zeros((runs, d)), "sum": xp.zeros((runs, d))}

    def feed(state, actions, row, rng):
        draw = rng.normal if gaussian else rng.laplace
        y = np.repeat(np.asarray(row, dtype=float), copies)[None, :] + draw(
            0.0, scale, (state["n"], d))
        return {**state, "y": y, "sum": state["sum"] + y}

    def act(state, advice, rng):
        return state, _zeros(state)

    def means(actions, losses, aux=None, advice=None):
        m = np.repeat(np.asarray(losses, dtype=float)[:actions.shape[1]], copies, axis=1)
        return np.broadcast_to(m, (actions.shape[0],) + m.shape)

    model = TranscriptModel(released=lambda s: s["y"], means=means,
                            law=Gaussian(scale) if gaussian else Laplace(scale),
                            history_free=True)
    return Learner(init, act, feed, 1, feedback="stream",
                   point=(lambda s: s["sum"]) if prefix else (lambda s: s["y"]),
                   transcript=model)


# ------------------------------------------------------ truncated geometric
def geometric_cdf(n: int, k: int, c: int) -> list[int]:
    """Balcer & Vadhan's GeoSample, Step 2: the integer function F(z),
    z = 0..n, for the true count c; the output is the smallest z with
    F(z) ≥ u, u uniform on {1, …, d}, d = F(n)."""
    two_k, base = 2 ** k, 2 ** k + 1
    d = (2 ** (k + 1) + 1) * base ** (n - 1)
    f = []
    for z in range(n + 1):
        if z < c:
            f.append(two_k ** (c - z) * base ** (n - (c - z)))
        elif z < n:
            f.append(d - two_k ** (z - c + 1) * base ** (n - 1 - (z - c)))
        else:
            f.append(d)
    return f


def geometric_pmf_table(n: int, k: int) -> tuple:
    """Row c: the exact output distribution for the true count c (as floats
    of exact integer ratios)."""
    rows = []
    for c in range(n + 1):
        f = geometric_cdf(n, k, c)
        d = f[-1]
        rows.append(tuple((f[z] - (f[z - 1] if z else 0)) / d for z in range(n + 1)))
    return tuple(rows)


def truncated_geometric(n: int, k: int) -> Learner:
    cdfs = np.array([geometric_cdf(n, k, c) for c in range(n + 1)], dtype=np.int64)
    d = int(cdfs[0, -1])

    def init(runs, rng):
        return {"n": runs, "z": xp_of(rng).zeros(runs, dtype=np.int64)}

    def feed(state, actions, row, rng):
        c = int(row[0])
        u = rng.integers(1, d + 1, size=state["n"])
        xp = xp_of(rng)
        return {**state, "z": xp.searchsorted(as_device(xp, cdfs[c]), u,
                                              side="left").astype(np.int64)}

    def act(state, advice, rng):
        return state, state["z"]

    def means(actions, losses, aux=None, advice=None):
        m = np.asarray(losses, dtype=float)[:actions.shape[1], :1]
        return np.broadcast_to(m, (actions.shape[0],) + m.shape)

    model = TranscriptModel(released=lambda s: s["z"].astype(float)[:, None], means=means,
                            law=Finite(geometric_pmf_table(n, k)), history_free=True)
    return Learner(init, act, feed, n + 1, feedback="stream", transcript=model)


# ------------------------------------------------------- report noisy max
def noisy_max(width: int, scale: float, noise: str, report: str) -> Learner:
    """argmax (``report="index"``, the code) or max (``"value"``, the point)
    of the answers plus i.i.d. Laplace or exponential noise of ``scale``."""

    def init(runs, rng):
        return {"n": runs, "v": xp_of(rng).zeros((runs, width))}

    def feed(state, actions, row, rng):
        shape = (state["n"], width)
        z = rng.laplace(0.0, scale, shape) if noise == "laplace" else rng.exponential(scale, shape)
        return {**state, "v": np.asarray(row, dtype=float)[None, :] + z}

    if report == "index":
        return Learner(init, lambda s, adv, rng: (s, s["v"].argmax(axis=1)), feed, width,
                       feedback="stream")
    return Learner(init, lambda s, adv, rng: (s, _zeros(s)), feed, 1, feedback="stream",
                   point=lambda s: s["v"].max(axis=1, keepdims=True))


# ------------------------------------------------------------ sparse vector
def sparse_vector(threshold: float, rho_scale: float, nu_scale: float, cutoff=None,
                  resample: bool = False, numeric=None, numeric_scale=None) -> Learner:
    """Round i: ⊤ iff q_i + ν_i ≥ T + ρ (ν_i = 0 without query noise); after
    ``cutoff`` ⊤ answers every later round is aborted; with ``resample`` a
    fresh ρ after each ⊤; ``numeric`` "same" releases q_i + ν_i with ⊤,
    "fresh" q_i + Lap(``numeric_scale``)."""

    def init(runs, rng):
        xp = xp_of(rng)
        return {"n": runs, "rho": rng.laplace(0.0, rho_scale, runs),
                "count": xp.zeros(runs, dtype=np.int64), "aborted": xp.zeros(runs, bool),
                "code": xp.zeros(runs, dtype=np.int64), "value": xp.zeros((runs, 1))}

    def feed(state, actions, row, rng):
        xp = xp_of(rng)
        n = state["n"]
        q = float(row[0])
        noisy = q + (rng.laplace(0.0, nu_scale, n) if nu_scale > 0 else xp.zeros(n))
        fresh = q + rng.laplace(0.0, numeric_scale, n) if numeric == "fresh" else None
        above = (noisy >= threshold + state["rho"]) & ~state["aborted"]
        code = xp.where(state["aborted"], ABORTED, xp.where(above, ABOVE, BELOW))
        rho = state["rho"]
        if resample:
            rho = xp.where(above, rng.laplace(0.0, rho_scale, n), rho)
        count = state["count"] + above
        aborted = state["aborted"] | ((count >= cutoff) if cutoff is not None else False)
        value = xp.zeros((n, 1))
        if numeric is not None:
            value = xp.where(above, noisy if numeric == "same" else fresh, 0.0)[:, None]
        return {**state, "rho": rho, "count": count, "aborted": aborted, "code": code,
                "value": value}

    n_codes = 2 if cutoff is None else 3
    return Learner(init, lambda s, adv, rng: (s, s["code"]), feed, n_codes, feedback="stream",
                   point=(lambda s: s["value"]) if numeric is not None else None)


def parallel_sparse_vectors(first: Learner, second: Learner, codes: int = 3) -> Learner:
    """Two sparse vectors on the same answers with independent randomness:
    code = codes·first + second, point = the first's numeric value."""

    def init(runs, rng):
        return {"a": first.init(runs, rng), "b": second.init(runs, rng), "n": runs}

    def feed(state, actions, row, rng):
        return {**state, "a": first.feed(state["a"], None, row, rng),
                "b": second.feed(state["b"], None, row, rng)}

    def act(state, advice, rng):
        _, ca = first.act(state["a"], advice, rng)
        _, cb = second.act(state["b"], advice, rng)
        return state, codes * ca + cb

    point = (lambda s: first.point(s["a"])) if first.point is not None else None
    return Learner(init, act, feed, codes * codes, feedback="stream", point=point,
                   code_parts=(codes, codes))


# -------------------------------------------------------------------- RAPPOR
def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3, x86 32-bit variant (Austin Appleby's public domain
    algorithm), as an unsigned 32-bit integer."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & mask
    n = len(data)
    for i in range(0, n - n % 4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[n - n % 4:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h


def bloom_bits(value: int, hashes: int, size: int) -> np.ndarray:
    """The Bloom filter of ``str(value)``: bit (h_i % size) set for each
    seed i < ``hashes``, h_i the *signed* 32-bit MurmurHash3 and % Python's
    (non-negative) remainder, as the testers' suite computes it."""
    bits = np.zeros(size)
    for i in range(hashes):
        h = murmur3_32(str(int(value)).encode(), i)
        signed = h - (1 << 32) if h >= (1 << 31) else h
        bits[signed % size] = 1.0
    return bits


def report_bit_table(f: float, p=None, q=None) -> tuple:
    """P(reported bit | Bloom bit b), rows b = 0, 1: the permanent response
    keeps b with probability 1 − f (else a fair coin); the instantaneous one
    (when p, q are given) reports 1 with probability q if the permanent bit
    is 1, p if it is 0."""
    rows = []
    for b in (0, 1):
        one = f / 2 + (1 - f) * b
        if p is not None:
            one = q * one + p * (1 - one)
        rows.append((1.0 - one, one))
    return tuple(rows)


def rappor(hashes: int, size: int, f: float, p=None, q=None) -> Learner:
    """RAPPOR's report of one value (Erlingsson et al. steps 1–3; without
    ``p``, ``q`` the one-time version, steps 1–2)."""
    cache: dict = {}

    def bits(v):
        if v not in cache:
            cache[v] = bloom_bits(v, hashes, size)
        return cache[v]

    def init(runs, rng):
        return {"n": runs, "s": xp_of(rng).zeros((runs, size))}

    def feed(state, actions, row, rng):
        xp = xp_of(rng)
        b = as_device(xp, bits(int(row[0])))[None, :]
        u = rng.random((state["n"], size))
        perm = xp.where(u < f / 2, 1.0, xp.where(u < f, 0.0, b))
        if p is not None:
            v = rng.random((state["n"], size))
            perm = xp.where(v < xp.where(perm == 1.0, q, p), 1.0, 0.0)
        return {**state, "s": perm}

    def means(actions, losses, aux=None, advice=None):
        rows = np.asarray(losses, dtype=float)[:actions.shape[1], 0]
        m = np.stack([bits(int(v)) for v in rows])
        return np.broadcast_to(m, (actions.shape[0],) + m.shape)

    model = TranscriptModel(released=lambda s: s["s"], means=means,
                            law=Finite(report_bit_table(f, p, q)), history_free=True)
    return Learner(init, lambda s, adv, rng: (s, _zeros(s)), feed, 1, feedback="stream",
                   point=lambda s: s["s"], transcript=model)


# ------------------------------------------------------------------ counters
def binary_counter(scale: float) -> Learner:
    """Chan, Shi & Song's Binary Mechanism: at round t the p-sum of the
    block of size 2^j ending at t (2^j the lowest set bit of t) is released
    with Laplace(``scale``) noise; the count at t is the sum of the latest
    noisy p-sum of each level j set in t's binary expansion."""

    def init(runs, rng):
        xp = xp_of(rng)
        return {"n": runs, "t": 0, "exact": [0.0], "nodes": {}, "y": xp.zeros((runs, 1)),
                "count": xp.zeros((runs, 1))}

    def feed(state, actions, row, rng):
        t = state["t"] + 1
        exact = state["exact"] + [state["exact"][-1] + float(row[0])]
        size = t & -t
        j = size.bit_length() - 1
        y = exact[t] - exact[t - size] + rng.laplace(0.0, scale, state["n"])
        nodes = {lvl: v for lvl, v in state["nodes"].items() if lvl > j}
        nodes[j] = y
        count = sum(nodes[lvl] for lvl in nodes if (t >> lvl) & 1)
        return {**state, "t": t, "exact": exact, "nodes": nodes, "y": y[:, None],
                "count": xp_of(rng).asarray(count, dtype=float)[:, None]}

    def means(actions, losses, aux=None, advice=None):
        x = np.asarray(losses, dtype=float)[:actions.shape[1], 0]
        s = np.concatenate([[0.0], np.cumsum(x)])
        m = np.array([[s[t] - s[t - (t & -t)]] for t in range(1, len(x) + 1)])
        return np.broadcast_to(m, (actions.shape[0],) + m.shape)

    model = TranscriptModel(released=lambda s: s["y"], means=means, law=Laplace(scale),
                            history_free=True)
    return Learner(init, lambda s, adv, rng: (s, _zeros(s)), feed, 1, feedback="stream",
                   point=lambda s: s["count"], transcript=model)


def smart_sum(scale: float, block: int) -> Learner:
    """The two-level counter "SmartSum": inside a block each round releases
    its value plus Laplace(``scale``) and the running output adds it; at a
    block's last round the release is instead the block's sum plus fresh
    noise, added to the noisy total of the completed blocks, which becomes
    the output.  Each value enters at most two releases."""

    def init(runs, rng):
        xp = xp_of(rng)
        return {"n": runs, "i": 0, "total": xp.zeros(runs), "next": xp.zeros(runs),
                "block": 0.0, "y": xp.zeros((runs, 1))}

    def feed(state, actions, row, rng):
        i, x = state["i"], float(row[0])
        eta = rng.laplace(0.0, scale, state["n"])
        if (i + 1) % block == 0:
            y = state["block"] + x + eta
            total = state["total"] + y
            new = {"total": total, "next": total, "block": 0.0}
        else:
            y = x + eta
            new = {"total": state["total"], "next": state["next"] + y,
                   "block": state["block"] + x}
        return {**state, **new, "i": i + 1, "y": y[:, None]}

    def means(actions, losses, aux=None, advice=None):
        x = np.asarray(losses, dtype=float)[:actions.shape[1], 0]
        m, acc = [], 0.0
        for i, v in enumerate(x):
            acc += v
            if (i + 1) % block == 0:
                m.append([acc])
                acc = 0.0
            else:
                m.append([v])
        m = np.array(m)
        return np.broadcast_to(m, (actions.shape[0],) + m.shape)

    model = TranscriptModel(released=lambda s: s["y"], means=means, law=Laplace(scale),
                            history_free=True)
    return Learner(init, lambda s, adv, rng: (s, _zeros(s)), feed, 1, feedback="stream",
                   point=lambda s: s["next"][:, None], transcript=model)
