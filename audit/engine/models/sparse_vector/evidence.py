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
* Outputs that release a fresh number with ⊤ (the numerical sparse
  vector), under a pure claim, when the code sequences are enumerable: the
  fresh number's density factors out of the integral, so every code
  sequence is enumerated with each ⊤'s number at the numerator's answer,
  where its density ratio is largest (|q − q′|/scale, beyond both means):
  the pair's exact ε over all outputs (``integral.exact_pair``).
* Outputs that release numbers with ⊤ otherwise (Alg 3's compared value):
  outputs are sampled on each side and their exact loss (a density ratio,
  bracketed) is computed; the largest certified lower end is a
  certificate for pure ε (the densities are continuous in the released
  values, so the loss exceeds it on a set of positive probability); with
  δ > 0 one output proves nothing, so nothing is claimed.
* Two sparse vectors in parallel (``ParallelIntegralEvidence``): the loss
  of an output is the sum of the halves' losses, so a direction's largest
  is the sum of each half's largest, each over every output where they
  are enumerable and over the sampled outputs otherwise.

The samples only choose which outputs to certify: no α share.

The output is the mechanism's own (its codes and numbers: action scope), so
the result decides a verdict.  Numbers come with the bracket they rest on.

May import: ``algorithms``, ``audit.engine.models.sparse_vector``,
``audit.engine.models.pair_loss``, ``audit.engine.privacy_loss``, ``audit.engine.sampling``,
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
                                                       all_outputs_log_probability,
                                                       codes_enumerable, enumerable, exact_pair,
                                                       log_probability, output_count)
from audit.engine.models.sparse_vector.parallel import parallel_of, split
from audit.engine.models.pair_loss import best_loss as _best
from audit.engine.models.pair_loss import delta_lower, epsilon_at_delta, top_outputs
from audit.engine.models.pair_loss import loss_bracket as _loss
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


def count_text(count: int) -> str:
    """An exact count, or its power of two when it has more than 15 digits."""
    return str(count) if count < 10 ** 15 else f"about 2^{math.log2(count):.1f}"


def _fresh_enumerated(model, rounds: int, claim) -> bool:
    """Fresh released numbers under a pure claim: the pair's exact ε is
    computed over every code sequence (no sampling)."""
    return (model.numeric == "fresh" and codes_enumerable(model, rounds)
            and claim.delta == 0)


class IntegralEvidence(Evidence):
    kind = "integral"

    @property
    def phase(self) -> str:
        return f"white-box integral {self.scenario.label}"

    def requests(self, trials: int) -> list[Request]:
        sc = self.scenario
        model = sparse_vector_of(sc.algorithm)
        if enumerable(model, sc.rounds) or _fresh_enumerated(model, sc.rounds, self.claim):
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
        elif _fresh_enumerated(model, sc.rounds, claim):
            eps_lb, event, details = self._enumerated_fresh(a, b, notes)
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
                       delta_lower(lo_b, hi_a, claim.epsilon)),
                   "certified_outputs": _top(codes, best_dir, lo_a, hi_a, lo_b, hi_b)}
        return eps_lb, event, details

    def _enumerated_fresh(self, a, b, notes):
        """Every code sequence, each ⊤'s fresh number where its density ratio
        is largest: the pair's exact ε over all outputs (pure ε)."""
        model = sparse_vector_of(self.scenario.algorithm)
        pair = exact_pair(model, a, b)
        notes.append(f"all {pair.outputs} code sequences enumerated; the fresh number of each "
                     f"⊤ is independent of the codes, so its density ratio f(y − q)/f(y − q′) "
                     f"factors out and is largest, |q − q′|/{model.numeric_scale:.4g}, for y at "
                     f"the numerator's answer (beyond both, a set of positive probability): "
                     f"the best output of each code sequence is certified")
        notes.append(f"the pair's exact ε over all outputs is in [{max(pair.lower, 0):.6g}, "
                     f"{pair.upper:.6g}]: no audit of this pair can show more")
        eps_lb = certified(pair.lower) if pair.lower > 0 else 0.0
        event = (f"the output {describe(pair.codes, pair.values)} ({pair.direction}): exact "
                 f"density ratio, log in [{pair.lower:.6g}, {pair.best_upper:.6g}]")
        details = {"outputs": pair.outputs, "enumerated": True,
                   "pair_epsilon": [max(pair.lower, 0.0), pair.upper],
                   "direction": pair.direction}
        if pair.log_numerator is not None:
            details["certified_outputs"] = top_outputs(
                lambda i: describe(pair.all_codes[i], pair.values), *pair.log_numerator,
                *pair.log_denominator, pair.direction, measure="density")
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
                       delta_lower(lo_b, hi_a, claim.epsilon)),
                   "certified_outputs": _top(codes, best_dir, lo_a, hi_a, lo_b, hi_b)}
        return eps_lb, event, details

    def _sampled_numbers(self, samples, a, b, notes):
        """Outputs with released numbers sampled per direction: each one's
        exact density ratio."""
        claim, model = self.claim, sparse_vector_of(self.scenario.algorithm)
        best, best_dir, best_out = -math.inf, None, None
        shown = None
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
                shown = top_outputs(lambda j, c=codes, v=values: describe(c[j], v[j]),
                                    lo_n, hi_n, lo_d, hi_d, direction, measure="density")
        eps_lb = certified(best) if best > 0 and claim.delta == 0 else 0.0
        event = (f"the sampled output {describe(*best_out)} ({best_dir}): exact density "
                 f"ratio, log at least {best:.6g}" if best_out is not None else
                 "no sampled output")
        notes.append(f"{count} outputs sampled (both directions); each output's density "
                     f"is a certified bracket, so the largest certified loss is a "
                     f"certificate" + ("" if claim.delta == 0 else
                                        " for pure ε only: with δ > 0 one output proves "
                                        "nothing, so no bound is claimed"))
        details = {"samples": count, "direction": best_dir, "enumerated": False}
        if shown is not None:
            details["certified_outputs"] = shown
        return eps_lb, event, details


