"""A scalar state model's verification against the code:

* ``state-draw-identity`` (identity) — on a recording generator
  (``audit.engine.models.recording``): u_1 is the declared start; every
  action is the inverse CDF of ``action_probs(u_t)`` at one uniform ``act``
  drew that round; and every transition reproduces from the round's own
  recorded draws: u_{t+1} = clip(u_t + shift(ℓ_t) + step·b·(s_a − s_b)) to
  floating-point precision, for one ordered pair (a, b) of standardised
  Laplace draws of that round (the same pair for every run), b the
  declared scale — at a clip bound, the unclipped value lies beyond it.
  So the noise law and scale are the code's own, fresh every round.
  Deterministic: false-refusal probability 0.
* ``state-monotone`` (replay) — the declared direction of each arm's
  probability (``monotone``) holds for the code's own ``action_probs`` on
  the recursion's grid, which the rounding bounds rely on.  Deterministic.
* ``state-recursion`` (statistical) — end to end: the recursion's certified
  brackets on every marginal P(J_t = i) and on the run events the
  ``recursion`` mode uses must contain the simulated frequencies: an exact
  binomial test against the nearer end of each bracket, Bonferroni over
  every event and both sides, rejecting at p < 10⁻⁶.  A sanity check of
  the whole chain; the figures rest on the two checks above.

Pilot streams k = 80, 81 (recursion pilots), 84, 85 (recorded pilots).

May import: ``algorithms``, ``audit.engine.models.scalar_state.recursion``,
``audit.engine.models.checks``, ``audit.engine.models.recording``.
"""
from __future__ import annotations

import itertools

import numpy as np

from algorithms.errors import UserCodeError, user_call
from audit.engine.models.checks import (FALSE_REFUSAL, PILOT_STREAM, PILOT_WORK,
                                        DeclarationCheck, bracket_pvalue, pilot_rng, sides_of)
from audit.engine.models.recording import (RecordingGenerator, describe_draws,
                                           inverse_cdf_explains, observe, runs_view,
                                           runs_view_of)
from audit.engine.models.scalar_state.recursion import (WORK, grid_for, marginal_bounds,
                                                       run_bounds, run_starts, state_model_of)
from algorithms.simulate import simulate

STATE_ROUNDS = 1000
STATE_RUNS = (2000, 20000)
IDENTITY_RUNS = 499           # odd: the runs axis of a draw is told from its other axes
IDENTITY_SLACK = 1e-9


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


def _identity(alg, model, losses, rounds, seed, index, k, advice) -> str:
    """'' when start, actions and transitions reproduce from the recorded
    draws (see the module docstring); else what does not."""
    runs = IDENTITY_RUNS
    rng = RecordingGenerator(np.random.SeedSequence([seed, index, PILOT_STREAM, k]),
                             keep=("laplace", "random", "uniform"))
    u = np.empty((runs, rounds + 1))

    def watch(t, state):
        u[:, t] = _read_state(model, state, runs, t)

    tr = simulate(alg, losses, runs, rng, advice=advice, rounds=rounds, watch=watch,
                  learner=observe(alg.learner, rng))
    acts = tr.actions.astype(np.int64)
    span = model.hi - model.lo
    gap = float(np.max(np.abs(u[:, 0] - model.start)))
    if gap > IDENTITY_SLACK * (1 + span):
        return f"the state before round 1 is {gap:.3g} away from the declared start"
    with user_call("state_model.shift"):
        shifts = [float(model.shift(np.asarray(losses[t], dtype=float))) for t in range(rounds)]
    by_phase: dict = {}
    for d in rng.draws:
        by_phase.setdefault(d.phase, []).append(d)
    b, step = model.noise.scale, model.step
    for t in range(rounds):
        with user_call("state_model.action_probs", t + 1):
            p = np.asarray(model.action_probs(u[:, t]), dtype=float)
        if p.shape != (runs, model.n_arms):
            raise UserCodeError("state_model.action_probs", t + 1,
                                f"returned shape {p.shape}, expected ({runs}, {model.n_arms})")
        round_draws = by_phase.get(("act", t), []) + by_phase.get(("feed", t), [])
        ok = inverse_cdf_explains(p, acts[:, t], by_phase.get(("act", t), []), runs)
        if not ok.all():
            return (f"round {t + 1}: the actions of {int((~ok).sum())} of {runs} runs are not "
                    f"the inverse CDF of action_probs(u_t) at any uniform act() drew (act drew: "
                    f"{describe_draws(by_phase.get(('act', t), []))})")
        cols = []
        for d in round_draws:
            if d.family == "laplace" and runs_view(d, runs) is not None:
                s = d.standardized()
                view = runs_view_of(s, s.shape, runs)
                cols += [view[:, j] for j in range(view.shape[1])]
        if not _transition_explained(u[:, t], u[:, t + 1], shifts[t], step * b, cols, model):
            return (f"round {t + 1}: u_(t+1) is not clip(u_t + shift(ℓ_t) + {step:.4g}·"
                    f"{b:.4g}·(s_a − s_b)) for any pair of standardised Laplace draws of the "
                    f"round (the round drew: {describe_draws(round_draws)}): the declared "
                    f"step, noise scale, shift or clip bounds are not what the code does")
    return ""


