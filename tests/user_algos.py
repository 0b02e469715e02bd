"""A user's own algorithms, loaded by ``tests.user_algos:...`` in tests."""
import numpy as np

from algorithms import Algorithm, Claim, Learner


def noisy_greedy(T, K, N, epsilon, delta, **params):
    eps = 1.0 if epsilon is None else epsilon

    def init(runs, rng):
        return {"L": np.zeros((runs, K))}

    def act(state, advice, rng):
        noisy = state["L"] + rng.laplace(0, 1 / eps, state["L"].shape)
        return state, noisy.argmin(axis=1)

    def feed(state, actions, losses, rng):
        L = state["L"].copy()
        L[np.arange(len(actions)), actions] += losses
        return {"L": L}

    return Algorithm("noisy-greedy", Learner(init, act, feed, K),
                     Claim(eps, 0.0, "actions", "unproven"), T, K, {"epsilon": eps},
                     default_attacks=("first-round",))


def _claimless():
    alg = noisy_greedy(200, 2, None, 1.0, 0.0)
    alg.claim = None
    return alg


claimless = _claimless()
not_an_algorithm = 42
