"""Run the white-box modes for a scenario and judge them against the claim:
per-round curves only against a per-round claim, search certificates and
loss distributions in both directions of the pair, δ > 0 through
probability mass.  Imports ``algorithms`` and ``audit.whitebox``/``simulate``."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from algorithms.core import Claim
from .simulate import run_chunks, simulate
from .whitebox import (LossDistribution, certified, action_loss, per_round_curve, scope_of,
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
    # Shown for information only, never a verdict (a per-round curve without
    # a per-round claim: a conditional ratio can approach 2ε for an ε-DP algorithm).
    informational: bool = False

    @property
    def violation(self) -> bool:
        return not self.informational and exceeds(self.epsilon_lower_bound, self.claim_value)

    @property
    def per_record_lower_bound(self) -> float:
        return self.epsilon_lower_bound if self.counts_toward_total else 0.0

    def as_dict(self) -> dict:
        verdict = ("information" if self.informational
                   else "violation" if self.violation else "consistent")
        return {"name": self.attack, "scenario": f"{self.attack}:{self.kind}", "mode": "white-box",
                "kind": self.kind, "scope": self.scope,
                "epsilon_lower_bound": self.epsilon_lower_bound,
                "claim_compared": {"value": self.claim_value, "what": self.claim_label},
                "verdict": verdict,
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


# Stream tags of the loss-distribution samples, one per direction (the
# black-box sides use 0 and 1, the declaration pilots their own family).
PLD_STREAMS = {"l>l'": 7, "l'>l": 8}
SWAPPED = "l'>l"


def _pld_samples(alg, sc, trials, seed, jobs, index, direction, executor=None, progress=None):
    """Exact losses of outputs sampled on the numerator side of ``direction``."""
    scope = scope_of(alg)
    num, den = (sc.losses_a, sc.losses_b) if direction == "l>l'" else (sc.losses_b, sc.losses_a)
    if scope == "transcript":
        n = trials

        def task(runs, rng):
            tr = simulate(alg, num, runs, rng, advice=sc.advice, rounds=sc.rounds,
                          record_transcript=True)
            return transcript_loss(alg, num, den, tr, sc.advice)
    else:
        # Replaying a history costs a Python step per round; keep ~3·10^7 row-rounds.
        n = int(min(trials, max(500, 3e7 // sc.rounds)))

        def task(runs, rng):
            tr = simulate(alg, num, runs, rng, advice=sc.advice, rounds=sc.rounds)
            return action_loss(alg, num[:sc.rounds], den[:sc.rounds],
                               tr.actions.astype(np.int64), sc.advice)
    tag = f"pld-{scope}" + ("" if direction == "l>l'" else "-reverse")
    from .progress import active
    with (progress or active()).phase(f"white-box pld {sc.label} ({direction})", n,
                                      "samples") as phase:
        parts = run_chunks(task, n, [seed, index, PLD_STREAMS[direction]], jobs=jobs, chunk=5000,
                           executor=executor, tag=tag, progress=phase.to)
    return np.concatenate(parts), scope


def _per_round(sc, alg, claim: Claim) -> WhiteBoxResult:
    curve = per_round_curve(alg, sc.losses_a, sc.losses_b, sc.history, sc.history_label, claim)
    worst = int(np.argmax(curve.epsilon_t))
    judged = claim.per_round_epsilon is not None and claim.delta == 0
    first = curve.first_exceeding if judged else None
    details = {"history": sc.history_label, "horizon": int(curve.epsilon_t.size),
               "first_round_exceeding_claim": first,
               "final_p_arm2": [float(curve.p_a[-1, -1]), float(curve.p_b[-1, -1])],
               "epsilon_t": _downsample(curve.epsilon_t),
               "p_arm2": _downsample(curve.p_a[:, -1]),
               "p_prime_arm2": _downsample(curve.p_b[:, -1])}
    event = (f"round {worst + 1} of the history '{sc.history_label}': "
             f"max_i |ln P_t(i) − ln P′_t(i)| = {curve.epsilon_t[worst]:.4g}")
    if judged:
        value = claim.per_round_epsilon
        notes = [f"along the history both sides' action distributions are replayed exactly; "
                 f"ε_t first exceeds {value:g} at round {first}" if first else
                 "ε_t stays below the per-round claim along this history"]
        return WhiteBoxResult(sc.label, "per-round", "per-round", certified(curve.epsilon_t[worst]),
                              value, "per-round claim ε_t", event, exact=True,
                              counts_toward_total=False, details=details, notes=notes)
    why = ("the claim has no per-round part" if claim.per_round_epsilon is None
           else "a per-round claim with δ > 0 has no per-round δ to compare with")
    notes = [f"information only ({why}): ε_t is the log-ratio of the action distributions "
             f"at round t given one fixed history, a conditional ratio that can approach 2ε "
             f"for an ε-DP algorithm, so it is never compared with the total claim"]
    return WhiteBoxResult(sc.label, "per-round", "per-round", certified(curve.epsilon_t[worst]),
                          math.inf, "no per-round claim", event, exact=True,
                          counts_toward_total=False, details=details, notes=notes,
                          informational=True)


def _search(sc, alg, claim: Claim) -> WhiteBoxResult:
    certs = search_worst_output(alg, sc.losses_a, sc.losses_b, claim, sc.advice)
    # The certificate that refutes the claim by the widest margin, else the
    # one with the largest bound.
    best = max(certs, key=lambda c: (c.violation, c.epsilon_lower_bound - c.claim_at_horizon
                                     if c.violation else c.epsilon_lower_bound))
    composed = claim.per_round_epsilon is not None and claim.delta == 0
    if composed and best.claim_at_horizon < claim.epsilon:
        what = f"composed claim ε_t·T′ = {claim.per_round_epsilon:g}·{best.horizon}"
    else:
        what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
    sides = "P_ℓ(x), P_ℓ′(x)" if best.direction == "l>l'" else "P_ℓ′(x), P_ℓ(x)"
    if claim.delta == 0:
        note = ("L(x) = ln P(x) − ln P′(x) is exact: the event {x} refutes any pure ε-DP claim "
                "with ε < L(x), with no statistical error")
    else:
        note = (f"with δ = {claim.delta:g} the event {{x}} counts through its mass: ε_lb = "
                f"ln((P(x) − δ)/P′(x)) with the exact ({sides}) = (e^{best.log_p_num:.4g}, "
                f"e^{best.log_p_den:.4g}); 0 when P(x) ≤ δ")
    return WhiteBoxResult(
        sc.label, "search", "actions", best.epsilon_lower_bound, best.claim_at_horizon, what,
        f"the single output x = {best.description} ({best.direction}); first actions "
        f"{' '.join(map(str, best.actions_head))} …", exact=True,
        details={"certificate": best.description, "direction": best.direction,
                 "length": best.horizon, "loss": best.loss,
                 "log_p_numerator": best.log_p_num, "log_p_denominator": best.log_p_den,
                 "actions_head": best.actions_head,
                 "cumulative_loss": _downsample(best.curve),
                 "directions": {c.direction: {"loss": c.loss, "length": c.horizon,
                                              "epsilon_lower_bound": c.epsilon_lower_bound,
                                              "claim_at_length": c.claim_at_horizon,
                                              "certificate": c.description} for c in certs}},
        notes=[note])


def _pld(sc, alg, claim: Claim, alpha, trials, seed, jobs, index, executor,
         progress=None) -> WhiteBoxResult:
    per_dir, scope = {}, None
    for direction in PLD_STREAMS:
        L, scope = _pld_samples(alg, sc, trials, seed, jobs, index, direction, executor,
                                progress)
        band = math.sqrt(math.log(1 / alpha) / (2 * L.size))  # one-sided DKW (Massart)
        per_dir[direction] = LossDistribution(L, alpha, band, scope)
    # Report the direction whose distribution gives the larger bound.
    bounds = {d: max(0.0, certified(p.epsilon_lower_bound(claim.delta)))
              for d, p in per_dir.items()}
    direction = max(bounds, key=lambda d: (bounds[d], float(per_dir[d].losses.max())))
    pld = per_dir[direction]
    L = pld.losses
    eps_lb, exact = bounds[direction], False
    top_dir = max(per_dir, key=lambda d: float(per_dir[d].losses.max()))
    top = float(per_dir[top_dir].losses.max())
    notes = []
    if claim.delta == 0 and certified(top) > eps_lb:
        # Pure ε: every sampled output is an event of positive probability
        # whose exact loss ε must cover, so the largest one is a certificate.
        eps_lb, exact = certified(top), True
        notes.append(f"largest sampled exact loss {top:.6g} ({top_dir}): a certificate for "
                     f"pure ε-DP (ε ≥ {top:.6g}, no statistical error)")
    else:
        notes.append(f"largest sampled exact loss {top:.6g}" +
                     (" (with δ > 0 one output proves nothing; the bound comes from δ(ε))"
                      if claim.delta else ""))
    notes.append("δ(ε) = E[(1 − e^(ε−L))₊] is bounded below simultaneously for every ε by a "
                 "one-sided DKW band on the distribution of L, in each direction")
    d_lo = pld.delta_lower(claim.epsilon)
    hist, edges = np.histogram(L, bins=60)
    hi = max(float(L.max()), 1e-9)
    grid = np.unique(np.append(np.linspace(0, 1.1 * hi, 40),
                               claim.epsilon if claim.epsilon <= 10 * hi else []))
    return WhiteBoxResult(
        sc.label, "pld", scope, eps_lb, claim.epsilon,
        "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else ""),
        f"privacy-loss distribution of {L.size} outputs sampled on "
        f"{'ℓ′' if direction == SWAPPED else 'ℓ'} "
        f"({'actions' if scope == 'actions' else 'actions + released noisy values'})",
        exact=exact,
        details={"counts": {"samples": int(L.size)},
                 "bounds": {"dkw_band": pld.band, "alpha": alpha,
                            "delta_lower_at_claimed_epsilon": d_lo,
                            "delta_point_at_claimed_epsilon": pld.delta_point(claim.epsilon)},
                 "direction": direction,
                 "directions": {d: {"samples": int(p.losses.size),
                                    "max_loss": float(p.losses.max()),
                                    "epsilon_lower_bound": bounds[d]} for d, p in per_dir.items()},
                 "max_loss": float(L.max()), "mean_loss": float(L.mean()),
                 "histogram": {"counts": hist.tolist(), "edges": edges.tolist()},
                 "delta_curve": {"epsilon": grid.tolist(),
                                 "delta_lower": [pld.delta_lower(e) for e in grid],
                                 "delta_point": [pld.delta_point(e) for e in grid]},
                 "rounds_simulated": sc.rounds},
        notes=notes)


def run_whitebox(sc, claim: Claim, modes, alpha: float, trials: int, seed: int,
                 jobs: int, index: int, executor=None, progress=None) -> list[WhiteBoxResult]:
    """White-box modes on the scenario's algorithm (for the canary, the
    conversion around the canary: the claim holds for every base learner).
    ``alpha`` is the share of each of the two DKW bands of ``pld``; the
    other modes are exact.  Call only after the declaration checks passed.
    ``progress`` (``audit.progress.Reporter``, default: the one in effect)
    gets a phase per direction of the loss-distribution sampling."""
    alg = sc.algorithm
    out = []
    if "per-round" in modes:
        out.append(_per_round(sc, alg, claim))
    if "search" in modes:
        out.append(_search(sc, alg, claim))
    if "pld" in modes:
        out.append(_pld(sc, alg, claim, alpha, trials, seed, jobs, index, executor, progress))
    return out
