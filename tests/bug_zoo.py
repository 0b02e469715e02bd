"""A zoo of realistic privacy bugs nobody wrote an attack for, of the four
kinds the default audit used to miss, each with its correct twin, for
measuring the default audit's power (``benchmarks/bug_zoo.py``) and its
validity (``tests/test_bug_zoo.py``).

The kinds:

* ``released`` — the defect lives in the values released besides the
  actions (a claim of scope "transcript"): noise shared by releases, a
  noise law whose tails break a pure-ε claim, noise too small for the
  range of a forwarded loss;
* ``code+value`` — a mechanism releasing a number together with a code,
  where only a code prefix and a threshold on the number separate the
  bug from its correct twin;
* ``far`` — the leak shows tens of rounds after the changed round (delayed
  feedback, an undeclared epoch, an estimate that only shows when the
  running means cross);
* ``parameters`` — the claim quantifies over a parameter (the horizon, the
  number of experts) and fails only away from the default.

Every factory takes the ``audit run`` slots by name (``T``, ``K``,
``epsilon``), so ``audit run tests.bug_zoo:NAME`` audits it as a user's
factory; ``ZOO`` lists the bugs with their kind and true ε (derived in each
docstring), ``CORRECT`` the correct twins.  Each true ε is for the claim's
output and relation at the factory's defaults.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import Algorithm, Claim, Learner
from algorithms.core import Laplace, TranscriptModel

BOUNDED = {"relation": "bounded-all", "max_change": 1.0}
DOMAIN = (-10.0, 10.0)
BELOW, ABOVE, ABORTED = 0, 1, 2


def _zeros(n):
    return np.zeros(n, dtype=np.int64)


# ================================================================ released
def _stream_of_values(name, T, epsilon, shared: bool, law: str = "laplace",
                      declare: bool = True) -> Algorithm:
    """A learner over one value a round in [0, 1] (full information, one
    arm) that releases a noisy running sum (``shared``) or each round's noisy
    value; it plays nothing of interest (always arm 1)."""
    b = 1.0 / epsilon

    def init(runs, rng):
        z = rng.laplace(0.0, b, runs) if shared else np.zeros(runs)
        return {"n": runs, "S": np.zeros(runs), "Z": z, "r": np.full(runs, np.nan)}

    def act(state, advice, rng):
        return state, _zeros(state["n"])

    def feed(state, actions, losses, rng):
        x = float(losses[0])
        if shared:
            S = state["S"] + x
            return {**state, "S": S, "r": S + state["Z"]}
        noise = rng.laplace(0.0, b, state["n"]) if law == "laplace" else \
            rng.normal(0.0, b, state["n"])
        return {**state, "r": x + noise}

    def means(actions, losses, aux=None, advice=None):
        x = np.asarray(losses, dtype=float)[:actions.shape[1], 0]
        m = np.cumsum(x) if shared else x
        return np.broadcast_to(m, (actions.shape[0], m.size))

    model = TranscriptModel(released=lambda s: s["r"], means=means, law=Laplace(b),
                            history_free=True) if declare else None
    learner = Learner(init, act, feed, 1, feedback="full", transcript=model,
                      released=None if declare else (lambda s: s["r"]))
    claim = Claim(epsilon, 0.0, "transcript", "the author's analysis: Laplace(1/ε) on a value "
                  "of sensitivity 1", output="the released values r_1..r_T")
    return Algorithm(name, learner, claim, T, 1, {"epsilon": epsilon})


def shared_noise_counter(T=16, K=1, epsilon=1.0) -> Algorithm:
    """BUG (released): a running counter r_t = x_1 + … + x_t + Z whose
    Laplace(1/ε) noise Z is drawn once per run, in ``init``, and reused by
    every release (the author thought "the sum has sensitivity 1").  It
    declares the transcript model it believes in (fresh Laplace(1/ε) on
    each release).

    True ε = ∞: for a change at round t ≥ 2, r_t − r_{t−1} = x_t exactly,
    so the event {r_t − r_{t−1} > 1/2} has probability 1 on one side and 0
    on the other (x_t = 1 vs 0)."""
    return _stream_of_values("shared-noise-counter", T, epsilon, shared=True)


def noisy_stream(T=16, K=1, epsilon=1.0) -> Algorithm:
    """CORRECT twin of ``shared_noise_counter``: r_t = x_t + Laplace(1/ε)
    fresh each round.  One changed round moves one release by at most 1:
    exactly ε-DP (Laplace mechanism, Dwork & Roth Thm 3.6; each value in
    one release), attained in the release's tails."""
    return _stream_of_values("noisy-stream", T, epsilon, shared=False)


