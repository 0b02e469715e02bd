"""Neighbouring pairs and events for mechanisms over a stream of query
answers (the DP testers' benchmark suite: ``algorithms.dp_testers``).

* ``patterns``: the standard input pairs of the testers' suite (StatDP's
  patterns, as DP-Sniper uses them), on the answers flattened round by
  round, every answer at 1 on ℓ and moved by Δ (the claim's bound) on ℓ′:
  one above, one below, and for the ``bounded-all`` relation also one
  above and the rest below, one below and the rest above, half up and
  half down, all above, all below, and the crossed pair (the first half at
  1 and the rest at 0 on ℓ, the other way round on ℓ′).  Values are clipped
  to the input domain, as the suite does; a pair that clipping makes
  identical, or that the relation does not allow (under ``one-round`` only
  the single-entry patterns), is left out.  Both directions of every pair
  are tested by the engine, so the swapped pairs need no scenario of their own.
* ``stream_search``: the neighbour search for the ``bounded-all`` relation
  (``attacks.search`` changes one round): sign vectors d ∈ {−Δ, 0, Δ}^n on
  base points of the domain, the patterns' own and random ones, ranked on
  pilot runs of their own streams by successive halving, the best audited
  black-box with a learned witness; one answer over a small integer domain
  (``enumerable``) has every neighbouring pair tried instead.
* the event family of a stream pair (``stream_events``): each round's answer
  code, pairs of rounds, whole code sequences frequent in a pilot (and,
  for codes made of parts, ``Learner.code_parts``, each part's sequence),
  thresholds on each round's numeric answers and on their sum, corners
  (``PointCorner``: the most telling coordinates all leaning one way),
  counts (``PointCount``: at least k of them leaning one way), and
  code-and-value events (a frequent code prefix together with a threshold
  on the number released with its last code, ``attacks.values``), the
  thresholds and sequences fixed from pilot runs on streams no audit run
  uses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


import numpy as np

from algorithms.core import Algorithm
from algorithms.simulate import simulate
from .base import Attack, Scenario
from .search import NeighbourSearch, pilot_rng, pilot_score, pilot_share
from .events import (ActionAt, CoordinateAbove, CoordinateBelow, JointActionAt, Union,
                     joint_pairs, quantile_thresholds, unique_rows)
from .floats import grid_families, reads_doubles, reads_grids
from .values import code_value_family

# Pilot streams of the stream events: SeedSequence([EVENTS_STREAM, key, side]);
# three words like the search's pilot, a different first word.
EVENTS_STREAM = 0x57EA
PILOT_RUNS = 4000
# One answer (``enumerable``) is cheap to simulate, and the corner events'
# coordinates are ranked by the pilot: RAPPOR's bits each move ε/20, which
# 4000 runs a side rank with a standard error of half that.
ENUMERATED_PILOT = 32000
MAX_SEQUENCES = 48
MAX_COORDS = 5
MAX_CORNER = 24             # coordinates of a round's corner events at most
COUNT_SIZES = (4, 8, 12, 16)  # the sign tests' numbers of coordinates (and all of them)
CODE_VALUE_ROUNDS = 32      # rounds whose numbers get code-and-value events


def relation_of(alg: Algorithm) -> tuple[str, float]:
    """(relation, Δ) of the algorithm's claim: Δ is the claim's bound, else
    the width of the loss range (one-round: anywhere in the class)."""
    claim = alg.claim
    relation = claim.relation if claim is not None else "one-round"
    lo, hi = alg.loss_range
    step = claim.max_change if claim is not None and claim.max_change is not None else hi - lo
    return relation, float(step)


PATTERNS = ("one-above", "one-below", "one-above-rest-below", "one-below-rest-above",
            "half-half", "all-above", "all-below", "crossed")
SINGLE_ENTRY = PATTERNS[:2]


def pattern_pair(name: str, n: int, step: float) -> tuple[np.ndarray, np.ndarray]:
    """The suite's pattern ``name`` on n answers: (ℓ, ℓ′) before clipping
    (the base value is 1, each moved answer moves by ``step``)."""
    a = np.ones(n)
    b = np.ones(n)
    h = n // 2
    if name == "one-above":
        b[0] = 1 - step
    elif name == "one-below":
        b[0] = 1 + step
    elif name == "one-above-rest-below":
        b[:] = 1 - step
        b[0] = 1 + step
    elif name == "one-below-rest-above":
        b[:] = 1 + step
        b[0] = 1 - step
    elif name == "half-half":
        b[:h], b[h:] = 1 + step, 1 - step
    elif name == "all-above":
        b[:] = 1 + step
    elif name == "all-below":
        b[:] = 1 - step
    elif name == "crossed":
        a[:h], a[h:] = 1, 1 - step
        b[:h], b[h:] = 1 - step, 1
    else:
        raise ValueError(f"unknown pattern {name!r}; choose from: {', '.join(PATTERNS)}")
    return a, b


def stream_shape(alg: Algorithm) -> tuple[int, int]:
    return alg.horizon, alg.n_arms


def pattern_pairs(alg: Algorithm) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, ℓ, ℓ′) for every pattern the claim's relation allows, on the
    (T, K) answers of ``alg``, clipped to its input domain; duplicates and
    pairs that clipping made identical are dropped."""
    relation, step = relation_of(alg)
    T, K = stream_shape(alg)
    lo, hi = alg.loss_range
    names = PATTERNS if relation == "bounded-all" else SINGLE_ENTRY
    out, seen = [], set()
    for name in names:
        a, b = pattern_pair(name, T * K, step)
        a = np.clip(a, lo, hi).reshape(T, K)
        b = np.clip(b, lo, hi).reshape(T, K)
        key = (a.tobytes(), b.tobytes())
        if np.array_equal(a, b) or key in seen or (b.tobytes(), a.tobytes()) in seen:
            continue
        if alg.claim is not None and alg.claim.not_neighbours(a, b) is not None:
            continue
        seen.add(key)
        out.append((name, a, b))
    return out


