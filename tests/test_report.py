"""Reports: self-contained HTML, Markdown with working figure links, the
result document beside them, re-rendering with `audit report`, and sizes that
stay small for long white-box results."""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys

import pytest

from algorithms import build
from audit.engine import audit_algorithm
from audit.regret import regret_curve
from audit.report import write_report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "audit.cli", *args], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=300)


@pytest.fixture(scope="module")
def blackbox_doc():
    alg = build("private-exp3", horizon=200)
    result = audit_algorithm(alg, ["canary"], trials=4000, seed=1)
    result.regret = regret_curve(alg, runs=50, seed=1)
    return result.as_dict()


@pytest.fixture(scope="module")
def whitebox_doc():
    alg = build("exp3", horizon=20_000)
    result = audit_algorithm(alg, ["g1"], trials=1000, seed=0)
    result.regret = regret_curve(alg, runs=20, seed=0)
    return result.as_dict()


@pytest.fixture(scope="module")
def blackbox_report(blackbox_doc, tmp_path_factory):
    out = tmp_path_factory.mktemp("bb")
    return write_report(blackbox_doc, str(out / "report")), blackbox_doc


@pytest.fixture(scope="module")
def whitebox_report(whitebox_doc, tmp_path_factory):
    out = tmp_path_factory.mktemp("wb")
    return write_report(whitebox_doc, str(out / "report")), whitebox_doc


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _check_html_self_contained(html):
    imgs = re.findall(r"<img\b[^>]*>", html)
    assert imgs, "no figures embedded"
    for tag in imgs:
        src = re.search(r'src="([^"]*)"', tag).group(1)
        assert src.startswith("data:image/png;base64,"), src[:60]
    # nothing is fetched from elsewhere: no external scripts, styles or links to load
    assert not re.search(r"<(script|link|iframe)\b", html)
    assert not re.search(r'\b(src|href)="(?!data:)', html)


