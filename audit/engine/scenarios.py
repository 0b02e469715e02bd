"""Scenarios of an audit: the attacks it runs and the neighbouring pairs
they build, checked before any simulation (each scenario's own checks and
the interface contract of every distinct algorithm that runs).

May import: ``algorithms``, ``attacks``, ``audit.engine.contract``.
"""
from __future__ import annotations

from typing import Optional, Sequence

from algorithms.core import Algorithm
from attacks import ATTACKS
from audit.engine.contract import check_interface


def attack_names(alg: Algorithm, attacks: Optional[Sequence[str]]) -> list[str]:
    """The attacks an audit runs: those asked for, else the algorithm's own."""
    return list(attacks) if attacks else list(alg.default_attacks)


def scenarios_for(alg: Algorithm, attacks: Optional[Sequence[str]]):
    """The scenarios of the named attacks (default: the algorithm's) and the names."""
    names = attack_names(alg, attacks)
    if not names:
        raise ValueError(f"{alg.name} names no default attacks; choose with --attack "
                         f"({', '.join(ATTACKS)})")
    out = []
    for name in names:
        attack = ATTACKS.get(name)
        if attack is None:
            raise ValueError(f"unknown attack {name!r}; choose from: {', '.join(ATTACKS)}")
        out.extend(attack.scenarios(alg))
    return out, names


def check_scenarios(scenarios) -> None:
    """Each scenario's own checks, then the interface contract once per
    algorithm run (a conversion around the canary is another algorithm)."""
    for sc in scenarios:
        sc.check()
    seen = set()
    for sc in scenarios:
        if id(sc.algorithm) not in seen:
            seen.add(id(sc.algorithm))
            check_interface(sc.algorithm, sc.losses_a, sc.advice)
