"""Integral evidence (exact) for report-noisy-max
(``algorithms.noisy_max_model``): the ``integral`` mode on a mechanism
that declares a ``NoisyMaxModel``.

* The index: every output (K a round) is enumerated on both sides, each
  probability a certified integral (``exact.index_log_probability``).  The
  rounds are independent, so the pair's exact ε is, per direction, the sum
  over rounds of the largest certified lower end of ln P_ℓ(i) − ln P_ℓ′(i)
  (attained by the output made of each round's best index); the largest
  over directions is the pair's exact ε, a certificate for pure ε with no
  sampling.  With δ > 0 the certified δ(ε) is summed over every output
  when there are at most 2^14 of them (K^T).
* The value: its density is a closed form (``exact.value_log_density``).
  The outputs certified are, per round, a fixed grid of values across the
  support (``VALUE_GRID`` points reaching 45 scales beyond the answers) and
  the values sampled on each side (``NUMERIC_SAMPLES`` a side, streams of
  their own): the densities are continuous where positive, so the largest
  certified lower end of a density ratio is a certificate for pure ε (the
  ratio exceeds it on a set of positive probability).  With exponential
  noise the maxima start at M = max q: when M < M′ the set [M, M′) has
  probability Π_j F(M′ − q_j) > 0 on ℓ and 0 on ℓ′, so ε = ∞ (the code
  produces those outputs on ℓ; certified by ``exact.edge_log_probability``).
  With δ > 0 one output proves nothing: no bound is claimed.

Which outputs are certified is chosen before or apart from the bound
(a grid, or samples whose only role is to choose): no α share.  The output
is the mechanism's own (the index or the value), so the result decides a
verdict.

May import: ``algorithms``, ``audit.engine.models.noisy_max``,
``audit.engine.models.pair_loss``, ``audit.engine.privacy_loss``,
``audit.engine.sampling``, ``audit.engine.evidence``.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from algorithms.simulate import simulate
from audit.engine.evidence.base import Evidence
from audit.engine.evidence.whitebox import WhiteBoxResult
from audit.engine.models.noisy_max.exact import (VALUE_GRID, index_pair, index_pair_epsilon,
                                                 value_log_density, value_pair_epsilon)
from audit.engine.models.noisy_max.verify import noisy_max_of
from audit.engine.models.pair_loss import delta_lower, epsilon_at_delta, top_outputs
from audit.engine.privacy_loss import certified
from audit.engine.sampling import Request

# Streams of the sampled values (black-box sides: 0, 1; pld: 7, 8; the
# sparse vector's sampled outputs use the same numbers on other scenarios).
VALUE_STREAMS = {"l>l'": 11, "l'>l": 12}
NUMERIC_SAMPLES = 500
ENUMERATION_LIMIT = 2 ** 14


def rounds_of(sc):
    """The answers of each simulated round on both sides: (a, b), each (T, K)."""
    return (np.asarray(sc.losses_a[:sc.rounds], dtype=float),
            np.asarray(sc.losses_b[:sc.rounds], dtype=float))


class NoisyMaxEvidence(Evidence):
    kind = "integral"

    @property
    def phase(self) -> str:
        return f"white-box integral {self.scenario.label}"

    def requests(self, trials: int) -> list[Request]:
        sc = self.scenario
        model = noisy_max_of(sc.algorithm)
        if model.report == "index":
            return []
        n = int(min(trials, NUMERIC_SAMPLES))
        return [Request(_value_task(sc.algorithm, sc.losses_a if d == "l>l'" else sc.losses_b,
                                    sc.rounds), n, (self.index, stream), "integral-values",
                        chunk=2000)
                for d, stream in VALUE_STREAMS.items()]

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        sc, claim = self.scenario, self.claim
        model = noisy_max_of(sc.algorithm)
        a, b = rounds_of(sc)
        notes = [f"declared report-noisy-max: {model.noise} noise of scale {model.scale:.4g} on "
                 f"each of {a.shape[1]} answers, reporting the {model.report}"]
        if model.report == "index":
            eps_lb, event, details = self._index(a, b, notes)
        else:
            eps_lb, event, details = self._value(samples, a, b, notes)
        what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
        return WhiteBoxResult(sc.label, "integral", "actions", eps_lb, claim.epsilon, what,
                              event, exact=True, details=details, notes=notes)

    def _index(self, a, b, notes):
        claim, model = self.claim, noisy_max_of(self.scenario.algorithm)
        T, K = a.shape
        dirs, (lo_a, hi_a, lo_b, hi_b) = index_pair(model, a, b)
        for side, lo, hi in (("ℓ", lo_a, hi_a), ("ℓ′", lo_b, hi_b)):
            tot_lo, tot_hi = np.exp(lo).sum(axis=1), np.exp(hi).sum(axis=1)
            if not (np.all(tot_lo <= 1 + 1e-9) and np.all(tot_hi >= 1 - 1e-9)):
                raise AssertionError(f"report-noisy-max probabilities on {side} do not bracket "
                                     f"a total of 1: [{tot_lo}, {tot_hi}]")
        best, top, best_dir, idx = index_pair_epsilon(model, a, b)
        output = ", ".join(f"index {int(i) + 1}" for i in idx) if idx is not None else "-"
        notes.append(f"all {K} outputs of each of the {T} round(s) enumerated, each probability "
                     f"a certified integral (total on ℓ in [{np.exp(lo_a).sum():.12g}, "
                     f"{np.exp(hi_a).sum():.12g}])")
        notes.append(f"the pair's exact ε over all outputs is in [{max(best, 0):.6g}, {top:.6g}]:"
                     f" no audit of this pair can show more")
        details = {"outputs": int(K ** T) if K ** T < 2 ** 62 else None, "enumerated": True,
                   "pair_epsilon": [max(best, 0.0), top], "direction": best_dir,
                   "probabilities": {"l": np.exp((lo_a + hi_a) / 2).tolist(),
                                     "l_prime": np.exp((lo_b + hi_b) / 2).tolist()},
                   "loss": {d: [low.tolist(), high.tolist()] for d, (low, high) in dirs.items()}}
        shown_dir = best_dir or "l>l'"
        num, den = (((lo_a, hi_a), (lo_b, hi_b)) if shown_dir == "l>l'"
                    else ((lo_b, hi_b), (lo_a, hi_a)))
        details["certified_outputs"] = top_outputs(
            lambda j: (f"index {j % K + 1}" if T == 1 else f"round {j // K + 1}: index "
                       f"{j % K + 1}"), *num, *den, shown_dir, k=min(8, T * K))
        if claim.delta == 0:
            eps_lb = certified(best) if best > 0 else 0.0
            event = (f"the output {output} ({best_dir}): exact loss in [{best:.6g}, "
                     f"{top:.6g}]" if best_dir is not None else "no output")
            return eps_lb, event, details
        if K ** T > ENUMERATION_LIMIT:
            notes.append(f"{K}^{T} outputs, more than the {ENUMERATION_LIMIT} enumerated for "
                         f"δ(ε): no bound is claimed at δ > 0")
            return 0.0, "no bound at δ > 0 (too many outputs)", details
        # Every output sequence's probability, the rounds being independent.
        seqs = np.array(list(itertools.product(range(K), repeat=T)))
        rows = np.arange(T)[None, :]
        la, ha = lo_a[rows, seqs].sum(axis=1), hi_a[rows, seqs].sum(axis=1)
        lb, hb = lo_b[rows, seqs].sum(axis=1), hi_b[rows, seqs].sum(axis=1)
        per = {"l>l'": epsilon_at_delta(la, hb, claim.delta),
               "l'>l": epsilon_at_delta(lb, ha, claim.delta)}
        d = max(per, key=per.get)
        details["delta_lower_at_claimed_epsilon"] = max(delta_lower(la, hb, claim.epsilon),
                                                        delta_lower(lb, ha, claim.epsilon))
        return (certified(per[d]) if per[d] > 0 else 0.0,
                f"δ(ε) summed over all {len(seqs)} outputs ({d}): certified δ_lb(ε) > δ = "
                f"{claim.delta:g} up to ε = {per[d]:.6g}", details)

    def _value(self, samples, a, b, notes):
        claim, model = self.claim, noisy_max_of(self.scenario.algorithm)
        T = a.shape[0]
        drawn = [np.concatenate([np.concatenate(parts) for parts in samples])[:, t]
                 for t in range(T)] if samples else None
        count = sum(len(np.concatenate(parts)) for parts in samples) if samples else 0
        best, d, where = value_pair_epsilon(model, a, b, drawn)
        notes.append(f"reported values certified per round: a grid of {VALUE_GRID} across the "
                     f"support and {count} sampled values (both directions); each density is "
                     f"a closed form bracketed for rounding, so the largest certified ratio is "
                     f"a certificate" + ("" if claim.delta == 0 else
                                          " for pure ε only: with δ > 0 one output proves "
                                          "nothing, so no bound is claimed"))
        eps_lb = (certified(best) if best > 0 else 0.0) if claim.delta == 0 else 0.0
        shown = "; ".join(f"round {t + 1}: {w}" for t, w in enumerate(where) if w)
        if best == math.inf:
            event = f"{shown} ({d}): possible on one side only, loss ∞"
        elif best > -math.inf:
            event = (f"the reported maximum at {shown} ({d}): exact density ratio, log at least "
                     f"{best:.6g}")
        else:
            event = "no output"
        details = {"samples": count, "grid": VALUE_GRID, "direction": d,
                   "enumerated": False, "best_loss": best}
        # Each round's certifying value, its density bracketed on both sides.
        ys = []
        for t, w in enumerate(where):
            try:
                ys.append((t, float(w)))
            except (TypeError, ValueError):
                pass                        # the support edge (∞) or no output
        if ys and d is not None:
            num, den = (a, b) if d == "l>l'" else (b, a)
            br = [value_log_density(model, num[t], [y]) + value_log_density(model, den[t], [y])
                  for t, y in ys]
            details["certified_outputs"] = top_outputs(
                lambda j: (f"maximum {ys[j][1]:.4g}" if T == 1
                           else f"round {ys[j][0] + 1}: maximum {ys[j][1]:.4g}"),
                *(np.array([float(x[i][0]) for x in br]) for i in range(4)), d,
                measure="density")
        return eps_lb, event, details


def _value_task(alg, losses, rounds):
    def task(runs, rng):
        tr = simulate(alg, losses, runs, rng, rounds=rounds, point_rounds=range(rounds))
        return np.stack([tr.points[t][:, 0] for t in range(rounds)], axis=1)
    return task
