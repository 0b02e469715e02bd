"""The closed-form certificates quoted in docs/findings.md: events on the
outputs of the papers' algorithms whose probabilities on two neighbouring
loss sequences are computed exactly (no sampling), with their log-ratio.
A pure ε-DP claim is refuted by any event whose log-ratio exceeds ε.

Each certificate follows from the algorithm's box and the Laplace (or
Gaussian) law of its noise; tests/test_findings.py checks every one of
them against simulations of the registered algorithm at thresholds where
the event is frequent, so the formulas are those of the code.

* Agarwal & Singh, Theorem 3.1 / Cor. 3.2.1 on [−1, 1]^N (T = 2, N = 2):
  x_2 = softmax(−ηL̃_1) with L̃_1 = l_1 + Z, Z ~ Lap²(λ), λ = N⌈log₂T⌉/ε = 2.
  x_2(2) ≥ σ(ηa) ⟺ D := L̃_1(1) − L̃_1(2) ≥ a, and D = d + W with W the
  difference of two Lap(λ): P(W ≥ u) = ½(1 + u/(2λ))e^{−u/λ} (u ≥ 0).
  l_1 = (1, −1) vs (−1, 1): d = 2 vs −2.
* Theorem 3.1 as printed, λ = N log₂T/ε (no ceiling), on [0, 1]^N
  (T = 3, N = 2, ε = 1): x_2 reads L̃_1 = node[1] + 1 padding draw, x_3
  reads L̃_2 = node[1, 2] + 1 padding draw (⌈log₂ 3⌉ = 2 draws each), so
  D_2 = L̃_1(1) − L̃_1(2) and D_3 = L̃_2(1) − L̃_2(2) are independent, each d +
  S with S a sum of 4 iid Lap(λ) (two draws a coordinate, differenced);
  l_1 = (1, 0) vs (0, 1): d = 1 vs −1.  P(S ≥ y) is an exact polynomial in
  y/λ times e^{−y/λ} (``sum_laplace_tail``).  The event {D_2 ≥ a, D_3 ≥ a},
  i.e. {x_2(1) ≤ σ(−ηa), x_3(1) ≤ σ(−ηa)}.
* Corollary 3.2.3 (cube, T = 2): x_2 = clip(−ηL̃_1/2, −1, 1), λ = 1/ε;
  l_1 = e_1 vs −e_1: {x_2[1] ≤ −η/2} = {L̃_1(1) ≥ 1}: ½ vs ½e^{−2/λ}.
* Corollary 3.2.2 (sphere, T = 2): x_2 = Π_ball(−ηL̃_1/2), λ = √N/ε;
  l_1 = 𝟙/√N vs −𝟙/√N: the event {x_2[i] ≤ −η/(2√N) ∀i} lies where every
  L̃_1(i) ≥ 1/√N, beyond both means, where the density ratio is the
  constant e^{2√N/λ} = e^{2ε}: the ratio is exact whatever the probability.
* Lemma 4.2 around the canary (T ≥ 2): P[I_2 = 2] = P[1 + Z ≥ 1] = ½ vs
  P[−1 + Z ≥ 1] = ½e^{−2/λ}, λ = B/ε = 1/ε.
* Lemma 3.3 as stated on [−1, 1]^N at T = 2: no padding, (L̃_1, L̃_2) are
  the nodes [1, 1] and [1, 2], both containing round 1, each moved by
  2N in ℓ₁ with λ = N/ε: the privacy loss of an output beyond both means
  in every coordinate is exactly 2·2N/λ = 4ε.
* Theorem 3.5 read as pure ε (T = 2, N = 2): the experts I_1 (data-free)
  and I_2 = argmin L̃_1 with L̃_1 = l_1 + 𝒩(0, σ²I): P(I_2 = 2) =
  Φ(d/(σ√2)), d = l_1(1) − l_1(2) ∈ [−2, 2], so the experts' exact pure ε
  at T = 2 is ln Φ(√2/σ)/Φ(−√2/σ) (finite: the output space is finite).

    python benchmarks/findings_closed_forms.py [--tbe-grid 20001]
"""
from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def diff_laplace_tail(u: float, lam: float) -> float:
    """P(W ≥ u), W = Z − Z′ with Z, Z′ iid Lap(λ)."""
    if u >= 0:
        return 0.5 * (1 + u / (2 * lam)) * math.exp(-u / lam)
    return 1.0 - diff_laplace_tail(-u, lam)


