"""The parameter sweeps behind docs/findings.md: for every privacy claim that
quantifies over T, N, K, n, η or ε, the audit is run at each point of a
grid with the existing flags (``--horizon``, ``--arms``, ``--experts``,
``--epsilon``, ``--param``), and the script prints, per claim, every point
tried with its figures and the point where the strongest evidence was
found (the largest ε_lb on the claim's output; ties go to the first point,
the cheapest).  The winning point is the one each row of the findings
table puts in its command.

Columns:

* ``out`` — ε_lb on the claim's output, the figure the verdict compares
  with the claim (black-box at the confidence below, or exact where a
  white-box mode certifies the output itself); ``*`` marks a violation;
* ``/claim`` — ``out`` over the claimed ε (the per-round ε_t over the
  per-round claim for EXP3): the point with the largest ratio is the
  strongest, since the grids also move ε;
* ``exact`` — whether that figure is exact (no statistical error);
* ``inter`` — the largest bound on the proof's intermediate object
  (``=`` exact, ``~`` a 95% DKW bound), never a verdict;
* ``ceiling`` — the largest worst case of a pair on that object
  (``≤`` where it is an upper bound over all histories): no audit of the
  output on that pair can show more;
* ``per-round`` — the largest per-round ε_t (EXP3's App. G.1 claim only).

Every audit runs as ``audit run NAME FLAGS --trials N --seed 0 --jobs J
--no-store``: one process at a time, with the sweep's budget (default
50 000 runs per side, a quarter of the findings' 200 000; the table's
figures come from the row commands at 200 000).

    python benchmarks/findings_sweep.py [--trials 50000] [--jobs 1] [--only as-thm31-paper,...]
                                        [--list] [--quick]

``--quick`` keeps the first two points of every grid (a smoke run).
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _grid(**axes) -> list[list[str]]:
    """Every combination of the axes' values as flag lists; an axis is a
    flag (``--horizon``) or ``param:NAME`` (``--param NAME=value``)."""
    names = list(axes)
    out = []
    for values in itertools.product(*(axes[n] for n in names)):
        flags = []
        for n, v in zip(names, values):
            if n.startswith("param_"):
                flags += ["--param", f"{n[len('param_'):]}={v}"]
            else:
                flags += ["--" + n.replace("_", "-"), str(v)]
        out.append(flags)
    return out


@dataclass
class Sweep:
    key: str                 # the findings row it serves
    claim: str               # the claim, as the row states it
    algorithm: str
    points: list             # flag lists
    fixed: list = field(default_factory=list)   # flags every point gets
    trials: int | None = None                   # a budget of its own (slow simulations)


def _no_ceiling_lam(T: int, N: int = 2, eps: float = 1.0) -> str:
    """Theorem 3.1's λ = N log T/ε with log T = log₂ T, no ceiling."""
    return f"{N * math.log2(T) / eps:.6g}"