def gaussian_for_laplace(T=4, K=1, epsilon=1.0) -> Algorithm:
    """BUG (released): each round releases x_t + N(0, (1/ε)²) — the author
    called ``rng.normal`` with the Laplace scale — under a pure ε claim and a
    declared Laplace(1/ε) law.

    True ε = ∞: the privacy loss of one Gaussian release moved by Δ = 1 is
    ((y − m′)² − (y − m)²)/(2σ²) = Δ(2y − m − m′)/(2σ²), unbounded in y."""
    return _stream_of_values("gaussian-for-laplace", T, epsilon, shared=False, law="gaussian")


def _forwarding_greedy(name, T, K, epsilon, scale, explore=0.1) -> Algorithm:
    """A bandit that forwards each observed loss plus Laplace(``scale``) to
    a greedy learner on the noisy running means (exploring uniformly with
    probability ``explore``), releasing the forwarded value."""
    def init(runs, rng):
        return {"n": runs, "sum": np.zeros((runs, K)), "cnt": np.zeros((runs, K)),
                "r": np.full(runs, np.nan)}

    def act(state, advice, rng):
        n = state["n"]
        cnt = state["cnt"]
        mean = np.where(cnt > 0, state["sum"] / np.maximum(cnt, 1), -np.inf)
        greedy = mean.argmin(axis=1)
        explore_now = rng.random(n) < explore
        return state, np.where(explore_now, rng.integers(0, K, n), greedy)

    def feed(state, actions, losses, rng):
        n = state["n"]
        y = losses + rng.laplace(0.0, scale, n)
        s, c = state["sum"].copy(), state["cnt"].copy()
        s[np.arange(n), actions] += y
        c[np.arange(n), actions] += 1
        return {**state, "sum": s, "cnt": c, "r": y}

    learner = Learner(init, act, feed, K, released=lambda s: s["r"])
    claim = Claim(epsilon, 0.0, "transcript", "each observed loss forwarded once with "
                  "Laplace(1/ε) (Laplace mechanism), the arms post-processing",
                  output="the arms and the forwarded noisy losses")
    return Algorithm(name, learner, claim, T, K, {"epsilon": epsilon, "scale": scale})


def half_noise_forwarding(T=200, K=2, epsilon=1.0) -> Algorithm:
    """BUG (released): a private greedy bandit forwarding ℓ_t(I_t) +
    Laplace(1/(2ε)) — the budget halved where the noise should have been
    doubled — under the claim that the arms and the forwarded losses are
    ε-DP.

    True ε = 2ε = 2: one changed round moves one forwarded loss by at most
    1 under Laplace(1/(2ε)) noise, a density ratio of at most e^{2ε},
    attained when the changed arm is played there (far in the tails of the
    release); the arms are post-processing of the forwarded losses."""
    return _forwarding_greedy("half-noise-forwarding", T, K, epsilon, 0.5 / epsilon)


def noisy_forwarding(T=200, K=2, epsilon=1.0) -> Algorithm:
    """CORRECT twin: Laplace(1/ε) on each forwarded loss: exactly ε-DP."""
    return _forwarding_greedy("noisy-forwarding", T, K, epsilon, 1.0 / epsilon)


