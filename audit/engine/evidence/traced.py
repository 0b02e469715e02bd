"""The exact ε of a pair from the trace of the code's own continuous draws
(``algorithms.replay.paths``): what the ``replay`` mode reports for code
that draws Laplace, Gaussian, exponential or Gumbel noise.

Both inputs' paths are traced and confirmed by re-execution; then, by the
structure the trace found:

* one path whose outputs are affine in the noise (a release: statistic +
  noise, sums of noises): ``models.affine_release`` — the exact pure ε,
  ∞ where a Gaussian shift or a change no noise covers makes it so, and
  for Gaussian noise the exact ε at a claimed δ;
* paths whose outputs carry no noise (a sparse vector's answers, an
  argmax, a test): each output's probability is the sum of its paths',
  certified by ``models.comparisons``; the pair's ε is the largest
  certified log-ratio over the outputs (a lower end: exact to the
  brackets' width), and at a claimed δ > 0 the largest ε whose certified
  hockey-stick divergence still exceeds δ;
* noisy values rounded onto a grid: ``models.rounded_release`` — the
  largest certified log-ratio over the outputs tried, and for a rounded
  Gaussian release the Gaussian mechanism it dominates at a claimed δ;
  rounded values that combine several draws through an invertible map
  (rounded prefix sums of a continual counter): ``models.rounded_cells``;
* anything else is refused with the reason.

May import: numpy, ``algorithms.replay``, ``audit.engine.models``, ``audit.engine.words``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from algorithms.replay.noise import Rounded, grid_digits
from algorithms.replay.paths import traced_paths
from algorithms.replay.tracer import ReplayRefused
from audit.engine.models.affine_release import NotExact, release_loss
from audit.engine.models.comparisons import NotAStructure, law_of_paths, log_probability
from audit.engine.models.mixed_release import NotPinned, pair_density_epsilon
from audit.engine.models.rounded_cells import invertible
from audit.engine.models.rounded_release import (one_value_at_delta, pure_epsilon, separable,
                                                 single_release)
from audit.engine.words import NO_TRACE, output_part, round_code

# A traced structure's path probabilities must sum to 1 within this (log).
COVER = 1e-5


@dataclass
class TracedPair:
    epsilon: float              # exact (pure, or at the claimed δ) where ``exact``
    exact: bool
    structure: str              # what the trace recognised, in words
    event: str
    details: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


# Outputs with more parts than this are written as one sequence, repeats
# folded (a learner's 200 arms read "(0, 1)×88, 0×24", not 200 clauses).
MAX_PARTS_SHOWN = 12
MAX_SEGMENTS_SHOWN = 24     # of a folded sequence: beyond, its first and last ones


def _folded(values: list) -> list:
    """``values`` as segments: a value, or a unit of one or two values
    repeated three times or more, written ``unit×n``."""
    out, i = [], 0
    while i < len(values):
        best = (1, 1)
        for p in (1, 2):
            unit, n = values[i:i + p], 1
            while len(unit) == p and values[i + n * p:i + (n + 1) * p] == unit:
                n += 1
            if n >= 3 and n * p > best[0] * best[1]:
                best = (p, n)
        p, n = best
        if n >= 3:
            unit = values[i:i + p]
            out.append((f"({', '.join(map(str, unit))})" if p > 1 else str(unit[0])) + f"×{n}")
            i += p * n
        else:
            out.append(str(values[i]))
            i += 1
    return out


def output_words(labels: list, values) -> str:
    """One output of a trace in words: each part with its label, or, for
    more than ``MAX_PARTS_SHOWN`` parts, the first and last labels and the
    values as one sequence with its repeats folded."""
    values = list(values)
    if len(values) <= MAX_PARTS_SHOWN:
        return ", ".join(output_part(labels[j], v) for j, v in enumerate(values))
    first, last = labels[0], labels[len(values) - 1]
    if all(round_code(labels[j]) and isinstance(v, int) for j, v in enumerate(values)):
        # a learner's arms, 1-based as everywhere
        first, last = f"I_{round_code(first)}", f"I_{round_code(last)}"
        values = [v + 1 for v in values]
    parts = _folded(values)
    if len(parts) > MAX_SEGMENTS_SHOWN:     # a long stream's releases: its ends
        parts = parts[:MAX_SEGMENTS_SHOWN - 4] + [f"… {len(values):,} values in all …"] + parts[-4:]
    return f"{first} … {last} = [{', '.join(parts)}]"


def _affine(ps):
    p = ps.paths[0]
    idx = [j for j, o in enumerate(p.outputs) if isinstance(o, tuple)]
    A = np.array([p.outputs[j][1] for j in idx])
    b = np.array([p.outputs[j][0] for j in idx])
    return p, idx, A, b


def _release(psa, psb, labels, delta: float) -> TracedPair:
    pa, ia, Aa, ba = _affine(psa)
    pb, ib, Ab, bb = _affine(psb)
    if len(pa.outputs) != len(pb.outputs):
        return TracedPair(math.inf, True, "a release of outputs of different lengths",
                          f"the output has {len(pa.outputs)} elements on ℓ and "
                          f"{len(pb.outputs)} on ℓ′, whatever the draws", {"structure": "release"})
    if ia != ib or pa.laws != pb.laws:
        raise NotExact("the release's noisy elements or their laws differ between the inputs")
    fixed = [j for j in range(len(pa.outputs)) if j not in ia]
    differ = [j for j in fixed if pa.outputs[j] != pb.outputs[j]]
    structure = (f"a release affine in {len(pa.laws)} noise draw(s) "
                 f"({', '.join(sorted(set(pa.laws)))}) over {len(ia)} output element(s)")
    if differ:
        j = differ[0]
        return TracedPair(math.inf, True, structure,
                          f"{labels[j]} carries no noise and differs: {pa.outputs[j]} vs "
                          f"{pb.outputs[j]}", {"structure": "release"})
    V = max(Aa.shape[1], Ab.shape[1])
    Aa, Ab = (np.hstack([M, np.zeros((M.shape[0], V - M.shape[1]))]) for M in (Aa, Ab))
    loss = release_loss(pa.laws, Aa, ba, Ab, bb)
    eps = loss.epsilon_at(delta) if delta else loss.epsilon
    exact = True
    notes = [f"{loss.why}"]
    if delta and loss.mu is None and math.isfinite(loss.epsilon):
        notes.append(f"pure ε of the release is {loss.epsilon:.6g}, an upper bound at any δ; "
                     f"with δ > 0 no lower bound is claimed")
        eps, exact = 0.0, False
    shown = ", ".join(f"{c:+.4g}·{labels[ia[k]]}" for k, c in enumerate(loss.direction)
                      if abs(c) > 1e-12)
    if not math.isfinite(loss.epsilon) and loss.mu is None:
        event = (f"the release's projection {shown or 'y'} differs by {loss.shift:.6g} between "
                 f"the inputs, with noise that cannot cover it: exact ε ∞")
    elif loss.mu is not None:
        event = (f"Gaussian release, μ = {loss.mu:.6g} along {shown or 'y'}: pure ε ∞"
                 + (f", exact ε at δ = {delta:g}: {eps:.6g}" if delta else ""))
    else:
        event = (f"the projection {shown or 'y'} far in its tail (shift {loss.shift:.6g} in "
                 f"noise scales): exact ε {loss.epsilon:.6g}, approached there")
    details = {"structure": "release", "laws": list(pa.laws), "pure_epsilon": loss.epsilon,
               "mu": loss.mu, "direction": loss.direction}
    return TracedPair(eps, exact, structure, event, details, notes)


def _hockey(la: dict, lb: dict, eps: float, missing: dict) -> float:
    """A certified lower end of max over directions of Σ_o (P(o) − e^ε P′(o))⁺."""
    best = 0.0
    for x, y in ((la, lb), (lb, la)):
        s = 0.0
        for o, (lo, _) in x.items():
            hi = y.get(o, (-np.inf, missing[id(y)]))[1]
            s += max(0.0, math.exp(lo) - math.exp(eps + hi) if hi > -np.inf else math.exp(lo))
        best = max(best, s)
    return best


def _covered(brackets, side: str) -> float:
    """The traced paths' certified (lo, hi) log-probabilities must sum to 1
    (within ``COVER``), or ``NotAStructure``; returns ln of what the certified
    total leaves of 1 (−∞ if nothing): an output no traced path gives has at
    most that probability."""
    lo = np.logaddexp.reduce([b[0] for b in brackets])
    hi = np.logaddexp.reduce([b[1] for b in brackets])
    if hi < -COVER or lo > COVER:
        raise NotAStructure(f"the traced paths on {side} have total probability in "
                            f"[{math.exp(lo):.9g}, {math.exp(hi):.9g}], not 1")
    return math.log(-math.expm1(lo)) if lo < 0 else -math.inf


def _discrete(psa, psb, labels, delta: float) -> TracedPair:
    key = (lambda p: p.discrete())
    la, lb = law_of_paths(psa.paths, key), law_of_paths(psb.paths, key)
    missing = {id(law): _covered(law.values(), side) for law, side in ((la, "ℓ"), (lb, "ℓ′"))}
    best, pick = -math.inf, None
    for d, (x, y) in (("l>l'", (la, lb)), ("l'>l", (lb, la))):
        for o, (lo, _) in x.items():
            absent = o not in y
            hi = missing[id(y)] if absent else y[o][1]
            r = lo - hi if hi > -np.inf else math.inf
            if r > best:
                best, pick = r, (d, o, lo, hi, absent)
    d, o, lo, hi, absent = pick
    structure = (f"comparisons of noisy values: {len(psa.paths)} and {len(psb.paths)} paths, "
                 f"{len(la)} and {len(lb)} distinct outputs")
    what = output_words(labels, o)
    eps, exact, notes = max(0.0, best), True, []
    other = (f"at most {_p(hi, 3)} (no traced path gives it)" if absent else _p(hi))
    event = (f"the output {what} ({d}): P {_p(lo)} vs {other}, exact log-ratio "
             f"{'∞' if not math.isfinite(best) else f'{best:.6g}'} (certified lower end)")
    if delta:
        if _hockey(la, lb, 0.0, missing) <= delta:
            eps = 0.0
        else:
            a, b = 0.0, (best if math.isfinite(best) else 60.0)
            if _hockey(la, lb, b, missing) > delta:
                eps = b
            else:
                for _ in range(60):
                    m = (a + b) / 2
                    a, b = (m, b) if _hockey(la, lb, m, missing) > delta else (a, m)
                eps = a
        notes.append(f"at δ = {delta:g}: the largest ε whose certified hockey-stick divergence "
                     f"over all outputs still exceeds δ")
    details = {"structure": "comparisons", "paths": [len(psa.paths), len(psb.paths)],
               "outputs": [len(la), len(lb)], "direction": d,
               "best_output": {"values": list(o), "p": math.exp(lo),
                               "p_other": math.exp(hi) if hi > -np.inf else 0.0}}
    return TracedPair(eps, exact, structure, event, details, notes)


def _mixed(psa, psb, labels, delta: float, quick: bool = False) -> TracedPair:
    """Paths some of which release noisy values (``models.mixed_release``):
    the atoms' certified log-ratios and the released values' certified
    density ratios at the points tried; pure ε only.  ``quick``: the fewer
    points an optimiser's objective affords."""
    # every path's probability, to check that they cover the draws — first:
    # comparisons not evaluated exactly refuse here, before the densities'
    # hundreds of integrals (an optimiser evaluates many pairs)
    for ps, side in ((psa, "ℓ"), (psb, "ℓ′")):
        _covered([log_probability(p.laws, p.A, p.c) for p in ps.paths], side)
    try:
        got = pair_density_epsilon(psa.paths, psb.paths, quick)
    except NotPinned as why:
        raise NotExact(str(why)) from None
    atoms = None
    plain_a = [p for p in psa.paths if not p.noisy_outputs]
    plain_b = [p for p in psb.paths if not p.noisy_outputs]
    if plain_a or plain_b:
        key = (lambda p: p.discrete())
        la, lb = law_of_paths(plain_a, key), law_of_paths(plain_b, key)
        for d, (x, y) in (("l>l'", (la, lb)), ("l'>l", (lb, la))):
            for o, (lo, _) in x.items():
                if o in y and lo - y[o][1] > (atoms[0] if atoms else 0.0):
                    atoms = (lo - y[o][1], d, o, lo, y[o][1])
    structure = (f"comparisons of noisy values releasing noisy values on some paths: "
                 f"{len(psa.paths)} and {len(psb.paths)} paths")
    notes = ["released values: the density ratio at the values tried (each path's own, and a "
             "grid along each value's noise scale), a lower bound on pure ε"]
    eps, exact = got[0], True
    if atoms is not None and atoms[0] > eps:
        r, d, o, lo, hi = atoms
        what = output_words(labels, o)
        event = (f"the output {what} ({d}): P {_p(lo)} vs {_p(hi)}, exact "
                 f"log-ratio {r:.6g} (certified lower end)")
        eps = r
    elif got[1] is not None:
        r, d, g, y, lo, hi = got
        it = iter(np.atleast_1d(y).tolist())
        what = ", ".join(f"{labels[j]} = {v if v is not None else format(next(it), '.6g')}"
                         for j, v in enumerate(g[0]))
        event = (f"the output {what} ({d}): exact density ratio, log {r:.6g} (certified lower "
                 f"end)")
    else:
        event = "no released value or atom is likelier on one side at the points tried"
    if delta:
        notes.append("with δ > 0 a density ratio proves nothing: no bound is claimed")
        eps, exact = 0.0, False
    details = {"structure": "comparisons+releases", "paths": [len(psa.paths), len(psb.paths)]}
    return TracedPair(max(0.0, eps), exact, structure, event, details, notes)


