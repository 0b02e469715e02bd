"""The one interface every algorithm is written against.

An algorithm is simulated for many independent runs at once.  Following the
optax pattern (``init``/``update`` over explicit state), a bandit learner is a
small bundle of pure-ish functions over a state dict whose arrays carry a
leading "runs" axis:

* ``init(runs, rng) -> state``
* ``act(state, advice, rng) -> (state, actions)``: the actions (``int`` array of
  shape ``(runs,)``) the learner plays this round.  ``advice`` is the round's
  public expert advice ``(N, K)`` or ``None``.
* ``feed(state, actions, losses, rng) -> state``: bandit feedback, the loss of
  the played action for every run (shape ``(runs,)``).  Losses fed to an inner
  learner by a private wrapper may be negative and unbounded.

Because ``act`` and ``feed`` are separate, a conversion that wraps *any* base
learner (Algorithm 1 and Algorithm 5 of Asi, Raman & Talwar, ICML 2025) is a
function from one ``Learner`` to another, never a copy of the base learner.

Learners that sample from a distribution they compute also provide
``probs(state, advice) -> (runs, K)``; the action drawn by ``act`` is
``sample_categorical(probs, rng.random(runs))``, so a white-box auditor can
replay a history exactly.

Full-information learners (experts, online linear optimisation) and learners
whose output is a point rather than an arm use two more fields:

* ``feedback="full"``: ``feed`` receives the whole loss row ``losses[t]``
  (shape ``(K,)``, the same for every run) instead of the played arm's loss.
  A bandit-convex learner (Ene et al.) whose "row" is the parameters of a loss
  function also uses it, and must itself only evaluate the function at the
  point it played.
* ``point(state) -> (runs, d)``: the point x_t played this round (called after
  ``act``).  Events can threshold its coordinates.
* ``incurred(state, row) -> (runs,)``: the loss suffered this round when it is
  not ``row[action]`` (a point's loss, or ``<l_t, x_t>`` for a distribution).

A mechanism over a stream of query answers (the DP testers' benchmark
mechanisms, continual counters) answers round t *after* reading round t's
row, the other way round from a learner.  It declares ``feedback="stream"``:
each round ``feed(state, None, row, rng)`` comes first (the whole row, no
actions), then ``act`` releases that round's output — a discrete answer as
the action (e.g. 0 = below, 1 = above, 2 = aborted for the sparse vector)
and, through ``point``, any numeric answer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Optional

import numpy as np

from .backend import xp_of

State = dict
Rng = np.random.Generator


# ------------------------------------------------------------ noise laws
# The law of the noise on each released value, given the release's mean
# (for a finite law: its true value).  Each law gives the exact log-density
# (for the privacy loss), and what the declaration checks test the releases
# against: a CDF for a continuous law, the probability table for a finite one.
@dataclass(frozen=True)
class Laplace:
    """y = mean + Lap(0, scale): density e^{−|y − m|/b}/(2b)."""

    scale: float
    kind = "laplace"
    continuous = True

    def __post_init__(self):
        _positive("Laplace scale", self.scale)

    def log_density(self, y, mean):
        return -np.abs(np.asarray(y) - mean) / self.scale - math.log(2 * self.scale)

    def log_ratio(self, y, mean_num, mean_den):
        """ln f(y | m) − ln f(y | m′) = (|y − m′| − |y − m|)/b."""
        return (np.abs(y - mean_den) - np.abs(y - mean_num)) / self.scale

    def cdf(self, y, mean):
        z = (np.asarray(y) - mean) / self.scale
        with np.errstate(over="ignore"):
            return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)),
                            1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))

    def __str__(self) -> str:
        return f"Laplace(0, {self.scale:.4g})"


@dataclass(frozen=True)
class Gaussian:
    """y = mean + N(0, σ²): density e^{−(y − m)²/2σ²}/(σ√(2π))."""

    sigma: float
    kind = "gaussian"
    continuous = True

    def __post_init__(self):
        _positive("Gaussian sigma", self.sigma)

    def log_density(self, y, mean):
        z = (np.asarray(y) - mean) / self.sigma
        return -0.5 * z * z - math.log(self.sigma * math.sqrt(2 * math.pi))

    def log_ratio(self, y, mean_num, mean_den):
        """ln f(y | m) − ln f(y | m′) = ((y − m′)² − (y − m)²)/(2σ²), written
        as (m − m′)(2y − m − m′)/(2σ²) (no cancellation of large squares)."""
        return (mean_num - mean_den) * (2 * y - mean_num - mean_den) / (2 * self.sigma ** 2)

    def cdf(self, y, mean):
        from scipy.special import ndtr   # here: importing scipy.special takes a third of a second
        return ndtr((np.asarray(y) - mean) / self.sigma)

    def __str__(self) -> str:
        return f"N(0, {self.sigma:.4g}²)"


@dataclass(frozen=True)
class Finite:
    """A release y ∈ {0, …, m − 1} drawn from row v of ``table``
    (P(y | v) = table[v][y]) where v ∈ {0, …, n − 1} is the true value:
    randomized response and other finite-output mechanisms.  ``means`` of the
    transcript model returns v (as a float array), the release is y."""

    table: tuple            # n rows of m probabilities, each row summing to 1
    kind = "finite"
    continuous = False

    def __post_init__(self):
        t = np.asarray(self.table, dtype=float)
        if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 2:
            raise ValueError(f"Finite table must be (values, outputs) with >= 2 outputs, got "
                             f"shape {t.shape}")
        if not (np.all(np.isfinite(t)) and np.all(t >= 0)
                and np.allclose(t.sum(axis=1), 1.0, rtol=0, atol=1e-12)):
            raise ValueError("Finite table rows must be probabilities summing to 1")
        object.__setattr__(self, "table", tuple(tuple(float(x) for x in row) for row in t))

    @staticmethod
    def randomized_response(epsilon: float, k: int = 2) -> "Finite":
        """k-ary randomized response: the true value with probability
        e^ε/(e^ε + k − 1), each other value with 1/(e^ε + k − 1)."""
        e = math.exp(epsilon)
        return Finite(tuple(tuple((e if i == j else 1.0) / (e + k - 1) for j in range(k))
                            for i in range(k)))

    @property
    def array(self) -> np.ndarray:
        return np.asarray(self.table, dtype=float)

    def _index(self, x, size: int, what: str):
        x = np.asarray(x, dtype=float)
        ok = np.isfinite(x)
        xs = np.where(ok, x, 0.0)
        i = xs.astype(np.int64)
        bad = ok & ((i != xs) | (i < 0) | (i >= size))
        if np.any(bad):
            raise ValueError(f"Finite law: {what} must be integers in [0, {size}), got "
                             f"{x[bad][:3].tolist()}")
        return i, ok

    def probability(self, y, value):
        """P(y | v) elementwise; NaN where y or v is NaN (nothing released)."""
        t = self.array
        v, okv = self._index(value, t.shape[0], "true values (means)")
        yy, oky = self._index(y, t.shape[1], "releases")
        return np.where(okv & oky, t[v, yy], np.nan)

    def log_density(self, y, mean):
        with np.errstate(divide="ignore"):
            return np.log(self.probability(y, mean))

    def log_ratio(self, y, mean_num, mean_den):
        """ln P(y | v) − ln P(y | v′); −inf where y is impossible under v,
        +inf where only v′ makes it impossible."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.log_density(y, mean_num) - self.log_density(y, mean_den)

    def __str__(self) -> str:
        t = self.array
        return f"finite law ({t.shape[0]} values × {t.shape[1]} outputs)"


