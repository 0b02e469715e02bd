"""One audit from start to verdict: ``audit_algorithm`` builds the
scenarios, checks them, that the learner draws its randomness from the
generator it is given, and the algorithm's declarations, turns every
(scenario, mode) into a piece of evidence, gathers all of it through one
sampler and returns an ``AuditResult``; ``reproduce_command`` is the command
line that reruns it.

May import: ``algorithms``, ``attacks``, ``audit.execution``, ``audit.engine``.
"""
from __future__ import annotations

import functools
import shlex
import time
from typing import Callable, Optional, Sequence

import numpy as np

from algorithms.core import Algorithm, Claim
from audit.engine.budget import per_run_code
from audit.engine.models import check_declarations, failed, refusal_reason, rests_on
from audit.engine.evidence import KINDS, MODES, WHITE_MODES, applicable_modes, collect
from audit.engine.evidence.coupled import CoupledEventTestEvidence, blocks_probe
from audit.engine.evidence.event_test import short_inputs
from audit.engine.reproducibility import check_own_randomness
from audit.engine.sampling import Sampler, pairs_namespace
from audit.engine.scenarios import SEARCH, check_scenarios, scenarios_for, search_wanted
from audit.engine.verdict import AuditResult
from audit.execution.executor import Executor
from audit.execution.progress import Reporter, active
from audit.execution.store import audit_fingerprint


def reproduce_command(alg_name, args_echo: dict, attacks, trials, confidence, seed,
                      modes=None, witness: Optional[bool] = None,
                      pairs: Optional[Sequence[str]] = None,
                      coupled: Optional[bool] = None, backend: str = "numpy",
                      stop_early: Optional[bool] = None) -> str:
    parts = ["audit", "run", alg_name]
    for flag, value in args_echo.items():
        if value is None:
            continue
        if flag == "--param":
            for k, v in value:
                parts += ["--param", f"{k}={v}"]
        elif str(value).startswith("-"):        # argparse would read it as a flag
            parts.append(f"{flag}={value}")
        else:
            parts += [flag, str(value)]
    for a in attacks:
        parts += ["--attack", a]
    for label in pairs or ():
        parts += ["--pair", label]
    for m in modes or ():
        parts += ["--mode", m]
    if witness is not None:
        parts += ["--witness", "on" if witness else "off"]
    if coupled is not None:     # chosen, not left to the default
        parts += ["--runs", "coupled" if coupled else "independent"]
    if backend != "numpy":
        parts += ["--backend", backend]
    if stop_early is not None:  # chosen, not left to the default
        parts += ["--stop-early", "on" if stop_early else "off"]
    parts += ["--trials", str(trials), "--confidence", f"{confidence:g}", "--seed", str(seed)]
    return shlex.join(parts)