def _grid_words(values, rounding_of) -> list:
    """The output's values, each rounded one with its grid's decimals (a
    grid the code scaled or shifted: six significant digits)."""
    out = []
    for j, v in enumerate(values):
        os = rounding_of.get(j, ())
        if not os or not isinstance(v, (int, float)) or isinstance(v, bool):
            out.append(v)
        elif any(o.mapped for o in os):
            out.append(f"{v + 0.0:.6g}")
        else:
            out.append(f"{v + 0.0:.{max(0, max(grid_digits(o.step) for o in os))}f}")
    return out


def _rounded(psa, psb, labels, delta: float, quick: bool = False) -> TracedPair:
    """Paths that release rounded noisy values (``models.rounded_release``)."""
    if any(p.noisy_outputs for ps in (psa, psb) for p in ps.paths):
        raise NotExact("the code releases some noisy values rounded and others unrounded")
    missing = [_covered([log_probability(p.laws, p.A, p.c) for p in ps.paths], side)
               for ps, side in ((psa, "ℓ"), (psb, "ℓ′"))]
    structure = (f"noisy values rounded onto a grid: {len(psa.paths)} and {len(psb.paths)} "
                 f"path(s)")
    single = (single_release(psa.paths[0], psb.paths[0], delta)
              if len(psa.paths) == 1 and len(psb.paths) == 1 else None)
    notes = ["rounded values: the probability of a grid value is that of its noisy form "
             "falling in the interval that rounds to it (its ends moved by a relative 1e-8 "
             "for the code's own floating-point rounding)"]
    details = {"structure": "rounded", "paths": [len(psa.paths), len(psb.paths)]}
    if single is not None:
        notes += single.notes
        if single.upper is not None and math.isfinite(single.upper):
            details["upper"] = single.upper
            notes.append(f"the unrounded release's exact ε{f' at δ = {delta:g}' if delta else ''}, "
                         f"{single.upper:.6g}, is an upper bound (rounding is post-processing)")
    mu = single.mu if single is not None else None
    if mu is not None:
        details["mu"] = mu
    if delta:
        one = one_value_at_delta(psa.paths[0], psb.paths[0], delta) if single is not None \
            else None
        if one is not None and (mu is None or one.epsilon >= single.epsilon):
            notes += one.notes
            event = (f"the rounded value's grid: exact ε at δ = {delta:g} at least "
                     f"{one.epsilon:.6g} (certified hockey-stick divergence)")
            return TracedPair(one.epsilon, True, structure, event, details, notes)
        if mu is not None:
            event = (f"rounded Gaussian release, at least the Gaussian mechanism of μ′ = "
                     f"{mu:.6g}: exact ε at δ = {delta:g} at least {single.epsilon:.6g}")
            return TracedPair(single.epsilon, True, structure, event, details, notes)
        notes.append("with δ > 0 only rounded Gaussian releases and one rounded value on one "
                     "path are bounded: no bound is claimed")
        return TracedPair(0.0, False, structure, "no bound at δ > 0 for this rounded release",
                          details, notes)
    if mu is not None:
        event = (f"rounded Gaussian release, at least the Gaussian mechanism of μ′ = {mu:.6g}: "
                 f"pure ε ∞ (its privacy loss is unbounded)")
        return TracedPair(math.inf, True, structure, event, details, notes)
    found = separable(psa.paths[0], psb.paths[0]) if single is not None else None
    if found is None and single is not None:
        found = invertible(psa.paths[0], psb.paths[0])
        if found is not None:
            notes.append("the rounded values combine several draws through an invertible map: "
                         "an output's probability is the noise's density integrated over the "
                         "box of values that round to it (certified ends)")
    if found is None:
        try:
            found = pure_epsilon(psa.paths, psb.paths, *missing, quick=quick)
        except NotAStructure as why:
            raise NotAStructure(f"a rounded value's interval with the path's comparisons is not "
                                f"evaluated exactly: {why} (a rounded value whose form combines "
                                f"several draws, e.g. rounded prefix sums of noise)") from None
    if found.epsilon == -math.inf:
        raise NotExact("no rounded output was evaluated")
    rounding_of: dict = {}
    for p in psa.paths + psb.paths:
        for j, o in enumerate(p.outputs):
            if isinstance(o, Rounded):
                rounding_of.setdefault(j, []).append(o)
    what = output_words(labels, _grid_words(found.values, rounding_of))
    r = found.epsilon
    shown = [_p(lg) if lg is not None else f"{v:.6g}"
             for lg, v in ((found.log_p, found.p), (found.log_p_other, found.p_other))]
    event = (f"the output {what} ({found.direction}): P {shown[0]} vs {shown[1]}, "
             f"exact log-ratio {'∞' if not math.isfinite(r) else f'{r:.6g}'} (certified lower "
             f"end)")
    notes.append("the figure is the largest certified log-ratio over the rounded outputs tried "
                 "(each path's own, each rounded value moved along its noise's scale): a lower "
                 "bound on pure ε")
    details.update(direction=found.direction,
                   best_output={"values": list(found.values), "p": found.p,
                                "p_other": found.p_other})
    return TracedPair(max(0.0, r), True, structure, event, details, notes)


