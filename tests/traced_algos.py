"""Mechanisms with continuous noise written as people write them — plain
functions and classes, no declaration, no attribute but the claim — for the
tests of exact evidence from the trace of the code's own continuous draws
(``algorithms.replay.noise`` and ``paths``).  Half are correct, half buggy;
``TRUE`` gives each one's true ε on its own terms (its output, its
neighbouring relation, over the reals: each says ``floating_point = False``)
and ``STRUCTURE`` what the trace should recognise.
"""
from __future__ import annotations

import math
import random

import numpy as np


# ------------------------------------------------------------- releases
def laplace_sum(x, rng, epsilon=0.5):
    """The sum of the answers plus Laplace(1/ε): one answer moves by at
    most 1, so ε-DP, and the loss ε is attained."""
    return float(np.sum(x) + rng.laplace(0.0, 1.0 / epsilon))


def exponential_difference_sum(x, rng, epsilon=0.5):
    """The same Laplace noise made by hand as a difference of two
    exponentials of scale 1/ε: ε-DP."""
    return float(np.sum(x)) + rng.exponential(1.0 / epsilon) - rng.exponential(1.0 / epsilon)


def gaussian_sum(x, rng, epsilon=0.5):
    """Gaussian noise calibrated for (ε, 10⁻⁵) under a pure ε claim: the
    pure loss of a Gaussian shift is unbounded (true pure ε ∞)."""
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / epsilon
    return float(np.sum(x) + rng.normal(0.0, sigma))


def gaussian_sum_approx(x, rng, epsilon=0.5, delta=1e-5):
    """The same under its own (ε, δ) claim: the classic calibration is
    (ε, δ)-DP (its exact ε at δ is below ε)."""
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return float(np.sum(x) + rng.normal(0.0, sigma))


class NoisyStream:
    """Each answer released once with fresh Laplace(1/ε) noise, from
    Python's ``random`` (a difference of two exponentials): one changed
    answer moves one release by at most 1, ε-DP."""

    def __init__(self, epsilon=1.0):
        self.scale = 1.0 / epsilon

    def release(self, value):
        return value + random.expovariate(1 / self.scale) - random.expovariate(1 / self.scale)


class ReusedNoiseCounter:
    """A running count released each round plus one Laplace draw made once:
    consecutive releases differ by the answer exactly (true ε ∞)."""

    def __init__(self, epsilon=1.0):
        self.noise = np.random.laplace(0.0, 1.0 / epsilon)
        self.count = 0.0

    def release(self, value):
        self.count += value
        return self.count + self.noise


class TreeCounter:
    """The binary mechanism: running counts over T = 2^k answers from noisy
    dyadic partial sums, each node Laplace(levels/ε) with levels = k + 1 (one
    answer is in one node per level): ε-DP, the loss ε attained."""

    missing_levels = 0

    def __init__(self, epsilon=1.0, horizon=8):
        self.levels = int(math.log2(horizon)) + 1
        self.scale = (self.levels - self.missing_levels) / epsilon
        self.rng = np.random.default_rng()
        self.t = 0
        self.exact = {}         # (level, index) -> exact partial sum so far
        self.noisy = {}         # (level, index) -> noisy partial sum, once complete

    def release(self, value):
        self.t += 1
        for level in range(self.levels):
            node = (level, (self.t - 1) >> level)
            self.exact[node] = self.exact.get(node, 0.0) + value
            if self.t % (1 << level) == 0:          # the node's interval is complete
                self.noisy[node] = self.exact[node] + self.rng.laplace(0.0, self.scale)
        # the count up to t: the dyadic nodes of t's binary digits
        total, start = 0.0, 0
        for level in reversed(range(self.levels)):
            if self.t - start >= (1 << level):
                total = total + self.noisy[(level, start >> level)]
                start += 1 << level
        return total


class ShortTreeCounter(TreeCounter):
    """The same with one level too few in the noise's scale: each answer
    is in ``levels`` nodes of Laplace((levels − 1)/ε), true ε = levels/(levels
    − 1)·ε (4/3 at T = 8, claim 1)."""

    missing_levels = 1