def audit_algorithm(alg: Algorithm, attacks: Optional[Sequence[str]] = None,
                    trials: int = 200_000, confidence: float = 0.95, seed: int = 0,
                    jobs: int = 1, claim: Optional[Claim] = None, show_progress: bool = False,
                    command: Optional[str] = None, modes: Optional[Sequence[str]] = None,
                    executor: Optional[Executor] = None, progress=None,
                    witness: Optional[bool] = None,
                    pairs: Optional[Sequence[str]] = None,
                    coupled: Optional[bool] = None, backend: str = "numpy",
                    stop_early: Optional[bool] = None,
                    refit: Optional[Callable] = None) -> AuditResult:
    """Audit ``alg`` against ``claim`` (its own by default): black-box on every
    attack's pairs, plus the white-box modes wherever the algorithm supports
    them (``modes`` restricts both).  ``witness`` adds a learned witness to
    every black-box pair (True) or to none (False); None: where the pair
    wants one (``event_test.wants_witness``).  ``pairs`` keeps only the
    attacks' pairs with these labels (as results print them, e.g.
    ``patterns:one-above``): one pair rerun alone gets the whole error
    budget and all the runs.  ``coupled`` runs the black-box tests on
    coupled runs (True) or independent ones (False); None, the default:
    coupled wherever they cost no more (``runs_coupled``; both sides of a
    block of runs from one seed, the test of each pair chosen on its
    pilot).  ``backend`` runs the black-box tests' learners on numpy (the
    default) or JAX (``algorithms.backend``; the pilots that choose pairs
    and the white-box modes stay on numpy), chunks then run in this process
    on JAX's device.  ``stop_early``: a black-box test on coupled runs
    stops reading its held-out blocks once it certifies a violation
    (True; a sequential test, valid at whichever look it stops) or reads
    them all (False); None, the default: for code run one Python call per
    run, whose runs cost time.  ``refit(scenarios)``, when given, may
    change the budget once the pairs are known: it returns None or
    (``trials``, ``command``) (the CLI's budget fitted to a time,
    ``audit.engine.budget.refitted_trials``).

    ``executor`` (default: ``jobs`` local processes, nothing kept) may send
    the chunks to a Dask cluster and keep completed chunks in a store, keyed
    by this audit's fingerprint; the result is the same either way.
    ``progress`` (``audit.execution.progress.Reporter``; default: one on stderr if
    ``show_progress``, else the one in effect) reports every phase."""
    if progress is None:
        progress = Reporter() if show_progress else active()
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if trials < 2:
        raise ValueError(f"trials must be >= 2 (half select, half test), got {trials}")
    overridden = claim is not None
    claim = claim or alg.claim
    if claim is None:
        raise ValueError(f"{alg.name} declares no privacy claim; give --claim-epsilon")
    for m in modes or ():
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; choose from: {', '.join(MODES)}")
    wanted = set(modes or MODES)
    if coupled is not None and "black-box" not in wanted:
        raise ValueError(f"--runs {'coupled' if coupled else 'independent'}: it says how the "
                         f"black-box mode runs; add --mode black-box")
    if stop_early and "black-box" not in wanted:
        raise ValueError("--stop-early on: it stops the black-box tests of coupled runs; add "
                         "--mode black-box")
    if stop_early and coupled is False:
        raise ValueError("--stop-early on: only tests of coupled runs can stop early (the "
                         "independent runs' selection half is read once); drop --runs "
                         "independent")
    device = placement(alg, backend, "black-box" in wanted)
    search = search_wanted("black-box" in wanted, pairs)
    scenarios, names = scenarios_for(alg, attacks, search=search,
                                     events="black-box" in wanted, trials=trials,
                                     jobs=executor.jobs if executor is not None and
                                     executor.client is None else jobs)
    if pairs:
        scenarios = only_pairs(scenarios, pairs, alg.name, skipped_search=(
            attacks is None and "black-box" in wanted and SEARCH not in names))
    check_scenarios(scenarios, claim)
    unseeded = check_randomness(scenarios, progress)
    refitted = refit(scenarios) if refit is not None else None
    if refitted is not None:
        trials, command = refitted
    blocking = check_blocks(scenarios, coupled, unseeded) if "black-box" in wanted else {}
    white = [[m for m in applicable_modes(sc) if m in wanted] for sc in scenarios]
    not_reproducible = next(iter(unseeded.values()), None)
    left_out: list = []
    if unseeded:
        # The white-box modes read the code's own draws (replayed or
        # recorded), which it does not take from the audit.
        left_out = sorted({m for sc, ms in zip(scenarios, white) for m in ms
                           if id(sc.algorithm) in unseeded})
        white = [[] if id(sc.algorithm) in unseeded else ms for sc, ms in zip(scenarios, white)]
        if left_out and "black-box" not in wanted and not any(white):
            raise ValueError(f"--mode {left_out[0]}: {alg.name} draws randomness the audit "
                             f"cannot seed, and the white-box modes need its draws; run the "
                             f"black-box mode instead")
    early = per_run_code(alg) if stop_early is None else bool(stop_early)
    fingerprint = None
    if executor is not None and executor.store is not None and not unseeded:
        fingerprint = audit_fingerprint(alg, claim, names, trials, confidence, seed, modes,
                                        witness, pairs, coupled, backend, early)
    ex = (executor or Executor(jobs=jobs)).for_audit(fingerprint)
    if unseeded:
        ex = in_process()
    elif device is not None:
        ex = device.executor(ex)
    sampler = Sampler(seed, ex, progress, namespace=pairs_namespace(pairs),
                      chunk_scale=device.chunk_scale if device else 1,
                      chunk_cap=PER_RUN_CHUNK if per_run_code(alg) else None)
    # Declarations are checked, never trusted: a failed check switches the
    # white-box modes off for every scenario running that algorithm.  With
    # a store, an earlier run of this very audit (same fingerprint: same
    # code, algorithm and scenarios) kept each scenario's checks.
    checks, refused, checks_of = [], {}, {}
    with progress.phase("declaration pilots", sum(map(bool, white)), "scenarios") as phase:
        for i, (sc, ms) in enumerate(zip(scenarios, white)):
            if ms and id(sc.algorithm) not in refused:
                key = f"declarations:{i}:{','.join(ms)}"
                found = sampler.kept(key)
                if found is None:
                    found = check_declarations(sc, seed, i, modes=ms)
                    sampler.keep(key, found)
                checks += found
                checks_of[i] = found
                if failed(found):
                    refused[id(sc.algorithm)] = found
            if ms:
                phase.update(1)
    # The replay reads no declaration: a refused one does not switch it off.
    white = [[m for m in ms if m == "replay"] if id(sc.algorithm) in refused else ms
             for sc, ms in zip(scenarios, white)]
    black = "black-box" in wanted
    if not black and not any(white):
        if refused:
            raise ValueError("the selected white-box modes were refused: "
                             + refusal_reason(next(iter(refused.values())), detail=True)
                             + "; run the black-box mode instead")
        raise ValueError(f"no selected mode applies to {alg.name} with these attacks "
                         f"(white-box needs an algorithm whose action or noise distributions "
                         f"are exposed)")
    # Black-box evidence first, then each scenario's white-box kinds; every
    # piece is judged against the claim scaled for its scenario's group (a
    # swept variant's own claim, unless the claim was overridden).
    hints = defect_hints(scenarios, checks_of)
    boxes = [black_box_kind(sc, coupled, unseeded, blocking, early)(
                 device.place(sc) if device else sc, i, claim_of(sc, claim, overridden),
                 learned=witness, hints=hints.get(id(sc.algorithm), ()))
             for i, sc in enumerate(scenarios) if black]
    whites = [KINDS[m](sc, i, claim_of(sc, claim, overridden))
              for i, (sc, ms) in enumerate(zip(scenarios, white)) for m in WHITE_MODES
              if m in ms]
    start = time.perf_counter()
    # The replay of the code's own draws first, where the modes are left to
    # the audit: a pair whose replay gives its exact ε over every output
    # (a finite output law, confirmed by re-executing the code) gets no
    # black-box runs — they could only bound that figure from below.  The
    # choice rests on exact evidence, none of the runs', so the remaining
    # bounds share the error budget as if the dropped ones never existed.
    done: dict = {}
    if black and modes is None:
        first = [e for e in whites if e.kind == "replay"]
        done = dict(zip(map(id, first), collect(first, trials, confidence, sampler)))
        known = {e.index for e in first if finite_exact(done[id(e)])}
        boxes = [e for e in boxes if e.index not in known]
        for e in first:
            if e.index in known:
                done[id(e)].notes = [SKIPPED_NOTE] + list(done[id(e)].notes)
    evidence = boxes + whites
    rest = [e for e in evidence if id(e) not in done]
    # Bonferroni over every bound that can err, summed over the evidence
    # (exact evidence cannot err and takes no share).
    done.update(zip(map(id, rest), collect(rest, trials, confidence, sampler)))
    results = [done[id(e)] for e in evidence]
    for e, r in zip(evidence, results):
        if r.kind in WHITE_MODES:
            r.rests_on = rests_on(checks_of.get(e.index, []), r.kind) or r.rests_on
            r.pair, r.inputs = e.scenario.describe_pair(), short_inputs(e.scenario)
            r.notes = list(getattr(e.scenario, "white_box_notes", ())) + list(r.notes)
    disagreements = reconcile(evidence, results)
    erred = supersede_above_exact(evidence, results)
    n_tests = sum(e.shares for e in evidence)
    elapsed = time.perf_counter() - start
    command = command or reproduce_command(alg.name, {}, names, trials, confidence, seed, modes,
                                           witness, pairs, coupled, backend, stop_early)
    return AuditResult(alg, claim, trials, confidence, seed, results, elapsed, command, overridden,
                       n_tests, fingerprint=fingerprint, chunks_reused=ex.reused,
                       chunks_computed=ex.computed, declaration_checks=tuple(checks),
                       refused=tuple(refusal_reason(found) for found in refused.values())
                       + ((f"they need the code's own draws, and {not_reproducible}",)
                          if left_out else ()) + disagreements,
                       notes=tuple(audit_notes(alg, claim, scenarios, black)
                                   + blocks_notes(scenarios, blocking) + erred),
                       not_reproducible=not_reproducible,
                       strongest=strongest_evidence(results, [e.scenario for e in evidence],
                                                   command),
                       backend=device.document() if device else None)


