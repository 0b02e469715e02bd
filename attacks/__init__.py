"""Neighbouring-pair constructions, canaries, the neighbour search and event families.

May import: numpy, scipy and ``algorithms`` (the pilots run
``algorithms.simulate``), never ``audit``: the engine hands the search a
progress callback instead.
"""
from .base import Attack, Scenario
from .canary import Canary, threshold_canary
from .pairs import BatchEdge, FirstRound, G1, Lemma51, RareArm
from . import agarwal_singh, optimised, projection_free, testers, tracking_experts
from . import agarwal_singh_olo

ATTACKS = {a.name: a for a in (G1(), Canary(), FirstRound(), BatchEdge(), Lemma51(), RareArm(),
                               *agarwal_singh.FAMILY_ATTACKS, *agarwal_singh_olo.FAMILY_ATTACKS,
                               *tracking_experts.FAMILY_ATTACKS,
                               *projection_free.FAMILY_ATTACKS, *testers.FAMILY_ATTACKS,
                               optimised.Optimised(), testers.Search())}

__all__ = ["ATTACKS", "Attack", "Scenario", "threshold_canary"]
