"""What a mechanism written as a plain function or class returns, laid out
as the tool's observations: a code per round (for events on discrete
answers) and numbers (for thresholds and the learned witness).

Whatever the code returns — an arm, a number, ``None``, a boolean, a
tuple, a list, an array — is flattened into values.  The layout is fixed
once, from a probe of the code's outputs (``form_of``), and shipped with
the learner to every worker, so every run everywhere is encoded alike:

* **per-round**: a sequence with one value per input (an answer per query,
  a noisy count per bin; shorter sequences, e.g. a sparse vector that
  stops, are padded with ``None``): value i is round i's output;
* **final**: anything else (one answer, a tuple, a vector of another
  length): the whole output is observed at the last round.

Codes: the discrete values seen in the probe (``None``, booleans, integers,
strings; at most ``MAX_CODES``), in a fixed order, then one code for "a
number" and one for "another value".  In the final layout with several
values, a code stands for the tuple of its discrete values.  Numbers:
every value also as a float (``None`` → 0, ``False``/``True`` → 0/1),
recorded when the output holds floats or more discrete values than codes.
``label(code)`` says what a code stands for.

May import: numpy and ``algorithms.errors``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.errors import ReturnedAnAlgorithm, UserCodeError

MAX_CODES = 64
NUMBER, OTHER = "<a number>", "<another value>"


def leaves(output) -> list:
    """The values of one output, flattened in order (numpy scalars as
    Python ones; a dict by its sorted keys)."""
    out: list = []

    def walk(x):
        if isinstance(x, np.ndarray):
            walk(x.tolist())
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            for k in sorted(x, key=repr):
                walk(x[k])
        elif isinstance(x, np.generic):
            out.append(x.item())
        else:
            out.append(x)
    walk(output)
    return out


def _discrete(v) -> bool:
    return v is None or isinstance(v, (bool, int, str))


def _sort_key(v):
    if v is None:
        return (0, 0, "")
    if isinstance(v, bool):
        return (1, int(v), "")
    if isinstance(v, int):
        return (2, v, "")
    return (3, 0, str(v))


def _number(v, where: str) -> float:
    if v is None:
        return 0.0
    if isinstance(v, (bool, int, float)):
        x = float(v)
        return x if math.isfinite(x) else 0.0
    if isinstance(v, str):
        return 0.0
    if hasattr(v, "learner") and hasattr(v, "claim"):
        raise ReturnedAnAlgorithm(where, None, "returned an algorithm: a factory, not a "
                                  "mechanism")
    raise UserCodeError(where, None, f"returned a {type(v).__name__} among its values; outputs "
                        f"must be numbers, booleans, strings, None, or sequences of them")


@dataclass(frozen=True)
class StepForm:
    """How one observation (one round's output) is encoded: ``width``
    values, ``table`` the codes' values (a discrete value, or for
    ``width`` > 1 a tuple of them, then ``NUMBER`` and ``OTHER``),
    ``numbers`` whether the values are recorded as numbers; ``where`` names
    the user's function in errors."""

    width: int
    table: tuple
    numbers: bool
    where: str

    @property
    def n_codes(self) -> int:
        return len(self.table)

    def label(self, code: int) -> str:
        v = self.table[code]
        return v if v in (NUMBER, OTHER) else repr(v)

    def encode(self, values: list) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """(codes (runs,), numbers (runs, width) or None) of one step's
        values, one list of values per run (already flattened)."""
        index = {v: i for i, v in enumerate(self.table)}
        number, other = index[NUMBER], index[OTHER]
        runs = len(values)
        codes = np.empty(runs, dtype=np.int16)
        nums = np.zeros((runs, self.width)) if self.numbers else None
        for r, vals in enumerate(values):
            if len(vals) > self.width:
                raise UserCodeError(self.where, None, f"returned {len(vals)} values where "
                                    f"earlier outputs had at most {self.width}; an output "
                                    f"must keep one shape")
            if len(vals) < self.width:
                vals = list(vals) + [None] * (self.width - len(vals))
            keys = [v if _discrete(v) else NUMBER for v in vals]
            key = keys[0] if self.width == 1 else tuple(keys)
            c = index.get(key)
            codes[r] = c if c is not None else (number if key == NUMBER else other)
            if nums is not None:
                nums[r] = [_number(v, self.where) for v in vals]
        return codes, nums

    def describe(self) -> str:
        return (f"{self.width} value(s), {self.n_codes} codes"
                + (", numbers recorded" if self.numbers else ""))


