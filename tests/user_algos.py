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


# --------------------------------------------------------------------------
# Broken user algorithms (Step 8: exit codes and the interface contract).
# Each is a factory f(T, K, N, epsilon, delta, **params) around the noisy
# greedy above with one function replaced; the defaults let them build
# without --epsilon.

def _greedy_parts(K, eps):
    def init(runs, rng):
        return {"L": np.zeros((runs, K)), "t": 0}

    def act(state, advice, rng):
        noisy = state["L"] + rng.laplace(0, 1 / eps, state["L"].shape)
        return {**state, "t": state["t"] + 1}, noisy.argmin(axis=1)

    def feed(state, actions, losses, rng):
        L = state["L"].copy()
        L[np.arange(len(actions)), actions] += losses
        return {**state, "L": L}

    return init, act, feed


def _with(T, K, eps, name="broken", claim=None, **replace):
    init, act, feed = _greedy_parts(K, eps)
    learner = Learner(init, act, feed, K)._replace(**replace)
    claim = claim or Claim(eps, 0.0, "actions", "unproven")
    return Algorithm(name, learner, claim, T, K, {"epsilon": eps},
                     default_attacks=("first-round",))


def raises_at_round_3(T, K, N, epsilon=1.0, delta=0.0, **params):
    """act() raises ValueError at round 3."""
    _, act, _ = _greedy_parts(K, epsilon)

    def bad_act(state, advice, rng):
        if state["t"] == 2:
            raise ValueError("boom at the third round")
        return act(state, advice, rng)
    return _with(T, K, epsilon, act=bad_act)


def raises_late(T, K, N, epsilon=1.0, delta=0.0, at=10):
    """act() raises RuntimeError (two-line message) at round ``at``, after the
    interface check's first rounds: only the simulation itself sees it."""
    _, act, _ = _greedy_parts(K, epsilon)

    def bad_act(state, advice, rng):
        if state["t"] == at - 1:
            raise RuntimeError("late failure\nsecond line")
        return act(state, advice, rng)
    alg = _with(T, K, epsilon, act=bad_act)
    alg.params = {"epsilon": epsilon, "at": at}
    return alg


def feed_raises(T, K, N, epsilon=1.0, delta=0.0, **params):
    """feed() raises KeyError at round 1."""
    def bad_feed(state, actions, losses, rng):
        return {"L": state["missing"]}
    return _with(T, K, epsilon, feed=bad_feed)