def traced_pair(alg, a, b, scope: str, delta: float = 0.0, confirmed: bool = True,
                quick: bool = False) -> TracedPair:
    """The pair's exact ε from the trace (module docstring); ReplayRefused
    (or NotExact / NotAStructure) where it is not computed.  ``quick``: the
    smaller search over rounded outputs an optimiser's objective affords."""
    psa = traced_paths(alg, a, scope, confirmed)
    psb = traced_paths(alg, b, scope, confirmed)
    labels = max(psa.labels, psb.labels, key=len)
    noisy = [p.noisy_outputs for ps in (psa, psb) for p in ps.paths]
    if any(p.rounded_outputs for ps in (psa, psb) for p in ps.paths):
        got = _rounded(psa, psb, labels, delta, quick)
    elif any(noisy):
        if len(psa.paths) == 1 and len(psb.paths) == 1:
            got = _release(psa, psb, labels, delta)
        else:
            got = _mixed(psa, psb, labels, delta, quick)
    else:
        got = _discrete(psa, psb, labels, delta)
    got.details["runs"] = [psa.runs, psb.runs]
    got.details["reexecuted"] = [psa.reexecuted, psb.reexecuted]
    return got


def _p(log_p: float, digits: int = 6) -> str:
    """A probability from its logarithm, as shown: below the smallest double
    it is written as a power of e (not 0 beside a finite log-ratio)."""
    if log_p == -math.inf:
        return "0"
    p = math.exp(log_p)
    return f"{p:.{digits}g}" if p > 0 else f"e^{log_p:.{digits}g}"


