"""`audit check`, JUnit output and the pytest helper."""
from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET

import pytest

from audit.testing import assert_private
from tests.cli import audit_here


def _check(tmp_path, toml: str, *extra):
    cfg = tmp_path / "audit.toml"
    cfg.write_text(textwrap.dedent(toml))
    return audit_here("check", "--config", cfg, "--jobs", "1", *extra, cwd=tmp_path)


FAST_OK = """
    trials = 20000
    [[audit]]
    algorithm = "private-exp3"
    attacks = ["canary"]
    modes = ["black-box"]
"""


def test_all_consistent_exits_0_and_writes_junit(tmp_path):
    junit = tmp_path / "j.xml"
    r = _check(tmp_path, FAST_OK + """
    [[audit]]
    name = "bug"
    algorithm = "mutant-batch-sum"
    attacks = ["canary"]
    modes = ["black-box"]
    expect = "violation"
    """, "--junit", str(junit))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "family-wise false-alarm probability ≤ 0.05" in r.stdout
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "2" and suite.get("failures") == "0"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["private-exp3", "bug"]
    assert all(c.find("failure") is None for c in cases)


def test_unexpected_violation_exits_1(tmp_path):
    junit = tmp_path / "j.xml"
    r = _check(tmp_path, """
    trials = 20000
    [[audit]]
    algorithm = "mutant-batch-sum"
    attacks = ["canary"]
    modes = ["black-box"]
    """, "--junit", str(junit))
    assert r.returncode == 1
    assert "UNEXPECTED VIOLATION" in r.stdout
    failure = ET.parse(junit).getroot().find("testcase/failure")
    assert failure is not None and "reproduce: audit run mutant-batch-sum" in failure.text


def test_expected_violation_not_reproduced_exits_1(tmp_path):
    r = _check(tmp_path, """
    trials = 20000
    [[audit]]
    algorithm = "private-exp3"
    attacks = ["canary"]
    modes = ["black-box"]
    expect = "violation"
    """)
    assert r.returncode == 1
    assert "EXPECTED VIOLATION NOT REPRODUCED" in r.stdout


@pytest.mark.parametrize("toml,word", [
    ("[[audit]\nalgorithm = 'x'", "malformed TOML"),
    ("[[audit]]\nalgorithm = 'private-exp3'\ncolour = 'red'", "unknown key 'colour'"),
    ("flavour = 1\n[[audit]]\nalgorithm = 'private-exp3'", "unknown key 'flavour'"),
    ("[[audit]]\nalgorithm = 'no-such-algo'", "audit[0]"),
    ("[[audit]]\nalgorithm = 'private-exp3'\nexpect = 'maybe'", "key 'expect'"),
    ("[[audit]]\nepsilon = 1", "key 'algorithm' is required"),
    ("[[audit]]\nalgorithm = 'private-exp3'\ncoupled = 'yes'", "key 'coupled'"),
])
def test_malformed_suites_exit_2_with_one_line(tmp_path, toml, word):
    r = _check(tmp_path, toml)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "audit.toml" in lines[0], r.stderr


def test_suite_read_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.audit]
        trials = 10000
        [[tool.audit.audit]]
        algorithm = "private-exp3"
        attacks = ["canary"]
        modes = ["black-box"]
    """))
    r = audit_here("check", "--jobs", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "from pyproject.toml" in r.stdout


def test_assert_private_passes_for_correct_and_fails_for_mutant():
    assert_private("private-exp3", epsilon=1.0, trials=20_000, attacks=["canary"],
                   modes=["black-box"])
    with pytest.raises(AssertionError) as info:
        assert_private("mutant-batch-sum", trials=50_000, attacks=["canary"], modes=["black-box"])
    text = str(info.value)
    assert "privacy claim violated" in text and "VIOLATION" in text
    assert "reproduce: audit run mutant-batch-sum" in text


def test_budget_scale_option(pytester):
    pytester.makepyfile("""
        import pytest
        from audit.testing import assert_private, _SCALE

        @pytest.mark.privacy_audit
        def test_scaled():
            assert _SCALE["value"] == 0.01
            r = assert_private("private-exp3", epsilon=1.0, trials=100_000, attacks=["canary"],
                               modes=["black-box"])
            assert r.trials == 1000
    """)
    result = pytester.runpytest_subprocess("--audit-scale", "0.01", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
