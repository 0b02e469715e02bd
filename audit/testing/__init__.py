"""Privacy assertions for a project's own pytest suite.

    from audit.testing import assert_private
    def test_my_mechanism_is_private():
        assert_private("mypkg.mech:make", epsilon=1.0, trials=100_000)

The pytest plugin (``audit.pytest_plugin``, registered through the
``pytest11`` entry point) adds ``--audit-scale=F`` to multiply every budget,
e.g. ``pytest --audit-scale 0.1`` for a fast local run, and the marker
``@pytest.mark.privacy_audit`` to select or deselect these tests.

May import: ``algorithms``, ``audit.engine``.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

from algorithms import Algorithm, build
from algorithms.core import Claim

_SCALE = {"value": 1.0}


def set_budget_scale(scale: float) -> None:
    """Multiply the ``trials`` of every later ``assert_private`` call (the
    plugin's ``--audit-scale``); a finite number > 0."""
    try:
        ok = not isinstance(scale, bool) and math.isfinite(scale) and scale > 0
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"budget scale (--audit-scale) must be a finite number > 0, "
                         f"got {scale!r}")
    _SCALE["value"] = float(scale)


def assert_private(algorithm: Union[str, Algorithm], epsilon: Optional[float] = None,
                   delta: Optional[float] = None, trials: int = 100_000,
                   attacks: Optional[Sequence[str]] = None, modes: Optional[Sequence[str]] = None,
                   confidence: float = 0.95, seed: int = 0, claim_epsilon: Optional[float] = None,
                   claim_delta: Optional[float] = None,
                   claim_per_round_epsilon: Optional[float] = None, jobs: int = 1,
                   **build_kwargs):
    """Audit ``algorithm`` (a registered name, ``package.module:attribute`` or an
    ``Algorithm``) and raise ``AssertionError`` with the audit summary — claim,
    per-attack bounds, events, counts and the reproduce command — if the
    measured ε lower bound exceeds the claim.  Returns the result otherwise.

    A user factory is built as ``audit run`` builds it (ε = ``epsilon``, else
    ``claim_epsilon``, else its default).  Bad arguments raise ``ValueError``;
    a user's algorithm that raises or breaks the interface raises
    ``algorithms.errors.UserCodeError`` naming the function and the round."""
    from audit.engine import audit_algorithm
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    alg = algorithm if isinstance(algorithm, Algorithm) else build(
        algorithm, epsilon=epsilon, delta=delta, claim_epsilon=claim_epsilon,
        claim_delta=claim_delta, naming="python", **build_kwargs)
    claim = Claim.override(alg.claim, claim_epsilon, claim_delta, "assert_private claim",
                           claim_per_round_epsilon)
    n = int(trials * _SCALE["value"])
    if n < 2:
        raise ValueError(f"trials={trials} scaled by --audit-scale {_SCALE['value']:g} leaves "
                         f"{n} runs per side; an audit needs at least 2")
    result = audit_algorithm(alg, attacks, trials=n, confidence=confidence, seed=seed,
                             jobs=jobs, claim=claim, modes=modes)
    if result.violation:
        raise AssertionError("privacy claim violated\n" + result.summary())
    return result
