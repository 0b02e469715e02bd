"""Unions of disjoint events, ranked on the selection half: the black-box
counterpart of a likelihood-ratio test over a finite set of outputs.

The best event for a pair is a set of outputs whose probabilities differ
most across the two sides (Neyman–Pearson: the outputs whose likelihood
ratio exceeds a threshold).  One output alone is often too rare to
certify much; all of them together say nothing.  A family of disjoint
events — the arm played at one round, the whole code sequence of a
mechanism — lets the audit build the sets in between from counts alone:
the outputs ranked by their smoothed ratio on the selection half, and the
unions of the first k of them, in each direction.  Their counts are sums
of the members' counts, on either half.

Why the bounds stay valid: the ranking reads only the selection half, so
every union is fixed before the held-out half is looked at, and the
held-out half is still used once, for the one (event, direction) the
selection chooses: the same two α shares a pair, whatever the number of
candidate events.

A family says which of its labels are disjoint with ``blocks``: (start,
size) runs of its labels whose events exclude one another
(``attacks.events.ActionAt``: the arms of one round; ``SequenceIs``: the
whole sequences it lists).  A ``Union`` of families shifts its parts'
blocks.

May import: numpy.
"""
from __future__ import annotations

import numpy as np

MAX_MEMBERS = 64        # the longest prefix of a ranking made a union
MIN_BLOCK = 3           # blocks smaller than this have no union worth adding


def disjoint_blocks(family) -> list[tuple[int, int]]:
    """(start, size) of every run of mutually exclusive events of
    ``family``, in the order of its labels."""
    parts = getattr(family, "parts", None)
    if parts is not None:
        out, offset = [], 0
        for p in parts:
            out += [(offset + s, n) for s, n in disjoint_blocks(p)]
            offset += len(p.labels)
        return out
    blocks = getattr(family, "blocks", None)
    return list(blocks) if blocks else []


def _label(labels, members, towards: str) -> str:
    """Distinct for distinct unions: within a block, a union is fixed by its
    direction and its size (a prefix of one ranking)."""
    shown = "; ".join(labels[i] for i in members[:3])
    more = f"; … {len(members) - 3} more" if len(members) > 3 else ""
    return (f"one of the {len(members)} outputs likeliest on {towards} relative to the other "
            f"side in the selection half: {shown}{more}")


def with_ranked_unions(family, labels, sel_a, sel_b, hold_a, hold_b):
    """The labels and counts of ``family`` extended with the ranked unions
    of each disjoint block (module docstring): (labels, sel_a, sel_b,
    hold_a, hold_b, members), each grown by the unions' entries;
    ``members[i]`` lists the family's events that label i is the union of
    (one for the family's own)."""
    labels = list(labels)
    arrays = [np.asarray(x, dtype=np.int64) for x in (sel_a, sel_b, hold_a, hold_b)]
    new_labels, sums = [], []
    seen = set()
    for start, size in disjoint_blocks(family):
        if size < MIN_BLOCK:
            continue
        idx = np.arange(start, start + size)
        # Outputs neither side gave in the selection half rank nowhere: a
        # union holding them has the counts of one without them (and a
        # label naming outputs never seen).
        idx = idx[arrays[0][idx] + arrays[1][idx] > 0]
        if idx.size < MIN_BLOCK:
            continue
        a, b = arrays[0][idx], arrays[1][idx]
        ratio = np.log((a + 0.5) / (b + 0.5))
        for sign, towards in ((1.0, "ℓ"), (-1.0, "ℓ′")):
            order = idx[np.lexsort((idx, -sign * ratio))]     # stable: ties by position
            for k in range(2, min(idx.size - 1, MAX_MEMBERS) + 1):
                members = tuple(int(i) for i in order[:k])
                key = frozenset(members)
                if key in seen:
                    continue
                seen.add(key)
                new_labels.append(_label(labels, list(members), towards))
                sums.append(list(members))
    members = [[i] for i in range(len(labels))] + sums
    if not sums:
        return (labels, *arrays, members)
    extended = [np.concatenate([x, np.array([x[m].sum() for m in sums], dtype=np.int64)])
                for x in arrays]
    return (labels + new_labels, *extended, members)
