"""Ene, Nguyen & Vladu, "Projection-Free Bandit Optimization with Privacy Guarantees" (AAAI 2021)."""
from __future__ import annotations

ENTRIES: list = []  # registry Entry objects, filled by this package's catalog
