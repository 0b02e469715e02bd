"""The one interface every kind of evidence implements, and the α
bookkeeping over all of them.

Lifecycle of a piece of evidence about one neighbouring pair:

1. ``shares``: how many bounds it uses that can err (a black-box event test
   uses 2: one lower bound on the numerator, one upper bound on the
   denominator, after selection; a loss distribution 2: one DKW band per
   direction; exact evidence 0).
2. optionally, a pilot stage: ``pilot_requests(trials)`` are runs it needs
   before it can say what to count (e.g. training runs for a learned
   witness); their results go to ``prepared(samples)``, under their own
   progress phase (``pilot_phase``), before ``requests`` is asked.  A
   further stage, fixed by the first, comes from ``next_pilot_requests``
   (coupled runs count their events, the witness among them, once it is
   trained).  A pilot
   takes no α share: whatever it fixes is fixed before the runs that the
   bounds use, and it must draw from streams no one else uses.
3. ``requests(trials)``: the runs it needs, as ``audit.engine.sampling``
   requests; the sampler runs them through the one executor.
4. ``conclude(samples, alpha)``: turns the chunk results into a result
   object (``EvidenceResult``), each fallible bound at level ``alpha``.

``collect`` runs a list of evidence and gives each bound the same share
α = (1 − confidence)/Σ shares (Bonferroni), so all bounds of an audit hold
together with probability ≥ confidence, by construction.

May import: ``audit.engine.sampling`` (and, in the kinds, ``algorithms``,
``audit.engine.bounds``/``privacy_loss``, ``algorithms.simulate``).
"""
from __future__ import annotations

import math

from audit.engine.sampling import Request, Sampler


class EvidenceResult:
    """What every result object offers (the kinds are dataclasses with
    these fields and properties): ``kind``, ``attack``, ``label``,
    ``epsilon_lower_bound``, ``per_record_lower_bound`` (what counts toward
    the audit's ε_lb; 0 for evidence about something other than the total
    ε), ``violation``, ``exact``, ``informational``, ``alpha`` (the level of
    each fallible bound), ``shares``, ``ceiling`` (the largest per-record ε
    the budget could show, None when not limited by a budget), ``as_dict()``
    (its entry in the result document) and ``summary_lines(confidence)``."""

    # No class-level defaults here: the kinds are dataclasses, and an
    # inherited default would turn their required fields into optional ones.

    @property
    def alpha_spent(self) -> float:
        """This result's part of 1 − confidence."""
        return self.shares * self.alpha

    def _repr_fields(self) -> dict:
        return {}

    def __repr__(self) -> str:
        if self.informational:
            verdict = "information only"
        elif getattr(self, "intermediate", False):
            verdict = "intermediate object, not a verdict"
        else:
            verdict = "violation" if self.violation else "consistent"
        fields = {"label": self.label, "epsilon_lower_bound": self.epsilon_lower_bound,
                  "exact": self.exact, **self._repr_fields(), "verdict": verdict}
        body = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v!r}"
                         for k, v in fields.items())
        return f"{type(self).__name__}({body})"


class Evidence:
    """One kind of evidence about one scenario (a neighbouring pair).
    ``index`` is the scenario's place in the audit (it names the streams),
    ``claim`` the claim this pair is judged against (scaled for its group)."""

    kind: str = ""
    shares: int = 0
    unit: str = "runs"
    # The α of each of its bounds, announced by ``collect`` before any
    # stage runs (a pilot that plans its test for a level reads it).
    planned_alpha: float = 0.0

    def __init__(self, scenario, index: int, claim):
        self.scenario, self.index, self.claim = scenario, index, claim

    @property
    def phase(self) -> str:
        return f"{self.kind} {self.scenario.label}"

    @property
    def pilot_phase(self) -> str:
        return f"{self.kind} pilot {self.scenario.label}"

    def pilot_requests(self, trials: int) -> list[Request]:
        """Runs needed before ``requests`` (none by default)."""
        return []

    def next_pilot_requests(self, trials: int) -> list[Request]:
        """Runs of a further pilot stage, asked after each stage's
        ``prepared`` (none by default: one stage); each stage gets its own
        phase, ``prepared`` call and kept state."""
        return []

    def prepared(self, samples: list[list]) -> None:
        """Receives the chunk results of ``pilot_requests`` (or of the
        latest ``next_pilot_requests``), in request order."""

    def pilot_state(self):
        """What ``prepared`` fixed, picklable, for the store to keep (None:
        nothing worth keeping; the pilot runs again on a rerun)."""
        return None

    def restore(self, state) -> None:
        """Takes back a ``pilot_state`` kept by an earlier run of the same
        audit instead of running the pilot again."""

    def requests(self, trials: int) -> list[Request]:
        return []

    def conclude(self, samples: list[list], alpha: float) -> EvidenceResult:
        raise NotImplementedError


def alpha_per_share(evidence: list[Evidence], confidence: float) -> float:
    """(1 − confidence) split evenly over every fallible bound of the audit;
    0 when nothing can err."""
    total = sum(e.shares for e in evidence)
    return (1.0 - confidence) / total if total else 0.0


def collect(evidence: list[Evidence], trials: int, confidence: float,
            sampler: Sampler) -> list[EvidenceResult]:
    """Sample and conclude every piece of evidence, in order (each one's
    pilot stage, if it has one, just before its own runs)."""
    alpha = alpha_per_share(evidence, confidence)
    out = []
    for e in evidence:
        # A pilot that plans its test for a level (coupled runs) reads it here.
        e.planned_alpha = alpha if e.shares else 0.0
        # With a store, each result is kept under the audit's fingerprint: a
        # rerun whose chunks are all stored reads the results back (the
        # chunks are counted as from the store) instead of loading every
        # chunk, retraining witnesses and recomputing exact evidence.
        key = f"result:{e.kind}:{e.index}:{alpha!r}"
        result = sampler.kept(key)
        if result is not None:
            sampler.count_stored(e.requests(trials))
            out.append(result)
            continue
        pilot, stage = e.pilot_requests(trials), 0
        while pilot:
            if type(e).pilot_state is Evidence.pilot_state:
                sampler.sample(e.pilot_phase, pilot, e.unit, then=e.prepared)
            else:   # kept in the store: a resumed run neither samples nor prepares again
                def prepare(samples, e=e):
                    e.prepared(samples)
                    return e.pilot_state()
                e.restore(sampler.prepared(e.pilot_phase, pilot, prepare, e.unit,
                                           key=f"pilot:{e.kind}:{e.index}"
                                               + (f":{stage}" if stage else "")))
            stage += 1
            pilot = e.next_pilot_requests(trials)
        wanted = e.requests(trials)
        # The conclusion (bounds, integrals, a loss distribution's δ(ε)) is
        # part of the evidence's phase: no silent stretch between phases.
        result = sampler.sample(e.phase, wanted, e.unit,
                                then=lambda samples, e=e: e.conclude(
                                    samples, alpha if e.shares else 0.0))
        sampler.keep(key, result)
        out.append(result)
    spent = sum(r.alpha_spent for r in out)
    # The bookkeeping is exact by construction; a kind whose result reports
    # other shares than it declared would break the guarantee.
    if spent and not math.isclose(spent, 1.0 - confidence, rel_tol=1e-9):
        raise AssertionError(f"α shares sum to {spent}, not 1 − confidence = {1 - confidence}")
    return out