# ------------------------------------------------------------ comparisons
def above_threshold(x, rng, epsilon=1.0, threshold=1.0):
    """AboveThreshold (Lyu et al. Alg. 1, c = 1): the index of the first
    answer whose noisy value reaches the noisy threshold, ρ ~ Lap(2/ε),
    ν ~ Lap(4/ε): ε-DP."""
    rho = rng.laplace(0.0, 2.0 / epsilon)
    for i, q in enumerate(np.ravel(x)):
        if q + rng.laplace(0.0, 4.0 / epsilon) >= threshold + rho:
            return i
    return -1


def above_threshold_no_query_noise(x, rng, epsilon=1.0, threshold=1.0):
    """The same without query noise (Lyu et al. Alg. 5's flaw for one
    answer per step): not ε-DP for any finite ε on long enough inputs —
    the true ε grows with the number of answers below the threshold."""
    rho = rng.laplace(0.0, 2.0 / epsilon)
    for i, q in enumerate(np.ravel(x)):
        if q >= threshold + rho:
            return i
    return -1


def sparse_vector_no_cutoff(x, rng, epsilon=1.0, threshold=0.5):
    """The sparse vector of ``above_threshold`` answering every answer
    (⊤ or ⊥) with no cutoff after the first ⊤ (Lyu et al.'s flaw of
    answering past c): each ⊤ spends ε/4 more, so its ε grows with the
    number of answers — above 1 on ten answers in [0, 1] (``test_traced``
    certifies 1.097 at one pair), at most 10·ε/4 = 2.5 (each answer's
    Laplace(4/ε) noise moves its probability by at most e^(ε/4)).  Its
    2¹⁰ output sequences are 1 024 paths."""
    rho = rng.laplace(0.0, 2.0 / epsilon)
    return [bool(q + rng.laplace(0.0, 4.0 / epsilon) >= threshold + rho) for q in np.ravel(x)]


def noisy_argmax(x, rng, epsilon=1.0):
    """Report-noisy-max of the answers with Laplace(2/ε): ε-DP (the index)."""
    noisy = [q + rng.laplace(0.0, 2.0 / epsilon) for q in np.ravel(x)]
    return int(np.argmax(noisy))


def noisy_argmax_half_noise(x, rng, epsilon=1.0):
    """The same with Laplace(1/ε): 2ε-DP when every answer may move."""
    noisy = np.ravel(x) + rng.laplace(0.0, 1.0 / epsilon, size=np.size(x))
    return int(np.argmax(noisy))


def gumbel_max(x, rng, epsilon=1.0):
    """The exponential mechanism by the Gumbel-max trick: argmax of
    ε·q/2 + Gumbel(1), ε-DP for answers that move by at most 1."""
    scores = epsilon * np.ravel(x) / 2 + rng.gumbel(0.0, 1.0, size=np.size(x))
    return int(np.argmax(scores))


def noisy_threshold_test(x, rng, epsilon=1.0, threshold=2.0):
    """Whether the noisy sum passes a threshold: Lap(1/ε), ε-DP."""
    return bool(np.sum(x) + rng.laplace(0.0, 1.0 / epsilon) > threshold)


def data_dependent_scale(x, rng, epsilon=1.0):
    """Noise whose scale depends on the data: outside what the trace
    evaluates exactly (refused, never a verdict from the trace)."""
    return float(np.sum(x) + rng.laplace(0.0, (1.0 + abs(float(np.sum(x)))) / epsilon))


for _f, _e in ((laplace_sum, 0.5), (exponential_difference_sum, 0.5), (gaussian_sum, 0.5),
               (NoisyStream, 1.0), (ReusedNoiseCounter, 1.0), (TreeCounter, 1.0),
               (ShortTreeCounter, 1.0), (above_threshold, 1.0),
               (above_threshold_no_query_noise, 1.0), (sparse_vector_no_cutoff, 1.0),
               (noisy_argmax, 1.0),
               (noisy_argmax_half_noise, 1.0), (gumbel_max, 1.0), (noisy_threshold_test, 1.0),
               (data_dependent_scale, 1.0)):
    _f.claim_epsilon = _e
    # Their true ε is over the reals, the trace's terms: they are read as
    # models, not as doubles (attacks.floats; tests/as_written_zoo.py has
    # the floating-point cases).
    _f.floating_point = False
gaussian_sum_approx.floating_point = False
gaussian_sum_approx.claim_epsilon = 0.5
gaussian_sum_approx.claim_delta = 1e-5
for _f in (noisy_argmax, noisy_argmax_half_noise, gumbel_max, above_threshold,
           above_threshold_no_query_noise, sparse_vector_no_cutoff):
    _f.relation = "bounded-all"
    _f.max_change = 1.0

