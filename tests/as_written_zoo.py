"""Learners and mechanisms written the way people write them — a DP testers'
class asked for samples, a function of one number, ``from random import
…``, a fused ``step(last_reward, last_arm)``, ``predict(t)``/
``observe_loss(t, ·)``, a learner that pulls its own rewards — each with a
bug of a kind seen in real code and a correct twin.  Every entry's true ε
is derived in its docstring (``TRUE_EPSILON`` holds the figures); ``CASES``
lists (name, audit flags, expected verdict).  Used by
``tests/test_as_written_zoo.py`` and ``benchmarks/as_written_zoo.py``.
"""
from __future__ import annotations

import math
import random
from random import choices
from numpy.random import laplace as np_laplace

import numpy as np

EPS = 0.5
ETC_EXPLORE = 4          # explore-then-commit: rounds of round-robin exploration
ETC_HORIZON = 10


# ------------------------------------------------ DP testers' classes, m(a, n)
class SniperLaplace:
    """DP-Sniper's Laplace mechanism as its repository writes it: the first
    answer plus Laplace(1/ε).  Answers in [0, 1] (sensitivity 1): ε = 0.1
    in real arithmetic (the Laplace mechanism).  In doubles it is not
    ε-DP for any ε: numpy computes loc + scale·ln(2U), so from loc = 1 every
    output is a multiple of 2⁻⁵³ while from loc = 0 outputs near 0 are not
    (Mironov 2012): true ε = ∞."""

    def __init__(self, eps: float = 0.1):
        self.eps = eps

    def m(self, a, n_samples: int = 1):
        loc = a[0]
        return np.random.laplace(loc=loc, scale=1 / self.eps, size=n_samples)


class SniperLaplaceHalfScale(SniperLaplace):
    """The scale written 1/(2ε) (a sensitivity halved by mistake): Laplace
    of scale b = 1/(2ε) on sensitivity 1 has true ε = 1/b = 2ε = 0.2."""

    def m(self, a, n_samples: int = 1):
        return np.random.laplace(loc=a[0], scale=1 / (2 * self.eps), size=n_samples)


# ------------------------------------------------ floating point
SNAP_LAMBDA = 10.0       # the noise scale λ = Δ/ε of the snapping mechanism (ε = 0.1)
SNAP_BOUND = 1000.0      # its clamp B (Mironov's Theorem 1 needs λ < B < 2^46·λ)
# Mironov, "On significance of the least significant bits for differential
# privacy" (CCS 2012), Theorem 1: the snapping mechanism of sensitivity-1
# queries is (1/λ + 2^-49·B/λ)-DP.
SNAP_EPSILON = 1 / SNAP_LAMBDA + 2.0 ** -49 * SNAP_BOUND / SNAP_LAMBDA


def snapping_laplace(x, rng):
    """Mironov's snapping mechanism (CCS 2012, §5.2), the fix of the
    textbook sampler: the answer clamped to [−B, B], plus S·λ·ln(U*) with S
    a fair sign and U* uniform over the doubles of (0, 1) at full precision
    (a geometric exponent and 52 random mantissa bits), rounded to the
    nearest multiple of Λ (the least power of two ≥ λ), clamped again.  Its
    outputs are multiples of Λ = 16 whatever the input, so the doubles it
    can reach do not depend on it.  True ε (in doubles) at most
    ``SNAP_EPSILON`` = 0.1 + 2^-49·100 (Theorem 1), its claim."""
    a = min(max(float(x[0]), -SNAP_BOUND), SNAP_BOUND)
    u = math.ldexp(1.0 + int(rng.integers(0, 2 ** 52)) / 2.0 ** 52, -int(rng.geometric(0.5)))
    sign = 1.0 if rng.random() < 0.5 else -1.0
    grid = 2.0 ** math.ceil(math.log2(SNAP_LAMBDA))
    snapped = grid * round((a + sign * SNAP_LAMBDA * math.log(u)) / grid)
    return min(max(snapped, -SNAP_BOUND), SNAP_BOUND)


