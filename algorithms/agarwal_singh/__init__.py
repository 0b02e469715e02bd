"""Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017)."""
from __future__ import annotations

ENTRIES: list = []  # registry Entry objects, filled by this package's catalog
