"""Algorithms written the way people write them, for the tests of auditing
code as written (``algorithms.as_written``): one object per run with
``select_arm``/``update``, a plain mechanism function, drawing from a seeded
generator or from numpy's global one.  Each correct one has a buggy twin
whose noise scale is halved (true ε = 2ε)."""
from __future__ import annotations

import math
import random

import numpy as np


class NoisyEpsGreedy:
    """ε-greedy over noisy rewards: each reward is released to the learner
    once, plus Laplace(1/ε) noise, so one changed round (rewards in [0, 1])
    moves one noisy reward by at most 1: ε-DP for the arms played (every
    arm choice is a function of the noisy rewards and independent coins)."""

    noise_factor = 1.0

    def __init__(self, n_arms, epsilon, seed=None, explore=0.05):
        self.rng = np.random.default_rng(seed)
        self.scale = self.noise_factor / epsilon
        self.explore = explore
        self.sums = np.zeros(n_arms)
        self.counts = np.zeros(n_arms)

    def select_arm(self):
        untried = np.flatnonzero(self.counts == 0)
        if untried.size:
            return int(untried[0])
        if self.rng.random() < self.explore:
            return int(self.rng.integers(len(self.counts)))
        return int(np.argmax(self.sums / self.counts))

    def update(self, arm, reward):
        self.sums[arm] += reward + self.rng.laplace(0.0, self.scale)
        self.counts[arm] += 1


class BuggyNoisyEpsGreedy(NoisyEpsGreedy):
    """The same with the noise scale halved: 2ε-DP, not ε."""

    noise_factor = 0.5


class GlobalNoisyEpsGreedy:
    """``NoisyEpsGreedy`` drawing from numpy's global generator, no seed."""

    noise_factor = 1.0

    def __init__(self, n_arms, epsilon, explore=0.05):
        self.scale = self.noise_factor / epsilon
        self.explore = explore
        self.sums = np.zeros(n_arms)
        self.counts = np.zeros(n_arms)

    def select_arm(self):
        untried = np.flatnonzero(self.counts == 0)
        if untried.size:
            return int(untried[0])
        if np.random.random() < self.explore:
            return int(np.random.randint(len(self.counts)))
        return int(np.argmax(self.sums / self.counts))

    def update(self, arm, reward):
        self.sums[arm] += reward + np.random.laplace(0.0, self.scale)
        self.counts[arm] += 1


class BuggyGlobalNoisyEpsGreedy(GlobalNoisyEpsGreedy):
    noise_factor = 0.5


class PythonRandomGreedy(GlobalNoisyEpsGreedy):
    """Exploration coins from Python's ``random`` module."""

    def select_arm(self):
        untried = np.flatnonzero(self.counts == 0)
        if untried.size:
            return int(untried[0])
        if random.random() < self.explore:
            return random.randrange(len(self.counts))
        return int(np.argmax(self.sums / self.counts))


class EntropyGreedy(NoisyEpsGreedy):
    """Builds its generator from OS entropy in a way that cannot be seeded."""

    def __init__(self, n_arms, epsilon):
        super().__init__(n_arms, epsilon)
        self.rng = np.random.Generator(np.random.PCG64())


def laplace_stream(x, rng, epsilon=1.0):
    """Laplace(1/ε) on each value: one value moved by at most 1 → ε-DP."""
    return x + rng.laplace(0.0, 1.0 / epsilon, size=x.shape)


def buggy_laplace_stream(x, rng, epsilon=1.0):
    """Half the scale: 2ε-DP."""
    return x + rng.laplace(0.0, 0.5 / epsilon, size=x.shape)


def global_laplace_stream(x, epsilon=1.0):
    """Laplace from numpy's global generator."""
    return x + np.random.laplace(0.0, 1.0 / epsilon, size=len(x))


def laplace_stream_batched(x, rng, size, epsilon=1.0):
    """The batched form: ``size`` runs at once."""
    return x[None, :] + rng.laplace(0.0, 1.0 / epsilon, size=(size, len(x)))


laplace_stream.claim_epsilon = 1.0
buggy_laplace_stream.claim_epsilon = 1.0
global_laplace_stream.claim_epsilon = 1.0
laplace_stream_batched.claim_epsilon = 1.0
# Over the reals (x + Lap(1/ε) is not ε-DP in doubles: tests/test_floats.py).
for _f in (laplace_stream, buggy_laplace_stream, global_laplace_stream, laplace_stream_batched):
    _f.floating_point = False


