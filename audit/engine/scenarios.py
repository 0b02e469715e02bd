"""Scenarios of an audit: the attacks it runs and the neighbouring pairs
they build, checked before any simulation (each scenario's own checks and
the interface contract of every distinct algorithm that runs).

Unless attacks are named, an audit runs the algorithm's own attacks and the
neighbour search (``attacks.search``), which finds pairs from the
algorithm's shape; an algorithm that declares no attacks gets the search
alone.  The search simulates the algorithm in its pilot, so the interface
contract is checked before it runs.

The ``optimised`` attack maximises a declared model's exact pair ε, which
it cannot compute itself: the engine hands it the objective
(``audit.engine.models.objective``).

Code audited on whole numbers rounds every input before it reads it
(``algorithms.as_written.whole``): its pairs are stated as it sees them,
rounded, so the summary and the report show the bits it compared.

May import: ``algorithms``, ``attacks``, ``audit.execution.progress``,
``audit.execution.executor``, ``audit.engine.budget``,
``audit.engine.contract``, ``audit.engine.reproducibility``,
``audit.engine.models.objective``.
"""
from __future__ import annotations

import inspect
from typing import Optional, Sequence

from algorithms.as_written.whole import as_the_code_sees
from algorithms.core import Algorithm
from attacks import ATTACKS
from audit.engine.budget import per_run_code
from audit.engine.contract import check_interface
from audit.engine.reproducibility import check_own_randomness
from audit.engine.models.objective import pair_objective
from audit.execution.executor import process_map
from audit.execution.progress import active

SEARCH = "search"
OPTIMISED = "optimised"
# The attacks that build pairs for mechanisms over a stream of answers.
STREAM_ATTACKS = ("patterns", OPTIMISED, SEARCH)


def attack_names(alg: Algorithm, attacks: Optional[Sequence[str]],
                 search: bool = True) -> list[str]:
    """The attacks an audit runs: those asked for, else the algorithm's own
    followed by the neighbour search (``search=False``: an audit without the
    black-box mode, for which the search's black-box-only pairs would be
    simulated for nothing — unless it is the only attack)."""
    if attacks:
        return list(attacks)
    names = list(alg.default_attacks)
    if SEARCH in names or (not search and names):
        return names
    return names + [SEARCH]


def search_wanted(black: bool, pairs: Optional[Sequence[str]] = None) -> bool:
    """Whether an audit adds the neighbour search to the default attacks:
    for black-box evidence (its pairs are audited black-box only), and under
    ``--pair`` only where a label names one of its pairs (``search:…``), so a
    pattern pair rerun alone does not pay for the search's pilot."""
    return black and (not pairs or any(p.split(":")[0] == SEARCH for p in pairs))


def scenarios_for(alg: Algorithm, attacks: Optional[Sequence[str]], search: bool = True,
                  events: bool = True, trials: Optional[int] = None, jobs: int = 1):
    """The scenarios of the named attacks (default: the algorithm's and the
    search) and the names of the attacks that ran.  A search added by
    default that does not apply to ``alg`` is left out, unless it is the
    only attack; so is a default ``optimised`` that does not apply.
    ``events=False`` (an audit without the black-box mode, the only user of
    a scenario's events) spares an attack that can leave them out its event
    pilots (``patterns``: 8000 runs of the whole horizon).  ``trials``, the
    audit's runs a side, sizes the pilots of code run as written
    (``attacks.search.pilot_share``); ``jobs`` local processes run the
    search's pilot of code run one call per run (its results the same for
    any number)."""
    names = attack_names(alg, attacks, search)
    for name in names:
        if name not in ATTACKS:
            raise ValueError(f"unknown attack {name!r}; choose from: {', '.join(ATTACKS)}")
        if alg.learner.reads_first and name not in STREAM_ATTACKS:
            raise ValueError(f"attack {name} builds pairs for learners; {alg.name} is a mechanism "
                             f"over a stream of answers: choose from {', '.join(STREAM_ATTACKS)}")
    built = {}
    for name in names:
        if name == SEARCH:
            continue
        try:
            # Building pairs can run pilots (the patterns' events, the
            # optimised pair): a phase, reported when it takes a second.
            with active().phase(f"{name}: pairs and events", 1, "steps",
                                quiet_below=1.0) as phase:
                built[name] = _scenarios(ATTACKS[name], alg, events, trials)
                phase.update(1)
        except ValueError:
            # The optimised pair, a default attack where a declared model
            # gives the exact pair ε, is left out where it does not apply
            # (e.g. too many answers, outputs too many to enumerate).
            if attacks or name != OPTIMISED:
                raise
    names = [n for n in names if n in built or n == SEARCH]
    if SEARCH in names:
        others = [sc for found in built.values() for sc in found]
        if others:
            check_scenarios(others)   # the pilot runs the learner: its contract first
        try:
            built[SEARCH] = _search(alg, checked=bool(others), trials=trials, jobs=jobs)
        except ValueError as exc:
            if attacks:
                raise
            if not others:
                raise ValueError(f"{alg.name} names no default attacks and {exc}; choose "
                                 f"with --attack ({', '.join(ATTACKS)})") from None
            names = [n for n in names if n != SEARCH]   # the algorithm's own attacks alone
    return _as_the_code_sees_them(alg, [sc for name in names for sc in built[name]]), names


