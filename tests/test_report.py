"""Reports: self-contained HTML, Markdown with working figure links, the
result document beside them, re-rendering with `audit report`, and sizes that
stay small for long white-box results."""
from __future__ import annotations

import copy
import json
import os
import re

import pytest

from algorithms import build
from audit.engine import audit_algorithm
from audit.engine.regret import regret_curve
from audit.report.render import write_report
from tests.cli import audit_here


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
    assert "max detectable ε" in html and "not a proof of privacy" in html
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
    proc = audit_here("report", paths["json"], "--out", str(out))
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
    proc = audit_here("report", str(path), "--out", str(tmp_path / "out"))
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
    proc = audit_here("run", "private-exp3", "--attack", "canary", "--trials", "20000",
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


# ----------------------------------------------------------------- what a reader sees

def test_pair_shows_the_rounds_and_coordinates_that_differ():
    from audit.report.render import _pair_text
    assert _pair_text("round 1: [1., 0.] vs [1., 1.]") == "round 1, arm 2: 0 vs 1"
    assert _pair_text("round 4: [1., 1.] vs [0., 0.]") == "round 4: arm 1: 1 vs 0, arm 2: 1 vs 0"
    pfb = "round 1: [ 0.,  1.,  0.,  0.,  0., -1.] vs [ 0., -1., -0., -0., -0.,  1.]"
    assert _pair_text(pfb, "coordinate") == \
        "round 1: coordinate 2: 1 vs −1, coordinate 6: −1 vs 1"      # -0 equals 0
    two = "round 3: [1., 0.] vs [0., 0.]; round 9: [0.5, 0.] vs [0.5, 1.] (+2 more rounds)"
    assert _pair_text(two) == "round 3, arm 1: 1 vs 0; round 9, arm 2: 0 vs 1 (+2 more rounds)"
    # anything that does not parse is shown as given (whitespace collapsed), never dropped
    assert _pair_text("swap the\n  first two experts") == "swap the first two experts"
    assert _pair_text(None) == "—"


def test_tables_use_human_labels_and_no_raw_arrays(blackbox_report, whitebox_report):
    for paths, doc in (blackbox_report, whitebox_report):
        html = _read(paths["html"])
        md = _read(paths["md"])
        for text in (html, md):
            for raw in ("dkw band", "dkw_band", "delta lower at claimed epsilon",
                        "delta_point_at_claimed_epsilon", "max_detectable_epsilon"):
                assert raw not in text, raw
            assert not re.search(r"\[\s*-?\d+\.,", text), "a numpy array is printed"
        if any(a.get("kind") == "pld" for a in doc["attacks"]):
            assert "δ lower bound at the claimed ε" in html
        for a in doc["attacks"]:
            if a["mode"] == "black-box" and a.get("pair"):
                assert "round " in a["pair"] and ("arm " in html)


def test_violation_report_says_no_evidence_not_consistent(whitebox_report):
    paths, doc = whitebox_report
    html = _read(paths["html"])
    assert doc["verdict"] == "violation"
    quiet = [a for a in doc["attacks"] if a["verdict"] == "consistent"]
    assert quiet, "the fixture should have an attack that did not exceed the claim"
    assert "NO EVIDENCE (this attack)" in html
    # no per-attack CONSISTENT badge under a VIOLATION banner
    assert not re.search(r'<td class="consistent">', html)
    assert "CONSISTENT" not in html
    assert "Decided by" in html


def test_information_only_badge(whitebox_doc, tmp_path):
    doc = copy.deepcopy(whitebox_doc)
    pr = next(a for a in doc["attacks"] if a.get("kind") == "per-round")
    pr["verdict"] = "information"
    html = _read(write_report(doc, str(tmp_path / "r"))["html"])
    assert "INFORMATION ONLY" in html


def test_per_round_only_violation_names_the_deciding_evidence(whitebox_doc, tmp_path):
    doc = copy.deepcopy(whitebox_doc)
    doc["attacks"] = [a for a in doc["attacks"] if a.get("kind") == "per-round"]
    assert doc["attacks"][0]["verdict"] == "violation"
    doc["epsilon_lower_bound"] = 0.0
    doc["verdict"] = "violation"
    paths = write_report(doc, str(tmp_path / "pr"))
    html = _read(paths["html"])
    banner = html[html.index('<div class="banner violation"'):html.index("<h2>")]
    assert "per-round loss ε_t = " in banner and "(exact)" in banner
    assert "ε lower bound 0 " not in banner
    assert "per-round loss ε_t = " in _read(paths["md"])


def test_points_are_a_dimension_not_arms(blackbox_doc, tmp_path):
    doc = copy.deepcopy(blackbox_doc)
    html = _read(write_report(doc, str(tmp_path / "arms"))["html"])
    assert "arms K" in html and "dimension n" not in html
    doc["algorithm"]["params"]["domain"] = "l1ball"
    html = _read(write_report(doc, str(tmp_path / "pts"))["html"])
    assert "dimension n" in html and "arms K" not in html


def test_resumed_runtime_says_so(blackbox_doc, tmp_path):
    doc = copy.deepcopy(blackbox_doc)
    html = _read(write_report(doc, str(tmp_path / "fresh"))["html"])
    assert "resumed" not in html
    doc["chunks_reused"], doc["chunks_computed"] = 3, 5
    html = _read(write_report(doc, str(tmp_path / "resumed"))["html"])
    assert "resumed: 3 of 8 chunks" in html


def test_engineering_tick_labels():
    from audit.report.figures import eng
    assert [eng(x) for x in (500, 20_000, 100_000, 1_000_000, 2_500_000, 12_500)] == \
        ["500", "20k", "100k", "1M", "2.5M", "12.5k"]