# name: (horizon, arms, true ε, structure the trace recognises)
CASES = {
    "laplace_sum": (4, 1, 0.5, "release"),
    "exponential_difference_sum": (4, 1, 0.5, "release"),
    "gaussian_sum": (4, 1, math.inf, "release"),
    "gaussian_sum_approx": (4, 1, None, "release"),
    "NoisyStream": (4, 1, 1.0, "release"),
    "ReusedNoiseCounter": (5, 1, math.inf, "release"),
    "TreeCounter": (8, 1, 1.0, "release"),
    "ShortTreeCounter": (8, 1, 4 / 3, "release"),
    "above_threshold": (4, 1, 1.0, "comparisons"),
    "above_threshold_no_query_noise": (4, 1, math.inf, "comparisons"),
    # true ε above 1 and at most 2.5 (its docstring): not known exactly
    "sparse_vector_no_cutoff": (10, 1, None, "comparisons"),
    "noisy_argmax": (1, 3, 1.0, "comparisons"),
    "noisy_argmax_half_noise": (1, 3, 2.0, "comparisons"),
    "gumbel_max": (1, 3, 1.0, "comparisons"),
    "noisy_threshold_test": (3, 1, 1.0, "comparisons"),
    "data_dependent_scale": (3, 1, None, "refused"),
}


def above_threshold_by_hand(x, rng, epsilon=1.0, threshold=1.0):
    """AboveThreshold with its Laplace noise made by hand from exponentials
    (Python's ``random.expovariate``): the same law, ε-DP."""
    rho = random.expovariate(epsilon / 2) - random.expovariate(epsilon / 2)
    for i, q in enumerate(np.ravel(x)):
        if q + random.expovariate(epsilon / 4) - random.expovariate(epsilon / 4) >= threshold + rho:
            return i
    return -1


above_threshold_by_hand.claim_epsilon = 1.0
above_threshold_by_hand.relation = "bounded-all"
above_threshold_by_hand.max_change = 1.0
CASES["above_threshold_by_hand"] = (4, 1, 1.0, "comparisons")


def clipped_release(x, rng, epsilon=1.0, low=0.0, high=3.0):
    """A Laplace(1/ε) release of the sum clipped to [low, high]: a
    post-processing of an ε-DP release, ε-DP (an atom at each end)."""
    return float(np.clip(np.sum(x) + rng.laplace(0.0, 1.0 / epsilon), low, high))


clipped_release.claim_epsilon = 1.0
CASES["clipped_release"] = (3, 1, 1.0, "comparisons+releases")


# ------------------------------------------------------ rounded releases
def rounded_laplace_sum(x, rng, epsilon=0.5):
    """The Laplace release rounded to two decimals: a post-processing of an
    ε-DP release, and its loss ε is still attained (far in the tail every
    grid interval has the density ratio e^ε throughout)."""
    return round(float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon), 2)


def rounded_laplace_sum_half_noise(x, rng, epsilon=0.5):
    """Half the noise, rounded the same way: true ε 2ε."""
    return round(float(np.sum(x)) + rng.laplace(0.0, 0.5 / epsilon), 2)


def rounded_plain_float(x, rng, epsilon=0.5):
    """The release made a Python float first, then rounded with Python's
    ``round``: the same mechanism as ``rounded_laplace_sum``."""
    value = float(np.sum(x) + rng.laplace(0.0, 1.0 / epsilon))
    return round(value, 2)


def truncated_laplace_sum(x, rng, epsilon=0.5):
    """``int()`` of the release (toward zero: the grid value 0 takes twice
    the width): a post-processing, ε-DP, ε attained in the tail."""
    return int(float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon))


def rounded_histogram(x, rng, epsilon=1.0):
    """Every answer with its own Laplace(1/ε), rounded to one decimal with
    ``np.round``: a one-round change moves one answer by at most 1, ε-DP."""
    v = np.ravel(np.asarray(x, dtype=float))
    return np.round(v + rng.laplace(0.0, 1.0 / epsilon, size=v.size), 1)


def rounded_gaussian_sum(x, rng, epsilon=1.0, delta=1e-5):
    """The classical Gaussian mechanism for (ε, δ), floored to whole
    numbers with ``math.floor``: (ε, δ)-DP."""
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return math.floor(float(np.sum(x)) + rng.normal(0.0, sigma))


