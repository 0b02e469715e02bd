"""A sparse vector model's verification against the code — ``sparse-vector-identity`` (identity): on a
recording generator (``audit.engine.models.recording``) the declared model
is *replayed from the code's own draws* and must reproduce every code and
every released number of every pilot run:

* ρ is a recorded Laplace draw made in ``init`` or round 1 whose scale
  parameter is exactly the declared ``threshold_scale``; with ``resample``,
  after each ⊤ the next ρ is such a draw of that round or the next;
* ν_i is a recorded Laplace draw of round i with scale exactly
  ``query_scale`` (none when it is 0);
* a ``fresh`` number is q_i plus a recorded Laplace draw of round i with
  scale exactly ``numeric_scale``; a ``same`` number is q_i + ν_i itself;
* the cutoff and the resampling rule are the declared ones (the replay
  aborts and resamples as declared);
* every recorded column is the noise of one role only (ρ, a ν_i, a fresh
  number), and ``_replay`` can be told to leave out the columns another
  mechanism used (two sparse vectors in parallel: ``parallel``).

A draw's *parameters* are what the code passed to the generator, so a scale
off by any factor finds no draw and is refused; a replay that differs from
the code in one run is refused.  The codes pin the threshold to the
interval between the largest ⊥ margin q_i + ν_i − ρ and the smallest ⊤
margin; a threshold anywhere in it is the declared model on answers shifted
by less than that width, which the note states.  Deterministic:
false-refusal probability 0 (where two roles share one scale in one round
the first consistent assignment is taken; none consistent is a refusal).

Pilot streams k = 100, 101.

May import: ``algorithms``, ``audit.engine.models.checks``,
``audit.engine.models.recording``.
"""
from __future__ import annotations

import itertools

import numpy as np

from algorithms.sparse_vector_model import ABORTED, ABOVE, BELOW, SparseVectorModel
from audit.engine.models.checks import (IDENTITY_RUNS, IDENTITY_WORK, PILOT_STREAM,
                                        SCALE_RTOL, VALUE_RTOL, DeclarationCheck,
                                        declared, sides_of)
from audit.engine.models.recording import RecordingGenerator, describe_draws, observe, runs_view
from algorithms.simulate import simulate



def sparse_vector_of(alg):
    """The declared ``SparseVectorModel`` of ``alg``, or None."""
    return declared(alg, "sparse_vector", SparseVectorModel)


