"""Ene, Nguyen & Vladu, "Projection-Free Bandit Optimization with Privacy Guarantees" (AAAI 2021)."""
from __future__ import annotations

from ..entry import Entry
from . import catalog

# K is the dimension n of the domain; loss rows have width n + 2 (bandit.py).
ENTRIES: list = [
    Entry("pfb-laplace", catalog.make_pfb_laplace,
          "PRIVATEBANDIT (Alg 1), Laplace tree noise as Lemma 7 states it", horizon=64, arms=4),
    Entry("pfb-laplace-derived", catalog.make_pfb_laplace_derived,
          "PRIVATEBANDIT (Alg 1), Laplace scale B*Delta1/eps re-derived from the code's sums",
          horizon=64, arms=4),
    Entry("pfb-gaussian", catalog.make_pfb_gaussian,
          "PRIVATEBANDIT (Alg 1), Gaussian tree noise as Lemma 10 states it", horizon=64, arms=4,
          delta=1e-5),
    Entry("pfb-gaussian-derived", catalog.make_pfb_gaussian_derived,
          "PRIVATEBANDIT (Alg 1), analytic-Gaussian scale re-derived from the code's sums",
          horizon=64, arms=4, delta=1e-5),
]
