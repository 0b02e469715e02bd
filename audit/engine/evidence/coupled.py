"""Black-box evidence from coupled runs (``--coupled``): both sides of a
pair run in blocks that share a seed, and one test of the blocks' counts
(``audit.engine.coupled``) bounds ε.

Still black-box: it reads only what the mechanism outputs, and needs of
the code only that it draws from the generator the audit hands it (code
that does not — its own entropy — stays valid, just without the gain).

Two stages on streams no other evidence uses:

1. pilot, stream ``[seed, index, 5]`` (no α share): blocks of runs, both
   sides from one seed per block, every event of the scenario's family
   counted per block; the family's ranked unions (from the pilot's
   totals) and every candidate's complement join them, and
   ``audit.engine.coupled.plan`` fixes the event, its direction and the
   test: the bet (with its truncation and ceiling), or two Clopper–Pearson
   bounds on the held-out totals where the pilot predicts more from them;
2. test, stream ``[seed, index, 6]``: blocks of the same size, the one
   fixed event counted per block on both sides; one bound at one α share.

Where the independent test would add a learned witness or release events
(``event_test``), their pilot runs first, on the same streams 3 and 4, and
the coupled pilot counts them with the scenario's own events.

May import: ``algorithms.simulate``, ``attacks.events``, ``audit.execution.runs``,
``audit.engine.bounds``, ``audit.engine.coupled``, ``audit.engine.sampling``,
``audit.engine.unions``, ``audit.engine.words``, ``audit.engine.evidence``,
``audit.execution.blocks``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.simulate import simulate
from attacks.events import count_blocks, release_rounds_of
from audit.engine.bounds import EventTest, max_detectable_epsilon, one_sided_bounds
from audit.engine.coupled import Design, Plan, max_coupled_epsilon, plan, plan_lower_bound
from audit.engine.evidence.event_test import (EventTestEvidence, EventTestResult,
                                              short_inputs)
from audit.engine.sampling import Request
from audit.execution.blocks import BlockedGenerator
from audit.execution.runs import DEFAULT_CHUNK
from audit.engine.unions import with_ranked_unions
from audit.engine.words import code_labels, event_label, final_output

STREAMS = (5, 6)            # pilot, test
PILOT_SHARE = 0.2           # of the runs a side, for choosing the event and the bet
TARGET_BLOCKS = 2_000       # held-out blocks aimed at; the block size follows from it
MIN_BLOCK, MAX_BLOCK = 16, 512
MIN_PILOT_BLOCKS = 20
BLOCKS = 0x626c6b          # "blk": the spawn-key word of a chunk's block seeds
# Where the test may stop early (``early``): the shares of the held-out
# blocks after which it is read, before the last block.  Looks cost the
# bet's guard on Q a factor in its level (α/L, L = these + 1), not the bet
# itself; a Clopper–Pearson test half its α (``coupled.look_level``).
LOOKS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4)


def _chunk(m: int) -> int:
    """Runs a stored chunk holds: whole blocks, about ``DEFAULT_CHUNK``."""
    return m * max(1, DEFAULT_CHUNK // m)


def block_size(test_runs: int) -> int:
    """Runs a block: a power of two giving about ``TARGET_BLOCKS`` held-out
    blocks, within [MIN_BLOCK, MAX_BLOCK].  More blocks let the fixed bet
    be larger (its cap is per block); fewer, larger blocks cost less
    per-call overhead.  With the truncated bet (``audit.engine.coupled``)
    a few thousand blocks reach the coupling's own variance."""
    m = max(1, test_runs // TARGET_BLOCKS)
    return int(min(MAX_BLOCK, max(MIN_BLOCK, 1 << (m.bit_length() - 1))))


def split(trials: int) -> tuple[int, int, int]:
    """(block size, pilot blocks, test blocks) for ``trials`` runs a side."""
    m = block_size(int(trials * (1 - PILOT_SHARE)))
    m = max(1, min(m, trials // (2 * MIN_PILOT_BLOCKS)))
    blocks = max(2 * MIN_PILOT_BLOCKS, trials // m)
    pilot = max(MIN_PILOT_BLOCKS, int(round(blocks * PILOT_SHARE)))
    return m, pilot, max(MIN_PILOT_BLOCKS, blocks - pilot)


def _blocks_task(scenario, events, m: int, members=None, blocked: bool = True):
    """``task(runs, rng)``: the chunk's runs in blocks of ``m``, both sides
    of each block from one child seed of the chunk's stream; per block, the
    counts of every event (``members`` None) or of the union ``members``,
    on each side.  Every block has ``m`` runs (callers ask for a multiple
    of ``m``).  ``blocked``: the learner may run a chunk's blocks in one
    call (``blocks_probe``); else each block is a call of its own."""
    wanted = tuple(getattr(events, "point_rounds", ()))
    releases = release_rounds_of(events)
    alg = scenario.algorithm

    def tally(actions, observed):
        # Every block of the chunk in one pass (``attacks.events.count_blocks``).
        if members is None:
            return count_blocks(events, actions, observed, m)
        return _members_blocks(events, actions, observed, list(members), m)

    def run(losses, size, rng):
        return simulate(alg, losses, size, rng, advice=scenario.advice, rounds=scenario.rounds,
                        point_rounds=wanted, release_rounds=releases)

    def by_block(losses, seeds):
        """Every block's counts from one call on all of them (``BlockedGenerator``),
        or None where the learner's draws cannot be cut by block."""
        g = BlockedGenerator(seeds, m)
        try:
            tr = run(losses, m * len(seeds), g)
        except Exception:
            if g.failed is None:
                raise
        if g.failed is not None:
            blockable[0] = False
            return None
        return tally(tr.actions, tr.observed())

    def one_call_each(losses, seeds):
        """Each block in a call of its own, counted together."""
        traces = [run(losses, m, np.random.default_rng(s)) for s in seeds]
        seen = [tr.observed() for tr in traces]
        obs = None if seen[0] is None else {k: np.concatenate([o[k] for o in seen])
                                             for k in seen[0]}
        return tally(np.concatenate([tr.actions for tr in traces]), obs)

    # Only a learner that says every draw is a row per run, made whatever
    # the runs' data (``Entry.row_draws``, checked by tests/test_blocks.py
    # for every registered one and by ``blocks_probe`` on the audit's own
    # pair for every learner), runs its blocks in one call: one that draws
    # only when some run needs it would draw for block j because of block
    # k, and blocks would no longer be independent.  Cleared for good (in
    # this process) by the first draw that cannot be cut by block.
    blockable = [bool(blocked and alg.extra.get("row_draws"))]

    def task(runs, rng):
        if runs % m:
            raise ValueError(f"coupled blocks: {runs} runs is not a multiple of {m}")
        # Built from the chunk's own seed, not spawned from its object (whose
        # spawn counter a second run of the same chunk would have moved).
        ss = rng.bit_generator.seed_seq
        seeds = [np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (BLOCKS, j))
                 for j in range(runs // m)]
        dtype = np.int32 if members is None else np.int64
        if blockable[0] and len(seeds) > 1:
            a = by_block(scenario.losses_a, seeds)
            b = by_block(scenario.losses_b, seeds) if a is not None else None
            if b is not None:
                return np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
        return (np.asarray(one_call_each(scenario.losses_a, seeds), dtype=dtype),
                np.asarray(one_call_each(scenario.losses_b, seeds), dtype=dtype))
    return task


# The probe of a learner's blocked draws: this many blocks of this many
# runs, on streams no audit run uses (four entropy words; audit chunks have
# a spawn key).
PROBE_BLOCKS, PROBE_RUNS = 4, 16
PROBE_WORDS = (0xB10C, 0x9B0BE, 0, 0)


def blocks_probe(alg, losses_pair, advice=None, rounds=None) -> str:
    """How coupled runs of the vectorised learner ``alg`` may run a chunk's
    blocks: ``"blocked"`` — in one call (``BlockedGenerator``), its
    ``row_draws`` declaration confirmed on a probe of its own pair, both
    sides, the whole prefix: the blocks run together play, block for
    block, exactly what each block run alone plays; ``"per-block"`` — a
    call each (no declaration, or a draw that cannot be cut by row);
    ``"refused"`` — declared, but the blocks run together played otherwise
    than run alone: the declaration is false (a draw made only when some
    run needs it), and blocks run a call each.  The probe can miss a
    dependence its few runs do not show; registered learners are checked
    on many more (tests/test_blocks.py)."""
    if not alg.extra.get("row_draws"):
        return "per-block"
    seeds = [np.random.SeedSequence(list(PROBE_WORDS[:3]) + [j]) for j in range(PROBE_BLOCKS)]
    for losses in losses_pair:
        g = BlockedGenerator(seeds, PROBE_RUNS)
        try:
            whole = simulate(alg, losses, PROBE_RUNS * PROBE_BLOCKS, g, advice=advice,
                             rounds=rounds)
        except Exception:
            if g.failed is None:
                raise
        if g.failed is not None:
            return "per-block"
        alone = [simulate(alg, losses, PROBE_RUNS, np.random.default_rng(s), advice=advice,
                          rounds=rounds).actions for s in seeds]
        if not np.array_equal(np.asarray(whole.actions), np.concatenate(alone)):
            return "refused"
    return "blocked"


def _members_blocks(family, actions, observed, members, m) -> np.ndarray:
    """Per block of ``m`` runs, the summed counts of the family's events
    ``members`` (indices into its labels), counting only the parts of a
    ``Union`` that hold one: the held-out blocks need one event, not the
    family's thousands."""
    parts = getattr(family, "parts", None)
    if parts is None:
        return count_blocks(family, actions, observed, m)[:, members].sum(axis=1)
    total, offset = np.zeros(len(actions) // m, dtype=np.int64), 0
    for part in parts:
        n = len(part.labels)
        mine = [i - offset for i in members if offset <= i < offset + n]
        if mine:
            total = total + _members_blocks(part, actions, observed, mine, m)
        offset += n
    return total


@dataclass(repr=False)
class CoupledTestResult(EventTestResult):
    """An event test on coupled blocks: ``test`` carries the event, its
    direction and the held-out totals; its ``Bound``s are each side's
    Clopper–Pearson bounds at α/2 — the bound used where the pilot chose
    the independent-runs test (``coupled_test`` False), for reading where
    it chose the coupled bet (whose ε_lb ``test`` carries)."""

    block_runs: int = 0
    blocks: int = 0
    design: Optional[Design] = None
    predicted: float = 0.0
    coupled_test: bool = True
    # A test that could stop early: the looks it could take (0: read once)
    # and the held-out blocks it planned (``blocks`` those it read).
    looks: int = 0
    planned_blocks: int = 0
    shares = 1

    @property
    def stopped_early(self) -> bool:
        return bool(self.looks) and self.blocks < self.planned_blocks

    def profile_bounds(self):
        """Each side's Clopper–Pearson bound where they are the test; the
        bet certifies its one point (ε_lb at the claim's δ) only."""
        return None if self.coupled_test else super().profile_bounds()

    def summary_lines(self, confidence: float) -> list[str]:
        lines = super().summary_lines(confidence)
        g = self.design
        how = (f"one bet λ = {g.lam:.4g}, counts truncated at {g.trunc}, both fixed on pilot "
               f"blocks" if self.coupled_test else
               "the pilot predicted two Clopper–Pearson bounds on the totals, at α/2 each, "
               "would show more than a bet (an event the coupling does not keep together, or "
               "one never seen on the denominator side)")
        read = (f"{self.blocks:,} of {self.planned_blocks:,} planned held-out blocks (stopped "
                f"once the violation was certain)" if self.stopped_early else
                f"{self.blocks:,} held-out blocks")
        lines.insert(1, f"  {'':30s} coupled runs: {read} of "
                        f"{self.block_runs} runs a side, both sides of a block from one seed; "
                        + how)
        return lines

    def _estimates(self) -> dict:
        """Each side's probability with its Clopper–Pearson bounds at α/2 —
        the bounds the independent-runs test uses; for reading where the
        bet decided."""
        out = {}
        for side, b in (("numerator", self.test.numerator),
                        ("denominator", self.test.denominator)):
            out[side] = {"p_hat": b.count / b.trials if b.trials else 0.0,
                         "lower": b.lower, "upper": b.upper}
        return out

    def as_dict(self) -> dict:
        d = super().as_dict()
        t, g = self.test, self.design
        if self.coupled_test:
            d["bounds"] = {"method": "coupled runs: one fixed bet on independent blocks "
                                     "(Ville's inequality), denominator counts truncated",
                           "bet": g.lam, "truncation": g.trunc, "tau": g.tau, "q_max": g.q_max,
                           "c_max": g.c_max}
        else:
            d["bounds"] = {"method": "coupled runs, tested as independent ones: Clopper–Pearson "
                                     "bounds on the held-out totals at α/2 each",
                           "numerator_lower": t.numerator.lower,
                           "denominator_upper": t.denominator.upper}
        d["bounds"].update({"block_runs": self.block_runs, "blocks": self.blocks,
                            "alpha": self.alpha, "bounds_used": self.shares})
        d["coupled"] = {"block_runs": self.block_runs, "blocks": self.blocks,
                        "planned_blocks": self.planned_blocks or self.blocks,
                        "looks": self.looks or 1,
                        "stopped_early": self.stopped_early,
                        "pilot_runs_per_side": self.n_selection,
                        "test": "coupled bet" if self.coupled_test else "Clopper–Pearson",
                        "predicted_on_pilot": self.predicted,
                        "numerator_count": t.numerator.count,
                        "denominator_count": t.denominator.count}
        return d


class CoupledEventTestEvidence(EventTestEvidence):
    """The black-box test of one pair on coupled runs (module docstring)."""

    shares = CoupledTestResult.shares

    def __init__(self, scenario, index: int, claim, learned: Optional[bool] = None, hints=(),
                 blocked: bool = True, early: bool = False):
        super().__init__(scenario, index, claim, learned=learned, hints=hints)
        self.blocked = blocked          # ``blocks_probe`` allowed a chunk's blocks in one call
        # Stop the held-out blocks once the test certifies a violation
        # (at ``LOOKS``; ``plan_lower_bound`` pays for the looks).
        self.early = early
        self.plan: Optional[Plan] = None
        self.chosen: Optional[tuple] = None      # (label, members, complement?)
        self._split = None
        # "family": the witness's training or the release events' pilot
        # (the independent test's own stage, on its streams 3 and 4);
        # "blocks": the coupled pilot that fixes the event and the bet.
        self._stage = "blocks"

    @property
    def pilot_phase(self) -> str:
        if self._stage == "family":
            return super().pilot_phase
        return f"coupled pilot {self.scenario.label}"

    @property
    def phase(self) -> str:
        return f"black-box {self.scenario.label}"

    def pilot_requests(self, trials: int) -> list[Request]:
        self._split = split(trials)
        family = super().pilot_requests(trials)
        if family:
            self._stage = "family"
            return family
        return self._block_requests()

    def next_pilot_requests(self, trials: int) -> list[Request]:
        if self._stage == "family":
            return self._block_requests()
        return []

    def _block_requests(self) -> list[Request]:
        self._stage = "blocks"
        m, pilot, _ = self._split
        return [Request(_blocks_task(self.scenario, self.events, m, blocked=self.blocked),
                        pilot * m,
                        (self.index, STREAMS[0]), "coupled-pilot", chunk=_chunk(m),
                        keep=False, block=m)]

    def prepared(self, samples: list[list]) -> None:
        if self._stage == "family":
            super().prepared(samples)
            return
        m, _, test = self._split
        a = np.concatenate([p[0] for p in samples[0]])
        b = np.concatenate([p[1] for p in samples[0]])
        fam = self.events
        labels, ta, tb, _, _, members = with_ranked_unions(
            fam, fam.labels, a.sum(0), b.sum(0), np.zeros(a.shape[1], np.int64),
            np.zeros(a.shape[1], np.int64))
        extra = members[a.shape[1]:]
        if extra:
            a = np.hstack([a, np.stack([a[:, u].sum(1) for u in extra], 1)])
            b = np.hstack([b, np.stack([b[:, u].sum(1) for u in extra], 1)])
        # Every candidate's complement too: its block counts are m − a and
        # m − b, no run counted again (a tail {x ≤ t} where the family
        # lists {x > t}; the outputs outside a union).
        n = a.shape[1]
        a, b = np.hstack([a, m - a]), np.hstack([b, m - b])
        self.plan = plan(a, b, m, test, self._alpha_guess(), self.claim.delta)
        j = self.plan.column
        complement = j >= n
        label = labels[j % n]
        self.chosen = (f"not ({label})" if complement else label,
                       tuple(int(i) for i in members[j % n]), complement)

    def _alpha_guess(self) -> float:
        # The level the plan predicts at: the audit's α share when ``collect``
        # announced it (``planned_alpha``), else a typical one.  Only the
        # choice of bet depends on it, never the bound's validity.
        return self.planned_alpha or 0.05

    def pilot_state(self):
        if self._stage == "family":
            return (self.witness, self.values)
        return (self.plan, self.chosen, self._split)

    def restore(self, state) -> None:
        if self._stage == "family":
            self.witness, self.values = state
        else:
            self.plan, self.chosen, self._split = state

    def _witness_info(self) -> Optional[dict]:
        """The learned witness as the result document shows it, and whether
        the tested event is one of its (or a union or complement of them)."""
        if self.witness is None:
            return None
        labels = self.events.labels
        owns = any(self.witness.owns(labels[i]) for i in self.chosen[1])
        return {**self.witness.describe(), "chosen": owns}

    def requests(self, trials: int) -> list[Request]:
        m, _, test = self._split or split(trials)
        if self.chosen is None:     # asked before the pilot (a stored result's chunk count)
            return [Request(lambda runs, rng: None, test * m, (self.index, STREAMS[1]),
                            "coupled", chunk=_chunk(m), block=m)]
        label, members, _ = self.chosen
        digest = hashlib.sha256(f"{label}\n{members}\n{m}".encode()).hexdigest()[:16]
        looks = self._looks(test)
        return [Request(_blocks_task(self.scenario, self.events, m, list(members),
                                     blocked=self.blocked), test * m,
                        (self.index, STREAMS[1]), f"coupled-{digest}",
                        chunk=_chunk(m), block=m, looks=tuple(k * m for k in looks),
                        stop=self._certain if looks else None)]

    def _looks(self, test: int) -> list[int]:
        """Held-out blocks after which an early-stopping test reads the bet
        (none where it is read once)."""
        if not (self.early and self.plan is not None):
            return []
        return sorted({max(1, int(test * f)) for f in LOOKS} - {test})

    def _counts(self, samples: list):
        """(numerator, denominator) counts per held-out block of the chosen
        event, from the test's chunk results."""
        m = self._split[0]
        a = np.concatenate([x[0] for x in samples])
        b = np.concatenate([x[1] for x in samples])
        if self.chosen[2]:          # the complement of the counted union
            a, b = m - a, m - b
        return (b, a) if self.plan.swapped else (a, b)

    def _certain(self, samples: list) -> bool:
        """Whether the test on the blocks so far already certifies a
        violation (ε_lb above the claim's ε): then it stops there."""
        num, den = self._counts(samples)
        looks = len(self._looks(self._split[2])) + 1
        eps = plan_lower_bound(num, den, self.plan, self.planned_alpha, self.claim.delta, looks,
                               last=False)
        return eps > self.claim.epsilon

    def conclude(self, samples: list[list], alpha: float) -> CoupledTestResult:
        sc, claim, p = self.scenario, self.claim, self.plan
        m, pilot, planned = self._split
        num, den = self._counts(samples[0])
        looks = len(self._looks(planned))
        eps = plan_lower_bound(num, den, p, alpha, claim.delta, looks + 1,
                               last=num.size >= planned)
        n_test = int(num.size * m)
        label = self.chosen[0]
        direction = "l'>l" if p.swapped else "l>l'"
        nb = one_sided_bounds(int(num.sum()), n_test, alpha / 2)
        db = one_sided_bounds(int(den.sum()), n_test, alpha / 2)
        test = EventTest(label, direction, nb, db, eps, p.predicted)
        curve = _curve(num, den, m, alpha, p, claim.delta, pilot * m)
        return CoupledTestResult(
            attack=sc.label.split(":")[0], label=sc.label, claim=claim,
            group_size=sc.group_size, test=test, trials=pilot * m + n_test,
            n_selection=pilot * m, n_holdout=n_test, alpha=alpha,
            max_detectable_epsilon=(max_coupled_epsilon(p.design) if p.coupled else
                                    max_detectable_epsilon(n_test, alpha / 2, claim.delta)),
            pair=sc.describe_pair(), rounds=sc.rounds,
            notes=list(sc.notes) + self._values_note()
            + self._float_note([self.events.labels[i] for i in self.chosen[1]]) + [
                f"coupled runs: both sides of each block of {m} runs drew from one seed; "
                f"the event, its direction and the bet were fixed on {pilot * m:,} pilot runs "
                f"a side (streams [seed, pair, {STREAMS[0]}]), the test read {num.size:,} other "
                f"blocks (streams [seed, pair, {STREAMS[1]}])"] + self._early_note(num.size),
            curve=curve, witness=self._witness_info(),
            event_text=event_label(label, code_labels(sc.algorithm),
                                   final_output(sc.algorithm)),
            inputs=short_inputs(sc), block_runs=m, blocks=int(num.size), design=p.design,
            predicted=p.predicted, coupled_test=p.coupled,
            looks=looks + 1 if looks else 0, planned_blocks=planned)

    def _early_note(self, read: int) -> list[str]:
        planned = self._split[2]
        looks = self._looks(planned)
        if not looks:
            return []
        when = ("stopped there: the test already certified ε_lb above the claim"
                if read < planned else "it never did, so every planned block was read")
        how = (f"valid at any look: Ville's inequality for the bet, the guard on the "
               f"denominator at α/{len(looks) + 1}" if self.plan.coupled else
               f"Bonferroni over the looks: the Clopper–Pearson test at α/2 at the last look, "
               f"α/{2 * len(looks)} at each earlier one")
        return [f"sequential test: the test could stop after {', '.join(f'{k:,}' for k in looks)} "
                f"of the {planned:,} planned blocks (rounded up to whole chunks) once it "
                f"certified a violation — {when}; {how}"]


def _curve(num, den, m, alpha, p: Plan, delta, pilot: int, points: int = 20) -> dict:
    """ε_lb on growing prefixes of the held-out blocks (each a valid bound
    on its own; for reading), against the runs a side spent so far (the
    pilot's ``pilot`` included)."""
    k = len(num)
    keep = np.unique(np.linspace(1, k, min(points, k)).astype(int))
    eps = [plan_lower_bound(num[:j], den[:j], p, alpha, delta) for j in keep]
    return {"runs_per_side": (pilot + keep * m).tolist(), "epsilon_lower_bound": eps}

