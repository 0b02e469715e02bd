"""Neighbouring pairs and events for the algorithms of Asi, Raman & Saha (tracking the best expert)."""
from __future__ import annotations

FAMILY_ATTACKS: tuple = ()  # Attack instances, registered in attacks/__init__.py
