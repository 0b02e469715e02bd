"""The scalar state model, in one place: a learner whose chosen action
depends on the history only through one scalar state u_t, updated by
u_{t+1} = clip(u_t + shift(ℓ_t) + step·D_t) with D_t the difference of two
fresh Laplace draws.

* the declaration: ``ScalarStateModel`` and ``LaplaceDifference``
  (defined in ``algorithms.state_model``, which users import, re-exported
  here);
* its verification against the code: ``verify`` (``checks``);
* its exact evaluation: ``recursion``, a certified forward recursion over
  a grid of u;
* its evidence kind: ``evidence`` (``RecursionEvidence``, the
  ``recursion`` mode; imported by ``audit.engine.evidence``).
"""
from algorithms.state_model import LaplaceDifference, ScalarStateModel
from audit.engine.models.scalar_state.verify import checks

__all__ = ["LaplaceDifference", "ScalarStateModel", "checks"]