def noisy_argmax(x, rng, epsilon=1.0):
    """Report-noisy-max with Laplace(2/ε) noise: ε-DP (the index)."""
    return int(np.argmax(x + rng.laplace(0.0, 2.0 / epsilon, size=x.shape)))


# ------------------------------------------------------------- factories
def make_by_name(epsilon=1.0, T=1000, K=2):
    """A factory written with its parameters in its own order: it must
    receive each by name, not by position."""
    from algorithms import Algorithm, Claim, Learner
    return _constant(T, K, epsilon, {"seen": (epsilon, T, K)})


def make_keyword_only(*, horizon, n_arms, eps, delta=0.0, temperature=2.0):
    from algorithms import Algorithm, Claim, Learner
    return _constant(horizon, n_arms, eps, {"seen": (eps, horizon, n_arms, delta, temperature)})


def make_old(T, K, N, epsilon, delta, **params):
    return _constant(T, K, epsilon, {"seen": (T, K, N, epsilon, delta), **params})


def make_own_T(horizon, n_arms, epsilon, T=0.5):
    """``T`` is this factory's own parameter (a temperature), reachable with
    --param T=…, while the horizon comes as ``horizon``."""
    return _constant(horizon, n_arms, epsilon, {"seen": (horizon, n_arms, epsilon, T)})


def make_stream(n_queries, epsilon):
    """A mechanism factory taking no number of arms."""
    return _constant(n_queries, 1, epsilon, {"seen": (n_queries, epsilon)})


def _constant(T, K, epsilon, params):
    from algorithms import Algorithm, Claim, Learner

    def init(runs, rng):
        return {"n": runs}

    def act(state, advice, rng):
        return state, np.zeros(state["n"], dtype=np.int64)

    def feed(state, actions, losses, rng):
        return state

    return Algorithm("constant", Learner(init, act, feed, K), Claim(epsilon, 0.0, "actions",
                     "test"), T, K, params)


class UniformArms:
    """Plays a uniformly random arm (pulls ``choose``/``observe``); takes no ε."""

    def __init__(self, k, rng):
        self.rng, self.k = rng, k

    def choose(self):
        return int(self.rng.integers(self.k))

    def observe(self, arm, loss):
        pass


# --------------------------------------------------- randomized response
def randomized_response(x, rng, epsilon=1.0):
    """Warner's randomized response on one bit (x ≥ 0.5 is 1): the truth
    with probability e^ε/(1 + e^ε), as people write it, a branch on one
    uniform: ε-DP."""
    bit = int(x[0] >= 0.5)
    if rng.random() < math.exp(epsilon) / (1 + math.exp(epsilon)):
        return bit
    return 1 - bit


def buggy_randomized_response(x, rng, epsilon=1.0):
    """The truth with probability e^ε/(1 + e^ε), and otherwise a fair coin
    (the truth again half the time): P(truth)/P(lie) = 1 + 2e^ε, so its
    true ε is ln(1 + 2e^ε) (1.862 at ε = 1)."""
    bit = int(x[0] >= 0.5)
    if rng.random() < math.exp(epsilon) / (1 + math.exp(epsilon)):
        return bit
    return int(rng.random() < 0.5)


def global_randomized_response(x, epsilon=1.0):
    """The same on Python's global ``random``, as people write it without a
    generator."""
    bit = int(x[0] >= 0.5)
    if random.random() < math.exp(epsilon) / (1 + math.exp(epsilon)):
        return bit
    return 1 - bit


randomized_response.claim_epsilon = 1.0
buggy_randomized_response.claim_epsilon = 1.0
global_randomized_response.claim_epsilon = 1.0


# ------------------------------------- k-ary randomized response, a binary coin
def _category(x, k):
    """The input's category: x in [0, 1] rounded to one of k."""
    return int(round(float(x[0]) * (k - 1)))


def k_randomized_response(x, epsilon=1.0, categories=4):
    """k-ary randomized response on numpy's global state: the true category
    with probability e^ε/(e^ε + k − 1), else one of the k − 1 others drawn
    uniformly (a drawn integer, shifted past the truth, is the output):
    ε-DP."""
    k = categories
    true = _category(x, k)
    if np.random.random() < math.exp(epsilon) / (math.exp(epsilon) + k - 1):
        return true
    other = np.random.randint(0, k - 1)
    return other if other < true else other + 1