# ----------------------------------------------------------------- events
@dataclass(frozen=True)
class SequenceIs:
    """{(I_1, …, I_n) = s} for each listed whole code sequence s (chosen
    from a pilot, so fixed before the audit's runs)."""

    sequences: tuple        # tuples of codes, one per round
    n_codes: int
    point_rounds = ()

    @property
    def labels(self) -> list[str]:
        # 1-based, like every event's codes (``I_t = 2`` is code 2, arm 2)
        return ["I = (" + ",".join(str(c + 1) for c in s) + ")" for s in self.sequences]

    @property
    def blocks(self) -> list:
        """Distinct whole sequences exclude one another (``audit.engine.unions``)."""
        return [(0, len(self.sequences))]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        keys = _encode(actions, self.n_codes)
        wanted = _encode(np.asarray(self.sequences, dtype=np.int64), self.n_codes)
        return (keys[:, None] == wanted[None, :]).sum(axis=0)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        keys = _encode(actions, self.n_codes)
        wanted = _encode(np.asarray(self.sequences, dtype=np.int64), self.n_codes)
        return keys[:, None] == wanted[None, :]


@dataclass(frozen=True)
class PartSequenceIs(SequenceIs):
    """{(J_1, …, J_n) = s} for each listed sequence s of one *part* of the
    codes: a learner whose round code is made of several codes
    (``Learner.code_parts``, e.g. two mechanisms' answers side by side)
    gets events on each part's whole sequence on its own, where the joint
    sequences are too many for any to be frequent.  J_t is digit ``part`` of
    I_t in the mixed radix ``sizes`` (most significant first)."""

    part: int = 0
    sizes: tuple = ()

    @property
    def labels(self) -> list[str]:
        head = f"part {self.part + 1} of {len(self.sizes)} of each code: J = ("
        return [head + ",".join(str(c + 1) for c in s) + ")" for s in self.sequences]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        return super().count(code_part(actions, self.sizes, self.part), points)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        return super().indicators(code_part(actions, self.sizes, self.part), points)


