"""Exact probabilities of traced code that releases noisy values rounded onto
a grid (``round(x + noise, 2)``, ``int(...)``, ``np.floor``): a rounded
Laplace or Gaussian release, a histogram of rounded noisy counts, a rounded
value released after comparisons.

On a path (``algorithms.replay.paths``: draws with A·z + c > 0) a rounded
output is the form y = const + coef·z rounded by its operation; it equals
the grid value q exactly when y lies in the interval that rounds to q
(``algorithms.replay.noise.preimage``).  So an output — its plain elements
and a grid value per rounded element — has probability

    Σ over the paths that give its plain elements of
    P(the path's comparisons hold and each rounded form is in its interval),

path probabilities of more comparisons (``comparisons.log_probability``:
certified brackets).  The interval's ends are where the code's own
floating-point rounding decides, so the lower end of a probability is taken
on intervals shrunk by ``FUZZ`` (relative) and the upper end on intervals
widened by it.

A grid value of one path may be another path's plain value (a clipped
atom at 3.00 and the values rounding to 3.00): both are the same output, so
every path that can give an output adds to its probability.

Pure ε: the rounded values range over a whole grid, so not every output is
evaluated; the largest certified log-ratio over the outputs tried (each
path's own, then each rounded element moved along its noise's scale, one at
a time, while the ratio grows) is a lower bound on it, attained by an
output of positive probability: a certificate.  One path with no
comparisons is a post-processing of the unrounded release, whose exact ε
(``affine_release``) bounds it from above; where each rounded element is a
draw of its own (``_own_draws``) the output's probability is a product, and
every grid value within ``WINDOW`` noise scales of each element is
evaluated (pure ε: the sum of the elements' largest log-ratios; one value at
δ > 0: its grid's certified hockey-stick divergence).

At a claimed δ > 0, Gaussian noise on one path with no comparisons: a
rounded element is within its rounding's radius r_j of its form, so along
v (the Gaussian mechanism's direction (FFᵀ)⁺Δ) the event {vᵀq > τ} has, on
one input, at least the probability of {vᵀy > τ + m} and, on the other, at
most that of {vᵀy′ > τ − m}, m = Σ|v_j| r_j: the pair is at least the
Gaussian mechanism of μ′ = (vᵀΔ − 2m)/‖Fᵀv‖, whose exact δ(ε) gives a lower
end of ε at δ (and pure ε ∞ where μ′ > 0).

May import: numpy, ``algorithms.replay.noise`` (the roundings),
``audit.engine.models.comparisons``, ``log_concave`` and ``affine_release``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from algorithms.replay.noise import Rounded, grid_value, on_grid, preimage, tidy
from audit.engine.models.affine_release import NotExact, ReleaseLoss, release_loss
from audit.engine.models.comparisons import log_interval, log_probability, merge_exponentials
from audit.engine.models.log_concave import widen

FUZZ = 1e-8             # an interval's ends move by this (relative) for floating-point rounding
# Offsets, in noise scales, at which each rounded element is tried.
OFFSETS = (0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32)
SWEEPS = 2              # passes over the rounded elements
STARTS = 3              # paths of each output group whose own point starts a search
MAX_EVALUATIONS = 200   # outputs evaluated per direction
# An optimiser comparing many pairs: each path's own output, then one pass
# at these offsets, at most QUICK_EVALUATIONS outputs a direction.
QUICK_OFFSETS = (1, 4, 16)
QUICK_EVALUATIONS = 40
WINDOW = 40             # separable releases: every grid value within this many noise scales
MAX_GRID = 200_000      # … up to this many per element (else the offsets above)


@dataclass
class Found:
    epsilon: float              # the largest certified log-ratio found (or the δ-figure)
    direction: str = ""         # "l>l'" or "l'>l"
    values: tuple = ()          # the output: plain values and grid values
    p: float = 0.0              # its certified lower probability on the likelier side
    p_other: float = 0.0        # its certified upper probability on the other
    upper: float | None = None  # an upper bound on the pure ε (one path: the unrounded release's)
    log_p: float | None = None  # ln p and ln p_other, where they may underflow a double
    log_p_other: float | None = None
    mu: float | None = None     # the δ case: the Gaussian mechanism's μ′ it dominates
    notes: list = field(default_factory=list)


def radius(o: Rounded) -> float:
    """How far a rounded output can be from its form."""
    return o.step / 2 if o.op == "round" else o.step


def _moved(lo, hi, size, step, upper: bool):
    """An interval's ends moved out (``upper``) or in by ``FUZZ`` relative
    to its values, the form's constant ``size`` and the step: where the
    code's own floating-point rounding decides."""
    e = FUZZ * (np.abs(lo) + np.abs(hi) + size + step)
    return (lo - e, hi + e) if upper else (lo + e, hi - e)


