"""Expected regret with a confidence interval, by simulation.

May import: ``algorithms``, ``attacks.instances``, ``audit.execution``.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
from scipy import stats

from algorithms.core import Algorithm
from algorithms.simulate import simulate
from attacks.instances import make_instance
from audit.execution.executor import run_chunks


@dataclass(frozen=True)
class RegretResult:
    algorithm: str
    params: dict
    claim: Optional[dict]         # None for an algorithm that declares no claim
    instance: str
    horizon: int
    runs: int
    regret_mean: float
    regret_ci: tuple
    confidence: float
    run_rounds_per_second: float
    jobs: int
    seed: int

    def as_dict(self) -> dict:
        d = asdict(self)
        d["regret_ci"] = list(self.regret_ci)
        return d

    def __str__(self) -> str:
        lo, hi = self.regret_ci
        c = self.claim
        if c is None:
            claim = "none declared"
        else:
            delta = f", δ = {c['delta']:g}" if c["delta"] else ""
            claim = f"ε = {c['epsilon']:g}{delta} ({c['scope']}) — {c['source']}"
        return (f"{self.algorithm} on '{self.instance}' (T = {self.horizon}, {self.runs} runs)\n"
                f"  claim:  {claim}\n"
                f"  regret: {self.regret_mean:.1f}  ({self.confidence:.0%} CI {lo:.1f} … {hi:.1f})"
                f"  = {self.regret_mean / self.horizon:.4f} per round\n"
                f"  speed:  {self.run_rounds_per_second / 1e6:.2f} M run-rounds/s with {self.jobs} job(s)")


def _check_loss_table(alg: Algorithm) -> None:
    # The named instances are loss tables (in the algorithm's loss range); an
    # algorithm whose rows parameterise loss functions (Ene et al.) has no
    # best arm to compare with.
    if alg.check_losses is not None:
        raise ValueError(f"regret instances are loss tables in [0, 1]^K; {alg.name} takes loss "
                         "functions, so it has no regret estimate here")
    if alg.learner.reads_first:
        raise ValueError(f"audit regret does not apply to {alg.name}: a mechanism over a stream "
                         f"of answers incurs no loss")


def _losses_task(alg, instance):
    def task(runs, rng):
        tr = simulate(alg, instance.losses, runs, rng, advice=instance.advice)
        return tr.total_loss.sum(), (tr.total_loss ** 2).sum(), runs
    return task


def estimate_regret(alg: Algorithm, runs: int = 1000, instance: str = "gap", seed: int = 0,
                    jobs: int = 1, confidence: float = 0.95) -> RegretResult:
    """Regret of an oblivious adversary: E[Σ ℓ_t(I_t)] − min_i Σ ℓ_t(i) (or the
    best expert's expected loss), with a Student-t interval over runs."""
    _check_loss_table(alg)
    inst = make_instance(instance, alg.horizon, alg.n_arms, alg.n_experts, alg.loss_range)
    start = time.perf_counter()
    parts = run_chunks(_losses_task(alg, inst), runs, seed, jobs=jobs)
    elapsed = time.perf_counter() - start
    s = sum(p[0] for p in parts)
    s2 = sum(p[1] for p in parts)
    mean = s / runs
    var = max(s2 / runs - mean ** 2, 0.0) * runs / max(runs - 1, 1)
    half = stats.t.ppf(0.5 + confidence / 2, max(runs - 1, 1)) * np.sqrt(var / runs)
    best = inst.best_loss()
    return RegretResult(alg.name, alg.params, alg.claim.as_dict() if alg.claim else None, instance, alg.horizon, runs,
                        mean - best, (mean - best - half, mean - best + half), confidence,
                        runs * alg.horizon / elapsed, jobs, seed)


def regret_curve(alg: Algorithm, runs: int = 200, instance: str = "gap", seed: int = 0,
                 points: int = 60, confidence: float = 0.95) -> dict:
    """Mean regret against the best fixed arm (expert) of each prefix, with a
    Student-t band over runs, at up to ``points`` horizons t ≤ T; and the
    paper's regret bound at the same horizons where the algorithm states one.
    None for algorithms whose loss rows are not loss tables, and for
    mechanisms over a stream of answers (they incur no loss)."""
    if alg.check_losses is not None or alg.learner.reads_first:
        return None
    inst = make_instance(instance, alg.horizon, alg.n_arms, alg.n_experts, alg.loss_range)
    tr = simulate(alg, inst.losses, runs, np.random.default_rng(seed), advice=inst.advice)
    T = alg.horizon
    ts = np.unique(np.geomspace(1, T, points).astype(int))
    played = inst.losses[np.arange(T), tr.actions.astype(np.int64)]        # (runs, T)
    cum = np.cumsum(played, axis=1)[:, ts - 1]
    if inst.advice is None:
        best = np.cumsum(inst.losses, axis=0).min(axis=1)[ts - 1]
    else:
        per_expert = np.einsum("tnk,tk->tn", inst.advice, inst.losses)
        best = np.cumsum(per_expert, axis=0).min(axis=1)[ts - 1]
    reg = cum - best
    mean = reg.mean(axis=0)
    half = stats.t.ppf(0.5 + confidence / 2, max(runs - 1, 1)) * reg.std(axis=0, ddof=1) / np.sqrt(runs)
    out = {"instance": instance, "runs": runs, "t": ts.tolist(), "mean": mean.tolist(),
           "lower": (mean - half).tolist(), "upper": (mean + half).tolist(),
           "confidence": confidence}
    bound = alg.extra.get("regret_bound")
    if bound is not None:
        out["bound"] = {"formula": bound[0], "source": bound[1],
                        "values": [float(bound[2](int(t))) for t in ts]}
    return out
