"""Neighbouring pairs and events for PRIVATEBANDIT (Ene, Nguyen & Vladu, AAAI 2021).

Loss rows are function parameters (code, a, b) (see algorithms/projection_free/
bandit.py).  Every round but one has the zero function (a = 0, b = 0, which
vanishes everywhere), so the only signal in the released sums is the changed
round.  At that round side ℓ has a linear f(x) = ⟨a, x⟩ − b with ‖a‖₂ = L and
b = min_D ⟨a, x⟩ (f vanishes at a vertex and is as large as the domain allows
at the centre), and side ℓ′ has −f — the largest difference the loss class
admits, |f − f′| = 2|f|.

x_t only moves at batch boundaries and line 14 uses the stale sum s̃_{R−1},
so a change in batch R first shows in the points of batch R + 2.  Black-box
events: coordinate thresholds of x_t at the first round of batches R + 2 and
R + 3 (``CoordinateAbove`` + ``pilot_thresholds``) and thresholds on the
batch mean of x_t (``BatchMeanAbove``: the mean of T_batch points x̃ + ζu_t
averages the public perturbation away and leaves x̃).  These are events of
the played points, the output Lemmas 7 and 10 are about (Definition 2).

Separately, the white-box "pld" mode computes the exact privacy loss of the
transcript: the tree blocks released at batches 1..P that reach played
points (``bandit.last_read_batch``; the blocks released later, the root among
them, are read by no played point and are not released to the audit).  That
is the object the proofs bound through Theorem 4, so a transcript loss
above ε shows a gap in the proof, not by itself a leak of the points.
Those scenarios simulate every complete batch, so every block of the
transcript that contains the change is released.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Attack, Scenario, refuse_losses
from .events import CoordinateAbove, Union, pilot_quantiles, pilot_thresholds


@dataclass(frozen=True)
class BatchMeanAbove:
    """{(1/|B|) Σ_{t ∈ B} x_t[i] > c} for each listed batch of rounds B
    (0-based, contiguous), coordinate i and threshold c.  Thresholds fixed
    before the audit (``pilot_batch_thresholds``: an independent stream)."""

    batches: tuple        # ((start, end), ...) 0-based, end exclusive
    coords: tuple
    thresholds: tuple     # one tuple per (batch, coordinate)

    @property
    def point_rounds(self) -> tuple:
        return tuple(sorted({t for s, e in self.batches for t in range(s, e)}))

    @property
    def labels(self) -> list[str]:
        out, k = [], 0
        for s, e in self.batches:
            for i in self.coords:
                out += [f"mean x_t[{i + 1}] over t in {s + 1}..{e} > {c:.4g}"
                        for c in self.thresholds[k]]
                k += 1
        return out

    def count(self, actions, points=None) -> np.ndarray:
        out, k = [], 0
        for s, e in self.batches:
            m = np.mean([points[t] for t in range(s, e)], axis=0)
            for i in self.coords:
                c = np.asarray(self.thresholds[k])
                out.append((m[:, i][:, None] > c[None, :]).sum(axis=0))
                k += 1
        return np.concatenate(out)

    def indicators(self, actions, points=None) -> np.ndarray:
        out, k = [], 0
        for s, e in self.batches:
            m = np.mean([points[t] for t in range(s, e)], axis=0)
            for i in self.coords:
                out.append(m[:, i][:, None] > np.asarray(self.thresholds[k])[None, :])
                k += 1
        return np.hstack(out)


def pilot_batch_thresholds(alg, losses_pair, batches, coords, n_thresholds=15,
                           pilot_runs=4000) -> tuple:
    """Quantiles of the batch means over a pilot of both sides on a fixed
    stream of its own (``pilot_quantiles``)."""
    fam = BatchMeanAbove(tuple(batches), tuple(coords), ())

    def batch_means(pts):
        out = []
        for s, e in batches:
            m = np.mean([pts[t] for t in range(s, e)], axis=0)
            out += [m[:, i] for i in coords]
        return out
    return pilot_quantiles(alg, losses_pair, fam.point_rounds, batch_means, 0xBA7C,
                           n_thresholds, pilot_runs)


def _is_pfb(alg) -> None:
    if "tbatch" not in alg.params or "domain" not in alg.extra:
        raise ValueError(f"the pfb-* attacks apply to PRIVATEBANDIT (pfb-*); {alg.name} is not one")


def changed_pair(alg, t: int) -> tuple[np.ndarray, np.ndarray]:
    """Zero functions everywhere; at round t (0-based) f vs −f (module docstring)."""
    n, L, dom = alg.n_arms, alg.params["L"], alg.extra["domain"]
    a_side = np.zeros((alg.horizon, n + 2))
    c = dom.center(n)
    if dom.name == "simplex":
        direction = c - np.eye(n)[0]          # f vanishes at e_1, largest at the centre
    else:
        direction = np.eye(n)[0]              # f vanishes at −e_1, f(0) = L, f(e_1) = 2L
    a = L * direction / np.linalg.norm(direction)
    lo, _ = dom.support_range(a[None, :])
    a_side[t, 1:-1], a_side[t, -1] = a, lo[0]
    b_side = np.zeros_like(a_side)
    b_side[t, 1:-1], b_side[t, -1] = -a, -lo[0]
    return a_side, b_side


def pair_at(alg, label: str, t: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair changed at round t (0-based), after the checks every pfb-*
    attack makes: PRIVATEBANDIT, t in a complete batch."""
    _is_pfb(alg)
    tb, n_rounds = alg.params["tbatch"], alg.params["n_rounds"]
    if t >= n_rounds * tb:
        raise ValueError(f"attack {label}: round {t + 1} is past the last complete batch")
    return changed_pair(alg, t)