def answers_of(losses: np.ndarray) -> np.ndarray:
    """One answer per round: the rows must have width 1."""
    arr = np.asarray(losses, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 1:
        raise ValueError(f"a sparse vector reads one answer per round; rows of shape "
                         f"{arr.shape[1:]} given")
    return arr[:, 0]


class _Noises:
    """The recorded Laplace noises x − loc of one pilot, by phase, each a
    (runs,) column with the scale the code passed."""

    def __init__(self, draws, runs):
        self.by_phase: dict = {}
        self.draws_by_phase: dict = {}
        for d in draws:
            self.draws_by_phase.setdefault(d.phase, []).append(d)
            if d.method != "laplace":
                continue
            scale = d.constant("scale")
            view = runs_view(d, runs)
            if scale is None or view is None:
                continue
            noise = view - runs_view_loc(d, runs)
            for j in range(noise.shape[1]):
                self.by_phase.setdefault(d.phase, []).append((scale, noise[:, j]))

    def of(self, phases, scale, taken=()):
        """The columns of ``phases`` drawn with ``scale``, except those whose
        ids are in ``taken`` (already the noise of another role)."""
        return [col for ph in phases for s, col in self.by_phase.get(ph, ())
                if abs(s - scale) <= SCALE_RTOL * scale and id(col) not in taken]

    def drawn(self, phases) -> str:
        return describe_draws([d for ph in phases for d in self.draws_by_phase.get(ph, ())])


def runs_view_loc(draw, runs):
    loc = draw.param("loc")
    axes = [i for i, n in enumerate(loc.shape) if n == runs]
    return np.moveaxis(loc, axes[0], 0).reshape(runs, -1)


def _round_phases(t):
    return (("feed", t), ("act", t))


def _replay(model, answers, codes, values, noises, runs, exclude=frozenset()):
    """Replay the declared model from the recorded noises, never using a
    column whose id is in ``exclude`` (the noises of another mechanism);
    ('', the threshold's pinned interval, the ids of the columns used) when
    it reproduces every code and number, else (what differs, None, None)."""
    first = [("init", -1), *_round_phases(0)]
    rho0s = noises.of(first, model.threshold_scale, exclude)
    if not rho0s:
        return (f"no Laplace draw with the declared threshold scale {model.threshold_scale:.6g} "
                f"in init() or round 1 (the code drew: {noises.drawn(first)})"), None, None
    why = ""
    for rho0 in rho0s:
        why, pin, used = _replay_from(model, answers, codes, values, noises, runs, rho0, exclude)
        if not why:
            return "", pin, used
    return why, None, None


def _replay_from(model, answers, codes, values, noises, runs, rho0, exclude):
    rho = rho0.copy()
    # Every column is the noise of one role only: ids of the columns used so far.
    taken = set(exclude) | {id(rho0)}
    count = np.zeros(runs, dtype=np.int64)
    aborted = np.zeros(runs, dtype=bool)
    low, high = -np.inf, np.inf          # the threshold's interval pinned by the codes
    pending = None                        # ρ candidates for runs that just said ⊤ (lazy draw)
    for t in range(answers.size):
        phases = _round_phases(t)
        if pending is not None:
            # A ρ drawn lazily at the start of this round after last round's ⊤.
            lazy = noises.of(phases, model.threshold_scale, taken)
            if lazy:
                rho = np.where(pending, lazy[0], rho)
                taken.add(id(lazy[0]))
        nus = noises.of(phases, model.query_scale, taken) if model.query_scale > 0 else [None]
        fresh = (noises.of(phases, model.numeric_scale, taken) if model.numeric == "fresh"
                 else [None])
        if not nus:
            return (f"round {t + 1}: no Laplace draw with the declared query scale "
                    f"{model.query_scale:.6g} (the code drew: {noises.drawn(phases)})"), None, None
        if not fresh:
            return (f"round {t + 1}: no Laplace draw with the declared numeric scale "
                    f"{model.numeric_scale:.6g} (the code drew: {noises.drawn(phases)})"), \
                None, None
        best = None
        for nu, fr in itertools.product(nus, fresh):
            if nu is not None and fr is not None and nu is fr:
                continue
            noisy = answers[t] + (nu if nu is not None else 0.0)
            above = (noisy >= model.threshold + rho) & ~aborted
            code = np.where(aborted, ABORTED, np.where(above, ABOVE, BELOW))
            bad = code != codes[:, t]
            if model.numeric is not None:
                rel = noisy if model.numeric == "same" else answers[t] + fr
                got = values[:, t]
                off = above & ~np.isclose(got, rel, rtol=VALUE_RTOL, atol=VALUE_RTOL)
                bad |= off
            if best is None or bad.sum() < best[0].sum():
                best = (bad, above, noisy, nu, fr)
            if not bad.any():
                break
        bad, above, noisy, nu, fr = best
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return (f"round {t + 1}: replaying the declared model on the code's own draws gives "
                    f"{_name(int(np.where(aborted, ABORTED, np.where(above, ABOVE, BELOW))[i]))}"
                    f" in run {i + 1} where the code answered {_name(int(codes[i, t]))} "
                    f"({int(bad.sum())} of {runs} runs differ; the round drew: "
                    f"{noises.drawn(phases)})"), None, None
        taken |= {id(c) for c in (nu, fr) if c is not None}
        live = ~aborted
        margin = noisy - rho
        if np.any(live & above):
            high = min(high, float(margin[live & above].min()))
        if np.any(live & ~above):
            low = max(low, float(margin[live & ~above].max()))
        if model.resample and above.any():
            now = noises.of(phases, model.threshold_scale, taken)
            if now:
                rho = np.where(above, now[-1], rho)
                taken.add(id(now[-1]))
                pending = None
            else:
                pending = above
        count = count + above
        if model.cutoff is not None:
            aborted = aborted | (count >= model.cutoff)
    return "", (low, high), taken - set(exclude)


def _name(code: int) -> str:
    return {BELOW: "⊥", ABOVE: "⊤", ABORTED: "aborted"}.get(code, str(code))


def checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    model = sparse_vector_of(alg)
    pairs, rounds = sides_of(sc)
    runs = int(max(IDENTITY_RUNS[0], min(IDENTITY_RUNS[1], IDENTITY_WORK // max(rounds, 1))))
    runs |= 1
    problem, pins = "", []
    for k, (losses, side) in enumerate(pairs):
        answers = answers_of(losses[:rounds])
        rng = RecordingGenerator(np.random.SeedSequence([seed, index, PILOT_STREAM, 100 + k]),
                                 keep=("laplace",))
        tr = simulate(alg, losses, runs, rng, rounds=rounds, learner=observe(alg.learner, rng),
                      point_rounds=range(rounds) if model.numeric is not None else ())
        codes = tr.actions.astype(np.int64)
        values = (np.stack([tr.points[t][:, 0] for t in range(rounds)], axis=1)
                  if model.numeric is not None else None)
        why, pin, _ = _replay(model, answers, codes, values, _Noises(rng.draws, runs), runs)
        if why:
            problem = f"on {side}, {why}"
            break
        pins.append(pin)
    low = max(p[0] for p in pins) if pins else -np.inf
    high = min(p[1] for p in pins) if pins else np.inf
    what = problem or (
        f"{runs} runs a side, {rounds} rounds: replaying the declared model (threshold noise "
        f"Laplace({model.threshold_scale:.6g}), query noise "
        + (f"Laplace({model.query_scale:.6g})" if model.query_scale else "none")
        + f", cutoff {model.cutoff}, resample {model.resample}, numeric {model.numeric}) on the "
          f"code's own draws reproduces every answer"
        + ("" if model.numeric is None else " and released number")
        + f"; the codes pin the threshold to [{low:.6g}, {high:.6g}] (declared "
          f"{model.threshold:g})")
    return [DeclarationCheck(
        "sparse-vector-identity", alg.name, sc.label, 0.0 if not problem else 1.0, 0.0,
        "above", not problem, what,
        "the declared SparseVectorModel (threshold, Laplace scales, cutoff, resampling, numeric "
        "release) must be exactly what the mechanism does, each noise one "
        "rng.laplace(0, scale) draw from the generator it is given", 0.0, "identity")]
