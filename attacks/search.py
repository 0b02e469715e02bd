"""Neighbour search: the attack that looks for the revealing pair itself.

The family attacks are written for one paper each, and an algorithm gets
only the pairs its author declared.  Auditors in this field find their
witnesses by searching over inputs (DP-Auditorium, Delta-Siege); ``search``
does so over neighbouring loss sequences, from the algorithm's shape alone:

* **which round changes**: every round for short horizons; for long ones a
  structured set (the first rounds, powers of two and their neighbours,
  multiples of a declared batch or window length and ±1, late rounds, a few
  fixed random ones), up to ``MAX_PREFIX`` (every finalist is simulated up to
  its changed round, so later changes are not searched);
* **which coordinates change**, always across the whole loss class the
  algorithm declares, [lo, hi]^K (``Algorithm.loss_range``, [0, 1] unless
  it says otherwise): one arm hi vs lo, all arms hi vs lo, a swap
  (hi, lo) vs (lo, hi) of arms 1 and 2, or (K ≥ 3) arm 1 against the rest,
  (hi, lo, …, lo) vs (lo, hi, …, hi); for loss rows that are function
  parameters (PRIVATEBANDIT) the family's own largest change, f vs −f;
  another algorithm with its own ``check_losses`` keeps the candidates that
  hook accepts;
* **the background losses**: every loss lo (``zeros`` on [0, 1], else
  ``low``), every loss hi (``ones``, else ``high``), the ``gap`` instance
  mapped into the range, a fixed uniform random sequence on [lo, hi];
* **the advice**, for algorithms that take it: the default advice, or
  one-hot advice with expert 1 on the changed arm (the others on the other
  arms in turn);
* **moving backgrounds** built around the pair (``MOVING``): the changed
  arm good before its round, then drifting to bad while the others drift
  to good (``drift``: running means that cross later), or bad for g rounds
  and good again (``revisit-g``: an arm abandoned and returned to), g
  chosen on the pilot among ``REVISIT_GAPS``;
* **how long after the change** (``follow``): ``AFTER`` rounds at first;
  for the best rounds of stage 1 and for the finalists, the window doubles
  while the pilot shows the two sides differing in its latter half, until
  they have merged again, the horizon, ``MAX_AFTER`` or the share
  ``FOLLOW`` of the pilot is reached;
* **the parameters the claim quantifies over** (the sweep): the cheap
  corners of the ranges the algorithm declares
  (``algorithms.claim_ranges``: T = 2, 3, 4, 8, 17, the smallest K or N,
  the largest η allowed), each rebuilt as the audit built the algorithm;
  each variant's first ``VARIANT_ROUNDS`` rounds join stage 1 as
  candidates of its own (``Candidate.variant``), and a variant is a
  finalist only where its pilot score is positive.

A pilot ranks the candidates in two stages, each by successive halving
within a fixed number of row-rounds (``PILOT_ROW_ROUNDS``): first where (every
candidate round with the swap probe), then what (every coordinate,
background and advice at the two best rounds, next to the probes of the next
best rounds).  A candidate's score is the ε lower bound a pilot-sized
audit of it would certify: the largest Clopper–Pearson log-ratio over its
own event family (``attacks.events.events_after``, joint events included;
for a claim that covers released values, the release events of
``attacks.values`` too).
The ``FINALISTS`` best become scenarios (ties within ``MARGIN`` go to the
pair that is cheaper to simulate); when the pilot saw nothing (every score
0) the ranking is by cost alone, and only the cheapest pair is audited.
What does not fit the budget is not tried: candidates are tried in the
order above, so a long horizon's screen may stop early (the notes say how
many rounds were screened).

Validity.  The pilot draws from ``SeedSequence([0x5EA2C4, key, side])``
(``pilot_rng``) and no other code does — its swept variants and followed
windows included.  numpy mixes a seed sequence's
entropy words, then its spawn key; with a spawn key the entropy is first
padded to four words.  The pilot's streams have no spawn key, so at most
four words are mixed, while every chunk of an audit draws from
``SeedSequence([seed, scenario, stream]).spawn(n)[i]``: at least five.  A
declaration pilot ``[seed, scenario, 57025, k]`` has 57025 where the
pilot's side (0 or 1) is, a threshold pilot ``[0x5EED, …]`` another first
word.  So no pilot run is ever an audit run, whatever the audit's seed; the
finalists are fixed independently of the audit's runs, and the audit's
bounds stay valid with the Bonferroni paid over the finalists only (2 α
shares each, like any pair).  The pilot does not depend on the audit's
seed: every audit of the same algorithm tests the same finalists.

The finalists are audited black-box and, where the algorithm declares a
model of its randomness (``probs``/``commit``, a transcript model, a state
or sparse-vector model), by the engine's white-box modes too, after the
declaration checks, like every other attack's pairs.

Mechanisms over a stream of answers (``feedback="stream"``, whose claims may
use the ``bounded-all`` relation) are searched by ``attacks.testers``'
``stream_search`` instead (sign vectors over every answer, not one round):
the registered ``search`` is ``attacks.testers.Search``, which dispatches.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.claim_ranges import describe as describe_changes
from algorithms.claim_ranges import flags_of, ranges_of
from algorithms.claim_ranges import variants as claim_variants
from algorithms.core import Algorithm
from algorithms.simulate import simulate
from .base import Attack, Scenario
from algorithms.simulate import released_key
from .events import (ActionAt, ArmCountAtLeast, CoordinateAbove, CoordinateBelow, Union,
                     events_after, quantile_thresholds, release_rounds_of)
from .floats import grid_families, reads_doubles, reads_grids
from .values import release_family, releasing_rounds
from .instances import default_advice, gap

# Pilot streams: SeedSequence([PILOT_STREAM, key, side]) (module docstring).
PILOT_STREAM = 0x5EA2C4
SHORT_HORIZON = 48          # every round is a candidate up to this horizon
MAX_PREFIX = 1024           # rounds a candidate may simulate (its cost in every run)
AFTER = 12                  # rounds simulated after the change at first (unbatched)
MAX_AFTER = 256             # the most rounds a followed window reaches after the change
FOLLOW_RUNS = 200           # runs per side of each step of a followed window
FOLLOW = 0.3                # share of the pilot spent following windows (2/3 in stage 1)
FOLLOW_ROUNDS = 2           # stage-1 rounds whose window is followed (and the finalists)
REACH_RUNS = FOLLOW_RUNS    # runs per side of the probe straight to a window's cap
REACH_ROW_ROUNDS = 100_000  # what that probe may cost beyond the follow's budget
VARIANT_ROUNDS = 3          # candidate rounds probed per swept variant in stage 1
FIRST_ROUNDS = 8
LATE = (2, 3, 5, 9)         # late candidates: rounds T − 1, T − 2, T − 4, T − 8 (1-based)
RANDOM_ROUNDS = 4
PILOT_ROW_ROUNDS = 4_000_000  # runs × simulated rounds, both sides, both stages
CALL_OVERHEAD = 250         # runs' worth of work per simulated round of any call
# Code audited as written makes a Python call per run and round, about a
# hundred times a vectorised learner's cost a run: its pilot gets an eighth
# of the row-rounds, and a call costs nothing beyond its runs.
PER_RUN_CODE_ROW_ROUNDS = PILOT_ROW_ROUNDS // 8
# An audit of code run as written at fewer than FULL_PILOT_TRIALS runs a side
# gets a pilot shrunk in proportion, to MIN_PILOT_SHARE of it at least: its
# pilot would otherwise cost more than the audit itself (a quick look at
# 2 000 runs took 20 s, 8 of them in the pilot).  The pilot only chooses
# pairs on streams no audit run uses, so a smaller one costs power, never
# validity.  A vectorised learner's pilot takes a second or two at any
# budget and is left whole.
FULL_PILOT_TRIALS = 100_000
MIN_PILOT_SHARE = 1 / 8


def pilot_costs(alg: Algorithm) -> tuple[int, int]:
    """(row-rounds of the pilot, a call's overhead in runs) for ``alg``."""
    if (alg.extra or {}).get("per_run_calls"):
        return PER_RUN_CODE_ROW_ROUNDS, 0
    return PILOT_ROW_ROUNDS, CALL_OVERHEAD


def pilot_share(alg: Algorithm, trials: int | None = None) -> float:
    """The share of its full pilot that an audit of ``alg`` at ``trials``
    runs a side spends: 1 but for code run as written (one call per run and
    round) audited at fewer than ``FULL_PILOT_TRIALS`` runs a side."""
    if trials is None or not (alg.extra or {}).get("per_run_calls"):
        return 1.0
    # An audit fitted to a time (audit.engine.budget) caps it further; the
    # command reproducing it gives the cap (``--pilot-share``).
    return min(uncapped_pilot_share(alg, trials), (alg.extra or {}).get("pilot_share", 1.0))


def uncapped_pilot_share(alg: Algorithm, trials: int | None = None) -> float:
    """``pilot_share`` before a time's cap: a function of ``trials``."""
    if trials is None or not (alg.extra or {}).get("per_run_calls"):
        return 1.0
    return min(1.0, max(MIN_PILOT_SHARE, trials / FULL_PILOT_TRIALS))


MIN_RUNS, MAX_RUNS = 100, 4000  # runs per side and candidate in one halving rung
PILOT_ALPHA = 0.05          # split over a candidate's events and directions
STAGE1 = 0.6                # share of the pilot spent on where (stage 1)
SCREEN = 0.5                # share of a stage spent on its first halving rung
TOP_ROUNDS = 2              # rounds whose every variant is tried in stage 2
PROBE_ROUNDS = 6            # stage-1 probes carried into stage 2
FINALISTS = 3
MARGIN = 0.1                # nats: within it, the cheaper pair wins
BACKGROUNDS = ("zeros", "ones", "gap", "random")
# Backgrounds built around the changed round and arm: the changed arm good
# before the change (so a bandit plays it there), then losing to the others
# gradually (drift: running means that cross DRIFT_SPAN rounds later) or at
# once for g rounds and good again after them (revisit-g: abandoned, then
# returned to, which is when a stale estimate of it shows).
DRIFT_SPAN = 24
REVISIT_GAPS = (4, 16, 48)
MOVING = ("drift",) + tuple(f"revisit-{g}" for g in REVISIT_GAPS)
MAX_POINT_ROUNDS = 5


@dataclass(frozen=True)
class Candidate:
    """One neighbouring pair: at round ``round`` (0-based) the coordinates
    ``up`` are hi on ℓ and lo on ℓ′, ``down`` lo on ℓ and hi on ℓ′ (the ends
    of the loss range; 1 and 0 on [0, 1]); every other loss is the
    background's.  ``rounds`` is the prefix simulated."""

    round: int
    change: str
    up: tuple
    down: tuple
    background: str
    advice: str          # "" (no advice), "default" or "focus"
    rounds: int
    focus: tuple
    variant: int = 0     # which algorithm: 0 the audited one, else a swept variant
    tag: str = ""        # the swept parameters, e.g. "horizon=2"

    @property
    def label(self) -> str:
        tail = "-focused-advice" if self.advice == "focus" else ""
        swept = f"{self.tag}:" if self.tag else ""
        return f"search:{swept}round-{self.round + 1}-{self.change}-{self.background}{tail}"

    @property
    def changed_arm(self) -> int:
        return (self.up + self.down + (0,))[0]

    def describe(self, lo: float = 0.0, hi: float = 1.0) -> str:
        if self.change == "f-vs-minus-f":
            what = "the loss function f vs −f"
        else:
            what = ", ".join([f"arm {i + 1}: {hi:g} vs {lo:g}" for i in self.up] +
                             [f"arm {i + 1}: {lo:g} vs {hi:g}" for i in self.down])
        adv = {"": "", "default": ", default advice",
               "focus": ", advice: expert 1 on the changed arm"}[self.advice]
        return f"round {self.round + 1} ({what}) on the {self.background} background{adv}"


def _data_rng(tag: int) -> np.random.Generator:
    """Fixed data (random rounds, the random background), not a simulation
    stream: its fourth word is nonzero, the pilot's is 0 (three words)."""
    return np.random.default_rng([PILOT_STREAM, 0, 0, tag])


def periods(alg: Algorithm) -> tuple:
    """Declared batch or window lengths > 1 (``tau``, as ``batch_size``
    reads it, ``tbatch``, ``batch``, ``window``); non-integers are ignored."""
    out = set()
    for key in ("tau", "tbatch", "batch", "window"):
        v = alg.params.get(key)
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) \
                and float(v).is_integer():
            out.add(int(v))
    return tuple(sorted(p for p in out if 1 < p < alg.horizon))


