"""Integral evidence (exact): for a mechanism that declares a sparse vector
(``algorithms.sparse_vector_model``), the probability of an output is a
one-dimensional integral over the threshold noise, which
``audit.engine.svt_integral`` brackets with a certified error bound.

* Outputs that are code sequences only (Lyu, Su & Li's Algs 1, 2, 4, 5, 6):
  every possible output is enumerated, so the pair's privacy loss is known
  exactly for each output on both sides.  The pair's ε is the largest
  certified lower end of ln P_ℓ(o) − ln P_ℓ′(o) over outputs and directions
  (an output impossible on one side only gives ∞); with δ > 0, the
  smallest ε at which the certified lower bound on
  δ(ε) = Σ_o (P(o) − e^ε P′(o))₊ stays at most δ.  The whole privacy-loss
  distribution is in the details.  No sampling: no α share.
* Outputs that release numbers with ⊤ (Alg 3; the numerical sparse
  vector): outputs are sampled on each side and their exact loss (a
  density ratio, bracketed) is computed; the largest certified lower end is
  a certificate for pure ε (the densities are continuous in the released
  values, so the loss exceeds it on a set of positive probability).  The
  samples only choose which outputs to certify: no α share either.

The output is the mechanism's own (its codes and numbers: action scope), so
the result decides a verdict.  Numbers come with the bracket they rest on.

May import: ``algorithms``, ``audit.engine.svt_integral``,
``audit.engine.privacy_loss``, ``audit.engine.sampling``,
``algorithms.simulate``, ``audit.engine.evidence``.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.sparse_vector_model import ABORTED, ABOVE, BELOW, SparseVectorModel
from algorithms.simulate import simulate
from audit.engine.evidence.base import Evidence
from audit.engine.evidence.whitebox import WhiteBoxResult
from audit.engine.privacy_loss import certified
from audit.engine.sampling import Request

# Streams of the sampled outputs of numeric models (black-box sides: 0, 1;
# pld: 7, 8; declaration pilots: their own family).
INTEGRAL_STREAMS = {"l>l'": 11, "l'>l": 12}
NUMERIC_SAMPLES = 500     # per direction; SVT3's outputs are integrated one by one
CODE_NAMES = {BELOW: "⊥", ABOVE: "⊤", ABORTED: "–"}


def sparse_vector_of(alg):
    """The declared ``SparseVectorModel`` of ``alg``, or None."""
    model = (getattr(alg, "extra", None) or {}).get("sparse_vector")
    return model if isinstance(model, SparseVectorModel) else None


def answers_of(losses: np.ndarray) -> np.ndarray:
    """One answer per round: the rows must have width 1."""
    arr = np.asarray(losses, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 1:
        raise ValueError(f"a sparse vector reads one answer per round; rows of shape "
                         f"{arr.shape[1:]} given")
    return arr[:, 0]


def describe(codes, values=None) -> str:
    s = "".join(CODE_NAMES.get(int(c), "?") for c in codes)
    if values is not None:
        nums = [f"{v:.3g}" for c, v in zip(codes, values) if int(c) == ABOVE]
        if nums:
            s += " with " + ", ".join(nums)
    return s


def _loss(lo_num, hi_num, lo_den, hi_den):
    """Certified [lower, upper] of ln P_num − ln P_den, elementwise: an output
    impossible on the numerator side has no loss (NaN, skipped), one possible
    only there +∞."""
    with np.errstate(invalid="ignore"):
        low = np.where(np.isneginf(hi_den), np.inf, lo_num - hi_den)
        high = np.where(np.isneginf(lo_den), np.inf, hi_num - lo_den)
    impossible = np.isneginf(hi_num)
    return np.where(impossible, np.nan, low), np.where(impossible, np.nan, high)


def delta_lower(lo_num, hi_den, eps: float) -> float:
    """Certified lower bound on Σ_o (P_num(o) − e^ε P_den(o))₊."""
    p = np.exp(lo_num)
    q = np.exp(hi_den)
    return float(np.clip(p - math.exp(eps) * q, 0.0, None).sum())


def epsilon_at_delta(lo_num, hi_den, delta: float) -> float:
    """The largest ε with certified δ_lb(ε) > δ (0 when none): bisection on
    the decreasing function ε ↦ δ_lb(ε)."""
    if delta_lower(lo_num, hi_den, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while delta_lower(lo_num, hi_den, hi) > delta:
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_lower(lo_num, hi_den, mid) > delta else (lo, mid)
    return lo


class IntegralEvidence(Evidence):
    kind = "integral"

    @property
    def phase(self) -> str:
        return f"white-box integral {self.scenario.label}"

    def requests(self, trials: int) -> list[Request]:
        sc = self.scenario
        model = sparse_vector_of(sc.algorithm)
        if model.finite_outputs:
            return []
        n = int(min(trials, NUMERIC_SAMPLES))
        out = []
        for direction, stream in INTEGRAL_STREAMS.items():
            losses = sc.losses_a if direction == "l>l'" else sc.losses_b
            out.append(Request(_sample_task(sc.algorithm, losses, sc.rounds), n,
                               (self.index, stream), "integral-outputs", chunk=2000))
        return out

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        from audit.engine.svt_integral import all_outputs_log_probability, log_probability
        sc, claim = self.scenario, self.claim
        alg = sc.algorithm
        model = sparse_vector_of(alg)
        a, b = answers_of(sc.losses_a[:sc.rounds]), answers_of(sc.losses_b[:sc.rounds])
        what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
        notes = [f"declared sparse vector: threshold {model.threshold:g}, ρ ~ Lap("
                 f"{model.threshold_scale:.4g}), ν ~ Lap({model.query_scale:.4g}), cutoff "
                 f"{model.cutoff}, resample {model.resample}, numeric {model.numeric}"]
        if model.finite_outputs:
            codes, lo_a, hi_a = all_outputs_log_probability(model, a)
            _, lo_b, hi_b = all_outputs_log_probability(model, b)
            for side, lo, hi in (("ℓ", lo_a, hi_a), ("ℓ′", lo_b, hi_b)):
                if not (np.exp(lo).sum() <= 1 + 1e-9 and np.exp(hi).sum() >= 1 - 1e-9):
                    raise AssertionError(f"sparse vector probabilities on {side} do not bracket "
                                         f"a total of 1: [{np.exp(lo).sum()}, {np.exp(hi).sum()}]")
            dirs = {"l>l'": _loss(lo_a, hi_a, lo_b, hi_b), "l'>l": _loss(lo_b, hi_b, lo_a, hi_a)}
            best_dir, best_i, best = None, None, -math.inf
            for d, (low, _) in dirs.items():
                if np.all(np.isnan(low)):
                    continue
                i = int(np.nanargmax(low))
                if low[i] > best:
                    best_dir, best_i, best = d, i, float(low[i])
            top_hi = max(float(np.nanmax(high)) for _, high in dirs.values())
            if claim.delta == 0:
                eps_lb = certified(best) if best > 0 else 0.0
                event = (f"the output {describe(codes[best_i])} ({best_dir}): exact loss in "
                         f"[{best:.6g}, {float(dirs[best_dir][1][best_i]):.6g}]")
            else:
                per = {"l>l'": epsilon_at_delta(lo_a, hi_b, claim.delta),
                       "l'>l": epsilon_at_delta(lo_b, hi_a, claim.delta)}
                best_dir = max(per, key=per.get)
                eps_lb = certified(per[best_dir]) if per[best_dir] > 0 else 0.0
                event = (f"δ(ε) summed over all {len(codes)} outputs ({best_dir}): certified "
                         f"δ_lb(ε) > δ = {claim.delta:g} up to ε = {per[best_dir]:.6g}")
            notes.append(f"all {len(codes)} outputs enumerated; each probability a certified "
                         f"bracket (total on ℓ in [{np.exp(lo_a).sum():.12g}, "
                         f"{np.exp(hi_a).sum():.12g}])")
            notes.append(f"the pair's exact ε over all outputs is in [{max(best, 0):.6g}, "
                         f"{top_hi:.6g}]: no audit of this pair can show more")
            p_a = np.exp((lo_a + hi_a) / 2)
            mid = (dirs["l>l'"][0] + dirs["l>l'"][1]) / 2
            order = np.argsort(-np.nan_to_num(mid, nan=-np.inf))[:12]
            details = {"outputs": int(len(codes)),
                       "pair_epsilon": [max(best, 0.0), top_hi],
                       "direction": best_dir,
                       "loss_distribution": [
                           {"output": describe(codes[i]), "probability": float(p_a[i]),
                            "loss": [float(dirs["l>l'"][0][i]), float(dirs["l>l'"][1][i])]}
                           for i in order],
                       "delta_lower_at_claimed_epsilon": max(
                           delta_lower(lo_a, hi_b, claim.epsilon),
                           delta_lower(lo_b, hi_a, claim.epsilon))}
        else:
            best, best_dir, best_out, top_hi = -math.inf, None, None, None
            count = 0
            for (direction, _), parts in zip(INTEGRAL_STREAMS.items(), samples):
                both = np.concatenate(parts)
                T = both.shape[1] // 2
                codes, values = both[:, :T].astype(np.int64), both[:, T:]
                count += len(codes)
                num, den = (a, b) if direction == "l>l'" else (b, a)
                lo_n, hi_n = log_probability(model, num, codes, values)
                lo_d, hi_d = log_probability(model, den, codes, values)
                low, _ = _loss(lo_n, hi_n, lo_d, hi_d)
                if np.all(np.isnan(low)):
                    continue
                i = int(np.nanargmax(low))
                if low[i] > best:
                    best, best_dir, best_out = float(low[i]), direction, (codes[i], values[i])
            eps_lb = certified(best) if best > 0 and claim.delta == 0 else 0.0
            event = (f"the sampled output {describe(*best_out)} ({best_dir}): exact density "
                     f"ratio, log at least {best:.6g}" if best_out is not None else
                     "no sampled output")
            notes.append(f"{count} outputs sampled (both directions); each output's density "
                         f"is a certified bracket, so the largest certified loss is a "
                         f"certificate" + ("" if claim.delta == 0 else
                                            " for pure ε only: with δ > 0 one output proves "
                                            "nothing, so no bound is claimed"))
            details = {"samples": count, "direction": best_dir}
        return WhiteBoxResult(sc.label, "integral", "actions", eps_lb, claim.epsilon, what,
                              event, exact=True, details=details, notes=notes)


def _sample_task(alg, losses, rounds):
    def task(runs, rng):
        tr = simulate(alg, losses, runs, rng, rounds=rounds, point_rounds=range(rounds))
        values = np.stack([tr.points[t][:, 0] for t in range(rounds)], axis=1)
        # One float array (codes, then values) per chunk, like every sample.
        return np.concatenate([tr.actions.astype(float), values], axis=1)
    return task
