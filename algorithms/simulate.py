"""The vectorised simulation of a learner: many independent runs of an
algorithm on a fixed (oblivious) loss sequence, stepped together
(``simulate``), and what they did (``Trace``: actions, total losses and, when
asked for, points and the transcript).  Everything about running a
learner lives here, so that the attacks' pilots, the auditor's evidence and
the tests all run it the same way.

An exception in the learner's code (or a result the simulation cannot use)
becomes ``algorithms.errors.UserCodeError`` naming the function and round.

May import: numpy and ``algorithms`` only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from algorithms.backend import DeviceGenerator, backend_of, to_numpy
from algorithms.core import Algorithm
from algorithms.errors import UserCodeError
from algorithms.validate import check_advice, check_losses


@dataclass
class Trace:
    """What one chunk of runs did: actions ``(runs, rounds)``, the total loss
    each run incurred and, when asked for, the transcript: the values released
    to an inner learner ``(runs, n_releases[, d])`` and per-round aux data."""

    actions: np.ndarray
    total_loss: np.ndarray
    releases: Optional[np.ndarray] = None
    aux: Optional[np.ndarray] = None
    # {round (0-based): points (runs, d)} for the rounds asked for.
    points: Optional[dict] = None
    # {round (0-based): released values (runs, d), NaN where none} for the
    # rounds asked for (``release_rounds``), read through
    # ``Learner.released_of``.
    released: Optional[dict] = None
    # The rounds (0-based) at which the transcript's releases were appended
    # (one entry per release of ``releases``' second axis).
    release_rounds: Optional[tuple] = None

    def observed(self) -> Optional[dict]:
        """Points and releases as one dict for event families: points under
        their round t, releases under ``("r", t)`` (``released_key``)."""
        if not self.points and not self.released:
            return None
        out = dict(self.points or {})
        out.update({released_key(t): v for t, v in (self.released or {}).items()})
        return out


def released_key(t: int) -> tuple:
    """The key of round t's released values in an observation dict (points
    are keyed by their round, an int)."""
    return ("r", int(t))


def simulate(alg: Algorithm, losses: np.ndarray, runs: int, rng: np.random.Generator,
             advice: Optional[np.ndarray] = None, rounds: Optional[int] = None,
             learner=None, record_transcript: bool = False, point_rounds=(),
             watch: Optional[Callable[[int, object], None]] = None,
             release_rounds=()) -> Trace:
    """Run ``runs`` independent copies for the first ``rounds`` rounds (all of
    ``losses`` by default).  Simulating a prefix is exact for events on that
    prefix: the first m actions do not depend on what comes after.
    ``point_rounds`` (0-based) are the rounds whose points x_t are recorded.
    ``watch(t, state)``, when given, sees the state the learner holds before
    its ``act`` at round t (0-based, t = 0 … T − 1) and, with t = T, after
    its last ``feed``: how the auditor's pilots read a learner's internal
    state without stepping it themselves.  ``release_rounds`` (0-based) are
    the rounds whose released values (``Learner.released_of``) are recorded
    in ``Trace.released``, each ``(runs, d)``, NaN where nothing was
    released."""
    learner = learner or alg.learner
    if alg.check_losses is not None:
        losses = alg.check_losses(losses)
    else:
        losses = check_losses(losses, K=alg.n_arms, loss_range=alg.loss_range)
    point_rounds = set(int(r) for r in point_rounds)
    if point_rounds and learner.point is None:
        raise ValueError(f"{alg.name} plays arms, not points: events on x_t do not apply")
    points = {}
    full, first = learner.full_rows, learner.reads_first
    if alg.needs_advice:
        if advice is None:
            raise ValueError(f"{alg.name} needs expert advice of shape (T, N={alg.n_experts}, K)")
        advice = check_advice(advice, losses.shape[0], alg.n_experts, alg.n_arms)
    T = losses.shape[0] if rounds is None else rounds
    release_rounds = set(int(r) for r in release_rounds)
    if learner.whole is not None:
        return _simulate_whole(learner, losses, runs, rng, T, point_rounds)
    if release_rounds and learner.released_of is None:
        raise ValueError(f"{alg.name} exposes no released values (no Learner.released or "
                         f"transcript model): events on releases do not apply")
    watched = {}
    watched_of = learner.released_of if release_rounds else None
    dtype = np.int16 if learner.n_arms < 2 ** 15 else np.int64
    out = np.empty((T, runs), dtype=dtype)
    total = np.zeros(runs)
    # On another backend (algorithms.backend) the learner's arrays live
    # there: its generator draws there, the played arms' losses are read
    # there, and the actions come back to numpy once, at the end (a copy
    # per round would wait on the device every round).
    device = backend_of(alg) != "numpy"
    played_losses, acts = losses, None
    if device:
        if record_transcript:
            raise ValueError(f"{alg.name}: the transcript is recorded on the numpy backend only")
        rng = DeviceGenerator.from_numpy(rng)
        played_losses, acts = rng.xp.asarray(losses), []
        total = rng.xp.zeros(runs)
        if advice is not None:
            advice = rng.xp.asarray(advice)
    model = learner.transcript if record_transcript else None
    if record_transcript and model is None:
        raise ValueError(f"{alg.name} does not describe its releases (no transcript model)")
    releases, aux, rel_rounds = [], [], []
    aux_of = model.aux if model is not None else None
    released_of = model.released if model is not None else None
    # Every call into the learner is the user's code: an exception there
    # becomes a UserCodeError naming the function and the round.  One
    # try/except around the loop, with ``fn`` naming what is running, costs
    # nothing per round (a ``with user_call(...)`` per call costs ~2% on EXP3);
    # "act:result" etc. mark the tool's use of what a function returned.
    fn, t = "init", -1
    try:
        state = learner.init(runs, rng)
        for t in range(T):
            if watch is not None:
                fn = "watch"
                watch(t, state)
            if first:       # a stream mechanism reads its row, then answers
                fn = "feed"
                state = learner.feed(state, None, losses[t], rng)
            fn = "act"
            res = learner.act(state, None if advice is None else advice[t], rng)
            fn = "act:result"
            state, a = res
            if a.dtype.kind == "b":  # bool arm indices (K = 2) index arms, not runs
                a = a.astype(np.intp)
            if acts is None:
                out[t] = a
            else:
                acts.append(a)
            # A stream mechanism's codes are answers, not arms: nothing incurred.
            obs = 0.0 if first else played_losses[t][a]
            if t in point_rounds:
                fn = "point"
                x = learner.point(state)
                fn = "point:result"
                points[t] = np.array(x, dtype=float, copy=True)
            if learner.incurred is None:
                total += obs
            else:
                fn = "incurred"
                inc = learner.incurred(state, losses[t])
                fn = "incurred:result"
                total += inc
            if aux_of is not None:
                fn = "transcript.aux"
                aux.append(aux_of(state))
            if not first:
                fn = "feed"
                state = learner.feed(state, a, losses[t] if full else obs, rng)
            if released_of is not None:
                fn = "transcript.released"
                r = released_of(state)
                fn = "transcript.released:result"
                if not np.all(np.isnan(r)):
                    releases.append(r)
                    rel_rounds.append(t)
            if watched_of is not None and t in release_rounds:
                fn = "released"
                r = watched_of(state)
                fn = "released:result"
                r = np.array(r, dtype=float, copy=True)
                watched[t] = r.reshape(runs, -1)
        if watch is not None:
            fn = "watch"        # an error here is reported at round T
            watch(T, state)
    except (UserCodeError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - see above: the learner's error
        raise _user_error(fn, None if fn == "init" else t + 1, exc, runs,
                          learner.n_arms) from exc
    if acts is not None:
        if acts:
            out[:] = to_numpy(rng.xp.stack(acts))
        total = to_numpy(total).astype(float)
    if model is None:
        return Trace(out.T, total, points=points or None, released=watched or None)
    rel = np.stack(releases, axis=1) if releases else np.zeros((runs, 0))
    return Trace(out.T, total, rel, np.stack(aux, axis=1) if aux else None, points or None,
                 watched or None, tuple(rel_rounds))


def _simulate_whole(learner, losses, runs, rng, T, point_rounds) -> Trace:
    """A mechanism that reads its whole input at once (``Learner.whole``):
    one call on all of ``losses`` (never a prefix: its outputs may depend
    on every input), its observations cut to the first ``T`` rounds."""
    try:
        codes, points = learner.whole(losses, runs, rng)
    except (UserCodeError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - the mechanism's error
        raise _user_error("whole", None, exc, runs, learner.n_arms) from exc
    codes = np.asarray(codes)[:, :T]
    points = points or {}
    # A round where nothing numeric is observed reads as the number 0.
    kept = {t: np.array(points[t], dtype=float, copy=True) if t in points else np.zeros((runs, 1))
            for t in point_rounds if t < T}
    return Trace(codes, np.zeros(runs), points=kept or None)


# What a function must return, for "its result could not be used" errors.
_EXPECTED = {
    "act": "act() must return (state, actions) with actions an integer array of shape "
           "({runs},) in [0, {K})",
    "point": "point() must return a finite array of shape ({runs}, d)",
    "incurred": "incurred() must return the losses of shape ({runs},)",
    "transcript.released": "transcript.released() must return an array of shape ({runs},) or "
                           "({runs}, d)",
    "released": "released() must return an array of shape ({runs},) or ({runs}, d)",
}


def _user_error(fn: str, round, exc: Exception, runs: int, K: int) -> UserCodeError:
    """The learner's function ``fn`` raised, or (``fn:result``) what it
    returned could not be used."""
    name, _, result = fn.partition(":")
    if not result:
        return UserCodeError.raised(name, round, exc)
    detail = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return UserCodeError(name, round, f"returned something unusable ({detail}); "
                         f"{_EXPECTED[name].format(runs=runs, K=K)}")