# ============================================================== code+value
def _sparse_vector(name, T, epsilon, release: str, c=1, threshold=0.0) -> Algorithm:
    """A sparse vector over T answers in [−10, 10] (one a round): ⊤ iff
    q_i + ν_i ≥ T₀ + ρ, at most ``c`` ⊤ answers, then aborted.  The budget
    is split ε₁ = ε/4 for the threshold, ε₂ = 3ε/4 for the answers: ρ ~
    Laplace(1/ε₁) = Laplace(4/ε), ν_i ~ Laplace(2c/ε₂) = Laplace(8c/(3ε)).
    With each ⊤ it releases a number: the gap q_i + ν_i − T₀ − ρ (``gap``),
    the noisy answer q_i + ν_i (``answer``), or q_i + ν_i with a numerical
    SVT's scales (``reused``: ρ ~ Laplace(3/ε), ν_i ~ Laplace(6c/ε), where
    a fresh q_i + Laplace(3c/ε) was meant)."""
    if release == "reused":
        b_rho, b_nu = 3.0 / epsilon, 6.0 * c / epsilon
    else:
        b_rho, b_nu = 4.0 / epsilon, 8.0 * c / (3.0 * epsilon)

    def init(runs, rng):
        return {"n": runs, "rho": rng.laplace(0.0, b_rho, runs),
                "count": np.zeros(runs, dtype=np.int64), "aborted": np.zeros(runs, bool),
                "code": _zeros(runs), "value": np.zeros((runs, 1))}

    def feed(state, actions, row, rng):
        n = state["n"]
        noisy = float(row[0]) + rng.laplace(0.0, b_nu, n)
        above = (noisy >= threshold + state["rho"]) & ~state["aborted"]
        code = np.where(state["aborted"], ABORTED, np.where(above, ABOVE, BELOW))
        count = state["count"] + above
        number = noisy - threshold - state["rho"] if release == "gap" else noisy
        value = np.where(above, number, 0.0)[:, None]
        return {**state, "count": count, "aborted": state["aborted"] | (count >= c),
                "code": code, "value": value}

    learner = Learner(init, lambda s, adv, rng: (s, s["code"]), feed, 3, feedback="stream",
                      point=lambda s: s["value"])
    source = ("Ding, Wang, Zhang & Kifer, Free Gap Information from the Differentially "
              "Private Sparse Vector and Noisy Max Mechanisms (PVLDB 2019): SVT with gap is "
              "ε-DP" if release != "reused" else
              "Wang et al. PLDI 2019, NumericalSVT: ε-DP")
    claim = Claim(epsilon, 0.0, "transcript", source, output="the codes and the released "
                  "numbers", **BOUNDED)
    return Algorithm(name, learner, claim, T, 1, {"epsilon": epsilon, "c": c},
                     loss_range=DOMAIN)


def svt_noisy_answer(T=10, K=1, epsilon=1.0) -> Algorithm:
    """BUG (code+value): a sparse vector with gap (c = 1) that releases the
    noisy answer q_i + ν_i with its ⊤ where the gap q_i + ν_i − T₀ − ρ was
    meant.  Its ⊥/⊤ codes have exactly the correct one's law.

    True ε = T/b_ν = 3Tε/8 = 3.75 (T = 10, ε = 1, b_ν = 8/(3ε)).  The output
    ⊥^{i−1}⊤ with number y has density ∫ f_ρ(r) Π_{j<i} F_ν(T₀ + r − q_j)
    f_ν(y − q_i) 1{r ≤ y − T₀} dr; with every answer moved by at most 1
    the ratio is at most e^{1/b_ν} (the density of ν_i) times
    max_r Π_{j<i} F_ν(T₀ + r − q_j)/F_ν(T₀ + r − q′_j) ≤ e^{(i−1)/b_ν}
    (Laplace CDFs), and both bounds are approached as y → −∞ with q′ = q +
    1 (left tails).  Outputs without ⊤ are at most e^{1/b_ρ} = e^{ε/2}
    apart.  So ε = max_i i/b_ν = T/b_ν, a code prefix ⊥^{T−1}⊤ together
    with a low released number; the events an audit can count (probability
    ≳ 10⁻³) reach about 1.5 (a prefix of 4 to 7 ⊥ and a number below the
    median of its ⊤)."""
    return _sparse_vector("svt-noisy-answer", T, epsilon, "answer")


