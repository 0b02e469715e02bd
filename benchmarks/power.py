"""Power of the default audit on every correct registered algorithm.

For each algorithm the suite in ``pyproject.toml`` expects to be consistent
at its default parameters: ε_lb and wall time of the default audit (default
attacks, every mode that applies), then the smallest factor f in the list
such that the same algorithm with its noise scales divided by f is reported
as a violation of the *original* claim (the detectable leak), the
smallest f at which an exact white-box certificate refutes the claim
(computed with no statistical error; "-" where no white-box mode applies or
none refutes it up to the largest f), and, where the released noisy values
have a computable worst case, the factor at which they break the claim
("values break": exact, by bisection, no sampling — where the claim is about
the actions, where the proof's route fails; "≥ f" where only an upper bound
on the worst case is known, so they break no earlier than f).

How the noise is weakened, per algorithm (the ``how`` column):
* ``param`` — every noise-scale parameter the factory exposes (σ, λ,
  ``noise_scale``, ``scale``, the SVT and report-noisy-max scales) divided by f;
* ``epsilon×f`` — the algorithm is built at f·ε (its noise scales are
  proportional to 1/ε) and audited against the claim at ε; other parameters
  that depend on ε move with it.

    python benchmarks/power.py [--trials 200000] [--jobs 2] [--factors 1.5,2,3,5,10]
                               [--algorithms private-exp3,tbe-lazy] [--exact-only]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from algorithms import build  # noqa: E402
from audit.engine import audit_algorithm  # noqa: E402
from audit.engine.evidence.whitebox import WhiteBoxResult  # noqa: E402
from audit.engine.privacy_loss import pair_worst_case  # noqa: E402
from audit.engine.scenarios import scenarios_for  # noqa: E402

# The factory parameters that are noise scales, per algorithm (a name alone
# is not enough: ``sigma`` of private-htinf is the base learner's, not noise).
# Algorithms not listed are weakened through ε.
NOISE_PARAMS = {
    "as-ftrl-experts": ("lam",), "as-ftpl": ("sigma",), "as-bandit-exp2": ("lam",),
    "as-ftrl-experts-unit": ("lam",), "as-ftpl-unit": ("sigma",), "as-bandit-exp2-unit": ("lam",),
    "private-batched-exp4": ("noise_scale",), "tbe-lazy": ("noise_scale",),
    **{name: ("rnm_noise_scale", "svt_query_noise_scale", "svt_threshold_noise_scale")
       for name in ("tbe-svt", "tbe-svt-fixed")},
    "tbe-adaptive-fixed": ("noise_scale",),
    "pfb-laplace-derived": ("scale",),
    "pfb-gaussian": ("scale",), "pfb-gaussian-derived": ("scale",),
}


def correct_algorithms() -> list[tuple[str, dict]]:
    """(name, build keywords) of the suite's entries expected consistent at
    the algorithm's own parameters (no ``params`` override), first entry per name."""
    suite = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["audit"]
    out, seen = [], set()
    for e in suite["audit"]:
        name = e["algorithm"]
        if e.get("expect", "consistent") != "consistent" or e.get("params") or name in seen:
            continue
        seen.add(name)
        out.append((name, {k: e[k] for k in ("epsilon", "delta", "horizon", "arms", "experts")
                           if k in e}))
    return out


def weakened(name: str, kw: dict, f: float):
    """The algorithm with its noise divided by f, and how that was done."""
    base = build(name, **kw)
    noise = {p: base.params[p] / f for p in NOISE_PARAMS.get(name, ())}
    if noise:
        try:
            return build(name, **kw, params=noise), "param"
        except ValueError:   # reported in params but not a factory argument
            pass
    eps = kw.get("epsilon", base.claim.epsilon)
    return build(name, **{**kw, "epsilon": eps * f}), "epsilon×f"


