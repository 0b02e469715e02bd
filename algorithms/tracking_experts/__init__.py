"""Asi, Raman & Saha, "Tracking the Best Expert Privately": Algorithm 1
(lazy report-noisy-max), Algorithm 2 (SVT restarts of Algorithm 1) and
Algorithm 3 (noisy mirror descent on the clipped simplex), each as boxed and,
where the box's privacy arithmetic is short, corrected."""
from __future__ import annotations

from ..entry import Entry
from . import catalog

ENTRIES: list = [
    Entry("tbe-lazy", catalog.make_tbe_lazy,
          "ARS Alg 1: lazy report-noisy-max at t = 2^l, Laplace(2/eps) (Thm 3.1)", horizon=1024),
    Entry("tbe-lazy-mutant-noise", catalog.make_tbe_lazy_mutant,
          "BROKEN ARS Alg 1 with Laplace(1/eps) (true eps = 2 eps)", horizon=1024),
    Entry("tbe-svt", catalog.make_tbe_svt,
          "ARS Alg 2 as boxed: SVT restarts of Alg 1, eps/2 each (Thm 3.6)", row_draws=False),
    Entry("tbe-svt-fixed", catalog.make_tbe_svt_fixed,
          "ARS Alg 2 corrected: restart at t+1, SVT noise for sensitivity 2", row_draws=False),
    Entry("tbe-adaptive", catalog.make_tbe_adaptive,
          "ARS Alg 3 as boxed: Laplace(1/eps) losses, clipped MD (Thm 5.2; noisy losses N eps-DP)"),
    Entry("tbe-adaptive-n2", catalog.make_tbe_adaptive_n2,
          "ARS Alg 3 as boxed with N = 2, eps = 1, eta = 1 (Thm B.2), audited on the chosen experts"),
    Entry("tbe-adaptive-fixed", catalog.make_tbe_adaptive_fixed,
          "ARS Alg 3 with Laplace(N/eps) per coordinate (l1-sensitivity N)"),
]

# Theorem 4.1's reduction over meta-experts, around Algorithm 1 (docs/findings.md).
ENTRIES += [
    Entry("tbe-meta", catalog.make_tbe_meta,
          "ARS Thm 4.1: Alg 1 over the meta-experts (<= S switches), playing their experts",
          horizon=8),
]
