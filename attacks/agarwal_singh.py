"""Neighbouring pairs and events for the algorithms of Agarwal & Singh (ICML 2017)."""
from __future__ import annotations

import numpy as np

from .base import Attack, Scenario, loss_extremes, refuse_losses
from .events import ActionAt, CoordinateAbove, SwitchAt, Union, pilot_thresholds, standard_events

# Simulating costs one tree step per round; by round 32 round 1's nodes of
# levels 0..5 are released (6 of the ⌈log₂ T⌉ = 10 at T = 1000).
MAX_ROUND = 32


def split_pair(T: int, N: int, t: int, lo: float = 0.0,
               hi: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """All losses lo except round t (0-based): the first ⌈N/2⌉ experts lose
    hi on ℓ and the others on ℓ′ (lo and hi the ends of the loss range).
    Every coordinate moves across the whole range, so ‖ℓ_t − ℓ′_t‖₁ =
    N(hi − lo), the diameter of [lo, hi]^N in ℓ₁: N on [0, 1], the most
    Lap^N(λ) with λ = N·(...)/ε is calibrated for, and 2N on the paper's
    [−1, 1]^N (‖l‖∞ ≤ 1, Section 2), where the calibration to ‖𝒴‖₁ = N
    (Lemma 3.3) covers only half of it.  The loss differences between the two
    halves move by 2(hi − lo) (a change of all N coordinates by the same
    amount would leave x_t ∝ exp(−ηL̃) unchanged and show only in the
    transcript)."""
    a = np.full((T, N), float(lo))
    b = a.copy()
    up = np.arange(N) < (N + 1) // 2
    a[t, up] = hi
    b[t, ~up] = hi
    return a, b


def _events(alg, a, b, rounds: int, focus: list[int]):
    N = alg.n_arms
    focus = [r for r in focus if r < rounds] or [rounds - 1]
    if alg.learner.point is not None:
        coords = (0,) if N == 2 else (0, N - 1)
        thr = pilot_thresholds(alg, (a, b), focus, coords)
        return Union((CoordinateAbove(tuple(focus), coords, thr), ActionAt(tuple(focus), N)))
    switches = tuple(r for r in focus if r >= 1)
    parts = [standard_events(rounds, N, focus=focus)]
    if switches:
        parts.append(SwitchAt(switches))
    return Union(tuple(parts))


def released_nodes_containing(s: int, until: int) -> int:
    """How many tree nodes released in rounds ≤ ``until`` contain round s
    (1-based).  Round t releases only the node of level lowest_bit(t) (the
    nodes its prefix sum needs), so s's level-i node [.., ⌈s/2^i⌉·2^i] is
    released iff ⌈s/2^i⌉ is odd, i.e. iff bit i of s − 1 is 0.  Round 1 lies
    in one released node per level (the worst case, levels(until) nodes);
    round 2^j only in the nodes of levels ≥ j."""
    n, i = 0, 0
    while 2 ** i <= until:
        end = ((s - 1) // 2 ** i + 1) * 2 ** i
        n += ((s - 1) >> i & 1) == 0 and end <= until
        i += 1
    return n


class TreeLevel(Attack):
    name = "as-tree-level"
    summary = ("tree-based aggregation: a split change (every coordinate across the loss range, "
               "ℓ₁ = N(hi − lo)) at round 1, which lies in one "
               "released node per level (released at 1, 2, 4, …), and at round P/2 + 1, the "
               "first round after a level boundary, inside the node [1, P] "
               "(P = largest power of two ≤ 32 whose node is released)")
    needs = ("a learner that aggregates its losses in a binary tree and declares it "
             "(Algorithm.extra['tree'] with the round its last node is released: as-ftrl-experts, "
             "as-ftpl and their variants), taking one loss per expert")

    def _tree(self, alg) -> dict:
        info = alg.extra.get("tree") if alg.extra else None
        if not info:
            raise ValueError(f"attack {self.name} applies to the tree-based algorithms "
                             f"(as-ftrl-experts, as-ftpl); {alg.name} has no tree")
        return info

    def applies(self, alg):
        """``scenarios``' checks without the pilots of its events."""
        self._tree(alg)
        refuse_losses(self.name, alg, *split_pair(alg.horizon, alg.n_arms, 0,
                                                  *loss_extremes(alg)))

    def scenarios(self, alg):
        info = self._tree(alg)
        T, N, last = alg.horizon, alg.n_arms, int(info["released_until"])
        P = 1 << (min(last, MAX_ROUND).bit_length() - 1)   # largest 2^j ≤ min(last, 32)
        rounds = min(T, P + 4)
        out = []
        cases = [("round-1", 0)] + ([(f"round-{P // 2 + 1}", P // 2)] if P >= 4 else [])
        for label, t in cases:
            a, b = split_pair(T, N, t, *loss_extremes(alg))
            # x_{t+2} is the first point reading L̃_{t+1} (0-based index t + 1);
            # later points read other nodes containing round t + 1.
            focus = [t + 1, t + 2, t + 4]
            n_nodes = released_nodes_containing(t + 1, min(rounds, last))
            out.append(Scenario(f"{self.name}:{label}", alg, a, b,
                                _events(alg, a, b, rounds, focus), rounds,
                                notes=[f"round {t + 1} lies in {n_nodes} tree node(s) released "
                                       f"within the {rounds} simulated rounds (at most "
                                       f"{released_nodes_containing(1, last)} over the horizon)"]))
        return out


FAMILY_ATTACKS: tuple = (TreeLevel(),)  # Attack instances, registered in attacks/__init__.py
