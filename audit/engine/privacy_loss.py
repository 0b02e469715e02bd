"""White-box audits: the exact privacy loss L(x) = ln P_ℓ(x) − ln P_ℓ′(x)
of outputs x, computed by replaying both runs along x.

Two scopes:
* ``actions`` — for learners whose only randomness is sampling an action from
  a distribution they compute (``probs`` + ``commit``): L is the sum over
  rounds of ln P_t(I_t) − ln P′_t(I_t) along the history.
* ``transcript`` — for learners that release noisy values (Laplace,
  Gaussian or a finite law such as randomized response) to an inner learner
  and choose actions from past releases only: the action terms cancel and L
  is the sum of log density ratios of the releases.  When the release means
  depend on the losses only, the worst case of a pair over all outputs is
  computed exactly (``pair_worst_case``).

Three modes: the per-round loss curve along a given history, a search for
the output with the largest loss (in both directions; with δ = 0 an x with
L(x) > ε refutes ε-DP with no statistical error, with δ > 0 the event {x}
counts through its mass), and the privacy-loss distribution, whose
δ(ε) = E[(1 − e^{ε−L})₊] gets a simultaneous lower confidence bound.

Everything here trusts the learner's declarations; ``audit.engine.models``
checks them first.  Arithmetic is in log space and never yields NaN.

May import: ``algorithms``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from algorithms.claim_curves import curve_epsilon, gdp_delta
from algorithms.core import Algorithm, Claim
from algorithms.errors import UserCodeError, user_call


def scope_of(alg: Algorithm) -> Optional[str]:
    """Which exact white-box scope this algorithm supports, if any."""
    lr = alg.learner
    if lr.probs is not None and lr.commit is not None and lr.transcript is None:
        return "actions"
    if lr.transcript is not None:
        return "transcript"
    return None


# ------------------------------------------------------------ replay engine
# ln of the smallest positive double.  A probability that is 0 in floating
# point is below it (structurally zero, or underflowed), so using it in the
# denominator of a log-ratio gives a LOWER bound on the exact loss: sound for
# every use here (certificates, δ lower bounds), and never ±inf or NaN.
TINY_LOG = math.log(np.nextafter(0.0, 1.0))
# Exact losses are sums of floating-point terms, and replays of one history
# by different code paths (vectorised simulation, replay, a scalar fast path)
# agree to about this relative precision.  Reported exact bounds are reduced
# by it (``certified``), so a loss that equals the claim in exact arithmetic
# (a correct Algorithm 1 attains L = ε) never reads as above it.
FLOAT_TOL = 1e-7


def certified(x: float) -> float:
    """A floating-point loss turned into a bound that holds despite rounding."""
    x = float(x)
    return x - FLOAT_TOL * abs(x) - 1e-12 if math.isfinite(x) else x


def loss_terms(lp_num: np.ndarray, lp_den: np.ndarray) -> np.ndarray:
    """Per-round terms of ln P_num(x) − ln P_den(x), elementwise: −inf where
    x is impossible on the numerator side, a lower bound (``TINY_LOG``) where
    the denominator probability is 0 in floating point; never NaN."""
    return np.where(np.isneginf(lp_num), -np.inf, lp_num - np.maximum(lp_den, TINY_LOG))


def valid_probs(p, t: int, rows: int, n_arms: int) -> np.ndarray:
    """What ``probs`` returned at round t (0-based) as floats, refused
    unless finite of shape (rows, K)."""
    p = np.asarray(p, dtype=float)
    if p.shape != (rows, n_arms):
        raise UserCodeError("probs", t + 1, f"returned shape {p.shape}, expected "
                            f"({rows}, {n_arms})")
    if not np.isfinite(p).all():
        raise UserCodeError("probs", t + 1, "returned non-finite values (NaN or inf)")
    return p


def checked_probs(lr, state, adv, t: int, rows: int) -> np.ndarray:
    """``probs`` at round t (0-based), refused unless finite of shape (rows, K)."""
    with user_call("probs", t + 1):
        p = lr.probs(state, adv)
    return valid_probs(p, t, rows, lr.n_arms)


def replay_both(alg: Algorithm, losses_a, losses_b, choose, T: int, rows: int,
                advice=None, keep_probs: bool = False, seeds=(0, 1)):
    """Replay ``rows`` histories on both sides: each side keeps its own state
    (so fields shared by all runs of one side, see ``Learner.shared``, are
    replayed correctly) and its own random stream (so hidden randomness shows
    up as a loss on identical sequences, see ``audit.engine.models``).
    ``choose(t, logp_a, logp_b)`` returns the action of every history at
    round t given both sides' log-probabilities ``(rows, K)`` (a fixed
    history ignores them; a search uses them).

    Returns ln P_t(I_t) on each side ``(rows, T)`` (−inf where 0), the
    actions, and optionally P_t on both sides ``(T, rows, K)``."""
    lr = alg.learner
    rngs = [np.random.default_rng(s) for s in seeds]
    states = []
    for rng in rngs:
        with user_call("init"):
            states.append(lr.init(rows, rng))
    idx = np.arange(rows)
    lp = np.empty((2, rows, T))
    acts = np.empty((rows, T), dtype=np.int64)
    probs = np.empty((2, T, rows, lr.n_arms)) if keep_probs else None
    full, K = lr.full_rows, lr.n_arms
    # One try/except for the whole loop, as in the simulation's hot loop:
    # ``user_call`` around each call costs as much as a short learner's
    # round (10⁵ rounds replayed in EXP3's default audit).  ``where`` names
    # the learner function running; None while the tool's own code runs,
    # whose errors are never the learner's.
    where = None
    try:
        with np.errstate(divide="ignore"):
            for t in range(T):
                adv = None if advice is None else advice[t]
                logs = []
                for st in states:
                    where = ("probs", t + 1)
                    p = lr.probs(st, adv)
                    where = None
                    q = np.maximum(valid_probs(p, t, rows, K), 0.0)   # a new array: ours
                    np.minimum(q, 1.0, out=q)
                    logs.append(np.log(q, out=q))
                a = np.asarray(choose(t, logs[0], logs[1]), dtype=np.int64)
                acts[:, t] = a
                for s, losses in ((0, losses_a), (1, losses_b)):
                    lp[s, :, t] = logs[s][idx, a]
                    if keep_probs:
                        probs[s, t] = np.exp(logs[s])
                    where = ("commit", t + 1)
                    st = lr.commit(states[s], adv, a)
                    where = ("feed", t + 1)
                    states[s] = lr.feed(st, a, losses[t] if full else losses[t][a], rngs[s])
                    where = None
    except (UserCodeError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - the learner's own error, where it ran
        if where is None:
            raise
        raise UserCodeError.raised(*where, exc) from exc
    return lp[0], lp[1], acts, probs


def action_loss(alg, losses_a, losses_b, actions, advice=None) -> np.ndarray:
    """Exact L(x) = ln P_ℓ(x) − ln P_ℓ′(x) for each history ``actions (M, T)``
    (action scope; a lower bound where P_ℓ′ underflows, see ``loss_terms``)."""
    la, lb, _, _ = replay_both(alg, losses_a, losses_b, lambda t, pa, pb: actions[:, t],
                               actions.shape[1], actions.shape[0], advice)
    return loss_terms(la, lb).sum(axis=1)


def _release_means(model, actions, losses, aux, advice):
    with user_call("transcript.means"):
        return np.asarray(model.means(actions, losses, aux, advice), dtype=float)


def transcript_loss(alg, losses_a, losses_b, trace, advice=None) -> np.ndarray:
    """Exact L(x) for sampled transcripts (transcript scope): the sum over
    releases y of ln f(y | m) − ln f(y | m′), where m, m′ are the release
    means (a finite law: true values) under ℓ, ℓ′ given the same actions and
    f the declared law: (|y − m′| − |y − m|)/b for Laplace(b),
    ((y − m′)² − (y − m)²)/(2σ²) for N(0, σ²), ln P(y|v) − ln P(y|v′) for a
    finite law (a lower bound, ``TINY_LOG``, where P(y|v′) is 0)."""
    model = alg.learner.transcript
    law = model.noise
    y = trace.releases
    m_a = _release_means(model, trace.actions, losses_a, trace.aux, advice)
    m_b = _release_means(model, trace.actions, losses_b, trace.aux, advice)
    if law.continuous:
        per = law.log_ratio(y, m_a, m_b)
    else:
        num, den = law.log_density(y, m_a), law.log_density(y, m_b)
        per = np.where(np.isnan(num), np.nan, loss_terms(num, np.where(np.isnan(den), 0.0, den)))
    # NaN marks "nothing released" in a run; it contributes nothing.
    return np.nansum(per.reshape(per.shape[0], -1), axis=1)


# ------------------------------------------------ the worst case of one pair
def gaussian_delta(eps: float, mu: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with sensitivity/σ = μ (Balle &
    Wang 2018, Thm 8): μ-GDP's curve (``algorithms.claim_curves``)."""
    return float(gdp_delta(eps, mu))


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The smallest ε with δ(ε) ≤ δ for the Gaussian mechanism with ratio μ,
    rounded up: +inf for δ = 0 and μ > 0 (the loss is unbounded)."""
    return curve_epsilon("gdp", mu, delta)


@dataclass
class PairWorstCase:
    """The exact worst case of one pair over all its outputs: the smallest ε
    such that the pair's two output distributions are (ε, δ)-indistinguishable.
    No audit of this pair can show a larger ε at this δ."""

    epsilon: float
    delta: float
    law: str
    how: str
    # True: an upper bound over every history (TranscriptModel.shift_bound),
    # not the exact worst case; no audit of the pair can show more either way.
    upper_bound: bool = False

    def line(self) -> str:
        e = "∞" if math.isinf(self.epsilon) else f"{self.epsilon:.6g}"
        return (f"the worst case for this pair is {'at most ' if self.upper_bound else ''}"
                f"ε = {e} at δ = {self.delta:g}")

    def as_dict(self) -> dict:
        # JSON has no ∞: an unbounded worst case is epsilon None with unbounded true.
        inf = math.isinf(self.epsilon)
        return {"epsilon": None if inf else self.epsilon, "unbounded": inf, "delta": self.delta,
                "law": self.law, "how": self.how, "upper_bound": self.upper_bound}


def pair_worst_case(alg, losses_a, losses_b, rounds: int, delta: float,
                    advice=None) -> tuple[Optional[PairWorstCase], str]:
    """The pair's exact worst case when the release means depend on the
    losses only (``TranscriptModel.history_free``): the releases are then a
    fixed product mechanism with mean differences Δ = m − m′, and
    * Laplace(b): sup_x L(x) = ‖Δ‖₁/b, attained on a set of positive
      probability — exact at δ = 0 (a pure ε);
    * N(0, σ²): the loss is that of one Gaussian mechanism with μ = ‖Δ‖₂/σ
      (rotation invariance), so ε(δ) at the claim's δ is exact
      (``gaussian_epsilon``; ∞ at δ = 0);
    * finite: sup_x L(x) = Σ_r max_y ln P(y|v_r)/P(y|v′_r) over outputs
      possible on the numerator side, the larger direction — exact at δ = 0.
    When the means depend on the history but the model gives
    ``shift_bound`` (per release, an upper bound over every history on the
    distance of its two means), the same formulas at those distances bound
    the worst case from above (``upper_bound``): conditioned on the past
    releases each release is one Laplace or Gaussian mechanism with at most
    that shift, and the loss of their adaptive composition is at most the
    sum of ℓ₁ shifts over b, or that of one Gaussian mechanism with
    μ = (Σ shift²)^½/σ (Dong, Roth & Su 2019, composition of GDP).
    Otherwise (None, why): the worst case over all histories is not
    computed, and nothing sampled is ever offered in its place."""
    model = alg.learner.transcript
    if model is None:
        return None, "no transcript model"
    law = model.noise
    if not model.history_free:
        if model.shift_bound is None or law.kind == "finite":
            return None, ("the noisy values' means depend on the actions played (or on other "
                          "per-round data), and the declared model does not bound how far a "
                          "mean can move between the two sides, so the worst case over all "
                          "histories is not computed")
        with user_call("transcript.shift_bound"):
            shift = np.asarray(model.shift_bound(losses_a, losses_b, rounds, advice),
                               dtype=float).ravel()
        if not np.all(np.isfinite(shift)):
            # Dropping them would understate the ceiling: no bound is given.
            return None, ("shift_bound gives a non-finite shift for some release, so the worst "
                          "case over all histories is not bounded")
        moved = int(np.count_nonzero(shift))
        if law.kind == "laplace":
            return PairWorstCase(float(shift.sum() / law.scale), 0.0, str(law),
                                 f"Σ over {moved} moved release(s) of the largest ℓ₁ shift of "
                                 f"the means over all histories, over b (an upper bound)",
                                 upper_bound=True), ""
        mu = float(np.linalg.norm(shift) / law.sigma)
        return PairWorstCase(gaussian_epsilon(delta, mu), float(delta), str(law),
                             f"one Gaussian mechanism with μ = (Σ shift²)^½/σ = {mu:.6g}, "
                             f"shift the largest ℓ₂ shift of each of {moved} moved release(s) "
                             f"over all histories (an upper bound)", upper_bound=True), ""
    acts = np.zeros((1, rounds), dtype=np.int64)
    m_a = _release_means(model, acts, losses_a, None, advice).ravel()
    m_b = _release_means(model, acts, losses_b, None, advice).ravel()
    keep = np.isfinite(m_a) & np.isfinite(m_b)
    m_a, m_b = m_a[keep], m_b[keep]
    diff = m_a - m_b
    moved = int(np.count_nonzero(diff))
    if law.kind == "laplace":
        eps = float(np.abs(diff).sum() / law.scale)
        return PairWorstCase(eps, 0.0, str(law),
                             f"‖m − m′‖₁/b over {moved} moved release coordinate(s) "
                             f"(exact sup of L)"), ""
    if law.kind == "gaussian":
        mu = float(np.linalg.norm(diff) / law.sigma)
        return PairWorstCase(gaussian_epsilon(delta, mu), float(delta), str(law),
                             f"one Gaussian mechanism with μ = ‖m − m′‖₂/σ = {mu:.6g} over "
                             f"{moved} moved release coordinate(s) (exact δ(ε), Balle & Wang "
                             f"2018)"), ""
    t = law.array
    with np.errstate(divide="ignore"):
        lt = np.log(t)
    va, vb = m_a.astype(np.int64), m_b.astype(np.int64)
    total = []
    for num, den in ((va, vb), (vb, va)):
        with np.errstate(invalid="ignore"):
            r = np.where(t[num] > 0, lt[num] - lt[den], -np.inf)  # (releases, outputs)
        total.append(float(r.max(axis=1).sum()) if r.size else 0.0)
    return PairWorstCase(max(0.0, *total), 0.0, str(law),
                         f"Σ over {m_a.size} releases of the largest log-ratio of an output, "
                         f"the larger direction (exact sup of L)"), ""


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
    and ε_t is their largest log-ratio over arms (both directions; an arm
    with probability 0 on both sides contributes 0)."""
    T = history.shape[0]
    if alg.learner.replay is not None:
        with user_call("replay"):
            pa = np.asarray(alg.learner.replay(losses_a[:T], history), dtype=float)
            pb = np.asarray(alg.learner.replay(losses_b[:T], history), dtype=float)
    else:
        _, _, _, probs = replay_both(alg, losses_a, losses_b, lambda t, la, lb: history[t:t + 1],
                                     T, 1, keep_probs=True)
        pa, pb = probs[0, :, 0], probs[1, :, 0]
    with np.errstate(divide="ignore"):
        la = np.maximum(np.log(np.clip(pa, 0, 1)), TINY_LOG)
        lb = np.maximum(np.log(np.clip(pb, 0, 1)), TINY_LOG)
    eps_t = np.abs(la - lb).max(axis=1)
    return PerRoundCurve(label, eps_t, pa, pb, claim.per_round_epsilon)


