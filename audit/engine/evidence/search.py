"""Worst-output search (exact, needs no sampling): the single action
sequence x with the largest exact privacy loss L(x) = ln P(x) − ln P′(x),
in both directions of the pair (exhaustive for small K^T, else greedy);
with δ > 0 the event {x} counts through its probability mass.

May import: ``audit.engine.privacy_loss``, ``audit.engine.evidence``.
"""
from __future__ import annotations

from audit.engine.evidence.base import Evidence
from audit.engine.evidence.whitebox import WhiteBoxResult, downsample
from audit.engine.privacy_loss import search_worst_output


class SearchEvidence(Evidence):
    kind = "search"

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        sc, claim = self.scenario, self.claim
        certs = search_worst_output(sc.algorithm, sc.losses_a, sc.losses_b, claim, sc.advice)
        # The certificate that refutes the claim by the widest margin, else
        # the one with the largest bound.
        best = max(certs, key=lambda c: (c.violation, c.epsilon_lower_bound - c.claim_at_horizon
                                         if c.violation else c.epsilon_lower_bound))
        composed = claim.per_round_epsilon is not None and claim.delta == 0
        if composed and best.claim_at_horizon < claim.epsilon:
            what = f"composed claim ε_t·T′ = {claim.per_round_epsilon:g}·{best.horizon}"
        else:
            what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
        sides = "P_ℓ(x), P_ℓ′(x)" if best.direction == "l>l'" else "P_ℓ′(x), P_ℓ(x)"
        if claim.delta == 0:
            note = ("L(x) = ln P(x) − ln P′(x) is exact: the event {x} refutes any pure ε-DP "
                    "claim with ε < L(x), with no statistical error")
        else:
            note = (f"with δ = {claim.delta:g} the event {{x}} counts through its mass: ε_lb = "
                    f"ln((P(x) − δ)/P′(x)) with the exact ({sides}) = "
                    f"(e^{best.log_p_num:.4g}, e^{best.log_p_den:.4g}); 0 when P(x) ≤ δ")
        return WhiteBoxResult(
            sc.label, "search", "actions", best.epsilon_lower_bound, best.claim_at_horizon, what,
            f"the single output x = {best.description} ({best.direction}); first actions "
            f"{' '.join(map(str, best.actions_head))} …", exact=True,
            details={"certificate": best.description, "direction": best.direction,
                     "length": best.horizon, "loss": best.loss,
                     "log_p_numerator": best.log_p_num, "log_p_denominator": best.log_p_den,
                     "actions_head": best.actions_head,
                     "cumulative_loss": downsample(best.curve),
                     "directions": {c.direction: {"loss": c.loss, "length": c.horizon,
                                                  "epsilon_lower_bound": c.epsilon_lower_bound,
                                                  "claim_at_length": c.claim_at_horizon,
                                                  "certificate": c.description}
                                    for c in certs}},
            notes=[note])
