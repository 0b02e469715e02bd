"""The ``probs``/``commit`` model: a learner whose only randomness is
sampling each action from a distribution it computes (``Learner.probs``),
and which can replay any history (``Learner.commit``).  Its exact privacy
loss is a deterministic replay of the code's own ``probs``/``commit``/
``feed`` along both sides (``audit.engine.privacy_loss``: the per-round,
search and pld kinds).

Verification against the code, on pilots of the pair's own sequences:

* ``act-is-inverse-cdf`` (identity) — on a recording generator, every action
  ``act`` draws is the inverse CDF of ``probs`` at one uniform ``act`` drew
  that round (the same draw for every run), or ``probs`` is certain of it.
  So the action law is the one ``probs`` returns, seen in the draws, not
  tested.  Deterministic: false-refusal probability 0.
* ``same-losses-replay`` (replay) — histories sampled by ``act`` replayed
  on the *same* loss sequence on both sides, each side with its own state
  and its own random stream: every round's log-probability must agree
  between the sides and with what ``probs`` gave when ``act`` drew the
  action (L = 0).  Catches randomness outside ``probs`` (noise drawn in
  ``feed`` or ``init``), a ``commit`` that does not do what ``act`` does,
  and state shared across sides.
* ``state-runs-axis`` (replay) — state fields without the runs axis must not
  depend on a run's own randomness (two pilots with different streams must
  agree on them), and one that depends on the losses must be declared in
  ``Learner.shared``.
* ``replay-fast-path`` (replay) — a learner's ``replay`` shortcut gives the
  same P_t as replaying ``probs``/``commit``.

Pilot streams k = 10, 11 (recorded act pilots), 30–52 (replays).

May import: ``algorithms``, ``audit.engine.privacy_loss``,
``audit.engine.models.checks``, ``audit.engine.models.recording``.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.errors import user_call
from audit.engine.models.checks import (PILOT_RUNS, PILOT_STREAM, PILOT_WORK, TOL,
                                        DeclarationCheck, pilot_rng, sides_of)
from audit.engine.models.recording import (RecordingGenerator, describe_draws,
                                           inverse_cdf_explains, observe)
from audit.engine.privacy_loss import TINY_LOG, checked_probs, replay_both

REPLAY_HISTORIES = 40
AXIS_RUNS = (61, 67)          # odd sizes no K, N or d is likely to equal


def _pilot_with_probs(alg, losses, advice, runs, rounds, rng):
    """Run ``act`` like ``simulate`` does on a recording generator, also
    keeping ln P_t(I_t) from ``probs`` and, per round, which runs' actions
    are the inverse CDF of ``probs`` at a recorded uniform."""
    lr = observe(alg.learner, rng)
    full = lr.full_rows
    idx = np.arange(runs)
    with user_call("init"):
        state = lr.init(runs, rng)
    logp = np.empty((runs, rounds))
    acts = np.empty((runs, rounds), dtype=np.int64)
    unexplained = []            # (round, runs not explained, the round's draws)
    for t in range(rounds):
        adv = None if advice is None else advice[t]
        p = checked_probs(lr, state, adv, t, runs)
        start = len(rng.draws)
        with user_call("act", t + 1):
            state, a = lr.act(state, adv, rng)
        a = np.asarray(a).astype(np.int64)
        pa = p[idx, a]
        with np.errstate(divide="ignore"):
            logp[:, t] = np.log(pa)
        acts[:, t] = a
        drawn = rng.draws[start:]
        ok = inverse_cdf_explains(p, a, drawn, runs)
        if not ok.all() and len(unexplained) < 3:
            unexplained.append((t, int(np.count_nonzero(~ok)), drawn))
        with user_call("feed", t + 1):
            state = lr.feed(state, a, losses[t] if full else losses[t][a], rng)
        # Only the act draws are needed: keep memory flat over long pilots.
        del rng.draws[start:]
    return logp, acts, unexplained


def _same_terms(x: np.ndarray, y: np.ndarray) -> float:
    """Largest disagreement of two log-probability arrays (−inf equal to −inf)."""
    both_zero = np.isneginf(x) & np.isneginf(y)
    xs, ys = np.maximum(x, TINY_LOG), np.maximum(y, TINY_LOG)
    diff = np.where(both_zero, 0.0, np.abs(xs - ys) / (1.0 + np.minimum(np.abs(xs), np.abs(ys))))
    return float(diff.max()) if diff.size else 0.0


def checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    lr = alg.learner
    name, label = alg.name, sc.label
    pairs, rounds_all = sides_of(sc)
    rounds = max(1, min(rounds_all, 1000))
    runs = int(max(200, min(PILOT_RUNS, PILOT_WORK // rounds)))
    out = []
    worst_replay, bad_rounds, checked = 0.0, [], 0
    history = None
    for k, (losses, side) in enumerate(pairs):
        logp, acts, unexplained = _pilot_with_probs(
            alg, losses, sc.advice, runs, rounds,
            RecordingGenerator(np.random.SeedSequence([seed, index, PILOT_STREAM, 10 + k])))
        checked += acts.size
        bad_rounds += [(side, *u) for u in unexplained]
        m = min(REPLAY_HISTORIES, runs)
        hist = acts[:m]
        history = hist[0] if history is None else history
        seeds = (pilot_rng(seed, index, 30 + k).integers(2**63),
                 pilot_rng(seed, index, 40 + k).integers(2**63))
        la, lb, _, _ = replay_both(alg, losses, losses, lambda t, pa, pb: hist[:, t], rounds, m,
                                   sc.advice, seeds=seeds)
        worst_replay = max(worst_replay, _same_terms(la, lb), _same_terms(la, logp[:m]))
    out.append(DeclarationCheck(
        "same-losses-replay", name, label, worst_replay, TOL, "above", worst_replay <= TOL,
        f"replaying {min(REPLAY_HISTORIES, runs)} sampled histories of {rounds} rounds on the "
        f"same losses on both sides (separate states and random streams) changes "
        f"ln P_t(I_t) by up to {worst_replay:.3g} (relative), so L ≠ 0 on identical sequences",
        "the learner has randomness or state that probs()/commit() do not capture (e.g. noise "
        "drawn in feed() or init(), or a commit() that differs from act()); declare a "
        "TranscriptModel for released noise, or drop probs/commit"))
    if bad_rounds:
        side, t, n_bad, drawn = bad_rounds[0]
        what = (f"on {side}, round {t + 1}: the actions of {n_bad} of {runs} runs are not the "
                f"inverse CDF of probs() at any uniform act() drew (act drew: "
                f"{describe_draws(drawn)})")
    else:
        what = (f"every one of {checked} actions is the inverse CDF of probs() at a uniform "
                f"act() drew (or probs() is certain of it)")
    out.append(DeclarationCheck(
        "act-is-inverse-cdf", name, label, float(len(bad_rounds)), 0.0, "above",
        not bad_rounds, what,
        "act() must draw its action as sample_categorical(probs(state), rng.random(runs)) from "
        "the generator it is given", 0.0, "identity"))
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
        seeds = pilot_rng(seed, index, k).integers(2**63, size=3)
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


