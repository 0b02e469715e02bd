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

Before a law is returned, ``confirm`` re-executes the unmodified code on
plain values at points of every cell; any disagreement refuses the replay.

May import: numpy, ``algorithms.replay.tracer`` and ``algorithms.replay.confirm`` (no engine: ``audit list``
and the attacks ask ``replay_applies``).
"""
from __future__ import annotations

import decimal
import itertools
import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Optional

import numpy as np

from algorithms.replay.confirm import PER_CELL, PlainGenerator, reexecute
from algorithms.replay.tracer import (RANDOM_GRID, REPLAY_SEED, ReplayGenerator, ReplayRefused,
                                      RunGenerator, Traced, conversions, empty_deps, sealed)

MAX_CELLS = 4096        # joint cells of one part (runs of one replay)
MAX_STEPS = 24          # rounds of refinement before giving up
MAX_RUN_DRAWS = 10_000  # draw elements of one run of a function (a loop on draws ends)
MAX_BATCH_DRAWS = 10 ** 7   # draw elements of one replay of init/feed/act
MAX_RUN_ROUNDS = 100_000    # runs × rounds of one replay of code called run by run


@dataclass
class OutputLaw:
    """The exact law of one input's output: ``parts[i]`` maps the values of
    the output elements ``groups[i]`` (a tuple) to their probability."""
    groups: tuple
    parts: tuple
    labels: tuple           # what each output element is (e.g. "round 1 code")
    cells: int              # joint cells replayed at the end
    steps: int              # refinement steps
    confirmed: int = 0      # points per cell (at most) at which re-execution confirmed it (0: not run)
    reexecuted: int = 0     # runs of the unmodified code that confirmed it
    # What re-execution needs: per part (output elements, draw elements,
    # cells, each cell's output), and the draw elements a run makes.
    plan: tuple = field(default=(), repr=False, compare=False)
    draws_per_run: float = field(default=0.0, repr=False, compare=False)


def _outputs(alg, losses, runs: int, rng, scope: str):
    """Run the stream mechanism over ``losses`` once with ``runs`` runs on
    the replay generator; (values (runs, m) object, deps (runs, m), labels)."""
    learner = alg.learner
    state = learner.init(runs, rng)
    vals, deps, labels = [], [], []

    def add(x, what):
        v, d = _runs_first(x, runs, what)
        vals.append(v)
        deps.append(d)
        labels.extend(_labels(what, v.shape[1]))

    for t in range(losses.shape[0]):
        state = learner.feed(state, None, losses[t], rng)
        state, codes = learner.act(state, None, rng)
        add(codes, f"round {t + 1} code")
        if learner.point is not None and scope != "codes":
            add(learner.point(state), f"round {t + 1} number")
        if scope == "transcript" and learner.released_of is not None:
            add(learner.released_of(state), f"round {t + 1} release")
    return np.concatenate(vals, axis=1), np.concatenate(deps, axis=1), tuple(labels)


def _runs_first(x, runs: int, what: str):
    """An output array (or ``Traced``) with the runs axis first as (values
    (runs, m) object, deps (runs, m))."""
    if isinstance(x, Traced):
        x = _not_a_draw(x)
        v, d = x.values, x.deps
    else:
        v = np.asarray(x)
        d = empty_deps(v.shape)
    if v.shape[:1] != (runs,):
        raise ReplayRefused(f"{what} has no runs axis first (shape {v.shape})")
    return v.reshape(runs, -1).astype(object), d.reshape(runs, -1)


def _labels(what: str, m: int) -> tuple:
    """The labels of an output of ``m`` elements: ``what[j]``, or ``what``."""
    return tuple(f"{what}[{j}]" if m > 1 else what for j in range(m))


def _flatten(out, where: str) -> list:
    """(value, dependencies) of every number in one run's output: a number,
    None, an array, or a tuple, list or dict of them (nested; a dict by its
    keys sorted), in order."""
    if isinstance(out, Traced):
        out = _not_a_draw(out)
        return list(zip(out.values.ravel().tolist(), out.deps.ravel().tolist()))
    if isinstance(out, (tuple, list)):
        return [x for item in out for x in _flatten(item, where)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=repr) for x in _flatten(out[k], where)]
    if out is None:
        return [(None, 0)]
    if isinstance(out, set):
        raise ReplayRefused(f"{where} returns a set")
    v = np.asarray(out)
    if v.dtype == object:
        raise ReplayRefused(f"{where} returns values of type object")
    return [(x, 0) for x in v.ravel().tolist()]


def _not_a_draw(x: Traced) -> Traced:
    """An output made of a draw's own value: cut at every value it takes
    (an integer draw, ``int(k·u)``), or refused (a continuous value)."""
    return x.settled("a uniform draw itself is part of the output")


def _per_run_outputs(alg, losses, runs: int, assign: dict, fill=None):
    """Code written one call or one object per run (``Learner.one_run``: a
    function or a class as written): each run on a replay generator of its
    own — numpy's and Python's global uniform draws, and the generators the
    code builds unseeded or from the seed it is given, routed to it — and
    everything the run turned into plain values (a branch on a comparison)
    counted among what its whole output depends on.  (values, deps,
    labels, generators)."""
    one_run = alg.learner.one_run
    vals, deps, gens, first = [], [], [], 0
    current = RunGenerator()
    with sealed(route=current, seed=REPLAY_SEED):
        for r in range(runs):
            make = ReplayGenerator if fill is None else PlainGenerator
            gen = current.gen = make(_chooser(assign, runs, run=r, fill=fill), first_id=first,
                                     limit=MAX_RUN_DRAWS, single_run=True)
            with conversions() as seen:
                out = _user(lambda: one_run(losses, gen, REPLAY_SEED))
                flat = _flatten(out, "the code")
                extra = seen()
            first = gen._next
            gens.append(gen)
            vals.append([v for v, _ in flat])
            deps.append([int(d) | extra for _, d in flat])
    if len({len(v) for v in vals}) != 1:
        raise ReplayRefused("the code returns outputs of different sizes on different draws")
    m = len(vals[0])
    if alg.learner.feedback in ("bandit", "full") and m == losses.shape[0]:
        labels = tuple(f"round {t + 1} code" for t in range(m))     # the arm or expert played
    else:
        labels = _labels("value", m)
    values = np.empty((runs, m), dtype=object)
    dep = np.empty((runs, m), dtype=object)
    for r in range(runs):
        values[r, :] = vals[r]
        dep[r, :] = deps[r]
    return values, dep, labels, [(r, g) for r, g in enumerate(gens)]


def _user(call):
    """The mechanism's own code, called on chosen draws: anything it raises
    there (but a refusal) means the replay cannot follow it."""
    try:
        return call()
    except ReplayRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - the mechanism's code
        raise ReplayRefused(f"the code raised {type(exc).__name__} on a replayed draw: "
                            f"{exc}") from exc


def _batch(alg, losses, runs: int, assign: dict, scope: str, fill=None):
    """One replay of ``runs`` runs with the draws ``assign`` chooses:
    (values (runs, m), deps (runs, m), labels, [(run or None, generator)])
    — a stream mechanism's init/feed/act on one generator with the runs
    axis first, a batched function likewise, or code written one call or
    one object per run.  With ``fill`` (``confirm.filler``): a
    re-execution on plain values, the draws ``assign`` leaves open drawn
    by ``fill``."""
    if per_run(alg):
        return _per_run_outputs(alg, losses, runs, assign, fill)
    if fill is None:
        rng = ReplayGenerator(_chooser(assign, runs), limit=MAX_BATCH_DRAWS)
    else:
        rng = PlainGenerator(_chooser(assign, runs, fill=fill), limit=math.inf)
    if alg.learner.one_batch is not None:
        current = RunGenerator()
        current.gen = rng
        with sealed(route=current, seed=REPLAY_SEED):
            values, deps, labels = _user(lambda: _batched_outputs(alg, losses, runs, rng))
        return values, deps, labels, [(None, rng)]
    with sealed():
        values, deps, labels = _user(lambda: _outputs(alg, losses, runs, rng, scope))
    return values, deps, labels, [(None, rng)]


def _batched_outputs(alg, losses, runs: int, rng):
    """A batched function's outputs of ``runs`` runs: arrays with the runs
    axis first (or a tuple of them); (values (runs, m), deps, labels)."""
    out = alg.learner.one_batch(losses, rng, runs, REPLAY_SEED)
    vals, deps = [], []
    for a in out if isinstance(out, tuple) else (out,):
        if isinstance(a, list):
            raise ReplayRefused("the batched function returns a list: the replay reads arrays "
                                "with the runs axis first")
        if not isinstance(a, Traced) and np.asarray(a).dtype == object:
            raise ReplayRefused(f"the batched function's output has no runs axis first "
                                f"(shape {np.shape(a)})")
        v, d = _runs_first(a, runs, "the batched function's output")
        vals.append(v)
        deps.append(d)
    values, dep = np.concatenate(vals, axis=1), np.concatenate(deps, axis=1)
    return values, dep, _labels("value", values.shape[1])


def per_run(alg) -> bool:
    """Whether the mechanism is code written one call or one object per run
    (as written) that the replay can run itself."""
    return alg.learner.one_run is not None


def _replayable(alg) -> bool:
    """Code the replay knows how to run: one call or object per run, or a
    stream mechanism's init/feed/act over all runs."""
    learner = alg.learner
    return (per_run(alg) or learner.one_batch is not None
            or (learner.reads_first and learner.whole is None))


