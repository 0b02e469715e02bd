"""Small stream mechanisms (``feedback="stream"``) written as a user would,
for the tests of the neighbouring relations and the stream order."""
import numpy as np

from algorithms import Algorithm, Claim, Learner


def noisy_answers(T, K, N, epsilon, delta, scale=None, claim_relation="bounded-all",
                  max_change=1.0, **params):
    """Each round releases its answer plus Laplace(scale) (default 1/ε) as a
    point, and whether that noisy answer is ≥ 1 as its code; claimed ε per
    answer moved by 1 (so under bounded-all the true ε is T·K/(scale·…):
    the claim is deliberately per round, and wrong for bounded-all when T > 1)."""
    eps = 1.0 if epsilon is None else epsilon
    b = 1.0 / eps if scale is None else float(scale)

    def init(runs, rng):
        return {"y": np.zeros((runs, K))}

    def feed(state, actions, row, rng):
        assert actions is None
        return {"y": row[None, :] + rng.laplace(0.0, b, (len(state["y"]), K))}

    def act(state, advice, rng):
        return state, (state["y"][:, 0] >= 1.0).astype(np.int64)

    def point(state):
        return state["y"]

    claim = Claim(eps, 0.0, "actions", "each answer moved by 1 costs ε (Laplace 1/ε)",
                  relation=claim_relation, max_change=max_change)
    return Algorithm("noisy-answers", Learner(init, act, feed, 2, feedback="stream", point=point),
                     claim, T, K, {"epsilon": eps, "scale": b}, default_attacks=("patterns",),
                     loss_range=(-10.0, 10.0))


def greedy_half_step(T, K, N, epsilon, delta, **params):
    """A learner whose claim allows neighbours that move one loss by at most
    0.5 (one-round, Δ = 0.5): first-round's pair (1 vs 0) is outside it."""
    from tests.user_algos import noisy_greedy
    alg = noisy_greedy(T, K, N, epsilon, delta)
    alg.claim = Claim(alg.claim.epsilon, 0.0, "actions", "per change of at most 0.5",
                      relation="one-round", max_change=0.5)
    return alg
