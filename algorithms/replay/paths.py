"""The paths of a mechanism's code through its continuous draws, found by
running the code itself (``noise``), and confirmed by re-executing it.

One run of the code on concrete values of its noise variables records
every comparison that a variable decided; the set of draws that satisfy
them all is the run's *path*, a polyhedron, and on it every output is the
affine form the trace recorded (a plain value where no noise reaches it).
The paths are enumerated as a concolic tester does: for each path and each
of its comparisons after the ones that were forced, a linear program looks
for draws that keep the comparisons before it and reverse it (with a
margin, so the code's own rounding cannot decide otherwise); the code runs
there, and a path not seen before is explored the same way.  When no
reversal is feasible the paths partition the draws (up to comparisons'
boundaries, of probability 0) — what the path probabilities summing to 1
confirms again downstream.

Every path set is confirmed before it is returned: the unmodified code runs
on plain values (no ``Noisy``, nothing watched) at ``UNCONDITIONAL`` draws
from the noise laws and at points spread inside every path (hit-and-run
from the point that found it); each run must fall on a traced path (the
comparisons of exactly one hold) and give exactly its outputs — the plain
ones equal, the affine ones equal to their form at the point up to
rounding.  Any disagreement refuses the trace.

May import: numpy (scipy's ``linprog`` inside ``_reverse``),
``algorithms.replay.tracer``, ``algorithms.replay.noise``,
``algorithms.replay.law`` (the code runners' helpers).
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from algorithms.replay import noise as nz
from algorithms.replay.law import _labels, _plain, _user, per_run, replay_scope
from algorithms.replay.grid import Grid
from algorithms.replay.noise import (LIFTED, Noisy, NoiseGenerator, NoiseTrace, Rounded, lifting,
                                     tracing)
from algorithms.replay.slots import MAKERS, making
from algorithms.replay.tracer import (REPLAY_SEED, ReplayRefused, RunGenerator, Traced,
                                      conversions, sealed)

# bound now: while code is traced, numpy.random's names are the replay's
_GEN, _PCG = np.random.Generator, np.random.PCG64


def _rng(seed):
    return _GEN(_PCG(seed))

MAX_PATHS = 1024            # paths of one input (a sparse vector without cutoff over 10 answers, the default input)
PROBE_COMPARISONS = 512     # comparisons of noise in the probe's run
MAX_VARS = 4096             # noise variables of one run
BOX = 1e4                   # the reversing LP keeps standard values within ±BOX
MARGIN = 1e-7               # the reversed comparison holds by this much (normalised)
UNCONDITIONAL = 300         # re-executions at draws from the noise laws
PER_PATH = 16               # re-executions inside each path (at least; at most 200)
MAX_CHECKS = 3_000          # re-executions of one input spread over its paths
REL = 1e-9                  # an affine output agrees with its form up to this (relative)
CONFIRM_SEED = 0x0C0_FFEE


@dataclass
class Path:
    """One path: the laws of its variables, its comparisons (rows of ``A``
    and ``c``: A·z + c > 0 on the path), its outputs (per element a plain
    value, or (const, coef) of an affine form in the variables) and a point
    ``z`` on it."""
    laws: tuple
    A: np.ndarray
    c: np.ndarray
    outputs: tuple
    z: np.ndarray
    depth: int = 0              # comparisons fixed by the run that found it

    @property
    def noisy_outputs(self) -> bool:
        return any(isinstance(o, tuple) for o in self.outputs)

    @property
    def rounded_outputs(self) -> bool:
        return any(isinstance(o, Rounded) for o in self.outputs)

    def discrete(self) -> tuple:
        """The plain outputs (None for an affine one, how it rounds for a
        rounded one)."""
        return tuple(None if isinstance(o, tuple) else
                     ("≈", o.op, o.step) + ((o.post,) if o.mapped else ())
                     if isinstance(o, Rounded) else o for o in self.outputs)

    def key(self) -> tuple:
        rows = tuple(tuple(np.round(np.append(a, c), 10).tolist()) for a, c in zip(self.A, self.c))
        return (self.laws, rows, self.discrete())


@dataclass
class PathSet:
    """Every path of one input's output, and how they were found and
    confirmed (``labels``: of the longest output, where paths give outputs
    of several lengths)."""
    paths: list
    labels: tuple
    runs: int                   # runs of the code that traced them
    reexecuted: int = 0         # plain runs that confirmed them
    # Every path's comparisons stacked (``_Rows``), built at the first check.
    rows: object = field(default=None, compare=False, repr=False)


# ------------------------------------------------------------------ running
@contextmanager
def _lifted_numpy():
    """numpy functions called on lists of noisy values take them as one
    ``Noisy`` array (``noise.lifting``) while a run is traced, and the float
    arrays the code makes keep the noisy values stored in them
    (``slots``)."""
    saved = [(n, getattr(np, n)) for n in LIFTED if hasattr(np, n)]
    makers = [(n, getattr(np, n)) for n in MAKERS]
    try:
        for n, f in saved:
            setattr(np, n, lifting(f))
        for n, f in makers:
            setattr(np, n, making(f))
        yield
    finally:
        for n, f in saved + makers:
            setattr(np, n, f)


def _elements(out, trace: NoiseTrace, where: str) -> list:
    """Every number of one run's output, in order, with the comparisons it
    depends on: (a plain value, or (const, coef) of a noisy one, deps) — a
    plain float the code made of a noisy value is read as that value's
    form, and a plain number the code rounded a noisy value to as that
    rounding (``Rounded``; the k-th output equal to a value rounded several
    times reads its k-th rounding)."""
    if nz.twin(out) is not None:        # slots.Slots holding noise
        out = nz.twin(out)
    if isinstance(out, Grid):           # a rounded number, maybe scaled or shifted
        return [(out.rounded, 0)]
    if isinstance(out, Noisy):
        c = out.coefs(trace.size).reshape(-1, trace.size)
        return [((float(k), f.copy()) if f.any() else _plain(float(k)), int(d))
                for k, f, d in zip(out.const.ravel().tolist(), c, out.deps.ravel().tolist())]
    if isinstance(out, Traced):
        if out.raw is not None:
            raise ReplayRefused("the code mixes uniform draws with continuous ones")
        return [(_plain(v), int(d)) for v, d in zip(out.values.ravel().tolist(),
                                                     out.deps.ravel().tolist())]
    if isinstance(out, (tuple, list)):
        return [x for item in out for x in _elements(item, trace, where)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=repr) for x in _elements(out[k], trace, where)]
    if out is None:
        return [(None, 0)]
    v = np.asarray(out)
    if v.dtype == object:
        raise ReplayRefused(f"{where} returns values of type object")
    got = []
    for x in v.ravel().tolist():
        # a rounding first: rounding a value already on the grid returns it
        form = trace.escaped.get(x) if isinstance(x, float) else None
        made = _rounded_as(trace, x) if type(x) in (int, float) else None
        if made is not None:
            got.append((made, 0))
        elif form is not None:
            f = np.zeros(trace.size)
            f[:form[1].size] = form[1]
            got.append(((form[0], f), 0))
        else:
            got.append((_plain(x), 0))
    return got


def _rounded_as(trace: NoiseTrace, x):
    """The rounding an output equal to the plain number ``x`` reads, or
    None: one the code turned into a plain number first, then one
    computed from a rounded number (code returns what it computes last),
    then a rounding itself — the last two only where the code did not
    compare the rounded number (``max(0, g)`` may return the constant 0);
    the k-th output equal to ``x`` reads the k-th of them."""
    for kind, found in (("converted", trace.converted.get(x, ())),
                        ("derived", [r for r, o in trace.derived.get(x, ())
                                     if id(o) not in trace.compared]),
                        ("rounded", [r for r in trace.rounded.get(x, ())
                                     if id(r) not in trace.compared])):
        if found:
            k = trace.read.get((kind, x), 0)
            trace.read[(kind, x)] = k + 1
            return found[min(k, len(found) - 1)]
    return None


def _runs_first(x, what: str):
    """A stream mechanism's or batched function's output of one run, runs
    axis first: the run's elements."""
    shape = x.shape if isinstance(x, Noisy) else np.shape(x)
    if shape[:1] != (1,):
        raise ReplayRefused(f"{what} has no runs axis first (shape {shape})")
    return x[0] if isinstance(x, Noisy) else np.asarray(x)[0]


