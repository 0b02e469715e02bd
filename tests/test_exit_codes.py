"""Exit codes (SPEC §5), one meaning each, through the installed ``audit``
command: 0 consistent, 1 violation, 2 bad input or a user's algorithm that
raises or breaks the interface, 3 an internal error (one line naming a
traceback file).  Every error is exactly one line on stderr, never a
traceback.  Also the README's "Writing your own algorithm" example, run as
printed, and ``audit check`` with an entry whose audit cannot run."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def audit_command() -> list[str]:
    """The installed ``audit`` (next to this interpreter, else on PATH), else
    ``python -m audit.cli``."""
    beside = Path(sys.executable).parent / "audit"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("audit")
    return [found] if found else [sys.executable, "-m", "audit.cli"]


def run_audit(*args, cwd=ROOT, env=None, timeout=300) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*audit_command(), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=timeout)


def one_error_line(r: subprocess.CompletedProcess) -> str:
    """stderr is exactly one line and holds no traceback; returns it."""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


FAST = ["--quiet", "--no-store"]


def test_exit_0_consistent():
    """A correct Algorithm 1 audited with the canary (fixed seed) is
    consistent: exit 0, nothing on stderr."""
    r = run_audit("run", "private-exp3", "--attack", "canary", "--trials", 20000,
                  "--mode", "black-box", *FAST)
    assert r.returncode == 0, r.stderr
    assert "VERDICT: consistent" in r.stdout and r.stderr == ""


def test_exit_1_violation():
    """A mutant whose batch sum is fed instead of the mean (true ε = τε = 1
    against the claim 0.25) is caught by the canary at this fixed seed with a
    wide margin: exit 1, nothing on stderr."""
    r = run_audit("run", "mutant-batch-sum", "--attack", "canary", "--trials", 20000,
                  "--mode", "black-box", *FAST)
    assert r.returncode == 1, r.stderr
    assert "VERDICT: VIOLATION" in r.stdout and r.stderr == ""


@pytest.mark.parametrize("args,word", [
    (["run", "private-exp3", "--trials", "0"], "--trials"),
    (["run", "private-exp3", "--seed", "-1"], "--seed"),
    (["run", "private-exp3", "--confidence", "0.3"], "--confidence"),
    (["run", "no-such-algorithm"], "unknown algorithm 'no-such-algorithm'"),
    (["run", "private-exp3", "--param", "tau=abc"], "--param tau=abc"),
    (["check", "--config", "no-such-suite.toml"], "no-such-suite.toml"),
    ([], "a command is required"),
])
def test_exit_2_bad_input(args, word):
    """Bad flags, names and files: exit 2, one line naming what was wrong."""
    r = run_audit(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_error_line(r)
    assert line.startswith("audit: error: ") and word in line, line


@pytest.mark.parametrize("algo,words", [
    ("raises_at_round_3", ["act() at round 3", "raised ValueError", "boom at the third round"]),
    ("feed_raises", ["feed() at round 1", "raised KeyError"]),
    ("init_raises", ["init()", "raised ZeroDivisionError"]),
])
def test_exit_2_user_algorithm_raises(algo, words):
    """A user's algorithm that raises: exit 2, one line naming the algorithm,
    the function and the round."""
    r = run_audit("run", f"tests.user_algos:{algo}", "--horizon", 20, "--trials", 2000, *FAST)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_error_line(r)
    assert f"tests.user_algos:{algo}: your " in line
    for w in words:
        assert w in line, line


def test_exit_2_user_algorithm_raises_inside_the_simulation_workers():
    """An exception at round 10 (after the interface check's rounds) is raised
    in the worker processes of the simulation; it still comes back as one
    line naming act() and round 10, its two-line message joined.  (Its own
    attack only: the neighbour search's pilot would meet round 10 first, in
    this process.)"""
    r = run_audit("run", "tests.user_algos:raises_late", "--horizon", 20, "--trials", 40000,
                  "--attack", "first-round", "--jobs", 2, *FAST)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_error_line(r)
    assert "your act() at round 10 raised RuntimeError: late failure second line" in line, line


def test_exit_2_user_hook_raises_outside_a_learner_call():
    """An exception escaping from the user's own code that the engine calls
    directly (here the algorithm's check_losses hook) is the user's, not an
    internal error: exit 2, one line naming the function."""
    r = run_audit("run", "tests.user_algos:bad_loss_hook", "--horizon", 20, "--trials", 2000,
                  *FAST)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert one_error_line(r) == ("audit: error: tests.user_algos:bad_loss_hook: your "
                                 "check_losses() raised TypeError: my loss check is broken")


@pytest.mark.parametrize("algo,words", [
    ("wrong_shape", ["act() at round 1", "returned actions of shape (3,), expected (5,)"]),
    ("float_actions", ["act() at round 1", "dtype float64", "expected integers"]),
    ("not_a_tuple", ["act() at round 1", "must return (state, actions)"]),
    ("out_of_range", ["act() at round 1", "outside [0, 2)"]),
    ("init_not_dict", ["init()", "must return the state as a dict, got list"]),
    ("feed_not_dict", ["feed() at round 1", "dict, got NoneType"]),
    ("bad_probs", ["probs() at round 1", "summing to 0.9"]),
    ("bad_point", ["point() at round 1", "non-finite"]),
    ("bad_incurred", ["incurred() at round 1", "shape (1,), expected (5,)"]),
])
def test_exit_2_interface_broken(algo, words):
    """A user's algorithm that breaks the interface contract (wrong shape,
    float actions, not a tuple, out-of-range arms, a state that is not a dict,
    probabilities that do not sum to 1, NaN points, a wrong-shaped loss):
    exit 2, one line naming the function and the round."""
    r = run_audit("run", f"tests.user_algos:{algo}", "--horizon", 20, "--trials", 2000, *FAST)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_error_line(r)
    for w in words:
        assert w in line, line
    assert r.stdout == ""


def _sitecustomize(tmp_path, body: str) -> dict:
    """An environment whose interpreter runs ``body`` at start-up (a
    ``sitecustomize`` on PYTHONPATH), writing traceback files under tmp."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(body))
    tb = tmp_path / "tb"
    tb.mkdir()
    return {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "TMPDIR": str(tb)}


BROKEN_ENGINE = """
    import audit.engine.audit

    def audit_algorithm(*args, **kwargs):
        raise RuntimeError("simulated bug in the engine")

    audit.engine.audit_algorithm = audit_algorithm
"""


def _traceback_file(line: str) -> Path:
    m = re.search(r"traceback in (\S+?\.txt)", line)
    assert m, line
    return Path(m.group(1))


def test_exit_3_internal_error(tmp_path):
    """A bug of the tool (here the engine raises RuntimeError): exit 3, one
    line naming the exception and a file that exists and holds the full
    traceback."""
    env = _sitecustomize(tmp_path, BROKEN_ENGINE)
    r = run_audit("run", "private-exp3", "--trials", 2000, *FAST, env=env)
    assert r.returncode == 3, (r.stdout, r.stderr)
    line = one_error_line(r)
    assert line.startswith("audit: internal error: RuntimeError: simulated bug in the engine")
    assert "please report it" in line
    path = _traceback_file(line)
    assert path.exists() and path.parent == tmp_path / "tb"
    text = path.read_text()
    assert "Traceback (most recent call last)" in text and "simulated bug in the engine" in text


def test_exit_3_when_a_built_in_algorithm_raises(tmp_path):
    """A registered algorithm whose act() raises is the tool's bug, not bad
    input: exit 3 with a traceback file, while the same learner given as
    package.module:attribute is the user's (exit 2, tested above)."""
    env = _sitecustomize(tmp_path, """
        import dataclasses
        from algorithms import registry
        from tests import user_algos

        def factory(T, K, epsilon=1.0, **params):
            return user_algos.raises_at_round_3(T, K, None, epsilon)

        entry = registry.REGISTRY["private-exp3"]
        registry.REGISTRY["private-exp3"] = dataclasses.replace(entry, factory=factory)
    """)
    r = run_audit("run", "private-exp3", "--attack", "first-round", "--horizon", 20,
                  "--trials", 2000, *FAST, env=env)
    assert r.returncode == 3, (r.stdout, r.stderr)
    line = one_error_line(r)
    assert "internal error: private-exp3 (built in): act() at round 3 raised ValueError" in line
    assert _traceback_file(line).exists()


def _readme_example():
    text = (ROOT / "docs" / "your-algorithm.md").read_text()
    section = text[text.index("## Worked example: a bandit learner"):]
    section = section[:section.index("\n## ", 3)]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    commands = re.findall(r"`(audit (?:run|regret) mypkg\.greedy:make[^`]*)`", section)
    return code, commands


def test_readme_example_runs_as_printed(tmp_path):
    """The README's own algorithm, saved as mypkg/greedy.py (as its first
    line says) and run with the commands printed next to it, from the folder
    holding mypkg: regret exits 0; both audits (ε from --epsilon, and from
    --claim-epsilon) find the violation the README promises (exit 1).  Budgets
    are reduced with extra flags only."""
    code, commands = _readme_example()
    assert code.startswith("# mypkg/greedy.py")
    assert {"audit regret mypkg.greedy:make --epsilon 1", "audit run mypkg.greedy:make --epsilon 1",
            "audit run mypkg.greedy:make --claim-epsilon 1"} <= set(commands), commands
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "greedy.py").write_text(code)
    for command in sorted(set(commands)):
        args = command.split()[1:]
        # The violation is wide (ε_lb ≈ 4.3 against ε = 1 at 2 000 runs a
        # side, seed 0): the small budget the documentation's tests use.
        extra = ["--runs", "200"] if args[0] == "regret" else ["--trials", "2000", *FAST]
        r = run_audit(*args, *extra, cwd=tmp_path)
        assert r.stderr == "", (command, r.stderr)
        if args[0] == "regret":
            assert r.returncode == 0 and "regret:" in r.stdout, command
        else:
            assert r.returncode == 1 and "VERDICT: VIOLATION" in r.stdout, (command, r.stdout)
            assert "claim: ε = 1," in r.stdout
    r = run_audit("run", "mypkg.greedy:make", "--trials", 2000, *FAST, cwd=tmp_path)
    assert r.returncode == 2
    assert one_error_line(r) == ("audit: error: mypkg.greedy:make: its factory needs epsilon: "
                                 "pass --epsilon E (the ε it is built with) or --claim-epsilon E")