class Placement:
    """Where the black-box tests' learners run on a backend other than
    numpy: each pair's algorithm moved there where it runs there (a
    conversion rebuilt around an auditor's base learner says so itself),
    and the pairs left on numpy named in the result."""

    def __init__(self, backend: str):
        self.backend = backend
        self._moved: dict = {}
        self.left: list = []

    def place(self, sc):
        import dataclasses
        from algorithms.backend import on_backend, supports
        a = sc.algorithm
        if id(a) not in self._moved:
            self._moved[id(a)] = on_backend(a, self.backend) if supports(a, self.backend) \
                else None
        moved = self._moved[id(a)]
        if moved is None:
            self.left.append(sc.label)
            return sc
        return dataclasses.replace(sc, algorithm=moved)

    @property
    def chunk_scale(self) -> int:
        """Chunks of 10⁴ runs keep a CPU busy; a GPU needs ~10⁶ a call."""
        from algorithms.backend import device_name
        return 1 if device_name().startswith("cpu") else 100

    @staticmethod
    def executor(ex: Executor) -> Executor:
        """Chunks in this process, one after another: the device runs each
        chunk's runs together, and worker processes would each claim it."""
        return Executor(1, None, ex.store, ex.fingerprint)

    def document(self) -> dict:
        from algorithms.backend import device_name
        out = {"name": self.backend, "device": device_name()}
        if self.left:
            out["pairs_on_numpy"] = list(self.left)
        return out


