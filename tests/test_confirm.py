"""Re-execution (``algorithms.replay.confirm``): every law the replay states
is confirmed by running the unmodified code on plain values at the corners
and at random points of every cell.  A tracer that misreads the code —
simulated here by breaking one of its rules on purpose — is caught, and
the audit then claims nothing exact; exact figures say what they rest on."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from algorithms import Algorithm, Claim, Learner
from algorithms.replay import ReplayRefused, output_law, pair_epsilon
from algorithms.replay import tracer
from algorithms.replay.confirm import ESCAPE, PER_CELL, POINTS, PlainGenerator


def _function(fn, T=1):
    """A mechanism around ``fn(x, rng)`` called once per run."""
    def one_run(losses, rng, seed):
        return fn(np.asarray(losses, dtype=float)[:, 0], rng)
    learner = Learner(None, None, None, 2, feedback="stream", whole=lambda *a: None,
                      one_run=one_run)
    claim = Claim(1.0, 0.0, "actions", "test", relation="one-round", max_change=1.0)
    return Algorithm("fn", learner, claim, T, 1, {}, loss_range=(0.0, 1.0))


def rr_two_thirds(x, rng):
    """Randomized response with the truth kept with probability exactly 2/3:
    ε = ln 2."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < Fraction(2, 3) else 1 - bit


def test_the_guarantee_is_what_the_docs_say():
    """(1 − 0.01·(1 − 2^-11))^1400 < 10⁻⁶: a misread covering 1 % of a cell
    escapes the random points with probability below 10⁻⁶ (each point is a
    64-bit word modulo the cell's length ≤ 2^53)."""
    assert POINTS == 1400 and PER_CELL == 1402 and ESCAPE < 1e-6


def test_a_confirmed_law_records_its_points_and_runs():
    law = output_law(_function(rr_two_thirds), np.ones((1, 1)))
    assert law.confirmed == PER_CELL and law.reexecuted == 2 * PER_CELL
    assert law.parts[-1] == {(1,): Fraction(2, 3), (0,): Fraction(1, 3)} or \
        abs(float(law.parts[-1][(1,)]) - 2 / 3) < 2 ** -52


def test_a_threshold_rounded_to_a_double_is_caught(monkeypatch):
    """The tracer as it was: ``rng.random() < Fraction(2, 3)`` cut at 2/3
    rounded to a double, one grid point low, so the lie's cell was read at
    a point that keeps the truth — P(truth) 1, an "exact" ∞.  Re-execution
    of the code finds points of that cell that lie: refused, naming them."""
    def rounded(self, t):
        return Fraction(float(t)) * tracer.RANDOM_GRID if self.kind == "random" else \
            tracer.exact_value(t) - self.low
    monkeypatch.setattr(tracer.Draw, "_on_grid", rounded)
    with pytest.raises(ReplayRefused, match="re-executing the code as written disagrees") as e:
        output_law(_function(rr_two_thirds), np.ones((1, 1)))
    # the cell's highest point already lies: named with both outputs
    assert "random() draw 1 = 0.9999999999999999 it output value = 0, where the replay said " \
           "value = 1" in str(e.value)
    # the unconfirmed law is the old false certificate
    a = output_law(_function(rr_two_thirds), np.ones((1, 1)), confirm=False)
    b = output_law(_function(rr_two_thirds), np.zeros((1, 1)), confirm=False)
    assert pair_epsilon(a, b).epsilon == math.inf


def test_a_misread_covering_one_percent_of_a_cell_is_caught(monkeypatch):
    """A tracer blind to the comparisons ``0.40 <= u < 0.41`` (their cuts
    dropped): it sees one cell, read at u = 0, output 0, where the code
    outputs 1 on a band of 1 % of the grid inside it, away from both
    corners.  Only the random points can see it: all 1 400 miss it with
    probability < 10⁻⁶ (the points are fixed by the seed, so this test is
    deterministic)."""
    original = tracer.Draw.record

    def blind(self, ids, thresholds, op):
        if {float(t) for t in np.ravel(thresholds)} <= {0.40, 0.41}:
            return None
        return original(self, ids, thresholds, op)
    monkeypatch.setattr(tracer.Draw, "record", blind)

    def band(x, rng):
        u = rng.random()
        return int(0.40 <= u and u < 0.41)
    with pytest.raises(ReplayRefused, match="disagrees") as e:
        output_law(_function(band), np.ones((1, 1)))
    assert "random() draw 1 = 0.40" in str(e.value)


def test_draws_no_part_reads_get_random_values_and_a_hidden_dependence_is_caught(monkeypatch):
    """If the tracer lost a dependency (here: the second draw's comparison
    recorded no cut), the law says one output where the code gives two:
    the re-execution varies every draw and sees it."""
    original = tracer.Traced._cut_comparison

    def forgetful(self, ufunc, other, first):
        if self.draw.start == 1:
            return None
        return original(self, ufunc, other, first)
    monkeypatch.setattr(tracer.Traced, "_cut_comparison", forgetful)

    def two(x, rng):
        a = rng.random() < 0.5
        b = rng.random() < 0.5
        return int(a) + int(b)
    with pytest.raises(ReplayRefused, match="disagrees"):
        output_law(_function(two), np.ones((1, 1)))


def test_the_plain_generator_returns_what_the_libraries_return():
    """Types as numpy and Python return them, so the code's arithmetic runs
    as in production: a Python float from random(), the asked dtype from
    integers(), a plain int from choice(n)."""
    g = PlainGenerator(lambda draw, shape: np.zeros(shape, dtype=np.int64) + 255
                       if draw.kind == "integers" else np.zeros(shape, dtype=np.int64))
    assert type(g.random()) is float
    x = g.integers(0, 256, dtype=np.uint8)
    with np.errstate(over="ignore"):
        assert type(x) is np.uint8 and int(x + np.uint8(1)) == 0
    assert type(g.integers(0, 256)) is np.int64
    assert type(g.choice(256)) is int and g.random(3).dtype == np.float64


def test_an_exact_figure_says_it_rests_on_the_re_execution(tmp_path):
    """The result document and the summary name the basis of an exact
    replay figure: the replay, confirmed by re-execution at 1,402 points
    per cell."""
    import json
    from algorithms import build
    from audit.cli.main import main
    out = tmp_path / "r"
    assert main(["run", "tests.as_written_algos:randomized_response", "--mode", "replay",
                 "--horizon", "1", "--trials", "2000", "--report", str(out), "--quiet",
                 "--no-store"]) == 0
    doc = json.loads((out / "result.json").read_text())
    replay = [a for a in doc["attacks"] if a.get("kind") == "replay"]
    assert replay and all(a["exact"] for a in replay)
    for a in replay:
        assert [r["basis"] for r in a["rests_on"]] == ["reexecution"]
        assert "confirmed by re-executing the unmodified code at 1,402 points per cell" in \
            a["rests_on"][0]["meaning"]
        assert a["details"]["confirmed_by_reexecution"]["points_per_cell"] == 1402
    assert build("tests.as_written_algos:randomized_response", horizon=1) is not None