def _top(codes, direction, lo_a, hi_a, lo_b, hi_b) -> dict:
    """The outputs certifying the most in ``direction``, for the report."""
    num, den = ((lo_a, hi_a), (lo_b, hi_b)) if direction == "l>l'" else ((lo_b, hi_b),
                                                                         (lo_a, hi_a))
    return top_outputs(lambda i: describe(codes[i]), *num, *den, direction or "l>l'")


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


# ------------------------------------------------- two sparse vectors in parallel
def _half_best(model, a, b, codes=None, values=None) -> dict:
    """{direction: (certified lower end of the largest loss, the pair's upper
    end over all outputs or None, codes, values)} of one sparse vector:
    over every output where they are enumerable (no number, or fresh
    numbers), else over the sampled ``codes`` (and ``values``), both
    directions of each."""
    out = {}
    if enumerable(model, len(a)) or (model.numeric == "fresh"
                                     and codes_enumerable(model, len(a))):
        for d in ("l>l'", "l'>l"):
            p = exact_pair(model, a, b, (d,))
            brackets = (None, None)
            if p.log_numerator is not None and p.all_codes is not None:
                i = int(np.flatnonzero((p.all_codes == p.codes).all(axis=1))[0])
                brackets = tuple([float(x[0][i]), float(x[1][i])]
                                 for x in (p.log_numerator, p.log_denominator))
            out[d] = (p.lower, p.upper, p.codes, p.values, *brackets)
        return out
    if values is None:
        codes = np.unique(codes, axis=0)
    lo_a, hi_a = log_probability(model, a, codes, values)
    lo_b, hi_b = log_probability(model, b, codes, values)
    for d, (low, _), (num, den) in (
            ("l>l'", _loss(lo_a, hi_a, lo_b, hi_b), ((lo_a, hi_a), (lo_b, hi_b))),
            ("l'>l", _loss(lo_b, hi_b, lo_a, hi_a), ((lo_b, hi_b), (lo_a, hi_a)))):
        if np.all(np.isnan(low)):
            out[d] = (-math.inf, None, None, None, None, None)
            continue
        i = int(np.nanargmax(low))
        out[d] = (float(low[i]), None, codes[i], None if values is None else values[i],
                  [float(num[0][i]), float(num[1][i])], [float(den[0][i]), float(den[1][i])])
    return out