def traced_result(sc, claim, a, b, scope: str, what: str):
    """The ``replay`` mode's result for code that draws continuous noise."""
    from audit.engine.evidence.whitebox import WhiteBoxResult
    from audit.engine.models.comparisons import SLACK
    from algorithms.replay.tracer import generator_states, kept_generator_drew
    alg = sc.algorithm
    try:
        before = generator_states()
        got = traced_pair(alg, a, b, scope, claim.delta or 0.0)
        if kept_generator_drew(before):
            raise ReplayRefused("a numpy generator the code keeps drew during the trace: "
                                "randomness the trace does not choose")
    except (ReplayRefused, NotExact, NotAStructure, ArithmeticError, AssertionError) as why:
        # (an integration that cannot certify its bracket refuses too)
        return WhiteBoxResult(
            sc.label, "replay", scope, 0.0, claim.epsilon, what,
            f"{NO_TRACE}{why}", exact=False,
            notes=[f"the code's continuous draws could not be traced exactly ({why}); nothing "
                   f"is claimed"])
    eps = got.epsilon
    if math.isfinite(eps) and got.details.get("structure") in ("release", "rounded"):
        eps = max(0.0, eps * (1 - 1e-9) - 1e-12)      # the LP's, lstsq's and brentq's rounding
    runs, checks = got.details["runs"], got.details["reexecuted"]
    notes = [f"exact loss from tracing the code's own continuous draws: {got.structure}; "
             f"paths found by {runs[0]} and {runs[1]} traced runs",
             f"confirmed by re-executing the unmodified code on plain values at "
             f"{checks[0]:,} and {checks[1]:,} points (draws from the noise laws and points "
             f"spread inside every path): every one fell on one traced path and gave its "
             f"outputs"] + got.notes
    if got.details.get("structure") == "comparisons":
        notes.append(f"path probabilities are certified integrals (relative slack {SLACK:g}); "
                     f"the figure is the lower end of the largest log-ratio's bracket")
    result = WhiteBoxResult(sc.label, "replay", scope, eps, claim.epsilon, what, got.event,
                            exact=got.exact, details=got.details, notes=notes)
    result.rests_on = ("trace",) if got.exact else ()
    return result