def buggy_k_randomized_response(x, epsilon=1.0, categories=4):
    """The same, but a lie is drawn from all k categories, the truth among
    them: P(truth)/P(another) = 1 + k·e^ε/(k − 1), so its true ε is
    ln(1 + 4e/3) = 1.531 at ε = 1, k = 4."""
    k = categories
    true = _category(x, k)
    if np.random.random() < math.exp(epsilon) / (math.exp(epsilon) + k - 1):
        return true
    return np.random.randint(0, k)


def scaled_coin(x, epsilon=1.0):
    """A binary mechanism written as a DP library writes it: a uniform scaled
    by e^ε + 1 is compared with e^ε (the truth when at most e^ε): the truth
    with probability e^ε/(e^ε + 1), ε-DP."""
    bit = int(x[0] >= 0.5)
    u = random.random() * (math.exp(epsilon) + 1)
    if u > math.exp(epsilon):
        return 1 - bit
    return bit


k_randomized_response.claim_epsilon = 1.0
buggy_k_randomized_response.claim_epsilon = 1.0
scaled_coin.claim_epsilon = 1.0


# ------------------------------------------------ the exponential mechanism
def exponential_mechanism(x, rng, epsilon=1.0):
    """The exponential mechanism over the answers as utilities (each moves by
    at most 1 between neighbours): weights e^(ε·u/2), drawn with
    ``rng.choice(p=...)``: ε-DP."""
    w = np.exp(epsilon * np.asarray(x, dtype=float) / 2)
    return int(rng.choice(len(w), p=w / w.sum()))


def buggy_exponential_mechanism(x, rng, epsilon=1.0):
    """The same without the 2 in the exponent: 2ε-DP at most, and more than ε
    where every utility may move (3 answers in [0, 1], ε = 1: x = (1, 0, 0)
    against (0, 1, 1) gives ln(e(1 + 2e)/(e + 2)) = 1.311 on the first)."""
    w = np.exp(epsilon * np.asarray(x, dtype=float))
    return int(rng.choice(len(w), p=w / w.sum()))


for _f in (exponential_mechanism, buggy_exponential_mechanism):
    _f.claim_epsilon = 1.0
    _f.relation = "bounded-all"
    _f.max_change = 1.0


# --------------------------------- seeded generators, and classes replayed
def seeded_randomized_response(x, seed, epsilon=1.0):
    """Randomized response on a generator it builds from the integer seed it
    is given (``np.random.default_rng(seed)``): ε-DP."""
    rng = np.random.default_rng(seed)
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < math.exp(epsilon) / (1 + math.exp(epsilon)) else 1 - bit


def fixed_seed_randomized_response(x, epsilon=1.0):
    """The same on a generator seeded with a constant: no randomness at
    all from one call to the next."""
    rng = np.random.RandomState(42)
    bit = int(x[0] >= 0.5)
    return bit if rng.random_sample() < math.exp(epsilon) / (1 + math.exp(epsilon)) else 1 - bit


class StickyCoin:
    """A two-armed bandit as people write it, on ``random.Random(seed)``:
    it keeps the arm it played if its reward was at least 1/2, else
    switches, and plays that arm with probability e^ε/(1 + e^ε), the other
    otherwise (randomized response on one bit of the last reward).  A
    changed round moves one such bit: ε-DP for the arms played."""

    def __init__(self, n_arms, epsilon, seed=None):
        self.rng = random.Random(seed)
        self.keep = math.exp(epsilon) / (1 + math.exp(epsilon))
        self.favourite = 0

    def select_arm(self):
        if self.rng.random() < self.keep:
            return self.favourite
        return 1 - self.favourite

    def update(self, arm, reward):
        self.favourite = arm if reward >= 0.5 else 1 - arm


class BuggyStickyCoin(StickyCoin):
    """The same, but the lie is a fair draw of either arm (the favourite
    again half the time): P(favourite)/P(other) = 1 + 2e^ε, true ε
    ln(1 + 2e^ε) = 1.862 at ε = 1."""

    def select_arm(self):
        if self.rng.random() < self.keep:
            return self.favourite
        return self.rng.randrange(2)


class RandomizedResponseStream:
    """A stream mechanism as a class: ``release(value)`` answers each
    round's bit (value ≥ 1/2) by randomized response on numpy's global
    state: ε-DP per round, and one round changes."""

    def __init__(self, epsilon):
        self.truth = math.exp(epsilon) / (1 + math.exp(epsilon))

    def release(self, value):
        bit = int(value >= 0.5)
        return bit if np.random.rand() < self.truth else 1 - bit


for _f in (seeded_randomized_response, fixed_seed_randomized_response, StickyCoin,
           BuggyStickyCoin, RandomizedResponseStream):
    _f.claim_epsilon = 1.0


