"""The exact pair ε of a declared model as a function of the input pair:
what the ``optimised`` attack (``attacks.optimised``) maximises over the
pairs of the claim's relation.  The attack cannot compute it (attacks
import nothing from ``audit``), so the engine hands it in.

* report-noisy-max reporting the index: ``noisy_max.exact.index_pair_epsilon``
  (every output's probability a certified integral);
* reporting the value: ``noisy_max.exact.value_pair_epsilon`` on its fixed
  grid (∞ at a support edge);
* a sparse vector whose code sequences are enumerable and that releases no
  number or fresh ones: ``sparse_vector.integral.exact_pair``;
* a mechanism whose code the replay follows (uniform draws it only
  compares; no declaration): the pair ε of its replayed output laws
  (``algorithms.replay``), exact, at no coarser resolution.

During the search every figure is computed on a coarse grid
(``SEARCH_CELLS`` cells per scale near a kink instead of 80): still a
certified lower end, its bracket about 17 times wider (3·10⁻⁴ relative
instead of 2·10⁻⁵), and faster (6 times on report-noisy-max; on a sparse
vector the enumerated outputs cost as much as the cells).  It only
chooses the pair; the audit's ``integral`` evidence then computes the
chosen pair's figure at full resolution, after the declaration passed its
identity check (an unverified declaration only misguides the search, and
the pair is then audited black-box only).

May import: ``algorithms`` (``algorithms.replay``), ``audit.engine.models.noisy_max``,
``audit.engine.models.sparse_vector``.
"""
from __future__ import annotations

from typing import Callable, Optional

from algorithms.replay import (ReplayRefused, output_law, pair_epsilon, replay_applies,
                               replay_scope)
from algorithms.replay.tracer import ContinuousDraws
from audit.engine.models.noisy_max.exact import index_pair_epsilon, value_pair_epsilon
from audit.engine.models.noisy_max.verify import noisy_max_of
from audit.engine.models.sparse_vector.integral import codes_enumerable, exact_pair
from audit.engine.models.sparse_vector.verify import answers_of, sparse_vector_of

SEARCH_CELLS = 20


def pair_objective(alg) -> Optional[Callable]:
    """(ℓ, ℓ′) → the certified lower end of the pair's exact ε for ``alg``'s
    declared model, or None where it is not computed."""
    nm = noisy_max_of(alg)
    if nm is not None:
        if nm.report == "index":
            return lambda a, b: index_pair_epsilon(nm, a, b, SEARCH_CELLS)[0]
        return lambda a, b: value_pair_epsilon(nm, a, b)[0]
    sv = sparse_vector_of(alg)
    if sv is not None and sv.numeric in (None, "fresh") and codes_enumerable(sv, alg.horizon):
        return lambda a, b: exact_pair(sv, answers_of(a), answers_of(b),
                                       cells=SEARCH_CELLS).lower
    if replay_applies(alg):
        return lambda a, b: replay_pair_epsilon(alg, a, b)
    return None


def replay_pair_epsilon(alg, a, b) -> float:
    """The pair's exact ε from the replayed output laws of the code itself
    (``algorithms.replay``), or for code that draws continuous noise from
    the trace of its draws (``audit.engine.evidence.traced``, unconfirmed:
    the audit's evidence confirms the pair it chooses); 0 where refused on
    this pair."""
    from audit.engine.evidence.traced import traced_pair
    from audit.engine.models.affine_release import NotExact
    from audit.engine.models.comparisons import NotAStructure
    scope = replay_scope(alg)
    try:
        return pair_epsilon(output_law(alg, a, scope, confirm=False),
                            output_law(alg, b, scope, confirm=False)).epsilon
    except ContinuousDraws:
        try:
            return traced_pair(alg, a, b, scope, confirmed=False, quick=True).epsilon
        except (ReplayRefused, NotExact, NotAStructure):
            return 0.0
    except ReplayRefused:
        return 0.0
