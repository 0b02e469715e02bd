"""Registered algorithms, and loading a user's own by ``package.module:attr``."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional

from .agarwal_singh import ENTRIES as AGARWAL_SINGH
from .core import Algorithm
from .entry import Entry
from .private_bandits import catalog as arat
from .private_bandits import mutants
from .projection_free import ENTRIES as PROJECTION_FREE
from .tracking_experts import ENTRIES as TRACKING_EXPERTS

REGISTRY: dict[str, Entry] = {e.name: e for e in [
    Entry("exp3", arat.make_exp3, "EXP3 with mixing (Alg 3); no proof, App. G.1 counterexample",
          horizon=100_000, epsilon=None),
    Entry("private-exp3", arat.make_private_exp3, "Alg 1 around EXP3 (Cor E.1)"),
    Entry("private-ftpl", arat.make_private_ftpl, "Alg 1 around FTPL + geometric resampling (Cor E.3)"),
    Entry("private-htinf", arat.make_private_htinf, "Alg 1 around HTINF, alpha=2 (Cor 3.2)"),
    Entry("private-experts", arat.make_private_experts,
          "Alg 5 around Alg 1 around HTINF (Thm 4.2 / Cor 4.3)", experts=4),
    Entry("ldp-exp4", arat.make_ldp_exp4, "Local-DP EXP4 (Alg 6, Thm 4.4)", experts=4),
    Entry("private-batched-exp4", arat.make_private_batched_exp4,
          "Private batched EXP4 (Alg 2, Thm 4.5)", experts=4, delta=1e-6),
    Entry("mutant-batch-sum", mutants.make_mutant_batch_sum,
          "BROKEN Alg 1 around EXP3: batch sum instead of mean (true eps = tau*eps)", epsilon=0.25),
    Entry("mutant-noise-tau", mutants.make_mutant_noise_tau,
          "BROKEN Alg 1 around FTPL: noise 1/(tau^2 eps) (true eps = tau*eps)", epsilon=0.25),
    Entry("mutant-overlap", mutants.make_mutant_overlap,
          "BROKEN Alg 5 around Alg 1 with overlapping batches (true eps = 2 eps)",
          experts=4, epsilon=0.25),
    Entry("mutant-ldp-after", mutants.make_mutant_ldp_after,
          "BROKEN Alg 6: noise after importance weighting (true eps = eps*K/gamma)", experts=4),
    Entry("mutant-exp4-noise", mutants.make_mutant_exp4_noise,
          "BROKEN Alg 2: noise scale missing K/gamma", experts=4, delta=1e-6),
    *AGARWAL_SINGH, *TRACKING_EXPERTS, *PROJECTION_FREE,
]}


def load_user_object(path: str):
    """Import ``package.module:attribute``; errors say what went wrong in one line."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(f"algorithm {path!r}: expected a registered name "
                         f"({', '.join(REGISTRY)}) or package.module:attribute")
    # Like `python -m`, look in the working directory first: a user audits
    # their own module from their project folder.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is bad input
        raise ValueError(f"algorithm {path!r}: cannot import module {module_name!r} "
                         f"({type(exc).__name__}: {exc})") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ValueError(f"algorithm {path!r}: module {module_name!r} has no attribute "
                         f"{attr!r}") from None


def build(name: str, horizon=None, arms=None, experts=None, epsilon=None, delta=None,
          params: Optional[dict] = None) -> Algorithm:
    """Build a registered algorithm (or a user's ``package.module:attribute``,
    which is either an ``Algorithm`` or a factory with the same signature as
    the registered ones: ``f(T, K, N, epsilon, delta, **params)``)."""
    params = dict(params or {})
    entry = REGISTRY.get(name)
    if entry is None:
        obj = load_user_object(name)
        if isinstance(obj, Algorithm):
            return obj
        if not callable(obj):
            raise ValueError(f"algorithm {name!r} is neither an Algorithm nor a factory "
                             "returning one")
        try:
            alg = obj(horizon or 1000, arms or 2, experts, epsilon, delta or 0.0, **params)
        except TypeError as exc:
            raise ValueError(f"algorithm {name!r}: factory rejected its arguments ({exc})") from None
        if not isinstance(alg, Algorithm):
            raise ValueError(f"algorithm {name!r}: factory returned {type(alg).__name__}, "
                             "not an Algorithm")
        return alg
    kwargs = {"T": entry.horizon if horizon is None else horizon,
              "K": entry.arms if arms is None else arms}
    if entry.experts is not None:
        kwargs["N"] = entry.experts if experts is None else experts
    elif experts is not None:
        raise ValueError(f"--experts does not apply to {name} (it takes no expert advice)")
    if epsilon is not None or entry.epsilon is not None:
        kwargs["epsilon"] = entry.epsilon if epsilon is None else epsilon
    if delta is not None or entry.delta:
        kwargs["delta"] = entry.delta if delta is None else delta
    try:
        return entry.factory(**kwargs, **params)
    except TypeError:
        import inspect
        allowed = [p for p in inspect.signature(entry.factory).parameters
                   if p not in ("T", "K", "N", "epsilon", "delta")]
        bad = [p for p in params if p not in allowed]
        if bad:
            raise ValueError(f"unknown parameter {bad[0]!r} for {name}; allowed: "
                             f"{', '.join(allowed)}") from None
        raise