GOOD = """
    [[audit]]
    algorithm = "private-exp3"
    attacks = ["canary"]
    modes = ["black-box"]
    horizon = 100
"""
RAISES = """
    [[audit]]
    name = "raises"
    algorithm = "tests.user_algos:raises_at_round_3"
    horizon = 20
"""
UNMET = """
    [[audit]]
    name = "unmet"
    algorithm = "private-exp3"
    attacks = ["canary"]
    modes = ["black-box"]
    horizon = 100
    expect = "violation"
"""


def _check(tmp_path, body, env=None):
    cfg = tmp_path / "audit.toml"
    cfg.write_text("trials = 20000\n" + textwrap.dedent(body))
    junit = tmp_path / "j.xml"
    r = run_audit("check", "--config", cfg, "--junit", junit, "--jobs", 1, "--no-store",
                  env=env)
    return r, ET.parse(junit).getroot()


def test_check_error_entry_is_an_error_not_a_failure(tmp_path):
    """An entry whose user algorithm raises is an ERROR (table, JUnit <error>
    with the one-line reason and the exception's type, errors="1",
    failures="0"); the entry after it still runs; the exit code is 2."""
    r, suite = _check(tmp_path, RAISES + GOOD)
    assert r.returncode == 2, r.stdout + r.stderr
    assert suite.get("errors") == "1" and suite.get("failures") == "0"
    raises, good = suite.findall("testcase")
    error = raises.find("error")
    assert error is not None and error.get("type") == "UserCodeError"
    assert "your act() at round 3 raised ValueError" in error.get("message")
    assert good.find("error") is None and good.find("failure") is None
    assert "VERDICT: consistent" in good.find("system-out").text
    assert re.search(r"raises\s+-\s+-\s+ERROR\s+consistent\s+ERROR", r.stdout), r.stdout
    assert "ERROR raises: tests.user_algos:raises_at_round_3: your act() at round 3" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_check_unmet_expectation_wins_over_an_error(tmp_path):
    """An expectation not met and an erroring entry: exit 1 (the leak, or the
    missed known bug, matters most), with one failure and one error."""
    r, suite = _check(tmp_path, RAISES + UNMET)
    assert r.returncode == 1, r.stdout + r.stderr
    assert suite.get("errors") == "1" and suite.get("failures") == "1"


