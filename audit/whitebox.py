"""White-box audits (SPEC §4): the exact privacy loss L(x) = ln P_ℓ(x) − ln P_ℓ′(x)
of outputs x, computed by replaying both runs along x.

Two scopes:
* ``actions`` — for learners whose only randomness is sampling an action from
  a distribution they compute (``probs`` + ``commit``): L is the sum over
  rounds of ln P_t(I_t) − ln P′_t(I_t) along the history.
* ``transcript`` — for learners that release Laplace-noised values to an
  inner learner and choose actions from past releases only: the action terms
  cancel and L is the sum of log density ratios of the releases.

Three modes: the per-round loss curve along a given history, a search for
the output with the largest loss (a certificate: an x with L(x) > ε refutes
pure ε-DP with no statistical error), and the privacy-loss distribution,
whose δ(ε) = E[(1 − e^{ε−L})₊] gets a simultaneous lower confidence bound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from algorithms.core import Algorithm, Claim
from .simulate import simulate


def scope_of(alg: Algorithm) -> Optional[str]:
    """Which exact white-box scope this algorithm supports, if any."""
    lr = alg.learner
    if lr.probs is not None and lr.commit is not None and lr.transcript is None:
        return "actions"
    if lr.transcript is not None:
        return "transcript"
    return None


# ------------------------------------------------------------ replay engine
def replay_both(alg: Algorithm, losses_a, losses_b, choose, T: int, rows: int,
                advice=None, keep_probs: bool = False):
    """Replay ``rows`` histories on both sides at once (rows of side ℓ first,
    then the same histories on ℓ′).  ``choose(t, logp_a, logp_b)`` returns the
    action of every history at round t given both sides' log-probabilities
    ``(rows, K)`` (a fixed history ignores them; a search uses them).
    Returns the per-round log-ratio of the chosen actions ``(rows, T)``, the
    actions, and optionally P_t on both sides ``(T, rows, K)``."""
    lr = alg.learner
    rng = np.random.default_rng(0)  # unused by action-only learners' feed
    state = lr.init(2 * rows, rng)
    idx = np.arange(rows)
    ratio = np.empty((rows, T))
    acts = np.empty((rows, T), dtype=np.int64)
    both = np.concatenate
    probs_a = np.empty((T, rows, lr.n_arms)) if keep_probs else None
    probs_b = np.empty((T, rows, lr.n_arms)) if keep_probs else None
    for t in range(T):
        adv = None if advice is None else advice[t]
        with np.errstate(divide="ignore"):
            logp = np.log(lr.probs(state, adv))
        la, lb = logp[:rows], logp[rows:]
        a = np.asarray(choose(t, la, lb), dtype=np.int64)
        acts[:, t] = a
        ratio[:, t] = la[idx, a] - lb[idx, a]
        if keep_probs:
            probs_a[t], probs_b[t] = np.exp(la), np.exp(lb)
        a2 = both([a, a])
        state = lr.commit(state, adv, a2)
        if lr.feedback == "full":
            # Full information: each side's learners see their whole row.
            state = _feed_rows(lr, state, a2, losses_a[t], losses_b[t], rows, rng)
        else:
            obs = both([losses_a[t][a], losses_b[t][a]])
            state = lr.feed(state, a2, obs, rng)
    return ratio, acts, probs_a, probs_b


def _feed_rows(lr, state, actions, row_a, row_b, rows, rng):
    """Feed row_a to the first ``rows`` runs and row_b to the rest: feed the
    two halves separately and stack them back (state arrays lead with runs)."""
    def half(x, sl):
        return x[sl] if isinstance(x, np.ndarray) and x.ndim and x.shape[0] == 2 * rows else x
    parts = []
    for sl, row in ((slice(0, rows), row_a), (slice(rows, None), row_b)):
        sub = {k: half(v, sl) for k, v in state.items()}
        parts.append(lr.feed(sub, actions[sl], row, rng))
    return {k: (np.concatenate([parts[0][k], parts[1][k]])
                if isinstance(parts[0][k], np.ndarray) and parts[0][k].ndim
                and parts[0][k].shape[0] == rows else parts[0][k]) for k in parts[0]}


def action_loss(alg, losses_a, losses_b, actions, advice=None) -> np.ndarray:
    """Exact L(x) for each history ``actions (M, T)`` (action scope)."""
    ratio, _, _, _ = replay_both(alg, losses_a, losses_b, lambda t, la, lb: actions[:, t],
                                 actions.shape[1], actions.shape[0], advice)
    return ratio.sum(axis=1)


def transcript_loss(alg, losses_a, losses_b, trace, advice=None) -> np.ndarray:
    """Exact L(x) for sampled transcripts (transcript scope): the sum over
    releases y of ln f(y − m) − ln f(y − m′) = (|y − m′| − |y − m|)/b for
    Laplace noise of scale b, where m, m′ are the release means under ℓ, ℓ′
    given the same actions."""
    model = alg.learner.transcript
    y = trace.releases
    m_a = model.means(trace.actions, losses_a, trace.aux, advice)
    m_b = model.means(trace.actions, losses_b, trace.aux, advice)
    per = (np.abs(y - m_b) - np.abs(y - m_a)) / model.scale
    return per.reshape(per.shape[0], -1).sum(axis=1)


# ------------------------------------------------------- mode 1: per round
@dataclass
class PerRoundCurve:
    history: str
    epsilon_t: np.ndarray         # max_i |ln P_t(i) − ln P′_t(i)| along the history
    p_a: np.ndarray               # P_t(i) on ℓ, (T, K)
    p_b: np.ndarray               # P′_t(i) on ℓ′
    claim_per_round: Optional[float]

    @property
    def first_exceeding(self) -> Optional[int]:
        if self.claim_per_round is None:
            return None
        hits = np.flatnonzero(self.epsilon_t > self.claim_per_round)
        return int(hits[0]) + 1 if hits.size else None


def per_round_curve(alg, losses_a, losses_b, history: np.ndarray, label: str,
                    claim: Claim) -> PerRoundCurve:
    """App. G.1: view the algorithm as the adaptive composition of per-round
    mechanisms; along a fixed history both sides' distributions are computed
    and ε_t is their largest log-ratio over arms."""
    T = history.shape[0]
    if alg.learner.replay is not None:
        pa, pb = alg.learner.replay(losses_a[:T], history), alg.learner.replay(losses_b[:T], history)
    else:
        _, _, pa, pb = replay_both(alg, losses_a, losses_b, lambda t, la, lb: history[t:t + 1],
                                   T, 1, keep_probs=True)
        pa, pb = pa[:, 0], pb[:, 0]
    with np.errstate(divide="ignore"):
        eps_t = np.abs(np.log(pa) - np.log(pb)).max(axis=1)
    return PerRoundCurve(label, eps_t, pa, pb, claim.per_round_epsilon)


# ------------------------------------------------------ mode 2: search
@dataclass
class Certificate:
    description: str
    loss: float                   # exact L(x) at the horizon reported
    horizon: int                  # length of the history x
    claim_at_horizon: float       # the claim this x is judged against
    actions_head: list            # first actions of x, for the report
    curve: np.ndarray = field(repr=False, default=None)  # cumulative L along x

    @property
    def violation(self) -> bool:
        return self.loss > self.claim_at_horizon


def search_worst_output(alg, losses_a, losses_b, claim: Claim, advice=None,
                        alternations: Optional[list] = None) -> Certificate:
    """Search histories for a large exact loss.  Candidates, replayed
    together: greedy (each round play the arm with the larger log-ratio
    ln P_t(i) − ln P′_t(i)), and, for two arms, "alternate 2,1 for A rounds,
    then greedy" for a grid of A — the App. G.1 history that drives EXP3's
    weights apart before exploiting the gap.

    A claim composed from per-round claims (ε_t T′) is checked at every prefix
    length T′ (a prefix of a run is a run with horizon T′); any other claim
    at the full horizon."""
    T, K = alg.horizon, alg.n_arms
    if alternations is None:
        alternations = [0] + (sorted({int(x) for x in np.geomspace(16, max(T // 2, 16), 28)})
                              if K == 2 else [])
    A = np.array(alternations)
    rows = len(A)

    def choose(t, la, lb):
        greedy = np.argmax(la - lb, axis=1)
        alternate = np.full(rows, 1 if t % 2 == 0 else 0)
        return np.where(t < A, alternate, greedy)

    ratio, acts, _, _ = replay_both(alg, losses_a, losses_b, choose, T, rows, advice)
    cum = np.cumsum(ratio, axis=1)
    per_round = claim.per_round_epsilon
    if per_round is not None:
        lengths = np.arange(1, T + 1)
        margin = cum - per_round * lengths
        r, t = np.unravel_index(np.argmax(margin), margin.shape)
        horizon, claim_value = int(t) + 1, per_round * (int(t) + 1)
    else:
        r, horizon, claim_value = int(np.argmax(cum[:, -1])), T, claim.epsilon
    a = int(A[r])
    desc = ("greedy: each round play the arm with the larger log-ratio ln P_t(i) − ln P′_t(i)"
            if a == 0 else
            f"alternate 2,1 for {a} rounds, then follow the arm with the larger log-ratio")
    desc += f"; length {horizon}"
    return Certificate(desc, float(cum[r, horizon - 1]), horizon, float(claim_value),
                       (acts[r, :24] + 1).tolist(), cum[r, :horizon])


# ------------------------------------------ mode 3: privacy-loss distribution
@dataclass
class LossDistribution:
    losses: np.ndarray            # exact L(x) of outputs sampled on ℓ
    alpha: float
    band: float                   # DKW: S(u) ≥ Ŝ(u) − band for all u, w.p. ≥ 1 − α
    scope: str

    def delta_lower(self, eps: float) -> float:
        """Lower confidence bound on δ(ε) = E[(1 − e^{ε−L})₊] = ∫_ε^∞ e^{ε−u} S(u) du,
        from the simultaneous lower band on the survival function S of L, so it
        holds for every ε at once."""
        L = np.sort(self.losses)
        n = L.size
        above = L[L > eps]
        if above.size == 0:
            return 0.0
        # Ŝ is a step function: on [L_(k), L_(k+1)) it equals (n − k − 1)/n.
        pts = np.concatenate([[eps], above])
        surv = (above.size - np.arange(above.size + 1)) / n  # Ŝ on [pts_i, pts_{i+1})
        lo = np.maximum(surv - self.band, 0.0)
        # ∫_{p_i}^{p_{i+1}} e^{ε−u} du = e^{ε−p_i} − e^{ε−p_{i+1}}
        w_left = np.exp(eps - pts)
        w_right = np.concatenate([w_left[1:], [0.0]])
        return float(np.sum(lo * (w_left - w_right)))

    def delta_point(self, eps: float) -> float:
        above = self.losses[self.losses > eps]
        return float(np.sum(1 - np.exp(eps - above)) / self.losses.size)

    def epsilon_lower_bound(self, delta: float) -> float:
        """sup{ε : δ_lb(ε) > δ}: if the algorithm were (ε, δ)-DP at a smaller ε,
        δ(ε) ≤ δ would contradict the (simultaneous) bound."""
        f = lambda e: self.delta_lower(e) - delta
        hi = float(np.max(self.losses))
        if f(0.0) <= 0:
            return 0.0
        lo = 0.0
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return lo


def loss_distribution(alg, losses_a, losses_b, n: int, rng, alpha: float, advice=None,
                      rounds: Optional[int] = None) -> LossDistribution:
    """Sample outputs on side ℓ and evaluate their exact privacy loss."""
    scope = scope_of(alg)
    if scope == "transcript":
        trace = simulate(alg, losses_a, n, rng, advice=advice, rounds=rounds, record_transcript=True)
        L = transcript_loss(alg, losses_a, losses_b, trace, advice)
    elif scope == "actions":
        trace = simulate(alg, losses_a, n, rng, advice=advice, rounds=rounds)
        L = action_loss(alg, losses_a, losses_b, trace.actions.astype(np.int64), advice)
    else:
        raise ValueError(f"{alg.name} supports no white-box scope")
    band = math.sqrt(math.log(1 / alpha) / (2 * n))  # one-sided DKW (Massart)
    return LossDistribution(L, alpha, band, scope)
