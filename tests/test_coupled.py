"""Coupled runs (``--coupled``): the test of blocks sharing a seed
(``audit.engine.coupled``) is a valid lower confidence bound whatever the
coupling, gains where the coupling is tight, and the evidence built on it
is reproducible and reaches the CLI."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from algorithms import build
from attacks.events import rows_of
from audit.engine import audit_algorithm
from audit.engine.bounds import epsilon_lower_bound, one_sided_bounds
from audit.engine.coupled import (Design, Plan, coupled_lower_bound, log_capital, plan,
                                  plan_lower_bound, truncation)
from tests.cli import audit_here


def _blocks(rng, blocks, m, p, q, coupling):
    """Counts of one event on both sides, ``blocks`` blocks of ``m`` runs:
    each run is a uniform u; the numerator side counts u < p, the
    denominator side u < q (``tight``), an independent uniform < q
    (``independent``) or u > 1 − q (``opposite``: as anti-correlated as
    two indicators can be)."""
    u = rng.random((blocks, m))
    a = (u < p).sum(1)
    if coupling == "tight":
        b = (u < q).sum(1)
    elif coupling == "independent":
        b = (rng.random((blocks, m)) < q).sum(1)
    else:
        b = (u > 1 - q).sum(1)
    return a, b


@pytest.mark.parametrize("coupling", ["tight", "independent", "opposite"])
@pytest.mark.parametrize("p, q, delta", [(0.3, 0.3 / math.e ** 0.2, 0.0),
                                         (0.01, 0.01 / math.e ** 0.5, 0.0),
                                         (0.2, (0.2 - 0.01) / math.e ** 0.3, 0.01)])
def test_coverage_whatever_the_coupling(coupling, p, q, delta):
    """A true ratio (P − δ)/Q = e^ε: over 1 500 independent tests at α = 0.1
    (each with a plan fixed on pilot blocks of its own stream), the share of
    ε_lb above ε must be ≤ α.  At exactly α, more than ``limit`` exceed with
    probability < 1e-9 (binom.sf): the test fails only if the bound is not
    a valid 90% bound.  The bound is tight here (tight coupling: within a
    few hundredths of ε), so an error in the factors, the truncation's
    correction or the denominator's check would show."""
    eps = math.log((p - delta) / q)
    m, k, reps, alpha = (64 if p > 0.1 else 512), 300, 1500, 0.1
    pilot = _blocks(np.random.default_rng(7), 200, m, p, q, coupling)
    d = plan(pilot[0][:, None], pilot[1][:, None], m, k, alpha, delta).design
    rng = np.random.default_rng(11)
    over, found = 0, []
    for _ in range(reps):
        a, b = _blocks(rng, k, m, p, q, coupling)
        lb = coupled_lower_bound(a, b, d, alpha, delta)
        over += lb > eps + 1e-12
        found.append(lb)
    limit = next(j for j in range(reps) if stats.binom.sf(j, reps, alpha) < 1e-9)
    assert over <= limit
    if coupling == "tight":
        assert np.mean(found) > eps - 0.1          # and it is not vacuous


def test_tight_coupling_beats_independent_runs():
    """The same runs a side: a tightly coupled event (P = 0.3, ratio e^0.1)
    certifies more from coupled blocks than two Clopper–Pearson bounds from
    the same counts (the independent-runs bound at the same α split over
    two bounds)."""
    p, q = 0.3, 0.3 / math.e ** 0.1
    m, k, alpha = 64, 400, 0.1
    pilot = _blocks(np.random.default_rng(1), 100, m, p, q, "tight")
    chosen = plan(pilot[0][:, None], pilot[1][:, None], m, k, alpha)
    assert chosen.coupled
    a, b = _blocks(np.random.default_rng(2), k, m, p, q, "tight")
    coupled = coupled_lower_bound(a, b, chosen.design, alpha)
    n = k * m
    independent = epsilon_lower_bound(one_sided_bounds(int(a.sum()), n, alpha / 2).lower,
                                      one_sided_bounds(int(b.sum()), n, alpha / 2).upper)
    assert coupled > independent + 0.008      # measured: 0.0819 vs 0.0702 (seeds 1, 2)
    assert coupled < 0.1