def rounded_gaussian_sum_half_sigma(x, rng, epsilon=1.0, delta=1e-5):
    """Half that σ: its exact ε at δ is well above ε (μ = 2/σ)."""
    sigma = 0.5 * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return math.floor(float(np.sum(x)) + rng.normal(0.0, sigma))


def rounded_gaussian_pure(x, rng, epsilon=0.5):
    """``gaussian_sum``'s release rounded to three decimals, under a pure
    claim: pure ε ∞ still (the rounded Gaussian loss is unbounded)."""
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / epsilon
    return round(np.sum(x) + rng.normal(0.0, sigma), 3)


def sparse_vector_cutoff(x, rng, epsilon=1.0, threshold=0.5):
    """Lyu et al.'s Algorithm 1 with cutoff 1 as people write it: the list
    of answers stops at the first ⊤ (outputs of several lengths).  ε-DP."""
    rho = rng.laplace(0.0, 2.0 / epsilon)
    out = []
    for q in np.ravel(x):
        if q + rng.laplace(0.0, 4.0 / epsilon) >= threshold + rho:
            out.append(True)
            break
        out.append(False)
    return out


def numerical_sparse_vector(x, rng, epsilon=1.0, threshold=0.5):
    """Lyu et al.'s numerical sparse vector (cutoff 1): above the threshold
    it releases the answer with fresh noise, rounded to one decimal, and
    stops.  ε-DP (ε/3 each for ρ, the comparisons and the release)."""
    rho = rng.laplace(0.0, 3.0 / epsilon)
    out = []
    for q in np.ravel(x):
        if q + rng.laplace(0.0, 6.0 / epsilon) >= threshold + rho:
            out.append(round(q + rng.laplace(0.0, 3.0 / epsilon), 1))
            break
        out.append(None)
    return out


def clipped_rounded_release(x, rng, epsilon=1.0, low=0.0, high=3.0):
    """``clipped_release`` rounded to two decimals: the output 3.00 is the
    clipped atom *and* the values rounding to it — one output, whose
    probability is both's.  ε-DP (post-processing), ε attained."""
    return np.round(np.clip(np.sum(x) + rng.laplace(0.0, 1.0 / epsilon), low, high), 2)


def rounded_gaussian_data_scale(x, rng, epsilon=1.0, delta=1e-5):
    """A rounded Gaussian release whose σ grows with the sum: not the
    Gaussian mechanism of any one μ — no figure from it (the noise depends
    on the input)."""
    s = float(np.sum(x))
    sigma = (1.0 + s) * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return round(s + rng.normal(0.0, sigma), 2)


def rounded_then_clamped(x, rng, epsilon=0.5):
    """Rounds, then clamps the rounded number at 0 in Python (``max``
    compares it with 0): a post-processing of the rounded release, so ε-DP,
    and far in the upper tail its cells keep the ratio e^ε: true ε 0.5."""
    return max(0.0, round(float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon), 1))


def clamped_half_noise(x, rng, epsilon=0.5):
    """The same with half the noise: true ε 1."""
    return max(0.0, round(float(np.sum(x)) + rng.laplace(0.0, 0.5 / epsilon), 1))


def half_grid(x, rng, epsilon=0.5):
    """Rounds twice the noisy sum to whole numbers and halves it (a grid
    of 1/2 written as ``np.round(2 * v) / 2``): post-processing, true ε 0.5."""
    v = float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon)
    return float(np.round(2 * v) / 2)


def thresholded_count(x, rng, epsilon=0.5):
    """Whether the rounded noisy count reaches 2 (``if round(v) >= 2``):
    post-processing, and for sums 0 and 1 the event v ≥ 1.5 is a Laplace
    tail on both sides, of ratio e^0.5: true ε 0.5."""
    v = float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon)
    if round(v) >= 2:
        return 1
    return 0


def shifted_rounded_noise(x: float, rng, epsilon=0.5):
    """Adds *rounded* noise to its value: the output carries the value's
    fraction, so 0.5 and 1 reach disjoint sets of values (true ε ∞ over
    the reals), while 0 and 1 shift the grid by one cell (ε 0.5)."""
    return x + np.round(rng.laplace(0.0, 1.0 / epsilon))


