"""The check that a learner draws all its randomness from the generator it is
handed (``check_own_randomness``), run on a small pilot before an audit uses
any evidence.

The tool seeds one generator per chunk of runs, so an audit gives the same
result for any number of workers, and its bounds assume the chunks are
independent.  A learner that draws from OS entropy (``secrets``,
``random.SystemRandom``, a library's own generator, a generator built at
import) gives results no seed reproduces, yet its runs are independent
draws of its output: it is audited black-box, in this process one run
after another (a worker process importing it afresh could restart a
generator built at import from the same state), and the result says it is
not reproducible.  One that builds ``np.random.default_rng(0)`` itself
makes every chunk the same runs, so the "independent" runs behind a bound
are copies: refused.  The pilot shows both:

* two simulations from generators built from the same seed must agree on
  everything the audit reads (actions, the points of a learner that plays
  points, the releases of a learner with a transcript model, the losses
  incurred);
* a simulation from another seed must differ from them, unless the learner
  is deterministic (every run of the pilot alike): runs that differ from
  one another but not from one seed to the next come from a generator the
  learner does not get from the tool.

A learner that mixes the given generator with a fixed-seed one of its own
passes the second test; no black-box pilot tells that apart from a correct
learner.

The pilot draws from ``SeedSequence([PILOT_STREAM, k])``: no spawn key and
two words, like no audit chunk (a spawn key) or other pilot (another first
word, or a third word that is not 0) — not that it matters much, since its
runs are never evidence.

May import: numpy, ``algorithms``.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from algorithms.core import Algorithm
from algorithms.simulate import Trace, simulate

RUNS = 64           # runs per pilot simulation
ROUNDS = 50         # at most this many rounds (the audit's prefix if shorter)
PILOT_STREAM = 0x2E920C

ADVICE = ("draw every random number from the rng argument of init/act/feed (not np.random.*, "
          "random.*, or a generator it creates)")


# Code audited as written (``algorithms.as_written``) may draw from np.random
# and random, or a generator built from its seed: those are captured per run.
ADVICE_AS_WRITTEN = ("draw from the seed it is given, np.random, random, or a generator built "
                     "from that seed or with no seed (np.random.default_rng()); not from OS "
                     "entropy some other way (np.random.PCG64(), random.SystemRandom, secrets, "
                     "os.urandom, a library's own generator), a generator built at import, or "
                     "a function imported by name in another module than the code's (in the "
                     "code's own module, from numpy.random import … is captured)")


def _outside(alg: Algorithm) -> str:
    return ("the tool cannot seed" if (alg.extra or {}).get("as_written")
            else "outside the generator it is given")


def _advice(alg: Algorithm) -> str:
    return ADVICE_AS_WRITTEN if (alg.extra or {}).get("as_written") else ADVICE


NOT_SEEDED = "this code draws randomness the audit cannot seed"


class RandomnessError(ValueError):
    """A learner draws randomness outside the generator it is given: bad
    input, which the command line prints as one line (exit 2)."""


def _rng(k: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([PILOT_STREAM, k]))


def _outputs(tr: Trace) -> list[tuple[str, Optional[int], np.ndarray]]:
    """What an audit reads of a simulation, as (what, round or None, array
    over runs) in round order where there is one: the actions (and points)
    of each round, then the releases and the losses incurred."""
    out = []
    points = tr.points or {}
    for t in range(tr.actions.shape[1]):
        out.append(("actions", t, tr.actions[:, t]))
        if t in points:
            out.append(("points", t, points[t]))
    if tr.releases is not None:
        out.append(("transcript releases", None, tr.releases))
    out.append(("losses incurred", None, tr.total_loss))
    return out


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    if x.shape != y.shape:
        return False
    if x.dtype.kind in "fc" or y.dtype.kind in "fc":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def _first_difference(a: Trace, b: Trace) -> Optional[str]:
    """Where two simulations first differ ("at round 3", "in their
    transcript releases"), or None when they agree on everything."""
    xs, ys = _outputs(a), _outputs(b)
    if len(xs) != len(ys):
        return "in what they output"
    for (what, t, x), (_, _, y) in zip(xs, ys):
        if not _same(x, y):
            return f"at round {t + 1}" if t is not None else f"in their {what}"
    return None


def _runs_alike(tr: Trace) -> bool:
    """Every run of the simulation output the same as the first."""
    return all(_same(x, np.broadcast_to(x[:1], x.shape)) for _, _, x in _outputs(tr))


def check_own_randomness(alg: Algorithm, losses: np.ndarray, advice: Optional[np.ndarray] = None,
                         rounds: Optional[int] = None, runs: int = RUNS,
                         max_rounds: int = ROUNDS) -> Optional[str]:
    """Whether ``alg``'s learner, simulated for ``runs`` runs over the first
    ``min(rounds, max_rounds)`` rounds of ``losses`` (with ``advice``),
    draws all its randomness from the generator it is given (module
    docstring): None if so; where the same seed gives other outputs, the
    reason the audit cannot reproduce it (``NOT_SEEDED``: its runs are
    still independent draws of its output, so black-box evidence on them
    is valid, but no seed reproduces them).  Raises ``RandomnessError`` (a
    ``ValueError``, one line naming ``alg``) where its runs are copies of
    one another from one seed to the next.  An exception in the learner's
    code propagates as the simulation raises it (``UserCodeError``).

    The outcome is kept with the algorithm: a later check of it over no
    more rounds and runs — on whatever losses, as where the neighbour
    search checked its interface input before its pilot and the audit then
    checks a pair — returns it without simulating again.  Whether code
    draws from the generator it is given is a property of its code, and
    code run one call per run costs a second or more a check."""
    losses = np.asarray(losses)
    T = losses.shape[0] if rounds is None else min(int(rounds), losses.shape[0])
    m = max(1, min(T, max_rounds))
    kept = alg.extra.get("randomness_checked") if isinstance(alg.extra, dict) else None
    if kept is not None and kept[0] >= m and kept[1] >= runs:
        return kept[2]
    learner = alg.learner
    kwargs = dict(advice=advice, rounds=m, record_transcript=learner.transcript is not None,
                  point_rounds=range(m) if learner.point is not None else ())
    first = simulate(alg, losses, runs, _rng(0), **kwargs)
    again = simulate(alg, losses, runs, _rng(0), **kwargs)
    where = _first_difference(first, again)
    if where is not None:
        return _checked(alg, m, runs, f"{NOT_SEEDED} (two simulations with the same seed "
                                      f"differ {where}); to make it reproducible, "
                                      f"{_advice(alg)}")
    other = simulate(alg, losses, runs, _rng(1), **kwargs)
    if _first_difference(first, other) is None and not _runs_alike(first):
        raise RandomnessError(f"algorithm {alg.name} draws randomness {_outside(alg)}: its "
                              f"runs differ from one another but not from one seed to another (a generator it creates itself, e.g. "
                              f"np.random.default_rng(0), makes every chunk of runs the same); "
                              f"{_advice(alg)}")
    return _checked(alg, m, runs, None)


def _checked(alg: Algorithm, rounds: int, runs: int, word: Optional[str]) -> Optional[str]:
    """Keep the outcome of a check over ``rounds`` rounds and ``runs`` runs
    with the algorithm (the widest check kept) and return it."""
    if isinstance(alg.extra, dict):
        kept = alg.extra.get("randomness_checked")
        if kept is None or (rounds >= kept[0] and runs >= kept[1]):
            alg.extra["randomness_checked"] = (rounds, runs, word)
    return word