@contextmanager
def _routed():
    """numpy's and Python's draws routed to the run generator of the run
    being called (``RunGenerator.gen``, set per run): one seal for many
    runs."""
    current = RunGenerator()
    try:
        with sealed(route=current, seed=REPLAY_SEED):
            yield current
    finally:
        # the run generator and its proxy hold each other: let go of the
        # trace's generator now, not at the next garbage collection (a
        # generator left alive reads as one the code keeps)
        current.gen = None


def run_once(alg, losses, scope: str, trace: NoiseTrace, current=None):
    """One run of the code on the noise ``trace`` chooses (traced, or plain
    with ``trace.plain``): (output elements, labels).  ``current``: the
    routes of an open ``_routed`` (else the run opens its own)."""
    if current is None:
        with _routed() as current:
            return run_once(alg, losses, scope, trace, current)
    learner = alg.learner
    gen = NoiseGenerator(trace)
    current.gen = gen

    def call():
        if per_run(alg):
            out = learner.one_run(losses, gen, REPLAY_SEED)
            return _elements(out, trace, "the code"), None
        if learner.one_batch is not None:
            out = learner.one_batch(losses, gen, 1, REPLAY_SEED)
            parts = out if isinstance(out, tuple) else (out,)
            els = [x for a in parts for x in _elements(
                _runs_first(a, "the batched function's output"), trace, "the code")]
            return els, _labels("value", len(els))
        state = learner.init(1, gen)
        els, labels = [], []
        for t in range(losses.shape[0]):
            state = learner.feed(state, None, losses[t], gen)
            state, codes = learner.act(state, None, gen)
            outs = [(codes, f"round {t + 1} code")]
            if learner.point is not None and scope != "codes":
                outs.append((learner.point(state), f"round {t + 1} number"))
            if scope == "transcript" and learner.released_of is not None:
                outs.append((learner.released_of(state), f"round {t + 1} release"))
            for x, what in outs:
                e = _elements(_runs_first(x, what), trace, what)
                els += e
                labels += _labels(what, len(e))
        return els, tuple(labels)

    try:
        with conversions() as seen:
            if trace.plain:
                els, labels = _user(call)
            else:
                with tracing(trace), _lifted_numpy():
                    els, labels = _user(call)
            taint = seen()
        # everything after a branch on a decided value depends on it
        els = [(v, d | taint) for v, d in els]
    finally:
        current.gen = None
        trace.fallback = None
    if labels is None:
        m = len(els)
        labels = (tuple(f"round {t + 1} code" for t in range(m))
                  if learner.feedback in ("bandit", "full") and m == losses.shape[0]
                  else _labels("value", m))
    return els, labels