def test_the_plan_keeps_independent_tests_where_coupling_gains_nothing():
    """Sides as anti-correlated as two indicators can be (a seed that puts
    one side in S puts the other out): the bet's variance exceeds the two
    sides' together, the pilot predicts the two Clopper–Pearson bounds do
    better, and the plan says so."""
    p, q = 0.3, 0.3 / math.e ** 0.1
    pilot = _blocks(np.random.default_rng(4), 200, 64, p, q, "opposite")
    assert not plan(pilot[0][:, None], pilot[1][:, None], 64, 400, 0.1).coupled


def test_truncation_correction_is_the_expected_excess():
    """τ = E[(b − B)⁺] for b ~ Binomial(m, q_max), against the pmf summed
    directly; B has at most the stated tail mass above it."""
    for m, q in ((64, 0.01), (512, 0.3), (512, 0.002)):
        trunc, tau = truncation(m, q)
        k = np.arange(m + 1)
        direct = float((np.maximum(k - trunc, 0) * stats.binom.pmf(k, m, q)).sum())
        assert direct <= tau <= direct * (1 + 1e-8) + 1e-300
        assert stats.binom.sf(trunc, m, q) <= 1e-6


def test_the_capital_falls_as_c_grows():
    rng = np.random.default_rng(3)
    a, b = _blocks(rng, 200, 128, 0.2, 0.18, "tight")
    d = Design(m=128, lam=5.0, trunc=40, tau=1e-9, q_max=0.25, c_max=1.3)
    values = [log_capital(a, b, d, c) for c in np.linspace(1.0, 1.3, 31)]
    assert all(x >= y for x, y in zip(values, values[1:]))


def test_denominator_above_its_ceiling_certifies_nothing():
    """q_max is part of the test: counts whose denominator side is clearly
    above it give 0, however large the ratio looks."""
    a = np.full(100, 60)
    b = np.full(100, 30)            # Q ≈ 0.23, far above q_max = 0.1
    d = Design(m=128, lam=1.0, trunc=30, tau=0.0, q_max=0.1, c_max=3.0)
    assert coupled_lower_bound(a, b, d, 0.1) == 0.0


def test_refuses_a_bet_above_its_cap():
    d = Design(m=10, lam=2.0, trunc=10, tau=0.0, q_max=1.0, c_max=1.5)
    with pytest.raises(ValueError, match="lam"):
        coupled_lower_bound(np.ones(5), np.ones(5), d, 0.1)


def _coupled_audit(seed, jobs=1, trials=60_000):
    return audit_algorithm(build("report-noisy-max3"), ["optimised"], trials=trials,
                           confidence=0.9, seed=seed, jobs=jobs, modes=["black-box"],
                           coupled=True)


def test_a_violation_found_on_coupled_runs_and_reproducible():
    """report-noisy-max releasing its noisy maximum (true ε 0.25 on the
    optimised pair, claim 0.1): a violation from coupled runs at 60 000
    runs a side; the same seed gives the same document for 1 or 2 workers,
    and the reproduce command carries --runs coupled."""
    r1 = _coupled_audit(0)
    r2 = _coupled_audit(0, jobs=2)
    assert r1.verdict == "violation"
    assert 0.1 < r1.epsilon_lower_bound <= 0.25
    d1, d2 = r1.as_dict(), r2.as_dict()
    d1.pop("runtime_seconds"), d2.pop("runtime_seconds")
    assert d1 == d2
    assert "--runs coupled" in r1.command
    (bb,) = d1["attacks"]
    assert bb["bounds"]["bounds_used"] == 1 and bb["coupled"]["blocks"] > 0
    assert r1.results[0].alpha == pytest.approx(0.1)        # one bound takes all of α


