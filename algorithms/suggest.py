"""Suggestions for a misspelt name (an algorithm, an attack, a mode, a
keyword argument): the closest known names, for error messages.

Imports nothing from this project, so every layer may use it.
"""
from __future__ import annotations

import difflib
from typing import Iterable

# difflib's similarity ratio a suggestion must reach (its default, 0.6, misses
# short names with one wrong character, e.g. 'g2' for 'g1').
CUTOFF = 0.5
MOST = 3


def closest(name: str, choices: Iterable[str], n: int = MOST) -> list[str]:
    """Up to ``n`` of ``choices`` closest to ``name`` (difflib's similarity
    ratio, case ignored), closest first and, among equally close ones, in
    the order given; none when nothing is close."""
    choices = list(dict.fromkeys(choices))
    if not isinstance(name, str) or not name:
        return []
    matcher = difflib.SequenceMatcher(b=name.lower())
    scored = []
    for i, c in enumerate(choices):
        matcher.set_seq1(c.lower())
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            score = matcher.ratio()
            if score >= CUTOFF:
                scored.append((-score, i, c))
    return [c for _, _, c in sorted(scored)[:n]]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean a, b?"`` for the names closest to ``name``, or ``""``."""
    found = closest(name, choices)
    return f"; did you mean {', '.join(found)}?" if found else ""


def unknown_name(kind: str, name: str, choices: Iterable[str], see: str = "",
                 list_all: bool = False) -> str:
    """One line for a name that is not one of ``choices``: ``unknown KIND
    'NAME'; did you mean A, B? (see 'SEE')``.  Without a close name it says
    ``choose from: ...`` when ``list_all`` (a short list), else only where
    to look."""
    choices = list(choices)
    hint = did_you_mean(name, choices)
    if not hint and list_all:
        hint = f"; choose from: {', '.join(choices)}"
    return f"unknown {kind} {name!r}{hint}" + (f" (see '{see}')" if see else "")


def unknown_algorithm(name: str, registered: Iterable[str]) -> str:
    """The line for an algorithm name that is neither one of the
    ``registered`` names nor an import path: the closest registered names,
    and where the others are."""
    return (unknown_name("algorithm", name, registered)
            + " (a registered name, see 'audit list', or your own as "
              "package.module:attribute)")
