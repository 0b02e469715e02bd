"""What a sparse-vector mechanism declares about its randomness, so a
white-box audit can compute the exact probability of every output.

Every variant of the sparse vector technique (Lyu, Su & Li, "Understanding
the Sparse Vector Technique for Differential Privacy", PVLDB 2017, Algs 1–6,
and the numerical sparse vector of Wang et al., PLDI 2019) compares each
query answer q_i, plus optional query noise ν_i, with a threshold T plus a
threshold noise ρ drawn once (or again after each ⊤).  Given ρ the answers
are independent, so the probability of a whole output sequence is a
one-dimensional integral over ρ (``audit.engine.models.sparse_vector.integral`` computes it
with a certified error bound).  The declaration is checked against what the
code does before it is used, like every declaration.

Two sparse vectors run side by side on the same answers with independent
noises (``ParallelSparseVectors``) are a product: each output's
probability is the product of the two halves' own.

Output codes, one per round (the action of a stream mechanism):
``BELOW`` (⊥), ``ABOVE`` (⊤) and ``ABORTED`` (after the cutoff c).  A variant
that releases a number with ⊤ (``numeric``) puts it in the round's point.

Imports nothing from the rest of the project.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

BELOW, ABOVE, ABORTED = 0, 1, 2


@dataclass(frozen=True)
class SparseVectorModel:
    """One sparse vector mechanism over a stream of answers, one per round.

    * ``threshold``: T.  Round i answers ⊤ iff q_i + ν_i ≥ T + ρ.
    * ``threshold_scale``: the Laplace scale of ρ (> 0).
    * ``query_scale``: the Laplace scale of each ν_i; 0 means no query noise
      (Lyu et al. Alg 5).
    * ``cutoff``: c, the number of ⊤ answers after which every later round is
      ``ABORTED``; None: never (Algs 5 and 6).
    * ``resample``: a fresh ρ is drawn after every ⊤ (Lyu et al. Alg 2).
    * ``numeric``: what a ⊤ round also releases in its point: None (nothing),
      ``"same"`` (q_i + ν_i, the noisy answer that was compared: Alg 3) or
      ``"fresh"`` (q_i + a fresh Laplace(``numeric_scale``) value: the
      numerical sparse vector).
    """

    threshold: float
    threshold_scale: float
    query_scale: float
    cutoff: Optional[int] = None
    resample: bool = False
    numeric: Optional[str] = None
    numeric_scale: Optional[float] = None

    def __post_init__(self):
        def finite(name, v, positive):
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or (positive and v <= 0) or v < 0:
                raise ValueError(f"SparseVectorModel.{name} must be a finite number "
                                 f"{'> 0' if positive else '>= 0'}, got {v!r}")
        if not (isinstance(self.threshold, (int, float)) and math.isfinite(self.threshold)):
            raise ValueError(f"SparseVectorModel.threshold must be a finite number, got "
                             f"{self.threshold!r}")
        finite("threshold_scale", self.threshold_scale, True)
        finite("query_scale", self.query_scale, False)
        if self.cutoff is not None and (not isinstance(self.cutoff, int) or self.cutoff < 1):
            raise ValueError(f"SparseVectorModel.cutoff must be None or an integer >= 1, got "
                             f"{self.cutoff!r}")
        if self.numeric not in (None, "same", "fresh"):
            raise ValueError(f"SparseVectorModel.numeric must be None, 'same' or 'fresh', got "
                             f"{self.numeric!r}")
        if self.numeric == "same" and self.query_scale == 0:
            raise ValueError("SparseVectorModel.numeric 'same' needs query noise (query_scale > 0)")
        if (self.numeric == "fresh") != (self.numeric_scale is not None):
            raise ValueError("SparseVectorModel.numeric_scale is given exactly when numeric is "
                             "'fresh'")
        if self.numeric_scale is not None:
            finite("numeric_scale", self.numeric_scale, True)

    @property
    def finite_outputs(self) -> bool:
        """Every output is a sequence of codes (no released numbers)."""
        return self.numeric is None


@dataclass(frozen=True)
class ParallelSparseVectors:
    """Two sparse vectors run on the same answers with independent noises
    (the testers' SVT34Parallel): round i's code is ``codes``·(the first's
    code) + (the second's code), and the round's point is the first's
    released number when it releases one.  Given the answers the two halves
    are independent, so an output's probability (or density) is the product
    of the two sparse vectors' own.

    * ``first``, ``second``: each a ``SparseVectorModel``; the second
      releases no number (the mechanism's point is the first's).
    * ``codes``: the base of the combined code (3: ⊥, ⊤, aborted).
    """

    first: SparseVectorModel
    second: SparseVectorModel
    codes: int = 3

    def __post_init__(self):
        for name in ("first", "second"):
            if not isinstance(getattr(self, name), SparseVectorModel):
                raise ValueError(f"ParallelSparseVectors.{name} must be a SparseVectorModel, "
                                 f"got {getattr(self, name)!r}")
        if self.second.numeric is not None:
            raise ValueError("ParallelSparseVectors.second must release no number (the "
                             "mechanism's point is the first's)")
        if not isinstance(self.codes, int) or isinstance(self.codes, bool) or self.codes < 3:
            raise ValueError(f"ParallelSparseVectors.codes must be an integer >= 3 (each half "
                             f"answers ⊥, ⊤ or aborted), got {self.codes!r}")

    @property
    def finite_outputs(self) -> bool:
        return self.first.finite_outputs and self.second.finite_outputs
