"""``audit list``: the registered algorithms (claim, default attacks,
white-box modes); with ``--attacks``, what each attack needs and where it
applies; with an algorithm (``audit list NAME`` or ``package.module:attribute``,
built from the same flags as ``audit run``), what applies to it.

Fast: nothing is simulated and the engine is not imported (the one code
run is ``algorithms.replay``'s replay of a stream mechanism on chosen draws,
milliseconds, to say whether the ``replay`` mode applies).  Whether an
attack applies is its ``applies`` check (no pilots); the white-box modes
are derived from what the algorithms its pairs run declare
(``Attack.white_box_runs``), by the rule of
``audit.engine.evidence.whitebox.applicable_modes`` (tests/test_listing.py
checks the two agree on every registered algorithm).

May import: ``algorithms`` (``algorithms.replay`` included), ``attacks``, ``audit.cli.common``.
"""
from __future__ import annotations

import textwrap

from algorithms.replay import replay_applies
from audit.cli.common import (EXIT_OK, STREAM_ATTACKS, UsageError, check_attack_applies,
                              data_independence_warning, one_line, table_lines)

# The white-box modes in the engine's order (audit.engine.evidence.whitebox.WHITE_MODES).
WHITE_MODES = ("per-round", "search", "pld", "recursion", "integral", "replay")
SEARCH = "search"
BUILD_FLAGS = ("epsilon", "delta", "horizon", "arms", "experts")


def _attacks():
    from attacks import ATTACKS
    return ATTACKS


def default_attack_names(alg) -> list[str]:
    """The attacks ``audit run`` runs by default: the algorithm's own and the
    neighbour search (``audit.engine.scenarios.attack_names``)."""
    names = list(alg.default_attacks)
    return names if SEARCH in names else names + [SEARCH]


def declared_modes(run, history: bool) -> list[str]:
    """The white-box modes a pair run by ``run`` supports, from what ``run``
    declares (``applicable_modes`` for a pair of one changed round): with
    ``probs`` and ``commit`` and no transcript (action scope) per-round if
    the pair carries an output history, search and pld; with a transcript
    pld (for a finite noise law only when its means are history-free);
    recursion where a scalar state model for its number of arms is declared
    and the claim is about the actions or the transcript; integral where a
    sparse vector, two in parallel or report-noisy-max is declared and the
    claim is about the actions; replay where the code of a stream mechanism
    can be replayed exactly (one replay of its code on chosen draws, a few
    milliseconds: ``algorithms.replay``)."""
    from algorithms.state_model import ScalarStateModel
    lr = run.learner
    claim_scope = run.claim.scope if run.claim is not None else None
    modes: list[str] = []
    if lr.probs is not None and lr.commit is not None and lr.transcript is None:
        modes = (["per-round"] if history else []) + ["search", "pld"]
    elif lr.transcript is not None:
        if lr.transcript.noise.kind != "finite" or lr.transcript.history_free:
            modes = ["pld"]
    extra = run.extra or {}
    model = extra.get("state_model")
    if (isinstance(model, ScalarStateModel) and model.n_arms == run.n_arms
            and claim_scope in (None, "actions", "transcript")):
        modes.append("recursion")
    if any(extra.get(k) is not None for k in INTEGRAL_KEYS) and claim_scope in (None, "actions"):
        modes.append("integral")
    if replay_applies(run):
        modes.append("replay")
    return modes


# The declarations the integral mode rests on (as
# audit.engine.evidence.whitebox.INTEGRAL_DECLARATIONS; not imported from
# there, so that `audit list` does not load the engine).
INTEGRAL_KEYS = ("sparse_vector", "parallel_sparse_vectors", "noisy_max")


def attack_modes(attack, alg) -> list[str]:
    """The white-box modes the pairs of ``attack`` on ``alg`` support (it
    must apply), in the engine's order."""
    found = {m for run, history in attack.white_box_runs(alg)
             for m in declared_modes(run, history)}
    return [m for m in WHITE_MODES if m in found]


def applies(attack, alg) -> "str | None":
    """None when ``attack`` applies to ``alg``, else why not (one line)."""
    try:
        check_attack_applies(attack, alg)
    except ValueError as exc:
        return one_line(exc)
    return None


def white_box_modes(alg) -> list[str]:
    """The white-box modes that apply to ``alg`` with its default attacks:
    those of every default attack that applies (``attack_modes``)."""
    attacks = _attacks()
    found: set[str] = set()
    for name in alg.default_attacks:
        attack = attacks.get(name)
        if attack is not None and applies(attack, alg) is None:
            found.update(attack_modes(attack, alg))
    return [m for m in WHITE_MODES if m in found]


def claim_words(claim) -> str:
    if claim is None:
        return "none declared"
    words = claim.words
    if claim.per_round_epsilon is not None:
        words += f" (ε_t = {claim.per_round_epsilon:g} per round)"
    return words


def add_list_arguments(p) -> None:
    """``audit list [ALGO] [build flags] [--attacks]``: the build flags are
    ``audit run``'s (``add_build_options``), for an algorithm named here."""
    from audit.cli.common import add_build_options
    add_build_options(p, optional=True)
    p.add_argument("--attacks", action="store_true",
                   help="list the attacks instead: what each needs and which registered "
                        "algorithms it applies to (default: off)")