def _transition_explained(x, y, shift, scale, cols, model) -> bool:
    """Some ordered pair of draw columns reproduces every run's transition."""
    lo, hi = model.lo, model.hi
    tol = IDENTITY_SLACK * (1.0 + np.abs(x) + np.abs(y) + abs(shift) + (hi - lo))
    at_lo, at_hi = y <= lo + tol, y >= hi - tol
    for a, c in itertools.permutations(range(len(cols)), 2):
        pred = x + shift + scale * (cols[a] - cols[c])
        exact = np.abs(pred - y) <= tol * (1.0 + np.abs(pred))
        fits = np.where(at_lo, pred <= lo + tol, np.where(at_hi, pred >= hi - tol, exact))
        if fits.all():
            return True
    return False


def _monotone(model, grid) -> str:
    """'' when each arm's action_probs moves in its declared direction on
    the grid; else where it does not."""
    x = grid.x
    with user_call("state_model.action_probs"):
        p = np.asarray(model.action_probs(x), dtype=float)
    for i, direction in enumerate(model.monotone):
        if direction == 0:
            continue
        steps = np.diff(p[:, i]) * direction
        bad = np.flatnonzero(steps < -1e-12)
        if bad.size:
            j = int(bad[0])
            way = "increasing" if direction > 0 else "decreasing"
            return (f"arm {i + 1}'s probability is declared {way} in u but goes from "
                    f"{p[j, i]:.6g} at u = {x[j]:.6g} to {p[j + 1, i]:.6g} at u = "
                    f"{x[j + 1]:.6g}")
    return ""


def checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    model = state_model_of(alg)
    name, label = alg.name, sc.label
    pairs, rounds_all = sides_of(sc)
    rounds = max(1, min(rounds_all, STATE_ROUNDS))
    runs = int(max(STATE_RUNS[0], min(STATE_RUNS[1], 20 * PILOT_WORK // rounds)))
    starts = run_starts(sc)
    arms = [i for i, d in enumerate(model.monotone) if d != 0]
    grid = grid_for(model, rounds, passes=4 + 2 * len(arms) * max(1, len(starts)),
                    work=WORK / 4)
    problem = ""
    for k, (losses, side) in enumerate(pairs):
        why = _identity(alg, model, losses, rounds, seed, index, 84 + k, sc.advice)
        problem = problem or (f"on {side}, {why}" if why else "")
    out = [DeclarationCheck(
        "state-draw-identity", name, label, 0.0 if not problem else 1.0, 0.0, "above",
        not problem,
        problem or (f"{IDENTITY_RUNS} runs a side, {rounds} rounds: the start is the declared "
                    f"one, every action is the inverse CDF of action_probs(u_t) at a recorded "
                    f"uniform, and every transition is {model.describe()} with D the difference "
                    f"of two of the round's own Laplace draws at the declared scale"),
        "ScalarStateModel must be what the code does: state(s) reads u before act() and after "
        "feed(), act() draws sample_categorical(action_probs(u), rng.random(runs)), and feed() "
        "moves u by shift(ℓ) + step·(Z − Z′) with Z, Z′ fresh rng.laplace(0, b) draws, clipped "
        "to [lo, hi]", 0.0, "identity")]
    why = _monotone(model, grid)
    out.append(DeclarationCheck(
        "state-monotone", name, label, 0.0 if not why else 1.0, 0.0, "above", not why,
        why or (f"each arm's action_probs moves in its declared direction on the {grid.n}-point "
                f"grid"),
        "ScalarStateModel.monotone must give, per arm, +1 where its probability increases in "
        "u, -1 where it decreases, 0 where it does neither", 0.0, "replay"))
    if problem or why:
        return out
    pvals, worst_gap = [], 0.0
    for k, (losses, side) in enumerate(pairs):
        u, acts = _state_pilot(alg, model, losses, runs, rounds, pilot_rng(seed, index, 80 + k),
                               sc.advice)
        # End to end: the recursion's brackets against simulated frequencies.
        lo, hi = marginal_bounds(model, losses, rounds, grid)
        for t in range(rounds):
            for i in arms:
                c = int(np.count_nonzero(acts[:, t] == i))
                pvals.append(bracket_pvalue(c, runs, lo[t, i], hi[t, i]))
                worst_gap = max(worst_gap, lo[t, i] - c / runs, c / runs - hi[t, i])
        prefixes: dict = {}
        for s in starts:
            for i in arms:
                rb = run_bounds(model, losses, rounds, s, i, grid, prefixes)
                streak = np.cumprod(acts[:, s:] == i, axis=1).sum(axis=1)
                for j, end in enumerate(rb.ends):
                    c = int(np.count_nonzero(streak >= end - s + 1))
                    p_lo, p_hi = float(np.exp(rb.log_lo[j])), float(np.exp(rb.log_hi[j]))
                    pvals.append(bracket_pvalue(c, runs, p_lo, p_hi))
                    worst_gap = max(worst_gap, p_lo - c / runs, c / runs - p_hi)
    adj = min(1.0, min(pvals) * len(pvals)) if pvals else 1.0
    out.append(DeclarationCheck(
        "state-recursion", name, label, adj, FALSE_REFUSAL, "below", adj >= FALSE_REFUSAL,
        f"{len(pvals)} exact binomial tests of simulated frequencies ({runs} runs a side, "
        f"{rounds} rounds) against the recursion's certified brackets ({grid.n} grid points) "
        f"for P(J_t = i) and the run events: largest excess outside a bracket "
        f"{max(worst_gap, 0.0):.3g}, Bonferroni-adjusted p = {adj:.3g}",
        "the declared model must describe the whole chain: the chosen action depends on the "
        "history only through the state, and the noise is fresh each round", FALSE_REFUSAL,
        "statistical"))
    return out