def scenario_at(alg, label: str, t: int, notes=()) -> Scenario:
    la, lb = pair_at(alg, label, t)
    tb, n_rounds = alg.params["tbatch"], alg.params["n_rounds"]
    R = t // tb + 1                               # the changed batch, 1-based
    shows = [r for r in (R + 2, R + 3) if r <= n_rounds + 1 and (r - 1) * tb < alg.horizon]
    exact = alg.learner.transcript is not None
    # Exact transcript audits need every block containing batch R released:
    # simulate to the end of the tree; black-box only needs batches R+2, R+3.
    rounds = n_rounds * tb if exact else min(alg.horizon, max(shows, default=R) * tb)
    rounds = max(rounds, t + 1)
    parts = []
    firsts = [(r - 1) * tb for r in shows if (r - 1) * tb < rounds]
    coords = tuple(range(alg.n_arms))
    if firsts:
        parts.append(CoordinateAbove(tuple(firsts), coords,
                                     pilot_thresholds(alg, (la, lb), firsts, coords)))
        batches = tuple(((r - 1) * tb, min(r * tb, rounds)) for r in shows if (r - 1) * tb < rounds)
        parts.append(BatchMeanAbove(batches, coords,
                                    pilot_batch_thresholds(alg, (la, lb), batches, coords)))
    events = Union(tuple(parts))
    P = alg.params.get("last_read_batch", n_rounds)
    note = [f"f vs −f at round {t + 1} (batch {R}); x_t first moves in batch {R + 2}",
            "black-box: events of the played points x_t; white-box pld: the transcript, the "
            f"tree blocks released at batches 1..{P}, which played points read (later blocks "
            f"reach none)",
            *notes]
    return Scenario(label, alg, la, lb, events, rounds, notes=note)


class _PFBAttack(Attack):
    """A pfb-* attack: pairs changed at the rounds ``changes`` lists, each a
    scenario of ``scenario_at``; ``applies`` checks them without the pilots
    of their events."""

    needs = ("PRIVATEBANDIT (pfb-*): loss rows that are linear functions (code, a, b), a "
             "batch size tbatch and a domain, and a complete batch at the changed round")

    def changes(self, alg) -> list[tuple[str, int, list]]:
        """(label, changed round (0-based), notes) of every pair."""
        raise NotImplementedError

    def applies(self, alg):
        for label, t, _ in self.changes(alg):
            refuse_losses(self.name, alg, *pair_at(alg, label, t))

    def scenarios(self, alg):
        return [scenario_at(alg, label, t, notes) for label, t, notes in self.changes(alg)]


class PFBFirstRound(_PFBAttack):
    name = "pfb-first-round"
    summary = "PRIVATEBANDIT: f vs −f (linear, ‖a‖ = L) at round 1, zero functions elsewhere"

    def changes(self, alg):
        return [(self.name, 0, [])]


class PFBBatchEdge(_PFBAttack):
    name = "pfb-batch-edge"
    summary = ("PRIVATEBANDIT: f vs −f at the last round of batch 1, and separately at the "
               "first round of batch 2")

    def changes(self, alg):
        _is_pfb(alg)
        tb = alg.params["tbatch"]
        out = [(f"{self.name}:last-of-batch-1", tb - 1, [])]
        if alg.params["n_rounds"] >= 2:
            out.append((f"{self.name}:first-of-batch-2", tb, []))
        return out


class PFBTreeLevel(_PFBAttack):
    name = "pfb-tree-level"
    summary = ("PRIVATEBANDIT: f vs −f inside the batch just after the left half of the tree "
               "(R = 2^k + 1: it lies in one block of every level)")
    needs = ("PRIVATEBANDIT (pfb-*): loss rows that are linear functions (code, a, b), a "
             "batch size tbatch and a domain, and at least 3 complete batches")

    def changes(self, alg):
        _is_pfb(alg)
        tb, n_rounds = alg.params["tbatch"], alg.params["n_rounds"]
        if n_rounds < 3:
            raise ValueError(f"attack {self.name} needs at least 3 batches, {alg.name} has {n_rounds}")
        half = 1 << ((n_rounds - 1).bit_length() - 1)     # largest power of two < n_rounds
        mid = tb // 2
        # Batch half + 1 opens the right half: its blocks complete at half + 1,
        # half + 2, half + 4, … up to the root — every level — and by then
        # x̃ has been moved by the noisy sums, so it can sit at the far vertex
        # where |f − f′| is largest.
        return [(f"{self.name}:batch-{half + 1}", half * tb + mid,
                 [f"batch {half + 1} opens the block [{half + 1}, {2 * half}]"])]


FAMILY_ATTACKS: tuple = (PFBFirstRound(), PFBBatchEdge(), PFBTreeLevel())