SWEEPS = [
    # ---------------------------------------------------------- Asi, Raman & Talwar
    Sweep("art-lemma33-exp3", "Lemma 3.3 / Thm 3.1 with Cor. E.1 (EXP3): ε-DP arms, every τ, "
          "ε ≤ 1, K, T", "private-exp3",
          _grid(arms=[2, 4, 8], epsilon=[1.0, 0.25], horizon=[1000]) + _grid(horizon=[2]),
          ["--attack", "canary", "--mode", "black-box"]),
    Sweep("art-lemma33-ftpl", "Lemma 3.3 with Cor. E.3 (FTPL)", "private-ftpl",
          _grid(arms=[2, 4, 8], epsilon=[1.0, 0.25]), ["--attack", "canary", "--mode", "black-box"]),
    Sweep("art-lemma33-htinf", "Lemma 3.3 with Cor. 3.2 (HTINF)", "private-htinf",
          _grid(arms=[2, 4, 8], epsilon=[1.0, 0.25]), ["--attack", "canary", "--mode", "black-box"]),
    Sweep("art-thm42", "Thm 4.2 / Cor. 4.3: ε-DP experts' arms, K, N", "private-experts",
          _grid(arms=[2, 4], experts=[2, 4, 8]), ["--attack", "canary", "--mode", "black-box"]),
    Sweep("art-thm44", "Thm 4.4: ε-local DP reports, K, N, T", "ldp-exp4",
          _grid(arms=[2, 4], experts=[2, 8], horizon=[1000]), ["--mode", "pld"]),
    Sweep("art-thm45", "Thm 4.5: (ε, δ)-DP arms, K, N, T (γ < 1 from T ≈ 7 400)",
          "private-batched-exp4",
          _grid(horizon=[10_000, 30_000], experts=[4, 8]), ["--attack", "rare-arm",
                                                            "--attack", "batch-edge"],
          trials=20_000),
    Sweep("art-g1", "§5.1 / App. G.1: EXP3's per-round loss is not uniformly bounded and "
          "grows with T (η = γ = min(1, 100/T))", "exp3",
          _grid(horizon=[10_000, 100_000, 1_000_000]), ["--mode", "per-round"]),
    # ---------------------------------------------------------- Agarwal & Singh
    Sweep("as-thm31-paper", "Thm 3.1 / Cor. 3.2.1: ε-DP predictions, losses in [−1, 1]^N, "
          "every T, N", "as-ftrl-experts",
          _grid(horizon=[2, 3, 4, 8, 16, 64, 1000], arms=[2, 3, 4]),
          ["--attack", "as-tree-level", "--mode", "black-box"]),
    Sweep("as-thm31-unit", "Thm 3.1 on [0, 1]^N", "as-ftrl-experts-unit",
          _grid(horizon=[2, 4, 16, 1000], arms=[2, 3]), ["--attack", "as-tree-level"]),
    Sweep("as-cor32-sphere", "Cor. 3.2.2 (sphere): ε-DP predictions, losses in the unit ℓ₂ ball",
          "as-ftrl-sphere", _grid(horizon=[2, 4, 16, 64], arms=[2, 3, 4]),
          ["--attack", "as-olo-round1", "--mode", "black-box"]),
    Sweep("as-cor32-cube", "Cor. 3.2.3 (cube): ε-DP predictions, losses in the unit ℓ₁ ball",
          "as-ftrl-cube", _grid(horizon=[2, 4, 16, 64], arms=[2, 3, 4]),
          ["--attack", "as-olo-round1", "--mode", "black-box"]),
    Sweep("as-lemma33-stated", "Lemma 3.3: (L̃_t : t ∈ [T]) ε-DP (the sums through t = T; at "
          "T = 2 no padding, so they are the tree nodes)", "as-ftrl-lemma33",
          _grid(horizon=[2, 3, 4, 8, 16, 64], arms=[2, 4]),
          ["--attack", "as-tree-level", "--mode", "pld"]),
    Sweep("as-lemma33-paper", "Lemma 3.3 as stated on [−1, 1]^N (the paper's class)",
          "as-ftrl-lemma33-paper", _grid(horizon=[2, 4, 16], arms=[2, 4]),
          ["--attack", "as-tree-level", "--mode", "pld"]),
    Sweep("as-lemma33-object", "Lemma 3.3's proof object on [−1, 1]^N: the nodes x_1..x_T read",
          "as-ftrl-experts", _grid(horizon=[2, 17, 64, 1000], arms=[2, 4]),
          ["--attack", "as-tree-level", "--mode", "pld"]),
    Sweep("as-thm31-noceil", "Thm 3.1 with λ = N log₂T/ε (no ceiling), losses in [0, 1]^N",
          "as-ftrl-experts-unit",
          [["--horizon", str(T), "--param", f"lam={_no_ceiling_lam(T)}"] for T in (3, 5, 9, 17, 33)],
          ["--attack", "as-tree-level"]),
    Sweep("as-thm35", "Thm 3.5 (FTPL, Gaussian tree) as (ε, δ) = (1, 10⁻⁶): experts, T, N",
          "as-ftpl", _grid(horizon=[2, 4, 16, 1000], arms=[2, 4]),
          ["--attack", "as-tree-level", "--attack", "first-round"]),
    Sweep("as-thm35-pure", "Thm 3.5 read as pure ε (δ = 0): the experts", "as-ftpl",
          _grid(horizon=[2, 4, 16, 1000], arms=[2, 4]),
          ["--claim-delta", "0", "--attack", "as-tree-level", "--attack", "first-round",
           "--mode", "black-box"]),
    Sweep("as-thm41-paper", "Thm 4.1: ε-DP arms, losses in [−1, 1]^N, T, N, ε", "as-bandit-exp2",
          _grid(horizon=[2, 10, 100, 1000], arms=[2, 4]) + _grid(epsilon=[0.5, 2.0]),
          ["--attack", "first-round", "--attack", "rare-arm"]),
    Sweep("as-thm41-unit", "Thm 4.1 on [0, 1]^N", "as-bandit-exp2-unit",
          _grid(horizon=[2, 100, 1000], arms=[2, 4]), ["--attack", "first-round"]),
    Sweep("as-lemma42", "Lemma 4.2: Algorithm 4 around any 𝒜 ε-DP, λ = B/ε, B = 1 on [−1, 1]^N",
          "as-reduction", _grid(epsilon=[0.5, 1.0, 2.0], arms=[2, 4]),
          ["--horizon", "4", "--attack", "as-reduction-canary", "--mode", "black-box"]),
    # ---------------------------------------------------------- Asi, Raman & Saha
    Sweep("ars-thm31", "Thm 3.1 (Alg 1): ε-DP experts, T, N", "tbe-lazy",
          _grid(horizon=[64, 1024], arms=[2, 4, 8]), ["--mode", "black-box"]),
    Sweep("ars-thm36", "Thm 3.6 (Alg 2): ε-DP experts, T, N", "tbe-svt",
          _grid(horizon=[256, 1000], arms=[2, 4]), ["--mode", "black-box"], trials=20_000),
    Sweep("ars-thmB2", "Thm B.2 (Alg 3, any ε, η > 0): ε-DP experts, T, η (N = 2: the exact "
          "mode's)", "tbe-adaptive-n2",
          _grid(horizon=[16, 1000], param_eta=[0.5, 1.0, 2.0]),
          ["--attack", "tbe-expert-run", "--mode", "recursion"]),
    Sweep("ars-thm52", "Thm 5.2 (Alg 3 at η = ε√(S/(T log NT))): ε-DP experts, ε ∈ (0, 1), "
          "T, N, S (exact: the recursion, N = 2)", "tbe-adaptive",
          [["--horizon", str(T), "--param", f"S={S}"] for T, S in
           [(4, 1), (8, 1), (8, 2), (12, 2), (16, 2), (16, 3), (16, 4), (16, 8), (20, 3),
            (24, 3), (32, 4), (32, 8), (1000, 1)]],
          ["--epsilon", "0.99", "--attack", "tbe-expert-run", "--mode", "recursion"]),
    Sweep("ars-thm52-bb", "Thm 5.2, black-box, N > 2", "tbe-adaptive",
          _grid(horizon=[16, 1000], arms=[2, 4]),
          ["--epsilon", "0.99", "--attack", "tbe-expert-run", "--attack", "tbe-full-row",
           "--mode", "black-box"]),
    Sweep("ars-thm41", "Thm 4.1 (ℬ over the meta-experts, 𝒜 = Algorithm 1): (ε, δ)-DP experts, "
          "ε ∈ (0, 1), T, N, S", "tbe-meta", _grid(horizon=[4, 8, 16], arms=[2, 3], param_S=[0, 1, 2]),
          ["--epsilon", "0.99", "--attack", "first-round", "--attack", "tbe-window-tail",
           "--mode", "black-box"]),
    # ---------------------------------------------------------- Ene, Nguyen & Vladu
    Sweep("pfb-lemma7", "Lemma 7 (Laplace tree): ε-DP points, n, T", "pfb-laplace",
          _grid(arms=[4, 16, 64], horizon=[64]) + _grid(arms=[4], horizon=[16, 256]),
          ["--attack", "pfb-batch-edge", "--attack", "pfb-first-round"], trials=10_000),
    Sweep("pfb-lemma10", "Lemma 10 (Gaussian tree): (ε, δ)-DP points, n, T", "pfb-gaussian",
          _grid(arms=[4, 16, 64], horizon=[64]) + _grid(arms=[4], horizon=[16, 256]),
          ["--attack", "pfb-batch-edge", "--attack", "pfb-first-round"], trials=10_000),
]


