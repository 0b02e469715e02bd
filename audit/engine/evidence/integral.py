"""The ``integral`` mode: a declared model's exact output probabilities as
certified one-dimensional integrals (``audit.engine.models.log_concave``).
Three models rest on it, each with its own evidence kind in its package:

* a sparse vector (``SparseVectorModel``: an integral over the threshold
  noise) — ``models.sparse_vector.evidence.IntegralEvidence``;
* two sparse vectors in parallel (``ParallelSparseVectors``: a product of
  two such integrals) — ``models.sparse_vector.evidence.ParallelIntegralEvidence``;
* report-noisy-max (``NoisyMaxModel``: an integral over the winning noisy
  value, or the maximum's closed-form density) —
  ``models.noisy_max.evidence.NoisyMaxEvidence``.

``IntegralEvidence(scenario, index, claim)`` builds the one the scenario's
algorithm declares (``whitebox.integral_declaration`` says which).

May import: ``audit.engine.evidence.whitebox``, ``audit.engine.models.*.evidence``.
"""
from __future__ import annotations

from audit.engine.evidence.whitebox import integral_declaration
from audit.engine.models.noisy_max.evidence import NoisyMaxEvidence
from audit.engine.models.sparse_vector.evidence import IntegralEvidence as SparseVectorEvidence
from audit.engine.models.sparse_vector.evidence import ParallelIntegralEvidence

BY_DECLARATION = {"sparse_vector": SparseVectorEvidence,
                  "parallel_sparse_vectors": ParallelIntegralEvidence,
                  "noisy_max": NoisyMaxEvidence}


def IntegralEvidence(scenario, index: int, claim):
    """The ``integral`` evidence of the model the scenario's algorithm
    declares (ValueError when it declares none)."""
    key = integral_declaration(scenario.algorithm)
    if key is None:
        raise ValueError(f"{scenario.algorithm.name} declares no model for the integral mode "
                         f"(a SparseVectorModel, ParallelSparseVectors or NoisyMaxModel)")
    return BY_DECLARATION[key](scenario, index, claim)
