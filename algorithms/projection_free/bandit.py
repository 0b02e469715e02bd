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

Noise in the prefix sums (Theorem 4, the tree of Jain et al. as implemented
by Agarwal & Singh): every output L̂_R = Σ_{r≤R} g̃_r + Σ_{k=1}^{log T} Z_k
carries exactly "log T" draws of P, T = T_round (line 2: the tree is for a
sequence of length T_round).  s̃_R is the popcount(R) released blocks named
by R's set bits (``tree.prefix``), topped up with ``prefix_draws(T_round) −
popcount(R)`` fresh draws of P; s̃_0, the tree's first output, is all
padding (Agarwal & Singh, Algorithm 2 lines 2–6), so x̃_1 is already random.
The padding is fresh and data-independent.

What is played, and so what is released (``TranscriptModel``): the points
of batch R read s̃_{R−2}, and rounds left over when T_batch does not divide T
read s̃_{T_round−1}.  So the blocks released at batches 1..P read their way
into played points, with P = ``last_read_batch`` (T_round − 2, or T_round − 1
with leftover rounds); the blocks released after P, the root [1, T_round]
among them when T_round is a power of two, reach no played point.  Only the
first P are the transcript.
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
def prefix_draws(n_rounds: int) -> int:
    """Theorem 4's "log T" noise draws in every prefix sum, T = T_round:
    ⌈log₂ T_round⌉, the count of draws the tree's outputs carry in Agarwal
    & Singh's TreeBasedAgg (algorithms.agarwal_singh.catalog.depth).  It is at
    least popcount(R) for every R ≤ T_round when T_round ≥ 2 (a prefix never
    holds more blocks than it may carry draws)."""
    return (int(n_rounds) - 1).bit_length() if n_rounds >= 1 else 0


def last_read_batch(T: int, tbatch: int) -> int:
    """P: the blocks released at batches 1..P are read by played points
    (module docstring); 0 when none is."""
    n_rounds = T // tbatch
    leftover = T > n_rounds * tbatch
    return max(n_rounds - (1 if leftover else 2), 0)


