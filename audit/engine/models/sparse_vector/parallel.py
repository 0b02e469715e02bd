"""Two sparse vectors run side by side on the same answers with
independent noises (``algorithms.sparse_vector_model.ParallelSparseVectors``,
the testers' SVT34Parallel): verification and exact evaluation.

* ``checks`` — ``parallel-sparse-vector-identity`` (identity): on a
  recording generator each half's declared ``SparseVectorModel`` is
  replayed from the code's own draws (``verify._replay``) and must
  reproduce that half's codes (the combined code split as
  ``codes``·first + second) and the first's released numbers; the second
  half may not use any draw the first one used, so the two halves' noises
  are distinct draws — which, with each draw fresh, is the independence the
  product rests on.  A scale off by any factor finds no draw and is
  refused.  Deterministic: false-refusal probability 0.  Pilot streams
  k = 110, 111.
* ``log_probability`` — certified (lo, hi) of ln P(output) (a log density
  on the first's released numbers): given the answers the halves are
  independent, so it is the sum of the halves' own brackets
  (``integral.log_probability``).

May import: ``algorithms``, ``audit.engine.models.checks``,
``audit.engine.models.recording``, ``audit.engine.models.sparse_vector``.
"""
from __future__ import annotations

import numpy as np

from algorithms.simulate import simulate
from algorithms.sparse_vector_model import ParallelSparseVectors
from audit.engine.models.checks import (PILOT_STREAM, DeclarationCheck, declared, identity_runs,
                                        sides_of)
from audit.engine.models.recording import RecordingGenerator, observe
from audit.engine.models.sparse_vector.integral import log_probability as _half_log_probability
from audit.engine.models.sparse_vector.verify import _Noises, _replay, answers_of


def parallel_of(alg):
    """The declared ``ParallelSparseVectors`` of ``alg``, or None."""
    return declared(alg, "parallel_sparse_vectors", ParallelSparseVectors)


def split(model: ParallelSparseVectors, codes) -> tuple[np.ndarray, np.ndarray]:
    """The two halves' codes of combined codes."""
    codes = np.asarray(codes, dtype=np.int64)
    return codes // model.codes, codes % model.codes


def log_probability(model: ParallelSparseVectors, answers, codes, values=None):
    """Certified (lo, hi) arrays of ln P(output) for each row of combined
    ``codes`` (m, n) under ``answers`` (n,): the sum of the two halves'
    brackets (a log density on the first's released ``values``)."""
    first, second = split(model, codes)
    lo1, hi1 = _half_log_probability(model.first, answers, first, values)
    lo2, hi2 = _half_log_probability(model.second, answers, second)
    with np.errstate(invalid="ignore"):
        return lo1 + lo2, hi1 + hi2


def checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    model = parallel_of(alg)
    numeric = model.first.numeric is not None
    pairs, rounds = sides_of(sc)
    runs = identity_runs(rounds)
    problem = ""
    for k, (losses, side) in enumerate(pairs):
        answers = answers_of(losses[:rounds])
        rng = RecordingGenerator(np.random.SeedSequence([seed, index, PILOT_STREAM, 110 + k]),
                                 keep=("laplace",))
        tr = simulate(alg, losses, runs, rng, rounds=rounds, learner=observe(alg.learner, rng),
                      point_rounds=range(rounds) if numeric else ())
        codes = tr.actions.astype(np.int64)
        if codes.min() < 0 or codes.max() >= model.codes ** 2:
            problem = (f"on {side}, the code answered {int(codes.max())}, not a combined code "
                       f"{model.codes}·first + second of two sparse vectors")
            break
        first, second = split(model, codes)
        values = (np.stack([tr.points[t][:, 0] for t in range(rounds)], axis=1)
                  if numeric else None)
        noises = _Noises(rng.draws, runs)
        why, _, used = _replay(model.first, answers, first, values, noises, runs)
        if why:
            problem = f"on {side}, the first sparse vector: {why}"
            break
        why, _, _ = _replay(model.second, answers, second, None, noises, runs,
                            exclude=frozenset(used))
        if why:
            problem = (f"on {side}, the second sparse vector (on draws the first did not use): "
                       f"{why}")
            break
    what = problem or (
        f"{runs} runs a side, {rounds} rounds: replaying both declared sparse vectors on the "
        f"code's own draws reproduces every combined code"
        + (" and the first's released numbers" if numeric else "")
        + ", each half from its own draws (none shared): the halves are independent given the "
          "answers")
    return [DeclarationCheck(
        "parallel-sparse-vector-identity", alg.name, sc.label, 0.0 if not problem else 1.0, 0.0,
        "above", not problem, what,
        "the declared ParallelSparseVectors must be exactly what the mechanism does: each half "
        "a SparseVectorModel whose every noise is one rng.laplace(0, scale) draw of its own, and "
        "the code codes·first + second", 0.0, "identity")]
