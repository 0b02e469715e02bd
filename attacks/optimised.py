"""``optimised``: the input pair of a mechanism over a stream of answers
that maximises its exact pair ε, found by a standard optimiser.

The pair's exact ε (the certified lower end of the largest privacy loss
over all its outputs) needs the mechanism's declared model, or code that
the exact replay follows (``algorithms.replay``: uniform draws it only
compares), and the exact evaluation lives in the audit engine, which
attacks never import: the
engine hands the objective in (``scenarios(alg, objective=...)``, a
function of (ℓ, ℓ′) → ε), as it hands the neighbour search a progress
callback.  Without one the attack does not apply.

Search.  Every pattern pair of the claim's relation (``attacks.testers``)
is scored, and for one answer over a small integer domain every
neighbouring pair (``testers.enumerated_pairs``: the relation's own
maximum is then among them); under a one-round relation the best
``STARTS`` are scored again with their change moved to every other round
(``moved_rounds``: the rounds swapped on both sides; named ``one-above@9``),
with up to half the budget; from each of the best ``STARTS`` of them all the objective is
maximised over (ℓ, d), d the move in units of Δ: first a coordinate search
over the corners (each value at an end of the domain or Δ inside it, each
move ±Δ; sweeps until none improves — these mechanisms' worst pairs sit
there), then ``scipy.optimize.minimize`` (Powell, box bounds) from the
best corner, whose result is kept only where it gains more than the
objective's resolution (``RESOLUTION``).  ``BUDGET`` objective evaluations
in all; the best pair evaluated anywhere is kept.  No randomness: the same
pair every run, so ``--attack optimised`` reproduces it.

The relation.  A candidate (u, d) is projected into it before anything
else: ℓ = clip(u, lo, hi), ℓ′ = clip(ℓ + Δ·clip(d, −1, 1), lo, hi) (so
every value stays in the domain ``Algorithm.loss_range`` and moves by at
most Δ); under ``one-round`` only the start's changed row may move.  Then
``Claim.not_neighbours`` (and ``Algorithm.check_losses``, when the
mechanism has one) must accept it, or the objective never sees it (it
scores 0); identical sides score 0.  Every candidate is kept in the
search's trace (``last_trace``), so a test can check that none left the
relation.

May import: numpy, scipy and ``algorithms`` (like every attack, nothing
from ``audit``).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from algorithms.as_written.whole import as_the_code_sees
from algorithms.core import Algorithm
from algorithms.noisy_max_model import NoisyMaxModel
from algorithms.replay import replay_applies
from algorithms.sparse_vector_model import SparseVectorModel
from .base import Attack, Scenario
from .testers import (enumerable, enumerated_pairs, is_stream, pattern_pairs, relation_of,
                      stream_events, stream_shape)

STARTS = 2                  # local searches, from the best pattern pairs
BUDGET = 900                # objective evaluations in all
SWEEPS = 4                  # coordinate sweeps over the corners at most, per start
POLISH = 150                # Powell's evaluations at most, per start
RESOLUTION = 1e-5           # a gain below this is the coarse objective's noise
MAX_ANSWERS = 64            # answers (T·K) searched over at most
EVENTS_KEY = 0x0F7          # the pilot key of the optimised pair's events


@dataclass
class Trace:
    """Every candidate pair the search projected, and whether the relation
    (and the domain check) accepted it."""

    pairs: list = field(default_factory=list)      # (ℓ, ℓ′) as arrays
    accepted: list = field(default_factory=list)
    evaluations: int = 0


last_trace = Trace()


def has_exact_model(alg: Algorithm) -> bool:
    """A model whose pair ε the engine can compute: a declared
    report-noisy-max, or a declared sparse vector releasing no number or
    fresh ones, or the code itself where the replay follows it (uniform draws
    it only compares: ``algorithms.replay``)."""
    extra = getattr(alg, "extra", None) or {}
    sv = extra.get("sparse_vector")
    return isinstance(extra.get("noisy_max"), NoisyMaxModel) or (
        isinstance(sv, SparseVectorModel) and sv.numeric in (None, "fresh")) or (
        replay_applies(alg))


def projector(alg: Algorithm, start_a: np.ndarray, start_b: np.ndarray):
    """(the variables of a start, the map from variables to a pair in the
    relation): variables are ℓ and the move in units of Δ."""
    relation, step = relation_of(alg)
    T, K = stream_shape(alg)
    lo, hi = alg.loss_range
    n = T * K
    movable = np.ones((T, K), dtype=bool)
    if relation != "bounded-all":
        rows = np.flatnonzero(np.any(start_a != start_b, axis=1))
        movable[:] = False
        movable[rows[:1]] = True
    movable = movable.ravel()

    def pair(x):
        a = np.clip(np.asarray(x[:n], dtype=float), lo, hi)
        d = np.where(movable, np.clip(np.asarray(x[n:], dtype=float), -1.0, 1.0), 0.0)
        b = np.clip(a + step * d, lo, hi)
        # Code that rounds its inputs to whole numbers sees the pair rounded:
        # the pair is stated so (the same runs either way).
        a, b = as_the_code_sees(alg, a), as_the_code_sees(alg, b)
        return a.reshape(T, K), b.reshape(T, K)

    x0 = np.concatenate([start_a.ravel(), (start_b - start_a).ravel() / step])
    bounds = [(lo, hi)] * n + [(-1.0, 1.0)] * n
    return x0, bounds, pair


def moved_rounds(a: np.ndarray, b: np.ndarray):
    """(t, (ℓ, ℓ′) with rounds t and r swapped on both sides) for every
    round t ≠ r, where the pair differs at round r only: the same values,
    the change at round t.  Nothing for a pair differing at several
    rounds."""
    rows = np.flatnonzero(np.any(a != b, axis=1))
    if len(rows) != 1:
        return
    r = int(rows[0])
    for t in range(len(a)):
        if t == r:
            continue
        order = np.arange(len(a))
        order[[r, t]] = order[[t, r]]
        yield t, (a[order], b[order])


def optimise(alg: Algorithm, objective, budget: int = BUDGET, starts: int = STARTS):
    """(ℓ, ℓ′, value, the start's pattern name, evaluations) of the best pair
    found, and the search's ``Trace``."""
    trace = Trace()

    def score(a, b) -> float:
        trace.pairs.append((a.copy(), b.copy()))
        ok = not np.array_equal(a, b) and (alg.claim is None or
                                           alg.claim.not_neighbours(a, b) is None)
        if ok and alg.check_losses is not None:
            try:
                alg.check_losses(a)
                alg.check_losses(b)
            except ValueError:
                ok = False
        trace.accepted.append(ok)
        if not ok:
            return 0.0
        trace.evaluations += 1
        v = float(objective(a, b))
        return v if (math.isfinite(v) or v > 0) else 0.0

    relation, step = relation_of(alg)
    lo, hi = alg.loss_range
    starts_from = pattern_pairs(alg)
    if enumerable(alg):
        # One answer over a small integer domain: every neighbouring pair is
        # scored, so the best is the relation's own maximum.
        starts_from += enumerated_pairs(alg, set(), lo, hi, step)
    scored = sorted(((score(a, b), name, a, b) for name, a, b in starts_from),
                    key=lambda s: -s[0])
    if not scored:
        raise ValueError(f"attack optimised: no pattern pair of {alg.name} to start from")
    # The local search never moves a one-round change to another round, and
    # a stream's leak may sit at one round only (a counter's inner tree, a
    # noise scale that changes mid-stream): the best starts, their rounds
    # permuted so that the change sits at each other round in turn, are
    # scored too, with up to half the budget.
    moved = []
    for value, name, a, b in scored[:starts] if relation != "bounded-all" else ():
        for t, (ma, mb) in moved_rounds(a, b):
            if trace.evaluations >= budget // 2:
                break
            moved.append((score(ma, mb), f"{name}@{t + 1}", ma, mb))
    scored = sorted(scored + moved, key=lambda s: -s[0])
    best = scored[0]
    ends = sorted({v for v in (lo, lo + step, hi - step, hi) if lo <= v <= hi})
    for value, name, a, b in scored[:starts]:
        if math.isinf(best[0]) or trace.evaluations >= budget:
            break
        x0, bounds, pair = projector(alg, a, b)
        n = a.size
        x, v = x0, value
        # Coordinate search over the corners: each value at an end of the
        # domain or Δ inside it, each move ±Δ, sweeps until none improves.
        for _ in range(SWEEPS):
            improved = False
            for i in range(2 * n):
                for c in (ends if i < n else (-1.0, 1.0)):
                    if trace.evaluations >= budget or x[i] == c:
                        continue
                    y = x.copy()
                    y[i] = c
                    w = score(*pair(y))
                    if w > v + RESOLUTION:
                        x, v, improved = y, w, True
            if not improved or math.isinf(v):
                break
        # Then scipy's Powell from there (box bounds), kept only where it
        # gains more than the coarse objective's resolution.
        if not math.isinf(v) and trace.evaluations < budget:
            found = {"v": v, "x": x}

            def f(z):
                w = score(*pair(z))
                if w > found["v"] + RESOLUTION:
                    found["v"], found["x"] = w, np.array(z, dtype=float)
                return -w

            # An objective of −∞ (a pair no output separates) makes Powell's
            # line search subtract infinities: scipy's warning is ours, not
            # the user's, and the step it spoils is simply not kept.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                minimize(f, x, method="Powell", bounds=bounds,
                         options={"maxfev": min(POLISH, budget - trace.evaluations),
                                  "xtol": 1e-4, "ftol": 1e-7})
            x, v = found["x"], found["v"]
        if v > best[0]:
            best = (v, name, *pair(x))
    value, name, a, b = best
    return (a, b, value, name, trace.evaluations), trace