def test_cli_coupled_runs_and_refusals(tmp_path):
    out = tmp_path / "r.json"
    r = audit_here(*["run", "report-noisy-max3", "--attack", "optimised", "--mode", "black-box",
                    "--coupled", "--trials", "40000", "--confidence", "0.9", "--quiet",
                    "--json", str(out)], cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "--runs coupled" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["attacks"][0]["bounds"]["method"].startswith("coupled runs")
    bad = audit_here("run", "report-noisy-max3", "--coupled", "--trials", "1000", "--mode",
                     "replay", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "--runs coupled" in bad.stderr


def test_coupled_in_a_suite_and_in_assert_private(tmp_path):
    """`coupled = true` in a suite entry and ``assert_private(coupled=True)``
    run the coupled test and say so in the reproduce command."""
    from audit.testing import assert_private
    cfg = tmp_path / "audit.toml"
    cfg.write_text('trials = 40000\n[[audit]]\nalgorithm = "report-noisy-max3"\n'
                   'attacks = ["optimised"]\nmodes = ["black-box"]\ncoupled = true\n'
                   'expect = "violation"\n')
    r = audit_here("check", "--config", cfg, "--jobs", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    with pytest.raises(AssertionError, match="--runs coupled"):
        assert_private("report-noisy-max3", trials=40_000, attacks="optimised",
                       modes="black-box", coupled=True)
    with pytest.raises(ValueError, match="coupled"):
        assert_private("report-noisy-max3", trials=1000, coupled="yes")


def test_a_rerun_reads_the_coupled_pilots_back_from_the_store(tmp_path):
    """Both pilot stages (the witness's training, then the coupled pilot)
    are kept: a rerun of the same audit with a store gives the same result
    and recomputes no chunk."""
    args = ["run", "svt6", "--pair", "patterns:half-half", "--mode", "black-box", "--coupled",
            "--witness", "on", "--trials", "20000", "--confidence", "0.9", "--store",
            tmp_path / "store", "--json"]
    first = audit_here(*args, tmp_path / "a.json", cwd=tmp_path)
    second = audit_here(*args, tmp_path / "b.json", cwd=tmp_path)
    assert first.returncode == second.returncode, first.stderr + second.stderr
    a = json.loads((tmp_path / "a.json").read_text())["attacks"][0]
    b = json.loads((tmp_path / "b.json").read_text())["attacks"][0]
    assert a["learned_witness"] and a == b
    assert "came from the store" in second.stdout


def test_the_held_out_blocks_count_only_the_chosen_parts():
    """Counting a union's members part by part, every block of a chunk in
    one pass, gives the family's own counts of each block summed (on
    svt34-parallel's half-half pair: value, sequence and part-sequence
    families side by side)."""
    from audit.engine.evidence.coupled import _members_blocks
    from audit.engine.scenarios import scenarios_for
    from algorithms.simulate import simulate
    alg = build("svt34-parallel")
    sc = [s for s in scenarios_for(alg, ["patterns"], search=False, trials=20_000)[0]
          if s.label == "patterns:half-half"][0]
    fam = sc.events
    m = 500
    tr = simulate(alg, sc.losses_a, 6 * m, np.random.default_rng(5),
                  point_rounds=tuple(getattr(fam, "point_rounds", ())))
    obs = tr.observed()
    full = np.stack([np.asarray(fam.count(tr.actions[j * m:(j + 1) * m],
                                          rows_of(obs, slice(j * m, (j + 1) * m))))
                     for j in range(6)])
    rng = np.random.default_rng(1)
    for _ in range(20):
        members = sorted(rng.choice(full.shape[1], size=int(rng.integers(1, 6)), replace=False))
        np.testing.assert_array_equal(_members_blocks(fam, tr.actions, obs, members, m),
                                      full[:, members].sum(axis=1))


def _leaves(fam) -> set:
    parts = getattr(fam, "parts", None)
    return {type(fam).__name__} if parts is None else set().union(*map(_leaves, parts))


def test_every_family_counts_blocks_as_a_count_per_block(monkeypatch):
    """``count_blocks`` (one pass of a family's indicators over a chunk)
    gives exactly ``count`` on each block, for every family coupled audits
    count: actions, joint actions, switches, arm counts, points, releases
    (``ValueEvents``), floating-point grain, code sequences and the learned
    witness — checked on every chunk of three small audits."""
    import audit.engine.evidence.coupled as C
    real, kinds = C.count_blocks, set()

    def checked(fam, actions, points, m):
        got = real(fam, actions, points, m)
        want = np.stack([np.asarray(fam.count(actions[j * m:(j + 1) * m],
                                              rows_of(points, slice(j * m, (j + 1) * m))))
                         for j in range(len(actions) // m)])
        np.testing.assert_array_equal(got, want)
        kinds.update(_leaves(fam))
        return got
    monkeypatch.setattr(C, "count_blocks", checked)
    from tests import as_written_zoo  # noqa: F401 - the float Laplace's module
    for name, attacks in (("tests.as_written_zoo:SniperLaplace", None),
                          ("mutant-noise-tau", ["canary"]), ("private-exp3", ["search"]),
                          ("svt34-parallel", ["patterns"])):
        audit_algorithm(build(name), attacks=attacks, trials=4_000, modes=["black-box"],
                        coupled=True, pairs=None)
    assert {"FloatGrain", "ValueEvents", "Witness", "ActionAt", "JointActionAt",
            "SequenceIs", "CoordinateAbove"} <= kinds, kinds


def _lazy_noise(row_draws: bool):
    """A two-arm learner that draws fresh noise only when some run's noisy
    score crossed zero — a draw whose making depends on the runs' data —
    declaring (falsely, with ``row_draws``) that every draw is a row per
    run."""
    from algorithms import Algorithm, Claim, Learner

    def init(runs, rng):
        return {"s": rng.laplace(0.0, 1.0, runs)}

    def act(state, advice, rng):
        return state, (state["s"] > 0).astype(np.int64)

    def feed(state, actions, losses, rng):
        s = state["s"] + np.asarray(losses)[actions] - 0.5
        if (s > 1.5).any():
            s = s + rng.laplace(0.0, 1.0, len(s))
        return {"s": s}

    return Algorithm("lazy-noise", Learner(init, act, feed, 2),
                     Claim(1.0, 0.0, "actions", "test"), 12, 2, {},
                     extra={"row_draws": row_draws})


def test_the_blocks_probe_checks_a_learners_row_draws_declaration():
    """``blocks_probe`` finds, on the audit's own pair, whether a chunk's
    blocks may run in one call: registered learners whose draws are rows
    ("blocked"), FTPL's resampling of the runs still waiting ("per-block":
    coupled runs would cost a call a block, so the default runs them
    independent), and a user's false ``row_draws`` declaration ("refused":
    not used, said in the result's notes)."""
    from audit.engine.audit import check_blocks, runs_coupled
    from audit.engine.evidence.coupled import blocks_probe
    from audit.engine.scenarios import scenarios_for

    def word(alg):
        sc = [s for s in scenarios_for(alg, None, search=False, events=False)[0]
              if s.algorithm is alg][0]
        return blocks_probe(sc.algorithm, (sc.losses_a, sc.losses_b), sc.advice, sc.rounds), sc
    assert word(build("private-exp3"))[0] == "blocked"
    got, ftpl = word(build("private-ftpl"))
    assert got == "per-block"
    assert not runs_coupled(ftpl, None, {}, check_blocks([ftpl], None, {}))
    assert runs_coupled(ftpl, True, {}, check_blocks([ftpl], True, {}))
    assert word(_lazy_noise(True))[0] == "refused" and word(_lazy_noise(False))[0] == "per-block"
    res = audit_algorithm(_lazy_noise(True), trials=2_000, modes=["black-box"])
    assert any("row_draws" in n and "not used" in n for n in res.notes), res.notes
    assert all(r.kind == "black-box" and not hasattr(r, "block_runs") for r in res.results)


def test_runs_are_coupled_by_default_and_independent_on_request(tmp_path):
    """No flag: coupled runs where they cost no more, and the reproduce
    command says nothing;
    ``--runs independent``: the classic split, said in the command; a suite
    entry's ``runs`` and ``coupled`` keys that disagree, and ``--coupled``
    with ``--runs independent``, are refused in one line (exit 2)."""
    from audit.cli.suite import SuiteError, _runs
    default = audit_algorithm(build("report-noisy-max3"), ["optimised"], trials=4000,
                              confidence=0.9, seed=0, modes=["black-box"])
    assert type(default.results[0]).__name__ == "CoupledTestResult"
    assert "--runs" not in default.command
    apart = audit_algorithm(build("report-noisy-max3"), ["optimised"], trials=4000,
                            confidence=0.9, seed=0, modes=["black-box"], coupled=False)
    assert type(apart.results[0]).__name__ == "EventTestResult"
    assert "--runs independent" in apart.command
    # A learner whose draws depend on its runs' data would pay a call per
    # block: independent by default, coupled when asked; code the audit
    # cannot seed gains nothing from shared seeds.
    from audit.engine.audit import runs_coupled
    from audit.engine.scenarios import scenarios_for
    (svt, *_), _ = scenarios_for(build("tbe-svt"), None, search=False, events=False)
    assert not runs_coupled(svt, None, {}) and runs_coupled(svt, True, {})
    (rnm, *_), _ = scenarios_for(build("report-noisy-max3"), None, search=False, events=False)
    assert runs_coupled(rnm, None, {}) and not runs_coupled(rnm, None, {id(rnm.algorithm): "x"})
    assert _runs({"runs": "independent"}) is False and _runs({}) is None
    assert _runs({"coupled": True}) is True
    with pytest.raises(SuiteError, match="'runs' and 'coupled' disagree"):
        _runs({"runs": "independent", "coupled": True, "algorithm": "laplace"})
    bad = audit_here("run", "laplace", "--coupled", "--runs", "independent", "--trials", "1000",
                     cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--coupled" in bad.stderr


def test_a_family_with_no_events_counts_blocks_of_no_columns():
    """An empty family (a value family whose pilot saw no spread, actions at
    no round) counts (blocks, 0), as ``count`` counts nothing."""
    from attacks.events import ActionAt, Union, count_blocks
    from attacks.values import ValueEvents
    acts = np.zeros((48, 3), dtype=np.int64)
    for fam in (ActionAt((), 2), ValueEvents((), ()), Union((ActionAt((), 2), ActionAt((1,), 2)))):
        got = count_blocks(fam, acts, None, 16)
        assert got.shape == (3, len(fam.labels))


# ------------------------------------------------------------ stopping early
def _sequential(a, b, p, alpha, claim_eps, ends):
    """The early-stopping test as the evidence runs it: read the test of
    plan ``p`` after the first ``ends`` blocks, stop at the first look
    above ``claim_eps``, else read all of them (``plan_lower_bound``'s
    looks)."""
    looks = len(ends) + 1
    for k in ends:
        lb = plan_lower_bound(a[:k], b[:k], p, alpha, 0.0, looks, last=False)
        if lb > claim_eps:
            return lb, k
    return plan_lower_bound(a, b, p, alpha, 0.0, looks, last=True), len(a)


@pytest.mark.parametrize("coupled", [True, False])
@pytest.mark.parametrize("p, q", [(0.3, 0.3 / math.e ** 0.2), (0.01, 0.01 / math.e ** 0.5)])
def test_stopping_at_the_first_look_above_the_truth_keeps_the_level(p, q, coupled):
    """The worst case for a sequential test: it stops as soon as its bound
    passes the *true* ε (a claim exactly at the truth), at seven looks, on
    the bet and on the Clopper–Pearson test of the totals.  Over 1 500
    tests at α = 0.1 the share stopped above ε must be ≤ α (at exactly α,
    more than ``limit`` with probability < 1e-9: binom.sf).  Both tests are
    conservative here (measured: at most 1 of 1 500 above ε, stopped or
    not), so this guards against a gross error in the looks (a level
    multiplied rather than divided, a stop read at the wrong prefix), and
    the bounds must stay near ε (mean within 25 %) so that it is not
    vacuous."""
    from audit.engine.evidence.coupled import LOOKS
    eps = math.log(p / q)
    m, k, reps, alpha = (64 if p > 0.1 else 512), 320, 1500, 0.1
    pilot = _blocks(np.random.default_rng(7), 200, m, p, q, "tight")
    base = plan(pilot[0][:, None], pilot[1][:, None], m, k, alpha)
    pl = Plan(0, False, base.design, 0.0, coupled)
    ends = sorted({max(1, int(k * f)) for f in LOOKS} - {k})
    rng = np.random.default_rng(12)
    over, found = 0, []
    for _ in range(reps):
        a, b = _blocks(rng, k, m, p, q, "tight")
        lb, _ = _sequential(a, b, pl, alpha, eps, ends)
        over += lb > eps + 1e-12
        found.append(lb)
    limit = next(j for j in range(reps) if stats.binom.sf(j, reps, alpha) < 1e-9)
    assert over <= limit
    assert np.mean(found) > 0.75 * eps


def test_the_guard_on_the_denominator_pays_for_the_looks():
    """The guard's Clopper–Pearson bound is taken at α/looks: a denominator
    count that certifies q_max at α alone may not at α/7."""
    d = Design(m=100, lam=2.0, trunc=10, tau=0.0, q_max=0.05, c_max=3.0)
    b = np.full(100, 4)                     # 400 of 10 000: CP upper bound near 0.044
    a = np.full(100, 12)
    at = [coupled_lower_bound(a, b, d, 1e-3, looks=n) for n in (1, 10**6)]
    assert at[0] > 0 and at[1] == 0.0
    with pytest.raises(ValueError, match="looks"):
        coupled_lower_bound(a, b, d, 0.1, looks=0)


def test_run_chunks_stops_at_a_look_the_same_on_any_number_of_workers(tmp_path):
    """Stages end at the looks (in chunks); the first look whose ``stop``
    says yes ends the work there, whoever ran the chunks; with a store, a
    rerun stops at the same chunk."""
    from audit.execution.executor import Executor, run_chunks
    from audit.execution.store import Store

    def task(runs, rng):
        return float(rng.random())

    seen = []

    def stop(results):
        seen.append(len(results))
        return len(results) >= 3

    out1 = run_chunks(task, 10 * 7, 5, jobs=1, chunk=7, looks=[2, 4, 8], stop=stop)
    out2 = run_chunks(task, 10 * 7, 5, jobs=2, chunk=7, looks=[2, 4, 8], stop=stop)
    assert len(out1) == 4 and out1 == out2 and seen == [2, 4, 2, 4]
    full = run_chunks(task, 10 * 7, 5, jobs=1, chunk=7)
    assert out1 == full[:4]
    assert run_chunks(task, 70, 5, chunk=7, looks=[2], stop=lambda r: False) == full
    store = Store(str(tmp_path / "s.sqlite"))
    ex = Executor(1, None, store, "fp")
    first = run_chunks(task, 70, 5, chunk=7, executor=ex, looks=[2, 4, 8], stop=stop, tag="t")
    again = run_chunks(task, 70, 5, chunk=7, executor=Executor(1, None, store, "fp"),
                       looks=[2, 4, 8], stop=stop, tag="t")
    assert first == again == out1


def test_code_as_written_stops_once_the_violation_is_certain():
    """Code run one call per run stops its coupled tests early by default:
    a randomized response claiming half its ε is refuted before the last
    planned block, the result says so (document and notes), and reading
    every block (``stop_early=False``) gives the same verdict at a figure
    at least as large; the same seed stops at the same block on two
    workers."""
    alg = build("tests.as_written_algos:buggy_randomized_response")
    kw = dict(attacks=["optimised"], trials=20_000, confidence=0.9, seed=3, modes=["black-box"])
    r = audit_algorithm(alg, **kw)
    r2 = audit_algorithm(alg, jobs=2, **kw)
    full = audit_algorithm(alg, stop_early=False, **kw)
    (bb,), (bb2,), (ff,) = r.results, r2.results, full.results
    assert r.verdict == full.verdict == "violation"
    assert bb.stopped_early and bb.blocks < bb.planned_blocks and bb.looks == 7
    assert (bb.blocks, bb.epsilon_lower_bound) == (bb2.blocks, bb2.epsilon_lower_bound)
    assert not ff.stopped_early and ff.looks == 0
    assert ff.epsilon_lower_bound >= bb.epsilon_lower_bound * 0.9
    doc = r.as_dict()["attacks"][0]["coupled"]
    assert doc["stopped_early"] and doc["looks"] == 7 and doc["planned_blocks"] > doc["blocks"]
    assert any("sequential test" in n for n in bb.notes)
    assert "--stop-early" not in r.command and "--stop-early off" in full.command


def test_stop_early_refusals(tmp_path):
    for flags, words in ((["--mode", "replay"], "--mode black-box"),
                         (["--runs", "independent"], "drop --runs independent")):
        bad = audit_here("run", "tests.as_written_algos:buggy_randomized_response",
                         "--stop-early", "on", "--trials", "1000", *flags, cwd=tmp_path)
        assert bad.returncode == 2, bad.stderr
        assert bad.stderr.count("\n") == 1 and words in bad.stderr
