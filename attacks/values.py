"""Events on the numbers an algorithm outputs: the values it releases
besides its actions (a claim of scope "transcript"), and the numbers a
mechanism releases together with its codes.

A privacy claim covers every part of its output, so every part is
evidence.  Single-action events cannot see a defect that lives in the
released values — noise shared by two releases (their difference is then
noise-free data), a noise law whose tails break a pure-ε claim — nor one
that shows only in a number read together with the code released before it
(a sparse vector releasing the noisy answer where the gap was meant).  The
families here read them:

* per-release tails, {r_t[i] > c} and {r_t[i] ≤ c}, from the changed round
  on (earlier releases have one law on both sides);
* differences and sums of two releases, {r_s[i] − r_t[j] > c} (and ≤, and
  the sum), over pairs among the releases around the change (one of them
  at or after it, the other possibly before: noise shared across rounds
  shows in that difference);
* releases joint with actions, {I_s = a and r_t[i] > c};
* a code prefix with a threshold on the number released with it,
  {(I_1, …, I_t) = p and x_t[i] > c};
* the floating-point grain of each release from the change on
  (``attacks.floats``: which doubles an input can reach).

Every threshold comes from pilot runs on streams no audit run uses (the
caller's: the neighbour search's pilot, the black-box evidence's own pilot
stage), placed across the pooled sample and far into both tails, so the
events are fixed before the audit's runs and selection among them keeps the
bounds valid.

Observations are one dict per chunk (``algorithms.simulate.Trace.observed``):
points under their round t, released values under ``("r", t)``.

May import: numpy, ``algorithms``, ``attacks.events`` and ``attacks.floats``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional, Sequence

import numpy as np

from algorithms.simulate import released_key, simulate
from .events import column, is_release as _is_release, item_name, unique_rows
from .floats import grid_families

# How far the release families look, and how many statistics they hold.
BEFORE = 2              # releases before the changed round paired with later ones
AFTER = 16              # releases from the changed round on
MAX_COORDS = 4          # coordinates of a release (the first ones and the last)
MAX_TAIL_ITEMS = 24     # releases with tail events of their own
PAIR_ITEMS = 8          # releases whose pairs get difference and sum events
MAX_PAIRS = 28
JOINT_ITEMS = 3         # releases joint with actions ...
JOINT_ROUNDS = 3        # ... at the first rounds from the change
MAX_ARMS = 4
MAX_PREFIXES = 4        # frequent code prefixes per round (code-and-value events)
MIN_CONDITIONED = 20    # pilot values a conditional threshold needs
N_THRESHOLDS = 15
# Quantile levels of the tails, down to the pilot's extremes.
TAIL_LEVELS = (0.0005, 0.002, 0.005, 0.01, 0.03)


@dataclass(frozen=True)
class Stat:
    """A number per run: Σ sign_k · obs[key_k][:, coord_k] (NaN where a
    term was not observed), counted only where the actions meet
    ``condition`` (pairs (round, code): I_round = code for each)."""

    terms: tuple            # ((key, coord, sign), ...)
    condition: tuple = ()   # ((round, code), ...), 0-based
    codes: bool = False     # the condition is a code prefix (labelled with the codes)

    def value(self, obs: dict, runs: int) -> np.ndarray:
        out = np.zeros(runs)
        for key, coord, sign in self.terms:
            out = out + sign * column(obs, key, coord, runs)
        return out

    def mask(self, actions) -> Optional[np.ndarray]:
        """Where the condition holds: ``actions`` is ``(runs, rounds)`` or
        a dict {round: (runs,)} holding at least the condition's rounds."""
        if not self.condition:
            return None
        out = None
        for r, c in self.condition:
            col = actions[r] if isinstance(actions, dict) else actions[:, r]
            hit = np.asarray(col) == c
            out = hit if out is None else out & hit
        return out

    @cached_property        # read for every count of every audit: built once
    def label(self) -> str:
        text = ""
        for k, (key, coord, sign) in enumerate(self.terms):
            name = item_name(key, coord)
            text += (name if k == 0 and sign > 0 else
                     f"−{name}" if k == 0 else f" {'+' if sign > 0 else '−'} {name}")
        if not self.condition:
            return text
        rounds = [r for r, _ in self.condition]
        if self.codes:
            span = f"I_1..{len(rounds)}" if len(rounds) > 1 else "I_1"
            cond = f"{span} = (" + ",".join(str(c) for _, c in self.condition) + ")"
        else:
            cond = " and ".join(f"I_{r + 1} = {c + 1}" for r, c in self.condition)
        return f"{cond} and {text}"


