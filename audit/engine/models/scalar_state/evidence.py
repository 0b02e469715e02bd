"""Recursion evidence (exact, needs no sampling): for an algorithm that
declares a scalar state model (``algorithms.state_model``), certified lower
and upper bounds on the probabilities of the run events "arm i at every
round s..k" on both sides of the pair, by the forward recursion of
``audit.engine.models.scalar_state.recursion``, and the largest ε lower bound they certify:
ln((P_lo − δ)/P′_hi) over every event and both directions.

The events are on the actions alone, so the bound holds at action scope and
therefore also against a transcript claim (the actions are part of the
transcript).  Events start at the first rounds after the change (earlier
actions have the same law on both sides).

May import: ``audit.engine.models.scalar_state.recursion``, ``audit.engine.privacy_loss``,
``audit.engine.evidence``.
"""
from __future__ import annotations

import numpy as np

from audit.engine.evidence.base import Evidence
from audit.engine.evidence.whitebox import WhiteBoxResult
from audit.engine.privacy_loss import certified
from audit.engine.models.scalar_state.recursion import certify_runs, run_starts, state_model_of


class RecursionEvidence(Evidence):
    kind = "recursion"

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        sc, claim = self.scenario, self.claim
        model = state_model_of(sc.algorithm)
        res = certify_runs(model, sc.losses_a, sc.losses_b, sc.rounds, run_starts(sc),
                           claim.delta)
        best = res.best
        what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
        if best is None:
            return WhiteBoxResult(sc.label, "recursion", "actions", 0.0, claim.epsilon, what,
                                  "no run event after the change within the simulated rounds",
                                  exact=True, details={"grid_points": res.grid.n},
                                  notes=["nothing to compute"])
        eps_lb = certified(best.epsilon_lower_bound) if best.epsilon_lower_bound > 0 else 0.0
        lo, hi = best.log_ratio_interval
        num, den = ("P_ℓ", "P_ℓ′") if best.direction == "l>l'" else ("P_ℓ′", "P_ℓ")
        notes = [f"state model: {model.describe()} ({model.source})" if model.source else
                 f"state model: {model.describe()}",
                 f"forward recursion on {res.grid.n} grid points (step {res.grid.delta:.3g}), "
                 f"the state rounded up and down: ln {num}(E) ∈ [{best.log_p_num_lo:.6g}, "
                 f"{best.log_p_num_hi:.6g}], ln {den}(E) ∈ [{best.log_p_den_lo:.6g}, "
                 f"{best.log_p_den_hi:.6g}], so the exact log-ratio is in [{lo:.6g}, {hi:.6g}]",
                 ("the lower ends are certified (no sampling, no statistical error): the event "
                  "refutes any pure ε-DP claim on the actions with ε below the bound")
                 if claim.delta == 0 else
                 f"with δ = {claim.delta:g} the bound is ln((P_lo − δ)/P′_hi), certified"]
        curve = [c for c in res.certificates if (c.arm, c.start, c.direction) ==
                 (best.arm, best.start, best.direction)]
        details = {"certificate": best.as_dict(), "grid_points": res.grid.n,
                   "grid_step": res.grid.delta, "events_computed": len(res.certificates),
                   "log_ratio_lower_by_end": [c.log_ratio_interval[0] for c in curve],
                   "log_ratio_upper_by_end": [c.log_ratio_interval[1] for c in curve],
                   "ends": [c.end + 1 for c in curve],
                   "log_p_numerator_by_end": [[c.log_p_num_lo, c.log_p_num_hi] for c in curve],
                   "log_p_denominator_by_end": [[c.log_p_den_lo, c.log_p_den_hi]
                                                for c in curve],
                   "event": best.description, "direction": best.direction,
                   "log_p_numerator": [best.log_p_num_lo, best.log_p_num_hi],
                   "log_p_denominator": [best.log_p_den_lo, best.log_p_den_hi],
                   "probability_numerator_lower": float(np.exp(best.log_p_num_lo))}
        return WhiteBoxResult(
            sc.label, "recursion", "actions", eps_lb, claim.epsilon, what,
            f"the event E = {{{best.description}}} ({best.direction}), exact log-ratio in "
            f"[{lo:.6g}, {hi:.6g}]", exact=True, details=details, notes=notes)