def _element_of(gens, runs: int) -> dict:
    """Draw element id → (run, logical element (kind, low, high, n): the
    run's n-th draw of that kind and range): a generator of all runs has
    the runs axis first, a generator of one run (``run`` given) holds that
    run's draws alone.  (Each draw is independent of all before it, so the
    n-th draw of a kind is one uniform variable whatever path led to it.)"""
    out = {}
    for run, rng in gens:
        for k, draw in enumerate(rng.draws):
            ids = draw.ids
            if run is not None:
                for pos, i in enumerate(ids.reshape(-1)):
                    out[int(i)] = (run, (*draw.sig, draw.start + pos))
                continue
            if ids.ndim == 0 or ids.shape[0] != runs:
                raise ReplayRefused(f"draw {k + 1} ({draw.kind}) has no runs axis first")
            flat = ids.reshape(runs, -1)
            for r in range(runs):
                for pos, i in enumerate(flat[r]):
                    out[int(i)] = (r, (*draw.sig, draw.start + pos))
    return out


def _size(elem: tuple) -> int:
    """The number of grid points of a logical draw element."""
    kind, low, high = elem[:3]
    return RANDOM_GRID if kind == "random" else high - low


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _structure(gens, deps, runs):
    """(cuts per logical element, the parts: tuples of output elements, the
    logical draw elements each part reads)."""
    where = _element_of(gens, runs)
    cuts: dict = {}
    for _, rng in gens:
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