def svt_gap(T=10, K=1, epsilon=1.0) -> Algorithm:
    """CORRECT twin: the sparse vector with gap (Ding et al. PVLDB 2019,
    ε-DP: the gap's density shifts ρ and ν_i together)."""
    return _sparse_vector("svt-gap", T, epsilon, "gap")


def numerical_svt_reused(T=10, K=1, epsilon=1.0) -> Algorithm:
    """BUG (code+value): numerical SVT (ρ ~ Laplace(3/ε), ν_i ~
    Laplace(6c/ε), c = 1) that releases with ⊤ the compared noisy answer
    q_i + ν_i instead of a fresh q_i + Laplace(3c/ε).

    True ε = T/b_ν = Tε/6 ≈ 1.667 (T = 10, ε = 1): the argument of
    ``svt_noisy_answer`` with b_ν = 6/ε (the ⊥ prefix and the released
    number's own density, approached in the left tails)."""
    return _sparse_vector("numerical-svt-reused", T, epsilon, "reused")


def _noisy_max(name, K, epsilon, gap: bool) -> Algorithm:
    """Report-noisy-max over K answers in [−10, 10] (one round): Laplace(2/ε)
    on each, the index as the code and a number: the noisy maximum
    (``gap`` False) or its gap to the runner-up."""
    b = 2.0 / epsilon

    def init(runs, rng):
        return {"n": runs, "code": _zeros(runs), "value": np.zeros((runs, 1))}

    def feed(state, actions, row, rng):
        n = state["n"]
        v = np.asarray(row, dtype=float)[None, :] + rng.laplace(0.0, b, (n, K))
        order = np.sort(v, axis=1)
        value = order[:, -1] - order[:, -2] if gap else order[:, -1]
        return {**state, "code": v.argmax(axis=1), "value": value[:, None]}

    learner = Learner(init, lambda s, adv, rng: (s, s["code"]), feed, K, feedback="stream",
                      point=lambda s: s["value"])
    claim = Claim(epsilon, 0.0, "transcript", "Ding, Wang, Zhang & Kifer (PVLDB 2019): "
                  "report-noisy-max with gap, Laplace(2/ε), is ε-DP", output="the index and "
                  "the released number", **BOUNDED)
    return Algorithm(name, learner, claim, 1, K, {"epsilon": epsilon}, loss_range=DOMAIN)


def noisy_max_value(T=1, K=5, epsilon=1.0) -> Algorithm:
    """BUG (code+value): report-noisy-max that releases the noisy maximum
    q_i + Z_i with its index i where the gap to the runner-up was meant.

    True ε = K/b = Kε/2 = 2.5 (K = 5, b = 2/ε): the output (i, y) has
    density f(y − q_i) Π_{j≠i} F(y − q_j); with every answer moved by at
    most 1 each factor's ratio is at most e^{1/b}, all approached together
    as y → −∞ with q′ = q + 1 (Laplace left tails)."""
    return _noisy_max("noisy-max-value", K, epsilon, gap=False)


def noisy_max_gap(T=1, K=5, epsilon=1.0) -> Algorithm:
    """CORRECT twin: report-noisy-max with gap, ε-DP (Ding et al. PVLDB
    2019)."""
    return _noisy_max("noisy-max-gap", K, epsilon, gap=True)


# ===================================================================== far
def _delayed_threshold(name, T, epsilon, delay, scale) -> Algorithm:
    """Full information, two arms: from round D + 1 on it plays arm 2 iff
    the loss of arm 1 D rounds earlier plus fresh Laplace(``scale``) is at
    least 1/2 (a prediction from delayed feedback); uniform before."""
    def init(runs, rng):
        return {"n": runs, "t": 0, "buf": np.zeros(delay)}

    def act(state, advice, rng):
        n, t = state["n"], state["t"]
        if t < delay:
            return state, rng.integers(0, 2, n)
        seen = state["buf"][t % delay]
        return state, (seen + rng.laplace(0.0, scale, n) >= 0.5).astype(np.int64)

    def feed(state, actions, losses, rng):
        buf = state["buf"].copy()
        buf[state["t"] % delay] = float(losses[0])
        return {**state, "t": state["t"] + 1, "buf": buf}

    learner = Learner(init, act, feed, 2, feedback="full")
    claim = Claim(epsilon, 0.0, "actions", "each loss read once, by one Laplace threshold",
                  output="the arms played")
    return Algorithm(name, learner, claim, T, 2, {"epsilon": epsilon, "delay": delay})


