"""Asi, Raman & Saha, "Tracking the Best Expert Privately"."""
from __future__ import annotations

ENTRIES: list = []  # registry Entry objects, filled by this package's catalog