@dataclass(frozen=True)
class ValueEvents:
    """{stat > c} (or {stat ≤ c} with ``below``) for each statistic and
    each of its thresholds, fixed before the audit's runs."""

    stats: tuple            # Stat, ...
    thresholds: tuple       # one tuple of thresholds per statistic
    below: bool = False

    @property
    def point_rounds(self) -> tuple:
        return tuple(sorted({k for s in self.stats for k, _, _ in s.terms
                             if not _is_release(k)}))

    @property
    def release_rounds(self) -> tuple:
        return tuple(sorted({k[1] for s in self.stats for k, _, _ in s.terms
                             if _is_release(k)}))

    @cached_property
    def labels(self) -> list[str]:
        op = "<=" if self.below else ">"
        return [f"{s.label} {op} {c:.4g}" for s, cs in zip(self.stats, self.thresholds)
                for c in cs]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        runs = actions.shape[0]
        out = []
        for s, cs in zip(self.stats, self.thresholds):
            v = s.value(points, runs)
            m = s.mask(actions)
            if m is not None:
                v = v[m]
            v = np.sort(v[np.isfinite(v)])          # nothing observed: in no event
            at_most = np.searchsorted(v, np.asarray(cs, dtype=float), side="right")
            out.append(at_most if self.below else v.size - at_most)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        runs = actions.shape[0]
        out = []
        for s, cs in zip(self.stats, self.thresholds):
            v = s.value(points, runs)
            seen = np.isfinite(v)                   # nothing observed: in no event
            m = s.mask(actions)
            if m is not None:
                seen &= m
            c = np.asarray(cs, dtype=float)[None, :]
            out.append(seen[:, None] & ((v[:, None] <= c) if self.below else (v[:, None] > c)))
        return np.hstack(out) if out else np.zeros((runs, 0), dtype=bool)


def tail_thresholds(values: np.ndarray, n: int = N_THRESHOLDS) -> tuple[tuple, tuple]:
    """(upper, lower) thresholds from pooled pilot values (NaN ignored): a
    central grid of ``n`` quantiles and both tails down to the extremes.
    ``upper`` is for {v > c}, ``lower`` for {v ≤ c}; empty when fewer than
    two distinct values were seen (no threshold separates anything)."""
    v = np.asarray(values, dtype=float)
    v = np.sort(v[np.isfinite(v)])
    if v.size == 0 or v[0] == v[-1]:
        return (), ()

    def at(levels):     # order statistics at these levels (no interpolation)
        return v[np.clip(np.floor(np.asarray(levels) * (v.size - 1)).astype(int), 0,
                         v.size - 1)]
    central = at(np.linspace(0.02, 0.98, n))
    tails = np.asarray(TAIL_LEVELS)
    upper = np.concatenate([central, at(1 - tails), [v[-1]]])
    lower = np.concatenate([central, at(tails), [v[0]]])
    # A threshold at the maximum can only be exceeded on the other side.
    return (tuple(float(c) for c in np.unique(upper)),
            tuple(float(c) for c in np.unique(lower)))


def _family(stats: list, pooled: list) -> list:
    """Above and below families of the statistics whose pilot values give
    thresholds."""
    up, low, s_up, s_low = [], [], [], []
    for s, v in zip(stats, pooled):
        u, lo = tail_thresholds(v)
        if u:
            s_up.append(s)
            up.append(u)
        if lo:
            s_low.append(s)
            low.append(lo)
    out = []
    if s_up:
        out.append(ValueEvents(tuple(s_up), tuple(up)))
    if s_low:
        out.append(ValueEvents(tuple(s_low), tuple(low), below=True))
    return out