def delayed_threshold(T=200, K=2, epsilon=1.0, delay=30) -> Algorithm:
    """BUG (far): a learner on delayed feedback (delay D = 30) whose noise
    was scaled for the mean of the D-round delay window, Laplace(1/(Dε)),
    while each action reads one loss.

    True ε = ln(2e^{Dε/2} − 1) ≈ Dε/2 + ln 2 = 15.69 (D = 30, ε = 1): each
    loss ℓ_t(1) ∈ [0, 1] is read once, by the action at round t + D, as
    1{ℓ + Z ≥ 1/2} with Z ~ Laplace(b); the largest ratio is P(Z ≥ −1/2)/
    P(Z ≥ 1/2) = (1 − e^{−1/(2b)}/2)/(e^{−1/(2b)}/2) = 2e^{1/(2b)} − 1.
    The leak shows D rounds after the changed round, nowhere before."""
    return _delayed_threshold("delayed-threshold", T, epsilon, delay, 1.0 / (delay * epsilon))


def delayed_threshold_correct(T=200, K=2, epsilon=1.0, delay=30) -> Algorithm:
    """CORRECT twin: Laplace(1/ε); true ε = ln(2e^{ε/2} − 1) ≈ 0.832 ≤ ε."""
    return _delayed_threshold("delayed-threshold-correct", T, epsilon, delay, 1.0 / epsilon)


def _epoch_leader(name, T, epsilon, epoch, scale) -> Algorithm:
    """Full information, two arms, lazy: at the start of every epoch of
    ``epoch`` rounds it switches to the arm with the smaller cumulative
    noisy epoch sum (each epoch's sum of each arm's losses plus
    Laplace(``scale``), drawn when the epoch ends)."""
    def init(runs, rng):
        return {"n": runs, "t": 0, "sum": np.zeros(2), "noisy": np.zeros((runs, 2)),
                "arm": rng.integers(0, 2, runs)}

    def act(state, advice, rng):
        return state, state["arm"]

    def feed(state, actions, losses, rng):
        t = state["t"] + 1
        s = state["sum"] + np.asarray(losses, dtype=float)
        noisy, arm = state["noisy"], state["arm"]
        if t % epoch == 0:
            noisy = noisy + s[None, :] + rng.laplace(0.0, scale, (state["n"], 2))
            s = np.zeros(2)
            arm = noisy.argmin(axis=1)
        return {**state, "t": t, "sum": s, "noisy": noisy, "arm": arm}

    learner = Learner(init, act, feed, 2, feedback="full", shared=("sum",))
    claim = Claim(epsilon, 0.0, "actions", "each epoch sum released once with Laplace(2/ε) "
                  "(ℓ₁ sensitivity 2 for one changed row)", output="the arms played")
    return Algorithm(name, learner, claim, T, 2, {"epsilon": epsilon, "epoch": epoch})


def epoch_leader_mean_noise(T=1000, K=2, epsilon=1.0, epoch=100) -> Algorithm:
    """BUG (far): a lazy leader that updates every E = 100 rounds from noisy
    epoch sums, whose noise was scaled for the epoch *mean*, Laplace(2/(Eε))
    instead of Laplace(2/ε); the epoch is its own (no batch parameter the
    search knows).

    True ε between 46.7 and Eε = 100: the noisy epoch sums are exactly
    Eε-DP (one changed row moves two sums by 1 each, ℓ₁ 2, against
    Laplace(2/(Eε))), and the arms are post-processing of them; on the
    all-zero background with arm 1's loss 1 vs 0 the arm of the next
    epoch alone has log-ratio ln(P(W < 0)/P(W < −1)) = 1/b − ln(1 + 1/(2b))
    = 50 − ln 26 ≈ 46.7 (the change in the first epoch; W the difference of
    two Laplace(b), b = 2/(Eε) = 0.02, P(W < −x) = e^{−x/b}(1 + x/(2b))/2
    for x ≥ 0).  The leak shows at the next epoch boundary, up to 100
    rounds after the change."""
    return _epoch_leader("epoch-leader-mean-noise", T, epsilon, epoch, 2.0 / (epoch * epsilon))