def placement(alg: Algorithm, backend: str, black: bool) -> Optional[Placement]:
    """The ``Placement`` of an audit on ``backend`` (None for numpy), after
    checking that ``alg`` runs there and that black-box tests are asked for."""
    if backend == "numpy":
        return None
    from algorithms.backend import on_backend
    on_backend(alg, backend)            # ValueError: unknown, not installed, or numpy only
    if not black:
        raise ValueError(f"--backend {backend}: it runs the black-box tests; add --mode "
                         f"black-box")
    return Placement(backend)


def runs_coupled(scenario, coupled: Optional[bool], unseeded: dict,
                 blocking: Optional[dict] = None) -> bool:
    """Whether a pair's black-box test runs on coupled runs: as asked
    (``coupled`` True or False), else wherever they cost no more than
    independent ones and the audit seeds the code — code run one call per
    run (a block is as many calls as its runs), and a vectorised learner
    whose draws run blocked (``blocking``: ``check_blocks``'s word for its
    algorithm, "blocked" where a chunk's blocks run in one call; without
    it, its ``row_draws`` declaration).  A vectorised learner whose draws
    depend on its runs' data, or cannot be cut by run (FTPL's geometric
    resampling redraws only for the runs still waiting), would pay a call
    per block (tbe-svt: four times the time) and runs independent by
    default; code drawing its own entropy gains nothing from shared seeds."""
    if coupled is not None:
        return coupled
    alg = scenario.algorithm
    extra = alg.extra if isinstance(alg.extra, dict) else {}
    blocked = (blocking.get(id(alg)) == "blocked" if blocking is not None
               else bool(extra.get("row_draws")))
    cheap = bool(blocked or extra.get("per_run_calls"))
    return cheap and id(alg) not in unseeded


def black_box_kind(scenario, coupled: Optional[bool], unseeded: dict,
                   blocking: Optional[dict] = None, early: bool = False):
    """The evidence class of a pair's black-box test (``runs_coupled``);
    coupled runs of a learner ``check_blocks`` did not find blocked run a
    call per block; ``early``: a coupled test stops once it certifies a
    violation."""
    if not runs_coupled(scenario, coupled, unseeded, blocking):
        return KINDS["black-box"]
    if blocking is None:
        return functools.partial(CoupledEventTestEvidence, early=early)
    return functools.partial(CoupledEventTestEvidence, early=early,
                             blocked=blocking.get(id(scenario.algorithm)) == "blocked")


def check_blocks(scenarios, coupled: Optional[bool], unseeded: dict) -> dict:
    """``blocks_probe`` once per vectorised algorithm run (on its scenario
    with the longest prefix) that says its draws are one row per run —
    unless the runs are independent anyway: ``id`` → its word."""
    if coupled is False:
        return {}
    out = {}
    for key, sc in longest_scenarios(scenarios).items():
        if key not in unseeded and sc.algorithm.extra.get("row_draws"):
            out[key] = blocks_probe(sc.algorithm, (sc.losses_a, sc.losses_b), sc.advice,
                                    sc.rounds)
    return out


