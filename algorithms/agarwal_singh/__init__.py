"""Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017)."""
from __future__ import annotations

from ..entry import Entry
from . import catalog

# The first three take the paper's loss class ‖l_t‖∞ ≤ 1, [−1, 1]^N (where
# their noise covers half a changed row: the released values are 2 eps-DP, the
# proof's intermediate object; the theorems are about the predictions or
# arms, where a leak above eps is not demonstrated); the -unit variants
# the same algorithms on [0, 1]^N.  The paper variants stay on [0, 1]^N so
# that each shows only its own defect (catalog module docstring).
ENTRIES: list = [
    Entry("as-ftrl-experts", catalog.make_ftrl_experts,
          "Alg 1+2: FTRL (entropy) on tree-aggregated Laplace sums, experts (Thm 3.1/Cor 3.2), "
          "losses in [-1, 1]^N (tree nodes 2 eps-DP)"),
    Entry("as-ftpl", catalog.make_ftpl,
          "Alg 3+2: FTPL on tree-aggregated Gaussian sums, experts (Thm 3.5, audited as (eps, delta)), "
          "losses in [-1, 1]^N",
          delta=1e-6),
    Entry("as-bandit-exp2", catalog.make_bandit_exp2,
          "Alg 4 around Alg 5: Laplace on the observed loss + EXP2 (Thm 4.1), losses in "
          "[-1, 1]^N (forwarded noisy losses 2 eps-DP)"),
    Entry("as-ftrl-experts-unit", catalog.make_ftrl_experts_unit,
          "as-ftrl-experts on losses in [0, 1]^N (tree nodes exactly eps-DP)"),
    Entry("as-ftpl-unit", catalog.make_ftpl_unit,
          "as-ftpl on losses in [0, 1]^N", delta=1e-6),
    Entry("as-bandit-exp2-unit", catalog.make_bandit_exp2_unit,
          "as-bandit-exp2 on losses in [0, 1]^N (forwarded losses exactly eps-DP)"),
    Entry("as-ftrl-experts-ln", catalog.make_ftrl_experts_ln,
          "PAPER VARIANT Alg 1+2 with lambda = N ln T/eps (true eps = eps*ceil(log2 T)/ln T), "
          "losses in [0, 1]^N",
          horizon=64),
    Entry("as-ftrl-lemma33", catalog.make_ftrl_experts_lemma33,
          "PAPER VARIANT Lemma 3.3: all tree nodes through t = T, T = 2^k (true eps = eps(k+1)/k), "
          "losses in [0, 1]^N",
          horizon=16),
]

# Corollary 3.2's sphere and cube, and Lemma 4.2's reduction around any base
# learner (docs/findings.md): each on the paper's own loss class.
ENTRIES += [
    Entry("as-ftrl-sphere", catalog.make_ftrl_sphere,
          "Alg 1+2: FTRL (R = ||x||^2) over the unit l2 ball, losses in the unit l2 ball "
          "(Cor 3.2.2; tree nodes 2 eps-DP)", horizon=2),
    Entry("as-ftrl-cube", catalog.make_ftrl_cube,
          "Alg 1+2: FTRL (R = ||x||^2) over [-1, 1]^N, losses in the unit l1 ball "
          "(Cor 3.2.3; tree nodes 2 eps-DP)", horizon=2),
    Entry("as-reduction", catalog.make_reduction,
          "Alg 4 (Lemma 4.2) around any base learner (EXP2 registered), B = 1, losses in "
          "[-1, 1]^N (forwarded losses 2 eps-DP)"),
    Entry("as-ftrl-lemma33-paper", catalog.make_ftrl_experts_lemma33_paper,
          "Lemma 3.3 as stated: all tree nodes through t = T, losses in [-1, 1]^N "
          "(true eps = 2 eps(k+1)/k at T = 2^k; 4 eps at T = 2)", horizon=2),
]