def epoch_leader(T=1000, K=2, epsilon=1.0, epoch=100) -> Algorithm:
    """CORRECT twin: Laplace(2/ε) on each epoch sum: ε-DP (Laplace
    mechanism on the noisy sums, ℓ₁ sensitivity 2; the arms post-process)."""
    return _epoch_leader("epoch-leader", T, epsilon, epoch, 2.0 / epsilon)


def _noisy_leader(name, T, epsilon, once: bool) -> Algorithm:
    """Full information, two arms: follows the leader of noisy cumulative
    losses S_t + N_t, N_t the sum of per-round Laplace(2/ε) noise vectors
    (fresh each round), or (``once``) one Laplace(2/ε) vector drawn at
    init and reused."""
    b = 2.0 / epsilon

    def init(runs, rng):
        z = rng.laplace(0.0, b, (runs, 2))
        return {"n": runs, "S": np.zeros(2), "N": z if once else np.zeros((runs, 2))}

    def act(state, advice, rng):
        return state, (state["S"][None, :] + state["N"]).argmin(axis=1)

    def feed(state, actions, losses, rng):
        N = state["N"] if once else state["N"] + rng.laplace(0.0, b, (state["n"], 2))
        return {**state, "S": state["S"] + np.asarray(losses, dtype=float), "N": N}

    learner = Learner(init, act, feed, 2, feedback="full", shared=("S",))
    claim = Claim(epsilon, 0.0, "actions", "noisy cumulative losses: each row's noise "
                  "Laplace(2/ε) (ℓ₁ sensitivity 2), the arms post-processing",
                  output="the arms played")
    return Algorithm(name, learner, claim, T, 2, {"epsilon": epsilon})


def noise_once_leader(T=200, K=2, epsilon=1.0) -> Algorithm:
    """BUG (far): follow the noisy leader whose noise vector is drawn once,
    in ``init``, instead of fresh for each round's row.

    True ε = ∞: the actions reveal at every round whether S_1 − S_2 < W
    (W = N_2 − N_1, fixed).  On a background whose running difference
    first falls through −W before the change (the first switch pins W to
    a round's width) and rises back after it (drifting means: the switch
    back comes at a round that the changed loss moves), some pairs of
    switch rounds occur under ℓ and never under ℓ′.  Nothing shows while
    the running difference stays away from −W: on the fixed backgrounds,
    within a few rounds of the change, the leak is at most e^{1/b}."""
    return _noisy_leader("noise-once-leader", T, epsilon, once=True)


def fresh_noise_leader(T=200, K=2, epsilon=1.0) -> Algorithm:
    """CORRECT twin: fresh Laplace(2/ε) per round and arm: the noisy
    cumulative sums are post-processing of noisy rows, each ε-DP with one
    row changed (ℓ₁ ≤ 2): ε-DP."""
    return _noisy_leader("fresh-noise-leader", T, epsilon, once=False)


# ============================================================== parameters
CHAN_SHI_SONG = ("Chan, Shi & Song, Private and Continual Release of Statistics (TISSEC "
                 "2011), Theorem 3.5: the binary mechanism with Laplace(levels/ε) per p-sum "
                 "is ε-DP for any T")


