"""A report-noisy-max model's verification against the code —
``noisy-max-identity`` (identity): on a recording generator
(``audit.engine.models.recording``) the declared model is replayed from
the code's own draws and must reproduce what the code reported in every
pilot run:

* each round's noises are K recorded draws of the declared law
  (``rng.laplace`` values minus their ``loc``; ``rng.exponential``
  values) made in that round, whose scale *parameter* is exactly the
  declared one, K consecutive columns in the order the code drew them,
  each column the noise of one answer (so the K noises are fresh and
  distinct draws);
* argmax (``index``) or max (``value``) of the round's answers plus those
  noises is the code's output, for every run.

A draw's parameters are what the code passed to the generator, so a scale
off by any factor, or another law, finds no draw and is refused; a replay
that differs from the code in one run is refused.  Deterministic:
false-refusal probability 0.  Pilot streams k = 120, 121.

May import: ``algorithms``, ``audit.engine.models.checks``,
``audit.engine.models.recording``.
"""
from __future__ import annotations

import numpy as np

from algorithms.noisy_max_model import NoisyMaxModel
from algorithms.simulate import simulate
from audit.engine.models.checks import (PILOT_STREAM, SCALE_RTOL, VALUE_RTOL, DeclarationCheck,
                                        declared, identity_runs, sides_of)
from audit.engine.models.recording import (RecordingGenerator, describe_draws, observe,
                                           runs_view)



def noisy_max_of(alg):
    """The declared ``NoisyMaxModel`` of ``alg``, or None."""
    return declared(alg, "noisy_max", NoisyMaxModel)


def _columns(model, draws, runs):
    """The (runs,) noise columns of ``draws`` with the declared law and
    scale, in the order the code drew them."""
    out = []
    for d in draws:
        if d.method != model.noise:
            continue
        scale = d.constant("scale")
        view = runs_view(d, runs)
        if scale is None or view is None or abs(scale - model.scale) > SCALE_RTOL * model.scale:
            continue
        if model.noise == "laplace":
            loc = d.param("loc")
            axes = [i for i, n in enumerate(loc.shape) if n == runs]
            view = view - np.moveaxis(loc, axes[0], 0).reshape(runs, -1)
        out += [view[:, j] for j in range(view.shape[1])]
    return out


def _replay(model, answers, reported, draws, runs) -> str:
    """'' when K consecutive recorded columns of the round reproduce every
    run's report, else what differs."""
    K = answers.size
    cols = _columns(model, draws, runs)
    if len(cols) < K:
        return (f"{len(cols)} {model.noise} draw(s) with the declared scale {model.scale:.6g} "
                f"for {K} answers (the code drew: {describe_draws(draws)})")
    best = None
    for s in range(len(cols) - K + 1):
        noisy = answers[None, :] + np.stack(cols[s:s + K], axis=1)
        if model.report == "index":
            bad = noisy.argmax(axis=1) != reported
        else:
            bad = ~np.isclose(noisy.max(axis=1), reported, rtol=VALUE_RTOL, atol=VALUE_RTOL)
        if not bad.any():
            return ""
        if best is None or bad.sum() < best.sum():
            best = bad
    i = int(np.flatnonzero(best)[0])
    return (f"replaying the declared model on the code's own draws gives another "
            f"{model.report} than the code's in {int(best.sum())} of {runs} runs (first: run "
            f"{i + 1}; the code drew: {describe_draws(draws)})")


def checks(alg, sc, seed, index) -> list[DeclarationCheck]:
    model = noisy_max_of(alg)
    pairs, rounds = sides_of(sc)
    width = np.asarray(sc.losses_a).shape[1]
    runs = identity_runs(rounds * width)
    problem = ""
    if model.report == "value" and alg.learner.point is None:
        problem = "the model reports the value, but the mechanism releases no number (no point)"
    for k, (losses, side) in enumerate(pairs if not problem else ()):
        rng = RecordingGenerator(np.random.SeedSequence([seed, index, PILOT_STREAM, 120 + k]),
                                 keep=("laplace", "exponential"))
        value = model.report == "value"
        tr = simulate(alg, losses, runs, rng, rounds=rounds, learner=observe(alg.learner, rng),
                      point_rounds=range(rounds) if value else ())
        for t in range(rounds):
            answers = np.asarray(losses[t], dtype=float)
            reported = (tr.points[t][:, 0] if value else tr.actions[:, t].astype(np.int64))
            draws = [d for d in rng.draws if d.phase in (("feed", t), ("act", t))]
            why = _replay(model, answers, reported, draws, runs)
            if why:
                problem = f"on {side}, round {t + 1}: {why}"
                break
        if problem:
            break
    what = problem or (
        f"{runs} runs a side, {rounds} round(s) of {width} answers: the {model.report} of the "
        f"answers plus {width} fresh {model.noise} draws of scale {model.scale:.6g} (the code's "
        f"own, in its order) is what the code reported, in every run")
    return [DeclarationCheck(
        "noisy-max-identity", alg.name, sc.label, 0.0 if not problem else 1.0, 0.0, "above",
        not problem, what,
        "the declared NoisyMaxModel (law, scale, index or value) must be exactly what the "
        "mechanism does: each answer's noise one rng.laplace(0, scale) or "
        "rng.exponential(scale) draw of that round, and the report the argmax or max", 0.0,
        "identity")]