snapping_laplace.claim_epsilon = SNAP_EPSILON


# ------------------------------------------------------- one plain number
def scalar_laplace(x: float, rng, epsilon=EPS):
    """A function of one number: ``x + Lap(1/ε)`` after a clamp to [0, 1]
    (the code fails on an array: ``min``/``max`` of one).  Sensitivity 1:
    ε in real arithmetic; in doubles 1 + noise is a multiple of 2⁻⁵³ and
    0 + noise need not be (``SniperLaplace``): true ε = ∞."""
    x = min(max(x, 0.0), 1.0)
    return x + rng.laplace(0.0, 1.0 / epsilon)


def scalar_gaussian(x: float, rng, epsilon=EPS):
    """Gaussian noise under a pure-ε claim: the ratio of two Gaussian
    densities a shift apart is unbounded, true ε = ∞."""
    x = min(max(x, 0.0), 1.0)
    return x + rng.normal(0.0, 1.0 / epsilon)


# ---------------------------------------------- sources imported by name
def rr_choices(x, epsilon=EPS):
    """Randomized response on the first answer's bit with ``from random
    import choices``: keep with p = e^ε/(1 + e^ε).  True ε = ε."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    bit = 1 if x[0] > 0.5 else 0
    keep = choices([True, False], weights=[p, 1 - p])[0]
    return bit if keep else 1 - bit


def rr_choices_bug(x, epsilon=EPS):
    """The keep probability written with e^{2ε}: p/(1 − p) = e^{2ε}, true ε = 2ε."""
    p = math.exp(2 * epsilon) / (1 + math.exp(2 * epsilon))
    bit = 1 if x[0] > 0.5 else 0
    keep = choices([True, False], weights=[p, 1 - p])[0]
    return bit if keep else 1 - bit


def bit_flip(bit, epsilon=EPS):
    """Warner's randomized response on one bit, unannotated: keep with
    p = e^ε/(1 + e^ε).  True ε = ε on bits; over the reals [0, 1] it would
    "return" 0.38 on one input only (∞) — the audit must take it on bits."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return bit if random.random() < p else 1 - bit


def bit_flip_bug(bit, epsilon=EPS):
    """The keep probability written with e^{2ε}: true ε = 2ε."""
    p = math.exp(2 * epsilon) / (1 + math.exp(2 * epsilon))
    return bit if random.random() < p else 1 - bit


class BitFlipStream:
    """Randomized response on each round's bit through ``update(bit)``,
    one round changes: true ε = ε on bits."""

    factor = 1.0

    def __init__(self, epsilon=EPS):
        self.p = math.exp(self.factor * epsilon) / (1 + math.exp(self.factor * epsilon))

    def update(self, bit):
        return bit if random.random() < self.p else 1 - bit


class BitFlipStreamBug(BitFlipStream):
    """Keeping each bit with e^{2ε}/(1 + e^{2ε}): true ε = 2ε."""

    factor = 2.0


def sum_laplace_imported(x, epsilon=EPS):
    """``from numpy.random import laplace``: the sum of the answers plus
    Lap(1/ε); one answer changes by at most 1: ε in real arithmetic, ∞ in
    doubles (sums 0 and 1 reach different doubles, ``SniperLaplace``)."""
    return float(np.sum(x)) + np_laplace(0.0, 1.0 / epsilon)


def mean_laplace_imported(x, epsilon=EPS):
    """The mean's noise scaled for the mean, released as the sum: the sum
    plus Lap(1/(nε)) — sensitivity 1 at scale 1/(nε), true ε = nε (n = 10
    answers: 5)."""
    n = len(x)
    return float(np.sum(x)) + np_laplace(0.0, 1.0 / (n * epsilon))


# ---------------------------------------------------- explore-then-commit
def _etc_arm(sums, rng_laplace, epsilon):
    noisy = [s + rng_laplace(1.0 / epsilon) for s in sums]
    return max(range(len(sums)), key=lambda a: noisy[a])