def _cells(cuts: dict, elems: tuple):
    """Per element of ``elems``: its intervals [lo, hi) of grid indices."""
    out = []
    for e in elems:
        n = _size(e)
        edges = sorted({0, n} | {c for c in cuts.get(e, ()) if 0 < c < n})
        out.append(list(zip(edges[:-1], edges[1:])))
    return out


_LAWS: dict = {}        # (id(alg), scope, input, confirmed) -> (alg, law): one law per input
MAX_KEPT_LAWS = 256


def output_law(alg, losses, scope: str = "output", confirm: bool = True,
               seconds: Optional[float] = None) -> OutputLaw:
    """``replay_law``, kept per algorithm object and input: pairs that share
    an input (the search's pairs share their base) replay and confirm it
    once."""
    losses = np.asarray(losses, dtype=float)
    key = (id(alg), scope, losses.shape, losses.tobytes())
    kept = {c: got[1] for c in (True, False)
            if (got := _LAWS.get(key + (c,))) is not None and got[0] is alg}
    if True in kept or (not confirm and False in kept):
        return kept[True] if True in kept else kept[False]  # a confirmed law serves either
    if False in kept:
        law = confirmed(alg, losses, scope, kept[False])    # traced already: re-execute only
    else:
        law = replay_law(alg, losses, scope, confirm, seconds)
    if len(_LAWS) >= MAX_KEPT_LAWS:
        _LAWS.pop(next(iter(_LAWS)))
    _LAWS[key + (confirm,)] = (alg, law)
    return law