def sum_laplace_tail_coeffs(n: int) -> list[Fraction]:
    """Coefficients c_j of P(S ≥ y) = e^{−y/λ} Σ_j c_j (y/λ)^j for y ≥ 0,
    S a sum of n iid Lap(λ) = λ(G − G′), G, G′ ~ Gamma(n, 1):
    P(G − G′ ≥ t) = ∫ P(G ≥ t + g) f_n(g) dg with P(G ≥ z) = e^{−z} Σ_{i<n}
    z^i/i!, so the coefficient of t^{i−m} gets C(i, m)(m + n − 1)!/(i!
    2^{m+n}(n − 1)!)."""
    c = [Fraction(0)] * n
    for i in range(n):
        for m in range(i + 1):
            c[i - m] += Fraction(math.comb(i, m) * math.factorial(m + n - 1),
                                 math.factorial(i) * 2 ** (m + n) * math.factorial(n - 1))
    return c


def log_sum_laplace_tail(y: float, lam: float, n: int) -> float:
    """ln P(S ≥ y) for y ≥ 0, S a sum of n iid Lap(λ) (exact formula)."""
    t = y / lam
    poly = sum(float(cj) * t ** j for j, cj in enumerate(sum_laplace_tail_coeffs(n)))
    return -t + math.log(poly)


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def thm31_t2(eps: float = 1.0, a: float = 2.0) -> dict:
    """Theorem 3.1 / Cor. 3.2.1 on [−1, 1]^2 at T = 2: the event {D ≥ a}."""
    from algorithms.agarwal_singh.catalog import ftrl_eta
    lam = 2 * 1 / eps
    eta = ftrl_eta(2, 2)
    p, q = diff_laplace_tail(a - 2, lam), diff_laplace_tail(a + 2, lam)
    return {"event": f"x_2(2) >= {sigmoid(eta * a):.6g}", "eta": eta, "lam": lam,
            "p": p, "q": q, "log_ratio": math.log(p / q), "sup": 4 / lam}


def thm31_no_ceiling(a: float = 40.0, T: int = 3, eps: float = 1.0) -> dict:
    """Theorem 3.1 with λ = N log₂T/ε (no ceiling) on [0, 1]^2 at T = 3:
    the event {D_2 ≥ a, D_3 ≥ a}, D_t = d + (sum of 4 Lap(λ))."""
    from algorithms.agarwal_singh.catalog import ftrl_eta
    N = 2
    lam = N * math.log2(T) / eps
    eta = ftrl_eta(T, N)
    lp = 2 * log_sum_laplace_tail(a - 1, lam, 4)
    lq = 2 * log_sum_laplace_tail(a + 1, lam, 4)
    return {"event": f"x_2(1) <= σ(−{a:g}η) and x_3(1) <= σ(−{a:g}η) = {sigmoid(-eta * a):.4g}",
            "eta": eta, "lam": lam, "p": math.exp(lp), "q": math.exp(lq),
            "log_ratio": lp - lq, "sup": 2 * 2 / lam}


def laplace_threshold(eps: float = 1.0, width: float = 2.0, B: float = 1.0) -> dict:
    """½ vs ½e^{−width/λ}, λ = B/ε: the cube at T = 2 and Lemma 4.2's canary."""
    lam = B / eps
    return {"p": 0.5, "q": 0.5 * math.exp(-width / lam), "log_ratio": width / lam}


def ftpl_pure_t2(eps: float = 1.0, delta: float = 1e-6) -> dict:
    """The experts' exact pure ε at T = 2, N = 2 (Theorem 3.5's σ)."""
    from scipy.stats import norm
    from algorithms.agarwal_singh.catalog import ftpl_sigma
    sigma = ftpl_sigma(2, 2, eps, delta)
    a = math.sqrt(2) / sigma
    return {"sigma": sigma, "p": norm.cdf(a), "q": norm.cdf(-a),
            "log_ratio": math.log(norm.cdf(a) / norm.cdf(-a))}


def smallest_threshold(f, lo: float, hi: float, target: float = 1.0) -> float:
    """The smallest a in [lo, hi] with f(a)['log_ratio'] > target (bisection;
    the log-ratio increases with a)."""
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if f(mid)["log_ratio"] > target:
            hi = mid
        else:
            lo = mid
    return hi


