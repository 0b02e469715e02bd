"""Learners whose module builds them with their noise already drawn, in
``__init__`` — from the generator they hold, from numpy's global one, from
Python's ``random`` — and one that draws its noise when it commits, as a
control.  Each is private as a class (its noise is drawn afresh for every
object), but every copy of one object holds the same draws: audited as
``module:object`` it must be refused, never judged
(``algorithms.as_written.construction``).

Imported only through the audit (``tests/test_as_written.py``), so that
the audit watches the module's first import.
"""
from __future__ import annotations

import random

import numpy as np


class _CommitToNoisySums:
    """Explore-then-commit on three arms: round robin for ``m`` rounds an
    arm, then the argmax of the sums plus Laplace(1/ε) noise (the Laplace
    mechanism on the sums, sensitivity 1 when one round's row changes):
    ε-DP.  ``_noise()`` is when and where the noise is drawn."""

    def __init__(self, n_arms=3, epsilon=1.0, m=2, seed=None):
        self.n_arms, self.epsilon, self.m = n_arms, epsilon, m
        self.rng = np.random.default_rng(seed)
        self.sums = np.zeros(n_arms)
        self.t = 0
        self.noise = None

    def select(self):
        if self.t < self.m * self.n_arms:
            return self.t % self.n_arms
        if self.noise is None:
            self.noise = self._noise()
        return int(np.argmax(self.sums + self.noise))

    def update(self, arm, reward):
        if self.t < self.m * self.n_arms:
            self.sums[arm] += reward
        self.t += 1

    def _noise(self):
        return self.rng.laplace(0.0, 1.0 / self.epsilon, self.n_arms)


class HeldGeneratorFirst(_CommitToNoisySums):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.noise = self.rng.laplace(0.0, 1.0 / self.epsilon, self.n_arms)


class GlobalNumpyFirst(_CommitToNoisySums):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.noise = np.random.laplace(0.0, 1.0 / self.epsilon, self.n_arms)


class PythonRandomFirst(_CommitToNoisySums):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.noise = np.array([random.expovariate(self.epsilon) - random.expovariate(self.epsilon)
                               for _ in range(self.n_arms)])


for _c in (_CommitToNoisySums, HeldGeneratorFirst, GlobalNumpyFirst, PythonRandomFirst):
    _c.claim_epsilon = 1.0

held_first = HeldGeneratorFirst(seed=3)
global_first = GlobalNumpyFirst()
python_first = PythonRandomFirst()
at_commit = _CommitToNoisySums(seed=3)
