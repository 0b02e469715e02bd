"""Run the white-box modes for a scenario and judge them against the claim."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from algorithms.core import Claim
from .simulate import run_chunks, simulate
from .whitebox import (LossDistribution, action_loss, per_round_curve, scope_of,
                       search_worst_output, transcript_loss)

WHITE_MODES = ("per-round", "search", "pld")
# Exact losses are sums of floating-point terms; a loss that equals the claim
# in exact arithmetic (a correct Algorithm 1 attains L = ε) must not read as
# a violation because of rounding.
REL_TOL = 1e-9


def exceeds(value: float, claim: float) -> bool:
    return value > claim * (1 + REL_TOL) + 1e-12


def _downsample(x: np.ndarray, n: int = 2000) -> list:
    """Curves for the document and figures: at most n points, keeping maxima."""
    x = np.asarray(x, dtype=float)
    if x.size <= n:
        return x.tolist()
    edges = np.linspace(0, x.size, n + 1).astype(int)
    return np.maximum.reduceat(x, edges[:-1]).tolist()


@dataclass
class WhiteBoxResult:
    attack: str
    kind: str                     # per-round | search | pld
    scope: str
    epsilon_lower_bound: float
    claim_value: float            # the number it is compared with
    claim_label: str
    event: str
    exact: bool                   # True: no statistical error at all
    details: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    counts_toward_total: bool = True  # per-round ε_t is not an ε for the whole run

    @property
    def violation(self) -> bool:
        return exceeds(self.epsilon_lower_bound, self.claim_value)

    @property
    def per_record_lower_bound(self) -> float:
        return self.epsilon_lower_bound if self.counts_toward_total else 0.0

    def as_dict(self) -> dict:
        return {"name": self.attack, "scenario": f"{self.attack}:{self.kind}", "mode": "white-box",
                "kind": self.kind, "scope": self.scope,
                "epsilon_lower_bound": self.epsilon_lower_bound,
                "claim_compared": {"value": self.claim_value, "what": self.claim_label},
                "verdict": "violation" if self.violation else "consistent",
                "event": self.event, "exact": self.exact,
                "counts": self.details.get("counts"), "bounds": self.details.get("bounds"),
                "details": {k: v for k, v in self.details.items() if k not in ("counts", "bounds")},
                "notes": self.notes}


def applicable_modes(scenario) -> list[str]:
    scope = scope_of(scenario.algorithm)
    if scope is None or scenario.group_size != 1:
        return []
    modes = ["pld"]
    if scope == "actions":
        modes = (["per-round"] if scenario.history is not None else []) + ["search", "pld"]
    return modes


def _pld_samples(alg, sc, trials, seed, jobs, index, executor=None):
    scope = scope_of(alg)
    if scope == "transcript":
        n = trials

        def task(runs, rng):
            tr = simulate(alg, sc.losses_a, runs, rng, advice=sc.advice, rounds=sc.rounds,
                          record_transcript=True)
            return transcript_loss(alg, sc.losses_a, sc.losses_b, tr, sc.advice)
    else:
        # Replaying a history costs a Python step per round; keep ~3·10^7 row-rounds.
        n = int(min(trials, max(500, 3e7 // sc.rounds)))

        def task(runs, rng):
            tr = simulate(alg, sc.losses_a, runs, rng, advice=sc.advice, rounds=sc.rounds)
            return action_loss(alg, sc.losses_a[:sc.rounds], sc.losses_b[:sc.rounds],
                               tr.actions.astype(np.int64), sc.advice)
    parts = run_chunks(task, n, [seed, index, 7], jobs=jobs, chunk=5000, executor=executor,
                       tag=f"pld-{scope}")
    return np.concatenate(parts), scope


def run_whitebox(sc, claim: Claim, modes, alpha: float, trials: int, seed: int,
                 jobs: int, index: int, executor=None) -> list[WhiteBoxResult]:
    """White-box modes on the scenario's algorithm (for the canary, the
    conversion around the canary: the claim holds for every base learner)."""
    alg = sc.algorithm
    out = []
    label = sc.label
    if "per-round" in modes:
        curve = per_round_curve(alg, sc.losses_a, sc.losses_b, sc.history, sc.history_label, claim)
        worst = int(np.argmax(curve.epsilon_t))
        value = claim.per_round_epsilon if claim.per_round_epsilon is not None else claim.epsilon
        what = "per-round claim ε_t" if claim.per_round_epsilon is not None else "claimed ε"
        first = curve.first_exceeding
        out.append(WhiteBoxResult(
            label, "per-round", "actions", float(curve.epsilon_t[worst]), value, what,
            f"round {worst + 1} of the history '{sc.history_label}': "
            f"max_i |ln P_t(i) − ln P′_t(i)| = {curve.epsilon_t[worst]:.4g}",
            exact=True, counts_toward_total=claim.per_round_epsilon is None,
            details={"history": sc.history_label, "horizon": int(curve.epsilon_t.size),
                     "first_round_exceeding_claim": first,
                     "final_p_arm2": [float(curve.p_a[-1, -1]), float(curve.p_b[-1, -1])],
                     "epsilon_t": _downsample(curve.epsilon_t),
                     "p_arm2": _downsample(curve.p_a[:, -1]),
                     "p_prime_arm2": _downsample(curve.p_b[:, -1])},
            notes=[f"along the history both sides' action distributions are replayed exactly; "
                   f"ε_t first exceeds {value:g} at round {first}" if first else
                   "ε_t stays below the per-round claim along this history"]))
    if "search" in modes:
        cert = search_worst_output(alg, sc.losses_a, sc.losses_b, claim, sc.advice)
        composed = claim.per_round_epsilon is not None
        what = (f"composed claim ε_t·T′ = {claim.per_round_epsilon:g}·{cert.horizon}" if composed
                else "claimed ε")
        exact_cert = claim.delta == 0
        out.append(WhiteBoxResult(
            label, "search", "actions", cert.loss,
            cert.claim_at_horizon if exact_cert else math.inf, what,
            f"the single output x = {cert.description}; first actions "
            f"{' '.join(map(str, cert.actions_head))} …", exact=True,
            details={"certificate": cert.description, "length": cert.horizon,
                     "loss": cert.loss, "actions_head": cert.actions_head,
                     "cumulative_loss": _downsample(cert.curve)},
            notes=["L(x) = ln P_ℓ(x) − ln P_ℓ′(x) is exact: the event {x} refutes any pure "
                   "ε-DP claim with ε < L(x), with no statistical error" if exact_cert else
                   "a single output cannot refute an (ε, δ) claim with δ > 0; see the loss distribution"]))
    if "pld" in modes:
        L, scope = _pld_samples(alg, sc, trials, seed, jobs, index, executor)
        band = math.sqrt(math.log(1 / alpha) / (2 * L.size))
        pld = LossDistribution(L, alpha, band, scope)
        eps_lb = pld.epsilon_lower_bound(claim.delta)
        d_lo = pld.delta_lower(claim.epsilon)
        hist, edges = np.histogram(L, bins=60)
        # δ(ε) where the losses live, plus the claimed ε itself.
        top = max(float(L.max()), 1e-9)
        grid = np.unique(np.append(np.linspace(0, 1.1 * top, 40),
                                   claim.epsilon if claim.epsilon <= 10 * top else []))
        out.append(WhiteBoxResult(
            label, "pld", scope, eps_lb, claim.epsilon, "claimed ε (at the claimed δ)",
            f"privacy-loss distribution of {L.size} outputs sampled on ℓ "
            f"({'actions' if scope == 'actions' else 'actions + released noisy values'})",
            exact=False,
            details={"counts": {"samples": int(L.size)},
                     "bounds": {"dkw_band": band, "alpha": alpha,
                                "delta_lower_at_claimed_epsilon": d_lo,
                                "delta_point_at_claimed_epsilon": pld.delta_point(claim.epsilon)},
                     "max_loss": float(L.max()), "mean_loss": float(L.mean()),
                     "histogram": {"counts": hist.tolist(), "edges": edges.tolist()},
                     "delta_curve": {"epsilon": grid.tolist(),
                                     "delta_lower": [pld.delta_lower(e) for e in grid],
                                     "delta_point": [pld.delta_point(e) for e in grid]},
                     "rounds_simulated": sc.rounds},
            notes=[f"largest sampled exact loss {L.max():.4g}" +
                   (f" > ε = {claim.epsilon:g}: a certificate against pure ε-DP"
                    if claim.delta == 0 and exceeds(L.max(), claim.epsilon) else ""),
                   "δ(ε) = E[(1 − e^(ε−L))₊] is bounded below simultaneously for every ε by a "
                   "one-sided DKW band on the distribution of L"]))
        if claim.delta == 0 and exceeds(L.max(), claim.epsilon):
            out[-1].epsilon_lower_bound = max(eps_lb, float(L.max()))
            out[-1].exact = True
    return out