def describe(x: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in np.asarray(x).ravel()) + "]"


class Optimised(Attack):
    name = "optimised"
    summary = ("the input pair maximising the mechanism's exact pair ε (its declared model's, "
               "or its replayed code's, supplied by the engine), found from the best pattern "
               "pairs (and every neighbouring pair of a one-answer integer domain) by a search "
               "over the corners and scipy's Powell, every candidate projected into the "
               "claim's relation and the input domain")
    needs = ("a mechanism over a stream of at most 64 answers whose exact pair ε the audit "
             "computes: a declared report-noisy-max, a declared sparse vector releasing no "
             "number or fresh ones, or code the exact replay follows (uniform draws it only "
             "compares, or continuous noise it traces) — a function or a class run as "
             "written, over at most 64 losses")

    def applies(self, alg: Algorithm) -> None:
        """``ValueError`` unless ``alg`` is a stream mechanism with a declared
        model whose exact pair ε the engine computes."""
        # A class run as written whose code the replay follows is optimised
        # over its (T, K) losses like a mechanism over its answers.
        replayed_class = (alg.extra or {}).get("as_written") == "class" and replay_applies(alg)
        if not is_stream(alg) and not replayed_class:
            raise ValueError(f"attack optimised applies to mechanisms over a stream of answers "
                             f"and to classes run as written whose code the replay follows; "
                             f"{alg.name} is a learner")
        if not has_exact_model(alg):
            raise ValueError(f"attack optimised needs an exact pair ε: a declared model "
                             f"(report-noisy-max, or a sparse vector releasing no number or "
                             f"fresh ones) or code the exact replay follows; {alg.name} has "
                             f"neither")
        T, K = stream_shape(alg)
        if T * K > MAX_ANSWERS:
            raise ValueError(f"attack optimised searches over at most {MAX_ANSWERS} answers; "
                             f"{alg.name} reads {T * K}")
        if not pattern_pairs(alg):
            raise ValueError(f"attack optimised: no pattern pair of {alg.name} to start from")

    def scenarios(self, alg: Algorithm, objective=None, events: bool = True):
        """One scenario, the best pair found; ``objective`` (ℓ, ℓ′) → ε comes
        from the engine (ValueError without one)."""
        global last_trace
        self.applies(alg)
        if objective is None:
            raise ValueError("attack optimised needs the exact pair ε of the mechanism's "
                             "declared model, which the audit engine supplies")
        # Code whose every evaluation is costly says how many it affords
        # (``optimise_evaluations``: a count, so the pair is the same on
        # any machine).
        budget = min(BUDGET, int((alg.extra or {}).get("optimise_evaluations", BUDGET)))
        (a, b, value, start, evaluations), last_trace = optimise(alg, objective, budget=budget)
        fam = stream_events(alg, a, b, EVENTS_KEY) if events else None
        rejected = sum(not ok for ok in last_trace.accepted)
        pair = [f"ℓ = {describe(a)}", f"ℓ′ = {describe(b)}"]
        return [Scenario("optimised", alg, a, b, fam, alg.horizon, learned=True, notes=[
            f"the pair maximising the exact pair ε, found from the start "
            f"'{start}' (the better of the best {STARTS} starts, the patterns' changes moved "
            f"to every round) by a coordinate search over "
            f"the corners, then Powell (scipy): {evaluations} evaluations of the exact ε on a "
            f"coarse grid (search value {value:.6g}; the white-box figure is recomputed at full "
            f"resolution); every candidate projected into "
            f"{alg.claim.relation_words if alg.claim else 'the relation'} and the domain "
            f"[{alg.loss_range[0]:g}, {alg.loss_range[1]:g}] ({rejected} rejected by the "
            f"relation check)", *pair], white_box_notes=[
            f"the optimised pair (attack optimised, from the start '{start}'): "
            + "; ".join(pair)])]