def _binary_counter(name, T, epsilon, levels_of) -> Algorithm:
    """The binary mechanism (Chan, Shi & Song): each round's value x_t in
    [0, 1]; every dyadic p-sum gets Laplace(L/ε) noise when it completes,
    L = ``levels_of(T)``; round t releases the noisy count of 1..t, the sum
    of the p-sums of t's binary digits."""
    L = levels_of(T)
    b = L / epsilon
    depth = max(1, int(T).bit_length())

    def init(runs, rng):
        return {"n": runs, "t": 0, "alpha": np.zeros(depth), "noisy": np.zeros((runs, depth)),
                "r": np.full(runs, np.nan)}

    def act(state, advice, rng):
        return state, _zeros(state["n"])

    def feed(state, actions, losses, rng):
        t = state["t"] + 1
        x = float(losses[0])
        i = (t & -t).bit_length() - 1            # the lowest set bit: the p-sum completing
        alpha = state["alpha"].copy()
        noisy = state["noisy"].copy()
        alpha[i] = alpha[:i].sum() + x
        alpha[:i] = 0.0
        noisy[:, i] = alpha[i] + rng.laplace(0.0, b, state["n"])
        noisy[:, :i] = 0.0
        bits = [j for j in range(depth) if (t >> j) & 1]
        r = noisy[:, bits].sum(axis=1)
        return {**state, "t": t, "alpha": alpha, "noisy": noisy, "r": r}

    learner = Learner(init, act, feed, 1, feedback="full", released=lambda s: s["r"],
                      shared=("alpha",))
    claim = Claim(epsilon, 0.0, "transcript", CHAN_SHI_SONG, output="the noisy counts "
                  "r_1..r_T")
    return Algorithm(name, learner, claim, T, 1, {"epsilon": epsilon, "levels": L},
                     extra={"claim_ranges": {"horizon": (1, None, CHAN_SHI_SONG)}})


def binary_counter_rounded(T=1000, K=1, epsilon=1.0) -> Algorithm:
    """BUG (parameters): the binary mechanism with L = round(log₂ T) levels
    of noise where one round lies in ⌊log₂ T⌋ + 1 p-sums (the author
    rounded instead of taking the floor and adding one).  Correct at the
    default T = 1000 (round(9.97) = 10 = ⌊9.97⌋ + 1), its claim declared
    for every T.

    True ε = ε(⌊log₂ T⌋ + 1)/max(1, round(log₂ T)): 1 at T = 1000, 2 at
    T = 2 (round 1 lies in the p-sums [1, 1] and [1, 2], each with
    Laplace(1/ε): ℓ₁ sensitivity 2 against 1), 1.5 at T = 4, 4/3 at T =
    8, 1.25 at T = 17."""
    return _binary_counter("binary-counter-rounded", T, epsilon,
                           lambda T: max(1, round(math.log2(T))))


def binary_counter(T=1000, K=1, epsilon=1.0) -> Algorithm:
    """CORRECT twin: L = ⌊log₂ T⌋ + 1 levels: exactly ε-DP at every T."""
    return _binary_counter("binary-counter", T, epsilon, lambda T: int(T).bit_length())


