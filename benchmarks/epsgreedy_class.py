"""An ε-greedy bandit written the way public bandit libraries write one:
one object per run, ``select_arm()`` and ``update(chosen_arm, reward)``,
Python's ``random`` for its coins and lists for its statistics — here with
each reward perturbed once by Laplace noise before the learner sees it
(ε-DP for one changed round, rewards in [0, 1]).  Used by
``benchmarks/throughput.py --as-written`` and the docs' worked example of
auditing a class unmodified."""
import random


class EpsilonGreedy:
    def __init__(self, n_arms, epsilon, explore=0.1, seed=None):
        self.rand = random.Random(seed)
        self.scale = 1.0 / epsilon
        self.explore = explore
        self.counts = [0] * n_arms
        self.values = [0.0] * n_arms

    def _laplace(self):
        # the difference of two exponentials of mean b is Laplace(0, b)
        rate = 1.0 / self.scale
        return self.rand.expovariate(rate) - self.rand.expovariate(rate)

    def select_arm(self):
        if self.rand.random() > self.explore:
            return max(range(len(self.values)), key=self.values.__getitem__)
        return self.rand.randrange(len(self.values))

    def update(self, chosen_arm, reward):
        self.counts[chosen_arm] += 1
        n = self.counts[chosen_arm]
        noisy = reward + self._laplace()
        self.values[chosen_arm] += (noisy - self.values[chosen_arm]) / n


class HalfNoiseEpsilonGreedy(EpsilonGreedy):
    """The same with a slip: Laplace(1/(2ε)), so 2ε-DP rather than ε."""

    def __init__(self, n_arms, epsilon, explore=0.1, seed=None):
        super().__init__(n_arms, epsilon, explore, seed)
        self.scale = 0.5 / epsilon
