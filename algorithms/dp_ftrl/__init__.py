"""DP-FTRL (Kairouz, McMahan, Song, Thakkar, Thakurta & Xu, "Practical and
Private (Deep) Learning without Sampling or Shuffling", ICML 2021): the
online learner deployed for Gboard's language models, here on linear losses
over the simplex, with a realistic broken variant."""
from __future__ import annotations

from ..entry import Entry
from . import catalog

ENTRIES: list = [
    Entry("dp-ftrl", catalog.make_dp_ftrl,
          "DP-FTRL: tree-aggregated gradients, Gaussian noise, rho-zCDP (Kairouz et al. 2021)",
          horizon=8, epsilon=None),
    Entry("dp-ftrl-one-node", catalog.make_dp_ftrl_one_node,
          "BROKEN DP-FTRL: noise calibrated to one tree node, not ceil(log2 T)+1 "
          "(true rho = ceil(log2 T) rho, the nodes the models read)", horizon=8, epsilon=None),
]