def blocks_notes(scenarios, blocking: dict) -> list[str]:
    """A note for each algorithm whose ``row_draws`` declaration the probe
    refuted."""
    names = {id(sc.algorithm): sc.algorithm.name for sc in scenarios}
    return [f"{names[k]} declares that every draw is one row per run (row_draws), but a probe "
            f"of its blocks run together played otherwise than each block run alone: the "
            f"declaration is not used (its coupled blocks run one call each; by default its "
            f"runs are independent)" for k, word in blocking.items() if word == "refused"]


# Runs a chunk of code run one Python call per run (``Sampler.chunk_cap``):
# at tens of runs a second, a 10 000-run chunk would keep one worker busy for
# minutes while the others idle, and show no progress.
PER_RUN_CHUNK = 256


# How far a declared model's exact figure may lie above the trace's on the
# same pair (relative; both are certified brackets far narrower than this).
AGREE = 1e-3


def reconcile(evidence, results) -> tuple:
    """A declaration and the trace of the code's own draws, where both give
    an exact figure for one pair, must agree: the trace's figure for a
    release or for outputs decided by comparisons is the pair's exact ε
    over every output (all its paths enumerated), so a declared figure
    above it describes some other mechanism than the code, and is refused
    (shown for information only) while the trace's stands.  A declared
    figure below it is a lower bound (a search over outputs, a grid of
    values), no contradiction.  Returns the refusals, in words."""
    out = []
    by_pair: dict = {}
    for e, r in zip(evidence, results):
        if r.kind in ("integral", "replay") and getattr(r, "exact", False):
            by_pair.setdefault(e.index, {})[r.kind] = r
    for pair in by_pair.values():
        declared, traced = pair.get("integral"), pair.get("replay")
        if declared is None or traced is None or "trace" not in traced.rests_on \
                or traced.details.get("structure") not in ("release", "comparisons"):
            continue
        a, b = declared.epsilon_lower_bound, traced.epsilon_lower_bound
        if a <= b or (np.isfinite(a) and a <= b * (1 + AGREE) + 1e-9):
            continue
        declared.notes = [f"refused: the declared model gives ε {a:.6g} on this pair, above the "
                          f"trace of the code's own draws, whose {b:.6g} is the pair's exact ε "
                          f"over every output — the declaration does not describe this code"] \
            + list(declared.notes)
        declared.epsilon_lower_bound, declared.exact, declared.informational = 0.0, False, True
        declared.rests_on = ()
        out.append(f"the declared model of {declared.attack} gives more than the trace of the "
                   f"code's own draws (ε {a:.6g} vs {b:.6g}): its figures are not used")
    return tuple(out)


# On the replay result of a pair that got no black-box runs.
SKIPPED_NOTE = ("no black-box runs on this pair: this is its exact ε over every output, "
                "which runs could only bound from below")


def finite_exact(r) -> bool:
    """Whether a result is the replay of a finite output law — cells of the
    code's uniform draws, or the paths of comparisons of its continuous
    draws, confirmed by re-executing the code —: its figure is then the
    pair's exact ε over every output the code returns."""
    details = getattr(r, "details", None) or {}
    finite = ("cells" in details and "confirmed_by_reexecution" in details
              or details.get("structure") == "comparisons" and "reexecuted" in details)
    return r.kind == "replay" and bool(r.exact) and not r.informational and finite


