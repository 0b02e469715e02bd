"""Integral evidence (exact): for a mechanism that declares a sparse vector
(``algorithms.sparse_vector_model``), the probability of an output is a
one-dimensional integral over the threshold noise, which
``audit.engine.models.sparse_vector.integral`` brackets with a certified error bound.

* Outputs that are code sequences only (Lyu, Su & Li's Algs 1, 2, 4, 5, 6),
  when they are few (``audit.engine.models.sparse_vector.integral.enumerable``: at most
  2^14 outputs and 2^24 codes in all; their number is counted
  combinatorially, Σ_{k ≤ c} C(T, k) with a cutoff c, 2^T without):
  every possible output is enumerated, so the pair's privacy loss is known
  exactly for each output on both sides.  The pair's ε is the largest
  certified lower end of ln P_ℓ(o) − ln P_ℓ′(o) over outputs and directions
  (an output impossible on one side only gives ∞); with δ > 0, the
  smallest ε at which the certified lower bound on
  δ(ε) = Σ_o (P(o) − e^ε P′(o))₊ stays at most δ.  The whole privacy-loss
  distribution is in the details.  No sampling: no α share.
* Code sequences too many to enumerate (a long horizon, no cutoff):
  outputs are sampled on each side (``NUMERIC_SAMPLES`` a side at most, so
  at most twice that many distinct outputs), and each distinct one's exact
  probability is bracketed on both sides.  The largest certified lower end
  of a loss is a certificate for pure ε (that one output is the event);
  with δ > 0 the certified δ(ε) lower bound is summed over the distinct
  sampled outputs only (a sum over some outputs of nonnegative terms is
  still a lower bound).  Memory and time are bounded by the number of
  samples, whatever the horizon (``integral`` works in batches).
* Outputs that release numbers with ⊤ (Alg 3; the numerical sparse
  vector): outputs are sampled on each side and their exact loss (a
  density ratio, bracketed) is computed; the largest certified lower end is
  a certificate for pure ε (the densities are continuous in the released
  values, so the loss exceeds it on a set of positive probability); with
  δ > 0 one output proves nothing, so nothing is claimed.

The samples only choose which outputs to certify: no α share.

The output is the mechanism's own (its codes and numbers: action scope), so
the result decides a verdict.  Numbers come with the bracket they rest on.

May import: ``algorithms``, ``audit.engine.models.sparse_vector``,
``audit.engine.privacy_loss``, ``audit.engine.sampling``,
``algorithms.simulate``, ``audit.engine.evidence``.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.sparse_vector_model import ABORTED, ABOVE, BELOW
from algorithms.simulate import simulate
from audit.engine.evidence.base import Evidence
from audit.engine.evidence.whitebox import WhiteBoxResult
from audit.engine.models.sparse_vector.integral import (ENUMERATION_ENTRIES, ENUMERATION_LIMIT,
                                                       all_outputs_log_probability, enumerable,
                                                       log_probability, output_count)
from audit.engine.models.sparse_vector.verify import answers_of, sparse_vector_of
from audit.engine.privacy_loss import certified
from audit.engine.sampling import Request

# Streams of the sampled outputs of models not enumerated (black-box sides:
# 0, 1; pld: 7, 8; declaration pilots: their own family).
INTEGRAL_STREAMS = {"l>l'": 11, "l'>l": 12}
NUMERIC_SAMPLES = 500     # outputs sampled per direction at most (distinct: 2× that at most)
CODE_NAMES = {BELOW: "⊥", ABOVE: "⊤", ABORTED: "–"}


def _judge(claim, dirs, codes, lo_a, hi_a, lo_b, hi_b, one: str, every: str):
    """(ε_lb, event, direction, best loss) of code sequences bracketed on
    both sides: under pure ε the largest certified loss of one output, else
    the largest ε whose certified δ_lb(ε), summed over the outputs, exceeds δ."""
    best_dir, best_i, best = _best(dirs)
    if claim.delta == 0:
        eps_lb = certified(best) if best > 0 else 0.0
        event = (f"{one} {describe(codes[best_i])} ({best_dir}): exact loss in "
                 f"[{best:.6g}, {float(dirs[best_dir][1][best_i]):.6g}]"
                 if best_i is not None else f"no {one[4:]}")
        return eps_lb, event, best_dir, best
    per = {"l>l'": epsilon_at_delta(lo_a, hi_b, claim.delta),
           "l'>l": epsilon_at_delta(lo_b, hi_a, claim.delta)}
    best_dir = max(per, key=per.get)
    eps_lb = certified(per[best_dir]) if per[best_dir] > 0 else 0.0
    event = (f"δ(ε) summed over {every} ({best_dir}): certified δ_lb(ε) > δ = "
             f"{claim.delta:g} up to ε = {per[best_dir]:.6g}")
    return eps_lb, event, best_dir, best


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


def count_text(count: int) -> str:
    """An exact count, or its power of two when it has more than 15 digits."""
    return str(count) if count < 10 ** 15 else f"about 2^{math.log2(count):.1f}"


class IntegralEvidence(Evidence):
    kind = "integral"

    @property
    def phase(self) -> str:
        return f"white-box integral {self.scenario.label}"

    def requests(self, trials: int) -> list[Request]:
        sc = self.scenario
        model = sparse_vector_of(sc.algorithm)
        if enumerable(model, sc.rounds):
            return []
        n = int(min(trials, NUMERIC_SAMPLES))
        out = []
        for direction, stream in INTEGRAL_STREAMS.items():
            losses = sc.losses_a if direction == "l>l'" else sc.losses_b
            out.append(Request(_sample_task(sc.algorithm, losses, sc.rounds,
                                            not model.finite_outputs), n,
                               (self.index, stream), "integral-outputs", chunk=2000))
        return out

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        sc, claim = self.scenario, self.claim
        model = sparse_vector_of(sc.algorithm)
        a, b = answers_of(sc.losses_a[:sc.rounds]), answers_of(sc.losses_b[:sc.rounds])
        notes = [f"declared sparse vector: threshold {model.threshold:g}, ρ ~ Lap("
                 f"{model.threshold_scale:.4g}), ν ~ Lap({model.query_scale:.4g}), cutoff "
                 f"{model.cutoff}, resample {model.resample}, numeric {model.numeric}"]
        limit = (f"at most {ENUMERATION_LIMIT} outputs and {ENUMERATION_ENTRIES} codes in all "
                 f"are enumerated")
        if enumerable(model, sc.rounds):
            codes, lo_a, hi_a = all_outputs_log_probability(model, a)
            _, lo_b, hi_b = all_outputs_log_probability(model, b)
            notes.append(f"all {len(codes)} outputs enumerated ({limit})")
            eps_lb, event, details = self._enumerated(codes, lo_a, hi_a, lo_b, hi_b, notes)
        elif model.finite_outputs:
            count = output_count(model, sc.rounds)
            notes.append(f"{count_text(count)} possible outputs on {sc.rounds} rounds, more than "
                         f"enumerated ({limit}): outputs sampled instead")
            eps_lb, event, details = self._sampled_codes(samples, a, b, notes)
        else:
            eps_lb, event, details = self._sampled_numbers(samples, a, b, notes)
        what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
        return WhiteBoxResult(sc.label, "integral", "actions", eps_lb, claim.epsilon, what,
                              event, exact=True, details=details, notes=notes)

    def _enumerated(self, codes, lo_a, hi_a, lo_b, hi_b, notes):
        """Every output: the pair's exact ε (or ε at δ) and its loss distribution."""
        claim = self.claim
        for side, lo, hi in (("ℓ", lo_a, hi_a), ("ℓ′", lo_b, hi_b)):
            if not (np.exp(lo).sum() <= 1 + 1e-9 and np.exp(hi).sum() >= 1 - 1e-9):
                raise AssertionError(f"sparse vector probabilities on {side} do not bracket "
                                     f"a total of 1: [{np.exp(lo).sum()}, {np.exp(hi).sum()}]")
        dirs = {"l>l'": _loss(lo_a, hi_a, lo_b, hi_b), "l'>l": _loss(lo_b, hi_b, lo_a, hi_a)}
        top_hi = max(float(np.nanmax(high)) for _, high in dirs.values())
        eps_lb, event, best_dir, best = _judge(claim, dirs, codes, lo_a, hi_a, lo_b, hi_b,
                                               "the output", f"all {len(codes)} outputs")
        notes.append(f"each probability a certified bracket (total on ℓ in "
                     f"[{np.exp(lo_a).sum():.12g}, {np.exp(hi_a).sum():.12g}])")
        notes.append(f"the pair's exact ε over all outputs is in [{max(best, 0):.6g}, "
                     f"{top_hi:.6g}]: no audit of this pair can show more")
        p_a = np.exp((lo_a + hi_a) / 2)
        mid = (dirs["l>l'"][0] + dirs["l>l'"][1]) / 2
        order = np.argsort(-np.nan_to_num(mid, nan=-np.inf))[:12]
        details = {"outputs": int(len(codes)), "enumerated": True,
                   "pair_epsilon": [max(best, 0.0), top_hi],
                   "direction": best_dir,
                   "loss_distribution": [
                       {"output": describe(codes[i]), "probability": float(p_a[i]),
                        "loss": [float(dirs["l>l'"][0][i]), float(dirs["l>l'"][1][i])]}
                       for i in order],
                   "delta_lower_at_claimed_epsilon": max(
                       delta_lower(lo_a, hi_b, claim.epsilon),
                       delta_lower(lo_b, hi_a, claim.epsilon))}
        return eps_lb, event, details

    def _sampled_codes(self, samples, a, b, notes):
        """Code sequences sampled on both sides: every distinct one's exact
        loss in both directions."""
        claim, model = self.claim, sparse_vector_of(self.scenario.algorithm)
        drawn = [np.concatenate(parts).astype(np.int8) for parts in samples]
        count = sum(len(d) for d in drawn)
        codes = np.unique(np.concatenate(drawn), axis=0)
        lo_a, hi_a = log_probability(model, a, codes)
        lo_b, hi_b = log_probability(model, b, codes)
        dirs = {"l>l'": _loss(lo_a, hi_a, lo_b, hi_b), "l'>l": _loss(lo_b, hi_b, lo_a, hi_a)}
        eps_lb, event, best_dir, best = _judge(
            claim, dirs, codes, lo_a, hi_a, lo_b, hi_b, "the sampled output",
            f"the {len(codes)} distinct sampled outputs")
        notes.append(f"{count} outputs sampled (both directions), {len(codes)} distinct; each "
                     f"one's probability on both sides a certified bracket, so " + (
                         "the largest certified loss is a certificate" if claim.delta == 0 else
                         "the certified lower bound on δ(ε), summed over the distinct sampled "
                         "outputs only, is one on the sum over all outputs"))
        notes.append(f"largest certified loss over the sampled outputs {max(best, 0):.6g}: the "
                     f"pair's exact ε is at least that (outputs not sampled may show more)")
        details = {"samples": count, "distinct_outputs": int(len(codes)), "enumerated": False,
                   "outputs_log2": math.log2(output_count(model, self.scenario.rounds)),
                   "direction": best_dir,
                   "delta_lower_at_claimed_epsilon": max(
                       delta_lower(lo_a, hi_b, claim.epsilon),
                       delta_lower(lo_b, hi_a, claim.epsilon))}
        return eps_lb, event, details

    def _sampled_numbers(self, samples, a, b, notes):
        """Outputs with released numbers sampled per direction: each one's
        exact density ratio."""
        claim, model = self.claim, sparse_vector_of(self.scenario.algorithm)
        best, best_dir, best_out = -math.inf, None, None
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
        return eps_lb, event, {"samples": count, "direction": best_dir, "enumerated": False}


def _best(dirs):
    """(direction, index, value) of the largest certified lower end of a
    loss over both directions; (None, None, −inf) when there is none."""
    best_dir, best_i, best = None, None, -math.inf
    for d, (low, _) in dirs.items():
        if np.all(np.isnan(low)):
            continue
        i = int(np.nanargmax(low))
        if low[i] > best:
            best_dir, best_i, best = d, i, float(low[i])
    return best_dir, best_i, best


def _sample_task(alg, losses, rounds, numbers: bool):
    def task(runs, rng):
        tr = simulate(alg, losses, runs, rng, rounds=rounds,
                      point_rounds=range(rounds) if numbers else ())
        if not numbers:
            return tr.actions.astype(float)
        values = np.stack([tr.points[t][:, 0] for t in range(rounds)], axis=1)
        # One float array (codes, then values) per chunk, like every sample.
        return np.concatenate([tr.actions.astype(float), values], axis=1)
    return task