# ------------------------------------------------------ mode 2: search
@dataclass
class Certificate:
    """The best output found by the search, in one direction.

    ``loss`` is the exact L(x) of the prefix x_1..x_horizon (numerator side
    first: ``direction`` "l>l'" means ln P_ℓ(x) − ln P_ℓ′(x));
    ``epsilon_lower_bound`` is what the event {x} proves about ε at the
    claim's δ (= ``loss`` for δ = 0, ln((P(x) − δ)/P′(x)) otherwise, 0 when
    P(x) ≤ δ); ``claim_at_horizon`` the claim it is judged against."""

    description: str
    direction: str
    loss: float
    horizon: int
    claim_at_horizon: float
    epsilon_lower_bound: float
    log_p_num: float
    log_p_den: float
    actions_head: list
    curve: np.ndarray = field(repr=False, default=None)  # cumulative L along x

    @property
    def violation(self) -> bool:
        return self.epsilon_lower_bound > self.claim_at_horizon


def _event_bound(log_p_num: np.ndarray, log_p_den: np.ndarray, delta: float) -> np.ndarray:
    """ln((P − δ)/P′) for the event {x} with exact ln P and ln P′ (``log_p_den``
    built from per-round terms clamped at ``TINY_LOG``, so an upper bound on
    ln P′); 0 where P ≤ δ.  For δ = 0 this is the loss."""
    den = log_p_den
    if delta == 0:
        return np.where(np.isneginf(log_p_num), 0.0, log_p_num - den)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = math.log(delta) - log_p_num                 # ln(δ/P) < 0 ⇔ P > δ
        head = log_p_num + np.log1p(-np.exp(np.minimum(gap, 0.0)))
    return np.where(gap < 0, np.maximum(head - den, 0.0), 0.0)