def traceable(alg) -> bool:
    learner = alg.learner
    return (per_run(alg) or learner.one_batch is not None
            or (learner.reads_first and learner.whole is None))


def _path_of(trace: NoiseTrace, outputs, depth: int) -> Path:
    """The run's path: the comparisons some output depends on (the others'
    outcomes reach no output: either outcome gives the same one)."""
    V = trace.size
    relevant = 0
    for _, d in outputs:
        relevant |= d
    kept = [k for k in range(len(trace.constraints)) if relevant >> k & 1]
    if kept:
        A = np.stack([np.concatenate([f, np.zeros(V - f.size)])
                      for f, _ in (trace.constraints[k] for k in kept)])
        c = np.array([trace.constraints[k][1] for k in kept])
    else:
        A, c = np.zeros((0, V)), np.zeros(0)
    outs = tuple((o[0], np.concatenate([o[1], np.zeros(V - o[1].size)]))
                 if isinstance(o, tuple) else
                 replace(o, coef=np.concatenate([o.coef, np.zeros(V - o.coef.size)]))
                 if isinstance(o, Rounded) else o for o, _ in outputs)
    return Path(tuple(trace.laws), A, c, outs, trace.zvec(), depth)


# ---------------------------------------------------------------- exploring
def _reverse(laws, A, c, j: int):
    """Standard values of the variables that keep comparisons 0..j−1 of a
    path and reverse comparison j, with the largest normalised margin (an
    LP), or None where no margin of MARGIN is feasible."""
    from scipy.optimize import linprog
    rows = np.vstack([A[:j], -A[j:j + 1]])
    cons = np.concatenate([c[:j], -c[j:j + 1]])
    V = A.shape[1]
    norms = np.linalg.norm(rows, axis=1)
    keep = norms > 0
    rows, cons, norms = rows[keep], cons[keep], norms[keep]
    # variables: z (V), |z| bounds t (V), margin s; maximise s − 1e-9·Σt
    n = 2 * V + 1
    obj = np.zeros(n)
    obj[-1] = -1.0
    obj[V:2 * V] = 1e-4
    # −(rows·z) + s·norm ≤ cons ;  z − t ≤ 0 ; −z − t ≤ 0
    ub = [np.hstack([-rows, np.zeros((rows.shape[0], V)), norms[:, None]])]
    rhs = [cons]
    eye = np.eye(V)
    ub += [np.hstack([eye, -eye, np.zeros((V, 1))]), np.hstack([-eye, -eye, np.zeros((V, 1))])]
    rhs += [np.zeros(V), np.zeros(V)]
    bounds = [((0.0 if law == "exponential" else -BOX), BOX) for law in laws[:V]]
    bounds += [(0, None)] * V + [(None, 0.1)]      # a margin of 0.1 scale: then the least |z|
    res = linprog(obj, A_ub=np.vstack(ub), b_ub=np.concatenate(rhs), bounds=bounds,
                  method="highs")
    if res.status != 0 or res.x[-1] < MARGIN:
        return None
    # a random step of half the margin keeps every row (normalised) on its
    # side and leaves no comparison the LP did not see at an exact tie
    z, margin = res.x[:V], res.x[-1]
    u = _rng(abs(hash((j, V, float(margin)))) % 2 ** 32).standard_normal(V)
    z = z + 0.5 * margin * u / (np.linalg.norm(u) or 1.0)
    for i, law in enumerate(laws[:V]):
        if law == "exponential" and z[i] < 0:
            z[i] = res.x[i]
    return z


