"""Per-round evidence (exact, needs no sampling): along one fixed history,
replay both sides' action distributions and report
ε_t = max_i |ln P_t(i) − ln P′_t(i)| per round.  Judged only against a
per-round claim ε_t; without one it is information only, because a
conditional ratio can approach 2ε for an ε-DP algorithm.

May import: ``audit.engine.privacy_loss``, ``audit.engine.evidence``.
"""
from __future__ import annotations

import math

import numpy as np

from audit.engine.evidence.base import Evidence
from audit.engine.evidence.whitebox import WhiteBoxResult, downsample
from audit.engine.privacy_loss import certified, per_round_curve


class PerRoundEvidence(Evidence):
    kind = "per-round"

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        sc, claim, alg = self.scenario, self.claim, self.scenario.algorithm
        curve = per_round_curve(alg, sc.losses_a, sc.losses_b, sc.history, sc.history_label,
                                claim)
        worst = int(np.argmax(curve.epsilon_t))
        judged = claim.per_round_epsilon is not None and claim.delta == 0
        first = curve.first_exceeding if judged else None
        details = {"history": sc.history_label, "horizon": int(curve.epsilon_t.size),
                   "first_round_exceeding_claim": first,
                   "final_p_arm2": [float(curve.p_a[-1, -1]), float(curve.p_b[-1, -1])],
                   "epsilon_t": downsample(curve.epsilon_t),
                   "p_arm2": downsample(curve.p_a[:, -1]),
                   "p_prime_arm2": downsample(curve.p_b[:, -1])}
        event = (f"round {worst + 1} of the history '{sc.history_label}': "
                 f"max_i |ln P_t(i) − ln P′_t(i)| = {curve.epsilon_t[worst]:.4g}")
        if judged:
            value = claim.per_round_epsilon
            notes = [f"along the history both sides' action distributions are replayed "
                     f"exactly; ε_t first exceeds {value:g} at round {first}" if first else
                     "ε_t stays below the per-round claim along this history"]
            return WhiteBoxResult(sc.label, "per-round", "per-round",
                                  certified(curve.epsilon_t[worst]), value,
                                  "per-round claim ε_t", event, exact=True,
                                  counts_toward_total=False, details=details, notes=notes)
        why = ("the claim has no per-round part" if claim.per_round_epsilon is None
               else "a per-round claim with δ > 0 has no per-round δ to compare with")
        notes = [f"information only ({why}): ε_t is the log-ratio of the action "
                 f"distributions at round t given one fixed history, a conditional ratio that "
                 f"can approach 2ε for an ε-DP algorithm, so it is never compared with the "
                 f"total claim"]
        return WhiteBoxResult(sc.label, "per-round", "per-round",
                              certified(curve.epsilon_t[worst]), math.inf, "no per-round claim",
                              event, exact=True, counts_toward_total=False, details=details,
                              notes=notes, informational=True)