def supersede_above_exact(evidence, results) -> list:
    """A black-box bound above its pair's exact ε is known to have erred.

    The replay of a finite output law — cells of the code's uniform draws,
    or the paths of comparisons of its continuous draws (certified
    integrals, their slack far below ``AGREE``), confirmed by re-executing
    the code — gives the pair's exact ε over every output the code
    returns (a discrete one: an event on released doubles could read
    their rounding, which a law over the reals does not see, so a release
    supersedes nothing); an event reads those outputs, so
    its true log-ratio is at most that, and a lower bound above it is one
    of the errors its confidence allows (a pair whose true ε equals the
    claim is certified above it in up to α of audits).  Such a bound
    decides nothing — neither the verdict nor the audit's ε_lb —, and the
    exact figure stands; it is shown with a note.  Dropping a bound known
    to be wrong only removes false findings: where the pair's exact ε is
    above the claim, the exact result itself is the violation.  Returns
    the audit's notes, one per bound."""
    exact: dict = {}
    for e, r in zip(evidence, results):
        if finite_exact(r):
            exact[e.index] = max(exact.get(e.index, 0.0), r.per_record_lower_bound)
    notes = []
    for e, r in zip(evidence, results):
        top = exact.get(e.index)
        if r.kind != "black-box" or top is None:
            continue
        bound = r.per_record_lower_bound
        if not bound > top * (1 + AGREE) + 1e-9:
            continue
        r.superseded = (f"this bound, {bound:.6g}, is above the pair's exact ε {top:.6g} over "
                        f"every output (white-box replay, confirmed by re-executing the code): "
                        f"one of the errors its confidence allows; the exact figure stands")
        r.notes = [r.superseded] + list(r.notes)
        notes.append(f"the black-box bound on {r.label} ({bound:.6g}) lies above that pair's "
                     f"exact ε ({top:.6g}, white-box replay): a statistical error of the kind its "
                     f"confidence allows, so it decides nothing; the exact figure stands")
    return notes


def only_pairs(scenarios, labels: Sequence[str], name: str, skipped_search: bool = False) -> list:
    """The scenarios whose label is one of ``labels`` (``--pair``), in the
    attacks' order; a label no pair has is refused, naming the labels there
    are (``skipped_search``: the search, which no label named, did not run)."""
    have = [sc.label for sc in scenarios]
    unknown = [l for l in labels if l not in have]
    if unknown:
        more = ("; the neighbour search's pairs, labelled search:…, are built when a --pair "
                "names one" if skipped_search else "")
        raise ValueError(f"--pair {unknown[0]!r}: no pair of {name}'s attacks has this label; "
                         f"its pairs: {', '.join(have)}{more}")
    return [sc for sc in scenarios if sc.label in set(labels)]


def claim_of(sc, claim: Claim, overridden: bool) -> Claim:
    """The claim a scenario's evidence is judged against, scaled for its
    group: the audit's, or where the scenario runs a swept variant of the
    algorithm (``algorithms.claim_ranges``) the variant's own claim — the
    theorem's claim at those parameters — unless the user overrode it."""
    swept = (sc.algorithm.extra or {}).get("swept")
    if swept and not overridden and sc.algorithm.claim is not None:
        claim = sc.algorithm.claim
    return claim.scaled_for_group(sc.group_size)


def defect_hints(scenarios, checks_of: dict) -> dict:
    """Pairs of releases a failed declaration check measured a defect on
    (noise shared by two releases, perfectly correlated noises), per
    algorithm (``id``): the black-box evidence of its scenarios adds their
    difference and sum to its events, whatever their distance."""
    out: dict = {}
    for i, found in checks_of.items():
        for c in found:
            pair = getattr(c, "defect", None)
            if not c.passed and pair:
                out.setdefault(id(scenarios[i].algorithm), []).append(tuple(pair))
    return out


def audit_notes(alg: Algorithm, claim: Claim, scenarios, black: bool) -> list[str]:
    """One-line notes on what the audit could read of the claim's output."""
    out = []
    learner = alg.learner
    if black and claim.scope == "transcript" and not learner.reads_first \
            and learner.whole is None and learner.released_of is None:
        out.append(f"the claim covers the released values, but {alg.name} exposes none (give its "
                   f"Learner a released accessor or a TranscriptModel): the black-box evidence "
                   f"reads only what it plays")
    return out


def strongest_evidence(results, scenarios, command: str) -> Optional[dict]:
    """Where the largest ε lower bound was found, when that is at swept
    parameters (a corner of the claim's declared ranges): the parameters and
    the command that audits the algorithm there.  ``scenarios[i]`` is the
    scenario ``results[i]`` was computed on (a white-box result's label
    carries its mode, so labels cannot be matched)."""
    if not results:
        return None
    i = max(range(len(results)), key=lambda k: results[k].per_record_lower_bound)
    best, sc = results[i], scenarios[i]
    swept = (sc.algorithm.extra or {}).get("swept")
    if not swept or best.per_record_lower_bound <= 0:
        return None
    return {"parameters": dict(swept), "scenario": best.label,
            "epsilon_lower_bound": best.per_record_lower_bound,
            "reproduce": variant_command(command, swept)}