def _check_md_links(md_path):
    md = _read(md_path)
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert links, "report.md references no figures"
    for rel in links:
        assert not rel.startswith(("/", "http:", "https:", "data:")), rel
        target = os.path.join(os.path.dirname(md_path), rel)
        assert os.path.isfile(target), rel
        with open(target, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n", rel
    return links


def test_blackbox_report_renders(blackbox_report):
    paths, doc = blackbox_report
    for key in ("html", "md", "json"):
        assert os.path.isfile(paths[key])
    assert paths["figures"] and all(os.path.isfile(p) for p in paths["figures"])
    html = _read(paths["html"])
    _check_html_self_contained(html)
    assert "CONSISTENT" in html and doc["verdict"] == "consistent"
    assert "replaced" in html and "legitimate" in html       # the canary's note
    assert doc["reproduce"].replace("'", "&#x27;") in html
    assert "max_detectable_epsilon" in html and "not a proof of privacy" in html
    assert "Regret" in html
    links = _check_md_links(paths["md"])
    assert len(links) == len(paths["figures"])
    md = _read(paths["md"])
    assert "replaced" in md and doc["reproduce"] in md
    with open(paths["json"]) as fh:
        assert json.load(fh) == json.loads(json.dumps(doc))
    # nothing half-written left behind
    assert not [n for n in os.listdir(os.path.dirname(paths["html"])) if ".tmp" in n]


def test_whitebox_report_has_every_figure(whitebox_report):
    paths, doc = whitebox_report
    kinds = {a.get("kind") for a in doc["attacks"] if a["mode"] == "white-box"}
    assert {"per-round", "search", "pld"} <= kinds
    names = [os.path.basename(p) for p in paths["figures"]]
    for kind in ("per-round", "search", "pld"):
        assert any(n.endswith(f"-{kind}.png") for n in names), (kind, names)
    assert any(n.endswith("-bb.png") for n in names) and "fig-00-regret.png" in names
    html = _read(paths["html"])
    _check_html_self_contained(html)
    assert html.count("<img ") == len(paths["figures"])
    assert "VIOLATION" in html and doc["verdict"] == "violation"
    assert "certificate with no statistical error" in html
    assert doc["reproduce"] in html
    _check_md_links(paths["md"])


def test_text_is_escaped_and_rerendering_replaces_stale_figures(blackbox_doc, tmp_path):
    doc = copy.deepcopy(blackbox_doc)
    doc["attacks"][0]["notes"].append('<script>alert("x")</script> & <b>bold</b>')
    doc["algorithm"]["params"]["label"] = "<img src=x>"
    out = tmp_path / "r"
    first = write_report(doc, str(out))
    html = _read(first["html"])
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img src=x>" not in html
    _check_html_self_contained(html)
    # re-render a smaller document into the same folder: old figures go away
    doc["attacks"] = doc["attacks"][:1]
    doc["regret"] = None
    second = write_report(doc, str(out))
    pngs = sorted(n for n in os.listdir(out) if n.endswith(".png"))
    assert pngs == sorted(os.path.basename(p) for p in second["figures"])
    assert len(pngs) < len(first["figures"])


def test_write_report_rejects_malformed_documents(tmp_path):
    with pytest.raises(ValueError, match="lacks"):
        write_report({"schema": "audit-result/1"}, str(tmp_path / "x"))
    assert not (tmp_path / "x" / "report.html").exists()


def test_audit_report_rerenders_without_rerunning(blackbox_report, tmp_path):
    paths, doc = blackbox_report
    out = tmp_path / "again"
    proc = _cli("report", paths["json"], "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    html = _read(out / "report.html")
    _check_html_self_contained(html)
    assert "replaced" in html
    # same document, so the same runtime: nothing was re-run
    with open(out / "result.json") as fh:
        assert json.load(fh)["runtime_seconds"] == doc["runtime_seconds"]
    _check_md_links(str(out / "report.md"))


@pytest.mark.parametrize("content, name", [
    (None, "missing.json"),
    ("this is not json {", "bad.json"),
    (json.dumps({"schema": "something-else/3", "attacks": []}), "other.json"),
    (json.dumps([1, 2, 3]), "list.json"),
    (json.dumps({"schema": "audit-result/1"}), "empty.json"),
])
def test_audit_report_bad_input_exits_2(tmp_path, content, name):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    proc = _cli("report", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "report.html").exists()


def test_million_round_whitebox_report_stays_small(tmp_path):
    result = audit_algorithm(build("exp3", horizon=1_000_000), modes=["per-round"], trials=1000)
    doc = result.as_dict()
    assert doc["attacks"][0]["details"]["horizon"] == 1_000_000
    paths = write_report(doc, str(tmp_path / "big"))
    assert os.path.getsize(paths["html"]) < 3_000_000
    assert any(p.endswith("-per-round.png") for p in paths["figures"])
    _check_html_self_contained(_read(paths["html"]))


def test_figures_thin_overlong_series(whitebox_doc, tmp_path):
    """A document carrying full-length curves (not downsampled) still gives
    small figures: every series is thinned before plotting."""
    doc = copy.deepcopy(whitebox_doc)
    for a in doc["attacks"]:
        d = a.get("details") or {}
        if a.get("kind") == "per-round":
            for key in ("epsilon_t", "p_arm2", "p_prime_arm2"):
                d[key] = (d[key] * 100)[:200_000]
            d["horizon"] = 200_000
        if a.get("kind") == "search":
            d["cumulative_loss"] = (d["cumulative_loss"] * 100)[:200_000]
    paths = write_report(doc, str(tmp_path / "long"))
    assert os.path.getsize(paths["html"]) < 3_000_000


def test_audit_run_with_report(tmp_path):
    out = tmp_path / "run"
    proc = _cli("run", "private-exp3", "--attack", "canary", "--trials", "20000",
                "--report", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    for name in ("report.html", "report.md", "result.json"):
        assert (out / name).is_file(), name
    html = _read(out / "report.html")
    _check_html_self_contained(html)
    assert "replaced" in html and "audit run private-exp3" in html
    with open(out / "result.json") as fh:
        doc = json.load(fh)
    assert doc["schema"] == "audit-result/1" and doc["regret"] is not None
    _check_md_links(str(out / "report.md"))
