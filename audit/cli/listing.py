"""``audit list``: the registered algorithms (claim, default attacks,
white-box modes) and, with ``--attacks``, what each attack needs and where
it applies.

May import: ``algorithms``, ``attacks``, ``audit.engine``, ``audit.cli.common``.
"""
from __future__ import annotations

import textwrap

from audit.cli.common import (EXIT_OK, check_attack_applies, data_independence_warning,
                              one_line, table_lines)


def white_box_modes(alg) -> list[str]:
    """The white-box modes that apply to ``alg`` with its default attacks
    (``audit.engine.evidence.whitebox.applicable_modes`` on their pairs: at
    action scope (``audit.engine.privacy_loss.scope_of``) per-round if an
    attack gives a history, search, pld; at transcript scope pld; recursion
    where a scalar state model is declared; integral where a sparse vector
    is — whatever the scope)."""
    from audit.engine.evidence.whitebox import applicable_modes
    found: list[str] = []
    for name in alg.default_attacks:
        attack = _attacks().get(name)
        try:
            if attack is None:
                scenarios = []
            elif name == "patterns":    # its pairs without the events' pilots
                scenarios = attack.scenarios(alg, events=False)
            else:
                scenarios = attack.scenarios(alg)
        except ValueError:
            continue
        for sc in scenarios:
            found += [m for m in applicable_modes(sc) if m not in found]
    from audit.engine.evidence.whitebox import WHITE_MODES
    return [m for m in WHITE_MODES if m in found]


def _attacks():
    from attacks import ATTACKS
    return ATTACKS


def attack_applicability(attack, algorithms: dict) -> tuple[list[str], str]:
    """(names of the algorithms ``attack`` applies to, what it needs): it
    applies when ``check_attack_applies`` does not raise ValueError; what it
    needs is the first refusal, without the part naming the algorithm."""
    applies, need = [], ""
    for name, alg in algorithms.items():
        try:
            check_attack_applies(attack, alg)
        except ValueError as exc:
            if not need:
                need = one_line(exc).split("; ")[0]
                for prefix in (f"attack {attack.name} ", "attack ", "needs "):
                    if need.startswith(prefix):
                        need = need[len(prefix):]
            continue
        applies.append(name)
    if len(applies) == len(algorithms):
        need = "nothing special: applies to every registered algorithm"
    return applies, need or "-"


def cmd_list(args) -> int:
    from algorithms import REGISTRY, build
    from audit.engine.scenarios import attack_names
    ATTACKS = _attacks()
    algorithms = {name: build(name) for name in REGISTRY}
    if args.attacks:
        print("Attacks (what each needs, and the registered algorithms it applies to):")
        for name, attack in ATTACKS.items():
            applies, need = attack_applicability(attack, algorithms)
            wrap = textwrap.TextWrapper(width=100, initial_indent="    ",
                                        subsequent_indent="      ", break_on_hyphens=False)
            print(f"  {name}: {attack.summary}")
            print(wrap.fill(f"needs: {need}"))
            print(wrap.fill(f"applies to: {', '.join(applies) if applies else 'none registered'}"))
        return EXIT_OK
    rows = [("algorithm", "claim", "claim scope", "neighbours", "default attacks",
             "white-box modes", "summary")]
    sources, warnings = [], []
    for name, entry in REGISTRY.items():
        alg = algorithms[name]
        c = alg.claim
        eps = f"ε = {c.epsilon:g}" + (f", δ = {c.delta:g}" if c.delta else "")
        if c.per_round_epsilon is not None:
            eps += f" (ε_t = {c.per_round_epsilon:g} per round)"
        modes = white_box_modes(alg)
        rows.append((name, eps, c.scope, c.relation_words, ", ".join(attack_names(alg, None)) or "-",
                     ", ".join(modes) or "-", entry.summary))
        sources.append(c.source)
        warnings.append(data_independence_warning(alg))
    print("Algorithms (claim at the default parameters):")
    lines = table_lines(rows)
    width = max(len(r[0]) for r in rows)
    print(lines[0])
    for line, source, warning in zip(lines[1:], sources, warnings):
        print(line)
        print(f"  {'':{width}s}  source: {source}")
        if warning:
            print(f"  {'':{width}s}  warning: {warning}")
    print("\nAttacks ('audit list --attacks' says what each needs and where it applies):")
    for line in table_lines([(name, attack.summary) for name, attack in ATTACKS.items()]):
        print(line)
    return EXIT_OK