def _log_diff_laplace_tail(x: float, b: float) -> float:
    """log P(L0 − L1 > x) for x ≥ 0 and independent Laplace(b) draws
    (by symmetry also log P(L0 − L1 < −x)): the tail is
    ½·e^{−x/b}·(1 + x/(2b)), taken in logs so that far tails do not
    underflow."""
    return math.log(0.5) - x / b + math.log1p(x / (2 * b))


def _log_sides(d: float, b: float) -> tuple[float, float]:
    """(log p, log(1 − p)) for p = P(L0 − L1 > −d)."""
    small = _log_diff_laplace_tail(abs(d), b)
    large = math.log1p(-math.exp(small))
    return (large, small) if d >= 0 else (small, large)


def etc_true_epsilon(decisions: int = 1, epsilon=EPS, explore=ETC_EXPLORE) -> float:
    """True ε of explore-then-commit on K = 2 arms making ``decisions``
    noisy argmaxes of the explore sums (1, or T − m when re-drawn): its
    output is the explore rounds (fixed) and k = T − m independent noisy
    argmaxes of the same sums; each arm's sum lies in [0, m/2], so the
    difference Δ = S₀ − S₁ in [−m/2, m/2], and one changed reward moves it
    by at most 1.  k Bernoulli(p) draws against Bernoulli(p′) have privacy
    loss k·max(|log p/p′|, |log (1−p)/(1−p′)|) (all k alike); the maximum
    over Δ and its neighbour Δ ± 1 (both in range) of that is the true ε,
    with p = P(L₀ − L₁ > −Δ)."""
    b, k, half = 1.0 / epsilon, decisions, explore / 2
    grid = np.linspace(-half, half, 401)
    worst = 0.0
    for d in grid:
        for e in (d - 1, d + 1):
            if -half - 1e-12 <= e <= half + 1e-12:
                (lp, lq_), (lq, lnq) = _log_sides(d, b), _log_sides(e, b)
                worst = max(worst, abs(lp - lq), abs(lq_ - lnq))
    return k * worst


class FusedETC:
    """A fused learner, ``step(last_reward, last_arm) -> arm``: round-robin
    for m = 4 rounds, then one noisy argmax of the arms' reward sums
    (Lap(1/ε) each), committed to.  A changed round moves one arm's sum by
    at most 1 (explore rounds) or nothing (later rounds): report-noisy-max
    with one coordinate moved is ε-DP; the rest is post-processing.  True
    ε = ``etc_true_epsilon(1)`` ≈ 0.33 (the sums are bounded) ≤ ε = 0.5."""
    claim_epsilon = EPS

    def __init__(self, n_arms=2, epsilon=EPS, seed=None):
        self.k, self.eps = n_arms, epsilon
        self.sums = [0.0] * n_arms
        self.t = 0
        self.commit = None
        self.rng = np.random.default_rng(seed)

    def _noise(self, scale):
        return self.rng.laplace(0.0, scale)

    def step(self, last_reward=None, last_arm=None):
        if last_arm is not None and self.t <= ETC_EXPLORE:
            self.sums[last_arm] += last_reward
        self.t += 1
        if self.t <= ETC_EXPLORE:
            return (self.t - 1) % self.k
        if self.commit is None:
            self.commit = _etc_arm(self.sums, self._noise, self.eps)
        return self.commit


class FusedETCRedraw(FusedETC):
    """The commit decision re-drawn every round (the noise drawn inside the
    loop instead of once): T − m = 6 noisy argmaxes of the same sums, true
    ε = ``etc_true_epsilon(6)``."""

    def step(self, last_reward=None, last_arm=None):
        if last_arm is not None and self.t <= ETC_EXPLORE:
            self.sums[last_arm] += last_reward
        self.t += 1
        if self.t <= ETC_EXPLORE:
            return (self.t - 1) % self.k
        return _etc_arm(self.sums, self._noise, self.eps)


