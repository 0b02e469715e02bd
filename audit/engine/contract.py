"""The interface contract of a learner, checked at its first rounds before an
audit simulates it (``check_interface``).

A few runs for a few rounds on the audit's own losses (and advice) show
whether every function returns what ``algorithms.core`` documents: ``init``
and ``feed`` a state dict, ``act`` a pair ``(state, actions)`` with integer
arm indices of shape ``(runs,)`` in ``[0, n_arms)``, and, when declared,
``probs`` distributions over the arms, ``point`` a finite ``(runs, d)`` array
and ``incurred`` finite losses of shape ``(runs,)``.  A broken promise or an
exception raises ``algorithms.errors.UserCodeError`` naming the function and
the round, which the command line prints as one line (exit 2 for a user's
algorithm).

May import: ``algorithms``.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from algorithms.errors import UserCodeError, user_call

RUNS, ROUNDS = 5, 3
PROB_TOLERANCE = 1e-6


def _kind(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return type(value).__name__


def _state(function: str, round: Optional[int], state, what: str = "return the state as a dict"):
    if not isinstance(state, dict):
        raise UserCodeError(function, round, f"must {what}, got {_kind(state)}")
    return state


def _finite_array(function: str, round: int, value, shape_text: str, ok_shape) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise UserCodeError(function, round, f"must return a finite array of shape "
                            f"{shape_text}, got {_kind(value)}") from None
    if not ok_shape(arr.shape):
        raise UserCodeError(function, round, f"returned an array of shape {arr.shape}, "
                            f"expected {shape_text}")
    if not np.all(np.isfinite(arr)):
        raise UserCodeError(function, round, "returned non-finite values (NaN or inf)")
    return arr


def _actions(round: int, actions, runs: int, n_arms: int) -> np.ndarray:
    if not isinstance(actions, np.ndarray):
        raise UserCodeError("act", round, f"returned actions as {_kind(actions)}, expected a "
                            f"numpy integer array of shape ({runs},)")
    if actions.dtype.kind not in "iub":
        raise UserCodeError("act", round, f"returned actions of dtype {actions.dtype}, "
                            f"expected integers (arm indices 0..{n_arms - 1})")
    if actions.shape != (runs,):
        raise UserCodeError("act", round, f"returned actions of shape {actions.shape}, "
                            f"expected ({runs},) (one per run)")
    a = actions.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= n_arms):
        bad = a[(a < 0) | (a >= n_arms)][0]
        raise UserCodeError("act", round, f"returned arm {bad}, outside [0, {n_arms}) "
                            f"(arms are 0-based)")
    return a


def check_interface(alg, losses, advice=None, runs: int = RUNS, rounds: int = ROUNDS,
                    seed: int = 0) -> None:
    """Run ``alg``'s learner for ``runs`` runs over the first ``rounds``
    rounds of ``losses`` (fewer if the horizon is shorter), with ``advice``
    ``(T, N, K)`` when it takes advice, and raise ``UserCodeError`` naming the
    function and the round at the first broken promise.  Uses its own
    random stream, so the audit's streams are untouched."""
    learner = alg.learner
    losses = np.asarray(losses, dtype=float)
    n_rounds = min(rounds, losses.shape[0])
    K = learner.n_arms
    full, first = learner.full_rows, learner.reads_first
    if learner.feedback not in ("bandit", "full", "stream"):
        raise UserCodeError("Learner", None, f"feedback must be 'bandit', 'full' or 'stream', "
                            f"got {learner.feedback!r}")
    parts = tuple(learner.code_parts)
    if parts and (any(not isinstance(p, (int, np.integer)) or p < 1 for p in parts)
                  or int(np.prod(parts, dtype=np.int64)) != K):
        raise UserCodeError("Learner", None, f"code_parts must be positive integers whose "
                            f"product is n_arms = {K}, got {parts!r}")
    rng = np.random.default_rng(seed)
    if learner.whole is not None:
        _check_whole(learner, losses, runs, rng)
        return
    with user_call("init"):
        state = learner.init(runs, rng)
    _state("init", None, state)
    for t in range(n_rounds):
        r = t + 1
        adv = None if advice is None else advice[t]
        if first:
            with user_call("feed", r):
                state = learner.feed(state, None, losses[t], rng)
            _state("feed", r, state)
        if learner.probs is not None:
            with user_call("probs", r):
                p = learner.probs(state, adv)
            p = _finite_array("probs", r, p, f"({runs}, {K})", lambda s: s == (runs, K))
            if p.min() < 0 or p.max() > 1:
                raise UserCodeError("probs", r, f"returned a probability outside [0, 1] "
                                    f"({p.min():.6g} … {p.max():.6g})")
            sums = p.sum(axis=1)
            if np.max(np.abs(sums - 1)) > PROB_TOLERANCE:
                worst = sums[np.argmax(np.abs(sums - 1))]
                raise UserCodeError("probs", r, f"returned a row summing to {worst:.9g}, "
                                    f"expected 1 (± {PROB_TOLERANCE:g})")
        with user_call("act", r):
            res = learner.act(state, adv, rng)
        if not (isinstance(res, tuple) and len(res) == 2):
            got = f"a tuple of {len(res)}" if isinstance(res, tuple) else _kind(res)
            raise UserCodeError("act", r, f"must return (state, actions), got {got}")
        state, actions = res
        _state("act", r, state, "return (state, actions) with the state a dict")
        a = _actions(r, actions, runs, K)
        if learner.point is not None:
            with user_call("point", r):
                x = learner.point(state)
            _finite_array("point", r, x, f"({runs}, d)",
                          lambda s: len(s) == 2 and s[0] == runs)
        if learner.incurred is not None:
            with user_call("incurred", r):
                v = learner.incurred(state, losses[t])
            _finite_array("incurred", r, v, f"({runs},)", lambda s: s == (runs,))
        if first:
            continue
        fed = losses[t] if full else losses[t][a]
        with user_call("feed", r):
            state = learner.feed(state, a if actions.dtype.kind == "b" else actions, fed, rng)
        _state("feed", r, state)


def _check_whole(learner, losses, runs: int, rng) -> None:
    """A mechanism reading its whole input (``Learner.whole``): one call,
    codes of shape (runs, T) in [0, n_codes), finite numbers."""
    with user_call("whole"):
        codes, points = learner.whole(losses, runs, rng)
    T = losses.shape[0]
    codes = np.asarray(codes)
    if codes.shape != (runs, T) or codes.dtype.kind not in "iu":
        raise UserCodeError("whole", None, f"returned codes of shape {codes.shape}, expected "
                            f"({runs}, {T}) integers")
    if codes.size and (codes.min() < 0 or codes.max() >= learner.n_arms):
        raise UserCodeError("whole", None, f"returned a code outside [0, {learner.n_arms})")
    for t, x in (points or {}).items():
        _finite_array("whole", None, x, f"({runs}, d)", lambda s: len(s) == 2 and s[0] == runs)