class ParallelIntegralEvidence(Evidence):
    """Integral evidence for two sparse vectors run in parallel
    (``ParallelSparseVectors``, the testers' SVT34Parallel): given the
    answers the halves are independent, so an output's probability (or
    density) is the product of the halves' own and its loss the sum of
    theirs.  The largest loss of the pair in a direction is therefore the
    sum of each half's largest in that direction, over the outputs each
    half certifies: every output where they are enumerable (codes only, or
    fresh numbers), else the sampled outputs of the mechanism
    (``NUMERIC_SAMPLES`` a direction, split into the two halves; both
    directions of each).  The output made of the two best halves has
    positive probability (density), so the sum of their certified lower
    ends is a certificate for pure ε; with δ > 0 nothing is claimed."""

    kind = "integral"

    @property
    def phase(self) -> str:
        return f"white-box integral {self.scenario.label}"

    def _sampled(self) -> bool:
        model, n = parallel_of(self.scenario.algorithm), self.scenario.rounds
        return any(not (enumerable(m, n) or (m.numeric == "fresh" and codes_enumerable(m, n)))
                   for m in (model.first, model.second))

    def requests(self, trials: int) -> list[Request]:
        sc = self.scenario
        model = parallel_of(sc.algorithm)
        if not self._sampled() or self.claim.delta > 0:
            return []
        n = int(min(trials, NUMERIC_SAMPLES))
        return [Request(_sample_task(sc.algorithm, sc.losses_a if d == "l>l'" else sc.losses_b,
                                     sc.rounds, model.first.numeric is not None), n,
                        (self.index, stream), "integral-outputs", chunk=2000)
                for d, stream in INTEGRAL_STREAMS.items()]

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        sc, claim = self.scenario, self.claim
        model = parallel_of(sc.algorithm)
        a, b = answers_of(sc.losses_a[:sc.rounds]), answers_of(sc.losses_b[:sc.rounds])
        notes = [f"declared two sparse vectors in parallel (independent noises, code "
                 f"{model.codes}·first + second): the first with ρ ~ Lap("
                 f"{model.first.threshold_scale:.4g}), ν ~ Lap({model.first.query_scale:.4g}), "
                 f"cutoff {model.first.cutoff}, numeric {model.first.numeric}; the second with "
                 f"ρ ~ Lap({model.second.threshold_scale:.4g}), ν ~ Lap("
                 f"{model.second.query_scale:.4g}), cutoff {model.second.cutoff}"]
        what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
        if claim.delta > 0:
            notes.append("with δ > 0 one output proves nothing: no bound is claimed")
            return WhiteBoxResult(sc.label, "integral", "actions", 0.0, claim.epsilon, what,
                                  "no bound at δ > 0", exact=True, notes=notes)
        codes = values = None
        count = 0
        if samples:
            both = np.concatenate([np.concatenate(parts) for parts in samples])
            count = len(both)
            T = sc.rounds
            codes = both[:, :T].astype(np.int64)
            values = both[:, T:] if model.first.numeric is not None else None
        halves = []
        for m, part in zip((model.first, model.second),
                           split(model, codes) if codes is not None else (None, None)):
            halves.append(_half_best(m, a, b, part, values if m is model.first else None))
        per = {d: halves[0][d][0] + halves[1][d][0] for d in ("l>l'", "l'>l")}
        d = max(per, key=per.get)
        best = per[d]
        (_, up1, c1, v1, *_), (_, up2, c2, *_) = halves[0][d], halves[1][d]
        eps_lb = certified(best) if best > 0 else 0.0
        if c1 is not None and c2 is not None:
            event = (f"the output (first: {describe(c1, v1)}; second: {describe(c2)}) ({d}): "
                     f"exact loss, log at least {best:.6g} (the halves' "
                     f"{halves[0][d][0]:.6g} + {halves[1][d][0]:.6g})")
        else:
            event = "no output possible on the numerator side"
        how = ["every output" if up is not None else f"{count} sampled outputs"
               for up in (up1, up2)]
        notes.append(f"certified outputs: the first's over {how[0]}, the second's over {how[1]} "
                     f"(samples of the mechanism split into its halves, both directions each); "
                     f"the largest loss in a direction is the sum of the halves' largest, so the "
                     f"sum of their certified lower ends is a certificate for pure ε")
        details = {"samples": count, "direction": d, "enumerated": not self._sampled(),
                   "halves": [{"lower": halves[i][d][0], "pair_upper": halves[i][d][1],
                               "output": (describe(halves[i][d][2], halves[i][d][3])
                                          if halves[i][d][2] is not None else None)}
                              for i in range(2)]}
        shown = [(f"{'first' if i == 0 else 'second'}: {describe(h[2], h[3])}", h[4], h[5])
                 for i, h in enumerate((halves[0][d], halves[1][d]))
                 if h[2] is not None and h[4] is not None]
        if len(shown) == 2:
            # The output made of the two halves: its probability (density)
            # is their product, its loss the sum of theirs.
            both = ("the output (both halves)", [shown[0][1][0] + shown[1][1][0],
                                                 shown[0][1][1] + shown[1][1][1]],
                    [shown[0][2][0] + shown[1][2][0], shown[0][2][1] + shown[1][2][1]])
            rows = [both] + shown
            details["certified_outputs"] = top_outputs(
                lambda j: rows[j][0], [r[1][0] for r in rows], [r[1][1] for r in rows],
                [r[2][0] for r in rows], [r[2][1] for r in rows], d,
                measure="density" if model.first.numeric is not None else "probability")
        if up1 is not None and up2 is not None:
            details["pair_epsilon"] = [max(best, 0.0), max(halves[0][k][1] + halves[1][k][1]
                                                           for k in ("l>l'", "l'>l"))]
        return WhiteBoxResult(sc.label, "integral", "actions", eps_lb, claim.epsilon, what,
                              event, exact=True, details=details, notes=notes)