# ------------------------------- the generator first, as DP testers write it
def prng_first_noisy_max(prng, queries, epsilon=1.0):
    """Report noisy max in a DP tester's benchmark signature (the generator
    before the answers): Laplace(2/ε) on each answer, the index of the
    largest released: ε-DP when every answer moves by at most 1."""
    noisy = np.asarray(queries, dtype=float) + prng.laplace(scale=2.0 / epsilon,
                                                            size=len(queries))
    return int(np.argmax(noisy))


def prng_first_noisy_max_value(prng, queries, epsilon=1.0):
    """The same releasing the noisy maximum itself (exponential noise, as in
    the testers' incorrect variant): not ε-DP for any finite ε."""
    noisy = np.asarray(queries, dtype=float) + prng.exponential(scale=2.0 / epsilon,
                                                                size=len(queries))
    return float(noisy.max())


for _f in (prng_first_noisy_max, prng_first_noisy_max_value):
    _f.claim_epsilon = 1.0
    _f.relation = "bounded-all"
    _f.max_change = 1.0


def prng_first_sparse_vector(prng, queries, epsilon, N, T):
    """A sparse vector as DP testers' benchmarks write it: threshold ``T``,
    cutoff ``N`` (names the tool otherwise reads as the horizon and the
    number of experts)."""
    out, above = [], 0
    noisy_threshold = T + prng.laplace(scale=2.0 / epsilon)
    for q in queries:
        if q + prng.laplace(scale=4.0 * N / epsilon) >= noisy_threshold:
            out.append(True)
            above += 1
            if above >= N:
                break
        else:
            out.append(False)
    return out


prng_first_sparse_vector.relation = "bounded-all"
prng_first_sparse_vector.max_change = 1.0


# -------------------------- batched, on numpy's global state, as DP-Sniper writes
def batched_k_randomized_response(x, n_samples, epsilon=1.0, categories=4):
    """k-ary randomized response for ``n_samples`` runs at once: the truth
    with probability e^ε/(e^ε + k − 1), else one of the others drawn
    uniformly (``np.random.uniform`` and ``np.random.randint``): ε-DP."""
    k = categories
    true = _category(x, k)
    keep = np.random.uniform(size=n_samples) < math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    other = np.random.randint(0, k - 1, size=n_samples)
    return np.where(keep, true, other + (other >= true))


def buggy_batched_k_randomized_response(x, n_samples, epsilon=1.0, categories=4):
    """The same lying among all k categories: true ε ln(1 + 4e/3) = 1.531."""
    k = categories
    true = _category(x, k)
    keep = np.random.uniform(size=n_samples) < math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return np.where(keep, true, np.random.randint(0, k, size=n_samples))


batched_k_randomized_response.claim_epsilon = 1.0
buggy_batched_k_randomized_response.claim_epsilon = 1.0


def sparse_vector_with_defaults(prng, queries, epsilon, N=1, T=0.5):
    """The same with the cutoff and threshold defaulted."""
    return prng_first_sparse_vector(prng, queries, epsilon, N, T)


sparse_vector_with_defaults.relation = "bounded-all"
sparse_vector_with_defaults.max_change = 1.0


# -------------------- a class asked for samples, as DP-Sniper writes mechanisms
class SampledRandomizedResponse:
    """Built once with ε, then asked for ``n_samples`` outputs of the
    input ``a`` at once (``m(a, n_samples)``), on numpy's global state:
    randomized response on the bit a[0] ≥ 1/2, ε-DP."""

    def __init__(self, eps=1.0):
        self.eps = eps

    def m(self, a, n_samples=1):
        bit = int(a[0] >= 0.5)
        truth = np.random.random(n_samples) < math.exp(self.eps) / (1 + math.exp(self.eps))
        return np.where(truth, bit, 1 - bit)


class BuggySampledRandomizedResponse(SampledRandomizedResponse):
    """The lie a fair coin: true ε ln(1 + 2e^ε)."""

    def m(self, a, n_samples=1):
        bit = int(a[0] >= 0.5)
        truth = np.random.random(n_samples) < math.exp(self.eps) / (1 + math.exp(self.eps))
        return np.where(truth, bit, np.random.randint(0, 2, size=n_samples))


sampled_rr = SampledRandomizedResponse(eps=1.0)
sampled_rr.claim_epsilon = 1.0


