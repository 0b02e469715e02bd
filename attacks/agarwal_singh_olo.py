"""Pairs and events for the Agarwal & Singh instances the findings added:
Corollary 3.2's sphere and cube (``as-olo-round1``) and Lemma 4.2's
reduction around a base learner the auditor chooses (``as-reduction-canary``).

Both loss classes of Corollary 3.2 are symmetric (𝒴 = −𝒴), so a row l and
its negation −l are neighbours: they are ‖2l‖₁ = 2‖𝒴‖₁ apart in ℓ₁, twice
the ‖𝒴‖₁ that λ is calibrated to.  At T = 2 the point x_2 reads one tree
node, L̃_1 = l_1 + Z (no padding: ⌈log₂ 2⌉ = 1 draw), and x_2 = Π(−ηL̃_1/2).
On the region where every moved coordinate of L̃_1 lies beyond both means
the Laplace density ratio is constant, e^{‖l − l′‖₁/λ}; the events below
are exactly such regions seen through the projection, so their
probabilities have that ratio exactly (docs/findings.md gives the algebra).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .base import Attack, Scenario, loss_extremes, refuse_losses
from .canary import threshold_canary
from .events import CoordinateAbove, CoordinateBelow, Union, pilot_thresholds, standard_events


@dataclass(frozen=True)
class AllCoordinatesBelow:
    """{x_t[i] ≤ c_i for every coordinate i} at each listed round t
    (0-based), for each listed threshold vector c (fixed before the audit)."""

    rounds: tuple
    thresholds: tuple      # tuple of threshold vectors (one per event)

    @property
    def point_rounds(self) -> tuple:
        return tuple(self.rounds)

    @property
    def labels(self) -> list[str]:
        return [f"x_{t + 1}[i] <= {c[0]:.4g} for every i" if len(set(c)) == 1
                else f"x_{t + 1} <= ({', '.join(f'{v:.4g}' for v in c)})"
                for t in self.rounds for c in self.thresholds]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = []
        for t in self.rounds:
            x = points[t]
            for c in self.thresholds:
                out.append(int(np.all(x <= np.asarray(c)[None, :], axis=1).sum()))
        return np.asarray(out, dtype=np.int64)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = [np.all(points[t] <= np.asarray(c)[None, :], axis=1)
               for t in self.rounds for c in self.thresholds]
        return np.stack(out, axis=1) if out else np.zeros((len(actions), 0), dtype=bool)


class OLORound1(Attack):
    name = "as-olo-round1"
    summary = ("Corollary 3.2's sphere and cube: round 1's loss l against −l (the loss class "
               "is symmetric), one coordinate (e_1 vs −e_1) and, on the sphere, the diagonal "
               "(±1/√N each); events on x_2, exact at T = 2")
    needs = ("an Agarwal & Singh OLO instance over the sphere or the cube "
             "(Algorithm.extra['olo']: as-ftrl-sphere, as-ftrl-cube)")

    def _body(self, alg) -> str:
        body = alg.extra.get("olo") if alg.extra else None
        if body not in ("sphere", "cube"):
            raise ValueError(f"attack {self.name} applies to as-ftrl-sphere and as-ftrl-cube; "
                             f"{alg.name} is neither")
        return body

    def _pairs(self, alg) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
        """(label, ℓ, ℓ′, the value v of each moved coordinate on ℓ)."""
        body = self._body(alg)
        T, N = alg.horizon, alg.n_arms
        out = []
        a = np.zeros((T, N))
        b = a.copy()
        a[0, 0], b[0, 0] = 1.0, -1.0
        out.append(("round-1-coordinate-1", a, b, 1.0))
        if body == "sphere" and N > 1:
            v = 1.0 / math.sqrt(N)
            a = np.zeros((T, N))
            b = a.copy()
            a[0, :], b[0, :] = v, -v
            out.append(("round-1-diagonal", a, b, v))
        return out

    def applies(self, alg):
        for _, a, b, _ in self._pairs(alg):
            refuse_losses(self.name, alg, a, b)

    def scenarios(self, alg):
        pairs = self._pairs(alg)
        T, N = alg.horizon, alg.n_arms
        eta = float(alg.params["eta"])
        rounds = min(T, 4)
        focus = list(range(1, rounds))
        out = []
        for label, a, b, v in pairs:
            moved = np.flatnonzero(a[0] != b[0])
            # x_2 ≤ −ηv/2 on every moved coordinate ⟺ (inside 𝒳) L̃_1 ≥ v there,
            # beyond both means; the projection only adds points beyond them.
            exact = tuple(-0.5 * eta * v if i in moved else 1.0 for i in range(N))
            coords = (0,) if N == 2 else (0, N - 1)
            thr = pilot_thresholds(alg, (a, b), focus, coords)
            lower = tuple(tuple(sorted(set(c) | {-0.5 * eta * v})) for c in thr)
            parts = [CoordinateAbove(tuple(focus), coords, thr),
                     CoordinateBelow(tuple(focus), coords, lower),
                     AllCoordinatesBelow(tuple(focus), (exact,))]
            notes = [f"round 1: {np.array2string(a[0], precision=3, separator=', ')} vs "
                     f"{np.array2string(b[0], precision=3, separator=', ')}, ℓ₁ apart by "
                     f"{np.abs(a[0] - b[0]).sum():.4g} (λ = {alg.params['lam']:.4g})",
                     f"at T = 2 the event {{x_2 ≤ −ηv/2 on the moved coordinates}} (v = {v:.4g}, "
                     f"η = {eta:.4g}) has probabilities in the exact ratio "
                     f"e^(‖ℓ_1 − ℓ′_1‖₁/λ) = e^{np.abs(a[0] - b[0]).sum() / alg.params['lam']:.4g}"]
            out.append(Scenario(f"{self.name}:{label}", alg, a, b,
                                Union(tuple(parts)), rounds, notes=notes))
        return out


class ReductionCanary(Attack):
    name = "as-reduction-canary"
    summary = ("Lemma 4.2 (Algorithm 4 around any 𝒜): the base learner replaced by the "
               "threshold canary (arm 1 at round 1, then arm 2 forever iff its noisy feedback "
               "≥ hi); l_1(arm 1) = hi vs lo")
    needs = ("Agarwal & Singh's reduction (Algorithm 4) registered with a base learner the "
             "auditor may replace (Algorithm.extra['reduction'] and rebuild: as-reduction)")

    def _audited(self, alg):
        if not (alg.extra and alg.extra.get("reduction")) or alg.rebuild is None:
            raise ValueError(f"attack {self.name} applies to Agarwal & Singh's Algorithm 4 "
                             f"(as-reduction); {alg.name} is not it")
        if alg.horizon < 2:
            raise ValueError(f"attack {self.name} needs a horizon of at least 2 rounds")
        lo, hi = loss_extremes(alg)
        return alg.rebuild(threshold_canary(alg.base_arms, hi)), lo, hi

    def white_box_runs(self, alg):
        return [(self._audited(alg)[0], False)]

    def scenarios(self, alg):
        audited, lo, hi = self._audited(alg)
        T, K = alg.horizon, alg.n_arms
        rounds = min(T, 4)
        a = np.full((T, K), lo)
        b = a.copy()
        a[0, 0] = hi
        lam = float(alg.params["lam"])
        notes = [
            f"The base learner of {alg.name} was replaced by the threshold canary (plays arm 1 "
            f"at round 1, then arm 2 forever iff its noisy feedback ≥ {hi:g}).",
            "This is legitimate: Lemma 4.2 claims ε-DP for Algorithm 4 around any bandit "
            "algorithm 𝒜, so the auditor may choose the most revealing one.",
            f"P[I_2 = 2] = P[{hi:g} + Z ≥ {hi:g}] = 1/2 on ℓ and P[{lo:g} + Z ≥ {hi:g}] = "
            f"e^(−{hi - lo:g}/λ)/2 on ℓ′ (Z ~ Lap(λ), λ = {lam:.4g}): their log-ratio is "
            f"exactly {(hi - lo) / lam:.4g}.",
        ]
        return [Scenario(f"{self.name}", audited, a, b, standard_events(rounds, K, focus=(1,)),
                         rounds, notes=notes)]


FAMILY_ATTACKS: tuple = (OLORound1(), ReductionCanary())