def _positions(path) -> list:
    return [j for j, o in enumerate(path.outputs) if isinstance(o, Rounded)]


def _gives(path, out: tuple) -> bool:
    """Whether the path can give the output ``out``: its plain elements
    equal, its rounded ones on their grid (a grid value of one path may be
    another path's plain value: the same output)."""
    if len(path.outputs) != len(out):
        return False
    for o, v in zip(path.outputs, out):
        if isinstance(o, Rounded):
            if not o.reaches(v):
                return False
        elif not (o == v):
            return False
    return True


def _log_p_path(p, out: tuple, upper: bool) -> float:
    """ln of the certified lower (``upper`` False: intervals shrunk) or
    upper (widened) probability that path ``p`` is taken and its rounded
    elements give the values of ``out``."""
    rows, consts = [], []
    for o, v in zip(p.outputs, out):
        if not isinstance(o, Rounded):
            continue
        lo, hi = _moved(*o.cell(v), abs(o.const), o.step, upper)
        # lo < const + coef·z < hi
        rows += [o.coef, -o.coef]
        consts += [o.const - lo, hi - o.const]
    V = max([p.A.shape[1]] + [r.size for r in rows])
    A = np.zeros((len(p.c) + len(rows), V))
    A[:len(p.c), :p.A.shape[1]] = p.A
    for i, r in enumerate(rows):
        A[len(p.c) + i, :r.size] = r
    c = np.concatenate([np.asarray(p.c, float), consts])
    lo_p, hi_p = log_probability(p.laws, A, c)
    return hi_p if upper else lo_p


def _log_p(paths, out: tuple, upper: bool) -> float | None:
    """ln of the certified lower or upper probability of the output ``out``
    over every path that can give it; None where none can."""
    terms = [_log_p_path(p, out, upper) for p in paths if _gives(p, out)]
    return float(np.logaddexp.reduce(terms)) if terms else None


def _scale(o: Rounded) -> float:
    """The noise's scale in the form (Σ|coef|: standard laws have scale 1)."""
    return float(np.abs(o.coef).sum()) or o.step


def _start(path) -> tuple:
    return tuple(o.output(o.form(path.z)) if isinstance(o, Rounded) else o
                 for o in path.outputs)


def pure_epsilon(paths_a, paths_b, missing_a: float, missing_b: float,
                 quick: bool = False) -> Found:
    """The largest certified log-ratio over the outputs tried (module
    docstring); ``missing_*``: ln of the probability no traced path of that
    side covers (an output no traced path of the side gives has at most
    it).  ``quick``: the smaller search an optimiser's objective affords."""
    offsets, budget, sweeps = ((QUICK_OFFSETS, QUICK_EVALUATIONS, 1) if quick
                               else (OFFSETS, MAX_EVALUATIONS, SWEEPS))
    best = Found(-math.inf)
    for d, (xs, ys, miss) in (("l>l'", (paths_a, paths_b, missing_b)),
                              ("l'>l", (paths_b, paths_a, missing_a))):
        cache: dict = {}
        spent = [0]

        def ratio(out):
            if out not in cache:
                spent[0] += 1
                lo = _log_p(xs, out, upper=False)
                hi = _log_p(ys, out, upper=True)
                hi = miss if hi is None else hi
                lo = -math.inf if lo is None else lo
                cache[out] = (lo - hi if hi > -math.inf else
                              (math.inf if lo > -math.inf else -math.inf), lo, hi)
            return cache[out]

        starts = {}
        for p in xs:
            starts.setdefault(p.discrete(), []).append(p)
        for members in starts.values():
            for p in members[:STARTS]:
                if spent[0] >= budget:
                    break
                out = _start(p)
                r = ratio(out)
                for _ in range(sweeps):
                    moved = False
                    for j in _positions(p):
                        o = p.outputs[j]
                        s, centre = _scale(o), o.form(p.z)
                        tries = {o.output(centre + sgn * t * s)
                                 for t in offsets for sgn in (-1, 1)}
                        tries |= {o.moved(out[j], -1), o.moved(out[j], 1)}
                        for v in sorted(tries):
                            if spent[0] >= budget:
                                break
                            trial = out[:j] + (v,) + out[j + 1:]
                            got = ratio(trial)
                            if got[0] > r[0]:
                                out, r, moved = trial, got, True
                    if not moved:
                        break
                if r[0] > best.epsilon:
                    best = Found(r[0], d, out, math.exp(r[1]),
                                 math.exp(r[2]) if r[2] > -math.inf else 0.0,
                                 log_p=r[1], log_p_other=r[2])
    return best