def code_part(codes: np.ndarray, sizes: tuple, part: int) -> np.ndarray:
    """Digit ``part`` of every code in the mixed radix ``sizes`` (the first
    part most significant, as ``Learner.code_parts`` declares)."""
    stride = int(np.prod(sizes[part + 1:], dtype=np.int64))
    return (np.asarray(codes, dtype=np.int64) // stride) % int(sizes[part])


def _encode(codes: np.ndarray, base: int) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    weights = base ** np.arange(codes.shape[1], dtype=np.int64)[::-1]
    return codes @ weights


@dataclass(frozen=True)
class PointSumAbove:
    """{Σ_i x_t[i] > c} for each listed round t and threshold c: the sum of a
    round's numeric answers (the sufficient statistic of parallel Laplace
    releases of one value)."""

    rounds: tuple
    thresholds: tuple       # one tuple per round
    symbol = ">"

    @staticmethod
    def test(x, c):
        return x > c

    @property
    def point_rounds(self) -> tuple:
        return tuple(self.rounds)

    @property
    def labels(self) -> list[str]:
        return [f"sum x_{t + 1} {self.symbol} {c:.4g}" for t, cs in zip(self.rounds, self.thresholds)
                for c in cs]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = []
        for t, cs in zip(self.rounds, self.thresholds):
            s = points[t].sum(axis=1)
            out.append(self.test(s[:, None], np.asarray(cs)[None, :]).sum(axis=0))
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = [self.test(points[t].sum(axis=1)[:, None], np.asarray(cs)[None, :])
               for t, cs in zip(self.rounds, self.thresholds)]
        return np.hstack(out) if out else np.zeros((len(actions), 0), dtype=bool)


@dataclass(frozen=True)
class PointSumBelow(PointSumAbove):
    symbol = "<="

    @staticmethod
    def test(x, c):
        return x <= c


@dataclass(frozen=True)
class PointCorner:
    """{every one of the first m listed coordinates of x_t on its listed
    side of its threshold}, m = 1, 2, … for each listed round: the corner of
    a round's answers where the coordinates that tell the two sides apart
    most all lean one way.  Many released numbers that each move a little
    (RAPPOR's Bloom bits, a twentieth of ε each) show their product only
    jointly: the bits at their likelier values together have the ratio
    e^ε and a probability of about 2^-bits, where one bit shows a
    twentieth and a sum or a linear score also counts the bits that do not
    move.  Coordinates, thresholds and sides are fixed from the pilot."""

    rounds: tuple
    coords: tuple           # per round: coordinates, the most telling first
    thresholds: tuple       # per round: one threshold per coordinate
    above: tuple            # per round: True for x > c, False for x <= c

    @property
    def point_rounds(self) -> tuple:
        return tuple(self.rounds)

    @property
    def labels(self) -> list[str]:
        out = []
        for t, cs, ths, ups in zip(self.rounds, self.coords, self.thresholds, self.above):
            parts = []
            for i, c, up in zip(cs, ths, ups):
                parts.append(f"x_{t + 1}[{i + 1}] {'>' if up else '<='} {c:.4g}")
                out.append(" and ".join(parts) if len(parts) <= 3 else
                           f"{' and '.join(parts[:2])} and … {len(parts) - 3} more and "
                           f"{parts[-1]}")
        return out

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = []
        for t, cs, ths, ups in zip(self.rounds, self.coords, self.thresholds, self.above):
            x = points[t]
            inside = np.ones(x.shape[0], dtype=bool)
            for i, c, up in zip(cs, ths, ups):
                inside &= (x[:, i] > c) if up else (x[:, i] <= c)
                out.append(int(inside.sum()))
        return np.asarray(out, dtype=np.int64)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = []
        for t, cs, ths, ups in zip(self.rounds, self.coords, self.thresholds, self.above):
            x = points[t]
            inside = np.ones(x.shape[0], dtype=bool)
            for i, c, up in zip(cs, ths, ups):
                inside = inside & ((x[:, i] > c) if up else (x[:, i] <= c))
                out.append(inside)
        return np.stack(out, axis=1) if out else np.zeros((len(actions), 0), dtype=bool)


@dataclass(frozen=True)
class PointCount(PointCorner):
    """{at least k of the first m listed coordinates of x_t on their listed
    sides}, for m in ``COUNT_SIZES`` (and all the listed ones) and
    m/2 < k < m, for each listed round: the sign test of many coordinates
    that each move a little.  Where every coordinate carries a small share
    of ε independently (20 parallel Laplace copies of one answer, a
    two-hundredth of ε each), the corner of all of them is too rare to be
    counted (2^-20) and a sum of the raw numbers reaches the ratio only far
    in its tail; the number of coordinates leaning one way is the
    likelihood ratio's own statistic (each lean multiplies it by the same
    factor) and has most of the ratio with a probability of a few percent.
    Coordinates, thresholds and sides are fixed from the pilot, as the
    corners' are; the sides either lean towards one input of the pair, as the
    pilot measured them (``words`` "on the side favouring ℓ"), or are all
    "above" or all "at or below": many coordinates that each move too little
    for the pilot to tell their direction (a two-hundredth of ε, against a
    pilot's standard error of a few hundredths) are counted all the same
    where they move together, as parallel copies of one answer do."""

    words: str = "on the side favouring ℓ"

    def _sizes(self, n_coords: int) -> list[int]:
        return sorted({m for m in COUNT_SIZES if m < n_coords} | {n_coords})

    @property
    def labels(self) -> list[str]:
        out = []
        for t, cs, ths, ups in zip(self.rounds, self.coords, self.thresholds, self.above):
            first = ", ".join(f"x_{t + 1}[{i + 1}] {'>' if up else '<='} {c:.4g}"
                              for i, c, up in list(zip(cs, ths, ups))[:2])
            for m in self._sizes(len(cs)):
                for k in range(m // 2 + 1, m):
                    out.append(f"at least {k} of {m} coordinates of x_{t + 1} {self.words} "
                               f"({first}{', …' if m > 2 else ''})")
        return out

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        return self.indicators(actions, points).sum(axis=0, dtype=np.int64)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = []
        for t, cs, ths, ups in zip(self.rounds, self.coords, self.thresholds, self.above):
            x = points[t][:, list(cs)]
            ths, ups = np.asarray(ths), np.asarray(ups)
            leaning = np.where(ups[None, :], x > ths[None, :], x <= ths[None, :])
            running = np.cumsum(leaning, axis=1, dtype=np.int64)
            for m in self._sizes(len(cs)):
                out.append(running[:, m - 1][:, None] >= np.arange(m // 2 + 1, m))
        return np.hstack(out) if out else np.zeros((len(actions), 0), dtype=bool)


def point_corners(pts_a, pts_b, rounds) -> list:
    """The two ``PointCorner`` families (leaning to ℓ, leaning to ℓ′) and
    the four ``PointCount`` families (leaning to ℓ, to ℓ′, all above, all
    at or below) of the pilot's points: per round, each coordinate
    thresholded at its pooled mean, ranked by the pilot's |log-ratio| of
    being above it (the coordinates that never vary left out), at most
    ``MAX_CORNER``."""
    fams = ([], [], [], [])      # rounds, coords, thresholds, sides leaning to ℓ
    for t in rounds:
        xa, xb = pts_a[t], pts_b[t]
        pooled = np.concatenate([xa, xb])
        thr = pooled.mean(axis=0)
        varies = pooled.min(axis=0) < pooled.max(axis=0)
        pa = ((xa > thr).sum(axis=0) + 0.5) / (xa.shape[0] + 1.0)
        pb = ((xb > thr).sum(axis=0) + 0.5) / (xb.shape[0] + 1.0)
        up, low = np.log(pa / pb), np.log((1 - pa) / (1 - pb))
        telling = np.maximum(np.abs(up), np.abs(low))
        order = [int(i) for i in np.argsort(-telling, kind="stable") if varies[i]][:MAX_CORNER]
        if len(order) < 2:
            continue
        fams[0].append(t)
        fams[1].append(tuple(order))
        fams[2].append(tuple(float(thr[i]) for i in order))
        fams[3].append(tuple(bool(up[i] > low[i]) for i in order))
    if not fams[0]:
        return []
    rounds, coords, ths, lean = (tuple(f) for f in fams)
    other = tuple(tuple(not u for u in ups) for ups in lean)
    return [PointCorner(rounds, coords, ths, lean), PointCorner(rounds, coords, ths, other),
            PointCount(rounds, coords, ths, lean, "on the side favouring ℓ"),
            PointCount(rounds, coords, ths, other, "on the side favouring ℓ′"),
            PointCount(rounds, coords, ths, tuple(tuple(True for _ in u) for u in lean),
                       "above their thresholds"),
            PointCount(rounds, coords, ths, tuple(tuple(False for _ in u) for u in lean),
                       "at or below their thresholds")]


def part_sequence_families(seqs: np.ndarray, sizes: tuple) -> list:
    """For codes made of parts (``Learner.code_parts``): each part's
    ``MAX_SEQUENCES`` sequences most frequent in the pilot ``seqs`` (none
    for a code of one part)."""
    fams = []
    for j, size in enumerate(sizes if len(sizes) > 1 else ()):
        uniq, counts = unique_rows(code_part(seqs, sizes, j))
        top = uniq[np.argsort(-counts, kind="stable")[:MAX_SEQUENCES]]
        fams.append(PartSequenceIs(tuple(tuple(int(c) for c in s) for s in top), int(size),
                                   part=j, sizes=sizes))
    return fams


def _pilot(alg: Algorithm, a: np.ndarray, b: np.ndarray, key: int, runs: int = PILOT_RUNS):
    T = alg.horizon
    point_rounds = tuple(range(T)) if alg.learner.point is not None else ()
    out = []
    for side, losses in enumerate((a, b)):
        rng = np.random.default_rng(np.random.SeedSequence([EVENTS_STREAM, key, side]))
        out.append(simulate(alg, losses, runs, rng, point_rounds=point_rounds))
    return out


def events_runs(alg: Algorithm, share: float = 1.0, most: Optional[int] = None) -> int:
    """Runs a side of a stream pair's events pilot (``stream_events``)."""
    runs = int(share * (ENUMERATED_PILOT if enumerable(alg) else PILOT_RUNS))
    return max(MIN_RUNG, runs if most is None else min(runs, most))


def stream_events(alg: Algorithm, a: np.ndarray, b: np.ndarray, key: int,
                  share: float = 1.0, most: Optional[int] = None) -> Union:
    """The event family of a stream pair, fixed from a pilot of ``share`` ×
    ``PILOT_RUNS`` runs a side (at most ``most``, at least ``MIN_RUNG``) on
    streams ``SeedSequence([0x57EA, key, side])`` that no audit run uses."""
    T = alg.horizon
    K = alg.learner.n_arms
    traces = _pilot(alg, a, b, key, events_runs(alg, share, most))
    parts = []
    if K > 1:
        rounds = tuple(range(T))
        parts.append(ActionAt(rounds, K))
        pairs = joint_pairs(rounds, K)
        if pairs:
            parts.append(JointActionAt(pairs, K))
        # The simulator's own small integer codes: the same rows and order as
        # int64, at a quarter of the memory (8000 runs × T rounds, T = 1000).
        seqs = np.concatenate([tr.actions for tr in traces])
        uniq, counts = unique_rows(seqs)
        top = uniq[np.argsort(-counts, kind="stable")[:MAX_SEQUENCES]]
        parts.append(SequenceIs(tuple(tuple(int(c) for c in s) for s in top), K))
        parts += part_sequence_families(seqs, tuple(alg.learner.code_parts))
    if alg.learner.point is not None:
        pts = [tr.points for tr in traces]
        d = pts[0][0].shape[1]
        coords = tuple(range(d)) if d <= MAX_COORDS else (0, d - 1)
        above, below, sums_up, sums_low = [], [], [], []
        for t in range(T):
            for i in coords:
                up, low = quantile_thresholds(np.concatenate([p[t][:, i] for p in pts]))
                above.append(up)
                below.append(low)
            if d > 1:
                up, low = quantile_thresholds(np.concatenate([p[t].sum(axis=1) for p in pts]))
                sums_up.append(up)
                sums_low.append(low)
        rounds = tuple(range(T))
        parts += [CoordinateAbove(rounds, coords, tuple(above)),
                  CoordinateBelow(rounds, coords, tuple(below))]
        if reads_grids(alg):        # which doubles, and which grids, each input reaches
            numbers = [(t, i) for t in rounds for i in coords]
            parts += grid_families(numbers, pts, reads_doubles(alg))
        if d > 1:
            parts += [PointSumAbove(rounds, tuple(sums_up)), PointSumBelow(rounds, tuple(sums_low))]
            parts += point_corners(pts[0], pts[1], rounds)
        if K > 1:
            # A number released with a code: the code prefix up to its round
            # together with a threshold on it, in the tails of the runs that
            # showed that prefix.
            parts += code_value_family([tr.actions for tr in traces], pts,
                                       range(min(T, CODE_VALUE_ROUNDS)), K)
    if not parts:
        raise ValueError(f"{alg.name} releases one code and no numbers: no event can tell "
                         f"the two sides apart")
    return Union(tuple(parts))


def is_stream(alg: Algorithm) -> bool:
    return alg.learner.reads_first


def _need_stream(alg: Algorithm, attack: str) -> None:
    if not is_stream(alg):
        raise ValueError(f"attack {attack} applies to mechanisms over a stream of answers "
                         f"(feedback 'stream'); {alg.name} is a learner")


class Patterns(Attack):
    name = "patterns"
    summary = ("the DP testers' standard input pairs (one above, one below, and under "
               "bounded-all: one above rest below, one below rest above, half/half, all above, "
               "all below, crossed), moved by the claim's Δ, with a learned witness")
    needs = ("a mechanism over a stream of answers (feedback 'stream') with at least one "
             "pattern pair that is neighbouring under its claim's relation and bound Δ")

    def applies(self, alg) -> None:
        """``ValueError`` where ``scenarios`` would raise, without its pilots."""
        self._pairs(alg)

    def _pairs(self, alg):
        _need_stream(alg, self.name)
        pairs = pattern_pairs(alg)
        if not pairs:
            raise ValueError(f"attack patterns: no pattern pair of {alg.name} is neighbouring "
                             f"under {alg.claim.relation_words if alg.claim else 'its relation'}")
        return pairs

    def scenarios(self, alg, events: bool = True, trials: int | None = None):
        """The pattern pairs; ``events=False`` leaves out their event
        families (whose pilots take seconds), for listings; ``trials``, the
        audit's runs a side, sizes their pilots (``pilot_share``)."""
        out = []
        share = pilot_share(alg, trials)
        for k, (name, a, b) in enumerate(self._pairs(alg)):
            fam = stream_events(alg, a, b, k + 1, share) if events else None
            out.append(Scenario(f"patterns:{name}", alg, a, b, fam,
                                alg.horizon, learned=True,
                                notes=[f"the testers' pattern '{name}' on the {a.size} answers "
                                       f"(base 1, moved by Δ, clipped to the domain)"]))
        return out


# ----------------------------------------------------------- stream search
SEARCH_BASES = 3            # random base points besides the patterns' own
MAX_ENUMERATED = 64         # a one-answer integer domain this small is searched whole
SEARCH_SIGNS = 12           # random sign vectors
SEARCH_RUNS = (500, 2000, 8000)   # successive-halving rungs (runs per side)
# Every pair of a one-answer domain (``enumerable``), ranked up to 128 000
# runs a side: a joint event of many coordinates that each move a little
# (RAPPOR's corner of 8 Bloom bits, probability ~1/256) competes with one of
# fewer only once it is counted hundreds of times; one answer is cheap.
ENUMERATED_RUNS = (2000, 16000, 128000)
MIN_RUNG = 100              # the fewest pilot runs a side, however small the share
SEARCH_FINALISTS = 2
# Run-rounds of a full-size stream search's pilot for code run as written
# (one call a run and round): cut to the pilot's share, about the seconds
# the budget gives it (audit.engine.budget: 0.3 of the time) — at T = 16 and
# a share of 1/4, 47 000 runs, some twenty of the candidates; at T = 1 000
# and 1/8, one candidate on 100 runs a side.
STREAM_PILOT_ROUNDS = 3_000_000


def search_candidates(alg: Algorithm) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The stream search's candidate pairs, in a fixed order: the patterns'
    own, then random sign vectors d ∈ {−Δ, 0, Δ}^n at the patterns' base and
    at random base points of the domain (fixed data, not a simulation
    stream), every pair clipped to the domain and checked against the
    relation."""
    relation, step = relation_of(alg)
    T, K = stream_shape(alg)
    n = T * K
    lo, hi = alg.loss_range
    rng = np.random.default_rng([EVENTS_STREAM, 0, 0, 0xC5])
    integer = alg.check_losses is not None
    out = [(f"pattern-{name}", a, b) for name, a, b in pattern_pairs(alg)]
    if enumerable(alg):
        # One answer over a small integer domain: every neighbouring pair,
        # not a sample of them (RAPPOR's neighbours differ in 2 to 8 of its
        # Bloom bits, and which ones is a matter of hashing, not of distance).
        return out + enumerated_pairs(alg, out, lo, hi, step)
    bases = [np.ones(n)]
    for _ in range(SEARCH_BASES):
        x = rng.uniform(lo + step, hi - step, n) if hi - lo > 2 * step else rng.uniform(lo, hi, n)
        bases.append(np.round(x) if integer else x)
    signs = [rng.choice([-1.0, 0.0, 1.0], size=n) for _ in range(SEARCH_SIGNS)]
    if relation != "bounded-all":
        signs = [np.eye(n)[int(rng.integers(n))] * rng.choice([-1.0, 1.0])
                 for _ in range(SEARCH_SIGNS)]
    for i, base in enumerate(bases):
        for j, s in enumerate(signs):
            if not s.any():
                continue
            a = np.clip(base, lo, hi)
            b = np.clip(base + step * s, lo, hi)
            a, b = a.reshape(T, K), b.reshape(T, K)
            if not np.array_equal(a, b) and admissible(alg, a, b):
                out.append((f"base-{i}-signs-{j}", a, b))
    return out


def admissible(alg: Algorithm, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the claim's relation accepts (a, b) and, where the mechanism
    checks its inputs (an integer domain), both sides pass the check."""
    if alg.claim and alg.claim.not_neighbours(a, b):
        return False
    if alg.check_losses is not None:
        try:
            alg.check_losses(a)
            alg.check_losses(b)
        except ValueError:
            return False
    return True


def enumerable(alg: Algorithm) -> bool:
    """Whether the stream search tries every neighbouring pair: one answer
    over an integer domain of at most ``MAX_ENUMERATED`` steps."""
    _, step = relation_of(alg)
    T, K = stream_shape(alg)
    lo, hi = alg.loss_range
    return (alg.check_losses is not None and T * K == 1 and step > 0
            and (hi - lo) / step < MAX_ENUMERATED)


def enumerated_pairs(alg: Algorithm, known, lo: float, hi: float, step: float) -> list:
    """Every pair (v, v ± step) of a one-answer mechanism's integer domain
    [lo, hi] that the relation and the domain check accept, labelled
    'from-v-to-w', leaving out those already in ``known``."""
    out = []
    for v in lo + step * np.arange(int(round((hi - lo) / step)) + 1):
        for w in (v - step, v + step):
            if not lo <= w <= hi:
                continue
            a, b = np.array([[float(v)]]), np.array([[float(w)]])
            if admissible(alg, a, b) and not any(
                    np.array_equal(a, x) and np.array_equal(b, y) for _, x, y in known):
                out.append((f"from-{v:g}-to-{w:g}", a, b))
    return out


def stream_search(alg: Algorithm, share: float = 1.0) -> list[Scenario]:
    """Rank ``search_candidates`` by successive halving on pilot runs (the
    score of ``attacks.search.pilot_score`` over each pair's own events) and
    return the best as black-box scenarios with a learned witness.  Every
    pilot runs ``share`` of its full size (``attacks.search.pilot_share``)."""
    rungs = tuple(max(MIN_RUNG, int(share * n))
                  for n in (ENUMERATED_RUNS if enumerable(alg) else SEARCH_RUNS))
    cands = search_candidates(alg)
    if not cands:
        raise ValueError(f"attack search: no neighbouring pair of {alg.name} fits its domain")
    T = alg.horizon
    most, among = None, len(cands)
    afford = affordable_runs(alg, share)
    if afford is not None:
        # Code run as written, its pilot cut to a share: the pilot's runs
        # (events and the first rung, both sides, per candidate) fit
        # ``STREAM_PILOT_ROUNDS`` × share run-rounds, over candidates spread
        # along the list (the patterns' first); with no more than the
        # finalists, no halving.
        most = max(MIN_RUNG, afford // 4)
        per = 2 * (events_runs(alg, share, most) + rungs[0])
        keep = max(1, afford // per)
        if keep < len(cands):
            cands = [cands[int(i)] for i in np.unique(np.linspace(0, len(cands) - 1, keep)
                                                      .round().astype(int))]
        if len(cands) <= SEARCH_FINALISTS:
            rungs = ()
    point_rounds = tuple(range(T)) if alg.learner.point is not None else ()
    fams = {}
    alive = list(range(len(cands)))
    key = 0x5000
    scores = {}
    for rung, runs in enumerate(rungs):
        scores = {}
        for i in alive:
            name, a, b = cands[i]
            if i not in fams:
                fams[i] = stream_events(alg, a, b, 0x100 + i, share, most)
            counts = []
            key += 1
            for side, losses in enumerate((a, b)):
                tr = simulate(alg, losses, runs, pilot_rng(key, side), point_rounds=point_rounds)
                counts.append(fams[i].count(tr.actions, tr.points))
            scores[i] = pilot_score(counts[0], counts[1], runs)
        ranked = sorted(alive, key=lambda i: (-scores[i][0], -scores[i][1], i))
        keep = SEARCH_FINALISTS if rung == len(rungs) - 1 else max(
            SEARCH_FINALISTS, len(ranked) // 3)
        alive = ranked[:keep]
    out = []
    for rank, i in enumerate(alive, 1):
        name, a, b = cands[i]
        if i not in fams:
            fams[i] = stream_events(alg, a, b, 0x100 + i, share, most)
        how = (f"pilot score {scores[i][0]:.3g} on {rungs[-1]} runs per side, streams "
               f"SeedSequence([0x5EA2C4, key, side]) disjoint from the audit's" if rungs else
               f"{len(cands)} of {among} candidates, spread over the list, fit the pilot's "
               f"share of its run-rounds: no ranking")
        out.append(Scenario(f"search:{name}", alg, a, b, fams[i], T, learned=True, notes=[
            f"stream search finalist {rank} of {len(alive)} among {len(cands)} candidate "
            f"pairs ({how})"]))
    return out


def affordable_runs(alg: Algorithm, share: float) -> Optional[int]:
    """Runs (both sides, all candidates) the stream search's pilot may make
    for code run as written whose pilot is cut to ``share`` < 1: a number
    of run-rounds, so a function of the share and the horizon only (the
    command reproducing the audit gives the share); None otherwise."""
    if share >= 1.0 or not (alg.extra or {}).get("per_run_calls"):
        return None
    return max(1, int(share * STREAM_PILOT_ROUNDS / max(1, alg.horizon)))


class Search(NeighbourSearch):
    """The registered ``search``: ``attacks.search``'s neighbour search for
    learners, ``stream_search`` for mechanisms over a stream of answers."""

    def applies(self, alg: Algorithm) -> None:
        if not is_stream(alg):
            return super().applies(alg)
        if not search_candidates(alg):
            raise ValueError(f"attack search: no neighbouring pair of {alg.name} fits its "
                             f"domain")

    def interface_input(self, alg: Algorithm):
        if not is_stream(alg):
            return super().interface_input(alg)
        return search_candidates(alg)[0][1], None

    def scenarios(self, alg: Algorithm, progress=None,
                  trials: int | None = None, pmap=None) -> list[Scenario]:
        if is_stream(alg):
            return stream_search(alg, pilot_share(alg, trials))
        return super().scenarios(alg, progress, trials, pmap)


FAMILY_ATTACKS = (Patterns(),)