class CoinMechanism:
    """A binary mechanism as a DP library writes one: keyword-only
    constructor, a ``random_state`` it builds a ``RandomState`` from, and
    ``randomise(value)``: a uniform scaled by e^ε + 1 against e^ε: ε-DP."""

    def __init__(self, *, epsilon, random_state=None):
        self.epsilon = epsilon
        self._rng = np.random.RandomState(random_state)

    def randomise(self, value):
        bit = 0 if value < 0.5 else 1
        if self._rng.random_sample() * (np.exp(self.epsilon) + 1) > np.exp(self.epsilon):
            bit = 1 - bit
        return bit


def randomized_response_each(x, rng, epsilon=1.0):
    """Randomized response on each answer's bit, one call per run: its
    draws are enumerated jointly (2^T cells)."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return [int(q >= 0.5) if rng.random() < p else 1 - int(q >= 0.5) for q in x]


randomized_response_each.claim_epsilon = 1.0


# ------------------------------- randomness the audit cannot seed (OS entropy)
_SYSTEM = random.SystemRandom()


def system_randomized_response(x, epsilon=1.0):
    """Randomized response on ``random.SystemRandom`` (OS entropy, as
    security-minded code draws): ε-DP, and no seed reproduces it."""
    bit = int(x[0] >= 0.5)
    return bit if _SYSTEM.random() < math.exp(epsilon) / (1 + math.exp(epsilon)) else 1 - bit


def half_noise_secrets_randomized_response(x, epsilon=1.0):
    """The same on ``secrets``, with half the noise: a lie with probability
    0.134470 (half of 1/(1 + e)), the truth otherwise, so its true ε is
    ln(865 530/134 470) = 1.862 at ε = 1."""
    import secrets
    bit = int(x[0] >= 0.5)
    return 1 - bit if secrets.randbelow(10 ** 6) < 134_470 else bit


system_randomized_response.claim_epsilon = 1.0
half_noise_secrets_randomized_response.claim_epsilon = 1.0


# ------------------------------------------------ clamps: the range the code means
def clipped_count(x, rng, epsilon=1.0):
    """Each value clamped to [0, 10], their sum released with Laplace noise
    of scale 10/ε, rounded (post-processing, and no floating-point grain):
    one value moves the sum by at most 10, so ε-DP on the clamp's range."""
    return float(np.round(np.sum(np.clip(x, 0, 10)) + rng.laplace(0, 10 / epsilon)))


def clipped_count_bug(x, rng, epsilon=1.0):
    """The same, its noise calibrated to a change of 1: one value moving
    across the clamp's range moves the sum by 10, true ε = 10ε (rounding
    keeps nearly all of it at these scales)."""
    return float(np.round(np.sum(np.clip(x, 0, 10)) + rng.laplace(0, 1 / epsilon)))


def clipped_output(x, rng, epsilon=1.0):
    """Clamps its noisy *output* to [0, 1] (post-processing): no clamp of
    the input, whose range stays the default."""
    return float(np.clip(np.round(x[0] + rng.laplace(0, 1 / epsilon), 3), 0, 1))


def valid_sum_and_count(x, rng, epsilon=1.0):
    """Drops malformed records (outside [0, 1]) and releases the noisy sum
    of the rest and their number: on the domain [0, 1] every record is
    valid, the count is always len(x), and the sum moves by at most 1 —
    ε-DP.  The filter is no clamp: just outside [0, 1] a record counts for
    nothing, just inside it counts (the outputs jump)."""
    x = np.asarray(x, dtype=float)
    valid = x[(x >= 0.0) & (x <= 1.0)]
    return (round(float(valid.sum() + rng.laplace(0.0, 1.0 / epsilon)), 2), int(len(valid)))


def valid_sum_to_ten(x, rng, epsilon=1.0):
    """The sum of the records in [0, 10] (the others dropped), Laplace noise
    of scale 10/ε: a filter at 10, no clamp — a record at 10 adds 10, one
    just beyond adds nothing."""
    x = np.asarray(x, dtype=float)
    return float(np.round(x[(x >= 0) & (x <= 10)].sum() + rng.laplace(0, 10 / epsilon)))


# ------------------------------------------------ the DP testers' programs as written
def testers_sparse_vector(queries, epsilon, N, T):
    """``prng_first_sparse_vector`` as the DP testers' programs are written:
    the input first, its cutoff and threshold required (``--param``), the
    noise from ``np.random``."""
    return prng_first_sparse_vector(np.random, queries, epsilon, N, T)


testers_sparse_vector.relation = "bounded-all"
testers_sparse_vector.max_change = 1.0


