"""Neighbouring pairs and events for the algorithms of Agarwal & Singh (ICML 2017)."""
from __future__ import annotations

FAMILY_ATTACKS: tuple = ()  # Attack instances, registered in attacks/__init__.py
