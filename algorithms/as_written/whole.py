"""Whole-number inputs: code written for bits and counts, audited on them.

Randomized response returns its bit or ``1 - bit``.  Audited over the
reals it would "return" 0.38 on one input and never on its neighbour — an
exact violation of a correct program, on inputs it was never written for.
Code that takes whole numbers (or truth values) is therefore audited on
the whole numbers of its range: every value the audit moves is rounded to
the nearest (``rounded``) before the code sees it, so each pair tested is a
pair of neighbouring whole-number inputs, and a finding about it is a
finding about the code on its own domain.

Which code: an input annotated as whole numbers or truth values
(``integer_annotation``: ``bit: int``, ``flags: list[bool]``), or code seen
to return only whole numbers given whole inputs and fractions (or an
error) given fractions (``whole_number_code``): its output carries its
input.  A mechanism over the reals — Laplace noise, a noisy threshold —
returns fractions on whole inputs too, or whole numbers on fractions, and
stays over the reals.

May import: numpy, ``algorithms.errors``, ``algorithms.as_written.outputs`` (an
``Algorithm`` is read, not imported).
"""
from __future__ import annotations

import collections.abc
import inspect
import math
import re
import typing
from typing import Callable, Optional

import numpy as np

from algorithms.errors import UserCodeError
from .outputs import leaves

WHOLE_RUNS = 32             # runs on each input of the check of whole-number code
WHOLE_STREAM = 0x1E6E
_KINDS = {int: "int", "int": "int", bool: "bool", "bool": "bool"}
_CONTAINED = re.compile(r"(?:typing\.)?(?:list|List|Sequence|tuple|Tuple|Iterable|"
                        r"Collection)\[(int|bool)(?:, \.\.\.)?\]")


def integer_annotation(fn, name: str) -> Optional[str]:
    """"int" or "bool" where ``fn``'s parameter ``name`` is annotated as
    whole numbers or truth values — ``bit: int``, ``flag: bool``,
    ``bits: list[int]``, ``Sequence[bool]``, also as strings under
    postponed annotations —, else None."""
    try:
        ann = inspect.signature(fn).parameters[name].annotation
    except (TypeError, ValueError, KeyError):
        return None
    return _kind(ann)


def _kind(ann) -> Optional[str]:
    try:
        if ann in _KINDS:
            return _KINDS[ann]
    except TypeError:               # an unhashable annotation
        return None
    if isinstance(ann, str):
        m = _CONTAINED.fullmatch(ann.replace(" ", "").replace(",...", ", ..."))
        return m.group(1) if m else None
    args = [a for a in typing.get_args(ann) if a is not Ellipsis]
    if typing.get_origin(ann) in (list, tuple, collections.abc.Sequence,
                                  collections.abc.Iterable, collections.abc.Collection) \
            and args and len({_kind(a) for a in args}) == 1:
        return _kind(args[0])
    return None


def rounded(x: np.ndarray, kind: Optional[str]) -> np.ndarray:
    """``x`` as code of ``kind`` takes it: unchanged for None, else rounded
    to whole numbers ("int") or truth values ("bool")."""
    if not kind:
        return x
    return np.rint(np.asarray(x, dtype=float)).astype(bool if kind == "bool" else np.int64)


def as_the_code_sees(alg, x: np.ndarray) -> np.ndarray:
    """``x`` as ``alg``'s code reads it: rounded (as floats) where the code
    is audited on whole numbers (``Algorithm.extra["whole_inputs"]``),
    else ``x`` itself."""
    kind = alg.extra.get("whole_inputs") if isinstance(alg.extra, dict) else None
    return rounded(x, kind).astype(float) if kind else x


def _all_whole(outputs) -> bool:
    """Whether every number among ``outputs`` is a whole one (a truth value
    is; what is not a number says nothing either way)."""
    for out in outputs:
        for v in leaves(out):
            if isinstance(v, complex) or (isinstance(v, float)
                                          and not (math.isfinite(v) and v.is_integer())):
                return False
    return True


def whole_number_code(outputs: Callable, T: int, K: int, lo: float, hi: float,
                      rng: np.random.Generator) -> Optional[str]:
    """Why the code is code for whole-number inputs, or None: given whole
    numbers in [lo, hi] (its ends, and a mix of them) it returns only whole
    numbers, and given fractions it returns some fraction, or fails.
    ``outputs(x, ints)`` runs it on the (T, K) input ``x`` — rounded to
    whole numbers where ``ints`` — and returns what it output.  Only a
    range with whole ends is tried."""
    if not (float(lo).is_integer() and float(hi).is_integer() and hi > lo):
        return None
    mixed = rng.integers(int(lo), int(hi) + 1, size=(T, K)).astype(float)
    # Fractions well inside the range and off every half (rounding ties).
    frac = lo + (hi - lo) * (0.3 + 0.4 * rng.random((T, K)))
    frac = np.where(np.abs(frac - np.rint(frac)) < 0.1, frac + 0.25, frac)
    try:
        for x in (np.full((T, K), lo), np.full((T, K), hi), mixed):
            if not _all_whole(outputs(x, True)):
                return None
    except (UserCodeError, ValueError):
        return None
    try:
        outs = outputs(frac, False)
    except (UserCodeError, ValueError):
        return "it runs on whole numbers and fails on fractions"
    if _all_whole(outs):
        return None
    return "it returns whole numbers on whole inputs and fractions on fractional ones"
