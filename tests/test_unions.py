"""Unions of disjoint events ranked on the selection half
(``audit.engine.unions``): fixed before the held-out half is read, summed
from the members' counts, and chosen only where they beat every single
event."""
from __future__ import annotations

import numpy as np

from attacks.events import ActionAt, Union
from attacks.testers import SequenceIs
from audit.engine.bounds import select_and_test
from audit.engine.unions import disjoint_blocks, with_ranked_unions


def test_blocks_of_a_union_of_families_are_shifted():
    fam = Union((ActionAt((0, 1), 3), SequenceIs(((0, 1), (1, 1), (2, 0)), 3)))
    assert disjoint_blocks(fam) == [(0, 3), (3, 3), (6, 3)]


def test_a_union_of_many_slightly_likelier_outputs_beats_each_of_them():
    """Twenty outputs each twice as likely on ℓ (mass 1 % each there): each
    alone is too rare to certify much at 20 000 held-out runs, their union
    (20 %) certifies close to ln 2.  Counts are the expected ones (no
    sampling), so the comparison is deterministic."""
    n = 20_000
    k = 20
    pa = np.r_[np.full(k, 0.01), np.full(k, 0.04)]
    pb = np.r_[np.full(k, 0.005), np.full(k, 0.04 + 0.005 * k / k)]
    pb = pb / pb.sum()
    fam = SequenceIs(tuple((i,) for i in range(2 * k)), 2 * k)
    sel_a, sel_b = np.round(pa * n).astype(int), np.round(pb * n).astype(int)
    labels, sa, sb, ha, hb, members = with_ranked_unions(fam, fam.labels, sel_a, sel_b,
                                                         sel_a, sel_b)
    assert len(labels) == len(sa) == len(members) > len(fam.labels)
    for i, m in enumerate(members):          # every count is the sum of its members'
        assert sa[i] == sel_a[m].sum() and hb[i] == sel_b[m].sum()
    single = select_and_test(sel_a, sel_b, n, sel_a, sel_b, n, fam.labels, 0.025)
    best = select_and_test(sa, sb, n, ha, hb, n, labels, 0.025)
    assert best.epsilon_lower_bound > single.epsilon_lower_bound + 0.2
    assert best.event.startswith("one of the 20 outputs likeliest on ℓ ")


def test_the_ranking_reads_only_the_selection_half():
    fam = ActionAt((0,), 4)
    sel_a, sel_b = np.array([50, 30, 10, 10]), np.array([10, 30, 30, 30])
    hold_a, hold_b = np.array([0, 0, 0, 100]), np.array([100, 0, 0, 0])
    one = with_ranked_unions(fam, fam.labels, sel_a, sel_b, hold_a, hold_b)
    two = with_ranked_unions(fam, fam.labels, sel_a, sel_b, hold_b, hold_a)
    assert one[0] == two[0] and one[5] == two[5]       # same unions whatever the held-out