_TOO_MANY: dict = {}        # id(alg) -> (alg, why): its code has too many paths


def explore(alg, losses, scope: str) -> PathSet:
    """Every path of the code's output on ``losses`` (module docstring)."""
    if not traceable(alg):
        raise ReplayRefused("only code written one call or one object per run, batched "
                            "functions and stream mechanisms written as init/feed/act are traced")
    losses = np.asarray(losses, dtype=float)
    known = _TOO_MANY.get(id(alg))
    if known is not None and known[0] is alg:
        raise ReplayRefused(known[1])       # every input of this code: not again
    fallback_seed = 0x7AACE
    first = NoiseTrace(fallback=_rng(fallback_seed), limit=MAX_VARS)
    outs, labels = run_once(alg, losses, scope, first)
    if not first.size:
        raise ReplayRefused("the code drew no continuous noise on a traced run")
    paths = [_path_of(first, outs, 0)]
    seen = {paths[0].key(): 0}
    runs, k = 1, 0
    while k < len(paths):
        p = paths[k]
        k += 1
        for j in range(p.depth, len(p.c)):
            z = _reverse(p.laws, p.A, p.c, j)
            if z is None:
                continue
            tr = NoiseTrace(chosen=z.tolist(), fallback=_rng(fallback_seed + runs),
                            limit=MAX_VARS)
            o, lab = run_once(alg, losses, scope, tr)
            runs += 1
            if len(lab) > len(labels):
                # outputs of several lengths (a sparse vector that stops at
                # its cutoff): each length is its own output; the longest
                # names the elements
                labels = lab
            q = _path_of(tr, o, 0)
            # the comparisons fixed: those it shares with the prefix the
            # reversal kept (the parent's first j, then the reversed one)
            want_A = np.vstack([p.A[:j], -p.A[j:j + 1]])
            want_c = np.concatenate([p.c[:j], -p.c[j:j + 1]])
            q.depth = _common(q, want_A, want_c)
            if q.key() in seen:
                continue
            seen[q.key()] = len(paths)
            paths.append(q)
            if len(paths) > MAX_PATHS:
                why = (f"more than {MAX_PATHS} paths through the code's comparisons of its "
                       f"noise (an output decided by many independent comparisons)")
                _TOO_MANY[id(alg)] = (alg, why)
                raise ReplayRefused(why)
    return PathSet(paths, labels, runs)


def _common(q: Path, A, c) -> int:
    """How many of q's first comparisons are the rows (A, c), in order."""
    n = 0
    for k in range(min(len(q.c), len(c))):
        a = np.zeros(max(q.A.shape[1], A.shape[1]))
        b = a.copy()
        a[:q.A.shape[1]] = q.A[k]
        b[:A.shape[1]] = A[k]
        if not (np.allclose(a, b, rtol=1e-9, atol=1e-12) and
                math.isclose(q.c[k], c[k], rel_tol=1e-9, abs_tol=1e-12)):
            break
        n += 1
    return n


