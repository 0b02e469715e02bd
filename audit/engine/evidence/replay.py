"""Replay evidence (exact): the ``replay`` mode, for a mechanism over a
stream of answers whose randomness is uniform draws it only compares
(randomised response, RAPPOR, a sampled count by inverse CDF).  Each side's
output law is found by running the code itself on chosen draws (``law``);
no declared table, noise law or model enters, and no run is sampled.  The
pair's exact ε is a certificate for pure ε: one output of positive
probability whose log-ratio it is.  Which output is part of the claim: the
codes and numbers the mechanism releases, and the released values where
the claim is about the transcript.

Every law is confirmed before it is used: the unmodified code runs again
on plain values at points of every cell (``algorithms.replay.confirm``),
and any output that differs refuses the replay.

Where the code does anything else with a draw (another law, arithmetic on
a draw, a draw-dependent branch) the replay is refused with the reason and
the result claims nothing (ε_lb 0, not exact).

May import: numpy, ``algorithms.replay``, ``audit.engine.evidence``,
``audit.engine.words``.
"""
from __future__ import annotations

import numpy as np

from audit.engine.evidence.base import Evidence
from audit.engine.evidence.whitebox import WhiteBoxResult
from audit.engine.words import code_labels, output_part
from algorithms.replay.law import log_ratio, output_law, pair_epsilon, replay_scope
from algorithms.replay.tracer import (ContinuousDraws, ReplayRefused, generator_states,
                                      kept_generator_drew)
from audit.engine.evidence.traced import traced_pair, traced_result

# The numerical margin of an exact log-ratio computed in floating point from
# exact rational probabilities (two logs of doubles).
MARGIN = 1e-12


class ReplayEvidence(Evidence):
    kind = "replay"
    shares = 0
    unit = "replays"

    @property
    def phase(self) -> str:
        return f"white-box replay {self.scenario.label}"

    def conclude(self, samples, alpha) -> WhiteBoxResult:
        sc, claim = self.scenario, self.claim
        alg = sc.algorithm
        scope = replay_scope(alg)
        rounds = sc.rounds or alg.horizon
        a, b = (np.asarray(x, dtype=float)[:rounds] for x in (sc.losses_a, sc.losses_b))
        what = "claimed ε" + (f" at δ = {claim.delta:g}" if claim.delta else "")
        try:
            before = generator_states()
            la, lb = output_law(alg, a, scope), output_law(alg, b, scope)
            if kept_generator_drew(before):
                raise ReplayRefused("a numpy generator the code keeps drew during the "
                                    "replay: randomness the replay does not choose")
            pair = pair_epsilon(la, lb)
        except ContinuousDraws:
            return traced_result(sc, claim, a, b, scope, what)
        except ReplayRefused as why:
            return WhiteBoxResult(
                sc.label, "replay", scope, 0.0, claim.epsilon, what,
                f"no exact replay: {why}", exact=False,
                notes=[f"the code could not be replayed exactly ({why}); nothing is claimed"])
        notes, eps, exact = [], pair.epsilon, True
        if claim.delta:
            # one output proves nothing under δ > 0
            notes.append("with δ > 0 one output proves nothing: no bound is claimed")
            eps, exact = 0.0, False
        elif np.isfinite(eps):
            eps = max(0.0, eps - MARGIN)
        event = describe_output(la.labels, pair, code_labels(alg))
        notes.insert(0, f"exact output laws from replaying the code on chosen uniform draws: "
                        f"{la.cells} and {lb.cells} joint cells of the draws, refined in "
                        f"{la.steps} and {lb.steps} replays until no comparison cut a cell; "
                        f"each output's probability is the exact length of its cells")
        notes.insert(1, f"confirmed by re-executing the unmodified code on plain values at "
                        f"every point of each cell of at most {la.confirmed:,} points, else at "
                        f"its 2 corners and {la.confirmed - 2:,} random points "
                        f"({la.reexecuted:,} and {lb.reexecuted:,} runs): every one gave its "
                        f"cell's output")
        details = {"directions": pair.directions, "direction": pair.direction,
                   "parts": len(pair.best), "cells": [la.cells, lb.cells],
                   "confirmed_by_reexecution": {"points_per_cell": la.confirmed,
                                                "runs": [la.reexecuted, lb.reexecuted]},
                   "best_output": [{"elements": [la.labels[j] for j in g],
                                    "values": list(v), "p": float(p), "p_other": float(q)}
                                   for g, v, p, q in pair.best]}
        result = WhiteBoxResult(sc.label, "replay", scope, eps, claim.epsilon, what, event,
                                exact=exact, details=details, notes=notes)
        result.rests_on = ("reexecution",)
        return result


def describe_output(labels, pair, codes=None) -> str:
    """The certifying output in words: the parts that carry some of the
    log-ratio, largest first (the rest are the same on both sides)."""
    telling = sorted((x for x in pair.best if log_ratio(x[2], x[3]) > 0),
                     key=lambda x: -log_ratio(x[2], x[3]))
    shown = []
    for group, values, p, q in telling[:4]:
        what = ", ".join(output_part(labels[j], v, codes) for j, v in zip(group, values))
        shown.append(f"{what} (P {float(p):.6g} vs {float(q):.6g})")
    more = f"; … {len(telling) - 4} more" if len(telling) > 4 else ""
    rest = len(pair.best) - len(telling)
    same = f", the other {rest} part(s) at their likeliest values" if rest else ""
    total = "∞" if not np.isfinite(pair.epsilon) else f"{pair.epsilon:.6g}"
    return (f"the output {'; '.join(shown) or 'of any part'}{more}{same} ({pair.direction}): "
            f"exact log-ratio {total}, the sum over {len(pair.best)} independent part(s)")