def _function_rows(alg: Algorithm) -> bool:
    """Loss rows that are the parameters of PRIVATEBANDIT's loss functions."""
    return alg.check_losses is not None and "tbatch" in alg.params and "domain" in alg.extra


def candidate_rounds(alg: Algorithm) -> list[int]:
    """Changed rounds (0-based) in the order they are tried: every round for
    a short horizon; else the first rounds, then in turn one group of each
    kind (powers of two with their neighbours, a late round, a multiple of a
    declared period with its neighbours, a fixed random round), so that a
    pilot budget that ends the list early still spans every kind.  The last
    round is never one (no action reads its loss)."""
    T = alg.horizon
    last = min(T, MAX_PREFIX) - 2
    if last < 0:
        return []
    if T <= SHORT_HORIZON:
        return list(range(last + 1))
    powers, p = [], 2
    while p <= last + 2:
        powers.append((p - 2, p - 1, p))      # 1-based rounds 2^j − 1, 2^j, 2^j + 1
        p *= 2
    late = [(T - d,) for d in LATE] if T <= MAX_PREFIX else []
    multiples = [(k * P - 1, k * P, k * P - 2)  # 1-based kP, kP + 1, kP − 1
                 for P in periods(alg) for k in sorted({1, 2, 3, 4, (last + 1) // P})]
    rng = _data_rng(0xA4D)
    pool = np.arange(FIRST_ROUNDS, last + 1)
    random = [(int(t),) for t in sorted(rng.choice(pool, size=min(RANDOM_ROUNDS, pool.size),
                                                   replace=False))]
    kinds = [powers, late, multiples, random]
    order = list(range(FIRST_ROUNDS))
    for i in range(max(map(len, kinds))):
        order += [t for kind in kinds if i < len(kind) for t in kind[i]]
    return list(dict.fromkeys(t for t in order if 0 <= t <= last))


class _Space:
    """Candidates of one algorithm and the loss sequences they stand for.
    ``variant`` numbers a swept variant of the audited algorithm (0: the
    audited one), whose candidates carry ``tag``."""

    def __init__(self, alg: Algorithm, variant: int = 0):
        self.alg = alg
        self.variant = variant
        swept = (alg.extra or {}).get("swept") if variant else None
        self.swept = dict(swept or {})
        self.tag = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in self.swept.items())
        self.T, self.K = alg.horizon, alg.n_arms
        self.functions = _function_rows(alg)
        self.periods = periods(alg)
        self.lo, self.hi = float(alg.loss_range[0]), float(alg.loss_range[1])
        self.unit = (self.lo, self.hi) == (0.0, 1.0)
        self.budget, self.overhead = pilot_costs(alg)
        # Rounds simulated after a change at round t, once its window has
        # been followed (``follow``); AFTER until then.
        self.window: dict = {}
        # Moving backgrounds need loss rows that are losses in a box.
        self.moving = not self.functions and alg.check_losses is None
        claim = alg.claim
        self.releases = (claim is not None and claim.scope == "transcript"
                         and not alg.learner.reads_first and alg.learner.whole is None
                         and alg.learner.released_of is not None)
        self._backgrounds: dict = {}
        self._releasing: dict = {}

    # ---------------------------------------------------------------- shape
    def prefix(self, t: int, background: str = "") -> int:
        end = t + 1 + max(self.window.get(t, AFTER), _needs(background))
        for P in self.periods:
            end = max(end, (t // P + 3) * P + 1)
        return min(end, self.T)

    def focus(self, t: int, rounds: int) -> tuple:
        out = list(range(t + 1, min(rounds, t + 1 + FIRST_ROUNDS)))
        for P in self.periods:
            b = t // P
            out += [r for k in (b + 1, b + 2, b + 3) for r in (k * P, k * P + 1)]
        return tuple(dict.fromkeys(r for r in out if t < r < rounds))

    def point_rounds(self, c: Candidate) -> tuple:
        out = [c.round + 1, c.round + 2]
        for P in self.periods:
            b = c.round // P
            out += [k * P for k in (b + 1, b + 2, b + 3)]
        return tuple(sorted(dict.fromkeys(r for r in out if c.round < r < c.rounds)))[
            :MAX_POINT_ROUNDS]

    # ----------------------------------------------------------- candidates
    def changes(self) -> list[tuple]:
        """(name, up, down) for each coordinate change."""
        if self.functions:
            return [("f-vs-minus-f", (), ())]
        K = self.K
        out = [(f"arm-{j + 1}", (j,), ()) for j in dict.fromkeys((0, 1 % K, K - 1))]
        if K > 2:
            # one arm up and every other down: a full-information learner's
            # argmin moves most (its gap to each other arm changes by 2Δ)
            out.append(("arm-1-vs-rest", (0,), tuple(range(1, K))))
        if K > 1:
            out += [("all-arms", tuple(range(K)), ()), ("swap-1-2", (0,), (1,))]
        return out

    def backgrounds(self) -> tuple:
        """The fixed backgrounds (the same sequence whatever the pair)."""
        if self.functions:
            return ("zero-functions",)
        return BACKGROUNDS if self.unit else ("low", "high") + BACKGROUNDS[2:]

    def moving_backgrounds(self) -> tuple:
        """The backgrounds built around a pair's changed round and arm."""
        return MOVING if self.moving else ()

    def advices(self) -> tuple:
        return ("default", "focus") if self.alg.needs_advice else ("",)

    def make(self, t: int, change: tuple, background: str, advice: str) -> Candidate:
        rounds = self.prefix(t, background)
        return Candidate(t, change[0], change[1], change[2], background, advice, rounds,
                         self.focus(t, rounds), self.variant, self.tag)

    def probe(self, t: int) -> Candidate:
        """Stage 1's pair: a swap where there are two arms (seen by a bandit
        whichever of them it plays, and by a full-information learner whose
        output ignores a change shared by every coordinate)."""
        change = self.changes()[-1]
        return self.make(t, change, self.backgrounds()[0], self.advices()[0])

    def variants(self, t: int) -> list[Candidate]:
        """Every change, background and advice at round t; a moving
        background only where the horizon leaves it the rounds it needs."""
        moving = tuple(bg for bg in self.moving_backgrounds() if t + 1 + _needs(bg) <= self.T)
        return [self.make(t, ch, bg, adv) for ch in self.changes()
                for bg in self.backgrounds() + moving for adv in self.advices()]

    def key(self, c: Candidate) -> tuple:
        """What makes two candidates the same pair: the algorithm and the
        simulated rows of both sides and of the advice."""
        a, b, adv = self.pair(c, c.rounds)
        # The last simulated row reaches no action or point, only a release.
        n = c.rounds if self.releases else c.rounds - 1
        return (c.variant, n, a[:n].tobytes(), b[:n].tobytes(),
                b"" if adv is None else np.ascontiguousarray(adv[:n]).tobytes())

    def releasing(self, c: Candidate) -> tuple:
        """The rounds whose releases the pilot records for ``c``
        (``attacks.values.releasing_rounds``, once per changed round and
        prefix)."""
        key = (c.round, c.rounds, c.background, c.change)
        if key not in self._releasing:
            a, _, advice = self.pair(c, c.rounds)
            self._releasing[key] = releasing_rounds(self.alg, a, advice, c.rounds, c.round)
        return self._releasing[key]

    def widened(self, c: Candidate, rounds: int) -> Candidate:
        """``c`` simulated over its first ``rounds`` rounds."""
        return dataclasses.replace(c, rounds=rounds, focus=self.focus(c.round, rounds))

    # --------------------------------------------------------------- losses
    def background(self, name: str, c: Optional[Candidate] = None) -> np.ndarray:
        if name in MOVING:
            if c is None:
                raise ValueError(f"background {name} is built around a pair's change")
            return self._moving(name, c.round, c.changed_arm)
        if name not in self._backgrounds:
            T, K = self.T, self.K
            lo, hi = self.lo, self.hi
            if name in ("zeros", "low"):
                bg = np.full((T, K), lo)
            elif name in ("ones", "high"):
                bg = np.full((T, K), hi)
            elif name == "gap":
                bg = gap(T, K, loss_range=(lo, hi)).losses
            else:   # a fixed uniform sequence on [lo, hi] (on [0, 1]: 0 + 1·U = U)
                bg = lo + (hi - lo) * _data_rng(0xB6).random((T, K))
            self._backgrounds[name] = bg
        return self._backgrounds[name]

    def _moving(self, name: str, t: int, arm: int) -> np.ndarray:
        """The changed arm at lo before round t, the others at hi; then
        ``drift``: the arm rising linearly to hi and the others falling to
        lo over ``DRIFT_SPAN`` rounds (their running means cross later, at a
        time that depends on the arm's estimate); ``revisit-g``: the arm at
        hi and the others at lo for g rounds (it is abandoned), then back as
        before (it is returned to)."""
        T, K, lo, hi = self.T, self.K, self.lo, self.hi
        x = np.zeros(T)                     # the changed arm's loss on [0, 1]
        if name == "drift":
            x[t + 1:] = np.minimum(1.0, np.arange(1, T - t) / DRIFT_SPAN)
        else:
            g = int(name.split("-")[1])
            x[t + 1:t + 1 + g] = 1.0
        unit = np.repeat((1.0 - x)[:, None], K, axis=1)
        unit[:, arm] = x
        return lo + (hi - lo) * unit

    def pair(self, c: Candidate, length: Optional[int] = None):
        """(ℓ, ℓ′, advice): the first ``length`` rows, or all of them (always
        for an algorithm with its own ``check_losses``, which may want T)."""
        n = length if length is not None and self.alg.check_losses is None else self.T
        if self.functions:
            from .projection_free import changed_pair
            a, b = changed_pair(self.alg, c.round)
        else:
            a = self.background(c.background, c)[:n].copy()
            b = a.copy()
            a[c.round, list(c.up)], b[c.round, list(c.up)] = self.hi, self.lo
            a[c.round, list(c.down)], b[c.round, list(c.down)] = self.lo, self.hi
        advice = self.advice(c)
        return a, b, None if advice is None else advice[:n]

    def advice(self, c: Candidate):
        alg = self.alg
        if not alg.needs_advice:
            return None
        N, K = alg.n_experts, self.K
        if c.advice == "default":
            return default_advice(self.T, N, K)
        arm = (c.up + c.down)[0]
        one_hot = np.zeros((N, K))
        one_hot[np.arange(N), (arm + np.arange(N)) % K] = 1.0
        return np.broadcast_to(one_hot, (self.T, N, K)).copy()

    def accepts(self, c: Candidate) -> bool:
        """Whether an algorithm with its own ``check_losses`` accepts the pair
        (a ``ValueError`` from the hook rejects it; any other error is the
        hook's and propagates)."""
        if self.alg.check_losses is None or self.functions:
            return True
        a, b, _ = self.pair(c)
        try:
            self.alg.check_losses(a)
            self.alg.check_losses(b)
        except ValueError:
            return False
        return True


def _needs(background: str) -> int:
    """Rounds after the change a moving background needs to show what it
    provokes (the arm abandoned and returned to, the means crossed)."""
    if background == "drift":
        return 2 * DRIFT_SPAN
    if background.startswith("revisit-"):
        return int(background.split("-")[1]) + AFTER
    return 0


# -------------------------------------------------------------------- pilot
def pilot_rng(key: int, side: int) -> np.random.Generator:
    """The pilot's stream for one batch of one candidate's side (module
    docstring: disjoint from every stream of the audit)."""
    return np.random.default_rng(np.random.SeedSequence([PILOT_STREAM, key, side]))


def _cp(count, n, alpha):
    """One-sided Clopper–Pearson bounds, for ranking only (the audit's own
    bounds are computed by the engine)."""
    from scipy import stats
    k = np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k == 0, 0.0, stats.beta.ppf(alpha, k, n - k + 1))
        hi = np.where(k == n, 1.0, stats.beta.isf(alpha, k + 1, n - k))
    return lo, hi


def pilot_score(ca, cb, n: int) -> tuple[float, float]:
    """(score, tie-break) of counts of the same family on both sides: the
    largest ln(p_lo/q_hi) over events and directions, each bound at
    ``PILOT_ALPHA`` split over them, and the largest smoothed plug-in
    log-ratio."""
    ca, cb = np.asarray(ca, dtype=float), np.asarray(cb, dtype=float)
    alpha = PILOT_ALPHA / (2 * max(1, ca.size))
    lo_a, hi_a = _cp(ca, n, alpha)
    lo_b, hi_b = _cp(cb, n, alpha)
    with np.errstate(divide="ignore"):
        r = np.concatenate([np.log(lo_a) - np.log(hi_b), np.log(lo_b) - np.log(hi_a)])
    score = float(max(0.0, np.max(r))) if r.size else 0.0
    plug = np.abs(np.log((ca + 1) / (cb + 1)))
    return score, float(plug.max()) if plug.size else 0.0


def _pilot_pair(alg, pair, advice, n, rounds, pts, rel, key) -> list:
    """One pilot batch of a candidate: (actions, points, releases) of ``n``
    runs on each side, side s from ``pilot_rng(key, s)``."""
    out = []
    for side, losses in enumerate(pair):
        tr = simulate(alg, losses, n, pilot_rng(key, side), advice=advice, rounds=rounds,
                      point_rounds=pts, release_rounds=rel)
        out.append((tr.actions, tr.points or {}, tr.released or {}))
    return out


def _here(fn, jobs):
    return (fn(*job) for job in jobs)


class _Pilot:
    """Pilot runs and scores of every candidate tried, kept so that the
    finalists' point thresholds come from all their pilot runs.  ``spaces``
    are the audited algorithm's (first) and its swept variants'."""

    def __init__(self, spaces, phase=None, pmap=None):
        self.spaces = list(spaces) if isinstance(spaces, (list, tuple)) else [spaces]
        self.space, self.phase = self.spaces[0], phase
        # ``pmap(fn, argument tuples)``: the results in order (an iterator),
        # possibly from other processes; None: here, one after another.
        self.pmap = pmap
        # candidate -> [actions ℓ, actions ℓ′, points ℓ, points ℓ′, releases ℓ, releases ℓ′]
        self.runs: dict = {}
        self.rows = 0               # row-rounds simulated
        self.keys = 0               # batches simulated: each has its own stream key

    def space_of(self, c: Candidate) -> _Space:
        return self.spaces[c.variant]

    def new_stage(self) -> None:
        """Forget the runs so far: a stage's scores rest on its own runs
        only, not on those its candidates were selected by."""
        self.runs = {}

    def simulate(self, c: Candidate, n: int) -> None:
        self.simulate_all([c], n)

    def simulate_all(self, cands: list, n: int) -> None:
        """``n`` runs of both sides of every candidate, each batch on its own
        stream key (taken in the candidates' order, so the runs are the same
        wherever ``pmap`` runs them)."""
        jobs = []
        for c in cands:
            space = self.space_of(c)
            alg = space.alg
            a, b, advice = space.pair(c, c.rounds)
            pts = space.point_rounds(c) if alg.learner.point is not None else ()
            rel = space.releasing(c) if space.releases else ()
            self.keys += 1
            jobs.append((alg, (a, b), advice, n, c.rounds, pts, rel, self.keys))
        outs = (self.pmap or _here)(_pilot_pair, jobs)
        for c, out in zip(cands, outs):
            store = self.runs.setdefault(c, [[], [], [], [], [], []])
            for side, (actions, points, released) in enumerate(out):
                store[side].append(actions)
                store[2 + side].append(points)
                store[4 + side].append(released)
            self.rows += call_cost(c, n, self.space_of(c).overhead)
            if self.phase is not None:
                self.phase.to(self.rows)

    def n(self, c: Candidate) -> int:
        return sum(x.shape[0] for x in self.runs[c][0])

    def family(self, c: Candidate, releases: bool = False):
        """The candidate's events; point thresholds from its pilot runs, and
        with ``releases`` (for scoring: the black-box evidence builds its
        own from runs of its own) the events on released values."""
        space = self.space_of(c)
        K = space.K
        parts = list(events_after(c.round, c.rounds, K, focus=c.focus).parts)
        pts = space.point_rounds(c)
        store = self.runs[c]
        if space.alg.learner.point is not None and pts:
            d = store[2][0][pts[0]].shape[1]
            coords = tuple(dict.fromkeys((0, d - 1)))
            # Each side's points at each recorded round, over its batches.
            sides = [{t: np.concatenate([p[t] for p in store[2 + side]]) for t in pts}
                     for side in (0, 1)]
            above, below = [], []
            for t in pts:
                for i in coords:
                    up, low = quantile_thresholds(np.concatenate([x[t][:, i] for x in sides]))
                    above.append(up)
                    below.append(low)
            parts += [CoordinateAbove(pts, coords, tuple(above)),
                      CoordinateBelow(pts, coords, tuple(below))]
            if reads_grids(space.alg):
                numbers = [(t, i) for t in pts for i in coords]
                parts += grid_families(numbers, sides, reads_doubles(space.alg))
        if releases and space.releases and store[4] and store[4][0]:
            rel = [{t: np.concatenate([x[t] for x in store[4 + side]]) for t in store[4][0]}
                   for side in (0, 1)]
            acts = [np.concatenate(store[side]) for side in (0, 1)]
            parts += release_family(c.round, rel, acts, space.alg.learner.n_arms,
                                    floats=reads_doubles(space.alg),
                                    grids=reads_grids(space.alg))
        return Union(tuple(parts))

    def _counts(self, c: Candidate, fam) -> list:
        store = self.runs[c]
        counts = []
        for side in (0, 1):
            acts = np.concatenate(store[side])
            obs = {t: np.concatenate([p[t] for p in store[2 + side]]) for t in fam.point_rounds}
            for t in release_rounds_of(fam):
                obs[released_key(t)] = np.concatenate([p[t] for p in store[4 + side]])
            counts.append(fam.count(acts, obs or None))
        return counts

    def score(self, c: Candidate) -> tuple[float, float]:
        counts = self._counts(c, self.family(c, releases=True))
        return pilot_score(counts[0], counts[1], self.n(c))

    def window_score(self, c: Candidate, start: int, end: int) -> float:
        """The pilot score of the actions in rounds [start, end) alone (and of
        the releases there, for a claim that covers them): whether the two
        sides' output laws still differ there."""
        space = self.space_of(c)
        spread = np.unique(np.linspace(start, end - 1, min(end - start, 32)).astype(int))
        parts = [ActionAt(tuple(int(t) for t in spread), space.K),
                 ArmCountAtLeast(((start, end),), space.K)]
        store = self.runs[c]
        if space.releases and store[4] and store[4][0]:
            window = [t for t in store[4][0] if start <= t < end]
            if window:
                rel = [{t: np.concatenate([x[t] for x in store[4 + side]]) for t in window}
                       for side in (0, 1)]
                parts += release_family(start, rel, floats=reads_doubles(space.alg),
                                        grids=reads_grids(space.alg))
        counts = self._counts(c, Union(tuple(parts)))
        return pilot_score(counts[0], counts[1], self.n(c))[0]


def follow(pilot: _Pilot, c: Candidate, budget: float,
           score: float = 0.0) -> tuple[Candidate, bool]:
    """Grow the window after ``c``'s change while the pilot shows the two
    sides' output laws differing in its latter half; stop when they have
    merged again (nothing in the latter half after something was seen), at
    ``MAX_AFTER`` rounds after the change, at the horizon, or when
    ``budget`` row-rounds are spent.  Each step simulates ``FOLLOW_RUNS``
    fresh runs of the widened pair.  Where the pilot saw nothing in ``c``'s
    own window (its ``score`` is 0) and the doubling saw nothing either and
    stopped short of the cap, one probe of ``REACH_RUNS`` runs looks
    straight at the cap (at most ``max(budget left, REACH_ROW_ROUNDS)``
    row-rounds): a leak may show only long after the change (a learner that
    explores for 176 rounds, then commits on what it saw), where doubling
    on the follow's budget never reaches.  The window reaches the cap if
    the sides differ in the rounds not yet looked at; else it stays as it
    was (a longer one only costs).  Returns the candidate over the window
    found and whether anything was seen beyond its original window."""
    space = pilot.space_of(c)
    start = pilot.rows
    after = c.rounds - c.round - 1
    best, seen, grown, merged = c, False, False, False
    cap = min(space.T, c.round + 1 + MAX_AFTER)
    while c.round + 1 + after < cap:
        wider = space.widened(c, min(cap, c.round + 1 + 2 * after))
        if pilot.rows - start + call_cost(wider, FOLLOW_RUNS, space.overhead) > budget:
            break
        pilot.simulate(wider, FOLLOW_RUNS)
        middle = c.round + 1 + after
        late = pilot.window_score(wider, middle, wider.rounds)
        if late > 0:
            best, seen, grown = wider, True, True
            after = wider.rounds - c.round - 1
            continue
        if seen or pilot.window_score(wider, c.round + 1, middle) > 0:
            merged = True
            break                   # merged again: the window before is the one
        after = wider.rounds - c.round - 1
    looked = c.round + 1 + after
    if score > 0 or seen or merged or looked >= cap:
        return best, grown
    wide = space.widened(c, cap)
    left = budget - (pilot.rows - start)
    if call_cost(wide, REACH_RUNS, space.overhead) > max(left, REACH_ROW_ROUNDS):
        return best, grown
    pilot.simulate(wide, REACH_RUNS)
    if pilot.window_score(wide, looked, cap) > 0:
        return wide, True
    return best, grown


@dataclass
class Ranked:
    """A candidate's place in a pilot stage."""

    candidate: Candidate
    score: float
    plug: float
    runs: int          # pilot runs per side behind the score


def call_cost(c: Candidate, n: int, overhead: int = CALL_OVERHEAD) -> int:
    """Row-rounds charged for ``n`` runs of both sides of ``c``: a call to
    the simulation costs about ``CALL_OVERHEAD`` runs' worth per round
    whatever its size (the learner's per-round work in Python)."""
    return 2 * (n + overhead) * c.rounds


def halving(pilot: _Pilot, cands: list, budget: float, keep: int) -> tuple[list, int]:
    """Successive halving: every candidate gets the same runs, the better
    half goes on with twice as many, until ``keep`` are left.  The first
    rung (the screen: breadth matters most) spends ``SCREEN`` of ``budget``
    row-rounds (``call_cost``), the later rungs equal shares of the rest.
    Candidates come in priority order: when ``MIN_RUNS`` runs of all of them
    do not fit the screen, the last ones are not tried, and a later rung
    that cannot afford its survivors drops the costliest but its leader
    (one candidate is always run, which may overrun the budget by a call).
    Returns the last rung's ranking (best first: score, then the cheaper
    pair, then the plug-in tie-break) and how many candidates were tried."""
    alive = list(cands)
    rungs = max(1, math.ceil(math.log2(max(1.0, len(alive) / keep)))) + 1
    shares = [budget] if rungs == 1 else \
        [SCREEN * budget] + [(1 - SCREEN) * budget / (rungs - 1)] * (rungs - 1)
    tried = 0
    ranked: list[Ranked] = []
    for rung, share in enumerate(shares):
        # Over the share even at MIN_RUNS: the screen drops the last in
        # priority order, a later rung the costliest after its leader.
        over = pilot.space.overhead
        while len(alive) > 1 and sum(call_cost(c, MIN_RUNS, over) for c in alive) > share:
            alive.remove(alive[-1] if rung == 0 else
                         max(reversed(alive[1:]), key=lambda c: c.rounds))
        tried = tried or len(alive)
        per_run = sum(call_cost(c, 1, over) - call_cost(c, 0, over) for c in alive)
        fixed = sum(call_cost(c, 0, over) for c in alive)
        n = int(min(MAX_RUNS, max(MIN_RUNS, (share - fixed) // per_run)))
        pilot.simulate_all(alive, n)
        # A swept variant that shows nothing ranks after the audited
        # algorithm's pairs of the same score (it is cheaper, not better).
        ranked = sorted((Ranked(c, *pilot.score(c), pilot.n(c)) for c in alive),
                        key=lambda r: (-r.score, r.score <= 0 and r.candidate.variant > 0,
                                       r.candidate.rounds, -r.plug))
        if rung < rungs - 1:
            ranked = ranked[:max(keep, math.ceil(len(ranked) / 2))]
        alive = [r.candidate for r in ranked]
    return ranked, tried


def pick(ranked: list[Ranked], k: int) -> list[Ranked]:
    """The ``k`` best, where a pair within ``MARGIN`` of the best remaining
    score counts as good as it and the cheapest such pair is taken first."""
    left, out = list(ranked), []
    while left and len(out) < k:
        best = max(r.score for r in left)
        near = [r for r in left if r.score >= best - MARGIN]
        choice = min(near, key=lambda r: (r.candidate.rounds, -r.score, -r.plug))
        out.append(choice)
        left.remove(choice)
    return out


def black_box_only(alg: Algorithm) -> Algorithm:
    """The same algorithm without its white-box declarations (the actions,
    points and losses it produces are unchanged): no probabilities,
    transcript or replay, no scalar state model, sparse vector or noisy max.
    For tests and for auditing a pair black-box alone."""
    learner = alg.learner._replace(probs=None, commit=None, transcript=None, replay=None,
                                   released=alg.learner.released_of)
    extra = {k: v for k, v in (alg.extra or {}).items()
             if k not in ("state_model", "sparse_vector", "parallel_sparse_vectors", "noisy_max")}
    return dataclasses.replace(alg, learner=learner, extra=extra)


def _probes(space: _Space) -> list[Candidate]:
    """Stage 1's candidates; ``ValueError`` when the search does not apply."""
    alg = space.alg
    rounds = candidate_rounds(alg)
    if not rounds:
        raise ValueError(f"attack search needs a horizon of at least 2 rounds; "
                         f"{alg.name} has T = {alg.horizon}")
    probes = [c for c in (space.probe(t) for t in rounds) if space.accepts(c)]
    if not probes:
        raise ValueError(f"attack search: {alg.name}'s check_losses accepts none of its "
                         f"candidate pairs (losses in [0, 1]^K)")
    return probes


def _variant_spaces(alg: Algorithm) -> list[_Space]:
    """The swept variants' spaces (``algorithms.claim_ranges``: the cheap
    corners of the ranges the claim declares), numbered from 1."""
    out = []
    for v in claim_variants(alg):
        space = _Space(v, len(out) + 1)
        try:
            _probes(space)
        except ValueError:
            continue
        out.append(space)
    return out


def _variant_probes(space: _Space) -> list[Candidate]:
    """A variant's stage-1 candidates: its first ``VARIANT_ROUNDS`` rounds."""
    return _probes(space)[:VARIANT_ROUNDS]


class _Silent:
    """A progress phase that reports nothing: the search run outside an audit."""

    def __init__(self, name: str, total: int, unit: str):
        self.total = total

    def to(self, done: int) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class NeighbourSearch(Attack):
    name = "search"
    summary = ("neighbour search: candidate pairs from the algorithm's shape (changed round, "
               "coordinates, background losses, advice), ranked on pilot runs of their own; "
               "the best (up to 3) are audited black-box, and white-box where the algorithm "
               "declares a model of its randomness")
    needs = ("a learner with a horizon of at least 2 rounds whose losses (its own check_losses, "
             "if any) admit a candidate pair, or a mechanism over a stream with a neighbouring "
             "pair inside its domain")

    def applies(self, alg: Algorithm) -> None:
        """Raise ``ValueError`` where ``scenarios`` would, without the pilot
        (for listings: ``scenarios`` simulates for seconds)."""
        _probes(_Space(alg))

    def interface_input(self, alg: Algorithm):
        """(losses, advice) of the first pair the pilot simulates, for the
        interface check that must come before it."""
        space = _Space(alg)
        a, _, advice = space.pair(_probes(space)[0])
        return a, advice

    def scenarios(self, alg: Algorithm, progress=None,
                  trials: int | None = None, pmap=None) -> list[Scenario]:
        """``progress(name, total, unit)``, when given, opens the phase the
        pilot reports its row-rounds to (the engine passes its reporter's
        ``phase``: attacks never import the engine's progress machinery);
        ``trials``, the audit's runs a side, sizes the pilot of code run
        as written (``pilot_share``); ``pmap(fn, argument tuples)``, when
        given, runs each rung's candidates' batches (in other processes:
        slow code's pilot on every worker), their results in order."""
        space = _Space(alg)
        probes = _probes(space)
        spaces = [space] + _variant_spaces(alg)
        # The swept variants' corners are cheap: they come first.
        first = [c for sp in spaces[1:] for c in _variant_probes(sp)]
        budget = space.budget * pilot_share(alg, trials)
        with (progress or _Silent)(f"neighbour search pilot ({alg.name})",
                                   int(budget * (1 + FOLLOW)), "row-rounds") as phase:
            pilot = _Pilot(spaces, phase, pmap)
            stage1, screened = halving(pilot, first + probes, STAGE1 * budget,
                                       keep=PROBE_ROUNDS)
            # Follow the best rounds' windows: where the two sides still
            # differ at the end of the window, it grows.
            followed = []
            for r in stage1[:FOLLOW_ROUNDS]:
                c = r.candidate
                wide, grown = follow(pilot, c, FOLLOW * budget * 2 / (3 * FOLLOW_ROUNDS),
                                     r.score)
                if grown:
                    pilot.space_of(c).window[c.round] = wide.rounds - c.round - 1
                    followed.append(wide)
            top = [(r.candidate.variant, r.candidate.round) for r in stage1[:TOP_ROUNDS]]
            if all(v for v, _ in top):      # the audited algorithm's best round too
                top += [(0, r.candidate.round) for r in stage1 if not r.candidate.variant][:1]
            second = [c for v, t in top for c in spaces[v].variants(t)
                      if spaces[v].accepts(c)]
            second += [r.candidate for r in stage1[:PROBE_ROUNDS]] + followed
            second = list(dict.fromkeys(second))
            pilot.new_stage()
            stage2, tried = halving(pilot, second, (1 - STAGE1) * budget,
                                    keep=2 * FINALISTS)
            # A swept variant is a finalist only where its pilot saw something.
            eligible, keys = [], set()
            for r in stage2:
                key = pilot.space_of(r.candidate).key(r.candidate)
                if (r.candidate.variant == 0 or r.score > 0) and key not in keys:
                    keys.add(key)
                    eligible.append(r)
            chosen = pick(eligible or stage2[:1], FINALISTS)
            # A pilot that saw nothing ranks by cost alone: one such pair is
            # audited, not three (each finalist costs the audit runs and α).
            chosen = chosen[:1] + [r for r in chosen[1:] if r.score > 0]
            finals = []
            for r in chosen:
                wide, grown = follow(pilot, r.candidate,
                                     FOLLOW * budget / (3 * max(1, len(chosen))), r.score)
                finals.append((r, wide if grown else r.candidate, grown))
            phase.to(phase.total)
        out = []
        for rank, (r, c, grown) in enumerate(finals, 1):
            sp = pilot.space_of(c)
            a, b, advice = sp.pair(c)
            place = 1 + [x.candidate for x in stage2].index(r.candidate)
            notes = [
                f"neighbour search finalist {rank} of {len(finals)}: "
                f"{c.describe(sp.lo, sp.hi)}, "
                f"{c.rounds} rounds simulated",
                f"chosen on the pilot: score {r.score:.3g} (the ε lower bound a pilot audit of "
                f"this pair certifies on {r.runs} runs per side, its best event), place {place} "
                f"of {len(stage2)} in the last pilot stage; {tried} pairs tried at the best "
                f"rounds after {screened} of {len(first) + len(probes)} candidate rounds were "
                f"screened" + (f" ({len(first)} of them at {len(spaces) - 1} swept corners of "
                               f"the claim's ranges)" if first else ""),
                f"pilot: {pilot.rows:,} row-rounds (counting each call's overhead) on streams "
                f"SeedSequence([0x5EA2C4, key, side]), disjoint from the audit's: only the "
                f"{len(finals)} finalists share the audit's α",
            ]
            if grown or c.round in sp.window:
                notes.append(f"window followed: the two sides still differed "
                             f"{c.rounds - c.round - 1 - AFTER} rounds past the first "
                             f"{AFTER} after the change on the pilot, so {c.rounds - c.round - 1} "
                             f"rounds after it are simulated (at most {MAX_AFTER})")
            if c.variant:
                notes.append(swept_note(sp))
            try:
                fam = pilot.family(c)
            except KeyError:        # never simulated at this window (cannot happen)
                fam = events_after(c.round, c.rounds, sp.K, focus=c.focus)
            out.append(Scenario(c.label, sp.alg, a, b, fam, c.rounds,
                                advice=advice, notes=notes))
        return out


def swept_note(space: _Space) -> str:
    """What a swept variant's scenario says about where it was run."""
    alg = space.alg
    ranges = "; ".join(r.words() for r in ranges_of(alg) if r.param in space.swept)
    claim = alg.claim
    at = (f"its claim there: ε = {claim.epsilon:g}" + (f", δ = {claim.delta:g}"
                                                       if claim.delta else "")
          if claim is not None else "no claim there")
    return (f"swept: {describe_changes(space.swept)} (a corner of the claim's declared range: "
            f"{ranges}); {at}; audit it alone with the flags "
            f"{' '.join(flags_of(space.swept))}")
