"""The command line's polish: help text stating every default, descriptions,
``--version``, ``audit list`` (aligned columns, default attacks, white-box
modes; ``--attacks``), attack refusal and de-duplication, ``--quiet``, and
the progress reporter (``audit.execution.progress``)."""
import argparse
import dataclasses
import io
import json
import re

import pytest

from audit import __version__
from audit.cli.main import build_parser, main
from audit.execution.progress import Reporter, reporting, active

COMMANDS = ("list", "run", "check", "history", "regret", "report", "gallery", "store")


def _subparsers(parser, prefix=()):
    """(command path, parser) for every subcommand, nested ones included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix + (name,), sub
                yield from _subparsers(sub, prefix + (name,))


def _help(parser, action) -> str:
    return parser._get_formatter()._expand_help(action) if action.help else ""


def test_every_subcommand_has_a_description():
    found = dict(_subparsers(build_parser()))
    assert {path[0] for path in found} == set(COMMANDS)
    assert ("store", "info") in found and ("store", "prune") in found
    for path, sub in found.items():
        assert sub.description and len(sub.description) > 20, path


def test_every_flag_states_its_default():
    checked = 0
    for path, sub in _subparsers(build_parser()):
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            text = _help(sub, action)
            where = (path, action.dest)
            assert text, where
            if not action.option_strings:
                continue
            assert "(default:" in text or "(required" in text, where
            d = action.default
            if d not in (None, False, [], argparse.SUPPRESS):
                assert f"default: {d}" in text, (where, text)
            checked += 1
    assert checked > 40


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"audit {__version__}"


def test_help_exits_0(capsys):
    assert main(["run", "--help"]) == 0
    assert "--quiet" in capsys.readouterr().out


def _rows(out: str, header: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(header))
    end = lines.index("", start)
    return [line for line in lines[start:end] if "source:" not in line]


def test_list_columns_stay_aligned_for_long_names(monkeypatch, capsys):
    from algorithms import registry
    long = "an-algorithm-with-a-much-longer-name-than-any-built-in"
    entry = dataclasses.replace(registry.REGISTRY["exp3"], name=long)
    monkeypatch.setitem(registry.REGISTRY, long, entry)
    assert main(["list"]) == 0
    rows = _rows(capsys.readouterr().out, "algorithm")
    header = rows[0]
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", header)][1:]
    assert len(starts) == 7
    for row in rows[1:]:
        for s in starts:
            assert row[s - 2:s] == "  " and row[s] != " ", (row, s)
    by_name = {row.split()[0]: row for row in rows[1:]}
    assert long in by_name
    cols = lambda name: [by_name[name][s:].split("  ")[0] for s in starts]   # noqa: E731
    assert cols("exp3")[2:5] == ["one-round", "g1, search", "per-round, search, pld"]
    assert cols("private-exp3")[3:5] == ["canary, first-round, batch-edge, search", "pld"]
    assert cols("tbe-lazy")[4] == "-"
    assert cols("private-exp3")[5] == "numpy, jax" and cols("tbe-lazy")[5] == "numpy"
    # Sparse vectors (alone or two in parallel) and report-noisy-max declare
    # their model: integral applies, whatever their scope; their code's
    # Laplace or exponential draws are traced too (replay).
    for name in ("svt1", "svt2", "svt3", "svt4", "svt5", "svt6", "numerical-svt",
                 "svt34-parallel", "report-noisy-max1", "report-noisy-max2",
                 "report-noisy-max3", "report-noisy-max4"):
        assert cols(name)[4] == "integral, replay", name
    # The optimised pair joins the patterns where the exact pair ε falls short on them.
    assert cols("svt1")[3] == "patterns, optimised, search"
    assert cols("svt3")[3] == "patterns, search"


def test_run_help_names_every_mode(capsys):
    from audit.engine.evidence import MODES
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    mode_help = text.split("--mode MODE")[-1].split("--witness")[0]   # the option, not the usage
    assert "integral" in mode_help
    for m in MODES:
        assert m in mode_help, m


def test_list_attacks_says_what_each_needs_and_where_it_applies(capsys):
    assert main(["list", "--attacks"]) == 0
    out = capsys.readouterr().out
    blocks = dict(re.findall(r"^  (\S+): .*?\n((?:    .*\n)+)", out, flags=re.M))
    canary = " ".join(blocks["canary"].split())
    assert "needs: a conversion whose claim holds for every base learner" in canary
    applies = canary.split("applies to: ")[1].split(", ")
    assert "private-exp3" in applies and "exp3" not in applies
    assert "needs: a learner with K = 2 arms" in " ".join(blocks["g1"].split())
    first = " ".join(blocks["first-round"].split())
    assert "needs: a learner that takes one loss per arm" in first and "svt1" not in first
    # PRIVATEBANDIT's loss rows are functions: it refuses first-round's pairs
    assert "exp3" in first and "pfb-gaussian" not in first
    assert "applies to every registered algorithm" not in " ".join(blocks["patterns"].split())
    assert "svt1" in " ".join(blocks["patterns"].split())


def test_an_attack_that_does_not_apply_is_refused_before_any_simulation(capsys, monkeypatch):
    import audit.engine.sampling
    monkeypatch.setattr(audit.engine.sampling, "run_chunks", None)  # any sampling would fail
    assert main(["run", "exp3", "--attack", "canary", "--no-store"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("audit: error: --attack canary: attack canary applies only")
    assert main(["run", "exp3", "--attack", "nope", "--no-store"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--attack 'nope': unknown attack" in err


def test_a_repeated_attack_runs_once(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["run", "private-exp3", "--attack", "canary", "--attack", "first-round",
                 "--attack", "canary", "--trials", "1000", "--jobs", "1", "--mode",
                 "black-box", "--no-store", "--quiet", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [a["name"] for a in doc["attacks"]] == ["canary", "first-round"]
    assert doc["reproduce"].count("--attack canary") == 1


RUN = ["run", "private-exp3", "--attack", "canary", "--trials", "2000", "--jobs", "1",
       "--no-store"]


def test_quiet_prints_only_the_verdict_line_and_the_reproduce_command(capsys):
    assert main([*RUN, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("VERDICT: consistent — private-exp3: "), lines
    assert "claim: ε = 1, δ = 0" in lines[0]
    assert lines[1].startswith("  reproduce: audit run private-exp3 --attack canary")


def test_progress_lines_for_a_log(capsys):
    """stderr is not a terminal under capture: every phase ends with a plain
    line, the summary is on stdout."""
    assert main(RUN) == 0
    captured = capsys.readouterr()
    assert "VERDICT: consistent" in captured.out and "reproduce:" in captured.out
    lines = captured.err.splitlines()
    assert "audit: declaration pilots done (1/1 scenarios)" in lines[0]
    assert any(re.match(r"audit: black-box canary done \(1600/1600 runs\) in \d+\.\d s$", line)
               for line in lines), lines
    assert any(line.startswith("audit: white-box pld canary done") for line in lines), lines
    assert all(line.startswith("audit: ") for line in lines)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_are_rate_limited_with_an_estimate_and_a_final_line():
    clock, stream = Clock(), io.StringIO()
    reporter = Reporter(stream=stream, tty=False, interval=5.0, clock=clock)
    with reporter.phase("black-box canary", 200000) as phase:
        for done in range(0, 200001, 10000):
            phase.to(done)
            clock.now += 0.75
    lines = stream.getvalue().splitlines()
    # 15 s of work: a line at ≥ 1 s (a slow phase shows at once), then at
    # ≥ 5 s after it (6 s, 11 s), then the final line.
    assert len(lines) == 4, lines
    assert re.fullmatch(r"audit: black-box canary \d+% \(\d+/200000 runs\), \d+\.\d s elapsed, "
                        r"~\d+\.\d s left", lines[0]), lines[0]
    assert lines[0].startswith("audit: black-box canary 10% (20000/200000 runs), 1.5 s elapsed")
    assert lines[1].startswith("audit: black-box canary 45% (90000/200000 runs), 6.8 s elapsed")
    assert lines[-1] == "audit: black-box canary done (200000/200000 runs) in 15.8 s"


def test_no_final_line_after_an_error_and_nothing_when_silent():
    stream = io.StringIO()
    reporter = Reporter(stream=stream, tty=False)
    with pytest.raises(KeyboardInterrupt):
        with reporter.phase("x", 10) as phase:
            phase.update(3)
            raise KeyboardInterrupt
    assert stream.getvalue() == ""
    quiet = Reporter(enabled=False, stream=stream, tty=True, interval=0)
    with quiet.phase("x", 10) as phase:
        phase.update(10)
    assert stream.getvalue() == ""


def test_a_terminal_gets_a_tqdm_bar():
    stream = io.StringIO()
    reporter = Reporter(stream=stream, tty=True, bar_delay=0)
    with reporter.phase("black-box canary", 100) as phase:
        phase.update(100)
    text = stream.getvalue()
    assert "audit: black-box canary" in text and "|" in text and "\r" in text
    assert "done" not in text   # the bar is cleared, no plain lines


def test_progress_does_not_change_the_result():
    from algorithms import build
    from audit.engine import audit_algorithm
    alg = build("private-exp3")
    plain = audit_algorithm(alg, ["canary"], trials=4000, seed=3).as_dict()
    stream = io.StringIO()
    with reporting(Reporter(stream=stream, tty=False, interval=0)):
        assert active() is not None
        shown = audit_algorithm(alg, ["canary"], trials=4000, seed=3).as_dict()
    assert "audit: black-box canary" in stream.getvalue()
    plain.pop("runtime_seconds")
    shown.pop("runtime_seconds")
    assert json.dumps(plain, default=float) == json.dumps(shown, default=float)


def test_data_independent_output_is_flagged_by_list_and_run(monkeypatch, capsys):
    """An algorithm whose factory says its played output does not depend on
    the losses (``extra["data_independent"]``: private-batched-exp4 at
    T = 1000, where Theorem 4.5's γ caps at 1) gets one warning line under
    its row in ``audit list`` and one on stderr from ``audit run``, before
    the audit (with --quiet, the only line there).  No registered default
    is flagged.  Deterministic: the run's verdict is not asserted (exit 0 or
    1), only its warning."""
    from algorithms import registry
    assert main(["list"]) == 0
    assert "warning:" not in capsys.readouterr().out
    entry = dataclasses.replace(registry.REGISTRY["private-batched-exp4"],
                                name="exp4-at-1000", horizon=1000)
    monkeypatch.setitem(registry.REGISTRY, "exp4-at-1000", entry)
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(i for i, line in enumerate(out) if line.split()[:1] == ["exp4-at-1000"])
    warnings = [line for line in out if "warning:" in line]
    assert warnings == [out[row + 2]] and "source:" in out[row + 1]
    assert "private-batched-exp4: at these parameters what it plays does not depend" in warnings[0]
    assert "capped at 1" in warnings[0]
    assert main(["run", "private-batched-exp4", "--horizon", "1000", "--attack", "batch-edge",
                 "--trials", "200", "--mode", "black-box", "--jobs", "1", "--no-store",
                 "--quiet"]) in (0, 1)
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("audit: warning: private-batched-exp4: at these parameters")


# -- misspelt names: the closest ones are suggested --------------------------

@pytest.mark.parametrize("argv,start,suggested", [
    (["run", "svt7", "--no-store"], "unknown algorithm 'svt7'; did you mean ", ["svt1", "svt2"]),
    (["regret", "privat-exp3"], "unknown algorithm 'privat-exp3'; did you mean ",
     ["private-exp3"]),
    (["list", "mutant-batchsum"], "unknown algorithm 'mutant-batchsum'; did you mean ",
     ["mutant-batch-sum"]),
    (["run", "exp3", "--attack", "canery", "--no-store"],
     "--attack 'canery': unknown attack; did you mean ", ["canary"]),
    (["run", "exp3", "--mode", "blackbox", "--no-store"],
     "--mode 'blackbox': unknown mode; did you mean ", ["black-box"]),
])
def test_a_misspelt_name_suggests_the_closest(capsys, argv, start, suggested):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"audit: error: {start}"), err
    offered = err[len(f"audit: error: {start}"):].split("?")[0].split(", ")
    assert offered[:len(suggested)] == suggested and len(offered) <= 3, offered


def test_a_name_close_to_nothing_suggests_nothing(capsys):
    assert main(["run", "xyzzy", "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "did you mean" not in err and "unknown algorithm 'xyzzy'" in err
    assert "see 'audit list'" in err and "package.module:attribute" in err
    assert main(["run", "exp3", "--attack", "qqq", "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "did you mean" not in err and "choose from: g1, canary" in err


def test_a_suite_entry_with_a_misspelt_name_or_mode(tmp_path, capsys):
    suite = tmp_path / "audit.toml"
    suite.write_text('[[audit]]\nalgorithm = "mutant-batchsum"\n')
    assert main(["check", "--config", str(suite), "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "audit[0] (mutant-batchsum): unknown algorithm 'mutant-batchsum'; did you mean " \
           "mutant-batch-sum" in err
    suite.write_text('[[audit]]\nalgorithm = "exp3"\nmodes = ["pdl"]\n')
    assert main(["check", "--config", str(suite), "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "unknown mode 'pdl'; did you mean pld? (choose from: black-box" in err


def test_closest_names_in_order():
    from algorithms.suggest import closest, did_you_mean
    names = ["svt1", "svt2", "svt3", "laplace", "g1"]
    assert closest("svt7", names) == ["svt1", "svt2", "svt3"]   # equally close: given order
    assert closest("SVT2", names)[0] == "svt2"                   # case ignored, exact first
    assert closest("g2", names) == ["g1"]
    assert closest("zzzz", names) == [] and did_you_mean("zzzz", names) == ""
    assert did_you_mean("laplase", names) == "; did you mean laplace?"