def replay_law(alg, losses, scope: str = "output", confirm: bool = True,
               seconds: Optional[float] = None) -> OutputLaw:
    """The exact law of ``alg``'s output on ``losses`` (module docstring);
    ``scope`` "transcript" adds the released values, "codes" leaves out the
    numbers.  ``confirm``: re-execute the unmodified code at points of every
    cell (``confirm.reexecute``) before the law is returned — left out only
    where a law ranks candidates and is computed again, confirmed, before
    any figure rests on it.  ``seconds``: refuse, before a replay of many
    runs, where the runs so far say it would take longer (a probe of slow
    code).  Raises ``ReplayRefused`` where the code cannot be replayed
    exactly, or its re-execution disagrees."""
    if not _replayable(alg):
        raise ReplayRefused("only mechanisms over a stream of answers written as init/feed/act, "
                            "and code written one call or one object per run, are replayed")
    losses = np.asarray(losses, dtype=float)
    plan = None             # (parts, elems, cells per element of each part)
    # per: CPU seconds a replayed run has cost (CPU time, not wall time: a
    # probe's verdict should not depend on what else the machine runs)
    start, per = time.process_time(), 0.0
    for step in range(MAX_STEPS):
        counts = [math.prod(len(c) for c in cells) for cells in plan[2]] if plan else [1]
        runs = max(counts)
        if runs > MAX_CELLS:
            raise ReplayRefused(f"more than {MAX_CELLS} joint cells in one part of the output")
        spent = time.process_time() - start
        if seconds is not None and spent + runs * per > seconds:
            raise ReplayRefused(f"a replay of {runs} runs would take about "
                                f"{spent + runs * per:.0f} s (more than {seconds:g} s)")
        if per_run(alg) and runs * losses.shape[0] > MAX_RUN_ROUNDS:
            # one Python call (or more) a run and round: bounded work, whatever the horizon
            raise ReplayRefused(f"{runs} joint cells over {losses.shape[0]} rounds: more than "
                                f"{MAX_RUN_ROUNDS} run-rounds of the code in one replay")
        assign: dict = {}
        if plan:
            for elems, cells, n in zip(plan[1], plan[2], counts):
                for r, combo in enumerate(itertools.product(*cells)):
                    for e, (lo, _) in zip(elems, combo):
                        assign.setdefault(e, np.zeros(runs, dtype=np.int64))[r] = lo

        began = time.process_time()
        values, deps, labels, gens = _batch(alg, losses, runs, assign, scope)
        per = max(per, (time.process_time() - began) / runs)
        cuts, parts, elems = _structure(gens, deps, runs)
        cells = [_cells(cuts, e) for e in elems]
        new = (parts, elems, cells)
        if plan is not None and new == plan:
            break
        plan = new
    else:
        raise ReplayRefused(f"the cuts did not settle in {MAX_STEPS} replays")
    _replays_agree(alg, losses, scope, runs, assign, values)
    laws, checked = [], []
    for group, es, cs, n in zip(parts, elems, cells, counts):
        law: dict = {}
        combos = list(itertools.product(*cs))
        outs = []
        for r, combo in enumerate(combos):
            p = Fraction(1)
            for e, (lo, hi) in zip(es, combo):
                p *= Fraction(hi - lo, _size(e))
            y = tuple(_plain(values[r, j]) for j in group)
            law[y] = law.get(y, Fraction(0)) + p
            outs.append(y)
        if sum(law.values()) != 1:
            raise ReplayRefused("the replayed cells do not cover the draws")   # a tracer bug
        laws.append(law)
        checked.append((group, es, combos, outs))
    law = OutputLaw(parts, tuple(laws), labels, sum(counts), step + 1,
                    plan=tuple(checked),
                    draws_per_run=sum(g._next - g._first for _, g in gens) / max(1, runs))
    return confirmed(alg, losses, scope, law) if confirm else law


def confirmed(alg, losses, scope: str, law: OutputLaw) -> OutputLaw:
    """``law`` confirmed by re-executing the code on its cells
    (``confirm.reexecute``), or ``ReplayRefused``."""
    runs = reexecute(lambda n, chosen, fill: _batch(alg, losses, n, chosen, scope, fill)[0],
                     law.plan, law.labels, per_run(alg), losses.shape[0], law.draws_per_run,
                     _plain)
    return replace(law, confirmed=PER_CELL, reexecuted=runs)