def cmd_list(args) -> int:
    given = [f"--{k}" for k in BUILD_FLAGS if getattr(args, k, None) is not None]
    given += ["--param"] if getattr(args, "param", None) else []
    if args.algorithm is not None:
        if args.attacks:
            raise UsageError("--attacks lists every attack; with ALGO, 'audit list ALGO' "
                             "already says which attacks apply to it and what the others need")
        return list_one(args)
    if given:
        raise UsageError(f"{given[0]} builds the algorithm named by ALGO: give one "
                         f"('audit list ALGO {given[0]} ...')")
    if args.attacks:
        return list_attacks()
    return list_algorithms()


def _registered() -> dict:
    from algorithms import REGISTRY, build
    return {name: build(name) for name in REGISTRY}


def list_attacks() -> int:
    algorithms = _registered()
    wrap = textwrap.TextWrapper(width=100, initial_indent="    ", subsequent_indent="      ",
                                break_on_hyphens=False)
    print("Attacks (what each needs, and the registered algorithms it applies to):")
    for name, attack in _attacks().items():
        where = [n for n, alg in algorithms.items() if applies(attack, alg) is None]
        print(f"  {name}: {attack.summary}")
        print(wrap.fill(f"needs: {attack.needs}"))
        print(wrap.fill(f"applies to: {', '.join(where) if where else 'none registered'}"))
    return EXIT_OK


def list_algorithms() -> int:
    from algorithms import REGISTRY
    algorithms = _registered()
    rows = [("algorithm", "claim", "claim scope", "neighbours", "default attacks",
             "white-box modes", "backends", "summary")]
    sources, warnings = [], []
    for name, entry in REGISTRY.items():
        alg = algorithms[name]
        c = alg.claim
        rows.append((name, claim_words(c), c.scope, c.relation_words,
                     ", ".join(default_attack_names(alg)) or "-",
                     ", ".join(white_box_modes(alg)) or "-", ", ".join(entry.backends),
                     entry.summary))
        sources.append(c.source)
        warnings.append(data_independence_warning(alg))
    print("Algorithms (claim at the default parameters; 'audit list NAME' for one, with "
          "'audit run' flags):")
    lines = table_lines(rows)
    width = max(len(r[0]) for r in rows)
    print(lines[0])
    for line, source, warning in zip(lines[1:], sources, warnings):
        print(line)
        print(f"  {'':{width}s}  source: {source}")
        if warning:
            print(f"  {'':{width}s}  warning: {warning}")
    print("\nAttacks ('audit list --attacks' says what each needs and where it applies):")
    for line in table_lines([(name, attack.summary) for name, attack in _attacks().items()]):
        print(line)
    return EXIT_OK


def list_one(args) -> int:
    """What applies to one algorithm, built as ``audit run`` builds it: its
    claim, the attacks that apply (with their white-box modes), what the
    others need and why they do not apply, and the white-box modes of its
    default attacks."""
    from algorithms import build
    alg = build(args.algorithm, horizon=args.horizon, arms=args.arms, experts=args.experts,
                epsilon=args.epsilon, delta=args.delta, params=dict(args.param or []),
                naming="cli-regret", methods=args.methods, feedback=args.feedback)
    attacks = _attacks()
    shape = f"T = {alg.horizon}, K = {alg.n_arms}" + (
        f", N = {alg.n_experts}" if alg.n_experts else "")
    lo, hi = alg.loss_range
    shape += "" if (lo, hi) == (0.0, 1.0) else f", losses in [{lo:g}, {hi:g}]"
    origin = "" if args.algorithm == alg.name else f", from {args.algorithm}"
    print(f"{alg.name}  ({shape}{origin})")
    c = alg.claim
    if c is None:
        print("  claim: none declared (audit it against one: 'audit run ... --claim-epsilon E')")
    else:
        print(f"  claim: {claim_words(c)}, scope {c.scope} — {c.source}")
        print(f"  the claim is about: {c.about}")
    warning = data_independence_warning(alg)
    if warning:
        print(f"  warning: {warning}")
    defaults = default_attack_names(alg)
    print(f"  default attacks: {', '.join(defaults)}")
    print(f"  white-box modes with them: {', '.join(white_box_modes(alg)) or '-'}")
    rows, refused = [], []
    for name, attack in attacks.items():
        why = applies(attack, alg)
        if why is None:
            modes = attack_modes(attack, alg)
            rows.append((name, "default" if name in defaults else "",
                         f"white-box: {', '.join(modes)}" if modes else "black-box only"))
        else:
            refused.append((name, attack, why))
    print("  attacks that apply (--attack NAME):")
    for line in table_lines(rows, indent="    ") if rows else ["    none"]:
        print(line)
    wrap = textwrap.TextWrapper(width=100, initial_indent="      ", subsequent_indent="      ",
                                break_on_hyphens=False)
    if alg.learner.reads_first:   # every attack for learners is refused for the same reason
        learners = [name for name, _, _ in refused if name not in STREAM_ATTACKS]
        refused = [r for r in refused if r[0] in STREAM_ATTACKS]
        if learners:
            print(f"  attacks for learners do not apply: {alg.name} is a mechanism over a "
                  f"stream of answers")
            print(wrap.fill(", ".join(learners)))
    if refused:
        print("  attacks that do not apply (what each needs; why not here):")
    for name, attack, why in refused:
        print(f"    {name}" + ("  (a default attack: 'audit run' without --attack refuses to "
                               "run)" if name in defaults else ""))
        print(wrap.fill(f"needs: {attack.needs}"))
        print(wrap.fill(f"here: {why}"))
    return EXIT_OK
