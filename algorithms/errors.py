"""Errors raised by an algorithm's own code, told apart from the tool's.

Every place the tool calls a learner's functions (``init``, ``act``,
``feed``, ``probs``, ``commit``, ``point``, ``incurred``, a transcript
model's functions, a user's factory) does it inside ``user_call(name,
round)``, or (the simulation's hot loop) inside one equivalent try/except.  Any exception
that escapes the learner becomes a ``UserCodeError`` naming the function and
the round, so the command line can print one line: exit 2 for a user's
algorithm (it broke the interface or raised), exit 3 for a built-in one (a
bug of this tool).  The interface contract checks (``audit.engine.contract``) raise
it too.  Imports nothing from the rest of the project.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Optional


class UserCodeError(Exception):
    """An algorithm's function raised or broke the interface contract.

    ``function`` is the learner function's name (``"act"``), ``round`` the
    1-based round or None, ``detail`` what went wrong.  Picklable (it crosses
    process boundaries from the worker pools)."""

    def __init__(self, function: str, round: Optional[int], detail: str):
        super().__init__(function, round, detail)
        self.function, self.round, self.detail = function, round, detail

    @classmethod
    def raised(cls, function: str, round: Optional[int], exc: BaseException) -> "UserCodeError":
        """``function`` raised ``exc``: "act() at round 3 raised ValueError: boom"
        (the message left out when empty)."""
        return cls(function, round, f"raised {type(exc).__name__}: {exc}".rstrip(": "))

    def __str__(self) -> str:
        # "act() at round 3 raised ValueError: boom", or for a broken
        # contract "act() at round 1: must return (state, actions), got list".
        where = f" at round {self.round}" if self.round is not None else ""
        sep = " " if self.detail.startswith("raised ") else ": "
        return f"{self.function}(){where}{sep}{self.detail}"


@contextmanager
def user_call(function: str, round: Optional[int] = None):
    """Run a call into an algorithm's code; an exception it raises becomes a
    ``UserCodeError`` ("act() at round 3 raised ValueError: …")."""
    try:
        yield
    except (UserCodeError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - anything the learner raises is its error
        raise UserCodeError.raised(function, round, exc) from exc


class ReturnedAnAlgorithm(UserCodeError):
    """A callable taken for a mechanism returned an algorithm: it is a
    factory after all (``make(eta, epsilon)``), and is built as one."""



class NoClaim(ValueError):
    """Code audited as written that states no privacy claim and was given
    none (one line for the command line, exit 2; a curve claim alone may
    stand in for it there)."""