def make_with_rate(rate, epsilon):
    """A factory whose first parameter is its own (a learning rate): taken
    at first for a mechanism ``f(x, epsilon)``, built as a factory once it
    returns an algorithm."""
    return _constant(10, 1, epsilon, {"rate": rate})


# ------------------------------------------------ a library's mechanism object
class LibraryLaplace:
    """A mechanism object as libraries build them (``Laplace(epsilon=…,
    sensitivity=…).randomise(value)``), drawing from its own generator
    (OS entropy unless a ``random_state`` is given): ε-DP for values that
    differ by at most its sensitivity; the output rounded to 1/100 (no
    floating-point grain)."""

    def __init__(self, epsilon, sensitivity, random_state=None):
        self.epsilon, self.sensitivity = epsilon, sensitivity
        self._rng = random.SystemRandom() if random_state is None else random.Random(random_state)

    def randomise(self, value):
        u = self._rng.random() - 0.5
        noise = -(self.sensitivity / self.epsilon) * math.copysign(1.0, u) * math.log(1 - 2 * abs(u))
        return round(value + noise, 2)


library_mechanism = LibraryLaplace(epsilon=0.5, sensitivity=2)


# ---------------------------------------------- shapes public code has
class NoisyTreeCounter:
    """A binary-tree counter released every step through ``update(x)``
    alone (no release-named method), as continual-release code is written:
    node noise Lap(levels/ε), so ε in real arithmetic."""

    def __init__(self, T, epsilon=1.0):
        self.levels = max(1, math.ceil(math.log2(T + 1)))
        self.eps = epsilon
        self.alpha = [0.0] * (self.levels + 1)
        self.noisy = [0.0] * (self.levels + 1)
        self.t = 0

    def update(self, x):
        self.t += 1
        i = (self.t & -self.t).bit_length() - 1
        self.alpha[i] = sum(self.alpha[:i]) + x
        for j in range(i):
            self.alpha[j] = self.noisy[j] = 0.0
        self.noisy[i] = self.alpha[i] + np.random.laplace(0, self.levels / self.eps)
        return sum(self.noisy[j] for j in range(self.levels + 1) if (self.t >> j) & 1)


def ucb_over_reward_matrix(rewards, epsilon=1.0):
    """A bandit simulated over its whole reward matrix (``T, K =
    rewards.shape``), fresh Laplace on each arm's sum every round."""
    T, K = rewards.shape
    sums, counts, arms = np.zeros(K), np.zeros(K), []
    for t in range(T):
        a = t if t < K else int(np.argmax(
            (sums + np.random.laplace(0, 1 / epsilon, K)) / counts
            + np.sqrt(2 * math.log(t + 1) / counts)))
        arms.append(a)
        sums[a] += rewards[t, a]
        counts[a] += 1
    return arms


def scipy_laplace(x: float, epsilon=1.0):
    """One number plus ``scipy.stats.laplace.rvs`` noise: the draw comes
    from the hidden global state scipy took at import; numpy's
    broadcasting would run it on an array, its annotation says one
    number."""
    import scipy.stats
    return round(x + scipy.stats.laplace.rvs(scale=1 / epsilon), 3)


def chatty_randomized_response(x, epsilon=1.0):
    """Randomized response on the first value that prints as it goes."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    bit = int(x[0] > 0.5) if random.random() < p else int(x[0] <= 0.5)
    print(f"released {bit}")
    return bit


class PrivateLeader:
    """A full-information learner naming its actions experts: noisy
    follow-the-leader, Lap(2T/ε) on the cumulative losses each round."""

    def __init__(self, n_experts, horizon, epsilon=1.0):
        self.K, self.T, self.eps = n_experts, horizon, epsilon
        self.cum = np.zeros(n_experts)

    def act(self):
        return int(np.argmin(self.cum + np.random.laplace(0, 2 * self.T / self.eps, self.K)))

    def update(self, losses):
        self.cum += np.asarray(losses)


def laplace_mechanism(value, sensitivity, epsilon):
    """A DP library's function shape: the value, its sensitivity, ε."""
    return round(value + np.random.laplace(0, sensitivity / epsilon), 2)


class CallableLaplace:
    """A mechanism object called as ``mech(value)``."""

    def __init__(self, epsilon, sensitivity=1.0):
        self.epsilon, self.sensitivity = epsilon, sensitivity

    def __call__(self, value):
        return round(value + np.random.laplace(0, self.sensitivity / self.epsilon), 2)


callable_mechanism = CallableLaplace(epsilon=0.5, sensitivity=2.0)


