"""A registry entry: a factory and the defaults ``audit list`` shows."""
from __future__ import annotations

from dataclasses import dataclass
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