def scaled_from_the_left(x, rng, epsilon=0.5):
    """``0.5 * round(2 v)``: Python's float times the int ``round``
    returns is float arithmetic the trace cannot see (the float's own
    method runs first), so re-execution must refuse the trace."""
    v = float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon)
    return 0.5 * round(2 * v)


def rounded_and_raw(x, rng, epsilon=0.5):
    """One rounded and one unrounded release of fresh noise each: not a
    structure with an exact loss here (refused)."""
    s = float(np.sum(x))
    return [round(s + rng.laplace(0.0, 2.0 / epsilon), 1), s + rng.laplace(0.0, 2.0 / epsilon)]


for _f, _e in ((rounded_laplace_sum, 0.5), (rounded_laplace_sum_half_noise, 0.5),
               (truncated_laplace_sum, 0.5), (rounded_histogram, 1.0),
               (rounded_plain_float, 0.5),
               (rounded_gaussian_sum, 1.0), (rounded_gaussian_sum_half_sigma, 1.0),
               (rounded_gaussian_pure, 0.5), (clipped_rounded_release, 1.0),
               (sparse_vector_cutoff, 1.0), (numerical_sparse_vector, 1.0),
               (rounded_then_clamped, 0.5), (clamped_half_noise, 0.5), (half_grid, 0.5),
               (thresholded_count, 0.5), (shifted_rounded_noise, 0.5),
               (scaled_from_the_left, 0.5), (rounded_and_raw, 0.5)):
    _f.claim_epsilon = _e
    _f.floating_point = False
rounded_gaussian_data_scale.claim_epsilon = 1.0
rounded_gaussian_data_scale.floating_point = False
for _f in (rounded_gaussian_sum, rounded_gaussian_sum_half_sigma, rounded_gaussian_data_scale):
    _f.claim_delta = 1e-5
for _f in (sparse_vector_cutoff, numerical_sparse_vector):
    _f.relation = "bounded-all"
    _f.max_change = 1.0
CASES.update({
    "rounded_laplace_sum": (3, 1, 0.5, "rounded"),
    "rounded_laplace_sum_half_noise": (3, 1, 1.0, "rounded"),
    "truncated_laplace_sum": (3, 1, 0.5, "rounded"),
    "rounded_plain_float": (3, 1, 0.5, "rounded"),
    "rounded_histogram": (4, 1, 1.0, "rounded"),
    "rounded_gaussian_sum": (3, 1, None, "rounded"),
    "rounded_gaussian_sum_half_sigma": (3, 1, None, "rounded"),
    "rounded_gaussian_pure": (3, 1, math.inf, "rounded"),
    "clipped_rounded_release": (3, 1, 1.0, "rounded"),
    # at most their claims (their docstrings): not known exactly
    "sparse_vector_cutoff": (4, 1, None, "comparisons"),
    "numerical_sparse_vector": (4, 1, None, "rounded"),
    "rounded_gaussian_data_scale": (3, 1, None, "rounded"),
    "rounded_then_clamped": (3, 1, 0.5, "rounded"),
    "clamped_half_noise": (3, 1, 1.0, "rounded"),
    "half_grid": (3, 1, 0.5, "rounded"),
    "thresholded_count": (3, 1, 0.5, "comparisons"),
    "shifted_rounded_noise": (1, 1, math.inf, "rounded"),
    "scaled_from_the_left": (3, 1, None, "refused"),
    "rounded_and_raw": (3, 1, 0.5, "refused"),
})


class RoundedTreeCounter(TreeCounter):
    """The binary mechanism releasing its running counts rounded to two
    decimals: each count sums several nodes' draws, so the rounded values
    share draws (an invertible map of them).  Rounding is post-processing,
    and far inside one sign of every draw the density ratio is e^ε over the
    whole box of values that round to an output: true ε 1."""

    def release(self, value):
        return round(super().release(value), 2)


class RoundedShortTreeCounter(RoundedTreeCounter):
    """The same one level short (``ShortTreeCounter``): true ε 4/3."""

    missing_levels = 1


for _c in (RoundedTreeCounter, RoundedShortTreeCounter):
    _c.claim_epsilon = 1.0
    _c.floating_point = False
CASES.update({"RoundedTreeCounter": (8, 1, 1.0, "rounded"),
              "RoundedShortTreeCounter": (8, 1, 4 / 3, "rounded")})