def audit_command() -> list[str]:
    beside = Path(sys.executable).parent / "audit"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("audit")
    return [found] if found else [sys.executable, "-m", "audit.cli"]


def figures(doc: dict) -> dict:
    """The columns of one audit's result document."""
    out = {"out": float(doc["epsilon_lower_bound"]), "verdict": doc["verdict"],
           "claim": float(doc["claim"]["epsilon"]), "claim_per_round": None,
           "exact": False, "inter": None, "inter_exact": False, "ceiling": None,
           "ceiling_upper": False, "per_round": None}
    for a in doc["attacks"]:
        eps = a.get("epsilon_lower_bound")
        if a.get("kind") == "per-round":
            pr = (a.get("details") or {}).get("max_per_round", eps)
            if pr is not None and (out["per_round"] is None or pr > out["per_round"]):
                out["per_round"] = float(pr)
                out["claim_per_round"] = float((a.get("claim_compared") or {}).get("value", "nan"))
            continue
        if a.get("intermediate_object"):
            if eps is not None and (out["inter"] is None or eps > out["inter"]):
                out["inter"], out["inter_exact"] = float(eps), bool(a.get("exact"))
        elif a.get("exact") and eps is not None and float(eps) >= out["out"] - 1e-12:
            out["exact"] = True
        wc = a.get("pair_worst_case") or {}
        if wc.get("epsilon") is not None and (out["ceiling"] is None
                                              or wc["epsilon"] > out["ceiling"]):
            out["ceiling"], out["ceiling_upper"] = float(wc["epsilon"]), bool(wc.get("upper_bound"))
    return out