class RemembersItsArm:
    """A bandit learner that remembers its arm: ``update(reward)`` takes
    the played arm's reward alone."""

    def __init__(self, n_arms=2, epsilon=1.0):
        self.k, self.eps = n_arms, epsilon
        self.sums = np.zeros(n_arms)
        self.last = None

    def select_arm(self):
        self.last = int(np.argmax(self.sums + np.random.laplace(0, 1 / self.eps, self.k)))
        return self.last

    def update(self, reward):
        self.sums[self.last] += reward


class RemembersItsArmLoss(RemembersItsArm):
    """``update(loss)``: a row or one value; this one fails on a row."""

    def update(self, loss):
        self.sums[self.last] -= loss


class ChoosesThroughAHelper(RemembersItsArm):
    """``update(loss)`` on the arm a helper kept: the choosing method keeps
    nothing itself, so the row is tried first — and fails."""

    def _choose(self):
        self.last = int(np.argmax(self.sums + np.random.laplace(0, 1 / self.eps, self.k)))
        return self.last

    def select_arm(self):
        return self._choose()

    def update(self, loss):
        self.sums[self.last] -= loss


class HistoryGreedy:
    """A greedy learner keeping ``(arm, loss)`` pairs in a list: a whole row
    would be taken silently (``np.mean`` of rows is a number), and the
    learner would read every arm's loss.  Its update reads the arm its
    choosing method kept, so it is driven as the bandit it is."""

    def __init__(self, n_arms=2, epsilon=1.0):
        self.k, self.eps = n_arms, epsilon
        self.history = []
        self.last_arm = 0

    def select_arm(self):
        means = [np.mean([l for a, l in self.history if a == k] or [0.0]) for k in range(self.k)]
        arm = int(np.argmin(np.array(means) + np.random.laplace(0, 1 / self.eps, self.k)))
        self.last_arm = arm
        return arm

    def update(self, loss):
        self.history.append((self.last_arm, loss))


class HedgeOfLoss(RemembersItsArm):
    """``update(loss)`` taking the whole row (full information)."""

    def update(self, loss):
        self.sums = self.sums - np.asarray(loss)


class FreshNoiseGreedy:
    """Greedy on its reward sums with fresh Laplace(1/ε) noise every round,
    and no horizon of its own (the audit runs its default 1 000 rounds):
    each round's choice reads the sums anew, so a changed reward costs ε
    again at every later round — far more than ε over the run."""

    def __init__(self, n_arms=2, epsilon=1.0):
        self.k, self.eps = n_arms, epsilon
        self.sums = np.zeros(n_arms)

    def select_arm(self):
        return int(np.argmax(self.sums + np.random.laplace(0, 1 / self.eps, self.k)))

    def update(self, arm, reward):
        self.sums[arm] += reward


def _keep_probability(epsilon):
    return math.exp(epsilon) / (1 + math.exp(epsilon))


def bit_response(bit: int, epsilon=1.0):
    """Randomized response on one bit, annotated: ε-DP on bits (keeps the
    bit with probability e^ε/(1 + e^ε)); over the reals it would "return"
    0.38 on one side only."""
    return bit if random.random() < _keep_probability(epsilon) else 1 - bit


def buggy_bit_response(bit: int, epsilon=1.0):
    """The same keeping the bit with e^2ε/(1 + e^2ε): 2ε-DP."""
    return bit if random.random() < _keep_probability(2 * epsilon) else 1 - bit


def plain_bit_response(bit, epsilon=1.0):
    """``bit_response`` unannotated: its name says one value, its code
    returns whole numbers on whole inputs only."""
    if random.random() < _keep_probability(epsilon):
        return bit
    return 1 - bit


def bits_response(bits, epsilon=1.0):
    """Randomized response on each of a vector of bits, each coin its own:
    ε-DP when one bit changes."""
    p = _keep_probability(epsilon)
    return [b if random.random() < p else 1 - b for b in bits]


def one_coin_bits_response(bits, epsilon=1.0):
    """One coin for the whole vector: the output is the bits or their
    complement, so neighbours (one bit apart) have disjoint outputs — not
    private at all."""
    keep = random.random() < _keep_probability(epsilon)
    return [b if keep else 1 - b for b in bits]


class BitStream:
    """Randomized response on each round's bit, released through
    ``update(bit)``: ε-DP when one round's bit changes."""

    def __init__(self, epsilon=1.0):
        self.p = _keep_probability(epsilon)

    def update(self, bit):
        return bit if random.random() < self.p else 1 - bit