# ------------------------------------------- predict(t) / observe_loss(t, ·)
def exp_mech_true_epsilon(factor: float, epsilon=EPS, explore=ETC_EXPLORE) -> float:
    """True ε of ``RoundExpMech`` (K = 2): the output is the uniform explore
    plays (no data) then one choice, expert 0 with p = σ(f·ε·d), d = L₁ − L₀
    in [−m, m]; one round's losses move d by at most 2.  The largest
    |log p/p′| or |log (1 − p)/(1 − p′)| over d and d′ within 2 of it."""
    def log_sig(x):
        return -math.log1p(math.exp(-x))
    grid = np.linspace(-explore, explore, 801)
    worst = 0.0
    for d in grid:
        e = min(d + 2, explore)
        a, c = factor * epsilon * d, factor * epsilon * e
        worst = max(worst, abs(log_sig(c) - log_sig(a)), abs(log_sig(-c) - log_sig(-a)))
    return worst


class RoundExpMech:
    """``predict(t)``/``observe_loss(t, losses)`` (full information): plays
    uniformly for m = 4 rounds, then picks an expert once by the
    exponential mechanism on the cumulative losses, weight e^{−ε·L/2}, and
    keeps it.  One round's losses change every expert's total by at most 1
    (sensitivity 1): the exponential mechanism at ε/2 per unit is ε-DP, the
    uniform rounds ignore the data; true ε = ``exp_mech_true_epsilon(0.5)``
    ≈ 0.34 ≤ ε."""
    claim_epsilon = EPS
    factor = 0.5

    def __init__(self, n_arms=2, epsilon=EPS):
        self.k, self.eps = n_arms, epsilon
        self.total = np.zeros(n_arms)
        self.choice = None

    def predict(self, t):
        if t < ETC_EXPLORE:
            return random.randrange(self.k)
        if self.choice is None:
            w = np.exp(-self.factor * self.eps * (self.total - self.total.min()))
            self.choice = random.choices(range(self.k), weights=w.tolist())[0]
        return self.choice

    def observe_loss(self, t, losses):
        if t < ETC_EXPLORE:
            self.total += losses


class RoundExpMechBug(RoundExpMech):
    """The weight written e^{−ε·L} (the exponential mechanism's 2 dropped):
    true ε = ``exp_mech_true_epsilon(1.0)`` ≈ 0.81 > ε (below 2ε since the
    explore sums are bounded)."""
    factor = 1.0


class RoundBanditETC:
    """A bandit learner told only its loss: ``predict(t)`` and
    ``observe_loss(t, loss)``; explore-then-commit as ``FusedETC`` on
    losses (argmin of noisy loss sums).  True ε ≤ ε."""
    claim_epsilon = EPS
    redraw = False

    def __init__(self, n_arms=2, epsilon=EPS):
        self.k, self.eps = n_arms, epsilon
        self.sums = np.zeros(n_arms)
        self.arm, self.commit = 0, None

    def predict(self, t):
        if t < ETC_EXPLORE:
            self.arm = t % self.k
        elif self.commit is None or self.redraw:
            self.commit = int(np.argmin(self.sums + np.random.laplace(0, 1 / self.eps, self.k)))
            self.arm = self.commit
        return self.arm

    def observe_loss(self, t, loss):
        if t < ETC_EXPLORE:
            self.sums[self.arm] += loss


class RoundBanditETCRedraw(RoundBanditETC):
    """Re-draws the commit each round: as ``FusedETCRedraw``, true ε =
    ``etc_true_epsilon(6)``."""
    redraw = True