# --------------------------------------------------------------- confirming
class _Rows:
    """Every path's comparisons in one matrix (columns padded with zeros,
    ``owner`` the path of each row), so that one point is tested against
    all paths at once: a path holds where A·z + c > 0 on each of its rows,
    and is near where a row is within rounding of its boundary."""

    def __init__(self, paths, margin=1e-9):
        with_rows = [(i, p) for i, p in enumerate(paths) if len(p.c)]
        self.V = max([p.A.shape[1] for _, p in with_rows] + [0])
        self.M = np.zeros((sum(len(p.c) for _, p in with_rows), self.V))
        self.owner = np.zeros(len(self.M), dtype=np.int64)
        at = 0
        for i, p in with_rows:
            n = len(p.c)
            self.M[at:at + n, :p.A.shape[1]] = p.A
            self.owner[at:at + n] = i
            at += n
        self.c = np.concatenate([np.asarray(p.c, float) for _, p in with_rows]) \
            if with_rows else np.zeros(0)
        self.absM, self.absc = np.abs(self.M), np.abs(self.c)
        self.n, self.margin = len(paths), margin
        self._laws = [p.laws for p in paths]
        self._eligible: dict = {}

    def eligible(self, laws: tuple) -> np.ndarray:
        """The paths whose variables' laws begin the run's."""
        if laws not in self._eligible:
            self._eligible[laws] = np.array([laws[:len(l)] == l for l in self._laws], bool)
        return self._eligible[laws]

    def holds(self, z) -> tuple[np.ndarray, np.ndarray]:
        """Per path: (every comparison holds at z, one is within rounding of
        its boundary)."""
        zz = np.zeros(self.V)
        zz[:min(self.V, z.size)] = z[:self.V]
        v = self.M @ zz + self.c
        scale = self.absM @ np.abs(zz) + self.absc + 1e-300
        bad = np.bincount(self.owner[~(v > 0)], minlength=self.n) > 0
        near = np.bincount(self.owner[np.abs(v) <= self.margin * scale], minlength=self.n) > 0
        return ~bad, near


def _agrees(path: Path, els, z) -> bool:
    if len(els) != len(path.outputs):
        return False
    for want, got in zip(path.outputs, els):
        if isinstance(want, tuple):
            k, f = want
            zz = np.zeros(f.size)
            zz[:min(f.size, z.size)] = z[:f.size]
            form = k + f @ zz
            if not isinstance(got, (int, float)) or isinstance(got, bool) or \
                    abs(got - form) > REL * (abs(k) + np.abs(f) @ np.abs(zz) + 1.0):
                return False
        elif isinstance(want, Rounded):
            # on the grid, and the form within the interval that rounds to it
            # (up to the code's own rounding of the form)
            if not want.reaches(got):
                return False
            zz = np.zeros(want.coef.size)
            zz[:min(zz.size, z.size)] = z[:zz.size]
            y = want.const + want.coef @ zz
            lo, hi = want.cell(got)
            slack = REL * (abs(want.const) + np.abs(want.coef) @ np.abs(zz) + abs(got) + 1.0)
            if not lo - slack <= y <= hi + slack:
                return False
        elif got != want:
            return False
    return True


def _inside(path: Path, rng, count: int) -> list:
    """``count`` points spread inside the path: hit-and-run from its point,
    within ±(|z|+50) of it (and the exponential variables' support)."""
    z = path.z.copy()
    V = z.size
    lo = np.where(np.array([l == "exponential" for l in path.laws]), 0.0, -np.abs(z) - 50)
    hi = np.abs(z) + 50
    out = []
    for _ in range(count):
        d = rng.standard_normal(V)
        d /= np.linalg.norm(d) or 1.0
        tmin, tmax = -np.inf, np.inf
        # box: lo ≤ z + t d ≤ hi
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (lo - z) / d, (hi - z) / d
        tmin = max(tmin, np.nanmax(np.where(d != 0, np.minimum(t1, t2), -np.inf)))
        tmax = min(tmax, np.nanmin(np.where(d != 0, np.maximum(t1, t2), np.inf)))
        # comparisons: A(z + t d) + c > 0
        if len(path.c):
            ad = path.A @ d
            slack = path.A @ z + path.c
            with np.errstate(divide="ignore", invalid="ignore"):
                t = -slack / ad
            pos, neg = ad > 0, ad < 0
            if pos.any():
                tmin = max(tmin, float(np.max(t[pos])))
            if neg.any():
                tmax = min(tmax, float(np.min(t[neg])))
        if not (tmin < tmax) or not math.isfinite(tmin) or not math.isfinite(tmax):
            continue
        z = z + rng.uniform(tmin, tmax) * d
        out.append(z.copy())
    return out


