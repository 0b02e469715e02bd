"""Neighbouring pairs and events for the algorithms of Ene, Nguyen & Vladu (AAAI 2021)."""
from __future__ import annotations

FAMILY_ATTACKS: tuple = ()  # Attack instances, registered in attacks/__init__.py
