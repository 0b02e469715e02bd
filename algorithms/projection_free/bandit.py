"""Algorithm 1 PRIVATEBANDIT of Ene, Nguyen & Vladu (AAAI 2021), vectorised
over runs, on a domain with a linear-optimisation oracle.

Loss rows.  A loss sequence is an array of shape (T, n + 2); row t holds the
*parameters* of f_t, never its values:

    row = (code, a_1 … a_n, b)      code 0: f(x) = ⟨a, x⟩ − b   (linear)
                                    code 1: f(x) = |⟨a, x⟩ − b|  (absolute value)

Both families are convex and ‖a‖₂-Lipschitz, and both vanish somewhere in D
iff b ∈ [min_D ⟨a, x⟩, max_D ⟨a, x⟩] (D is convex, so ⟨a, ·⟩ takes every value
in between) — the paper's assumption "each f_t achieves 0 loss at some point
within D" (Preliminaries).  ``check_rows`` enforces ‖a‖₂ ≤ L and that
interval.  The learner only ever evaluates f_t at the point it played
(line 10: bandit feedback), although ``feed`` receives the whole row.

Domains (``DOMAINS``): the probability simplex Δ_n (vertices e_i, ℓ₂ diameter
D = √2) and the unit ℓ₁ ball (vertices ±e_i, D = 2).  Only the linear
oracle argmin_{v ∈ D} ⟨g, v⟩ is used, never a projection.

Timeline of Algorithm 1 (T_batch rounds per batch, T_round batches):
* batch R (1-based) plays x_t = x̃_{R−1} + ζ u_t, u_t uniform on the unit
  sphere (lines 8–9), and accumulates g̃_R = Σ (n/ζ) f_t(x_t) u_t (lines 10–11);
* at the end of batch R, g̃_R enters the tree (line 13), which releases the
  one dyadic block batch R completes, and s̃_R is the noisy prefix sum;
* "in parallel" with batch R, x̃_R solves min_D ½‖x‖² + η⟨s̃_{R−1}, x⟩ by
  conditional gradient (line 14) — the *stale* sum s̃_{R−1}, so a change in
  batch R first moves the points of batch R + 2.
x̃_0 (not defined by the box) is argmin_D ½‖x‖², the domain's centre (the
uniform point of Δ_n, the origin of the ℓ₁ ball): the same problem with
s̃ = 0, solved exactly, and public.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..core import Gaussian, Learner, TranscriptModel
from .. import tree as treelib

LINEAR, ABS = 0, 1


# ------------------------------------------------------------------ domains
class Domain:
    """A compact convex set given by its linear-optimisation oracle."""

    def __init__(self, name: str, diameter: float):
        self.name, self.diameter = name, diameter

    def lmo(self, g: np.ndarray) -> np.ndarray:
        """argmin_{v ∈ D} ⟨g, v⟩ for each row of g (runs, n); ties → lowest index."""
        raise NotImplementedError

    def center(self, n: int) -> np.ndarray:
        raise NotImplementedError

    def support_range(self, a: np.ndarray) -> tuple:
        """(min_D ⟨a, x⟩, max_D ⟨a, x⟩) for each row a (T, n)."""
        raise NotImplementedError


class Simplex(Domain):
    def __init__(self):
        super().__init__("simplex", math.sqrt(2.0))

    def lmo(self, g):
        v = np.zeros_like(g)
        v[np.arange(g.shape[0]), np.argmin(g, axis=1)] = 1.0
        return v

    def center(self, n):
        return np.full(n, 1.0 / n)

    def support_range(self, a):
        return a.min(axis=1), a.max(axis=1)


class L1Ball(Domain):
    def __init__(self):
        super().__init__("l1ball", 2.0)

    def lmo(self, g):
        i = np.argmax(np.abs(g), axis=1)
        r = np.arange(g.shape[0])
        v = np.zeros_like(g)
        v[r, i] = -np.sign(g[r, i])   # g = 0: v = 0, also a minimiser
        return v

    def center(self, n):
        return np.zeros(n)

    def support_range(self, a):
        m = np.abs(a).max(axis=1)
        return -m, m


DOMAINS = {"simplex": Simplex(), "l1ball": L1Ball()}


def get_domain(name: str) -> Domain:
    try:
        return DOMAINS[name]
    except KeyError:
        raise ValueError(f"domain must be one of {', '.join(DOMAINS)}, got {name!r}") from None


# ------------------------------------------------------------------- losses
def check_rows(losses, n: int, L: float, domain: Domain) -> np.ndarray:
    """The assumptions of the paper's analysis (Preliminaries): f_t convex,
    L-Lipschitz, vanishing somewhere in D.  One-line ValueError otherwise."""
    arr = np.asarray(losses, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != n + 2:
        raise ValueError(f"loss rows must have shape (T, n + 2 = {n + 2}): (code, a_1..a_{n}, b); "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("loss rows must be finite")
    code, a, b = arr[:, 0], arr[:, 1:-1], arr[:, -1]
    if not np.all((code == LINEAR) | (code == ABS)):
        raise ValueError("loss row code (column 0) must be 0 (linear <a,x> - b) or 1 (|<a,x> - b|)")
    norms = np.linalg.norm(a, axis=1)
    if np.any(norms > L * (1 + 1e-9) + 1e-12):
        t = int(np.argmax(norms))
        raise ValueError(f"loss rows must be L-Lipschitz: ||a||_2 <= L = {L:g}, "
                         f"row {t + 1} has {norms[t]:.6g}")
    lo, hi = domain.support_range(a)
    tol = 1e-9 * (1 + np.abs(b))
    bad = (b < lo - tol) | (b > hi + tol)
    if np.any(bad):
        t = int(np.flatnonzero(bad)[0])
        raise ValueError(f"loss rows must vanish somewhere in the {domain.name}: b must lie in "
                         f"[min_D <a,x>, max_D <a,x>]; row {t + 1} has b = {b[t]:.6g} outside "
                         f"[{lo[t]:.6g}, {hi[t]:.6g}]")
    return arr


def evaluate(row: np.ndarray, y: np.ndarray) -> np.ndarray:
    """f_t(y) for points y (runs, n): the only access the learner has."""
    v = y @ row[1:-1] - row[-1]
    return np.abs(v) if row[0] == ABS else v


def evaluate_many(rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """f_t(y_t) for y (M, T', n) and rows (T', n + 2): shape (M, T')."""
    v = np.einsum("mtn,tn->mt", y, rows[:, 1:-1]) - rows[None, :, -1]
    return np.where(rows[None, :, 0] == ABS, np.abs(v), v)


# ------------------------------------------------------- conditional gradient
def conditional_gradient(domain: Domain, s: np.ndarray, eta: float, start: np.ndarray,
                         iters: int) -> np.ndarray:
    """Line 14: approximately minimise h(x) = ½‖x‖² + η⟨s, x⟩ over D with
    ``iters`` Frank–Wolfe steps from ``start``.  The box leaves the step rule
    open; we use exact line search (h is a quadratic: γ = −⟨∇h, d⟩/‖d‖²
    clipped to [0, 1]), which is deterministic, so x̃_R stays a function of
    the released sums only.  The box's precision D/√T_batch is reached in
    O(T_batch) steps, which is why it charges one oracle call per round: the
    number of steps is T_batch."""
    x = start.copy()
    for _ in range(iters):
        g = x + eta * s                       # ∇h(x)
        d = domain.lmo(g) - x
        dd = np.einsum("rn,rn->r", d, d)
        gd = np.einsum("rn,rn->r", g, d)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(dd > 0, np.clip(-gd / dd, 0.0, 1.0), 0.0)
        x = x + step[:, None] * d
    return x


# ------------------------------------------------------------------ learner
def private_bandit(n: int, T: int, domain: Domain, L: float, tbatch: int, eta: float,
                   zeta: float, cg_iters: int, noise: str, scale: float) -> Learner:
    """Algorithm 1 with coordinate-wise ``noise`` ("laplace": Lap(0, scale);
    "gaussian": N(0, scale²)) in the tree over the T_round = ⌊T/T_batch⌋
    batches.  Rounds left over when T_batch does not divide T are played
    around the last x̃ and never fed back (the box has T = T_round·T_batch).

    The prefix sum s̃_R is the released blocks named by R's set bits
    (``tree.prefix``); Theorem 4's "log T draws in every prefix" padding adds
    fresh, data-independent noise (post-processing) and is not needed for
    privacy, so it is left out: this way x̃ is a function of the released
    blocks alone and the transcript model below is exact."""
    n_rounds = T // tbatch
    center = domain.center(n)
    if noise == "laplace":
        def draw(shape, rng):
            return rng.laplace(0.0, scale, shape)
    elif noise == "gaussian":
        def draw(shape, rng):
            return rng.normal(0.0, scale, shape)
    else:
        raise ValueError(f"noise must be laplace or gaussian, got {noise!r}")

    def init(runs, rng):
        xt = np.broadcast_to(center, (runs, n)).copy()
        return {"t": 0, "xt": xt, "s_prev": np.zeros((runs, n)), "g": np.zeros((runs, n)),
                "u": np.zeros((runs, n)), "y": xt.copy(), "rel": None,
                "tree": treelib.init(runs, max(n_rounds, 1), n)}

    def act(state, advice, rng):
        state = dict(state)
        runs = state["xt"].shape[0]
        z = rng.standard_normal((runs, n))                       # line 8: u_t ~ S_2(1)
        u = z / np.linalg.norm(z, axis=1, keepdims=True)
        state["u"], state["y"] = u, state["xt"] + zeta * u      # line 9
        return state, np.zeros(runs, dtype=np.int64)

    def feed(state, actions, row, rng):
        state = dict(state)
        t = state["t"] + 1
        state["t"], state["rel"] = t, None
        if t > n_rounds * tbatch:                                # leftover round
            return state
        F = (n / zeta) * evaluate(row, state["y"])               # line 10
        g = state["g"] + F[:, None] * state["u"]                 # line 11
        if t % tbatch == 0:                                      # batch R ends
            tree, _, released = treelib.add(state["tree"], g, lambda shape: draw(shape, rng))
            s_new = treelib.prefix(tree)                         # line 13: s̃_R
            # Line 14, run "in parallel" with batch R: x̃_R from s̃_{R−1},
            # warm-started at x̃_{R−1}; it is played in batch R + 1.
            state["xt"] = conditional_gradient(domain, state["s_prev"], eta, state["xt"], cg_iters)
            state["s_prev"], state["tree"], state["rel"] = s_new, tree, released
            g = np.zeros_like(g)
        state["g"] = g
        return state

    def point(state):
        return state["y"]

    def incurred(state, row):
        return evaluate(row, state["y"])

    # The released blocks are the transcript: mean from the played points and
    # directions (aux), plus the declared noise law.
    law = {"laplace": {"scale": scale}, "gaussian": {"law": Gaussian(scale)}}[noise]
    transcript = TranscriptModel(released=_released(n), means=_means(n, zeta, tbatch, n_rounds),
                                 aux=lambda s: np.concatenate([s["y"], s["u"]], 1),
                                 shift_bound=_shift_bound(n, zeta, tbatch, n_rounds, domain, noise),
                                 **law)
    return Learner(init, act, feed, n_arms=n, transcript=transcript, feedback="full",
                   point=point, incurred=incurred)


def _released(n):
    def released(state):
        r = state["rel"]
        return np.full((state["xt"].shape[0], n), np.nan) if r is None else r
    return released


def _means(n, zeta, tbatch, n_rounds):
    """The mean of each released block given the transcript's points y_t and
    directions u_t (aux, recorded before feed): block of batches (R − 2^j, R]
    for j = R's lowest set bit, each batch summing (n/ζ) f_t(y_t) u_t.  y_t and
    u_t are public randomness plus x̃ (a function of earlier releases), so
    the release densities are the whole privacy loss (Theorem 4's object)."""
    def means(actions, losses, aux, advice=None):
        M, Tp = aux.shape[0], aux.shape[1]
        R = min(Tp // tbatch, n_rounds)
        if R == 0:
            return np.zeros((M, 0, n))
        y, u = aux[:, :R * tbatch, :n], aux[:, :R * tbatch, n:]
        F = (n / zeta) * evaluate_many(np.asarray(losses, float)[:R * tbatch], y)
        g = (F[:, :, None] * u).reshape(M, R, tbatch, n).sum(axis=2)
        out = np.empty((M, R, n))
        for r in range(1, R + 1):
            j = treelib.lowest_bit(r)
            out[:, r - 1] = g[:, r - 2 ** j:r].sum(axis=1)
        return out
    return means


def _value_gap(row_a: np.ndarray, row_b: np.ndarray, domain: Domain, zeta: float,
               centre: Optional[np.ndarray] = None) -> float:
    """sup |f(y) − f′(y)| over y = x + ζu, ‖u‖₂ ≤ 1, x ∈ D — every point the
    learner can play (x̃ stays in D) — or x = ``centre`` alone (batches 1 and
    2 play around x̃_0 = x̃_1, the public centre).  With u = ⟨a, y⟩ − b and
    v = ⟨a′, y⟩ − b′: linear rows give |u − v|, a linear and an absolute row
    at most max(|u − v|, |u + v|), two absolute rows ||u| − |v|| =
    min(|u − v|, |u + v|); each sup of |⟨c, y⟩ − d| over D ⊕ ζB (or x ⊕ ζB)
    is exact from the domain's support range.  Exact for linear rows, an
    upper bound otherwise."""
    def sup(sign: float) -> float:
        c = row_a[1:-1] - sign * row_b[1:-1]
        d = row_a[-1] - sign * row_b[-1]
        if centre is None:
            lo, hi = (float(v[0]) for v in domain.support_range(c[None, :]))
        else:
            lo = hi = float(c @ centre)
        r = zeta * float(np.linalg.norm(c))
        return max(hi + r - d, d - lo + r, 0.0)
    kinds = (row_a[0], row_b[0])
    if kinds == (LINEAR, LINEAR):
        return sup(1.0)
    if kinds == (ABS, ABS):
        return min(sup(1.0), sup(-1.0))
    return max(sup(1.0), sup(-1.0))


def _shift_bound(n, zeta, tbatch, n_rounds, domain, noise):
    """Per released block of the first ``rounds`` rounds, the largest shift
    of its mean between two loss sequences over every history: each changed
    round t adds (n/ζ)(f_t(y_t) − f′_t(y_t)) u_t to the blocks holding its
    batch, with ‖u_t‖₂ = 1 and ‖u_t‖₁ ≤ √n (the norm of the declared law)."""
    norm_u = math.sqrt(n) if noise == "laplace" else 1.0
    centre = domain.center(n)

    def shift_bound(losses_a, losses_b, rounds, advice=None):
        R = min(rounds // tbatch, n_rounds)
        a = np.asarray(losses_a, float)[:R * tbatch]
        b = np.asarray(losses_b, float)[:R * tbatch]
        per_batch = np.zeros(R)
        for t in np.flatnonzero(np.any(a != b, axis=1)):
            # x̃_0 = x̃_1 = the centre (s̃_0 = 0): batches 1 and 2 play around it.
            fixed = centre if t // tbatch < 2 else None
            per_batch[t // tbatch] += (n / zeta) * norm_u * _value_gap(a[t], b[t], domain, zeta,
                                                                       fixed)
        return np.array([per_batch[r - 2 ** treelib.lowest_bit(r):r].sum()
                         for r in range(1, R + 1)])
    return shift_bound
