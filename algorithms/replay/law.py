"""The exact law of a mechanism's output on one input, found by replaying its
own code on chosen uniform draws (``tracer``), and the exact ε of a pair.

How: the code runs on a batch of runs, each run one choice of a value for
every draw element.  Every comparison the code makes cuts the grid of the
draw it reads; the outputs' dependencies group them into parts that read
disjoint draw elements (independent, since the draws are).  For each part,
every joint cell (one interval between cuts per element it reads) is
replayed once, at the cell's lowest grid value; the cuts of those replays
are added and the cells rebuilt until no replay adds a cut and the parts no
longer change.  Then every comparison each replay made leaves its cell on
one side, so every draw in the cell takes the same path and gives the same
output: the part's law is, per output, the sum of its cells' exact lengths
(rational numbers: a grid count over 2^53 or over the integers' range).

The pair's exact ε: the parts of both inputs must be the same output
elements; per direction Σ_parts max_y ln P(y)/P′(y) (∞ where P′(y) = 0 <
P(y)), attained by the output made of each part's best y — one output of
positive probability, so a certificate for pure ε.

May import: numpy and ``algorithms.replay.tracer`` (no engine: ``audit list``
and the attacks ask ``replay_applies``).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from algorithms.replay.tracer import ReplayGenerator, ReplayRefused, Traced, sealed

MAX_CELLS = 4096        # joint cells of one part (runs of one replay)
MAX_STEPS = 24          # rounds of refinement before giving up


@dataclass
class OutputLaw:
    """The exact law of one input's output: ``parts[i]`` maps the values of
    the output elements ``groups[i]`` (a tuple) to their probability."""
    groups: tuple
    parts: tuple
    labels: tuple           # what each output element is (e.g. "round 1 code")
    cells: int              # joint cells replayed at the end
    steps: int              # refinement steps


def _outputs(alg, losses, runs: int, rng, scope: str):
    """Run the stream mechanism over ``losses`` once with ``runs`` runs on
    the replay generator; (values (runs, m) object, deps (runs, m), labels)."""
    learner = alg.learner
    state = learner.init(runs, rng)
    vals, deps, labels = [], [], []

    def add(x, what):
        if isinstance(x, Traced):
            v, d = x.values, x.deps
        else:
            v = np.asarray(x)
            d = np.empty(v.shape, dtype=object)
            d.fill(0)
        if v.shape[:1] != (runs,):
            raise ReplayRefused(f"{what} has no runs axis first (shape {v.shape})")
        v, d = v.reshape(runs, -1), d.reshape(runs, -1)
        vals.append(v.astype(object))
        deps.append(d)
        labels.extend(f"{what}[{j}]" if v.shape[1] > 1 else what for j in range(v.shape[1]))

    for t in range(losses.shape[0]):
        state = learner.feed(state, None, losses[t], rng)
        state, codes = learner.act(state, None, rng)
        add(codes, f"round {t + 1} code")
        if learner.point is not None and scope != "codes":
            add(learner.point(state), f"round {t + 1} number")
        if scope == "transcript" and learner.released_of is not None:
            add(learner.released_of(state), f"round {t + 1} release")
    return np.concatenate(vals, axis=1), np.concatenate(deps, axis=1), tuple(labels)


def _element_of(rng: ReplayGenerator, runs: int) -> dict:
    """Draw element id → (run, logical element (call, position in the run))."""
    out = {}
    for k, draw in enumerate(rng.draws):
        ids = draw.ids
        if ids.ndim == 0 or ids.shape[0] != runs:
            raise ReplayRefused(f"draw {k + 1} ({draw.kind}) has no runs axis first")
        flat = ids.reshape(runs, -1)
        for r in range(runs):
            for pos, i in enumerate(flat[r]):
                out[int(i)] = (r, (k, pos))
    return out


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _structure(rng, deps, runs):
    """(cuts per logical element, the parts: tuples of output elements, the
    logical draw elements each part reads)."""
    where = _element_of(rng, runs)
    cuts: dict = {}
    for draw in rng.draws:
        for i, cs in draw.cuts.items():
            cuts.setdefault(where[i][1], set()).update(cs)
    m = deps.shape[1]
    reads = [set() for _ in range(m)]
    for r in range(runs):
        for j in range(m):
            for i in _bits(int(deps[r, j])):
                run, elem = where[i]
                if run != r:
                    raise ReplayRefused("one run's output depends on another run's draws")
                reads[j].add(elem)
    # parts: output elements connected through the draw elements they read
    parent = list(range(m))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    owner: dict = {}
    for j in range(m):
        for e in reads[j]:
            if e in owner:
                parent[find(j)] = find(owner[e])
            else:
                owner[e] = j
    groups: dict = {}
    for j in range(m):
        groups.setdefault(find(j), []).append(j)
    parts = tuple(sorted(tuple(g) for g in groups.values()))
    elems = tuple(tuple(sorted(set().union(*(reads[j] for j in g)))) for g in parts)
    return cuts, parts, elems


def _cells(draw_sizes: dict, cuts: dict, elems: tuple):
    """Per element of ``elems``: its intervals [lo, hi) of grid indices."""
    out = []
    for e in elems:
        n = draw_sizes[e[0]]
        edges = sorted({0, n} | {c for c in cuts.get(e, ()) if 0 < c < n})
        out.append(list(zip(edges[:-1], edges[1:])))
    return out


def output_law(alg, losses, scope: str = "output") -> OutputLaw:
    """The exact law of ``alg``'s output on ``losses`` (module docstring);
    ``scope`` "transcript" adds the released values, "codes" leaves out the
    numbers.  Raises ``ReplayRefused`` where the code cannot be replayed
    exactly."""
    learner = alg.learner
    if not learner.reads_first or learner.whole is not None:
        raise ReplayRefused("only mechanisms over a stream of answers written as init/feed/act "
                            "are replayed")
    losses = np.asarray(losses, dtype=float)
    plan = None             # (parts, elems, cells per element of each part)
    sizes: dict = {}
    for step in range(MAX_STEPS):
        counts = [math.prod(len(c) for c in cells) for cells in plan[2]] if plan else [1]
        runs = max(counts)
        if runs > MAX_CELLS:
            raise ReplayRefused(f"more than {MAX_CELLS} joint cells in one part of the output")
        assign: dict = {}
        if plan:
            for elems, cells, n in zip(plan[1], plan[2], counts):
                for r, combo in enumerate(itertools.product(*cells)):
                    for e, (lo, _) in zip(elems, combo):
                        assign.setdefault(e, np.zeros(runs, dtype=np.int64))[r] = lo

        rng = ReplayGenerator(_chooser(assign, runs))
        with sealed():
            values, deps, labels = _outputs(alg, losses, runs, rng, scope)
        sizes = {k: d.size for k, d in enumerate(rng.draws)}
        cuts, parts, elems = _structure(rng, deps, runs)
        cells = [_cells(sizes, cuts, e) for e in elems]
        new = (parts, elems, cells)
        if plan is not None and new == plan:
            break
        plan = new
    else:
        raise ReplayRefused(f"the cuts did not settle in {MAX_STEPS} replays")
    _same_in_reverse(alg, losses, scope, runs, assign, values)
    laws = []
    for group, es, cs, n in zip(parts, elems, cells, counts):
        law: dict = {}
        for r, combo in enumerate(itertools.product(*cs)):
            p = Fraction(1)
            for e, (lo, hi) in zip(es, combo):
                p *= Fraction(hi - lo, sizes[e[0]])
            y = tuple(_plain(values[r, j]) for j in group)
            law[y] = law.get(y, Fraction(0)) + p
        if sum(law.values()) != 1:
            raise ReplayRefused("the replayed cells do not cover the draws")   # a tracer bug
        laws.append(law)
    return OutputLaw(parts, tuple(laws), labels, sum(counts), step + 1)


def _chooser(assign: dict, runs: int):
    """The replay generator's choice: per draw call k, the grid indices
    ``assign[(k, position)]`` (one per run) of each element, 0 elsewhere."""
    def choose(k, draw, shape):
        if not shape or shape[0] != runs:
            raise ReplayRefused(f"draw {k + 1} ({draw.kind}) has no runs axis first")
        m = int(np.prod(shape[1:], dtype=np.int64))
        idx = np.zeros((runs, m), dtype=np.int64)
        for pos in range(m):
            col = assign.get((k, pos))
            if col is not None:
                idx[:, pos] = col
        return idx.reshape(shape)
    return choose


def _same_in_reverse(alg, losses, scope, runs, assign, values) -> None:
    """The last replay once more with its runs in reverse order: each run's
    output must come back reversed, or it depended on something besides its
    own draws (its place among the runs, a clock, a source of randomness
    the seal did not reach)."""
    back = {e: col[::-1].copy() for e, col in assign.items()}
    with sealed():
        again, _, _ = _outputs(alg, losses, runs, ReplayGenerator(_chooser(back, runs)), scope)
    if again.shape != values.shape or not all(
            _plain(x) == _plain(y) for x, y in zip(again[::-1].ravel(), values.ravel())):
        raise ReplayRefused("the same draws in another run order gave other outputs: the "
                            "code's output depends on more than its own draws")


def _plain(x):
    """An output value as a hashable Python number; NaN (nothing released)
    as None, so that two NaNs are the same output."""
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float):
        return None if math.isnan(x) else x
    return x


@dataclass
class PairEpsilon:
    """The exact ε of a pair from both outputs' laws: per direction the sum
    over parts of the best log-ratio, and the output attaining it."""
    epsilon: float
    direction: str
    directions: dict
    best: tuple             # per part: (output elements, values, P, P′)


def pair_epsilon(law_a: OutputLaw, law_b: OutputLaw) -> PairEpsilon:
    if law_a.groups != law_b.groups:
        raise ReplayRefused("the output splits into different independent parts on the two "
                            "inputs")
    per, best = {}, {}
    for d, (x, y) in (("l>l'", (law_a, law_b)), ("l'>l", (law_b, law_a))):
        total, picks = 0.0, []
        for group, p, q in zip(x.groups, x.parts, y.parts):
            top, pick = -math.inf, None
            for out, pv in p.items():
                qv = q.get(out, Fraction(0))
                r = math.inf if qv == 0 else math.log(pv) - math.log(qv)
                if r > top:
                    top, pick = r, (group, out, pv, qv)
            total += top
            picks.append(pick)
        per[d], best[d] = total, tuple(picks)
    d = max(per, key=per.get)
    return PairEpsilon(per[d], d, per, best[d])


def replay_scope(alg) -> str:
    """What the replay reads: the released values too when the claim is
    about the transcript, else the output (codes and numbers)."""
    claim = alg.claim
    return "transcript" if claim is not None and claim.scope == "transcript" else "output"


_APPLIES: dict = {}      # id(alg) -> (alg, whether the replay follows it)


def replay_applies(alg) -> bool:
    """Whether the replay follows ``alg``'s code on its domain's midpoint
    (kept per algorithm object): a stream mechanism written as
    init/feed/act whose draws are uniform and only compared."""
    learner = alg.learner
    if not learner.reads_first or learner.whole is not None:
        return False
    kept = _APPLIES.get(id(alg))
    if kept is not None and kept[0] is alg:
        return kept[1]
    try:
        losses = np.full((alg.horizon, alg.n_arms), float(np.mean(alg.loss_range)))
        output_law(alg, losses, replay_scope(alg))
        ok = True
    except Exception:       # noqa: BLE001 - refused, or the code failed on the replay
        ok = False
    _APPLIES[id(alg)] = (alg, ok)
    return ok