# ------------------------------------------- a learner pulling its own rewards
class SelfPlayingETC:
    """Plays with ``run_round()`` and draws its reward from its own
    simulated environment, ``pull_arm(arm)``: the audit supplies the
    rewards.  Explore-then-commit as ``FusedETC``: true ε ≤ ε."""
    claim_epsilon = EPS
    noise = True

    def __init__(self, n_arms=2, epsilon=EPS):
        self.k, self.eps = n_arms, epsilon
        self.sums = np.zeros(n_arms)
        self.t, self.commit = 0, None
        self.rng = np.random.default_rng()

    def pull_arm(self, arm):
        return float(self.rng.random() < 0.5)        # replaced by the audit

    def run_round(self):
        if self.t < ETC_EXPLORE:
            arm = self.t % self.k
            self.sums[arm] += self.pull_arm(arm)
        else:
            if self.commit is None:
                noise = self.rng.laplace(0, 1 / self.eps, self.k) if self.noise else 0.0
                self.commit = int(np.argmax(self.sums + noise))
            self.pull_arm(self.commit)
        self.t += 1


class SelfPlayingETCNoNoise(SelfPlayingETC):
    """The noise left out: the commit is a deterministic function of the
    explore rewards, which one changed reward flips — true ε = ∞."""
    noise = False


class EnvTakingETC:
    """Takes its environment in the constructor (``env.pull(arm)``), as
    gym-style bandit code does; explore-then-commit as ``FusedETC``, true ε ≤ ε."""
    claim_epsilon = EPS

    def __init__(self, env, n_arms=2, epsilon=EPS):
        self.env, self.k, self.eps = env, n_arms, epsilon
        self.sums = np.zeros(n_arms)
        self.t, self.commit = 0, None

    def step(self):
        if self.t < ETC_EXPLORE:
            arm = self.t % self.k
        else:
            if self.commit is None:
                self.commit = int(np.argmax(self.sums + np.random.laplace(0, 1 / self.eps,
                                                                           self.k)))
            arm = self.commit
        r = self.env.pull(arm)
        if self.t < ETC_EXPLORE:
            self.sums[arm] += r
        self.t += 1


LATE_EXPLORE = 176       # a long exploration: the commit shows 176 rounds after round 1
LATE_HORIZON = 200


class LateCommitETC:
    """Explore-then-commit with a long exploration: round-robin for m = 176
    rounds, then one noisy argmax of the arms' reward sums (Lap(1/ε)
    each), committed to.  Nothing it plays before round 177 depends on the
    rewards, so a changed reward shows 176 rounds later at the earliest.
    The sums lie in [0, m/2]: true ε = ``etc_true_epsilon(1, explore=176)``
    ≤ ε."""
    claim_epsilon = EPS

    def __init__(self, n_arms=2, epsilon=EPS):
        self.k, self.eps = n_arms, epsilon
        self.sums = np.zeros(n_arms)
        self.t = 0
        self.commit = None

    def noise_scale(self):
        return 1.0 / self.eps

    def select_arm(self):
        if self.t < LATE_EXPLORE:
            return self.t % self.k
        if self.commit is None:
            noisy = self.sums + np.random.laplace(0.0, self.noise_scale(), self.k)
            self.commit = int(np.argmax(noisy))
        return self.commit

    def update(self, arm, reward):
        if self.t < LATE_EXPLORE:
            self.sums[arm] += reward
        self.t += 1


class LateCommitETCMeanNoise(LateCommitETC):
    """The noise scaled for the arms' means (1/(ε·m/2)) but added to their
    sums: report-noisy-max at scale 2/(m·ε) on sums of sensitivity 1,
    true ε = ``etc_true_epsilon(1, ε·m/2, explore=176)`` ≈ 43."""

    def noise_scale(self):
        return 2.0 / (self.eps * LATE_EXPLORE)


# ------------------------------------------------ the DP testers' programs, as written
def testers_noisy_max(queries, epsilon):
    """Report noisy max as the DP testers' benchmark programs write it: the
    input and ε, noise from ``np.random``: the index of the largest answer
    plus Laplace noise of scale 2/ε, ε-DP when every answer may move by 1
    (``relation = "bounded-all"``); the ratio of an index's probabilities
    approaches e^ε on the worst pairs, so the true ε is ε (an index has
    no floating-point grain)."""
    noisy = [q + np.random.laplace(scale=2.0 / epsilon) for q in queries]
    return int(np.argmax(noisy))


