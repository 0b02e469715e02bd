"""The sparse vector model, in one place: a mechanism that compares each
answer q_i plus query noise ν_i with a threshold T plus a threshold noise
ρ, answering ⊥/⊤ (aborted after c ⊤s), with ρ drawn once or again after each
⊤, and possibly a number released with ⊤.

* the declaration: ``SparseVectorModel`` (defined in
  ``algorithms.sparse_vector_model``, which users import, re-exported here);
* its verification against the code: ``verify`` (``checks``: the declared
  model replayed on the code's own recorded draws);
* its exact evaluation: ``integral``, every output's probability as a
  certified one-dimensional integral over ρ;
* its evidence kind: ``evidence`` (``IntegralEvidence``, the ``integral``
  mode; imported by ``audit.engine.evidence``);
* two sparse vectors on the same answers with independent noises
  (``ParallelSparseVectors``): ``parallel`` (its identity check and its
  exact evaluation, the product of the halves') and
  ``evidence.ParallelIntegralEvidence``.
"""
from algorithms.sparse_vector_model import ParallelSparseVectors, SparseVectorModel
from audit.engine.models.sparse_vector.verify import answers_of, checks, sparse_vector_of

__all__ = ["ParallelSparseVectors", "SparseVectorModel", "answers_of", "checks",
           "sparse_vector_of"]