class BuggyBitStream(BitStream):
    """The same keeping each bit with e^2ε/(1 + e^2ε): 2ε-DP."""

    def __init__(self, epsilon=1.0):
        self.p = _keep_probability(2 * epsilon)


class HorizonGreedy(NoisyEpsGreedy):
    """``NoisyEpsGreedy`` that states its horizon, as objects built for one
    experiment do."""

    def __init__(self, n_arms, epsilon, horizon, seed=None):
        super().__init__(n_arms, epsilon, seed)
        self.horizon, self.epsilon = horizon, epsilon


# Learners the module builds once, each holding a seeded generator: audited
# as ``module:agent``, one fresh copy per run, re-seeded (the second keeps
# no ε of its own: its audit is given the claim).
agent = HorizonGreedy(2, 1.0, horizon=5, seed=7)
buggy_agent = BuggyNoisyEpsGreedy(3, 1.0, seed=7)


def xor_bit_response(bit, epsilon=1.0):
    """Warner's randomized response as ``bit ^ flip``: fails on a fraction
    (``^`` takes whole numbers), ε-DP on bits."""
    return bit ^ np.random.binomial(1, 1 / (1 + math.exp(epsilon)))


def first_above(queries, epsilon=1.0, threshold=0.5):
    """A sparse vector declaring the relation of every answer changing
    but not by how much: its audit needs ``max_change``."""
    rho = np.random.laplace(0, 2 / epsilon)
    for i, q in enumerate(queries):
        if q + np.random.laplace(0, 4 / epsilon) >= threshold + rho:
            return i
    return -1


first_above.relation = "bounded-all"


class PullFeedbackGreedy:
    """A learner whose update method is named ``feedback(arm, reward)`` (a
    method, not the declaration ``feedback = "reward"``): greedy on noisy
    mean rewards after one round-robin pass, as written in tutorials."""

    def __init__(self, n_arms=2, epsilon=1.0, seed=None):
        self.rng = np.random.default_rng(seed)
        self.sums, self.counts = np.zeros(n_arms), np.zeros(n_arms)
        self.epsilon = epsilon

    def pull(self):
        if self.counts.min() == 0:
            return int(np.argmin(self.counts))
        return int(np.argmax(self.sums / self.counts))

    def feedback(self, arm, reward):
        self.sums[arm] += reward + self.rng.laplace(0.0, 1.0 / self.epsilon)
        self.counts[arm] += 1


class GaussianCommit:
    """Round robin for two rounds an arm, then the argmax of the sums plus
    N(0, 1) noise: the Gaussian mechanism on the sums.  One round's row
    changes only the sum of the arm played that round, by at most 1 (ℓ2
    sensitivity 1), so ρ = 1/(2σ²) = 1/2 zCDP.  It takes no ε and states no
    claim: its audit is given one (``--claim-rho``)."""

    def __init__(self, n_arms=2, seed=None):
        self.rng = np.random.default_rng(seed)
        self.sums, self.t, self.n_arms, self.choice = np.zeros(n_arms), 0, n_arms, None

    def select(self):
        if self.t < 2 * self.n_arms:
            return self.t % self.n_arms
        if self.choice is None:
            self.choice = int(np.argmax(self.sums + self.rng.normal(0.0, 1.0, self.n_arms)))
        return self.choice

    def update(self, arm, reward):
        if self.t < 2 * self.n_arms:
            self.sums[arm] += reward
        self.t += 1


class GaussianCommitAtEpsilon(GaussianCommit):
    """The same taking an ``epsilon`` with no value of its own: under a curve
    claim alone the audit asks for ``--epsilon`` rather than build it at a
    stand-in."""

    def __init__(self, n_arms=2, epsilon=None, seed=None):
        super().__init__(n_arms, seed)
        self.epsilon = epsilon


class ThresholdSwitch:
    """An above-threshold stream class whose threshold is named ``T`` (as
    the sparse-vector literature writes it), 0.5 by default: a fraction, so
    its own parameter, not the horizon.  ε-DP (Lyu et al., Algorithm 1)."""

    claim_epsilon = 1.0
    relation = "bounded-all"
    max_change = 1.0

    def __init__(self, epsilon=1.0, T=0.5, seed=None):
        self.rng = np.random.default_rng(seed)
        self.eps, self.T = epsilon, T
        self.rho = self.rng.laplace(0.0, 2.0 / epsilon)
        self.done = False

    def release(self, q):
        if self.done:
            return None
        if q + self.rng.laplace(0.0, 4.0 / self.eps) >= self.T + self.rho:
            self.done = True
            return True
        return False
