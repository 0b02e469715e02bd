"""Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017)."""
from __future__ import annotations

from ..entry import Entry
from . import catalog

ENTRIES: list = [
    Entry("as-ftrl-experts", catalog.make_ftrl_experts,
          "Alg 1+2: FTRL (entropy) on tree-aggregated Laplace sums, experts (Thm 3.1/Cor 3.2)"),
    Entry("as-ftpl", catalog.make_ftpl,
          "Alg 3+2: FTPL on tree-aggregated Gaussian sums, experts (Thm 3.5, audited as (eps, delta))",
          delta=1e-6),
    Entry("as-bandit-exp2", catalog.make_bandit_exp2,
          "Alg 4 around Alg 5: Laplace on the observed loss + EXP2 (Thm 4.1)"),
    Entry("as-ftrl-experts-ln", catalog.make_ftrl_experts_ln,
          "PAPER VARIANT Alg 1+2 with lambda = N ln T/eps (true eps = eps*ceil(log2 T)/ln T)",
          horizon=64),
    Entry("as-ftrl-lemma33", catalog.make_ftrl_experts_lemma33,
          "PAPER VARIANT Lemma 3.3: all tree nodes through t = T, T = 2^k (true eps = eps(k+1)/k)",
          horizon=16),
]