def init_raises(T, K, N, epsilon=1.0, delta=0.0, **params):
    """init() raises ZeroDivisionError."""
    def bad_init(runs, rng):
        return {"L": np.zeros((runs, K)), "scale": 1 // 0}
    return _with(T, K, epsilon, init=bad_init)


def wrong_shape(T, K, N, epsilon=1.0, delta=0.0, **params):
    """act() returns 3 actions whatever the number of runs."""
    _, act, _ = _greedy_parts(K, epsilon)

    def bad_act(state, advice, rng):
        state, a = act(state, advice, rng)
        return state, a[:3]
    return _with(T, K, epsilon, act=bad_act)


def float_actions(T, K, N, epsilon=1.0, delta=0.0, **params):
    """act() returns the arm indices as floats."""
    _, act, _ = _greedy_parts(K, epsilon)

    def bad_act(state, advice, rng):
        state, a = act(state, advice, rng)
        return state, a.astype(float)
    return _with(T, K, epsilon, act=bad_act)


def not_a_tuple(T, K, N, epsilon=1.0, delta=0.0, **params):
    """act() returns the actions alone, not (state, actions)."""
    _, act, _ = _greedy_parts(K, epsilon)

    def bad_act(state, advice, rng):
        return act(state, advice, rng)[1]
    return _with(T, K, epsilon, act=bad_act)


def out_of_range(T, K, N, epsilon=1.0, delta=0.0, **params):
    """act() returns 1-based arms (arm K appears)."""
    _, act, _ = _greedy_parts(K, epsilon)

    def bad_act(state, advice, rng):
        state, a = act(state, advice, rng)
        return state, a + 1
    return _with(T, K, epsilon, act=bad_act)


def bool_actions(T, K, N, epsilon=1.0, delta=0.0, **params):
    """A correct two-arm learner whose actions are bools (arm 1 = True)."""
    _, act, _ = _greedy_parts(2, epsilon)

    def bool_act(state, advice, rng):
        state, a = act(state, advice, rng)
        return state, a == 1
    return _with(T, 2, epsilon, act=bool_act)


def init_not_dict(T, K, N, epsilon=1.0, delta=0.0, **params):
    """init() returns a list."""
    return _with(T, K, epsilon, init=lambda runs, rng: [np.zeros((runs, K))])


def feed_not_dict(T, K, N, epsilon=1.0, delta=0.0, **params):
    """feed() returns None (forgot the return)."""
    _, _, feed = _greedy_parts(K, epsilon)

    def bad_feed(state, actions, losses, rng):
        feed(state, actions, losses, rng)
    return _with(T, K, epsilon, feed=bad_feed)


def bad_probs(T, K, N, epsilon=1.0, delta=0.0, **params):
    """probs() rows sum to 0.9."""
    return _with(T, K, epsilon, probs=lambda state, advice: np.full((len(state["L"]), K), 0.9 / K))


def bad_point(T, K, N, epsilon=1.0, delta=0.0, **params):
    """point() returns NaN coordinates."""
    return _with(T, K, epsilon, point=lambda state: np.full((len(state["L"]), 2), np.nan))


def bad_incurred(T, K, N, epsilon=1.0, delta=0.0, **params):
    """incurred() returns one loss instead of one per run."""
    return _with(T, K, epsilon, incurred=lambda state, row: np.zeros(1))


def bad_claim_scope(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Claims scope "action" (the scope is "actions")."""
    return _with(T, K, epsilon, claim=Claim(epsilon, 0.0, "action", "typo"))


def bad_claim_epsilon(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Claims ε = −1."""
    return _with(T, K, epsilon, claim=Claim(-1.0, 0.0, "actions", "negative"))


def bad_claim_delta(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Claims δ = 1."""
    return _with(T, K, epsilon, claim=Claim(epsilon, 1.0, "actions", "vacuous"))


# Factories exercising how ``build`` calls a user factory.

def needs_epsilon(T, K, N, epsilon, delta, **params):
    """No default for epsilon: --epsilon or --claim-epsilon is required."""
    return _with(T, K, epsilon)


def default_epsilon(T, K, N, epsilon=0.5, delta=0.0):
    """Default ε = 0.5; takes no other parameters."""
    return _with(T, K, epsilon)


def named_params(T, K, N, epsilon=1.0, delta=0.0, tau=2):
    """One named parameter, tau (an int >= 1)."""
    if int(tau) != tau or tau < 1:
        raise ValueError(f"tau must be an integer >= 1, got {tau!r}")
    alg = _with(T, K, epsilon)
    alg.params = {"epsilon": epsilon, "tau": tau}
    return alg


def uses_some_params(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Takes **params but uses only eta (reported in Algorithm.params)."""
    eta = float(params.get("eta", 0.1))
    alg = _with(T, K, epsilon)
    alg.params = {"epsilon": epsilon, "eta": eta}
    return alg


def returns_kwargs(T, K, N, epsilon=None, delta=None, **params):
    """Records exactly what it was called with (epsilon, delta) in params."""
    alg = _with(T, K, 1.0 if epsilon is None else epsilon)
    alg.params = {"epsilon": epsilon, "delta": delta}
    return alg


def own_names(horizon, arms, experts, eps=0.25, dlt=0.0, **params):
    """The five positional slots under other names, ε defaulting to 0.25."""
    alg = _with(horizon, arms, eps)
    alg.params = {"eps": eps, "dlt": dlt}
    return alg


def bad_loss_hook(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Its check_losses hook (called by the engine directly, outside any
    learner call) raises TypeError."""
    def check_losses(losses):
        raise TypeError("my loss check is broken")
    alg = _with(T, K, epsilon)
    alg.check_losses = check_losses
    return alg


# A user's algorithm that names no attacks: audited with the neighbour search.

def no_attacks(T, K, N, epsilon=0.5, delta=0.0, **params):
    """Plays each arm with probability 1/K whatever the losses (so any claim
    holds), and declares no default attacks."""
    def init(runs, rng):
        return {"runs": runs}

    def act(state, advice, rng):
        return state, rng.integers(0, K, state["runs"])

    def feed(state, actions, losses, rng):
        return state

    return Algorithm("no-attacks", Learner(init, act, feed, K),
                     Claim(epsilon, 0.0, "actions", "uniform play"), T, K, {"epsilon": epsilon})


# --------------------------------------------------------------------------
# Randomness outside the generator the tool hands the learner (refused before
# an audit: audit.engine.reproducibility).  Each is the noisy greedy above
# with its noise drawn from somewhere else.

def _noise_from(T, K, epsilon, name, draw, init=None):
    """The noisy greedy whose act() draws its Laplace noise with
    ``draw(state, rng, shape, scale)`` instead of ``rng.laplace``."""
    base_init, _, _ = _greedy_parts(K, epsilon)

    def act(state, advice, rng):
        noisy = state["L"] + draw(state, rng, state["L"].shape, 1 / epsilon)
        return {**state, "t": state["t"] + 1}, noisy.argmin(axis=1)
    return _with(T, K, epsilon, name=name, init=init or base_init, act=act)


def numpy_global(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Draws from numpy's global functions (np.random.laplace)."""
    return _noise_from(T, K, epsilon, "numpy-global",
                       lambda state, rng, shape, b: np.random.laplace(0, b, shape))


def python_random(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Draws from Python's random module (random.random)."""
    import random

    def draw(state, rng, shape, b):
        u = np.array([random.random() for _ in range(int(np.prod(shape)))]).reshape(shape)
        return -b * np.sign(u - 0.5) * np.log1p(-2 * np.abs(u - 0.5))
    return _noise_from(T, K, epsilon, "python-random", draw)


def _own_generator(K, epsilon, make):
    base_init, _, _ = _greedy_parts(K, epsilon)

    def init(runs, rng):
        return {**base_init(runs, rng), "gen": make()}
    return init


def own_fixed_generator(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Creates np.random.default_rng(0) in init: every chunk the same runs."""
    return _noise_from(T, K, epsilon, "own-fixed-generator",
                       lambda state, rng, shape, b: state["gen"].laplace(0, b, shape),
                       init=_own_generator(K, epsilon, lambda: np.random.default_rng(0)))


def own_unseeded_generator(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Creates an unseeded np.random.default_rng() in init."""
    return _noise_from(T, K, epsilon, "own-unseeded-generator",
                       lambda state, rng, shape, b: state["gen"].laplace(0, b, shape),
                       init=_own_generator(K, epsilon, np.random.default_rng))


def from_given_generator(T, K, N, epsilon=1.0, delta=0.0, **params):
    """Correct: all its noise comes from the rng argument."""
    return _noise_from(T, K, epsilon, "from-given-generator",
                       lambda state, rng, shape, b: rng.laplace(0, b, shape))


def deterministic(T, K, N, epsilon=1.0, delta=0.0, **params):
    """No randomness at all: follow the leader (ties to the lowest arm)."""
    return _noise_from(T, K, epsilon, "deterministic",
                       lambda state, rng, shape, b: np.zeros(shape))
