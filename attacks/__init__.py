"""Neighbouring-pair constructions, canaries and event families (SPEC §3)."""
from .base import Attack, Scenario
from .canary import Canary, threshold_canary
from .pairs import BatchEdge, FirstRound, G1, Lemma51, RareArm

ATTACKS = {a.name: a for a in (G1(), Canary(), FirstRound(), BatchEdge(), Lemma51(), RareArm())}

__all__ = ["ATTACKS", "Attack", "Scenario", "threshold_canary"]
