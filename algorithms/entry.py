"""A registry entry: a factory and the defaults ``audit list`` shows."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

from .core import Algorithm


@dataclass(frozen=True)
class Entry:
    """``factory(T, K, [N], [epsilon], [delta], **params) -> Algorithm``; K is
    the number of arms, or of experts for full-information learners, or the
    width of a loss row (``arms`` is its default)."""

    name: str
    factory: Callable[..., Algorithm]
    summary: str
    horizon: int = 1000
    arms: int = 2
    experts: Optional[int] = None
    epsilon: Optional[float] = 1.0
    delta: float = 0.0
    # Every draw of its learner is one row per run, made whatever the runs'
    # data: run on many blocks at once (``audit.execution.blocks``) it plays
    # what it plays on each block alone (tests/test_blocks.py checks every
    # entry that says so).  False where a draw is made only when some run
    # needs it (``if decide.any(): rng.laplace(...)``).
    row_draws: bool = True
    # The array backends its learner runs on (``algorithms.backend``):
    # numpy, and jax where it is written against an array namespace.
    backends: tuple = ("numpy",)


BOTH = ("numpy", "jax")


def on_both(entries) -> list:
    """``entries`` marked as running on numpy and on JAX."""
    return [replace(e, backends=BOTH) for e in entries]
