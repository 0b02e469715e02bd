"""Claimed privacy profiles: the δ(ε) curve a claim rests on, computed with
the privacy-loss distributions of ``dp_accounting`` (Google's differential
privacy accounting library), so an audit can show the claimed curve beside
its empirical lower band δ_lb(ε) at every ε, not only at the claimed point.

An algorithm says what its claim rests on in ``Algorithm.extra["mechanism"]``
(a plain dict, so ``algorithms`` needs nothing from here)::

    {"law": "gaussian" | "laplace",
     "sensitivity": Δ,       # ℓ₂ (Gaussian) or ℓ₁ (Laplace) sensitivity of one use
     "scale": σ or b,        # the noise's standard deviation / Laplace scale
     "compositions": k,      # uses composed (adaptively) on one neighbouring pair
     "source": "why"}        # one line: where Δ, scale and k come from

Only algorithms whose privacy proof is this mechanism (vector Laplace or
Gaussian noise calibrated to a sensitivity, composed k times) fill it; the
curve is the mechanism's own δ(ε) (a vector mechanism is dominated by the
scalar one with the same ℓ₁ / ℓ₂ sensitivity), an upper bound computed
pessimistically by ``dp_accounting``.

May import: ``algorithms``, ``dp_accounting`` (imported when a profile is
computed: it takes about a second to import).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

LAWS = ("laplace", "gaussian")
# dp_accounting's grid of privacy-loss values: its δ(ε) is pessimistic (an
# upper bound on the mechanism's δ(ε)) and within ~1e-4·δ'(ε) of it.
DISCRETIZATION = 1e-4


@dataclass(frozen=True)
class MechanismBasis:
    """What a claim rests on: ``compositions`` uses of the ``law`` mechanism
    with noise ``scale`` on a query of ``sensitivity``."""

    law: str
    sensitivity: float
    scale: float
    compositions: int = 1
    source: str = ""

    def __post_init__(self):
        if self.law not in LAWS:
            raise ValueError(f"mechanism law must be one of {', '.join(LAWS)}, got {self.law!r}")
        for name in ("sensitivity", "scale"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float, np.number)) and v > 0 and math.isfinite(v)):
                raise ValueError(f"mechanism {name} must be a finite number > 0, got {v!r}")
        if not (isinstance(self.compositions, (int, np.integer)) and self.compositions >= 1):
            raise ValueError(f"mechanism compositions must be an integer >= 1, got "
                             f"{self.compositions!r}")

    @staticmethod
    def of(alg) -> Optional["MechanismBasis"]:
        """The basis an algorithm declares (``extra["mechanism"]``), or None."""
        spec = (alg.extra or {}).get("mechanism") if alg is not None else None
        if spec is None:
            return None
        return MechanismBasis(str(spec["law"]), float(spec["sensitivity"]), float(spec["scale"]),
                              int(spec.get("compositions", 1)), str(spec.get("source", "")))

    def __str__(self) -> str:
        what = ("Gaussian N(0, σ²), σ" if self.law == "gaussian" else "Laplace Lap(b), b")
        norm = "ℓ₂" if self.law == "gaussian" else "ℓ₁"
        k = f", composed {self.compositions} times" if self.compositions > 1 else ""
        return f"{what} = {self.scale:.6g} on {norm} sensitivity {self.sensitivity:.6g}{k}"

    def as_dict(self) -> dict:
        return {"law": self.law, "sensitivity": self.sensitivity, "scale": self.scale,
                "compositions": self.compositions, "source": self.source}


class Profile:
    """δ(ε) of a ``MechanismBasis`` from ``dp_accounting``'s privacy-loss
    distribution (pessimistic estimate: never below the true curve)."""

    def __init__(self, basis: MechanismBasis):
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        self.basis = basis
        ratio = basis.scale / basis.sensitivity      # noise per unit of sensitivity
        if basis.law == "gaussian":
            pld = pld_lib.from_gaussian_mechanism(
                ratio, sensitivity=1.0, pessimistic_estimate=True,
                value_discretization_interval=DISCRETIZATION)
        else:
            pld = pld_lib.from_laplace_mechanism(
                ratio, sensitivity=1.0, pessimistic_estimate=True,
                value_discretization_interval=DISCRETIZATION)
        self._pld = pld.self_compose(basis.compositions) if basis.compositions > 1 else pld

    def delta(self, epsilon) -> np.ndarray:
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        return np.asarray(self._pld.get_delta_for_epsilon(eps), dtype=float)

    def epsilon(self, delta: float) -> float:
        return float(self._pld.get_epsilon_for_delta(float(delta)))


@lru_cache(maxsize=32)
def _profile(basis: MechanismBasis) -> Profile:
    # Building a PLD takes up to a second; every pair of an audit shares one.
    return Profile(basis)


def claimed_profile(alg) -> Optional[Profile]:
    """The profile the algorithm's claim rests on, or None when it declares
    no mechanism."""
    basis = MechanismBasis.of(alg)
    return _profile(basis) if basis is not None else None