def _private_commit(name, T, K, epsilon, scale_of) -> Algorithm:
    """Experts (full information, K of them): at round τ = T/4 it picks an
    expert once by report-noisy-min over the cumulative losses of rounds
    1..τ (Laplace(``scale_of(K)``) on each) and follows it; uniform before."""
    tau = max(1, T // 4)
    b = scale_of(K) / epsilon

    def init(runs, rng):
        return {"n": runs, "t": 0, "S": np.zeros(K), "pick": _zeros(runs)}

    def act(state, advice, rng):
        n, t = state["n"], state["t"]
        if t < tau:
            return state, rng.integers(0, K, n)
        if t == tau:
            pick = (state["S"][None, :] + rng.laplace(0.0, b, (n, K))).argmin(axis=1)
            state = {**state, "pick": pick}
        return state, state["pick"]

    def feed(state, actions, losses, rng):
        return {**state, "t": state["t"] + 1, "S": state["S"] + np.asarray(losses, dtype=float)}

    source = ("Asi, Raman & Saha, Lemma 2.3 (report-noisy-max with Laplace(2/ε) on "
              "1-sensitive counts is ε-DP), for any number of experts N ≥ 2")
    learner = Learner(init, act, feed, K, feedback="full", shared=("S",))
    claim = Claim(epsilon, 0.0, "actions", source, output="the experts played")
    return Algorithm(name, learner, claim, T, K, {"epsilon": epsilon, "tau": tau},
                     extra={"claim_ranges": {"arms": (2, None, source),
                                             "horizon": (4, None, source)}})


def private_commit_logn(T=200, K=8, epsilon=1.0) -> Algorithm:
    """BUG (parameters): report-noisy-min with Laplace(2 ln N/ε) (the author
    added a union bound's ln N to the scale): more noise than needed for N
    ≥ 3, less for N = 2 — the default N = 8 is correct, the claim is
    declared for every N ≥ 2.

    True ε = 2/b = ε/ln N at N = 2: 1/ln 2 ≈ 1.443 (two counts moved in
    opposite directions by 1 each shift their difference by 2 under
    Laplace(b) noise on each, b = 2 ln 2/ε; the ratio P(W > d)/P(W > d + 2)
    of the difference of two Laplace(b) tends to e^{2/b} as d grows); at N =
    8, 2/b = ε/ln 8 ≈ 0.48 ≤ ε."""
    return _private_commit("private-commit-logn", T, K, epsilon, lambda K: 2 * math.log(K))


def private_commit(T=200, K=8, epsilon=1.0) -> Algorithm:
    """CORRECT twin: Laplace(2/ε), ε-DP for every N (Lemma 2.3)."""
    return _private_commit("private-commit", T, K, epsilon, lambda K: 2.0)


# ================================================================== lists
# (name, factory, kind, true ε at the defaults, and where the kind shows)
ZOO = [
    ("shared-noise-counter", shared_noise_counter, "released", math.inf),
    ("gaussian-for-laplace", gaussian_for_laplace, "released", math.inf),
    ("half-noise-forwarding", half_noise_forwarding, "released", 2.0),
    ("svt-noisy-answer", svt_noisy_answer, "code+value", 3.75),
    ("numerical-svt-reused", numerical_svt_reused, "code+value", 10 / 6),
    ("noisy-max-value", noisy_max_value, "code+value", 2.5),
    ("delayed-threshold", delayed_threshold, "far", math.log(2 * math.exp(15.0) - 1)),
    ("epoch-leader-mean-noise", epoch_leader_mean_noise, "far", 46.7),
    ("noise-once-leader", noise_once_leader, "far", math.inf),
    ("binary-counter-rounded", binary_counter_rounded, "parameters", 2.0),
    ("private-commit-logn", private_commit_logn, "parameters", 1 / math.log(2)),
]
# A registered algorithm of the same kind: Agarwal & Singh's FTRL on [−1, 1]
# losses, whose predictions are 2ε-DP at T = 2 (findings.md) and show
# nothing at the default T = 1000.
REGISTERED = [("as-ftrl-experts", "parameters", 2.0)]

CORRECT = [
    ("noisy-stream", noisy_stream, "released", 1.0),
    ("noisy-forwarding", noisy_forwarding, "released", 1.0),
    ("svt-gap", svt_gap, "code+value", 1.0),
    ("noisy-max-gap", noisy_max_gap, "code+value", 1.0),
    ("delayed-threshold-correct", delayed_threshold_correct, "far",
     math.log(2 * math.exp(0.5) - 1)),
    ("epoch-leader", epoch_leader, "far", 1.0),
    ("fresh-noise-leader", fresh_noise_leader, "far", 1.0),
    ("binary-counter", binary_counter, "parameters", 1.0),
    ("private-commit", private_commit, "parameters", 1.0),
]


# ======================================================= declaration forms
def malformed_ranges(T=8, K=1, epsilon=1.0) -> Algorithm:
    """``noisy_stream`` declaring a range that is not (low, high): refused
    with one line naming ``claim_ranges`` and the key."""
    alg = noisy_stream(T, K, epsilon)
    alg.extra["claim_ranges"] = {"horizon": "every T"}
    return alg


class RangedStream:
    """A stream mechanism written as a class (audited as written) that
    declares its claim's range as an attribute: Laplace(1/ε) on each value,
    ε-DP for every number of values."""

    claim_ranges = {"horizon": (1, None, "Laplace mechanism, any number of values")}

    def __init__(self, epsilon=1.0, seed=None):
        self.rng = np.random.default_rng(seed)
        self.scale = 1.0 / epsilon

    def release(self, x):
        return float(np.ravel(x)[0]) + self.rng.laplace(0.0, self.scale)