def run_point(sweep: Sweep, flags: list[str], trials: int, jobs: int, workdir: str) -> dict:
    path = os.path.join(workdir, "result.json")
    if os.path.exists(path):
        os.remove(path)
    cmd = [*audit_command(), "run", sweep.algorithm, *flags, *sweep.fixed,
           "--trials", str(trials), "--seed", "0", "--jobs", str(jobs), "--no-store",
           "--quiet", "--json", path]
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    secs = time.perf_counter() - start
    if r.returncode not in (0, 1) or not os.path.exists(path):
        return {"error": (r.stderr.strip().splitlines() or ["no output"])[-1], "secs": secs}
    with open(path) as f:
        doc = json.load(f)
    return {**figures(doc), "secs": secs}


def _fmt(x, exact=None, upper=None) -> str:
    if x is None:
        return "-"
    mark = "" if exact is None else ("=" if exact else "~")
    if upper:
        mark = "≤"
    return f"{mark}{x:.4g}"


def per_node_table(ns=(4, 16, 64), T: int = 64, eps: float = 1.0, delta: float = 1e-5) -> None:
    """Ene, Nguyen & Vladu: the per-node privacy loss of one changed round on
    the tree blocks, from the code's sensitivities (``sensitivities``: Δ₁ =
    2(n/ζ)L(D + ζ)√n, Δ₂ = 2(n/ζ)L(D + ζ)) and the lemmas' scales, against
    what the proofs assume: Lemma 7's bound T_batch·√n·M ≤ T^{1/2}nL with
    M = LDn/ζ written as T^{1/4}n^{1/2}L, which Lemma 10's proof reuses."""
    sys.path.insert(0, str(ROOT))
    from algorithms.projection_free import catalog as pfb
    print(f"\n== pfb per-node loss at T = {T}, ε = {eps:g}, δ = {delta:g} (ℓ₁ ball, L = 1)")
    print(f"   {'n':>4s} {'LDn/ζ':>9s} {'T^¼√n L':>9s} {'Lap Δ₁/λ':>9s} {'Gauss μ':>9s}")
    for n in ns:
        alg = pfb.make_pfb_laplace(T, n, eps)
        zeta, D = alg.params["zeta"], alg.extra["diameter"]
        d1, d2 = pfb.sensitivities(n, zeta, D, 1.0)
        lam = pfb.laplace_scale_paper(T, n, 1.0, eps)
        sigma = pfb.gaussian_sigma_paper(T, n, 1.0, eps, delta)
        print(f"   {n:4d} {D * n / zeta:9.4g} {T ** 0.25 * math.sqrt(n):9.4g} {d1 / lam:9.4g} "
              f"{d2 / sigma:9.4g}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=50_000,
                    help="runs per side of each point (a sweep's own budget may be lower)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated sweep keys")
    ap.add_argument("--list", action="store_true", help="list the sweeps and exit")
    ap.add_argument("--quick", action="store_true", help="the first two points of every grid")
    args = ap.parse_args(argv)
    chosen = [s for s in SWEEPS if not args.only or s.key in args.only.split(",")]
    if args.list or not chosen:
        for s in SWEEPS:
            print(f"{s.key:22s} {s.algorithm:22s} {len(s.points):3d} points  {s.claim}")
        return 0 if chosen or args.list else 2
    total = time.perf_counter()
    with tempfile.TemporaryDirectory() as workdir:
        for s in chosen:
            points = s.points[:2] if args.quick else s.points
            trials = min(args.trials, s.trials) if s.trials else args.trials
            print(f"\n== {s.key}: {s.claim}")
            print(f"   audit run {s.algorithm} <point> {' '.join(s.fixed)} --trials {trials}")
            print(f"   {'point':42s} {'out':>9s} {'/claim':>7s} {'exact':>5s} {'inter':>9s} "
                  f"{'ceiling':>9s} {'per-round':>9s} {'secs':>6s}")
            best = None
            for flags in points:
                f = run_point(s, flags, trials, args.jobs, workdir)
                label = " ".join(flags) or "(defaults)"
                if "error" in f:
                    print(f"   {label:42s} error: {f['error']}")
                    continue
                star = "*" if f["verdict"] == "violation" else " "
                ratio = (f["per_round"] / f["claim_per_round"] if s.key == "art-g1"
                         else f["out"] / f["claim"])
                print(f"   {label:42s} {f['out']:8.4g}{star} {ratio:7.3f} "
                      f"{'yes' if f['exact'] else 'no':>5s} "
                      f"{_fmt(f['inter'], f['inter_exact']):>9s} "
                      f"{_fmt(f['ceiling'], upper=f['ceiling_upper']):>9s} "
                      f"{_fmt(f['per_round']):>9s} {f['secs']:6.1f}", flush=True)
                key = ratio
                inter = f["inter"] / f["claim"] if f["inter"] is not None else -1.0
                if best is None or (key, inter) > (best[0], best[1]):
                    best = (key, inter, label, f)
            if best is not None:
                f = best[3]
                what = (f"per-round ε_t {f['per_round']:.4g}" if s.key == "art-g1"
                        else f"ε_lb on the output {f['out']:.4g}")
                print(f"   strongest: {best[2]}: {what} ({best[0]:.3f} × the claim)"
                      + (f", intermediate {f['inter']:.4g}" if f["inter"] is not None else ""))
    if any(s.key.startswith("pfb-") for s in chosen):
        per_node_table()
    print(f"\ntotal {time.perf_counter() - total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
