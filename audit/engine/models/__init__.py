"""Declared models of a learner's randomness, one module each, and the one
driver that verifies them against the code before any white-box mode uses
them.

Each model module holds its verification (``checks(alg, sc, seed, index)``
→ ``DeclarationCheck`` list); what the model's exact evaluation and
evidence kind are is said in its docstring:

* ``action_probs`` — ``Learner.probs``/``commit``: per-round, search, pld
  (actions);
* ``transcript`` — ``TranscriptModel``: pld (released values);
* ``scalar_state`` — ``ScalarStateModel``: recursion;
* ``sparse_vector`` — ``SparseVectorModel``: integral; and
  ``ParallelSparseVectors`` (two of them on the same answers):
  integral (``sparse_vector.parallel``);
* ``noisy_max`` — ``NoisyMaxModel``: integral.

``log_concave`` is the certified integration the integral models share,
``pair_loss`` how their evidence judges a pair from certified brackets,
``objective`` the pair's exact ε that the ``optimised`` attack maximises.

``recording`` is how they watch the code: an instrumented generator that
yields the plain stream and keeps every draw.  ``MODELS`` lists, per model,
when it applies and which white-box modes rest on it; adding a model means
adding a module and a row here.

May import: ``algorithms``, ``audit.engine.privacy_loss``,
``audit.engine.models.scalar_state.recursion``, ``audit.engine.models.*``.
"""
from __future__ import annotations

from audit.engine.models import action_probs, noisy_max, scalar_state, sparse_vector, transcript
from audit.engine.models.sparse_vector import parallel
from audit.engine.models.checks import (FALSE_REFUSAL, DeclarationCheck, failed,
                                        refusal_reason)
from audit.engine.privacy_loss import scope_of
from audit.engine.models.scalar_state.recursion import state_model_of

# (name, applies to the algorithm?, the modes resting on it, its checks)
MODELS = (
    ("probs/commit", lambda alg: scope_of(alg) == "actions",
     {"per-round", "search", "pld"}, action_probs.checks),
    ("transcript", lambda alg: scope_of(alg) == "transcript", {"pld"}, transcript.checks),
    ("scalar state", lambda alg: state_model_of(alg) is not None, {"recursion"},
     scalar_state.checks),
    ("sparse vector", lambda alg: sparse_vector.sparse_vector_of(alg) is not None,
     {"integral"}, sparse_vector.checks),
    ("parallel sparse vectors", lambda alg: parallel.parallel_of(alg) is not None,
     {"integral"}, parallel.checks),
    ("noisy max", lambda alg: noisy_max.noisy_max_of(alg) is not None, {"integral"},
     noisy_max.checks),
)

# The bases a check can rest on, most exact first.
RESTS_ON = ("identity", "replay", "statistical")


def check_declarations(sc, seed: int, index: int, modes=None) -> list[DeclarationCheck]:
    """Every check of every model that the scenario's algorithm declares
    (restricted to the models the white-box ``modes`` rest on, when given),
    on pilots drawn from the scenario's own neighbouring sequences."""
    alg = sc.algorithm
    wanted = None if modes is None else set(modes)
    out = []
    for name, applies, rests, verify in MODELS:
        if applies(alg) and (wanted is None or wanted & rests):
            found = verify(alg, sc, seed, index)
            for c in found:
                c.model = name
            out += found
    return out


def rests_on(checks: list[DeclarationCheck], mode: str) -> tuple:
    """What a white-box ``mode``'s figures rest on: the bases of the passed
    checks of the models it uses, most exact first."""
    names = {name for name, _, rests, _ in MODELS if mode in rests}
    found = {c.rests_on for c in checks if c.passed and c.model in names}
    return tuple(b for b in RESTS_ON if b in found)


__all__ = ["FALSE_REFUSAL", "MODELS", "RESTS_ON", "DeclarationCheck", "check_declarations",
           "failed", "refusal_reason", "rests_on"]