def testers_svt_exact_queries(queries, epsilon, N=1, T=0.5):
    """A sparse vector whose queries carry no noise (only the threshold
    does): from (1, 0, …) the answers (False, True) need 1 < T + ρ ≤ 0 and
    never occur, from its neighbour (0, 1, …) they need 0 < T + ρ ≤ 1, so
    the true ε is ∞."""
    out, count = [], 0
    noisy_threshold = T + np.random.laplace(scale=2.0 / epsilon)
    for q in queries:
        if q >= noisy_threshold:
            out.append(True)
            count += 1
            if count >= N:
                break
        else:
            out.append(False)
    return out


testers_noisy_max.relation = testers_svt_exact_queries.relation = "bounded-all"
testers_noisy_max.max_change = testers_svt_exact_queries.max_change = 1.0


ONCE, REDRAW = etc_true_epsilon(1), etc_true_epsilon(ETC_HORIZON - ETC_EXPLORE)
# The true ε of the code as it runs, in doubles (where rounding decides,
# the ε over the reals is in ``REAL_EPSILON``).
TRUE_EPSILON = {
    "SniperLaplace": math.inf, "SniperLaplaceHalfScale": math.inf,
    "snapping_laplace": SNAP_EPSILON,
    "scalar_laplace": math.inf, "scalar_gaussian": math.inf,
    "rr_choices": EPS, "rr_choices_bug": 2 * EPS,
    "bit_flip": EPS, "bit_flip_bug": 2 * EPS,
    "BitFlipStream": EPS, "BitFlipStreamBug": 2 * EPS,
    "sum_laplace_imported": math.inf, "mean_laplace_imported": math.inf,
    "FusedETC": ONCE, "FusedETCRedraw": REDRAW,
    "RoundExpMech": exp_mech_true_epsilon(0.5), "RoundExpMechBug": exp_mech_true_epsilon(1.0),
    "RoundBanditETC": ONCE, "RoundBanditETCRedraw": REDRAW,
    "SelfPlayingETC": ONCE, "SelfPlayingETCNoNoise": math.inf,
    "EnvTakingETC": ONCE,
    "LateCommitETC": etc_true_epsilon(1, explore=LATE_EXPLORE),
    "LateCommitETCMeanNoise": etc_true_epsilon(1, EPS * LATE_EXPLORE / 2, LATE_EXPLORE),
    "testers_noisy_max": EPS, "testers_svt_exact_queries": math.inf,
}
# The ε of the same mechanism over the reals, where it differs: what the
# exact white-box evidence (a trace of continuous draws) computes.
REAL_EPSILON = {"SniperLaplace": 0.1, "SniperLaplaceHalfScale": 0.2, "scalar_laplace": EPS,
                "sum_laplace_imported": EPS, "mean_laplace_imported": 10 * EPS}
CLAIM = {"SniperLaplace": 0.1, "SniperLaplaceHalfScale": 0.1,
         "snapping_laplace": SNAP_EPSILON}      # the others claim EPS
LEARNER = ["--horizon", str(ETC_HORIZON)]
# (name, extra flags, expected verdict): violation where the true ε is above the claim.
FLAGS = {"LateCommitETC": ["--horizon", str(LATE_HORIZON)],
         "testers_noisy_max": ["--epsilon", str(EPS)],
         "testers_svt_exact_queries": ["--epsilon", str(EPS)],
         "LateCommitETCMeanNoise": ["--horizon", str(LATE_HORIZON)]}
CASES = [(name, FLAGS.get(name, LEARNER if name[0].isupper() and not name.startswith("Sniper")
                          else []),
          "violation" if eps > CLAIM.get(name, EPS) * (1 + 1e-9) else "consistent")
         for name, eps in TRUE_EPSILON.items()]
