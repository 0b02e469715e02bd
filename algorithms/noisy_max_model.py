"""What a report-noisy-max mechanism declares about its randomness, so a
white-box audit can compute the exact probability of every output.

Report-noisy-max (Dwork & Roth §3.3; Ding et al., CCS 2018, Algs 5–8 of the
testers' suite) adds i.i.d. noise Z_j of one scale to each of a round's K
answers q_j and reports the index of the largest noisy answer (``"index"``)
or the largest noisy answer itself (``"value"``).  Given the winning value
x the others are independent, so

* P(index = i) = ∫ f(x − q_i) Π_{j≠i} F(x − q_j) dx, a one-dimensional
  integral of a log-concave integrand (Laplace and exponential densities
  and CDFs are log-concave);
* the reported maximum has density Σ_i f(y − q_i) Π_{j≠i} F(y − q_j),

with f, F the noise's density and CDF
(``audit.engine.models.noisy_max`` computes both with a certified error).
The declaration is checked against what the code does before it is used,
like every declaration: the code's own recorded draws must be K fresh
draws of the declared law with exactly the declared scale, and the
argmax (or max) of answers plus draws must be what it reported.

Each round reads one row of K answers and reports one output: the index
as the round's action (code), the value through its point.

Imports nothing from the rest of the project.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

NOISES = ("laplace", "exponential")
REPORTS = ("index", "value")


@dataclass(frozen=True)
class NoisyMaxModel:
    """Report-noisy-max over each round's row of answers.

    * ``noise``: ``"laplace"`` (Lap(0, scale)) or ``"exponential"``
      (Exp with mean ``scale``, support [0, ∞)).
    * ``scale``: the noise scale (> 0), the parameter the code passes to
      the generator (``rng.laplace(0, scale)``, ``rng.exponential(scale)``).
    * ``report``: ``"index"`` (the argmax, 0-based, as the round's code) or
      ``"value"`` (the maximum, as the round's one-coordinate point).
    """

    noise: str
    scale: float
    report: str

    def __post_init__(self):
        if self.noise not in NOISES:
            raise ValueError(f"NoisyMaxModel.noise must be one of {', '.join(NOISES)}, got "
                             f"{self.noise!r}")
        if self.report not in REPORTS:
            raise ValueError(f"NoisyMaxModel.report must be one of {', '.join(REPORTS)}, got "
                             f"{self.report!r}")
        ok = (isinstance(self.scale, (int, float)) and not isinstance(self.scale, bool)
              and math.isfinite(self.scale) and self.scale > 0)
        if not ok:
            raise ValueError(f"NoisyMaxModel.scale must be a finite number > 0, got "
                             f"{self.scale!r}")

    @property
    def finite_outputs(self) -> bool:
        """The output is an index (no released number)."""
        return self.report == "index"