# Histories enumerated outright when there are at most this many.
EXHAUSTIVE = 4096


def search_worst_output(alg, losses_a, losses_b, claim: Claim, advice=None,
                        alternations: Optional[list] = None) -> list[Certificate]:
    """Search histories for a large exact loss, in both directions.

    When K^T ≤ ``EXHAUSTIVE`` every history is replayed, so the certificate
    is the worst output there is.  Otherwise the candidates, replayed
    together, are greedy (each round play the arm with the larger
    log-ratio), and, for two arms, "alternate 2,1 for A rounds, then greedy"
    for a grid of A — the App. G.1 history that drives EXP3's weights apart
    before exploiting the gap; each is followed once towards ln P_ℓ − ln P_ℓ′
    and once towards the reverse.

    Every prefix x_1..x_T′ is an event on the output (post-processing), so
    it is judged against the claim for T′ rounds: ε, or for a pure claim
    composed from per-round claims min(ε, ε_t·T′).  With δ > 0 the event
    {x} counts only through its mass: P(x) − e^ε P′(x) > δ.  Returns the
    best certificate of each direction."""
    T, K = alg.horizon, alg.n_arms
    if alternations is None and T * math.log(K) <= math.log(EXHAUSTIVE) + 1e-9:
        grid = np.indices((K,) * T).reshape(T, -1).T          # every history, (K^T, T)
        la, lb, acts, _ = replay_both(alg, losses_a, losses_b,
                                      lambda t, pa, pb: grid[:, t], T, grid.shape[0], advice)
        n = grid.shape[0]
        la, lb, acts = np.concatenate([la, la]), np.concatenate([lb, lb]), np.concatenate([acts, acts])
        reverse = np.arange(2 * n) >= n
        labels = [f"exhaustive: the worst of all {n} histories"] * (2 * n)
    else:
        if alternations is None:
            alternations = [0] + (sorted({int(x) for x in np.geomspace(16, max(T // 2, 16), 28)})
                                  if K == 2 else [])
        A = np.array(alternations)
        n = len(A)
        reverse = np.arange(2 * n) >= n
        A2 = np.concatenate([A, A])

        flip = reverse[:, None]

        def choose(t, la, lb):
            # Each row's log-ratio in its own direction, computed once.
            greedy = np.argmax(loss_terms(np.where(flip, lb, la), np.where(flip, la, lb)), axis=1)
            alternate = np.full(2 * n, 1 if t % 2 == 0 else 0)
            return np.where(t < A2, alternate, greedy)

        la, lb, acts, _ = replay_both(alg, losses_a, losses_b, choose, T, 2 * n, advice)
        labels = []
        for r in range(2 * n):
            arrow = "ln P_ℓ′(i) − ln P_ℓ(i)" if reverse[r] else "ln P_ℓ(i) − ln P_ℓ′(i)"
            a = int(A2[r])
            labels.append(f"greedy: each round play the arm with the larger log-ratio {arrow}"
                          if a == 0 else
                          f"alternate 2,1 for {a} rounds, then follow the arm with the larger "
                          f"log-ratio {arrow}")
    num = np.where(reverse[:, None], lb, la)
    den = np.where(reverse[:, None], la, lb)
    cum_num, cum_den = np.cumsum(num, axis=1), np.cumsum(np.maximum(den, TINY_LOG), axis=1)
    cum = np.cumsum(loss_terms(num, den), axis=1)
    bound = _event_bound(cum_num, cum_den, claim.delta)
    # An ε lower bound: rounding margin off, and never below the trivial 0.
    bound = np.maximum(np.where(np.isfinite(bound), bound - FLOAT_TOL * np.abs(bound) - 1e-12,
                                bound), 0.0)
    lengths = np.arange(1, T + 1)
    if claim.per_round_epsilon is not None and claim.delta == 0:
        limit = np.minimum(claim.epsilon, claim.per_round_epsilon * lengths)
    else:
        limit = np.full(T, float(claim.epsilon))
    margin = bound - limit
    out = []
    for name, sel in (("l>l'", ~reverse), ("l'>l", reverse)):
        rows_d = np.flatnonzero(sel)
        m = margin[rows_d]
        r_local, t = np.unravel_index(np.argmax(m), m.shape)
        r = int(rows_d[r_local])
        if not m[r_local, t] > 0:
            # No prefix beats its claim: report the largest bound instead.
            r_local, t = np.unravel_index(np.argmax(bound[rows_d]), m.shape)
            r = int(rows_d[r_local])
        desc = labels[r]
        horizon = int(t) + 1
        desc += f"; length {horizon}"
        out.append(Certificate(desc, name, float(cum[r, t]), horizon, float(limit[t]),
                               float(bound[r, t]), float(cum_num[r, t]), float(cum_den[r, t]),
                               (acts[r, :24] + 1).tolist(), cum[r, :horizon]))
    return out


# ------------------------------------------ mode 3: privacy-loss distribution
@dataclass
class LossDistribution:
    losses: np.ndarray            # exact L(x) of outputs sampled on the numerator side
    alpha: float
    band: float                   # DKW: S(u) ≥ Ŝ(u) − band for all u, w.p. ≥ 1 − α
    scope: str

    @property
    def sorted_losses(self) -> np.ndarray:
        """The losses in increasing order, sorted once (every δ_lb(ε) of a
        bisection reads them)."""
        cached = self.__dict__.get("_sorted")
        if cached is None or cached.size != self.losses.size:
            cached = self.__dict__["_sorted"] = np.sort(self.losses)
        return cached

    def delta_lower(self, eps: float) -> float:
        """Lower confidence bound on δ(ε) = E[(1 − e^{ε−L})₊] = ∫_ε^∞ e^{ε−u} S(u) du,
        from the simultaneous lower band on the survival function S of L, so it
        holds for every ε at once."""
        L = self.sorted_losses
        n = L.size
        above = L[np.searchsorted(L, eps, side="right"):]     # L > eps, in order
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
        if not hi > 0 or f(0.0) <= 0:
            return 0.0
        lo = 0.0
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return lo