def step_form(values: list, where: str, width: Optional[int] = None) -> StepForm:
    """The encoding of steps like these (flattened values, one list a run
    and step, from a probe of the code's own outputs)."""
    width = width or max((len(v) for v in values), default=0)
    if width == 0:
        raise UserCodeError(where, None, "returned an empty output; return what the "
                            "mechanism releases")
    padded = [list(v) + [None] * (width - len(v)) for v in values]
    for vals in padded:
        for v in vals:
            _number(v, where)       # refuses a value of no usable kind
    floats = any(not _discrete(v) for vals in padded for v in vals)
    if width == 1:
        keys = {vals[0] for vals in padded if _discrete(vals[0])}
        order = sorted(keys, key=_sort_key)
    else:
        keys = {tuple(v if _discrete(v) else NUMBER for v in vals) for vals in padded}
        order = sorted(keys, key=lambda k: tuple((5, 0, "") if x == NUMBER else _sort_key(x)
                                                 for x in k))
    overflow = len(order) > MAX_CODES - 2
    table = (NUMBER, OTHER) if overflow else tuple(order) + (NUMBER, OTHER)
    return StepForm(width, table, floats or overflow, where)


@dataclass(frozen=True)
class OutputForm:
    """The layout of a whole output over ``rounds`` inputs (module
    docstring): ``layout`` "per-round" (value i at round i) or "final" (the
    whole output at the last round), with its ``step`` encoding."""

    layout: str
    rounds: int
    step: StepForm

    def encode(self, outputs: list) -> tuple[np.ndarray, Optional[dict]]:
        """(codes (runs, rounds) int16, {round: numbers (runs, d)} or None)
        of the outputs of ``runs`` runs, each as the code returned it."""
        runs, T = len(outputs), self.rounds
        flat = [leaves(o) for o in outputs]
        codes = np.zeros((runs, T), dtype=np.int16)
        if self.layout == "final":
            c, nums = self.step.encode(flat)
            codes[:, T - 1] = c
            return codes, (None if nums is None else {T - 1: nums})
        for r, vals in enumerate(flat):
            if len(vals) > T:
                raise UserCodeError(self.step.where, None, f"returned {len(vals)} values "
                                    f"for {T} inputs; an output of one value per input "
                                    f"must keep that length")
        points = {} if self.step.numbers else None
        for t in range(T):
            c, nums = self.step.encode([[v[t]] if t < len(v) else [None] for v in flat])
            codes[:, t] = c
            if points is not None:
                points[t] = nums
        return codes, points

    def describe(self) -> str:
        if self.layout == "per-round":
            return f"one value per input ({self.rounds}), {self.step.n_codes} codes"
        return f"the whole output at the end ({self.step.describe()})"


def form_of(outputs: list, rounds: int, where: str) -> OutputForm:
    """The layout for outputs like these (a probe of the code's own
    outputs, on a few inputs), for a mechanism over ``rounds`` inputs."""
    if not outputs:
        raise UserCodeError(where, None, "returned no output to observe")
    flat = [leaves(o) for o in outputs]
    width = max(len(v) for v in flat)
    sequences = all(isinstance(o, (list, tuple, np.ndarray)) and np.ndim(o) <= 1
                    for o in outputs)
    if rounds > 1 and sequences and width == rounds:
        values = [[v[t]] if t < len(v) else [None] for v in flat for t in range(rounds)]
        return OutputForm("per-round", rounds, step_form(values, where, 1))
    return OutputForm("final", rounds, step_form(flat, where, width))