def _chooser(assign: dict, runs: int, run=None, fill=None):
    """The replay generator's choice: per logical draw element (kind, low,
    high, n), the grid indices ``assign[element]`` (one per run), elsewhere
    0, or with ``fill`` indices it draws (``fill(grid size, count)``); for
    the generator of one ``run``, that run's entries."""
    def rest(draw, count):
        return 0 if fill is None else fill(draw.size, count)

    def one(sig, pos, size):
        """One draw of the one ``run``: its grid index."""
        col = assign.get((*sig, pos))
        if col is not None:
            return int(col[run])
        return 0 if fill is None else int(fill(size, 1)[0])

    def choose(draw, shape):
        if run is not None:
            m = int(np.prod(shape, dtype=np.int64))
            idx = np.array([one(draw.sig, draw.start + pos, draw.size) for pos in range(m)],
                           dtype=np.int64)
            return idx.reshape(shape)
        if not shape or shape[0] != runs:
            raise ReplayRefused(f"a draw ({draw.kind}) has no runs axis first")
        m = int(np.prod(shape[1:], dtype=np.int64))
        idx = np.zeros((runs, m), dtype=np.int64)
        for pos in range(m):
            col = assign.get((*draw.sig, draw.start + pos))
            idx[:, pos] = rest(draw, runs) if col is None else col
        return idx.reshape(shape)
    if run is not None:
        choose.one = one
    return choose


def _replays_agree(alg, losses, scope, runs, assign, values) -> None:
    """The last replay twice more, once with its runs in reverse order and
    once as it was: each run's output must come back the same (reversed),
    or it depended on something besides its own draws (its place among the
    runs, a clock, a source of randomness the seal did not reach)."""
    for order, what in ((slice(None, None, -1), "in another run order"),
                        (slice(None), "when replayed again")):
        drawn = {e: col[order].copy() for e, col in assign.items()}
        again = _batch(alg, losses, runs, drawn, scope)[0][order]
        if again.shape != values.shape or not all(
                _plain(x) == _plain(y) for x, y in zip(again.ravel(), values.ravel())):
            raise ReplayRefused(f"the same draws gave other outputs {what}: the code's "
                                f"output depends on more than its own draws")


def _plain(x):
    """An output value as a hashable Python number; NaN (nothing released)
    as None, so that two NaNs are the same output."""
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float):
        return None if math.isnan(x) else x
    return x


def log_ratio(p: Fraction, q: Fraction) -> float:
    """ln(p/q) of two exact probabilities, ∞ where q = 0 < p: computed in
    40-digit decimal arithmetic, so that probabilities far below the
    smallest double (a part of many draws) neither underflow nor lose the
    ratio to rounding."""
    if q == 0:
        return math.inf
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        r = Fraction(p) / Fraction(q)
        return float(decimal.Decimal(r.numerator).ln() - decimal.Decimal(r.denominator).ln())


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
                r = log_ratio(pv, qv)
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


_APPLIES: dict = {}      # id(alg) -> (alg, joint cells of the replay on the midpoint or None)
PROBE_SECONDS = 5.0     # the most the probe of ``replay_cells`` may take


def replay_cells(alg):
    """The joint cells of the replay of ``alg``'s code on its domain's
    midpoint (kept per algorithm object), or None where the replay does
    not follow it: a measure of what each exact output law costs."""
    if not _replayable(alg):
        return None
    kept = _APPLIES.get(id(alg))
    if kept is not None and kept[0] is alg:
        return kept[1]
    try:
        losses = alg.midpoint()
        # a probe of applicability and cost, not a figure: not re-executed
        # (the replay evidence confirms every law it uses); code whose
        # replay would take long is not replayed (its confirmation would
        # re-execute it a thousand times more)
        cells = output_law(alg, losses, replay_scope(alg), confirm=False,
                           seconds=PROBE_SECONDS).cells
    except Exception:       # noqa: BLE001 - refused, or the code failed on the replay
        cells = None
    _APPLIES[id(alg)] = (alg, cells)
    return cells
