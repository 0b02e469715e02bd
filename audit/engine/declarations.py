"""Declaration checks: white-box evidence rests on what an
algorithm declares about itself, so before any white-box mode is used,
pilots on their own streams check that the declarations are what the code
does.  All checks live here; each states its false-refusal probability
(the chance that a correct declaration fails it), at most ``FALSE_REFUSAL``.

Action scope (``probs`` + ``commit``, replayed along histories):

* ``same-losses-replay`` — histories sampled by ``act`` are replayed on the
  *same* loss sequence on both sides, each side with its own state and its
  own random stream: every round's log-probability must agree between the
  sides and with what ``probs`` gave when ``act`` drew the action (L = 0).
  Catches randomness outside ``probs`` (noise drawn in ``feed`` or ``init``),
  a ``commit`` that does not do what ``act`` does, and state shared across
  sides.  Deterministic: false-refusal probability 0.
* ``act-follows-probs`` — the actions ``act`` draws follow ``probs``:
  randomised probability-integral transforms of the drawn actions are i.i.d.
  uniform under a correct declaration (each is uniform given the past), and
  a Kolmogorov–Smirnov test rejects at p < 10⁻⁶.  An action of probability
  0 fails outright.
* ``state-runs-axis`` — state fields without the runs axis must not depend
  on a run's own randomness (two pilots with different streams must agree
  on them), and one that depends on the losses must be declared in
  ``Learner.shared`` (replay keeps one state per side, so such a field is
  replayed correctly).  Deterministic: probability 0.
* ``replay-fast-path`` — a learner's ``replay`` shortcut gives the same
  P_t as replaying ``probs``/``commit``.  Deterministic: probability 0.

Transcript scope (``TranscriptModel``: releases = declared means + noise of
the declared law: Laplace, Gaussian or finite):

* ``noise-law`` — the releases follow the declared law around the declared
  means.  A continuous law (Laplace(b), N(0, σ²)): per release (across
  independent runs) a Kolmogorov–Smirnov test of F(y − m) against uniform.
  A finite law (a table P(y | v)): per release and true value v, an exact
  binomial test of each output's frequency (the multinomial, cell by cell);
  a release the table makes impossible fails outright.  Bonferroni over
  every test and both sides of the pair, rejecting at adjusted p < 10⁻⁶.
* ``noise-independence`` — noises of different releases are independent, as
  the product of densities in the exact loss assumes: normal scores of the
  PITs (randomised for a finite law) of two releases are, under a correct
  declaration, independent standard normals, so their sample correlation
  gives an exact t-test; Bonferroni over pairs and sides, rejecting at
  adjusted p < 10⁻⁶.
* ``means-history-free`` (when ``TranscriptModel.history_free`` is
  declared) — every pilot transcript's means equal those computed without
  its actions and aux.  Deterministic: probability 0.
* ``mean-shift-bound`` (when ``TranscriptModel.shift_bound`` is given) —
  along every pilot transcript, the distance between each release's means
  under the pair's two loss sequences (same actions and aux) is at most the
  declared bound.  Deterministic: probability 0.  The bound only ever
  enters the pair's worst case, never a verdict.

Scalar state model (``Algorithm.extra["state_model"]``, for the
``recursion`` mode; ``algorithms.state_model``), on pilots that read the
declared state u_t from the learner's state before every ``act`` and after
every ``feed``:

* ``state-action-law`` — the actions ``act`` draws follow
  ``action_probs(u_t)``: randomised PITs, Kolmogorov–Smirnov against
  uniform, Bonferroni over the sides, rejecting at p < 10⁻⁶; an action of
  probability 0 fails outright.
* ``state-transition-law`` — u_1 is the declared start (deterministic), and
  each u_{t+1} follows clip(u_t + shift(ℓ_t) + step·D) given u_t:
  randomised PITs (the clip bounds are atoms), Kolmogorov–Smirnov against
  uniform, Bonferroni over the sides, rejecting at p < 10⁻⁶.
* ``state-recursion`` — end to end: the recursion's certified brackets on
  every marginal P(J_t = i) and on the run events the ``recursion`` mode
  uses must contain the simulated frequencies: an exact binomial test
  against the nearer end of each bracket (two one-sided tests, doubled),
  Bonferroni over every event and both sides, rejecting at p < 10⁻⁶.

Sparse vector (``Algorithm.extra["sparse_vector"]``, for the ``integral``
mode; ``algorithms.sparse_vector_model``), on pilots of the pair's own
answers:

* ``sparse-vector-law`` — the code sequences the mechanism outputs follow
  the declared model: when they can be enumerated
  (``audit.engine.svt_integral.enumerable``) every possible sequence gets
  its certified probability bracket (``audit.engine.svt_integral``), and
  each one's simulated frequency an exact binomial test against the nearer
  end of its bracket; otherwise the 200 most frequent sequences of a first
  half of the pilot, and all other sequences together, are tested so on a
  second, independent half.  A sequence the model makes impossible (or
  that breaks the abort structure) fails outright.  20 000 runs a side, at
  most 4·10⁶ run-rounds a side (but at least 2000 runs) on long horizons,
  simulated in chunks of at most 2^21 run-rounds (bounded memory and time).
  For a model releasing a fresh Laplace value with ⊤, a Kolmogorov–Smirnov
  test of the released value minus the answer against the declared law
  joins them.  Bonferroni over every test and both sides, rejecting at
  adjusted p < 10⁻⁶.  (A value released as the compared noisy answer itself
  is checked only through the codes.)

Pilot streams are ``SeedSequence([seed, scenario, PILOT_STREAM, k])``,
disjoint from every audit stream (black-box sides 0, 1; loss samples 7, 8);
k = 60, 61 the transcript pilots, 70, 71 the randomisation of finite PITs,
80, 81 the state-model pilots, 90, 91 their randomised PITs, 100, 101
the sparse-vector pilots and 102, 103 their second halves.

May import: ``algorithms``, ``audit.execution.runs``, ``audit.engine.privacy_loss``,
``audit.engine.svt_integral``, ``audit.engine.evidence.integral``,
``audit.engine.recursion``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import stats

from algorithms.errors import UserCodeError, user_call
from audit.execution.runs import simulate
from audit.engine.privacy_loss import FLOAT_TOL, TINY_LOG, checked_probs, replay_both, scope_of
from audit.engine.recursion import (WORK, grid_for, marginal_bounds, run_bounds, run_starts,
                                    state_model_of)

FALSE_REFUSAL = 1e-6
PILOT_STREAM = 57025
# Deterministic comparisons allow floating-point noise only.
TOL = FLOAT_TOL
# Pilot sizes: runs, and run-rounds at most (a pilot is a small fraction of an audit).
PILOT_RUNS = 2000
PILOT_WORK = 2_000_000
REPLAY_HISTORIES = 40
AXIS_RUNS = (61, 67)          # odd sizes no K, N or d is likely to equal
MAX_LAW_COLUMNS = 32
MAX_PAIR_COLUMNS = 12


@dataclass
class DeclarationCheck:
    """One check's outcome: ``statistic`` against ``threshold`` (``fails_when``
    says which side fails), what was measured and, on failure, what to
    change in the declaration."""

    check: str
    algorithm: str
    scenario: str
    statistic: float
    threshold: float
    fails_when: str               # "above" | "below"
    passed: bool
    what: str
    advice: str = ""
    false_refusal: float = 0.0

    @property
    def outcome(self) -> str:
        return "pass" if self.passed else "fail"

    def __repr__(self) -> str:
        return (f"DeclarationCheck({self.check!r}, {self.outcome}, statistic={self.statistic:.4g}, "
                f"threshold={self.threshold:.4g}, scenario={self.scenario!r})")

    def line(self) -> str:
        op = ">" if self.fails_when == "above" else "<"
        head = (f"{self.check} on {self.scenario}: {self.outcome} "
                f"(statistic {self.statistic:.4g}, fails when {op} {self.threshold:.4g})")
        return head + (f" — {self.what}" + (f"; {self.advice}" if self.advice else "")
                       if not self.passed else "")

    def as_dict(self) -> dict:
        return {"check": self.check, "algorithm": self.algorithm, "scenario": self.scenario,
                "statistic": self.statistic, "threshold": self.threshold,
                "fails_when": self.fails_when, "outcome": self.outcome, "what": self.what,
                "advice": self.advice, "false_refusal_probability": self.false_refusal}


def _rng(seed: int, index: int, k: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, index, PILOT_STREAM, k]))


def _losses_and_rounds(sc):
    return ((sc.losses_a, "ℓ"), (sc.losses_b, "ℓ′")), sc.rounds


# ------------------------------------------------------------ action scope
def _pilot_with_probs(alg, losses, advice, runs, rounds, rng, rng_pit):
    """Run ``act`` like ``simulate`` does, also recording ln P_t(I_t) from
    ``probs`` and a randomised PIT of every drawn action."""
    lr = alg.learner
    full = lr.full_rows
    idx = np.arange(runs)
    with user_call("init"):
        state = lr.init(runs, rng)
    logp = np.empty((runs, rounds))
    acts = np.empty((runs, rounds), dtype=np.int64)
    pits = np.empty((runs, rounds))
    zero_prob = 0
    for t in range(rounds):
        adv = None if advice is None else advice[t]
        p = checked_probs(lr, state, adv, t, runs)
        with user_call("act", t + 1):
            state, a = lr.act(state, adv, rng)
        a = np.asarray(a).astype(np.int64)
        pa = p[idx, a]
        zero_prob += int(np.count_nonzero(pa <= 0))
        with np.errstate(divide="ignore"):
            logp[:, t] = np.log(pa)
        acts[:, t] = a
        below = np.cumsum(p, axis=1)[idx, a] - pa
        pits[:, t] = np.clip(below + rng_pit.random(runs) * pa, 0.0, 1.0)
        with user_call("feed", t + 1):
            state = lr.feed(state, a, losses[t] if full else losses[t][a], rng)
    return logp, acts, pits, zero_prob


def _same_terms(x: np.ndarray, y: np.ndarray) -> float:
    """Largest disagreement of two log-probability arrays (−inf equal to −inf)."""
    both_zero = np.isneginf(x) & np.isneginf(y)
    xs, ys = np.maximum(x, TINY_LOG), np.maximum(y, TINY_LOG)
    diff = np.where(both_zero, 0.0, np.abs(xs - ys) / (1.0 + np.minimum(np.abs(xs), np.abs(ys))))
    return float(diff.max()) if diff.size else 0.0


def _action_checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    lr = alg.learner
    name, label = alg.name, sc.label
    pairs, rounds_all = _losses_and_rounds(sc)
    rounds = max(1, min(rounds_all, 1000))
    runs = int(max(200, min(PILOT_RUNS, PILOT_WORK // rounds)))
    out = []
    worst_replay, worst_pit_p, zero_prob, n_pits = 0.0, 1.0, 0, 0
    history = None
    for k, (losses, side) in enumerate(pairs):
        logp, acts, pits, zeros = _pilot_with_probs(alg, losses, sc.advice, runs, rounds,
                                                    _rng(seed, index, 10 + k),
                                                    _rng(seed, index, 20 + k))
        zero_prob += zeros
        n_pits += pits.size
        p_ks = stats.kstest(pits.ravel(), "uniform").pvalue
        worst_pit_p = min(worst_pit_p, float(p_ks) * len(pairs))  # Bonferroni over the sides
        m = min(REPLAY_HISTORIES, runs)
        hist = acts[:m]
        history = hist[0] if history is None else history
        la, lb, _, _ = replay_both(alg, losses, losses, lambda t, pa, pb: hist[:, t], rounds, m,
                                   sc.advice, seeds=(_rng(seed, index, 30 + k).integers(2**63),
                                                     _rng(seed, index, 40 + k).integers(2**63)))
        worst_replay = max(worst_replay, _same_terms(la, lb), _same_terms(la, logp[:m]))
    out.append(DeclarationCheck(
        "same-losses-replay", name, label, worst_replay, TOL, "above", worst_replay <= TOL,
        f"replaying {min(REPLAY_HISTORIES, runs)} sampled histories of {rounds} rounds on the "
        f"same losses on both sides (separate states and random streams) changes "
        f"ln P_t(I_t) by up to {worst_replay:.3g} (relative), so L ≠ 0 on identical sequences",
        "the learner has randomness or state that probs()/commit() do not capture (e.g. noise "
        "drawn in feed() or init(), or a commit() that differs from act()); declare a "
        "TranscriptModel for released noise, or drop probs/commit"))
    ok_law = zero_prob == 0 and worst_pit_p >= FALSE_REFUSAL
    what = (f"act() drew {zero_prob} action(s) to which probs() gives probability 0"
            if zero_prob else
            f"Kolmogorov–Smirnov test of {n_pits} randomised PITs of the drawn actions against "
            f"uniform: Bonferroni-adjusted p = {worst_pit_p:.3g}")
    out.append(DeclarationCheck(
        "act-follows-probs", name, label, worst_pit_p if not zero_prob else 0.0, FALSE_REFUSAL,
        "below", ok_law, what,
        "act() must draw its action from exactly the distribution probs() returns "
        "(e.g. sample_categorical(probs(state), rng.random(runs)))", FALSE_REFUSAL))
    out.append(_runs_axis_check(alg, sc, seed, index))
    if lr.replay is not None and history is not None:
        out.append(_fast_path_check(alg, sc, history))
    return out


def _flatten(state, prefix: str = "") -> dict:
    if isinstance(state, dict):
        out = {}
        for key, value in state.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: state}


def _equal(x, y) -> bool:
    try:
        a, b = np.asarray(x), np.asarray(y)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    except Exception:  # noqa: BLE001 - objects numpy cannot compare
        return x is y or x == y


def _has_runs_axis(value, runs: int) -> bool:
    return isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == runs


def _step_pair(alg, sc, runs, rounds, rngs_a, rngs_b, losses_a, losses_b, visit):
    """Step two states side by side; ``visit(t, flat_a, flat_b)`` after each feed."""
    lr = alg.learner
    full = lr.full_rows
    with user_call("init"):
        sa, sb = lr.init(runs, rngs_a[0]), lr.init(runs, rngs_b[0])
    for t in range(rounds):
        adv = None if sc.advice is None else sc.advice[t]
        with user_call("act", t + 1):
            sa, aa = lr.act(sa, adv, rngs_a[1])
            sb, ab = lr.act(sb, adv, rngs_b[1])
        aa, ab = np.asarray(aa).astype(np.int64), np.asarray(ab).astype(np.int64)
        with user_call("feed", t + 1):
            sa = lr.feed(sa, aa, losses_a[t] if full else losses_a[t][aa], rngs_a[2])
            sb = lr.feed(sb, ab, losses_b[t] if full else losses_b[t][ab], rngs_b[2])
        bad = visit(t, _flatten(sa), _flatten(sb))
        if bad:
            return bad
    return None


def _runs_axis_check(alg, sc, seed, index) -> DeclarationCheck:
    lr = alg.learner
    rounds = max(1, min(sc.rounds, 2000))
    declared = set(lr.shared)

    def streams(k):
        seeds = _rng(seed, index, k).integers(2**63, size=3)
        return [np.random.default_rng(int(x)) for x in seeds]

    # (a) Shared fields must not depend on a run's own randomness.
    runs = AXIS_RUNS[0]

    def randomness(t, fa, fb):
        for path, value in fa.items():
            if not _has_runs_axis(value, runs) and not _equal(value, fb.get(path)):
                return (path, t, "differs between two pilots with different random streams on "
                                 "the same losses: it depends on the runs' own randomness")
        return None

    bad = _step_pair(alg, sc, runs, rounds, streams(50), streams(51), sc.losses_a, sc.losses_a,
                     randomness)
    # (b) A loss-dependent field without the runs axis must be declared shared.
    if bad is None:
        runs = AXIS_RUNS[1]

        def losses(t, fa, fb):
            for path, value in fa.items():
                if (not _has_runs_axis(value, runs) and path not in declared
                        and not _equal(value, fb.get(path))):
                    return (path, t, "depends on the losses but has no runs axis and is not "
                                     "declared in Learner(shared=...)")
            return None

        # Identical streams on both sides: only the losses differ.
        bad = _step_pair(alg, sc, runs, rounds, streams(52), streams(52), sc.losses_a,
                         sc.losses_b, losses)
    if bad is None:
        return DeclarationCheck("state-runs-axis", alg.name, sc.label, 0.0, 0.0, "above", True,
                                f"state fields without a runs axis are the same for all runs "
                                f"and, unless declared shared, do not depend on the losses "
                                f"({rounds} rounds)")
    path, t, why = bad
    return DeclarationCheck(
        "state-runs-axis", alg.name, sc.label, float(t + 1), 0.0, "above", False,
        f"state field {path!r} (round {t + 1}) {why}",
        "give loss-dependent state a leading runs axis, or list a field that every run "
        "shares on purpose in Learner(shared=(...)); never let one run's randomness reach "
        "state shared by all runs")


def _fast_path_check(alg, sc, history) -> DeclarationCheck:
    T = history.shape[0]
    worst = 0.0
    for losses in (sc.losses_a, sc.losses_b):
        with user_call("replay"):
            fast = np.asarray(alg.learner.replay(losses[:T], history), dtype=float)
        _, _, _, probs = replay_both(alg, losses, losses, lambda t, pa, pb: history[t:t + 1], T, 1,
                                     sc.advice, keep_probs=True)
        slow = probs[0, :, 0]
        if fast.shape != slow.shape:
            worst = math.inf
            break
        with np.errstate(divide="ignore"):
            worst = max(worst, _same_terms(np.log(fast), np.log(slow)))
    return DeclarationCheck(
        "replay-fast-path", alg.name, sc.label, worst, TOL, "above", worst <= TOL,
        f"replay() and probs()/commit() give P_t differing by up to {worst:.3g} (relative, in "
        f"log) along a sampled history of {T} rounds",
        "replay(losses, history) must return exactly the P_t that probs() gives along the "
        "history")


# -------------------------------------------------------- transcript scope
def _pilot_releases(alg, sc, seed, index):
    """Per side: the releases y and their declared means m of a pilot,
    each (runs, releases·d), NaN where nothing was released, and the pilot
    (trace, losses) for the history-free check."""
    model = alg.learner.transcript
    pairs, rounds = _losses_and_rounds(sc)
    runs = int(max(500, min(PILOT_RUNS, 20 * PILOT_WORK // max(rounds, 1))))
    out = []
    for k, (losses, side) in enumerate(pairs):
        tr = simulate(alg, losses, runs, _rng(seed, index, 60 + k), advice=sc.advice,
                      rounds=rounds, record_transcript=True)
        if tr.releases.size == 0:
            out.append((np.zeros((runs, 0)), np.zeros((runs, 0)), tr, losses))
            continue
        with user_call("transcript.means"):
            m = np.asarray(model.means(tr.actions.astype(np.int64), losses, tr.aux, sc.advice),
                           dtype=float)
        if m.shape != tr.releases.shape:
            raise UserCodeError("transcript.means", None,
                                f"returned shape {m.shape}, expected the releases' shape "
                                f"{tr.releases.shape}")
        out.append((np.asarray(tr.releases, dtype=float).reshape(runs, -1), m.reshape(runs, -1),
                    tr, losses))
    return out


def _columns(u: np.ndarray, most: int) -> np.ndarray:
    """Up to ``most`` release columns, evenly spread, with enough values."""
    ok = np.flatnonzero(np.sum(np.isfinite(u), axis=0) >= 100)
    if ok.size > most:
        ok = ok[np.unique(np.linspace(0, ok.size - 1, most).astype(int))]
    return ok


def _finite_pit(law, y, v, rng) -> np.ndarray:
    """Randomised PIT of finite releases: F(y − 1 | v) + U·P(y | v), uniform
    on (0, 1) and independent across releases under a correct declaration
    (each given the past); NaN where nothing was released."""
    t = law.array
    ok = np.isfinite(y) & np.isfinite(v)
    yi, vi = np.where(ok, y, 0).astype(np.int64), np.where(ok, v, 0).astype(np.int64)
    cum = np.concatenate([np.zeros((t.shape[0], 1)), np.cumsum(t, axis=1)], axis=1)
    u = cum[vi, yi] + rng.random(y.shape) * t[vi, yi]
    return np.where(ok, np.clip(u, 0.0, 1.0), np.nan)


def _law_check(alg, sc, sides) -> DeclarationCheck:
    """noise-law: a continuous law by Kolmogorov–Smirnov tests of
    F((y − m)) against uniform, one per release column (runs are
    independent); a finite law by exact binomial tests of each output's
    frequency among the releases of each true value, per column.
    Bonferroni over every test and both sides."""
    law = alg.learner.transcript.noise
    name, label = alg.name, sc.label
    advice = ("TranscriptModel.means must return each release's exact mean (for a finite law: "
              "its true value) given the actions and losses, and TranscriptModel.law (or scale, "
              "for Laplace) the law of the noise actually added")
    pvals, worst = [], 0.0
    impossible = 0
    for y, m, _, _ in sides:
        cols = _columns(y, MAX_LAW_COLUMNS)
        for c in cols:
            keep = np.isfinite(y[:, c]) & np.isfinite(m[:, c])
            yc, mc = y[keep, c], m[keep, c]
            if law.continuous:
                res = stats.kstest(law.cdf(yc, mc), "uniform")
                pvals.append(float(res.pvalue))
                worst = max(worst, float(res.statistic))
                continue
            with user_call("transcript (finite law)"):
                p = law.probability(yc, mc)
            impossible += int(np.count_nonzero(p <= 0))
            t = law.array
            for v in np.unique(mc).astype(np.int64):
                yv = yc[mc == v].astype(np.int64)
                counts = np.bincount(yv, minlength=t.shape[1])
                cells = range(1) if t.shape[1] == 2 else range(t.shape[1])
                for j in cells:
                    q = t[v, j]
                    pvals.append(float(stats.binomtest(int(counts[j]), yv.size, q).pvalue)
                                 if 0 < q < 1 else float(counts[j] == q * yv.size))
                    worst = max(worst, abs(counts[j] / yv.size - q))
    n_tests = len(pvals)
    adj = min(1.0, min(pvals) * n_tests) if pvals else 1.0
    ok = impossible == 0 and adj >= FALSE_REFUSAL
    if impossible:
        what = (f"{impossible} release(s) have probability 0 under the declared {law} given "
                f"their true values")
    elif not pvals:
        what = "no release in the simulated rounds: nothing to check"
    elif law.continuous:
        what = (f"released values against the declared means + {law}: {n_tests} "
                f"Kolmogorov–Smirnov tests of F(y − m) against uniform (largest distance "
                f"{worst:.3g}), Bonferroni-adjusted p = {adj:.3g}")
    else:
        what = (f"released outputs against the declared {law}: {n_tests} exact binomial tests "
                f"of each output's frequency given the true value (largest frequency gap "
                f"{worst:.3g}), Bonferroni-adjusted p = {adj:.3g}")
    return DeclarationCheck("noise-law", name, label, adj if not impossible else 0.0,
                            FALSE_REFUSAL, "below", ok, what, advice, FALSE_REFUSAL)


def _independence_check(alg, sc, sides, seed, index) -> DeclarationCheck:
    """noise-independence: normal scores of the (randomised, for a finite
    law) PITs of two releases are independent standard normals under a
    correct declaration; exact t-tests on their correlation, Bonferroni."""
    law = alg.learner.transcript.noise
    pair_p, n_pairs, worst_r = [], 0, 0.0
    for k, (y, m, _, _) in enumerate(sides):
        cols = _columns(y, MAX_PAIR_COLUMNS)
        if cols.size < 2:
            continue
        if law.continuous:
            u = law.cdf(y[:, cols], m[:, cols])
        else:
            u = _finite_pit(law, y[:, cols], m[:, cols], _rng(seed, index, 70 + k))
        u = np.where(np.isfinite(y[:, cols]) & np.isfinite(m[:, cols]), u, np.nan)
        g = stats.norm.ppf(np.clip(u, 1e-300, 1 - 1e-16))
        for i in range(cols.size):
            for j in range(i + 1, cols.size):
                keep = np.isfinite(g[:, i]) & np.isfinite(g[:, j])
                n = int(keep.sum())
                if n < 100:
                    continue
                r = float(np.corrcoef(g[keep, i], g[keep, j])[0, 1])
                r = max(-1.0, min(1.0, r if math.isfinite(r) else 1.0))
                worst_r = max(worst_r, abs(r))
                tstat = r * math.sqrt((n - 2) / max(1e-300, 1 - r * r))
                pair_p.append(float(2 * stats.t.sf(abs(tstat), n - 2)))
                n_pairs += 1
    adj = min(1.0, min(pair_p) * n_pairs) if pair_p else 1.0
    return DeclarationCheck(
        "noise-independence", alg.name, sc.label, adj, FALSE_REFUSAL, "below",
        adj >= FALSE_REFUSAL,
        (f"{n_pairs} pairs of releases: largest |correlation| of their noises' normal scores "
         f"{worst_r:.3g}, Bonferroni-adjusted p = {adj:.3g}") if pair_p else
        "fewer than two releases in the simulated rounds: nothing to check",
        "each release must carry fresh noise, independent of every other release's noise",
        FALSE_REFUSAL)


def _history_free_check(alg, sc, sides) -> DeclarationCheck:
    """means-history-free (only when declared): the means of every pilot
    transcript equal ``means`` called with zero actions and aux=None.
    Deterministic: false-refusal probability 0."""
    model = alg.learner.transcript
    worst, why = 0.0, ""
    for y, m, tr, losses in sides:
        if m.size == 0:
            continue
        zeros = np.zeros((1, tr.actions.shape[1]), dtype=np.int64)
        try:
            with user_call("transcript.means"):
                m0 = np.asarray(model.means(zeros, losses, None, sc.advice), dtype=float)
        except UserCodeError as exc:
            worst, why = math.inf, f"means(actions, losses, aux=None) raised: {exc}"
            break
        m0 = m0.reshape(1, -1)
        if m0.shape[1] != m.shape[1]:
            worst, why = math.inf, (f"means without actions gives {m0.shape[1]} values per "
                                    f"transcript, with the pilot's actions {m.shape[1]}")
            break
        both = np.isfinite(m) & np.isfinite(m0)
        scale = 1.0 + np.abs(m0)
        diff = np.where(both, np.abs(m - m0) / scale, 0.0)
        diff = np.where(np.isfinite(m) != np.isfinite(m0), np.inf, diff)
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
    what = why or (f"means computed from the pilots' own actions and aux differ from means "
                   f"computed without them by up to {worst:.3g} (relative)")
    return DeclarationCheck(
        "means-history-free", alg.name, sc.label, worst, TOL, "above", worst <= TOL, what,
        "declare TranscriptModel(history_free=True) only when the means depend on the losses "
        "alone (not on the actions or aux); otherwise leave it False")


def _shift_bound_check(alg, sc, sides) -> DeclarationCheck:
    """mean-shift-bound (only when given): along every pilot transcript the
    means under ℓ and ℓ′ (the same actions and aux) are no farther apart,
    release by release, than ``shift_bound`` says (ℓ₁ for Laplace, ℓ₂ for
    Gaussian).  Deterministic: false-refusal probability 0."""
    model = alg.learner.transcript
    order = 1 if model.noise.kind == "laplace" else 2
    with user_call("transcript.shift_bound"):
        bound = np.asarray(model.shift_bound(sc.losses_a, sc.losses_b, sc.rounds, sc.advice),
                           dtype=float).ravel()
    worst, why = 0.0, ""
    if np.isnan(bound).any():
        worst, why = math.inf, "shift_bound gives NaN for some release (not a bound)"
    for _, _, tr, _ in sides if not why else ():
        if tr.releases.size == 0:
            continue
        acts = tr.actions.astype(np.int64)
        with user_call("transcript.means"):
            m = [np.asarray(model.means(acts, ls, tr.aux, sc.advice), dtype=float)
                 for ls in (sc.losses_a, sc.losses_b)]
        diff = (m[0] - m[1]).reshape(m[0].shape[0], m[0].shape[1], -1)
        dist = np.linalg.norm(np.nan_to_num(diff), ord=order, axis=2)   # (runs, releases)
        if dist.shape[1] != bound.size:
            worst, why = math.inf, (f"shift_bound gives {bound.size} values, the means have "
                                    f"{dist.shape[1]} releases")
            break
        with np.errstate(invalid="ignore"):     # an infinite bound is never exceeded
            excess = np.where(np.isinf(bound)[None, :], -np.inf,
                              (dist - bound[None, :]) / (1.0 + bound[None, :]))
        worst = max(worst, float(excess.max()) if excess.size else 0.0)
    what = why or (f"along the pilots' histories the two means of a release are up to "
                   f"{max(worst, 0.0):.3g} (relative) farther apart than shift_bound allows")
    return DeclarationCheck(
        "mean-shift-bound", alg.name, sc.label, worst, TOL, "above", worst <= TOL, what,
        "shift_bound must bound the distance of each release's two means over every history")


def _transcript_checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    model = alg.learner.transcript
    try:
        model.noise
    except ValueError as exc:
        raise UserCodeError("transcript", None, str(exc)) from None
    sides = _pilot_releases(alg, sc, seed, index)
    out = [_law_check(alg, sc, sides), _independence_check(alg, sc, sides, seed, index)]
    if model.history_free:
        out.append(_history_free_check(alg, sc, sides))
    if model.shift_bound is not None:
        out.append(_shift_bound_check(alg, sc, sides))
    return out


# ------------------------------------------------------- scalar state model
STATE_ROUNDS = 1000
STATE_RUNS = (2000, 20000)


def _read_state(model, state, runs: int, t: int) -> np.ndarray:
    with user_call("state_model.state", t + 1):
        u = np.asarray(model.state(state), dtype=float)
    if u.shape != (runs,):
        raise UserCodeError("state_model.state", t + 1,
                            f"returned shape {u.shape}, expected ({runs},) (one state per run)")
    if not np.all(np.isfinite(u)):
        raise UserCodeError("state_model.state", t + 1, "returned non-finite values")
    return u


def _state_pilot(alg, model, losses, runs, rounds, rng, advice=None):
    """A pilot reading the declared state before every act (u_t) and after
    the last feed: u (runs, rounds + 1), actions (runs, rounds)."""
    u = np.empty((runs, rounds + 1))

    def watch(t, state):
        u[:, t] = _read_state(model, state, runs, t)

    tr = simulate(alg, losses, runs, rng, advice=advice, rounds=rounds, watch=watch)
    return u, tr.actions.astype(np.int64)


def _state_action_pits(model, u, acts, rng) -> tuple[np.ndarray, int]:
    runs, rounds = acts.shape
    with user_call("state_model.action_probs"):
        p = np.asarray(model.action_probs(u[:, :rounds].ravel()), dtype=float)
    if p.shape != (runs * rounds, model.n_arms):
        raise UserCodeError("state_model.action_probs", None,
                            f"returned shape {p.shape}, expected ({runs * rounds}, "
                            f"{model.n_arms})")
    a = acts.ravel()
    idx = np.arange(a.size)
    pa = p[idx, a]
    below = np.cumsum(p, axis=1)[idx, a] - pa
    pits = np.clip(below + rng.random(a.size) * pa, 0.0, 1.0)
    return pits, int(np.count_nonzero(pa <= 0))


def _state_transition_pits(model, u, losses, rng) -> tuple[np.ndarray, float]:
    """Randomised PITs of u_{t+1} given u_t under the declared update, and
    the largest distance of u_1 from the declared start."""
    runs, cols = u.shape
    rounds = cols - 1
    tol = 1e-9 * (model.hi - model.lo)
    with user_call("state_model.shift"):
        s = np.array([float(model.shift(np.asarray(losses[t], dtype=float)))
                      for t in range(rounds)])
    x, y = u[:, :-1], u[:, 1:]
    base = x + s[None, :]
    noise, step = model.noise, model.step
    v = rng.random(x.shape)
    at_lo, at_hi = y <= model.lo + tol, y >= model.hi - tol
    f_lo = noise.cdf((model.lo - base) / step)
    f_hi = noise.cdf((model.hi - base) / step)
    pit = noise.cdf((y - base) / step)
    pit = np.where(at_lo, v * f_lo, pit)
    pit = np.where(at_hi, f_hi + v * (1.0 - f_hi), pit)
    # A state outside the declared bounds cannot come from the declared update.
    outside = (y < model.lo - tol) | (y > model.hi + tol)
    pit = np.where(outside, -1.0, pit)
    return pit.ravel(), float(np.max(np.abs(u[:, 0] - model.start)))


def _bracket_pvalue(count: int, n: int, lo: float, hi: float) -> float:
    """p-value of ``count`` successes in ``n`` against "the probability lies
    in [lo, hi]": two one-sided exact binomial tests at the nearer end,
    doubled."""
    p_high = float(stats.binom.sf(count - 1, n, hi)) if hi < 1 else 1.0
    p_low = float(stats.binom.cdf(count, n, lo)) if lo > 0 else 1.0
    return min(1.0, 2.0 * min(p_high, p_low))


def _state_model_checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    model = state_model_of(alg)
    name, label = alg.name, sc.label
    pairs, rounds_all = _losses_and_rounds(sc)
    rounds = max(1, min(rounds_all, STATE_ROUNDS))
    runs = int(max(STATE_RUNS[0], min(STATE_RUNS[1], 20 * PILOT_WORK // rounds)))
    action_p, trans_p, zero, start_gap, n_pits = 1.0, 1.0, 0, 0.0, 0
    starts = run_starts(sc)
    arms = [i for i, d in enumerate(model.monotone) if d != 0]
    grid = grid_for(model, rounds, passes=4 + 2 * len(arms) * max(1, len(starts)),
                    work=WORK / 4)
    pvals, worst_gap = [], 0.0
    for k, (losses, side) in enumerate(pairs):
        u, acts = _state_pilot(alg, model, losses, runs, rounds, _rng(seed, index, 80 + k),
                               sc.advice)
        rng_pit = _rng(seed, index, 90 + k)
        pits, z = _state_action_pits(model, u, acts, rng_pit)
        zero += z
        n_pits += pits.size
        action_p = min(action_p, float(stats.kstest(pits, "uniform").pvalue) * len(pairs))
        tp, gap = _state_transition_pits(model, u, losses, rng_pit)
        start_gap = max(start_gap, gap)
        trans_p = min(trans_p, 0.0 if (tp < 0).any() else
                      float(stats.kstest(tp, "uniform").pvalue) * len(pairs))
        # End to end: the recursion's brackets against simulated frequencies.
        lo, hi = marginal_bounds(model, losses, rounds, grid)
        for t in range(rounds):
            for i in arms:
                c = int(np.count_nonzero(acts[:, t] == i))
                pvals.append(_bracket_pvalue(c, runs, lo[t, i], hi[t, i]))
                worst_gap = max(worst_gap, lo[t, i] - c / runs, c / runs - hi[t, i])
        prefixes: dict = {}
        for s in starts:
            for i in arms:
                rb = run_bounds(model, losses, rounds, s, i, grid, prefixes)
                streak = np.cumprod(acts[:, s:] == i, axis=1).sum(axis=1)
                for j, end in enumerate(rb.ends):
                    c = int(np.count_nonzero(streak >= end - s + 1))
                    p_lo, p_hi = float(np.exp(rb.log_lo[j])), float(np.exp(rb.log_hi[j]))
                    pvals.append(_bracket_pvalue(c, runs, p_lo, p_hi))
                    worst_gap = max(worst_gap, p_lo - c / runs, c / runs - p_hi)
    tol = 1e-9 * (model.hi - model.lo)
    out = [DeclarationCheck(
        "state-action-law", name, label, action_p if not zero else 0.0, FALSE_REFUSAL, "below",
        zero == 0 and action_p >= FALSE_REFUSAL,
        (f"act() drew {zero} action(s) to which action_probs(u_t) gives probability 0" if zero
         else f"Kolmogorov–Smirnov test of {n_pits} randomised PITs of the drawn actions "
              f"under action_probs(u_t) against uniform: Bonferroni-adjusted p = {action_p:.3g}"),
        "ScalarStateModel.action_probs(state(s)) must be the distribution act() draws from, "
        "and state(s) must read the state act() receives", FALSE_REFUSAL)]
    ok_start = start_gap <= tol
    out.append(DeclarationCheck(
        "state-transition-law", name, label, trans_p if ok_start else 0.0, FALSE_REFUSAL,
        "below", ok_start and trans_p >= FALSE_REFUSAL,
        (f"the state before round 1 is {start_gap:.3g} away from the declared start"
         if not ok_start else
         f"Kolmogorov–Smirnov test of {n_pits} randomised PITs of u_(t+1) given u_t under "
         f"{model.describe()} against uniform (the clip bounds are atoms): "
         f"Bonferroni-adjusted p = {trans_p:.3g}"),
        "the update must be u' = clip(u + shift(ℓ) + step·D) with D of the declared law, drawn "
        "afresh each round, and state(s) must read u after feed()", FALSE_REFUSAL))
    adj = min(1.0, min(pvals) * len(pvals)) if pvals else 1.0
    out.append(DeclarationCheck(
        "state-recursion", name, label, adj, FALSE_REFUSAL, "below", adj >= FALSE_REFUSAL,
        f"{len(pvals)} exact binomial tests of simulated frequencies ({runs} runs a side, "
        f"{rounds} rounds) against the recursion's certified brackets ({grid.n} grid points) "
        f"for P(J_t = i) and the run events: largest excess outside a bracket "
        f"{max(worst_gap, 0.0):.3g}, Bonferroni-adjusted p = {adj:.3g}",
        "the declared model must describe the whole chain: the chosen action depends on the "
        "history only through the state, and the noise is fresh each round", FALSE_REFUSAL))
    return out


SPARSE_RUNS = 20_000          # runs a side (fewer on long horizons: SPARSE_PILOT_WORK)
SPARSE_PILOT_WORK = 4_000_000   # run-rounds a side at most, but at least 2000 runs
SPARSE_WORK = 2 ** 21         # run-rounds simulated at a time (bounded memory)
SPARSE_TESTED = 200           # sequences tested at most when they are not enumerated
SPARSE_KS_VALUES = 100_000    # released values in a Kolmogorov–Smirnov test at most


def _sparse_pilot(alg, losses, runs, rounds, rng, values: bool):
    """The pilot's code sequences (int8, runs × rounds) and, with ``values``,
    the numbers released in each round (runs × rounds), in chunks of
    SPARSE_WORK run-rounds (one chunk when that suffices)."""
    chunk = max(1, min(runs, SPARSE_WORK // max(rounds, 1)))
    for start in range(0, runs, chunk):
        n = min(chunk, runs - start)
        tr = simulate(alg, losses, n, rng, rounds=rounds,
                      point_rounds=range(rounds) if values else ())
        y = np.stack([tr.points[t][:, 0] for t in range(rounds)], axis=1) if values else None
        yield tr.actions.astype(np.int8), y


def _tally(chunks, ks, answers, model):
    """Distinct well-formed sequences with their counts over the chunks, and
    the number of malformed ones (the abort structure broken); the released
    values minus the answers on ⊤ rounds go into ``ks`` (capped)."""
    from audit.engine.svt_integral import well_formed
    counts: dict = {}
    malformed = 0
    for acts, y in chunks:
        ok = well_formed(model, acts)
        malformed += int(np.count_nonzero(~ok))
        acts = acts[ok]
        if y is not None:
            y = y[ok]
        uniq, c = np.unique(acts, axis=0, return_counts=True)
        for row, k in zip(uniq, c):
            key = row.tobytes()
            counts[key] = counts.get(key, 0) + int(k)
        if y is not None and len(ks) < SPARSE_KS_VALUES:
            ks.extend((y - answers[None, :])[acts == 1][:SPARSE_KS_VALUES - len(ks)].tolist())
    return counts, malformed


def _sparse_vector_check(alg, sc, seed, index) -> DeclarationCheck:
    """Every code sequence's frequency against its certified bracket when the
    sequences are enumerated; otherwise the SPARSE_TESTED most frequent
    sequences of a first half of the pilot (and all the others together)
    against the frequencies of a second, independent half, so the tested
    sequences are chosen before the counts they are tested on."""
    import dataclasses
    from audit.engine.evidence.integral import answers_of, describe, sparse_vector_of
    from audit.engine.svt_integral import (all_outputs_log_probability, enumerable,
                                           log_probability)
    model = sparse_vector_of(alg)
    codes_only = dataclasses.replace(model, numeric=None, numeric_scale=None)
    pairs, rounds = _losses_and_rounds(sc)
    runs = int(max(2000, min(SPARSE_RUNS, SPARSE_PILOT_WORK // max(rounds, 1))))
    every = enumerable(codes_only, rounds)
    fresh = model.numeric == "fresh"
    pvals, stray, worst, ks, tested, n_outputs = [], 0, 0.0, [], 0, 0
    example = ""
    for k, (losses, side) in enumerate(pairs):
        answers = answers_of(losses[:rounds])
        zs: list = []
        if every:
            codes, lo, hi = all_outputs_log_probability(codes_only, answers)
            n_outputs = len(codes)
            found, bad = _tally(_sparse_pilot(alg, losses, runs, rounds,
                                              _rng(seed, index, 100 + k), fresh), zs, answers,
                                codes_only)
            n_runs = runs
            index_of = {row.tobytes(): i for i, row in enumerate(codes)}
            counts = np.zeros(len(codes), dtype=np.int64)
            for key, c in found.items():
                if key in index_of:
                    counts[index_of[key]] = c
                else:
                    stray += c
                    example = example or describe(np.frombuffer(key, dtype=np.int8))
        else:
            half = runs // 2
            first, bad = _tally(_sparse_pilot(alg, losses, half, rounds,
                                              _rng(seed, index, 100 + k), False), [], answers,
                                codes_only)
            ranked = sorted(first.items(), key=lambda kv: (-kv[1], kv[0]))[:SPARSE_TESTED]
            codes = np.array([np.frombuffer(key, dtype=np.int8) for key, _ in ranked])
            lo, hi = log_probability(codes_only, answers, codes)
            found, bad2 = _tally(_sparse_pilot(alg, losses, half, rounds,
                                               _rng(seed, index, 102 + k), fresh), zs, answers,
                                 codes_only)
            bad += bad2
            n_runs = half
            counts = np.array([found.get(key, 0) for key, _ in ranked], dtype=np.int64)
            impossible = np.isneginf(hi)
            if impossible.any():
                stray += int(sum(c for (_, c), imp in zip(ranked, impossible) if imp))
                example = example or describe(codes[np.flatnonzero(impossible)[0]])
            # All the other sequences together: what the tested ones leave.
            rest = n_runs - int(counts.sum())
            rest_lo = max(0.0, 1.0 - float(np.exp(hi).sum()))
            rest_hi = min(1.0, 1.0 - float(np.exp(lo).sum()))
            pvals.append(_bracket_pvalue(rest, n_runs, rest_lo, rest_hi))
            worst = max(worst, rest_lo - rest / n_runs, rest / n_runs - rest_hi)
        if bad:
            stray += bad
            example = example or "a sequence that breaks the abort structure (cutoff)"
        tested += len(codes)
        for c, l, h in zip(counts, np.exp(lo), np.exp(hi)):
            pvals.append(_bracket_pvalue(int(c), n_runs, float(l), float(h)))
            worst = max(worst, float(l) - c / n_runs, c / n_runs - float(h))
        if fresh and zs:
            from algorithms.core import Laplace
            law = Laplace(model.numeric_scale)
            ks.append(float(stats.kstest(np.asarray(zs), lambda v: law.cdf(v, 0.0)).pvalue))
    tests = len(pvals) + len(ks)
    adj = 0.0 if stray else min(1.0, min(pvals + ks) * tests) if tests else 1.0
    which = (f"the frequencies of all {n_outputs} code sequences ({runs} "
             f"runs a side)" if every else
             f"the frequencies of the {SPARSE_TESTED} most frequent code sequences of a first "
             f"half of the pilot (and of all others together) in a second half ({tested} "
             f"sequences, {runs // 2} runs a half, a side; too many sequences to "
             f"enumerate)")
    what = (f"{stray} simulated output(s) the declared model makes impossible, e.g. {example}"
            if stray else
            f"{len(pvals)} exact binomial tests of {which} against their certified brackets"
            + (f" and {len(ks)} Kolmogorov–Smirnov test(s) of the released values" if ks else "")
            + f": largest excess outside a bracket {max(worst, 0.0):.3g}, Bonferroni-adjusted "
              f"p = {adj:.3g}")
    return DeclarationCheck(
        "sparse-vector-law", alg.name, sc.label, adj, FALSE_REFUSAL, "below",
        adj >= FALSE_REFUSAL, what,
        "the declared SparseVectorModel (threshold, Laplace scales, cutoff, resampling, numeric "
        "release) must be exactly what the mechanism does", FALSE_REFUSAL)


# ----------------------------------------------------------------- driver
def check_declarations(sc, seed: int, index: int, modes=None) -> list[DeclarationCheck]:
    """Every check that applies to the scenario's algorithm (restricted to
    what the white-box ``modes`` rest on, when given), on pilots drawn from
    the scenario's own neighbouring sequences."""
    alg = sc.algorithm
    scope = scope_of(alg)
    wanted = None if modes is None else set(modes)
    out = []
    if wanted is None or wanted - {"recursion", "integral"}:
        if scope == "actions":
            out += _action_checks(alg, sc, seed, index)
        elif scope == "transcript":
            out += _transcript_checks(alg, sc, seed, index)
    if state_model_of(alg) is not None and (wanted is None or "recursion" in wanted):
        out += _state_model_checks(alg, sc, seed, index)
    if (alg.extra or {}).get("sparse_vector") is not None and (wanted is None
                                                             or "integral" in wanted):
        out.append(_sparse_vector_check(alg, sc, seed, index))
    return out


def failed(checks: list[DeclarationCheck]) -> list[DeclarationCheck]:
    return [c for c in checks if not c.passed]


def refusal_reason(checks: list[DeclarationCheck], algorithm: Optional[str] = None,
                   detail: bool = False) -> str:
    """Why white-box modes are refused: the first failed check, with what it
    measured and what to change when ``detail``."""
    bad = failed(checks)
    if not bad:
        return ""
    first = bad[0]
    head = f"declaration check {first.check} failed for {algorithm or first.algorithm}"
    return f"{head} ({first.what}); {first.advice}" if detail else head
