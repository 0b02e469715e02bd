"""Exact output laws from the code itself, with no declaration read: a
mechanism over a stream of answers whose randomness is uniform draws that it
compares (after monotone steps such as shifting or scaling) or uses as a
value of few values is run on chosen draws (``tracer``: the generator and the
arrays that watch what the code does with them), and its output law is
built from the cells its comparisons cut (``law``); every law is confirmed
by re-executing the unmodified code on plain values at points of every cell
before it is returned (``confirm``).  Continuous noise (Laplace, Gaussian,
exponential, Gumbel) is followed the same way as affine forms of its draws
(``noise``), and the code's paths through the comparisons it makes of them
are enumerated and confirmed by re-execution (``paths``); the engine's
models evaluate them exactly.  The ``replay`` mode
(``audit.engine.evidence.replay``) reports a pair's exact ε from it.
It lives beside ``algorithms.simulate`` (both run a mechanism's code) and is
light on purpose (numpy only): ``audit list`` and the ``optimised`` attack
ask ``replay_applies``, and attacks import nothing from the engine.

May import: numpy.
"""
from algorithms.replay.law import (OutputLaw, log_ratio, output_law, pair_epsilon,
                                   replay_cells, replay_scope)
from algorithms.replay.paths import trace_paths, traced_paths
from algorithms.replay.tracer import ReplayGenerator, ReplayRefused, Traced


def replay_applies(alg) -> bool:
    """Whether the replay follows ``alg``'s code on its domain's midpoint
    (kept per algorithm object): a stream mechanism written as
    init/feed/act, or code written one call or one object per run, whose
    draws are uniform and used as the tracer allows (``law.replay_cells``),
    or continuous noise the trace of continuous draws follows
    (``paths.trace_paths``)."""
    return replay_cells(alg) is not None or trace_paths(alg) is not None

__all__ = ["OutputLaw", "ReplayGenerator", "ReplayRefused", "Traced", "log_ratio",
           "output_law", "pair_epsilon", "replay_applies", "replay_cells", "replay_scope",
           "trace_paths", "traced_paths"]
