"""The transcript model (``algorithms.core.TranscriptModel``): a learner
that releases noisy values to an inner learner — each release its declared
mean plus noise of a declared law (Laplace, Gaussian or a finite table) —
and chooses actions from past releases only.  Its exact privacy loss is the
sum of the releases' log density ratios (``audit.engine.privacy_loss``:
``transcript_loss``, ``pair_worst_case``; the ``pld`` kind).

Verification against the code, on pilots of the pair's own sequences run on
a recording generator (``audit.engine.models.recording``):

* ``noise-identity`` (identity; Laplace and Gaussian laws) — every release
  minus its declared mean equals, to floating-point precision, ±b times one
  standardised draw (x − loc)/scale of the declared family that the code
  made for that run, each draw the noise of at most one release.  So the
  scale is the declared one exactly, the means are the declared ones, and
  the noises are fresh (never reused across releases, rounds or runs); a
  mixture, a scale that varies, or noise built by hand from ``rng.random``
  matches no draw and is refused.  Deterministic: false-refusal
  probability 0.
* ``noise-law``, ``noise-independence`` (statistical; finite laws only,
  whose outputs the code maps from uniforms in ways a draw does not show) —
  exact binomial tests of each output's frequency given the true value,
  and t-tests of the correlation of two releases' randomised PITs,
  Bonferroni over all tests and both sides, rejecting at adjusted
  p < 10⁻⁶.  A finite law is therefore never the basis of an exact
  figure: see the ``pld`` kind.
* ``means-history-free`` (replay; when ``history_free`` is declared) —
  every pilot transcript's means equal those computed without its actions
  and aux.
* ``mean-shift-bound`` (replay; when ``shift_bound`` is given) — along every
  pilot transcript, the distance between each release's means under the
  pair's two loss sequences is at most the declared bound.

Pilot streams k = 60, 61 (recorded pilots), 70, 71 (randomised PITs).

May import: ``algorithms``, ``audit.engine.models.checks``,
``audit.engine.models.recording``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from algorithms.errors import UserCodeError, user_call
from algorithms.simulate import simulate
from audit.engine.models.checks import (FALSE_REFUSAL, PILOT_RUNS, PILOT_STREAM, PILOT_WORK, TOL,
                                        DeclarationCheck, pilot_rng, sides_of)
from audit.engine.models.recording import (LOCATION_SCALE, RecordingGenerator, observe,
                                           runs_view, runs_view_of)

MAX_LAW_COLUMNS = 32
MAX_PAIR_COLUMNS = 12


def _pilot_releases(alg, sc, seed, index):
    """Per side: the releases y and their declared means m of a pilot,
    each (runs, releases·d), NaN where nothing was released, and the pilot
    (trace, losses) for the history-free check."""
    model = alg.learner.transcript
    pairs, rounds = sides_of(sc)
    # An odd number of runs that no K, N or d is likely to equal, so the
    # runs axis of every draw can be told from its other axes.
    runs = int(max(500, min(PILOT_RUNS, 20 * PILOT_WORK // max(rounds, 1)))) - 1
    out = []
    for k, (losses, side) in enumerate(pairs):
        rng = RecordingGenerator(np.random.SeedSequence([seed, index, PILOT_STREAM, 60 + k]),
                                 keep=LOCATION_SCALE)
        tr = simulate(alg, losses, runs, rng, advice=sc.advice, rounds=rounds,
                      record_transcript=True, learner=observe(alg.learner, rng))
        if tr.releases.size == 0:
            out.append((np.zeros((runs, 0)), np.zeros((runs, 0)), tr, losses, rng.draws))
            continue
        with user_call("transcript.means"):
            m = np.asarray(model.means(tr.actions.astype(np.int64), losses, tr.aux, sc.advice),
                           dtype=float)
        if m.shape != tr.releases.shape:
            raise UserCodeError("transcript.means", None,
                                f"returned shape {m.shape}, expected the releases' shape "
                                f"{tr.releases.shape}")
        out.append((np.asarray(tr.releases, dtype=float).reshape(runs, -1), m.reshape(runs, -1),
                    tr, losses, rng.draws))
    return out


IDENTITY_SLACK = 1e-9     # relative floating-point slack of y − m against b·|draw|


def _identity_check(alg, sc, sides) -> DeclarationCheck:
    """noise-identity: every release minus its declared mean is b times one
    standardised recorded draw of the declared family (Laplace, or normal),
    up to sign, drawn for that run and used by no other release."""
    law = alg.learner.transcript.noise
    b = law.scale if law.kind == "laplace" else law.sigma
    family = law.kind
    advice = ("each release must be its declared mean (TranscriptModel.means) plus one fresh "
              f"draw of rng.{'laplace' if family == 'laplace' else 'normal'}(0, b) with b the "
              "declared scale, drawn from the generator the learner is given (not built by "
              "hand, not a mixture, not shared by runs or releases)")
    n_rel, problem, defect = 0, "", None
    for y, m, tr, _, draws in sides:
        n_rel += int(np.isfinite(y).sum())
        if not problem:
            problem, cols = _match_noises(y, m, draws, family, b)
            defect = _release_pair(tr, cols)
    what = problem or (f"each of {n_rel} releases minus its declared mean is {law.__str__()}: "
                       f"b = {b:.6g} times one fresh standardised draw the code made")
    return DeclarationCheck("noise-identity", alg.name, sc.label, 0.0 if not problem else 1.0,
                            0.0, "above", not problem, what, advice, 0.0, "identity",
                            defect=defect)


def _release_pair(tr, cols):
    """Two flattened release columns as ((round, coordinate), (round,
    coordinate)), 0-based (None without a pair)."""
    if cols is None or tr.release_rounds is None:
        return None
    d = tr.releases.shape[2] if tr.releases.ndim == 3 else 1
    return tuple((int(tr.release_rounds[c // d]), int(c % d)) for c in cols)


def _match_noises(y, m, draws, family, b) -> tuple:
    """('', None) when every noise y − m is ±b·s for a distinct standardised
    draw s of the run that released it; else what does not match, and the
    two release columns that carry one draw when that is the defect."""
    runs = y.shape[0]
    own, shared, scales = [], [], set()
    for d in draws:
        if d.family != family:
            continue
        scale = d.constant("scale")
        scales.add("varying" if scale is None else f"{scale:.6g}")
        view = runs_view(d, runs)
        s = np.abs(d.standardized())
        if view is None:
            shared.append(s.ravel())
        else:
            own.append(runs_view_of(s, s.shape, runs))
    z = y - m
    released = np.isfinite(z)
    if not released.any():
        return "", None
    drawn = "" if scales else " (the code drew no " + family + " noise)"
    pool = np.concatenate(own, axis=1) if own else np.zeros((runs, 0))
    shared_pool = np.sort(np.concatenate(shared)) if shared else np.zeros(0)
    target = np.abs(z) / b
    slack = IDENTITY_SLACK * (1.0 + (np.abs(y) + np.abs(m)) / b)
    scale_words = ", ".join(sorted(scales)) or "none"
    for i in range(runs):
        cols = np.flatnonzero(released[i])
        if cols.size == 0:
            continue
        t, tol = target[i, cols], slack[i, cols]
        row = pool[i]
        order = np.argsort(row)
        srt = row[order]
        pos = np.clip(np.searchsorted(srt, t), 1, max(1, srt.size - 1))
        if srt.size == 0:
            near, dist = np.zeros(t.size, dtype=np.int64), np.full(t.size, np.inf)
        elif srt.size == 1:
            near, dist = np.zeros(t.size, dtype=np.int64), np.abs(srt[0] - t)
        else:
            left, right = np.abs(srt[pos - 1] - t), np.abs(srt[pos] - t)
            near = np.where(left <= right, pos - 1, pos)
            dist = np.minimum(left, right)
        matched = dist <= tol
        if not matched.all():
            j = int(np.flatnonzero(~matched)[0])
            if shared_pool.size and np.min(np.abs(shared_pool - t[j])) <= tol[j]:
                return (f"the noise of release {cols[j] + 1} is a draw shared by every run (a "
                        f"draw without the runs axis), so runs are not independent"), None
            return (f"in run {i + 1}, release {cols[j] + 1} minus its declared mean, "
                    f"{z[i, cols[j]]:.6g}, is not ±{b:.6g} times any {family} draw of that run"
                    f"{drawn} (the code drew {family} noise of scale(s) {scale_words}): the "
                    f"declared scale or means are not what the code does, or the noise is not "
                    f"one draw of the declared law"), None
        used = order[near]
        if np.unique(used).size < used.size:
            first, again = _repeat(used)
            return (f"in run {i + 1}, two releases carry the same recorded draw as their noise "
                    f"(releases {cols[first] + 1} and {cols[again] + 1}): noise reused across "
                    f"releases or rounds"), (int(cols[first]), int(cols[again]))
    return "", None


def _repeat(used: np.ndarray) -> tuple[int, int]:
    """Positions of the first value of ``used`` seen twice."""
    seen = {}
    for k, u in enumerate(used.tolist()):
        if u in seen:
            return seen[u], k
        seen[u] = k
    raise AssertionError("no repeat")


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
    for y, m, _, _, _ in sides:
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
                            FALSE_REFUSAL, "below", ok, what, advice, FALSE_REFUSAL,
                            "statistical")


def _independence_check(alg, sc, sides, seed, index) -> DeclarationCheck:
    """noise-independence: normal scores of the (randomised, for a finite
    law) PITs of two releases are independent standard normals under a
    correct declaration; exact t-tests on their correlation, Bonferroni."""
    law = alg.learner.transcript.noise
    pair_p, n_pairs, worst_r, worst_pair = [], 0, 0.0, None
    for k, (y, m, tr, _, _) in enumerate(sides):
        cols = _columns(y, MAX_PAIR_COLUMNS)
        if cols.size < 2:
            continue
        if law.continuous:
            u = law.cdf(y[:, cols], m[:, cols])
        else:
            u = _finite_pit(law, y[:, cols], m[:, cols], pilot_rng(seed, index, 70 + k))
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
                if abs(r) > worst_r:
                    worst_r, worst_pair = abs(r), _release_pair(tr, (cols[i], cols[j]))
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
        FALSE_REFUSAL, "statistical", defect=worst_pair if adj < FALSE_REFUSAL else None)


def _history_free_check(alg, sc, sides) -> DeclarationCheck:
    """means-history-free (only when declared): the means of every pilot
    transcript equal ``means`` called with zero actions and aux=None.
    Deterministic: false-refusal probability 0."""
    model = alg.learner.transcript
    worst, why = 0.0, ""
    for y, m, tr, losses, _ in sides:
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
    for _, _, tr, _, _ in sides if not why else ():
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


def checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    model = alg.learner.transcript
    try:
        model.noise
    except ValueError as exc:
        raise UserCodeError("transcript", None, str(exc)) from None
    sides = _pilot_releases(alg, sc, seed, index)
    if model.noise.continuous:
        out = [_identity_check(alg, sc, sides)]
    else:
        out = [_law_check(alg, sc, sides), _independence_check(alg, sc, sides, seed, index)]
    if model.history_free:
        out.append(_history_free_check(alg, sc, sides))
    if model.shift_bound is not None:
        out.append(_shift_bound_check(alg, sc, sides))
    return out