def release_window(change: int, rounds: int) -> tuple:
    """The rounds whose releases the families read: ``BEFORE`` before the
    changed round and ``AFTER`` from it on, within the prefix."""
    return tuple(range(max(0, change - BEFORE), min(rounds, change + AFTER)))


# Runs of the probe that finds the rounds at which a learner releases, and
# its streams: four entropy words and no spawn key, so no audit chunk (five
# or more words) and no search pilot (three words) ever draws from them.
PROBE_RUNS = 16
PROBE_STREAM = 0x7E1EA5E


def releasing_rounds(alg, losses, advice, rounds: int, change: int) -> tuple:
    """The rounds whose releases the families read, for a learner that may
    release only at some rounds (a batched conversion releases once a
    batch): the last ``BEFORE`` rounds before the change and the first
    ``AFTER`` from it on at which a probe of ``PROBE_RUNS`` runs saw a
    release (``release_window`` where it releases every round).  The probe
    only chooses what to watch; it draws from streams of its own."""
    rng = np.random.default_rng(np.random.SeedSequence([PROBE_STREAM, 0, change, rounds]))
    tr = simulate(alg, losses, PROBE_RUNS, rng, advice=advice, rounds=rounds,
                  release_rounds=range(rounds))
    seen = [t for t, x in sorted((tr.released or {}).items()) if np.isfinite(x).any()]
    before = [t for t in seen if t < change][-BEFORE:]
    after = [t for t in seen if t >= change][:AFTER]
    return tuple(before + after)


def _coords(d: int) -> tuple:
    return tuple(dict.fromkeys([i for i in range(min(d, MAX_COORDS - 1))] + [d - 1]))


def release_items(change: int, released: Sequence[dict]) -> list:
    """The (round, coordinate) releases seen in the pilot (finite somewhere
    on some side), in round order."""
    rounds = sorted({t for obs in released for t in obs})
    out = []
    for t in rounds:
        d = max(np.asarray(obs[t]).reshape(len(obs[t]), -1).shape[1] for obs in released
                if t in obs)
        for i in _coords(d):
            if any(t in obs and np.isfinite(column({0: obs[t]}, 0, i, len(obs[t]))).any()
                   for obs in released):
                out.append((t, i))
    return out


def hinted_pairs(change: int, hints: Sequence) -> list:
    """A declaration check's measured defect — two releases
    ((t, i), (s, j)) whose noises are one draw or perfectly correlated —
    moved to a pair changed at round ``change``: the releases the same lag
    s − t apart on either side of the change (and the pair itself)."""
    out = []
    for (t, i), (s, j) in hints:
        t, s = int(t), int(s)
        lag = s - t
        out += [((change - lag, i), (change, j)), ((change, i), (change + lag, j)),
                ((t, i), (s, j))]
    return [p for p in dict.fromkeys(out) if min(p[0][0], p[1][0]) >= 0 and p[0] != p[1]]


def hinted_rounds(change: int, hints: Sequence) -> tuple:
    """The rounds ``hinted_pairs`` reads."""
    return tuple(sorted({r for p in hinted_pairs(change, hints) for r, _ in p}))


def release_pairs(change: int, items: list, hints: Sequence = ()) -> list:
    """Pairs of releases for difference and sum events: the hinted ones
    (a declaration check's measured defect, ``hinted_pairs``) first, then
    pairs among the first ``PAIR_ITEMS`` releases from ``BEFORE`` rounds
    before the change, at least one of them at or after it, nearer pairs
    first."""
    near = [x for x in items if x[0] >= change - BEFORE][:PAIR_ITEMS]
    pairs = [(a, b) for k, a in enumerate(near) for b in near[k + 1:]
             if max(a[0], b[0]) >= change]
    pairs.sort(key=lambda p: (abs(p[1][0] - p[0][0]), p))
    wanted = [p for p in hinted_pairs(change, hints) if all(x in items for x in p)]
    return list(dict.fromkeys(wanted + pairs))[:MAX_PAIRS + len(wanted)]