def confirm(alg, losses, scope: str, ps: PathSet) -> PathSet:
    """``ps`` confirmed by re-executing the code on plain values (module
    docstring), or ``ReplayRefused``."""
    losses = np.asarray(losses, dtype=float)
    rng = _rng(CONFIRM_SEED)
    per = max(PER_PATH, min(200, (MAX_CHECKS - UNCONDITIONAL) // max(1, len(ps.paths))))
    V = max(p.z.size for p in ps.paths)
    laws = max((p.laws for p in ps.paths), key=len)
    points = []
    for _ in range(UNCONDITIONAL):
        points.append((None, np.array([nz._sample(law, rng, 1)[0] for law in laws])
                       if V else np.zeros(0)))
    for i, p in enumerate(ps.paths):
        points += [(i, z) for z in _inside(p, rng, per)]
    with _routed() as current:
        if per_run(alg):
            done = 0
            for _, z in points:
                tr = NoiseTrace(chosen=z.tolist(), fallback=_rng(done), limit=MAX_VARS,
                                plain=True)
                els, _ = run_once(alg, losses, scope, tr, current)
                done += 1
                _check_run(ps, [v for v, _ in els], tr.zvec(), tuple(tr.laws))
        else:
            done = _check_batch(alg, losses, scope, ps, [z for _, z in points], current)
    ps.reexecuted = done
    return ps


class _BatchNoise(NoiseGenerator):
    """Plain draws for many runs at once (a stream mechanism over all runs,
    a batched function: every draw has the runs axis first): the k-th draw
    element of each run is column k of ``Z`` (drawn from ``fallback`` past
    its columns, or where a value lies outside the law's support)."""

    def __init__(self, Z: np.ndarray, fallback):
        self.Z, self.fallback = Z, fallback
        self.N = Z.shape[0]
        self.used, self.laws = [], []
        self.draws, self._first, self._next, self.from_seed = [], 0, 0, 0

    def _draw(self, law, loc, scale, size, python=False):
        if size is None:
            raise ReplayRefused("a draw without the runs axis first in code over all runs")
        shape = tuple(np.atleast_1d(size).astype(int).tolist())
        if shape[0] != self.N:
            raise ReplayRefused(f"a draw ({law}) has no runs axis first")
        m = int(np.prod(shape[1:], dtype=np.int64))
        k = len(self.laws)
        cols = np.empty((self.N, m))
        have = max(0, min(m, self.Z.shape[1] - k))
        cols[:, :have] = self.Z[:, k:k + have]
        cols[:, have:] = nz._sample(law, self.fallback, self.N * (m - have)).reshape(
            self.N, m - have)
        if law == "exponential":
            bad = cols < 0
            cols[bad] = nz._sample(law, self.fallback, int(bad.sum()))
        self.used.append(cols)
        self.laws += [law] * m
        return np.asarray(loc, dtype=float) + np.asarray(scale, dtype=float) * cols.reshape(shape)


def _check_batch(alg, losses, scope, ps, zs, current) -> int:
    """The vectorised re-execution: every point one run of one call."""
    learner = alg.learner
    N = len(zs)
    V = max([z.size for z in zs] + [0])
    Z = np.zeros((N, V))
    for r, z in enumerate(zs):
        Z[r, :z.size] = z
    gen = _BatchNoise(Z, _rng(CONFIRM_SEED + 1))
    current.gen = gen

    def rows(x):
        v = np.asarray(x)
        if v.shape[:1] != (N,):
            raise ReplayRefused(f"an output has no runs axis first (shape {v.shape})")
        return [[_plain(y) for y in row] for row in v.reshape(N, -1).tolist()]

    def call():
        if learner.one_batch is not None:
            out = learner.one_batch(losses, gen, N, REPLAY_SEED)
            return [rows(a) for a in (out if isinstance(out, tuple) else (out,))]
        state = learner.init(N, gen)
        got = []
        for t in range(losses.shape[0]):
            state = learner.feed(state, None, losses[t], gen)
            state, codes = learner.act(state, None, gen)
            got.append(rows(codes))
            if learner.point is not None and scope != "codes":
                got.append(rows(learner.point(state)))
            if scope == "transcript" and learner.released_of is not None:
                got.append(rows(learner.released_of(state)))
        return got

    try:
        parts = _user(call)
    finally:
        current.gen = None
    used = np.hstack(gen.used) if gen.used else np.zeros((N, 0))
    laws = tuple(gen.laws)
    for r in range(N):
        _check_run(ps, [v for part in parts for v in part[r]], used[r], laws)
    return N


def _check_run(ps, els, zfull, laws) -> None:
    """One re-executed run: on exactly one traced path, with its outputs."""
    if ps.rows is None:
        ps.rows = _Rows(ps.paths)
    eligible = ps.rows.eligible(laws)
    ok, near = ps.rows.holds(np.asarray(zfull, float))
    if np.any(near & eligible):
        return                  # within rounding of a boundary: either side may be right
    on = np.flatnonzero(ok & eligible).tolist()
    if len(on) != 1:
        raise ReplayRefused(f"re-executed on plain values, a run fell on {len(on)} traced "
                            f"paths, not one: the trace missed a comparison")
    if not _agrees(ps.paths[on[0]], els, zfull):
        raise ReplayRefused("re-executed on plain values, the code gave another output than "
                            "its traced path says (it does something with its noise the "
                            "trace did not see)")


_KEPT: dict = {}        # (id(alg), scope, input, confirmed) -> (alg, PathSet)
MAX_KEPT = 256


def traced_paths(alg, losses, scope: str = "output", confirmed: bool = True) -> PathSet:
    """``explore``, confirmed (``confirm``) unless ``confirmed`` is False,
    kept per algorithm object and input (a confirmed set serves either)."""
    losses = np.asarray(losses, dtype=float)
    key = (id(alg), scope, losses.shape, losses.tobytes())
    for c in (True, False):
        got = _KEPT.get(key + (c,))
        if got is not None and got[0] is alg and (c or not confirmed):
            return got[1]
    got = _KEPT.get(key + (False,))
    ps = got[1] if got is not None and got[0] is alg else explore(alg, losses, scope)
    if confirmed:
        ps = confirm(alg, losses, scope, ps)
    if len(_KEPT) >= MAX_KEPT:
        _KEPT.pop(next(iter(_KEPT)))
    _KEPT[key + (confirmed,)] = (alg, ps)
    return ps


_APPLIES: dict = {}


def _draws_in(f, laws) -> int:
    """The draws a comparison involves, two exponential draws entering as
    their difference (one Laplace draw) counted once."""
    nz = np.flatnonzero(f).tolist()
    exp = [i for i in nz if laws[i] == "exponential"]
    pairs = sum(1 for i in exp for j in exp if i < j and f[i] == -f[j])
    return len(nz) - pairs


def trace_paths(alg):
    """Whether the trace of continuous draws follows ``alg``'s code, probed
    by one traced run on its domain's midpoint (kept per algorithm
    object): its number of comparisons of noise, or None where the trace
    refuses the code, a comparison involves more than two draws, or the
    run makes more than ``PROBE_COMPARISONS`` comparisons."""
    if not traceable(alg):
        return None
    kept = _APPLIES.get(id(alg))
    if kept is not None and kept[0] is alg:
        return kept[1]
    n = None
    try:
        losses = alg.midpoint()
        tr = NoiseTrace(fallback=_rng(0x7AACE), limit=MAX_VARS)
        run_once(alg, losses, replay_scope(alg), tr)
        if tr.size and len(tr.constraints) <= PROBE_COMPARISONS and all(
                _draws_in(f, tr.laws) <= 2 for f, _ in tr.constraints):
            n = len(tr.constraints)
    except Exception:       # noqa: BLE001 - refused, or the code failed on the trace
        n = None
    _APPLIES[id(alg)] = (alg, n)
    return n


def traced_runs(alg):
    """The traced runs that finding every path of ``alg``'s code on its
    domain's midpoint took (the trace kept for the audit), or None where the
    trace does not follow the code there: a deterministic measure of what
    one exact pair ε costs (each run is one linear program and one run of
    the code), which an optimiser calling it hundreds of times is sized by."""
    if trace_paths(alg) is None:
        return None
    losses = alg.midpoint()
    try:
        return traced_paths(alg, losses, replay_scope(alg), confirmed=False).runs
    except Exception:       # noqa: BLE001 - refused, or the code failed on the trace
        return None

