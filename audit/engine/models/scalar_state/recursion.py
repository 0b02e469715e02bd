"""Exact probabilities of action events, without sampling, for learners that
declare a scalar state model (``algorithms.state_model.ScalarStateModel``:
the action law depends on the history only through u_t, and u_{t+1} =
clip(u_t + shift(ℓ_t) + step·D_t, lo, hi) with i.i.d. noise D_t).

**Forward recursion with monotone rounding.**  The state lives on a uniform
grid x_0 = lo < x_1 < … < x_{n−1} = hi of step Δ.  Two finite chains are
run, both driven by the true noise law:

* the *up* chain rounds every new state up to the grid:
  u⁺_{t+1} = ⌈clip(u⁺_t + s_t + step·D_t)⌉;
* the *down* chain rounds it down.

With the same noise, u⁺_t ≥ u_t ≥ u⁻_t at every round (induction: the
update is increasing in u, and rounding up/down only moves further), so for
an arm whose probability p_i(u) is decreasing in u, every product
Π_t p_i(u_t) over a set of rounds is bracketed pathwise:
Π p_i(u⁺_t) ≤ Π p_i(u_t) ≤ Π p_i(u⁻_t); for an increasing arm the chains
swap roles.  Taking expectations, the up and down chains give a *lower and
an upper bound* on P(J_t = i for every t in a set of rounds) — the run
events "expert i at every round s..k" — and on each marginal P(J_t = i).
These bounds are exact for the chains (no sampling); the only errors are
floating-point ones, bounded below.

Because clip bounds lie on the grid and a grid point plus an offset rounds
like the offset, the rounded chain moves by an integer offset m with
P(m) = P((m − 1)Δ < s + step·D ≤ mΔ) (up; [mΔ, (m+1)Δ) down), independent of
the current point: one convolution per round, with the mass beyond the
bounds folded onto them.  Offsets beyond ±M (where the noise tail is below
e^{−80}) are lumped conservatively: onto the far boundary or onto ±M,
whichever keeps the chain on its side of the truth.  Nothing is dropped.

**Floating point.**  All quantities are sums and products of non-negative
numbers, renormalised each round (the log of the scale is kept), so each
round adds a relative error of at most (64 + 4(2M + 3))·2⁻⁵³ (kernel entries
from exp/expm1, assumed accurate to a few ulps and evaluated without
cancellation, ``LaplaceDifference.interval``; convolution sums of at most
2M + 1 terms; the folding sums; the weights), each weighted round's total
(a sum of n terms) (n + 8)·2⁻⁵³, and each logarithm of a round's total and
the running sum of them a few ulps of their values.  The bounds are widened by the sum
of these, so the lower bounds stay lower and the upper bounds upper.

This is also how the declaration checks test a model against the code:
the marginals' brackets must contain the simulated frequencies
(``audit.engine.models``).

May import: ``algorithms``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from algorithms.core import Algorithm
from algorithms.state_model import ScalarStateModel

ULP = 2.0 ** -53
# The noise kernel is computed exactly up to offsets where P(|D| > a) <
# e^{-80}·(2 + 80)/4 ≈ 4e-34; the rest is lumped conservatively (see above).
TAIL = 80.0
MIN_GRID, MAX_GRID = 1001, 40001
# Multiply-adds per audit (all passes of one pair): ~1 s per 1e9 here.
WORK = 4e9


def state_model_of(alg: Algorithm) -> Optional[ScalarStateModel]:
    """The algorithm's declared scalar state model, if it declares one for
    its number of arms."""
    m = (alg.extra or {}).get("state_model") if alg is not None else None
    if isinstance(m, ScalarStateModel) and m.n_arms == alg.n_arms:
        return m
    return None


@dataclass(frozen=True)
class Grid:
    """n equally spaced states from lo to hi (both on the grid)."""

    lo: float
    hi: float
    n: int

    @property
    def delta(self) -> float:
        return (self.hi - self.lo) / (self.n - 1)

    @property
    def x(self) -> np.ndarray:
        x = self.lo + self.delta * np.arange(self.n)
        x[-1] = self.hi
        return x


def _half_width(model: ScalarStateModel, grid: Grid, shift: float) -> int:
    reach = abs(shift) + model.step * model.noise.scale * TAIL
    return int(min(grid.n - 1, math.ceil(reach / grid.delta) + 1))


def grid_for(model: ScalarStateModel, rounds: int, passes: int, work: float = WORK,
             n: Optional[int] = None) -> Grid:
    """The finest odd grid whose recursion (``passes`` chains of ``rounds``
    rounds) costs at most ``work`` multiply-adds, between MIN_GRID and
    MAX_GRID points (or exactly ``n``)."""
    def make(k):
        return Grid(model.lo, model.hi, int(k) | 1)

    if n is not None:
        if n < 3:
            raise ValueError(f"grid size must be >= 3, got {n}")
        return make(n)
    lo, hi = MIN_GRID, MAX_GRID
    if _cost(model, make(hi), rounds, passes) <= work:
        return make(hi)
    while hi - lo > 2:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _cost(model, make(mid), rounds, passes) <= work else (lo, mid)
    return make(lo)


def _cost(model, grid, rounds, passes) -> float:
    return passes * max(rounds, 1) * grid.n * (2 * _half_width(model, grid, model.step) + 1)


class _Chain:
    """One rounded chain over ``grid`` (``up``: state ≥ truth; else ≤)."""

    def __init__(self, model: ScalarStateModel, grid: Grid, up: bool):
        self.model, self.grid, self.up = model, grid, up
        self.kernels: dict = {}
        self.probs = np.clip(np.asarray(model.action_probs(grid.x), dtype=float), 0.0, 1.0)

    def start(self) -> tuple[np.ndarray, float]:
        """The start state's mass and the extra log margin of placing it on
        the grid (0 when it lies on a grid point)."""
        g, model = self.grid, self.model
        v = (model.start - g.lo) / g.delta
        near = round(v)
        mass = np.zeros(g.n)
        if abs(v - near) <= 1e-9:
            # On a grid point up to floating point: the start is moved by at
            # most 1e-9 Δ; paths move by no more (the chain is monotone and
            # clipping contracts), which changes each weight by a factor
            # e^{±L·1e-9·Δ} (L the largest |d ln p/du| on the grid) and the
            # first kernel by e^{±1e-9·Δ/(step·b)·(1 + TAIL)}: both are
            # covered by this margin per round.
            idx = int(min(max(near, 0), g.n - 1))
            slope = self._log_slope()
            margin = 4e-9 * g.delta * (slope + (1 + TAIL) / (model.step * model.noise.scale))
        else:
            idx = int(math.ceil(v)) if self.up else int(math.floor(v))
            margin = 0.0
        mass[idx] = 1.0
        return mass, margin

    def _log_slope(self) -> float:
        p = np.maximum(self.probs, 1e-300)
        d = np.abs(np.diff(np.log(p), axis=0)) / self.grid.delta
        return float(d.max()) if d.size else 0.0

    def kernel(self, shift: float):
        key = float(shift)
        if key not in self.kernels:
            self.kernels[key] = self._kernel(key)
        return self.kernels[key]

    def _kernel(self, s: float):
        model, g = self.model, self.grid
        d, step, noise = g.delta, model.step, model.noise
        M = _half_width(model, g, s)
        m = np.arange(-M, M + 1, dtype=float)
        if self.up:    # offset ⌈(s + step·D)/Δ⌉ = m  ⇔  (m−1)Δ < s + step·D ≤ mΔ
            q = noise.interval(((m - 1) * d - s) / step, (m * d - s) / step)
            q[0] = noise.cdf((-M * d - s) / step)              # every offset ≤ −M, placed at −M
            far = float(noise.sf((M * d - s) / step))          # offsets > M: to hi
        else:          # offset ⌊(s + step·D)/Δ⌋ = m  ⇔  mΔ ≤ s + step·D < (m+1)Δ
            q = noise.interval((m * d - s) / step, ((m + 1) * d - s) / step)
            q[-1] = noise.sf((M * d - s) / step)               # every offset ≥ M, placed at M
            far = float(noise.cdf((-M * d - s) / step))        # offsets < −M: to lo
        per_round = (64 + 4 * (2 * M + 3)) * ULP
        return M, np.maximum(q, 0.0), far, per_round

    def step(self, mass: np.ndarray, shift: float) -> tuple[np.ndarray, float]:
        """The next round's mass, and this round's relative error bound."""
        M, q, far, err = self.kernel(shift)
        new = _move(mass, q, M)
        if far > 0.0:
            new[-1 if self.up else 0] += far * mass.sum()
        return new, err


def _move(mass: np.ndarray, q: np.ndarray, M: int) -> np.ndarray:
    """Every grid point's mass moved by each offset −M … M with the
    probabilities ``q``; mass moved past either end of the grid is folded
    onto that end (the clip)."""
    n = mass.size
    full = np.convolve(mass, q)
    new = full[M:M + n].copy()
    new[0] += full[:M].sum()
    new[-1] += full[M + n:].sum()
    return new


def _shifts(model: ScalarStateModel, losses: np.ndarray, rounds: int) -> list[float]:
    return [float(model.shift(np.asarray(losses[t], dtype=float))) for t in range(rounds)]


def _lower_chain_is_up(model: ScalarStateModel, arm: int) -> bool:
    """For an arm decreasing in u the up chain gives the lower bound."""
    direction = model.monotone[arm]
    if direction == 0:
        raise ValueError(f"arm {arm + 1}'s probability is not declared monotone in the state")
    return direction < 0


@dataclass
class RunBounds:
    """Bounds on ln P(J_t = arm for every t in start..k), one per k in
    ``ends`` (0-based rounds)."""

    arm: int
    start: int
    ends: np.ndarray
    log_lo: np.ndarray
    log_hi: np.ndarray


def _run_pass(chain: _Chain, shifts, rounds: int, start: int, arm: int, mass=None,
              margin: float = 0.0, from_round: int = 0):
    """ln of the chain's P(run of ``arm`` from ``start`` through k), for
    every k, with its accumulated floating-point margin per k."""
    if mass is None:
        mass, margin = chain.start()
        from_round = 0
    p = chain.probs[:, arm]
    logscale, out, margins = 0.0, [], []
    for t in range(from_round, rounds):
        if t >= start:
            mass = mass * p
            tot = float(mass.sum())
            if not tot > 0.0:
                out += [-math.inf] * (rounds - t)
                margins += [margin] * (rounds - t)
                break
            lt = math.log(tot)
            logscale += lt
            # the total of n weighted terms, its logarithm, the running sum
            margin += (mass.size + 8) * ULP + 8 * ULP * (abs(lt) + 1.0) + 2 * ULP * abs(logscale)
            mass = mass / tot
            margin += 4 * ULP
            out.append(logscale)
            margins.append(margin)
        if t == rounds - 1:
            break
        mass, err = chain.step(mass, shifts[t])
        margin += err
    return np.array(out), np.array(margins)


def _prefix(chain: _Chain, shifts, upto: int):
    """The chain's mass at round ``upto`` (0-based, before its action), with
    its margin: the part every run event starting at ``upto`` shares."""
    mass, margin = chain.start()
    for t in range(upto):
        mass, err = chain.step(mass, shifts[t])
        margin += err
    return mass, margin


def run_bounds(model: ScalarStateModel, losses: np.ndarray, rounds: int, start: int, arm: int,
               grid: Grid, prefixes: Optional[dict] = None) -> RunBounds:
    """Certified bounds on ln P(J_t = ``arm`` for every t in start..k) for
    k = start … rounds − 1 under ``losses`` (rows 0 … rounds − 2 are used)."""
    if not 0 <= start < rounds:
        raise ValueError(f"start must be a round in [0, {rounds - 1}], got {start}")
    shifts = _shifts(model, losses, rounds)
    lower_up = _lower_chain_is_up(model, arm)
    res = {}
    for up in (True, False):
        chain = _Chain(model, grid, up)
        key = (up, start)
        if prefixes is not None and key in prefixes:
            mass, margin = prefixes[key]
        else:
            mass, margin = _prefix(chain, shifts, start)
            if prefixes is not None:
                prefixes[key] = (mass, margin)
        res[up] = _run_pass(chain, shifts, rounds, start, arm, mass, margin, start)
    lo, lo_m = res[lower_up]
    hi, hi_m = res[not lower_up]
    bounds = RunBounds(arm, start, np.arange(start, start + lo.size), lo - lo_m, hi + hi_m)
    _ordered(bounds.log_lo, bounds.log_hi, f"run of arm {arm + 1} from round {start + 1}")
    return bounds


def _ordered(lo, hi, what: str) -> None:
    """A bracket whose lower end lies above its upper end means the model's
    premises (monotone directions) do not hold: an internal error, never a
    result.  (``state-monotone`` refuses such a model before it gets here.)"""
    bad = np.flatnonzero(np.asarray(lo) > np.asarray(hi))
    if bad.size:
        j = int(bad[0])
        raise ArithmeticError(f"recursion bracket out of order for the {what}: lower end "
                              f"{float(np.asarray(lo)[j]):.6g} above upper end "
                              f"{float(np.asarray(hi)[j]):.6g}")


def estimate_runs(model: ScalarStateModel, losses: np.ndarray, rounds: int, start: int,
                  arm: int, grid: Grid) -> np.ndarray:
    """ln P(J_t = ``arm`` for every t in start..k), k = start … rounds − 1, by
    the chain that rounds each new state to the *nearest* grid point: an
    estimate, NOT a bound.  Its rounding errors have mean ≈ 0, so it
    converges as the grid is refined (a few digits at grids where the
    certified up/down brackets are still wide: their one-sided rounding
    drifts by up to Δ a round, which over long horizons dominates).  Use it
    to locate and size an event; only ``run_bounds`` certifies."""
    shifts = _shifts(model, losses, rounds)
    d, step, noise = grid.delta, model.step, model.noise
    probs = np.clip(np.asarray(model.action_probs(grid.x), dtype=float)[:, arm], 0.0, 1.0)
    kernels: dict = {}
    mass = np.zeros(grid.n)
    mass[int(round((model.start - grid.lo) / d))] = 1.0
    logscale, out = 0.0, []
    for t in range(rounds):
        if t >= start:
            mass = mass * probs
            tot = float(mass.sum())
            if not tot > 0.0:
                return np.array(out + [-math.inf] * (rounds - t))
            logscale += math.log(tot)
            mass = mass / tot
            out.append(logscale)
        if t == rounds - 1:
            break
        s = shifts[t]
        if s not in kernels:
            M = _half_width(model, grid, s)
            m = np.arange(-M, M + 1, dtype=float)
            q = noise.interval(((m - 0.5) * d - s) / step, ((m + 0.5) * d - s) / step)
            q[0] += noise.cdf(((-M - 0.5) * d - s) / step)
            q[-1] += noise.sf(((M + 0.5) * d - s) / step)
            kernels[s] = (M, q)
        M, q = kernels[s]
        mass = _move(mass, q, M)
    return np.array(out)


def marginal_bounds(model: ScalarStateModel, losses: np.ndarray, rounds: int,
                    grid: Grid) -> tuple[np.ndarray, np.ndarray]:
    """Certified bounds on P(J_t = i), arrays (rounds, K); NaN for arms not
    declared monotone."""
    shifts = _shifts(model, losses, rounds)
    K = model.n_arms
    E = {}
    for up in (True, False):
        chain = _Chain(model, grid, up)
        mass, margin = chain.start()
        vals = np.empty((rounds, K))
        rel = np.empty(rounds)
        for t in range(rounds):
            vals[t] = mass @ chain.probs
            rel[t] = margin + (grid.n + 8) * ULP
            if t < rounds - 1:
                mass, err = chain.step(mass, shifts[t])
                margin += err
        E[up] = (vals, rel)
    lo = np.full((rounds, K), np.nan)
    hi = np.full((rounds, K), np.nan)
    for i, direction in enumerate(model.monotone):
        if direction == 0:
            continue
        low, high = (E[True], E[False]) if direction < 0 else (E[False], E[True])
        lo[:, i] = np.clip(low[0][:, i] * np.exp(-low[1]), 0.0, 1.0)
        hi[:, i] = np.clip(high[0][:, i] * np.exp(high[1]), 0.0, 1.0)
        _ordered(lo[:, i], hi[:, i], f"marginal of arm {i + 1}")
    return lo, hi


# ------------------------------------------------------------ certificates
# Run events start at each of the first few rounds after the change.
STARTS = 3


def run_starts(scenario, count: int = STARTS) -> list[int]:
    """The rounds (0-based) where a scenario's run events start: the first
    ``count`` rounds after its first changed round (the actions before it
    have the same law on both sides)."""
    changed = scenario.differing_rounds()
    first = int(changed[0]) + 1 if changed.size else 0
    return [s for s in range(first, first + count) if s < scenario.rounds]


@dataclass
class RunCertificate:
    """A run event E = {J_t = arm for t in start..end} with certified bounds
    on ln P_num(E) (below) and ln P_den(E) (above), in ``direction`` ("l>l'":
    numerator ℓ), and the ε lower bound they give: ln((P_num − δ)/P_den)."""

    arm: int
    start: int
    end: int
    direction: str
    log_p_num_lo: float
    log_p_num_hi: float
    log_p_den_lo: float
    log_p_den_hi: float
    epsilon_lower_bound: float

    @property
    def description(self) -> str:
        return (f"J_t = {self.arm + 1} for every t in {self.start + 1}..{self.end + 1}")

    @property
    def log_ratio_interval(self) -> tuple[float, float]:
        """Where the exact ln P_num(E) − ln P_den(E) lies."""
        return (self.log_p_num_lo - self.log_p_den_hi, self.log_p_num_hi - self.log_p_den_lo)

    def as_dict(self) -> dict:
        lo, hi = self.log_ratio_interval
        return {"event": self.description, "direction": self.direction,
                "log_p_numerator": [self.log_p_num_lo, self.log_p_num_hi],
                "log_p_denominator": [self.log_p_den_lo, self.log_p_den_hi],
                "log_ratio": [lo, hi], "epsilon_lower_bound": self.epsilon_lower_bound}


def _eps_lb(log_num_lo: float, log_den_hi: float, delta: float) -> float:
    if delta <= 0:
        return max(0.0, log_num_lo - log_den_hi)
    if log_num_lo <= math.log(delta):
        return 0.0
    # ln(P − δ) = ln P + ln(1 − δ/P)
    return max(0.0, log_num_lo + math.log1p(-math.exp(math.log(delta) - log_num_lo))
               - log_den_hi)


@dataclass
class RecursionResult:
    """Every run event tried on one pair, the grid, and the best certificate."""

    grid: Grid
    certificates: list = field(default_factory=list)

    @property
    def best(self) -> Optional[RunCertificate]:
        if not self.certificates:
            return None
        return max(self.certificates,
                   key=lambda c: (c.epsilon_lower_bound, c.log_ratio_interval[0]))


def certify_runs(model: ScalarStateModel, losses_a: np.ndarray, losses_b: np.ndarray,
                 rounds: int, starts: Sequence[int], delta: float = 0.0,
                 grid: Optional[Grid] = None) -> RecursionResult:
    """Certified bounds for every run event {J_t = i for t in s..k} (s in
    ``starts``, monotone arms i, k up to rounds − 1), in both directions of
    the pair."""
    arms = [i for i, d in enumerate(model.monotone) if d != 0]
    starts = sorted({int(s) for s in starts if 0 <= s < rounds})
    if grid is None:
        grid = grid_for(model, rounds, passes=4 * max(1, len(arms) * len(starts)))
    out = RecursionResult(grid)
    if not arms or not starts:
        return out
    bounds = {}
    for side, losses in (("a", losses_a), ("b", losses_b)):
        prefixes: dict = {}
        for s in starts:
            for i in arms:
                bounds[side, s, i] = run_bounds(model, losses, rounds, s, i, grid, prefixes)
    for s in starts:
        for i in arms:
            A, B = bounds["a", s, i], bounds["b", s, i]
            for j, k in enumerate(A.ends):
                for direction, num, den in (("l>l'", A, B), ("l'>l", B, A)):
                    out.certificates.append(RunCertificate(
                        i, s, int(k), direction, float(num.log_lo[j]), float(num.log_hi[j]),
                        float(den.log_lo[j]), float(den.log_hi[j]),
                        _eps_lb(float(num.log_lo[j]), float(den.log_hi[j]), delta)))
    return out