def variant_command(command: str, changes: dict) -> str:
    """``command`` (an ``audit run``) with the flags of ``changes`` set:
    ``--horizon``, ``--arms``, ``--experts`` replaced or added, a parameter
    as ``--param NAME=VALUE`` (replacing one of that name)."""
    from algorithms.claim_ranges import flags_of
    parts = shlex.split(command)
    for flag, value in zip(*[iter(flags_of(changes))] * 2):
        if flag == "--param":
            name = value.partition("=")[0]
            keep = []
            skip = False
            for i, p in enumerate(parts):
                if skip:
                    skip = False
                    continue
                if p == "--param" and i + 1 < len(parts) and \
                        parts[i + 1].partition("=")[0] == name:
                    skip = True
                    continue
                keep.append(p)
            parts = keep
            parts[3:3] = [flag, value]
        elif flag in parts:
            parts[parts.index(flag) + 1] = value
        else:
            parts[3:3] = [flag, value]
    return shlex.join(parts)


def check_randomness(scenarios, progress=None) -> dict:
    """Check, once per algorithm run, on the losses of its scenario with the
    longest prefix (randomness drawn only in later rounds shows there) —
    or as the neighbour search checked it already over as many rounds
    (``check_own_randomness`` keeps its outcome) —, that
    its learner draws its randomness from the generator it is given: chunk
    seeding is what makes the runs reproducible and independent, so nothing
    is simulated for evidence before this is known.  Runs that are copies
    of one another are refused (``ValueError``); the algorithms whose
    randomness the audit cannot seed are returned (``id`` → the reason):
    their runs are independent, but only in one process, one after another
    (``in_process``), and no seed reproduces them."""
    out = {}
    longest = longest_scenarios(scenarios)
    words = "checking that the code draws from the generator it is given"
    with (progress or active()).phase(words, len(longest), "algorithms",
                                      quiet_below=1.0) as phase:
        for key, sc in longest.items():
            why = check_own_randomness(sc.algorithm, sc.losses_a, sc.advice, sc.rounds)
            if why is not None:
                out[key] = why
            phase.update(1)
    return out


def longest_scenarios(scenarios) -> dict:
    """``id`` of each algorithm run → its scenario with the longest prefix
    (what an algorithm does only in later rounds shows there)."""
    longest = {}
    for sc in scenarios:
        key = id(sc.algorithm)
        if key not in longest or (sc.rounds or 0) > (longest[key].rounds or 0):
            longest[key] = sc
    return longest


def in_process() -> Executor:
    """The executor for code the audit cannot seed: every chunk in this
    process, nothing kept.  A worker process that imported the code afresh
    could restart a generator the code built at import from the same state
    as another worker's, making their runs copies; here each run continues
    the code's own stream, and a kept chunk would only be replayed."""
    return Executor(jobs=1)


def audit_scenarios(scenarios, claim: Claim, trials: int, confidence: float = 0.95,
                    seed: int = 0, jobs: int = 1, executor: Optional[Executor] = None,
                    progress=None, coupled: Optional[bool] = False,
                    witness: Optional[bool] = None, stop_early: bool = False) -> list:
    """Black-box evidence on hand-built scenarios, each judged against
    ``claim`` scaled for its group: the results, with all bounds holding
    together with probability ≥ ``confidence``.  Streams are those of
    ``audit_algorithm`` with the same scenarios in the same order.
    ``coupled``: independent runs (False, the default here), coupled
    (True), or as ``audit_algorithm`` chooses by default (None);
    ``witness`` as ``audit_algorithm``'s; ``stop_early``: coupled tests
    stop once they certify a violation."""
    check_scenarios(scenarios, claim)
    unseeded = check_randomness(scenarios, progress)
    blocking = check_blocks(scenarios, coupled, unseeded)
    ex = in_process() if unseeded else executor or Executor(jobs=jobs)
    evidence = [black_box_kind(sc, coupled, unseeded, blocking, stop_early)(
                    sc, i, claim.scaled_for_group(sc.group_size), learned=witness)
                for i, sc in enumerate(scenarios)]
    per_run = scenarios and all(per_run_code(sc.algorithm) for sc in scenarios)
    return collect(evidence, trials, confidence,
                   Sampler(seed, ex, progress, chunk_cap=PER_RUN_CHUNK if per_run else None))