def release_family(change: int, released: Sequence[dict], actions: Sequence = (),
                   n_arms: int = 2, hints: Sequence = (), floats: bool = False,
                   grids: bool = False) -> list:
    """The release events of a pair changed at round ``change`` (0-based),
    from pilot runs: ``released`` holds per side {round: (runs, d)}
    (released values, NaN where none), ``actions`` per side the pilot's
    actions ``(runs, rounds)`` (for the joint events; may be empty).
    ``hints`` are pairs of releases ((t, i), (s, j)) a declaration check
    measured a defect on.  With ``floats`` (code audited as written,
    ``attacks.floats.reads_doubles``) also the releases' floating-point
    grain; with ``grids`` alone, only its grids of the real values.
    Returns families for ``attacks.events.Union``."""
    items = release_items(change, released)
    if not items:
        return []

    def pooled(terms, condition=()):
        out = []
        for side, obs in enumerate(released):
            runs = len(next(iter(obs.values())))
            s = Stat(terms, condition)
            v = s.value({released_key(t): x for t, x in obs.items()}, runs)
            if condition and actions:
                v = v[s.mask(actions[side])]
            out.append(v)
        return np.concatenate(out)

    stats = []
    after = [x for x in items if x[0] >= change][:MAX_TAIL_ITEMS]
    for t, i in after:
        stats.append(Stat(((released_key(t), i, 1),)))
    for (t, i), (s, j) in release_pairs(change, items, hints):
        for sign in (-1, 1):
            stats.append(Stat(((released_key(s), j, 1), (released_key(t), i, sign))))
    if actions and n_arms <= MAX_ARMS:
        have = set.intersection(*(set(a) if isinstance(a, dict) else set(range(a.shape[1]))
                                  for a in actions))
        for t, i in after[:JOINT_ITEMS]:
            for r in [r for r in range(change, change + JOINT_ROUNDS) if r in have]:
                for a in range(n_arms):
                    stats.append(Stat(((released_key(t), i, 1),), ((r, a),)))
    values = [pooled(s.terms, s.condition) for s in stats]
    numbers = [(released_key(t), i) for t, i in after]
    keyed = [{released_key(t): x for t, x in obs.items()} for obs in released]
    grain = grid_families(numbers, keyed, floats) if floats or grids else []
    return _family(stats, values) + grain


def code_value_family(actions: Sequence[np.ndarray], points: Sequence[dict],
                      rounds: Sequence[int], n_codes: int) -> list:
    """Code-and-value events of a mechanism releasing numbers with codes:
    for each round t with numbers, the ``MAX_PREFIXES`` most frequent code
    prefixes (I_1, …, I_t) of the pilot (both sides pooled), each with
    thresholds on the numbers x_t[i] (and their sum) released with it,
    placed across the runs that showed that prefix and in their tails."""
    stats, values = [], []
    acts = [np.asarray(a) for a in actions]
    for t in rounds:
        if any(t not in p for p in points):
            continue
        d = np.asarray(points[0][t]).reshape(len(points[0][t]), -1).shape[1]
        coords = _coords(d)
        seqs = np.concatenate([a[:, :t + 1] for a in acts])
        uniq, counts = unique_rows(seqs)
        kept = 0
        # The most frequent prefixes with which the number varies (after an
        # abort, or with a code that releases nothing, it is constant).
        for prefix in uniq[np.argsort(-counts, kind="stable")]:
            if kept == MAX_PREFIXES:
                break
            cond = tuple((r, int(c)) for r, c in enumerate(prefix))
            terms_list = [((t, i, 1),) for i in coords]
            if d > 1:
                terms_list.append(tuple((t, i, 1) for i in range(d)))
            found = False
            for terms in terms_list:
                s = Stat(terms, cond, codes=True)
                pooled = []
                for a, p in zip(acts, points):
                    v = s.value(p, a.shape[0])
                    pooled.append(v[s.mask(a)])
                v = np.concatenate(pooled)
                v = v[np.isfinite(v)]
                if v.size < MIN_CONDITIONED:
                    break                       # rarer prefixes follow: none will do
                if v.min() == v.max():
                    continue
                stats.append(s)
                values.append(v)
                found = True
            else:
                kept += found
                continue
            break
    return _family(stats, values)
