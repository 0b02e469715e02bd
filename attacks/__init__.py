"""Neighbouring-pair constructions, canaries and event families."""
ATTACKS = {}