def thm52_bracket(grid: int = 20_001, T: int = 16, S: int = 2, eps: float = 0.99) -> dict:
    """Theorem 5.2 of Asi, Raman & Saha (N = 2): the certified bracket of the
    run event {J_t = 2 for every t in 2..k} under round 1 (1, 0) vs (0, 1)
    (the attack tbe-expert-run), from the scalar state model's recursion on
    a grid of ``grid`` states (the audit's own grid is coarser: its bracket
    is wider), at the k with the largest certified lower end; and the
    uncertified estimate of the same event's log-ratio over the whole
    horizon at T = 1000, S = 1 (grid 8001)."""
    import numpy as np
    from algorithms import build
    from attacks import ATTACKS
    from audit.engine.models.scalar_state.recursion import (Grid, estimate_runs, run_bounds,
                                                            state_model_of)
    out = {}
    for key, (t, s, n, certify) in {"short": (T, S, grid, True),
                                    "horizon": (1000, 1, 8001, False)}.items():
        alg = build("tbe-adaptive", horizon=t, epsilon=eps, params={"S": s})
        model = state_model_of(alg)
        sc = ATTACKS["tbe-expert-run"].scenarios(alg)[0]
        g = Grid(model.lo, model.hi, n)
        ea = estimate_runs(model, sc.losses_a, t, 1, 1, g)
        eb = estimate_runs(model, sc.losses_b, t, 1, 1, g)
        if certify:
            a = run_bounds(model, sc.losses_a, t, 1, 1, g)
            b = run_bounds(model, sc.losses_b, t, 1, 1, g)
            lo, hi = a.log_lo - b.log_hi, a.log_hi - b.log_lo
            k = int(np.argmax(lo))
            out[key] = {"T": t, "S": s, "grid": n, "k": k + 2, "lower": float(lo[k]),
                        "upper": float(hi[k]), "estimate": float((ea - eb)[k])}
        else:
            k = int(np.argmax(ea - eb))
            out[key] = {"T": t, "S": s, "grid": n, "k": k + 2, "estimate": float((ea - eb)[k]),
                        "log_p": float(ea[k])}
    return out


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tbe-grid", type=int, default=0,
                    help="also bracket Theorem 5.2's run event at T = 16, S = 2, ε = 0.99 on a "
                         "grid of this many states (20001: minutes), and estimate it at T = 1000")
    args = ap.parse_args(argv)
    r = thm31_t2()
    print("Agarwal & Singh, Theorem 3.1 / Cor. 3.2.1, losses in [-1, 1]^2, T = 2, eps = 1")
    print(f"  eta = {r['eta']:.6g}, lam = {r['lam']:g}; event {r['event']}: "
          f"P = {r['p']:.6g} vs {r['q']:.6g}, log-ratio {r['log_ratio']:.6f} "
          f"(= 2 − ln 2 = {2 - math.log(2):.6f}); supremum over a: {r['sup']:g}")
    for a in (6.0, 10.0, 20.0):
        s = thm31_t2(a=a)
        print(f"    a = {a:4g}: P = {s['p']:.4g} vs {s['q']:.4g}, log-ratio {s['log_ratio']:.4f}")
    r = thm31_no_ceiling()
    a1 = smallest_threshold(thm31_no_ceiling, 1.0, 200.0)
    print("Theorem 3.1 as printed (lam = N log2 T / eps, no ceiling), losses in [0, 1]^2, T = 3")
    print(f"  eta = {r['eta']:.6g}, lam = {r['lam']:.6g}; event {r['event']}: "
          f"P = {r['p']:.4g} vs {r['q']:.4g}, log-ratio {r['log_ratio']:.6f} > 1; "
          f"supremum {r['sup']:.6g}; smallest threshold a with log-ratio > 1: {a1:.4f}")
    r = laplace_threshold()
    print("Cor. 3.2.3 (cube), T = 2, l_1 = e_1 vs -e_1; Lemma 4.2 around the canary")
    print(f"  P = {r['p']:g} vs {r['q']:.6g}: log-ratio {r['log_ratio']:g} = 2 eps")
    print("Cor. 3.2.2 (sphere), T = 2, l_1 = 1/sqrt(N) vs -1/sqrt(N): density ratio e^(2 eps) on "
          "the whole event, log-ratio exactly 2")
    print("Lemma 3.3 as stated, [-1, 1]^2, T = 2: exact privacy loss 2 nodes x 2N/lam = 4 eps "
          "(audit run as-ftrl-lemma33-paper --horizon 2 --mode pld)")
    r = ftpl_pure_t2()
    print("Theorem 3.5 read as pure eps, T = 2, N = 2 (sigma of the theorem at delta = 1e-6)")
    print(f"  sigma = {r['sigma']:.6g}: P(I_2 = 2) = {r['p']:.6g} vs {r['q']:.6g}, exact pure "
          f"eps of the experts {r['log_ratio']:.6f}")
    if args.tbe_grid:
        r = thm52_bracket(args.tbe_grid)
        a, b = r["short"], r["horizon"]
        print(f"Asi, Raman & Saha, Theorem 5.2, N = 2, eps = 0.99, run event J_t = 2 for t in 2..k")
        print(f"  T = {a['T']}, S = {a['S']}, grid {a['grid']}: k = {a['k']}, certified log-ratio "
              f"in [{a['lower']:.6f}, {a['upper']:.6f}] (estimate {a['estimate']:.6f})")
        print(f"  T = {b['T']}, S = {b['S']}, grid {b['grid']}: k = {b['k']}, estimate "
              f"{b['estimate']:.6f} on an event of log-probability {b['log_p']:.2f} (not certified)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
