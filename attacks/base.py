"""What an attack supplies: neighbouring pairs, the auditor's free choices
and candidate events."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from algorithms.core import Algorithm, Claim
from algorithms.validate import check_losses
from .instances import in_range


@dataclass
class Scenario:
    """One neighbouring pair to test.

    ``algorithm`` is what is run on both sides: the audited algorithm, or the
    same conversion around a base learner the auditor chose (canary).
    ``rounds`` is the prefix simulated; events only look at it, and the first
    m actions do not depend on later losses, so this is exact.
    """

    label: str
    algorithm: Algorithm
    losses_a: np.ndarray
    losses_b: np.ndarray
    events: object
    rounds: int
    advice: Optional[np.ndarray] = None
    group_size: int = 1
    notes: list = field(default_factory=list)
    # A fixed output history for the white-box per-round mode (0-based arms).
    history: Optional[np.ndarray] = None
    history_label: str = ""
    # A learned witness (a classifier's score over whole trajectories, see
    # audit.engine.witness) competes with ``events`` in the black-box test:
    # None lets the engine decide (on for the search attack and for
    # algorithms that declare no attacks), True or False forces it.
    learned: Optional[bool] = None
    # Notes that the pair's white-box results repeat (its black-box result
    # shows ``notes``): e.g. the optimised pair itself, so a white-box-only
    # audit still shows which pair its exact figure is about.
    white_box_notes: list = field(default_factory=list)

    def differing_rounds(self) -> np.ndarray:
        return np.flatnonzero(np.any(self.losses_a != self.losses_b, axis=1))

    def check(self, claim=None) -> None:
        """The engine refuses a pair that is not neighbouring under the
        relation of ``claim`` (default: the algorithm's own claim; without
        one, pairs must differ at exactly ``group_size`` rounds)."""
        claim = claim if claim is not None else self.algorithm.claim
        if claim is None:
            claim = Claim(0.0, 0.0, "actions", "no claim")
        why = claim.not_neighbours(self.losses_a, self.losses_b, self.group_size)
        if why is not None:
            raise ValueError(f"attack {self.label}: not a neighbouring pair: {why}")

    def describe_pair(self) -> str:
        rows = self.differing_rounds()
        parts = []
        for t in rows[:4]:
            a = np.array2string(self.losses_a[t], precision=3, separator=", ")
            b = np.array2string(self.losses_b[t], precision=3, separator=", ")
            parts.append(f"round {t + 1}: {a} vs {b}")
        more = f" (+{len(rows) - 4} more rounds)" if len(rows) > 4 else ""
        return "; ".join(parts) + more


class Attack:
    """Base class: ``scenarios(alg)`` returns the pairs to test, or raises
    ``ValueError`` saying why the attack does not apply to ``alg``.

    ``needs`` says in one line what an algorithm must be or declare for the
    attack to apply (``audit list --attacks``); ``applies`` checks it
    without running pilots, and ``white_box_runs`` says what white-box
    evidence can use of the pairs, without building them (``audit list``)."""

    name = "attack"
    summary = ""
    needs = ""

    def scenarios(self, alg: Algorithm) -> list[Scenario]:
        raise NotImplementedError

    def applies(self, alg: Algorithm) -> None:
        """Raise ``ValueError`` where the attack does not apply to ``alg``:
        where ``scenarios`` raises, or where the algorithm a pair runs
        refuses its losses (``refuse_losses``).  Attacks whose ``scenarios``
        run pilots override it with the same checks and no simulation."""
        for sc in self.scenarios(alg):
            refuse_losses(self.name, sc.algorithm, sc.losses_a, sc.losses_b)

    def white_box_runs(self, alg: Algorithm) -> list[tuple[Algorithm, bool]]:
        """For an ``alg`` it applies to, what white-box evidence can use of
        the attack's pairs, without building them: (the algorithm a pair
        runs, whether the pair carries a fixed output history), one per kind
        of pair; none for pairs that change several rounds or run black-box
        only.  Default: ``alg`` itself, no history."""
        return [(alg, False)]


def refuse_losses(attack: str, alg: Algorithm, *sides: np.ndarray) -> None:
    """``ValueError`` when ``alg`` refuses one of the loss sequences of a pair:
    its own ``check_losses`` (e.g. rows that are loss functions), else its
    loss class (one loss per arm, in ``Algorithm.loss_range``) — what the
    simulator checks before the first round."""
    for losses in sides:
        try:
            if alg.check_losses is not None:
                alg.check_losses(losses)
            else:
                check_losses(losses, K=alg.n_arms, loss_range=alg.loss_range)
        except ValueError as exc:
            raise ValueError(f"attack {attack}: {alg.name} refuses its losses: {exc}") from None


def at_least_two(attack: str, alg: Algorithm) -> int:
    """The number of experts (arms) of ``alg``; ``ValueError`` below 2 (the
    attacks that swap the losses of the first two need both)."""
    if alg.n_arms < 2:
        raise ValueError(f"attack {attack} needs at least 2 experts; {alg.name} has "
                         f"{alg.n_arms}")
    return alg.n_arms


def loss_extremes(alg: Algorithm) -> tuple[float, float]:
    """(lo, hi): the ends of the loss class the algorithm's claim assumes
    (``Algorithm.loss_range``, per coordinate).  Pairs that move a
    coordinate between the extremes move it between these two."""
    lo, hi = alg.loss_range
    return float(lo), float(hi)


def into_range(alg: Algorithm, x) -> np.ndarray:
    """Losses given on [0, 1] mapped affinely into the algorithm's loss
    range, lo + (hi − lo)·x (0 → lo, 1 → hi).  On [0, 1] this is x itself,
    bit for bit (0.0 + 1.0·x == x)."""
    return in_range(x, loss_extremes(alg))


def horizon_prefix(alg: Algorithm, wanted: int) -> int:
    return max(1, min(alg.horizon, wanted))


def batch_size(alg: Algorithm) -> Optional[int]:
    tau = alg.params.get("tau")
    return int(tau) if tau is not None else None