def _as_the_code_sees_them(alg: Algorithm, scenarios: list) -> list:
    """``scenarios`` with the pairs of code that takes whole numbers rounded
    as the code rounds them: its runs are the same on either (rounding
    twice is rounding once).  A rounded pair no longer neighbours under the
    claim (a change of 0.2 made 1 under ``bounded-all``, Δ = 0.5) is left
    as it was."""
    for sc in scenarios:
        if sc.algorithm is not alg:
            continue
        a, b = as_the_code_sees(alg, sc.losses_a), as_the_code_sees(alg, sc.losses_b)
        if alg.claim is not None and alg.claim.not_neighbours(a, b) is not None:
            continue
        sc.losses_a, sc.losses_b = a, b
    return scenarios


def _scenarios(attack, alg: Algorithm, events: bool, trials: Optional[int] = None):
    """``attack.scenarios(alg)``, without event pilots when ``events`` is
    False and the attack can leave them out, with the exact pair ε of the
    declared model for ``optimised``."""
    kw = {}
    params = inspect.signature(attack.scenarios).parameters
    if not events and "events" in params:
        kw["events"] = False
    if trials is not None and "trials" in params:
        kw["trials"] = trials
    if attack.name == OPTIMISED:
        objective = pair_objective(alg)
        if objective is None:
            raise ValueError(f"attack optimised: {alg.name}'s declared model has no exact pair "
                             f"ε to maximise at its horizon")
        kw["objective"] = objective
    return attack.scenarios(alg, **kw)


def _search(alg: Algorithm, checked: bool, trials: Optional[int] = None, jobs: int = 1):
    """The search's scenarios; the interface contract first unless the other
    attacks' scenarios have checked it (so a broken learner is named by the
    interface check, not by the pilot).  ``ValueError`` when it does not
    apply."""
    search = ATTACKS[SEARCH]
    losses, advice = search.interface_input(alg)
    if not checked:
        check_interface(alg, losses, advice)
    # Runs that are copies of one another are refused before the pilot
    # simulates (the audit checks every scenario again once the pairs are
    # known, and runs code it cannot seed in this process).
    with active().phase(f"checking that {alg.name} draws from the generator it is given", 1,
                        "steps", quiet_below=1.0) as phase:
        unseeded = check_own_randomness(alg, losses, advice)
        phase.update(1)
    # Code run one call per run is slow: its pilot's batches go to every
    # worker, unless it draws entropy the audit cannot seed (a worker that
    # imported it afresh could repeat another's draws).
    pmap = process_map(jobs) if per_run_code(alg) and unseeded is None else None
    if not alg.learner.reads_first:
        return search.scenarios(alg, progress=active().phase, trials=trials, pmap=pmap)
    # A stream mechanism's search reports no progress of its own: one step.
    with active().phase(f"neighbour search pilot ({alg.name})", 1, "steps",
                        quiet_below=1.0) as phase:
        found = search.scenarios(alg, progress=active().phase, trials=trials, pmap=pmap)
        phase.update(1)
    return found


def check_scenarios(scenarios, claim=None) -> None:
    """Each scenario's pair against the relation of ``claim`` (default: the
    algorithm's own), then the interface contract once per algorithm run (a
    conversion around the canary is another algorithm)."""
    for sc in scenarios:
        sc.check(claim)
    seen = set()
    for sc in scenarios:
        if id(sc.algorithm) not in seen:
            seen.add(id(sc.algorithm))
            check_interface(sc.algorithm, sc.losses_a, sc.advice)