def _positive(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
            or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


class TranscriptModel(NamedTuple):
    """How a learner's releases to its inner learner are distributed, so the
    transcript-scope privacy loss can be computed exactly.

    * ``released(state)``: the values released this round, shape ``(runs,)`` or
      ``(runs, d)``, NaN where nothing was released.
    * ``aux(state)``: per-round data the means need besides actions (or None).
    * ``means(actions, losses, aux, advice)``: given the actions ``(M, T)`` of a
      transcript, the losses ``(T, K)``, the recorded aux and the public
      advice (or None), the mean of each
      release, shape ``(M, n_releases[, d])``, in release order (for a
      ``Finite`` law: each release's true value).
    * ``scale``: the Laplace scale of the noise added to each mean (the
      shorthand for ``law=Laplace(scale)``, which every model had before
      other laws existed); or
    * ``law``: the noise law, ``Laplace(b)``, ``Gaussian(σ)`` or
      ``Finite(table)``.  Give one of ``scale`` and ``law``.
    * ``history_free``: the means depend on the losses only, not on the
      actions or aux (full-information learners releasing noisy sums):
      ``means`` may then be called with any actions and ``aux=None``, and
      the releases are a fixed product mechanism, so the worst case of a
      pair is computable.  Checked on the pilots like every declaration.
    * ``shift_bound(losses_a, losses_b, rounds, advice)`` (optional, for
      means that depend on the history): for each release of the first
      ``rounds`` rounds, an upper bound over *every* history on the
      distance between its means under the two loss sequences, in the norm
      the law's loss depends on (ℓ₁ for Laplace, ℓ₂ for Gaussian); shape
      ``(n_releases,)``.  It bounds the pair's worst case from above where
      ``history_free`` cannot be declared, and it is checked on the pilots'
      own histories.

    Every learner using it must choose actions from past releases and public
    data only, so that the action terms cancel in the loss.
    """

    released: Callable[[State], np.ndarray]
    means: Callable[..., np.ndarray]
    scale: Optional[float] = None
    aux: Optional[Callable[[State], np.ndarray]] = None
    law: Optional[object] = None
    history_free: bool = False
    shift_bound: Optional[Callable[..., np.ndarray]] = None

    @property
    def noise(self):
        """The declared noise law (``Laplace(scale)`` when only a scale is given)."""
        if self.law is not None:
            if self.scale is not None:
                raise ValueError("TranscriptModel: give either scale (Laplace) or law, not both")
            if not isinstance(self.law, (Laplace, Gaussian, Finite)):
                raise ValueError(f"TranscriptModel.law must be Laplace, Gaussian or Finite, got "
                                 f"{self.law!r}")
            return self.law
        if self.scale is None:
            raise ValueError("TranscriptModel needs a noise law (law=...) or a Laplace scale")
        return Laplace(float(self.scale))


class Learner(NamedTuple):
    """A bandit learner over ``n_arms`` arms (see module docstring).

    ``commit(state, advice, actions) -> state`` records actions chosen from
    ``probs`` without sampling them, so a white-box replay can force any
    history (``act`` is ``commit`` of a sampled action).  Learners whose only
    randomness is that sampling provide both ``probs`` and ``commit``.
    """

    init: Callable[[int, Rng], State]
    act: Callable[[State, Optional[np.ndarray], Rng], tuple[State, np.ndarray]]
    feed: Callable[[State, np.ndarray, np.ndarray, Rng], State]
    n_arms: int
    probs: Optional[Callable[[State, Optional[np.ndarray]], np.ndarray]] = None
    commit: Optional[Callable[[State, Optional[np.ndarray], np.ndarray], State]] = None
    transcript: Optional[TranscriptModel] = None
    # Optional fast path for replaying ONE history: (losses (T, K), actions (T,))
    # -> P_t (T, K).  Vectorising over runs does not help a single history; a
    # scalar loop is ~50x faster there (Figure 1 replays 10^6 rounds).
    replay: Optional[Callable[[np.ndarray, np.ndarray], np.ndarray]] = None
    feedback: str = "bandit"      # "bandit" | "full" | "stream" (see module docstring)
    point: Optional[Callable[[State], np.ndarray]] = None
    incurred: Optional[Callable[[State, np.ndarray], np.ndarray]] = None
    # State fields kept once for all runs on purpose (no runs axis) although
    # they depend on the losses, e.g. full-information window sums that every
    # run shares.  Dotted paths into nested states ("base.window").  A
    # white-box replay keeps one state per side, so such a field is replayed
    # correctly; the declaration checks refuse an undeclared one, and any
    # shared field that depends on a run's own randomness.
    shared: tuple = ()
    # A mechanism that sees its whole input at once (a plain function,
    # ``algorithms.as_written.functions``): ``whole(losses (T, K), runs,
    # rng) -> (codes (runs, T), {round: numbers (runs, d)} or None)``.  The
    # simulation calls it instead of init/act/feed; ``feedback`` is then
    # "stream" and ``point`` only says that numbers are observed.
    whole: Optional[Callable] = None
    # One run of code written as one call or one object per run (a function
    # or a class as written): ``one_run(losses (T, K), rng, seed) -> what
    # that run outputs``, on a generator the caller gives; a seed parameter
    # of the code receives ``seed`` (or ``rng`` itself where it takes a
    # generator).  The exact replay (``algorithms.replay``) calls it with
    # draws it chooses, and routes the code's global draws and the
    # generators it builds from that seed to ``rng``.
    one_run: Optional[Callable] = None
    # The same for code written batched (a function with a size parameter):
    # ``one_batch(losses, rng, runs, seed) -> outputs of runs runs, the runs
    # axis first`` (an array or a tuple of arrays).
    one_batch: Optional[Callable] = None
    # The values the learner releases this round besides its actions
    # (``released(state) -> (runs,)`` or ``(runs, d)``, NaN where nothing is
    # released), read after the round's last call.  It needs no noise law:
    # black-box events and the learned witness read the releases of a claim
    # whose scope is "transcript".  A ``TranscriptModel`` supplies one too
    # (``released_of``).
    released: Optional[Callable[[State], np.ndarray]] = None
    # A round's code made of several codes, e.g. two mechanisms' answers
    # side by side: their sizes, most significant first (code = c_1·s_2 + c_2
    # for two parts), whose product is ``n_arms``.  Black-box events then
    # read each part's sequence on its own as well.  Only events rest on it,
    # and any fixed event is a valid test: a wrong declaration costs power,
    # never a bound's validity.
    code_parts: tuple = ()

    @property
    def released_of(self) -> Optional[Callable[[State], np.ndarray]]:
        """The accessor of the values released besides the actions: the
        learner's own ``released``, else its transcript model's, else None."""
        if self.released is not None:
            return self.released
        return self.transcript.released if self.transcript is not None else None

    @property
    def full_rows(self) -> bool:
        """``feed`` receives whole rows (full information or a stream)."""
        return self.feedback in ("full", "stream")

    @property
    def reads_first(self) -> bool:
        """Each round's ``feed`` comes before its ``act`` (a stream mechanism)."""
        return self.feedback == "stream"


@dataclass(frozen=True)
class Claim:
    """A privacy claim, as data: what is promised, about what, and by whom.

    ``scope`` is one of ``actions``, ``transcript`` or ``per-round``: a
    paper's theorem is about its algorithm's output (``actions``: the arms,
    experts or points it plays), and evidence about a wider object (released
    noisy values) is then the proof's intermediate object, never a verdict.
    ``output`` says in words what that output is ("the experts chosen
    J_1..J_T (Definition 2.1)"; None: the actions).  ``relation`` is the
    neighbouring relation: ``one-round`` (the sequences differ in one
    round's row; with ``max_change`` Δ, each of that row's values by at
    most Δ — a histogram's neighbours differ by one count in one bin) or
    ``bounded-all`` (every round's values may change, each by at most
    ``max_change`` Δ, which it requires: the relation of the DP testers'
    benchmark, where every query answer has sensitivity 1; with one round
    the two coincide).  ``per_round_epsilon`` is set when the claim is a
    composition of per-round guarantees (the EXP3 claim), so white-box
    audits can check each round.  Fields are checked on construction (ε ≥ 0
    finite, 0 ≤ δ < 1, a known scope and relation); a ``ValueError`` names
    the field and what is allowed.
    """

    epsilon: float
    delta: float
    scope: str
    source: str
    per_round_epsilon: Optional[float] = None
    output: Optional[str] = None
    relation: str = "one-round"
    max_change: Optional[float] = None
    # A claim stated as a curve: ("gdp", μ) or ("zcdp", ρ)
    # (``algorithms.claim_curves``); ``epsilon``/``delta`` are then the
    # point of its δ(ε) curve an event test aims at (``Claim.of_curve``),
    # and a certified δ(ε) above the curve anywhere refutes it.
    curve: Optional[tuple] = None

    SCOPES = ("actions", "transcript", "per-round")
    RELATIONS = ("one-round", "bounded-all")

    def __post_init__(self):
        def number(name, value):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
                raise ValueError(f"Claim.{name} must be a number, got {value!r}")
            return float(value)

        if self.scope not in self.SCOPES:
            raise ValueError(f"Claim.scope must be one of {', '.join(self.SCOPES)}, "
                             f"got {self.scope!r}")
        eps = number("epsilon", self.epsilon)
        if not (eps >= 0 and np.isfinite(eps)):
            raise ValueError(f"Claim.epsilon must be a finite number >= 0, got {self.epsilon!r}")
        delta = number("delta", self.delta)
        # δ = 1 promises nothing; only group scaling may reach it (_vacuous).
        if not (0 <= delta < 1 or (delta == 1 and getattr(self, "_allow_vacuous", False))):
            raise ValueError(f"Claim.delta must be in [0, 1), got {self.delta!r}")
        if self.per_round_epsilon is not None:
            per = number("per_round_epsilon", self.per_round_epsilon)
            if not (per >= 0 and np.isfinite(per)):
                raise ValueError(f"Claim.per_round_epsilon must be None or a finite number "
                                 f">= 0, got {self.per_round_epsilon!r}")
        if self.relation not in self.RELATIONS:
            raise ValueError(f"Claim.relation must be one of {', '.join(self.RELATIONS)}, "
                             f"got {self.relation!r}")
        if self.max_change is not None:
            dm = number("max_change", self.max_change)
            if not (dm > 0 and np.isfinite(dm)):
                raise ValueError(f"Claim.max_change must be None or a finite number > 0, got "
                                 f"{self.max_change!r}")
        elif self.relation == "bounded-all":
            raise ValueError("Claim.max_change must be set for relation 'bounded-all' (the most "
                             "each value may change between neighbours)")
        if self.output is not None and not isinstance(self.output, str):
            raise ValueError(f"Claim.output must be None or words naming the output, got "
                             f"{self.output!r}")
        if not isinstance(self.source, str):
            raise ValueError(f"Claim.source must be a string (paper, lemma), got "
                             f"{self.source!r}")
        if self.curve is not None:
            from .claim_curves import KINDS
            ok = (isinstance(self.curve, tuple) and len(self.curve) == 2
                  and self.curve[0] in KINDS)
            if ok:
                v = number("curve value", self.curve[1])
                ok = v > 0 and np.isfinite(v)
            if not ok:
                raise ValueError(f"Claim.curve must be ('gdp', μ) or ('zcdp', ρ) with a finite "
                                 f"number > 0, got {self.curve!r}")

    @staticmethod
    def of_curve(kind: str, value: float, scope: str, source: str, **kw) -> "Claim":
        """A μ-GDP (``kind="gdp"``) or ρ-zCDP (``"zcdp"``) claim, its event
        tests aimed at the curve's reference point (``claim_curves``)."""
        from .claim_curves import KINDS, reference_point
        if kind not in KINDS:
            raise ValueError(f"claim curve must be one of {', '.join(KINDS)}, got {kind!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                or not (value > 0 and math.isfinite(value)):
            raise ValueError(f"the {kind} claim's {'μ' if kind == 'gdp' else 'ρ'} must be a "
                             f"finite number > 0, got {value!r}")
        eps, delta = reference_point(kind, float(value))
        return Claim(eps, delta, scope, source, curve=(kind, float(value)), **kw)

    def delta_at(self, eps) -> np.ndarray:
        """The claim's δ(ε): its curve, or the profile every (ε₀, δ₀)-DP
        mechanism lies under."""
        from .claim_curves import approx_delta, curve_delta
        if self.curve is not None:
            return curve_delta(self.curve[0], self.curve[1], eps)
        return approx_delta(eps, self.epsilon, self.delta)

    @property
    def words(self) -> str:
        """The claim's figures: ``ε = 0.5``, ``ε = 1, δ = 1e-06``, ``1-GDP``."""
        if self.curve is not None:
            from .claim_curves import words
            return words(*self.curve)
        return f"ε = {self.epsilon:g}" + (f", δ = {self.delta:g}" if self.delta else "")

    def scaled_for_group(self, k: int) -> "Claim":
        """Group privacy (Dwork & Roth Thm 2.2): k changed rounds give
        (kε, k·e^{(k−1)ε}·δ), δ capped at 1 (a vacuous claim)."""
        if k == 1:
            return self
        if self.curve is not None:
            from .claim_curves import scaled
            kind, value = self.curve
            return Claim.of_curve(kind, scaled(kind, value, k), self.scope,
                                  f"{self.source}; scaled by group privacy for {k} changed "
                                  f"rounds", output=self.output, relation=self.relation,
                                  max_change=self.max_change)
        eps = k * self.epsilon
        delta = min(1.0, k * np.exp((k - 1) * self.epsilon) * self.delta) if self.delta else 0.0
        source = f"{self.source}; scaled by group privacy for {k} changed rounds"
        kept = {"output": self.output, "relation": self.relation, "max_change": self.max_change}
        if delta >= 1.0:
            return _VacuousClaim(eps, 1.0, self.scope, source, **kept)
        return Claim(eps, float(delta), self.scope, source, **kept)

    @staticmethod
    def override(base: Optional["Claim"], epsilon: Optional[float], delta: Optional[float],
                 source: str, per_round_epsilon: Optional[float] = None) -> Optional["Claim"]:
        """The claim to audit against when a user overrides ε, δ and/or the
        per-round ε_t: what is not set comes from ``base`` (the algorithm's
        own claim, including its per-round ε_t); None when nothing is set."""
        if epsilon is None and delta is None and per_round_epsilon is None:
            return None
        if epsilon is None and base is None:
            raise ValueError("a claim override needs an epsilon (--claim-epsilon, claim_epsilon) "
                             "for an algorithm that declares no claim")
        # A curve claim's δ is only the point its tests aim at: an ε given
        # over it is a pure ε claim unless a δ is given too.
        return Claim(base.epsilon if epsilon is None else epsilon,
                     (base.delta if base and base.curve is None else 0.0)
                     if delta is None else delta,
                     base.scope if base else "actions", source,
                     (base.per_round_epsilon if base else None) if per_round_epsilon is None
                     else per_round_epsilon,
                     base.output if base else None, base.relation if base else "one-round",
                     base.max_change if base else None)

    @staticmethod
    def override_curve(base: Optional["Claim"], kind: str, value: float,
                       source: str) -> "Claim":
        """``base`` (the algorithm's own claim, or None) restated as a μ-GDP
        or ρ-zCDP curve claim (``--claim-mu``, ``--claim-rho``): its scope,
        output and relation kept."""
        return Claim.of_curve(kind, value, base.scope if base else "actions", source,
                              output=base.output if base else None,
                              relation=base.relation if base else "one-round",
                              max_change=base.max_change if base else None)

    @property
    def about(self) -> str:
        """What the claim is about, in words: its output and relation."""
        what = self.output or {"actions": "the actions", "transcript": "the actions and the "
                               "released noisy values", "per-round": "each round's action"
                               }[self.scope]
        return f"{what}; neighbours: {self.relation_words}"

    @property
    def relation_words(self) -> str:
        """The neighbouring relation with its bound Δ, e.g. ``bounded-all, Δ = 1``."""
        return self.relation + ("" if self.max_change is None else f", Δ = {self.max_change:g}")

    def not_neighbours(self, a: np.ndarray, b: np.ndarray, group_size: int = 1) -> Optional[str]:
        """Why two loss sequences are not neighbours under this claim's
        relation (None when they are).  ``one-round``: they differ at exactly
        ``group_size`` rounds (a group of changed rounds, the claim then
        scaled by group privacy), each value by at most Δ if set;
        ``bounded-all``: they differ somewhere, every value by at most Δ
        (no group scaling)."""
        if a.shape != b.shape:
            return "the two loss sequences have different shapes"
        diff = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
        rows = np.flatnonzero(np.any(diff > 0, axis=1))
        if self.relation == "bounded-all":
            if group_size != 1:
                return (f"relation bounded-all has no groups of changed rounds (the attack "
                        f"declares {group_size})")
            if rows.size == 0:
                return "the two loss sequences are identical"
        elif rows.size != group_size:
            return (f"loss sequences differ at {rows.size} rounds, but the attack declares a "
                    f"group of {group_size}" if group_size != 1 else
                    f"loss sequences differ at {rows.size} rounds; relation one-round allows "
                    f"exactly one")
        if self.max_change is not None:
            worst = float(diff.max()) if diff.size else 0.0
            if worst > self.max_change * (1 + 1e-12):
                t = int(np.argwhere(diff == diff.max())[0][0])
                return (f"a value changes by {worst:g} at round {t + 1}; relation "
                        f"{self.relation_words} allows at most {self.max_change:g}")
        return None

    def as_dict(self) -> dict:
        d = {"epsilon": self.epsilon, "delta": self.delta, "scope": self.scope,
             "source": self.source, "output": self.output, "relation": self.relation}
        if self.max_change is not None:
            d["max_change"] = self.max_change
        if self.per_round_epsilon is not None:
            d["per_round_epsilon"] = self.per_round_epsilon
        if self.curve is not None:
            d["curve"] = {"kind": self.curve[0], "value": self.curve[1], "claim": self.words,
                          "reference_point": {"epsilon": self.epsilon, "delta": self.delta}}
        return d


@dataclass(frozen=True)
class _VacuousClaim(Claim):
    """A claim whose δ reached 1 by group scaling: it promises nothing, and is
    the only claim allowed δ = 1."""

    _allow_vacuous = True


@dataclass
class Algorithm:
    """A fully parameterised algorithm, ready to simulate and audit.

    ``rebuild`` (for conversions that hold for every base learner) returns the
    same conversion around another base learner; the canary attack uses it.
    ``base_arms`` is the number of arms that base learner must have.
    """

    name: str
    learner: Learner
    claim: Claim
    horizon: int
    n_arms: int
    params: dict
    n_experts: Optional[int] = None
    rebuild: Optional[Callable[[Learner], "Algorithm"]] = None
    base_arms: Optional[int] = None
    default_attacks: tuple = ()
    notes: str = ""
    extra: dict = field(default_factory=dict)
    # Validates a loss sequence when its rows are not losses in a box (e.g.
    # the parameters of convex loss functions); returns the checked array.
    check_losses: Optional[Callable[[np.ndarray], np.ndarray]] = None
    # The loss class the privacy claim assumes, per coordinate of a loss row:
    # every ℓ_t lies in [lo, hi]^K, and neighbouring sequences may differ at
    # one round anywhere in that box (so by up to hi − lo per coordinate).
    # The validator refuses losses outside it, and every attack, the neighbour
    # search and the regret instances build their losses inside it.  Only for
    # rows that are losses (no ``check_losses``).
    loss_range: tuple = (0.0, 1.0)

    def __post_init__(self):
        lr = self.loss_range
        ok = isinstance(lr, (tuple, list)) and len(lr) == 2 and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            for v in lr)
        if not ok or not (math.isfinite(lr[0]) and math.isfinite(lr[1]) and lr[0] < lr[1]):
            raise ValueError(f"Algorithm.loss_range must be a pair (lo, hi) of finite numbers "
                             f"with lo < hi, got {lr!r}")
        self.loss_range = (float(lr[0]), float(lr[1]))

    def midpoint(self) -> np.ndarray:
        """Every loss at the middle of the loss range, (T, K): the input the
        probes of its speed and replay run on."""
        return np.full((self.horizon, self.n_arms), float(np.mean(self.loss_range)))

    @property
    def needs_advice(self) -> bool:
        return self.n_experts is not None


def sample_categorical(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling, one uniform per run: the action is the number of
    cumulative probabilities strictly below ``u``.  ``p`` is ``(runs, K)`` or
    ``(K,)``.  The per-run reference implementations use the same rule, so the
    vectorised code and the references consume one random stream identically."""
    xp = xp_of(p)
    p = xp.asarray(p)
    if p.ndim == 1:
        c = xp.cumsum(p[:-1])
        return xp.minimum(xp.searchsorted(c, u, side="right"), p.shape[0] - 1)
    if p.shape[1] == 2:
        return (u >= p[:, 0]).astype(np.int64)
    c = xp.cumsum(p[:, :-1], axis=1)
    return (u[:, None] >= c).sum(axis=1)


def sample_one(p: np.ndarray, u: float) -> int:
    """Scalar twin of ``sample_categorical`` for the per-run references."""
    c = 0.0
    for i in range(len(p) - 1):
        c += p[i]
        if u < c:
            return i
    return len(p) - 1


def softmax_rows(logw: np.ndarray) -> np.ndarray:
    z = logw - logw.max(axis=-1, keepdims=True)
    w = xp_of(z).exp(z)
    return w / w.sum(axis=-1, keepdims=True)