def private_bandit(n: int, T: int, domain: Domain, L: float, tbatch: int, eta: float,
                   zeta: float, cg_iters: int, noise: str, scale: float) -> Learner:
    """Algorithm 1 with coordinate-wise ``noise`` ("laplace": Lap(0, scale);
    "gaussian": N(0, scale²)) in the tree over the T_round = ⌊T/T_batch⌋
    batches.  Rounds left over when T_batch does not divide T are played
    around the last x̃ and never fed back (the box has T = T_round·T_batch).

    The prefix sum s̃_R is the released blocks named by R's set bits
    (``tree.prefix``) plus Theorem 4's padding to ``prefix_draws`` draws of
    the same law (module docstring); s̃_0 is padding alone.

    Draw order (tests/reference_projection_free.py uses the same): in
    ``init`` the padding of s̃_0, (runs, draws, n); in ``act`` n standard
    normals per run for u_t; at the end of batch R in ``feed`` the block's
    (runs, n) draw, then s̃_R's padding (runs, draws − popcount(R), n).

    The transcript is the blocks released at batches 1..``last_read_batch``
    (NaN after it).  The padding enters the played points only through x̃,
    which the transcript records as aux (y_t = x̃ + ζu_t and u_t): given
    those, the points are the same function of the releases and of
    data-independent draws on both sides, so the exact loss is still the sum
    of the release terms alone, and the released blocks keep one draw of P
    each — the means and the law below need no change for the padding."""
    n_rounds = T // tbatch
    draws = prefix_draws(n_rounds)
    last_read = last_read_batch(T, tbatch)
    center = domain.center(n)
    if noise == "laplace":
        def draw(shape, rng):
            return rng.laplace(0.0, scale, shape)
    elif noise == "gaussian":
        def draw(shape, rng):
            return rng.normal(0.0, scale, shape)
    else:
        raise ValueError(f"noise must be laplace or gaussian, got {noise!r}")

    def pad(runs, r, rng):
        """The sum of r fresh draws of the noise law, (runs, n)."""
        return draw((runs, r, n), rng).sum(axis=1)

    def init(runs, rng):
        xt = np.broadcast_to(center, (runs, n)).copy()
        return {"t": 0, "xt": xt, "s_prev": pad(runs, draws, rng),        # s̃_0
                "g": np.zeros((runs, n)), "u": np.zeros((runs, n)), "y": xt.copy(), "rel": None,
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
            R = t // tbatch
            tree, _, released = treelib.add(state["tree"], g, lambda shape: draw(shape, rng))
            s_new = treelib.prefix(tree)                         # line 13: s̃_R
            r = draws - treelib.popcount(R)                      # Theorem 4's padding
            if r > 0:
                s_new = s_new + pad(s_new.shape[0], r, rng)
            # Line 14, run "in parallel" with batch R: x̃_R from s̃_{R−1},
            # warm-started at x̃_{R−1}; it is played in batch R + 1.
            state["xt"] = conditional_gradient(domain, state["s_prev"], eta, state["xt"], cg_iters)
            state["s_prev"], state["tree"] = s_new, tree
            state["rel"] = released if R <= last_read else None  # read by played points
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
    transcript = TranscriptModel(released=_released(n), means=_means(n, zeta, tbatch, last_read),
                                 aux=lambda s: np.concatenate([s["y"], s["u"]], 1),
                                 shift_bound=_shift_bound(n, zeta, tbatch, last_read, domain, noise,
                                                          centre_batches=1 if draws else 2),
                                 **law)
    return Learner(init, act, feed, n_arms=n, transcript=transcript, feedback="full",
                   point=point, incurred=incurred)


def _released(n):
    def released(state):
        r = state["rel"]
        return np.full((state["xt"].shape[0], n), np.nan) if r is None else r
    return released


def _means(n, zeta, tbatch, last_read):
    """The mean of each released block given the transcript's points y_t and
    directions u_t (aux, recorded before feed): block of batches (R − 2^j, R]
    for j = R's lowest set bit, each batch summing (n/ζ) f_t(y_t) u_t, for the
    blocks R ≤ ``last_read`` that played points read.  y_t and u_t are public
    randomness plus x̃ (a function of earlier releases and of the
    data-independent padding), so the release densities are the whole
    privacy loss (Theorem 4's object)."""
    def means(actions, losses, aux, advice=None):
        M, Tp = aux.shape[0], aux.shape[1]
        R = min(Tp // tbatch, last_read)
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


# Above this dimension the ℓ₁ weight is bounded by √n instead (2^n sign vectors).
L1_EXACT_MAX_DIM = 8
L1_GRID = 1 << 14


def _sup_l1(A: float, c: np.ndarray, zeta: float) -> float:
    """An upper bound, within (A + 2ζ‖c‖)√n·π/``L1_GRID`` of the exact value,
    on g = sup_{‖u‖₂ = 1} (A + ζ⟨c, u⟩)·‖u‖₁ for A ≥ 0.

    ‖u‖₁ = max_s ⟨s, u⟩ over sign vectors s, so g = max_s sup_u (A + ζ⟨c, u⟩)⟨s, u⟩.
    For n ≥ 3 the pair (⟨c, u⟩, ⟨s, u⟩) ranges over a filled ellipse as u runs
    over the sphere, and the indefinite quadratic (A + ζp)q has its maximum on
    the ellipse's boundary: the unit circle of span(c, s), one angle θ.  There
    h(θ) has |h′| ≤ (A + 2ζ‖c‖)√n, so the largest value on a grid of M angles
    plus that slope times π/M bounds the supremum from above."""
    n = c.size
    norm_c = float(np.linalg.norm(c))
    root_n = math.sqrt(n)
    if norm_c == 0.0:
        return A * root_n
    if n > L1_EXACT_MAX_DIM:
        return (A + zeta * norm_c) * root_n
    e1 = c / norm_c
    theta = np.linspace(0.0, 2.0 * math.pi, L1_GRID, endpoint=False)
    cos, sin = np.cos(theta), np.sin(theta)
    best = 0.0
    for signs in np.array(np.meshgrid(*[[-1.0, 1.0]] * n, indexing="ij")).reshape(n, -1).T:
        q = signs - (signs @ e1) * e1
        nq = float(np.linalg.norm(q))
        # u = cos θ·e1 + sin θ·e2, e2 = q/‖q‖ (s ∥ c: the circle's e2 plays no part)
        s1, s2 = float(signs @ e1), nq
        h = (A + zeta * norm_c * cos) * (s1 * cos + s2 * sin)
        best = max(best, float(h.max()))
    return best + (A + 2.0 * zeta * norm_c) * root_n * math.pi / L1_GRID


def _value_gap(row_a: np.ndarray, row_b: np.ndarray, domain: Domain, zeta: float,
               centre: Optional[np.ndarray] = None, l1: bool = False) -> float:
    """sup |f(y) − f′(y)|·w(u) over y = x + ζu, ‖u‖₂ = 1, x ∈ D — every point
    the learner can play (x̃ stays in D) — or x = ``centre`` alone (a batch
    played around the public centre), with the weight w(u) = ‖u‖₁ (``l1``,
    the norm a Laplace release's loss depends on: the block moves by
    (n/ζ)(f − f′)(y)·u) or w = ‖u‖₂ = 1.  With v = ⟨a, y⟩ − b and
    v′ = ⟨a′, y⟩ − b′: linear rows give |v − v′|, a linear and an absolute
    row at most max(|v − v′|, |v + v′|), two absolute rows ||v| − |v′|| =
    min(|v − v′|, |v + v′|).  Each |⟨c, y⟩ − d| = |⟨c, x⟩ − d + ζ⟨c, u⟩|: its
    sup over x ∈ D is max(hi − d, d − lo) + σζ⟨c, u⟩ for one sign σ (hi, lo
    the domain's support range of c), and u ↦ −u keeps w, so the sup is
    g(A) = sup_u (A + ζ⟨c, u⟩)·w(u) at A = max(hi − d, d − lo) ≥ 0 (at the
    centre A = |⟨c, centre⟩ − d|): A + ζ‖c‖ for w = 1, ``_sup_l1`` for ‖u‖₁.
    Exact for linear rows (up to ``_sup_l1``'s grid margin), an upper bound
    otherwise."""
    def sup(sign: float) -> float:
        c = row_a[1:-1] - sign * row_b[1:-1]
        d = row_a[-1] - sign * row_b[-1]
        if centre is None:
            lo, hi = (float(v[0]) for v in domain.support_range(c[None, :]))
            A = max(hi - d, d - lo, 0.0)
        else:
            A = abs(float(c @ centre) - d)
        if l1:
            return _sup_l1(A, c, zeta)
        return A + zeta * float(np.linalg.norm(c))
    kinds = (row_a[0], row_b[0])
    if kinds == (LINEAR, LINEAR):
        return sup(1.0)
    if kinds == (ABS, ABS):
        return min(sup(1.0), sup(-1.0))
    return max(sup(1.0), sup(-1.0))


def _shift_bound(n, zeta, tbatch, last_read, domain, noise, centre_batches):
    """Per released block of the first ``rounds`` rounds (the blocks played
    points read), the largest shift of its mean between two loss sequences
    over every history: each changed round t adds (n/ζ)(f_t(y_t) − f′_t(y_t))
    u_t to the blocks holding its batch, with ‖u_t‖₂ = 1, in the norm of the
    declared law (ℓ₁ for Laplace: the sup of |f − f′|·‖u‖₁ jointly over y and
    u, ``_value_gap``).  The first ``centre_batches`` batches play around the
    public centre: batch 1 around x̃_0, and batch 2 around x̃_1 = x̃_0 only
    when s̃_0 = 0 (no padding draws)."""
    l1 = noise == "laplace"
    centre = domain.center(n)

    def shift_bound(losses_a, losses_b, rounds, advice=None):
        R = min(rounds // tbatch, last_read)
        a = np.asarray(losses_a, float)[:R * tbatch]
        b = np.asarray(losses_b, float)[:R * tbatch]
        per_batch = np.zeros(R)
        for t in np.flatnonzero(np.any(a != b, axis=1)):
            fixed = centre if t // tbatch < centre_batches else None
            per_batch[t // tbatch] += (n / zeta) * _value_gap(a[t], b[t], domain, zeta, fixed, l1)
        return np.array([per_batch[r - 2 ** treelib.lowest_bit(r):r].sum()
                         for r in range(1, R + 1)])
    return shift_bound