def test_check_internal_error_exits_3(tmp_path):
    """Entries that hit a bug of the tool are errors too, and the suite exits
    3, each error naming its traceback file."""
    env = _sitecustomize(tmp_path, BROKEN_ENGINE)
    r, suite = _check(tmp_path, GOOD + RAISES, env=env)
    assert r.returncode == 3, r.stdout + r.stderr
    assert suite.get("errors") == "2"
    for case in suite.findall("testcase"):
        message = case.find("error").get("message")
        assert message.startswith("internal error: RuntimeError: simulated bug in the engine")
        assert _traceback_file(message).exists()


# -- signals: 130 for Ctrl-C, 143 for SIGTERM, one line, the same clean-up -------

class _StrayTerm(Exception):
    """Raised by this test's own SIGTERM handler: main did not install its own."""


@pytest.fixture
def own_sigterm_handler():
    """A SIGTERM handler of the test's own while ``main`` runs in-process (so a
    missing handler in ``main`` fails the test instead of killing pytest);
    ``main`` must put it back when it returns."""
    import signal

    def stray(signum, frame):
        raise _StrayTerm()
    previous = signal.signal(signal.SIGTERM, stray)
    yield stray
    signal.signal(signal.SIGTERM, previous)


def _signal_during(monkeypatch, module, attr, sig):
    """Replace ``module.attr`` by a function that sends ``sig`` to this
    process and then waits for it to arrive."""
    import signal
    import time

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), sig)
        for _ in range(500):
            time.sleep(0.01)
        raise AssertionError(f"{signal.Signals(sig).name} never arrived")
    monkeypatch.setattr(module, attr, interrupted)