def stored_noisy_argmax(x, rng, epsilon=1.0):
    """Report-noisy-max whose noisy answers are stored in a float array the
    code made (``np.zeros``): the array keeps them noisy while traced
    (``algorithms.replay.slots``), so the argmax is traced exactly: ε-DP."""
    noisy = np.zeros(np.size(x))
    for i, v in enumerate(np.ravel(x)):
        noisy[i] = v + rng.laplace(0.0, 2.0 / epsilon)
    return int(np.argmax(noisy))


def stored_noisy_argmax_half_noise(x, rng, epsilon=1.0):
    """The same with Laplace(1/ε), through ``np.empty`` and the method
    ``argmax``: true ε 2ε over one changed answer."""
    noisy = np.empty(np.size(x))
    for i, v in enumerate(np.ravel(x)):
        noisy[i] = v + rng.laplace(0.0, 1.0 / epsilon)
    return int(noisy.argmax())


def stored_through_a_row_view(x, rng, epsilon=1.0):
    """Noisy answers written through a view of a row (``row = noisy[0]``):
    the array the argmax reads never sees the noise as noise, so the
    comparisons are not traced — re-execution refuses the trace (no exact
    figure), and says why."""
    noisy = np.zeros((1, np.size(x)))
    row = noisy[0]
    for i, v in enumerate(np.ravel(x)):
        row[i] = v + rng.laplace(0.0, 2.0 / epsilon)
    return int(np.argmax(noisy))


for _f in (stored_noisy_argmax, stored_noisy_argmax_half_noise, stored_through_a_row_view):
    _f.claim_epsilon = 1.0
    _f.floating_point = False
    _f.relation = "bounded-all"
    _f.max_change = 1.0
CASES.update({"stored_noisy_argmax": (1, 3, 1.0, "comparisons"),
              "stored_noisy_argmax_half_noise": (1, 3, 2.0, "comparisons"),
              "stored_through_a_row_view": (1, 3, None, "refused")})


def clipped_rounded_count(x, rng, epsilon=0.5):
    """``np.clip(np.round(v), 0, 3)`` of the noisy sum: post-processing of
    a rounded Laplace release; its top cell (the clamp at 3 and above) has
    the ratio e^ε of the Laplace tail beyond 2.5 for the sums 0 and 1:
    true ε 0.5."""
    return float(np.clip(np.round(float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon)), 0, 3))


clipped_rounded_count.claim_epsilon = 0.5
clipped_rounded_count.floating_point = False
CASES["clipped_rounded_count"] = (3, 1, 0.5, "rounded")


class ArrayTreeCounter:
    """The binary mechanism kept the way it is often written: the partial
    sums of the open nodes in float arrays, one slot a level, the lower
    levels reset by slice (``noisy[:i] = 0.0``) when a node closes, each
    node Laplace(levels/ε), the count the sum of the slots of t's binary
    digits, rounded to two decimals: true ε 1 (rounding is
    post-processing, and far in the tail every cell keeps the ratio)."""

    def __init__(self, epsilon=1.0, horizon=8):
        self.levels = int(math.log2(horizon)) + 1
        self.scale = self.levels / epsilon
        self.rng = np.random.default_rng()
        self.exact = np.zeros(self.levels)
        self.noisy = np.zeros(self.levels)
        self.t = 0

    def release(self, value):
        self.t += 1
        i = (self.t & -self.t).bit_length() - 1
        self.exact[i] = self.exact[:i].sum() + value
        self.exact[:i] = 0.0
        self.noisy[i] = self.exact[i] + self.rng.laplace(0.0, self.scale)
        self.noisy[:i] = 0.0
        return round(float(sum(self.noisy[j] for j in range(self.levels) if self.t >> j & 1)), 2)


ArrayTreeCounter.claim_epsilon = 1.0
ArrayTreeCounter.floating_point = False
CASES["ArrayTreeCounter"] = (8, 1, 1.0, "rounded")


def running_max_value(x, rng, epsilon=1.0):
    """The noisy maximum *value* taken by Python's ``max`` of a list: a
    running maximum, whose comparisons chain the draws (no star): not
    evaluated exactly, refused."""
    return max(float(v) + rng.laplace(0.0, 2.0 / epsilon) for v in np.ravel(x))


running_max_value.claim_epsilon = 1.0
running_max_value.floating_point = False
CASES["running_max_value"] = (4, 1, None, "refused")