def _own_draws(pa, pb) -> list | None:
    """One path a side with no comparisons, each rounded element the form
    of a noise draw of its own (a histogram, fresh noise each round), the
    plain elements equal: per rounded element (position, law, coefficient,
    its rounding on ℓ, on ℓ′); None where the release is not of this shape."""
    if len(pa.c) or len(pb.c) or pa.laws != pb.laws or len(pa.outputs) != len(pb.outputs):
        return None
    J = _positions(pa)
    if not J or J != _positions(pb) or any(pa.outputs[j] != pb.outputs[j] for j in
                                           range(len(pa.outputs)) if j not in J):
        return None
    for j in J:
        oa, ob = pa.outputs[j], pb.outputs[j]
        if (oa.op, oa.step, oa.post) != (ob.op, ob.step, ob.post):
            return None
    V = max([len(pa.laws)] + [o.coef.size for p in (pa, pb) for o in p.outputs
                              if isinstance(o, Rounded)])

    def rows(p):
        return np.array([np.concatenate([p.outputs[j].coef, np.zeros(V - p.outputs[j].coef.size)])
                         for j in J])
    Fa, Fb = rows(pa), rows(pb)
    if not np.allclose(Fa, Fb, rtol=1e-12, atol=0):
        return None
    # two exponentials entering every element only as their difference are
    # one Laplace draw: merged over all the elements at once
    laws, F = merge_exponentials(tuple(pa.laws) + ("",) * (V - len(pa.laws)), Fa)
    elems, cols = [], set()
    for i, j in enumerate(J):
        nz = np.flatnonzero(F[i])
        if nz.size != 1 or int(nz[0]) in cols or np.count_nonzero(F[:, nz[0]]) != 1:
            return None
        cols.add(int(nz[0]))
        elems.append((j, laws[nz[0]], float(F[i, nz[0]]), pa.outputs[j], pb.outputs[j]))
    return elems


def _grid_laws(law, a, oa, ob):
    """The grid values of one element within ``WINDOW`` noise scales of
    both inputs' forms (or at the offsets, past ``MAX_GRID``), and the
    certified log-probabilities of each: (q, (lo on ℓ, hi on ℓ), (lo on ℓ′,
    hi on ℓ′))."""
    s = abs(a)
    lo_c, hi_c = sorted((oa.const, ob.const))
    first = grid_value(oa.op, oa.step, lo_c - WINDOW * s)
    n = int((hi_c - lo_c + 2 * WINDOW * s) / oa.step) + 2
    if n <= MAX_GRID:
        q = tidy(oa.step, first + oa.step * np.arange(n))
    else:
        q = np.array(sorted({grid_value(oa.op, oa.step, c + sg * t * s)
                             for c in (lo_c, hi_c) for t in (0,) + OFFSETS for sg in (-1, 1)}))
    iv = np.array([preimage(oa.op, oa.step, float(v)) for v in q]) if oa.op == "trunc" \
        else np.stack(preimage(oa.op, oa.step, q), axis=1)
    size = max(abs(oa.const), abs(ob.const))

    def log_p(o, upper):
        lo, hi = _moved(iv[:, 0], iv[:, 1], size, oa.step, upper)
        zl, zh = (lo - o.const) / a, (hi - o.const) / a
        v = log_interval(law, np.minimum(zl, zh), np.maximum(zl, zh))
        return v + widen(v) if upper else v - widen(v)
    return q, (log_p(oa, False), log_p(oa, True)), (log_p(ob, False), log_p(ob, True))


def separable(pa, pb) -> Found | None:
    """Pure ε of a release of rounded values of their own draws
    (``_own_draws``): the output's probability is a product over the
    elements, so pure ε is the sum over them of the largest certified
    log-ratio of one element's grid values; None where the release is not
    of this shape."""
    elems = _own_draws(pa, pb)
    if elems is None:
        return None
    grids = [(j, _grid_laws(law, a, oa, ob)) for j, law, a, oa, ob in elems]
    best = Found(-math.inf)
    for d, (x, y) in (("l>l'", (1, 2)), ("l'>l", (2, 1))):
        total, values, lo_sum, hi_sum = 0.0, {}, 0.0, 0.0
        for j, g in grids:
            lx, hy = g[x][0], g[y][1]
            with np.errstate(invalid="ignore"):
                r = np.where(hy > -np.inf, lx - hy, np.where(lx > -np.inf, np.inf, -np.inf))
            i = int(np.argmax(r))
            total += float(r[i])
            lo_sum += float(lx[i])
            hi_sum += float(hy[i])
            values[j] = pa.outputs[j].value(float(g[0][i]))
        if total > best.epsilon:
            vals = tuple(values.get(j, o) for j, o in enumerate(pa.outputs))
            best = Found(total, d, vals, math.exp(lo_sum), math.exp(hi_sum), log_p=lo_sum,
                         log_p_other=hi_sum)
    return best