@pytest.mark.parametrize("sig,code,words", [("SIGTERM", 143, "interrupted (SIGTERM)"),
                                            ("SIGINT", 130, "interrupted;")])
def test_run_interrupted_by_a_signal_exits_128_plus_its_number(monkeypatch, capsys, tmp_path,
                                                               own_sigterm_handler, sig, code,
                                                               words):
    import signal
    import audit.engine
    from audit.cli.main import main
    _signal_during(monkeypatch, audit.engine, "audit_algorithm", getattr(signal, sig))
    # Ctrl-C as a terminal delivers it: Python's own handler.  A process
    # started in the background of a shell without job control (a CI runner
    # under nohup) inherits SIGINT ignored, and the signal would never arrive.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    store = tmp_path / "s.sqlite"
    try:
        code_seen = main(["run", "private-exp3", "--attack", "canary", "--trials", "2000",
                          "--jobs", "1", "--store", str(store)])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code_seen == code
    err = capsys.readouterr().err
    assert err.startswith("audit: interrupted") and err.count("\n") == 1, err
    assert err.count("audit: interrupted") == 1
    assert words in err and f"completed chunks are kept in {store}" in err
    assert signal.getsignal(signal.SIGTERM) is own_sigterm_handler


def test_check_terminated_exits_143_with_one_line(monkeypatch, capsys, tmp_path,
                                                  own_sigterm_handler):
    import signal
    import audit.cli.suite
    from audit.cli.main import main
    (tmp_path / "audit.toml").write_text('[[audit]]\nalgorithm = "private-exp3"\n')
    _signal_during(monkeypatch, audit.cli.suite, "run_suite", signal.SIGTERM)
    assert main(["check", "--config", str(tmp_path / "audit.toml"), "--no-store"]) == 143
    err = capsys.readouterr().err
    assert err == "audit: interrupted (SIGTERM)\n", err
    assert signal.getsignal(signal.SIGTERM) is own_sigterm_handler


STUCK = '''
import hashlib, os
import numpy as np

class Stuck:
    """A learner whose first choice sits in one long C call (a solver's
    stand-in: key stretching, no signal checks) after writing a marker."""
    claim_epsilon = 1.0

    def __init__(self, n_arms=2, horizon=4):
        self.k = n_arms

    def select_arm(self):
        open(os.environ["STUCK_MARKER"], "w").close()
        hashlib.pbkdf2_hmac("sha256", b"x", b"y", 2 ** 31 - 1)
        return int(np.random.randint(self.k))

    def update(self, arm, reward):
        pass
'''


def test_sigterm_stops_an_audit_stuck_in_a_c_call_of_the_algorithms_code(tmp_path):
    """SIGTERM while the algorithm's code sits in one long C call (which runs
    no Python signal handler until it returns — here for hours): the command
    ends within the grace period with 143 and one line saying why."""
    import signal
    import time
    from audit.cli.common import TERM_GRACE
    (tmp_path / "stuckmod.py").write_text(STUCK)
    marker = tmp_path / "marker"
    env = {**os.environ, "STUCK_MARKER": str(marker)}
    proc = subprocess.Popen([*audit_command(), "run", "stuckmod:Stuck", "--no-store",
                             "--jobs", "1", "--trials", "2000"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), proc.communicate(timeout=5)
        time.sleep(0.5)                 # inside the C call
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=TERM_GRACE + 20)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert took < TERM_GRACE + 10, took
    assert err.count("audit: interrupted (SIGTERM)") == 1, err
    assert "did not return to Python" in err and "Traceback" not in err
