"""The JAX backend (``--backend jax``) on the CPU: the learners written for
both backends run the same law there (event frequencies agree with numpy's),
a blocked generator draws block j from block j's key exactly as a call per
block does, and audits on it keep their verdicts and name the backend.

JAX is an optional dependency (``.[jax]``); CI installs it, and there a
missing JAX fails these tests instead of skipping them.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

if not os.environ.get("CI"):
    pytest.importorskip("jax")

from algorithms import build  # noqa: E402
from algorithms.backend import (BackendUnavailable, DeviceGenerator, on_backend,  # noqa: E402
                                supports)
from algorithms.simulate import simulate  # noqa: E402
from audit.execution.blocks import BlockedGenerator  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args):
    p = subprocess.run([sys.executable, "-m", "audit.cli", "run", *args, "--quiet", "--no-store"],
                       capture_output=True, text=True, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def _losses(alg, seed=1):
    return np.random.default_rng(seed).random((alg.horizon, alg.n_arms)).round(0) \
        if alg.check_losses is None else None


@pytest.mark.parametrize("name", ["private-exp3", "mutant-overlap", "svt1", "binary-counter"])
def test_blocked_draws_on_jax_are_each_blocks_own(name):
    """Coupled runs on JAX: one call on four blocks gives, block for block,
    what a call on each block's generator alone gives (a deterministic
    identity: no error probability)."""
    alg = on_backend(build(name), "jax")
    T = min(alg.horizon, 24)
    losses = np.random.default_rng(3).random((alg.horizon, alg.n_arms))
    if name in ("svt1", "binary-counter"):
        losses = np.random.default_rng(3).integers(0, 2, (alg.horizon, 1)).astype(float)
    advice = None
    if alg.needs_advice:
        advice = np.random.default_rng(4).dirichlet(np.ones(alg.n_arms),
                                                    size=(alg.horizon, alg.n_experts))
    seeds = [np.random.SeedSequence([9, j]) for j in range(4)]
    m = 50
    whole = simulate(alg, losses, 4 * m, BlockedGenerator(seeds, m), advice=advice, rounds=T,
                     point_rounds=range(T) if alg.learner.point else ())
    for j, s in enumerate(seeds):
        one = simulate(alg, losses, m, np.random.default_rng(s), advice=advice, rounds=T,
                       point_rounds=range(T) if alg.learner.point else ())
        np.testing.assert_array_equal(whole.actions[j * m:(j + 1) * m], one.actions)
        for t, x in (one.points or {}).items():
            np.testing.assert_array_equal(whole.points[t][j * m:(j + 1) * m], x)


def _two_proportion_z(a, b, n):
    p = (a + b) / (2 * n)
    return 0.0 if p in (0, 1) else (a - b) / math.sqrt(2 * n * p * (1 - p))


# Each comparison: |z| > 5.5 has probability < 4e-8 under equal frequencies
# (normal approximation at these counts); 4 algorithms × up to 24 rounds ×
# a few codes, about 400 comparisons: a false failure < 2e-5 overall.
Z_LIMIT = 5.5


@pytest.mark.parametrize("name", ["private-exp3", "ldp-exp4", "svt1", "report-noisy-max1"])
def test_event_frequencies_agree_with_numpy(name):
    """The same learner on both backends: for every round and every code,
    the frequency of 'code at round t' over 40 000 independent runs a side
    agrees within Z_LIMIT standard errors."""
    alg = build(name)
    T = min(alg.horizon, 24)
    rng = np.random.default_rng(5)
    losses = rng.random((alg.horizon, alg.n_arms))
    if name == "svt1":
        losses = rng.integers(0, 2, (alg.horizon, 1)).astype(float)
    if name == "report-noisy-max1":
        losses = rng.integers(0, 3, (alg.horizon, alg.n_arms)).astype(float)
    advice = None
    if alg.needs_advice:
        advice = rng.dirichlet(np.ones(alg.n_arms), size=(alg.horizon, alg.n_experts))
    n = 40_000
    a = simulate(alg, losses, n, np.random.default_rng(11), advice=advice, rounds=T).actions
    b = simulate(on_backend(alg, "jax"), losses, n, np.random.default_rng(12), advice=advice,
                 rounds=T).actions
    worst = 0.0
    for t in range(T):
        for code in range(alg.learner.n_arms):
            z = _two_proportion_z(int((a[:, t] == code).sum()), int((b[:, t] == code).sum()), n)
            worst = max(worst, abs(z))
    assert worst < Z_LIMIT, (name, worst)


def test_laplace_and_svt1_consistent_on_jax_and_the_result_names_the_backend(tmp_path):
    for name, attack in (("laplace", "patterns"), ("svt1", "patterns")):
        out = tmp_path / f"{name}.json"
        rc, stdout, stderr = _run(name, "--backend", "jax", "--trials", "20000", "--attack",
                                  attack, "--mode", "black-box", "--json", str(out))
        assert rc == 0, stdout + stderr
        doc = json.loads(out.read_text())
        assert doc["verdict"] == "consistent"
        assert doc["backend"]["name"] == "jax" and doc["backend"]["device"].startswith("cpu")
        assert "--backend jax" in doc["reproduce"]
        if name == "laplace":   # power, not only silence: the true ε is 0.1
            assert doc["epsilon_lower_bound"] > 0.05


def test_quick_start_consistent_and_a_mutant_violated_on_jax(tmp_path):
    out = tmp_path / "q.json"
    rc, stdout, stderr = _run("private-exp3", "--epsilon", "0.5", "--backend", "jax",
                              "--attack", "canary", "--trials", "20000", "--json", str(out))
    assert rc == 0, stdout + stderr
    doc = json.loads(out.read_text())
    canary = [a for a in doc["attacks"] if a["mode"] == "black-box"]
    assert canary and canary[0]["epsilon_lower_bound"] > 0.3
    rc, stdout, stderr = _run("mutant-batch-sum", "--backend", "jax", "--attack", "canary",
                              "--mode", "black-box", "--trials", "20000")
    assert rc == 1, stdout + stderr
    assert "VIOLATION" in stdout


def test_exp3_claim_violated_with_its_black_box_tests_on_jax():
    rc, stdout, stderr = _run("exp3", "--backend", "jax", "--trials", "4000")
    assert rc == 1, stdout + stderr


def test_same_seed_same_result_on_jax(tmp_path):
    docs = []
    for k in range(2):
        out = tmp_path / f"r{k}.json"
        rc, stdout, stderr = _run("noisy-hist1", "--backend", "jax", "--trials", "6000",
                                  "--attack", "patterns", "--mode", "black-box", "--json",
                                  str(out), "--jobs", str(1 + k))
        assert rc == 0, stdout + stderr
        docs.append(json.loads(out.read_text()))
    assert [a["counts"] for a in docs[0]["attacks"]] == [a["counts"] for a in docs[1]["attacks"]]


def test_numpy_only_learners_are_refused_in_one_line():
    assert not supports(build("tbe-lazy"), "jax")
    rc, stdout, stderr = _run("tbe-lazy", "--backend", "jax", "--trials", "1000")
    assert rc == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "--backend jax" in lines[0] and "numpy only" in lines[0]


def test_missing_jax_is_named(monkeypatch):
    import algorithms.backend as B
    monkeypatch.setattr(B, "_JAX", None)
    monkeypatch.setitem(sys.modules, "jax", None)   # import jax then raises ImportError
    with pytest.raises(BackendUnavailable, match=r"--backend jax: JAX is not installed"):
        B.check_backend("jax")


def test_device_generator_draws_have_numpy_shapes_and_laws():
    """A smoke check of each method's shape and first moment (50 000 draws:
    each mean within 6 standard errors, probability < 2e-9 of a false
    failure each)."""
    g = DeviceGenerator.from_numpy(np.random.default_rng(0))
    n = 50_000
    checks = [(g.random(n), 0.5, math.sqrt(1 / 12)),
              (g.uniform(2.0, 4.0, n), 3.0, 2 * math.sqrt(1 / 12)),
              (g.normal(1.0, 2.0, n), 1.0, 2.0),
              (g.laplace(0.0, 3.0, n), 0.0, 3 * math.sqrt(2)),
              (g.exponential(2.0, n), 2.0, 2.0),
              (g.gumbel(0.0, 1.0, n), 0.5772156649, math.pi / math.sqrt(6)),
              (g.integers(1, 7, size=n), 3.5, math.sqrt(35 / 12))]
    for x, mean, sd in checks:
        x = np.asarray(x)
        assert x.shape == (n,)
        assert abs(x.mean() - mean) < 6 * sd / math.sqrt(n)
    assert np.asarray(g.laplace(np.zeros((3, 1)), 1.0, (3, 4))).shape == (3, 4)
    with pytest.raises(NotImplementedError, match="rng.permutation"):
        g.permutation(4)


def test_larger_chunks_on_a_device_keep_blocks_whole_and_the_verdict(monkeypatch):
    """The GPU's larger chunks (``Placement.chunk_scale``, 100 there) forced
    to 3 on the CPU: coupled blocks stay whole (a chunk not a multiple of
    the block would raise), and the audit still finds the Laplace's leak
    and keeps its verdict."""
    from audit.engine import audit as A
    from audit.engine import audit_algorithm
    monkeypatch.setattr(A.Placement, "chunk_scale", property(lambda self: 3))
    r = audit_algorithm(build("laplace"), ["patterns"], trials=20000, modes=["black-box"],
                        backend="jax")
    assert r.verdict == "consistent" and r.epsilon_lower_bound > 0.05
    assert r.backend["name"] == "jax"