def one_value_at_delta(pa, pb, delta: float) -> Found | None:
    """One rounded value of its own draw: the largest ε at which the
    certified hockey-stick divergence Σ_q (P(q) − e^ε P′(q))⁺ over the grid
    values tried still exceeds δ (the set of those q is an event that
    refutes (ε, δ)); None where the release is not one such value."""
    elems = _own_draws(pa, pb)
    if elems is None or len(elems) != 1:
        return None
    j, law, a, oa, ob = elems[0]
    q, la, lb = _grid_laws(law, a, oa, ob)

    def hockey(eps):
        out = 0.0
        for x, y in ((la, lb), (lb, la)):
            with np.errstate(over="ignore", invalid="ignore"):
                t = np.exp(x[0]) - np.exp(eps + y[1])
            out = max(out, float(np.sum(t[t > 0])))
        return out
    if hockey(0.0) <= delta:
        return Found(0.0)
    lo, hi = 0.0, 1.0
    while hockey(hi) > delta and hi < 1e3:
        lo, hi = hi, hi * 2
    for _ in range(60):
        m = (lo + hi) / 2
        lo, hi = (m, hi) if hockey(m) > delta else (lo, m)
    return Found(lo, notes=[f"one rounded value: the certified hockey-stick divergence over its "
                            f"{q.size:,} grid values within {WINDOW} noise scales exceeds "
                            f"δ = {delta:g} up to ε = {lo:.6g}"])


def _release_forms(path):
    J = _positions(path)
    F = np.array([path.outputs[j].coef for j in J])
    K = np.array([path.outputs[j].const for j in J])
    return J, F, K


def single_release(pa, pb, delta: float) -> Found | None:
    """One path a side, no comparisons: the unrounded release's exact ε as
    an upper bound, and for Gaussian noise the dominated Gaussian mechanism
    (module docstring); None where the plain elements differ (the caller's
    search then finds the certificate)."""
    if len(pa.c) or len(pb.c) or pa.laws != pb.laws or len(pa.outputs) != len(pb.outputs):
        return None
    Ja, Fa, Ka = _release_forms(pa)
    Jb, Fb, Kb = _release_forms(pb)
    plain = [j for j in range(len(pa.outputs)) if j not in Ja]
    if Ja != Jb or any(pa.outputs[j] != pb.outputs[j] for j in plain) or \
            [(pa.outputs[j].op, pa.outputs[j].step, pa.outputs[j].post) for j in Ja] != \
            [(pb.outputs[j].op, pb.outputs[j].step, pb.outputs[j].post) for j in Jb]:
        return None
    V = max(Fa.shape[1], Fb.shape[1])
    Fa, Fb = (np.hstack([M, np.zeros((M.shape[0], V - M.shape[1]))]) for M in (Fa, Fb))
    try:
        loss: ReleaseLoss | None = release_loss(pa.laws, Fa, Ka, Fb, Kb)
    except NotExact:
        loss = None
    found = Found(0.0, upper=None if loss is None else
                  loss.epsilon_at(delta) if delta and loss.mu is not None else loss.epsilon)
    if not np.allclose(Fa, Fb, rtol=1e-12, atol=0):
        return found            # noise that depends on the input: no Gaussian mechanism here
    laws, F = merge_exponentials(pa.laws, Fa)
    cols = np.flatnonzero(np.any(F != 0, axis=0))
    if not (cols.size and all(laws[i] == "normal" for i in cols)):
        return found
    r = np.array([radius(pa.outputs[j]) for j in Ja])
    D = Ka - Kb
    G = F[:, cols]
    v = np.linalg.pinv(G @ G.T) @ D
    sigma = float(np.linalg.norm(G.T @ v))
    shift = float(v @ D)
    m = float(np.abs(v) @ r) * (1 + FUZZ)
    if sigma <= 1e-12 * (np.abs(v).sum() + 1):
        return found
    mu = (shift - 2 * m) / sigma
    if mu <= 0:
        return found
    found.mu = mu
    found.epsilon = ReleaseLoss(math.inf, "", mu=mu).epsilon_at(delta) if delta else math.inf
    found.notes.append(
        f"rounded Gaussian release: along the Gaussian mechanism's direction the rounding moves "
        f"the projection by at most {m:.4g}, so the pair is at least the Gaussian mechanism of "
        f"μ′ = {mu:.6g} (the unrounded release's μ is {shift / sigma:.6g})")
    return found