def transcript_breaks_at(name: str, kw: dict, claim, hi: float = 100.0) -> str:
    """The smallest f (to 3 digits, by bisection) at which the exact worst
    case of some audited pair, on the released noisy values, exceeds the
    claim — no sampling: ``pair_worst_case`` of the weakened algorithm.
    Where the claim is about the actions this is where the proof's route
    (privacy of the intermediate object) breaks; the actions may hold on
    longer.  "-" where no pair's worst case is computable."""
    def worst(f: float):
        alg = weakened(name, kw, f)[0] if f != 1 else build(name, **kw)
        if alg.learner.transcript is None:
            return None
        scenarios, _ = scenarios_for(alg, None, search=False)
        found = [pair_worst_case(alg, sc.losses_a, sc.losses_b, sc.rounds, claim.delta,
                                 sc.advice)[0] for sc in scenarios if sc.group_size == 1]
        found = [w for w in found if w is not None]
        bounded.update(w.upper_bound for w in found)
        return max(w.epsilon for w in found) if found else None
    bounded: set = set()
    w1 = worst(1.0)
    if w1 is None:
        return "-"
    # From an upper bound on the worst case (history-dependent means), the
    # true factor is at least the one found.
    at_least = "≥" if True in bounded else ""
    if w1 > claim.epsilon:
        return "≥1" if at_least else "≤1"
    if worst(hi) <= claim.epsilon:
        return f">{hi:g}"
    lo, up = 1.0, hi
    while up / lo > 1.001:
        mid = (lo * up) ** 0.5
        lo, up = (mid, up) if worst(mid) <= claim.epsilon else (lo, mid)
    return f"{at_least}{up:.3g}"


def audit(alg, claim, trials, jobs, seed):
    start = time.perf_counter()
    r = audit_algorithm(alg, trials=trials, seed=seed, jobs=jobs, claim=claim)
    certified = any(x.violation and x.exact for x in r.results)
    return r, time.perf_counter() - start, certified


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=200_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--factors", default="1.5,2,3,5,10")
    ap.add_argument("--algorithms", default="",
                    help="comma-separated names (default: every correct one in the suite)")
    ap.add_argument("--exact-only", action="store_true",
                    help="only the exact column (no audits): where each algorithm's released "
                         "values break the claim")
    args = ap.parse_args()
    factors = [float(x) for x in args.factors.split(",")]
    todo = correct_algorithms()
    if args.algorithms:
        wanted = args.algorithms.split(",")
        todo = [(n, kw) for n, kw in todo if n in wanted]
    if args.exact_only:
        for name, kw in todo:
            claim = build(name, **kw).claim
            print(f"{name:24s} released values break the claim at f = "
                  f"{transcript_breaks_at(name, kw, claim)}", flush=True)
        return
    print(f"trials {args.trials} per side, seed {args.seed}, jobs {args.jobs}, "
          f"factors {factors}")
    head = (f"{'algorithm':24s} {'claim':>16s} {'ε_lb':>8s} {'verdict':>10s} {'wall s':>7s} "
            f"{'detected at f':>13s} {'certified at f':>14s} {'values break':>12s}  how")
    print(head)
    print("-" * len(head))
    for name, kw in todo:
        base = build(name, **kw)
        claim = base.claim
        r, wall, _ = audit(base, claim, args.trials, args.jobs, args.seed)
        # Without a white-box mode no factor can be certified: stop at detection.
        white = any(isinstance(x, WhiteBoxResult) for x in r.results)
        detected = certified_at = None
        how = "-"
        for f in factors:
            if detected is not None and (certified_at is not None or not white):
                break
            weak, how = weakened(name, kw, f)
            rw, _, cert = audit(weak, claim, args.trials, args.jobs, args.seed)
            if detected is None and rw.violation:
                detected = f
            if certified_at is None and cert:
                certified_at = f
        c = f"ε={claim.epsilon:g}" + (f",δ={claim.delta:g}" if claim.delta else "")
        print(f"{name:24s} {c:>16s} {r.epsilon_lower_bound:8.4f} {r.verdict:>10s} {wall:7.1f} "
              f"{detected if detected is not None else '>' + str(factors[-1]):>13} "
              f"{certified_at if certified_at is not None else '-':>14} "
              f"{transcript_breaks_at(name, kw, claim):>12}  {how}", flush=True)


if __name__ == "__main__":
    main()
