"""What users see: the concise summary (one line per attack, details under
``-v``), mechanisms in their own words (answers, the relation with its Δ,
output codes named the same way in every event kind), figures for the
integral and recursion evidence, the gallery's index, a stored rerun that
reads back what the audit derived, and ``audit check`` saying how many
chunks came from the store."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from algorithms import build
from algorithms.registry import REGISTRY
from attacks.testers import SequenceIs
from audit.cli.main import main
from audit.engine import audit_algorithm
from audit.engine.words import code_labels, event_label, relation_text, setting
from audit.execution.executor import Executor
from audit.execution.store import Store
from audit.report.figures import stamp_of
from audit.report.gallery import _write_index
from audit.report.render import write_report


# ------------------------------------------------------------------ words

def test_codes_are_one_based_in_every_event_kind_and_named_where_known():
    # A sequence event counts code c at place t; its label is 1-based like
    # I_t = a (code 0 is "1"), so both kinds name a code the same way.
    seq = SequenceIs(((0, 1, 2),), 3)
    assert seq.labels == ["I = (1,2,3)"]
    acts = np.array([[0, 1, 2], [0, 1, 1]])
    assert seq.count(acts).tolist() == [1]
    svt = build("svt1")
    labels = code_labels(svt)
    assert labels == ["⊥", "⊤", "–"]
    assert event_label("I = (1,2,3)", labels) == "I = (⊥⊤–)"
    assert event_label("I_4 = 2", labels) == "I_4 = ⊤"
    assert event_label("I_2 = 1 and I_5 = 2", labels) == "I_2 = ⊥ and I_5 = ⊤"
    assert event_label("#{t in 1..4: I_t = 2} >= 2", labels) == "#{t in 1..4: I_t = ⊤} >= 2"
    assert event_label("I_3 != I_2", labels) == "I_3 != I_2"
    assert event_label("x_1[1] > 0.5", labels) == "x_1[1] > 0.5"
    # A sampled count names the count, not its 1-based code.
    geo = code_labels(build("truncated-geometric"))
    assert event_label("I_1 = 3", geo) == "I_1 = 2"
    # Learners keep their 1-based arms.
    assert code_labels(build("private-exp3")) is None
    assert event_label("I_1 = 2", None) == "I_1 = 2"


def test_mechanisms_and_learners_in_their_own_words():
    svt = build("svt3")
    assert setting(svt) == "a mechanism over 10 answers (one a round), each in [−10, 10]"
    assert setting(build("report-noisy-max1")) == ("a mechanism over 5 answers, each in "
                                                   "[−10, 10]")
    assert relation_text(svt, svt.claim).startswith("bounded-all, Δ = 1 (every answer may "
                                                    "change by at most Δ = 1)")
    exp3 = build("private-exp3")
    assert setting(exp3) == "T = 1,000 rounds, K = 2 arms"
    assert relation_text(exp3, exp3.claim) == "one-round (one round's losses change)"


# ------------------------------------------------------------------ summary

@pytest.fixture(scope="module")
def svt_doc_and_summary():
    """svt1 with its own attacks, small: black-box and exact (integral)."""
    alg = build("svt1")
    result = audit_algorithm(alg, ["patterns"], trials=2000, seed=0)
    return result, result.as_dict()


def test_the_summary_is_one_line_per_attack_and_verbose_adds_the_details(svt_doc_and_summary):
    result, _ = svt_doc_and_summary
    short = result.summary()
    lines = short.splitlines()
    assert lines[0] == f"audit of svt1  ({setting(result.algorithm)})"
    attack_lines = [ln for ln in lines if re.match(r"  patterns\b", ln)]
    assert len(attack_lines) == 1 and "pairs)" in attack_lines[0]
    assert "note:" not in short and "learned witness" not in short
    for jargon in ("row-rounds", "SeedSequence", "shift_bound", "aux", "horizon", "arm",
                   "inner learner", "scope "):
        assert jargon not in short, jargon
    assert "neighbours: bounded-all, Δ = 1" in short
    assert lines[-2].startswith("  VERDICT: ") and lines[-1].startswith("  reproduce: ")
    long = result.summary(verbose=True)
    assert "note:" in long and "declaration checks:" in long
    # every pair and mode, each with its ε_lb
    assert long.count("ε_lb = ") >= len(result.results)
    # the same codes in the summary and the document
    events = [a["event"] for a in result.as_dict()["attacks"] if a["mode"] == "black-box"]
    assert not any(re.search(r"I_\d+ = [0-9]", e) for e in events), events


def test_audit_run_verbose_flag(capsys):
    args = ["run", "private-exp3", "--attack", "canary", "--trials", "2000", "--jobs", "1",
            "--no-store"]
    assert main(args) == 0
    short = capsys.readouterr().out
    assert main(args + ["-v"]) == 0
    long = capsys.readouterr().out
    assert len(short.splitlines()) < len(long.splitlines())
    assert "note: The base learner" in long and "note:" not in short
    assert sum(ln.startswith("  canary") for ln in short.splitlines()) == 1


# ------------------------------------------------------------------ report

def _two_pairs(doc: dict) -> dict:
    """The document with the first pair's black-box and integral entries
    only: one of each kind of figure, drawn in a second, not twenty."""
    first = doc["attacks"][0]["scenario"]
    keep = [a for a in doc["attacks"] if a["scenario"] in (first, f"{first}:integral")]
    return dict(doc, attacks=keep)


@pytest.fixture(scope="module")
def svt_report(svt_doc_and_summary, tmp_path_factory):
    doc = _two_pairs(svt_doc_and_summary[1])
    paths = write_report(doc, str(tmp_path_factory.mktemp("svt1") / "report"))
    return paths, open(paths["html"], encoding="utf-8").read(), doc


def test_mechanism_report_speaks_of_answers(svt_report):
    paths, html, doc = svt_report
    assert doc["algorithm"]["kind"] == "mechanism"
    assert doc["algorithm"]["code_labels"] == ["⊥", "⊤", "–"]
    for word in ("horizon T", "arms K", "Regret", "inner learner", "dimension n"):
        assert word not in html, word
    assert "Mechanism" in html and "answers" in html
    assert "bounded-all, Δ = 1" in html
    assert "ℓ = (" in html                          # the pair's answers as vectors


def test_integral_evidence_has_its_figure(svt_doc_and_summary, svt_report):
    integral = [a for a in svt_doc_and_summary[1]["attacks"] if a.get("kind") == "integral"]
    assert integral and all(a["details"]["certified_outputs"]["rows"] for a in integral)
    row = integral[0]["details"]["certified_outputs"]["rows"][0]
    lo, hi = row["loss"]
    assert lo <= hi and row["log_numerator"][0] <= row["log_numerator"][1]
    paths, html, doc = svt_report
    names = [os.path.basename(p) for p in paths["figures"]]
    assert sum(n.endswith("-integral.png") for n in names) == 1
    assert html.count("<img ") == len(paths["figures"])


def test_numbers_sampled_and_noisy_max_integral_figures(tmp_path):
    """Alg 3 (released numbers, sampled) and report-noisy-max (the index,
    enumerated; the value on a grid): each gets its certified outputs and
    its figure."""
    for name in ("svt3", "report-noisy-max1", "report-noisy-max3"):
        alg = build(name)
        doc = audit_algorithm(alg, ["patterns"], trials=400, seed=0, modes=["integral"]).as_dict()
        rows = [a["details"].get("certified_outputs") for a in doc["attacks"]]
        assert rows and all(r and r["rows"] for r in rows), name
        paths = write_report(dict(doc, attacks=doc["attacks"][:1]), str(tmp_path / name))
        assert sum(p.endswith("-integral.png") for p in paths["figures"]) == 1, name


def test_recursion_evidence_draws_both_sides(tmp_path):
    alg = build("tbe-adaptive-n2", horizon=12)
    doc = audit_algorithm(alg, ["tbe-first-round"], trials=200, seed=0,
                          modes=["recursion"]).as_dict()
    rec = [a for a in doc["attacks"] if a.get("kind") == "recursion"]
    assert rec
    d = rec[0]["details"]
    assert len(d["log_p_numerator_by_end"]) == len(d["ends"]) == len(d["log_p_denominator_by_end"])
    paths = write_report(doc, str(tmp_path / "rec"))
    assert any(p.endswith("-recursion.png") for p in paths["figures"])


def test_rerendering_reuses_figures_that_would_come_out_the_same(svt_doc_and_summary, tmp_path):
    doc = _two_pairs(svt_doc_and_summary[1])
    first = write_report(doc, str(tmp_path / "r"))
    stamps = {p: stamp_of(p) for p in first["figures"]}
    assert all(stamps.values())
    mtimes = {p: os.stat(p).st_mtime_ns for p in first["figures"]}
    again = write_report(doc, str(tmp_path / "r"))
    assert again["figures"] == first["figures"]
    assert {p: os.stat(p).st_mtime_ns for p in again["figures"]} == mtimes
    changed = dict(doc, claim=dict(doc["claim"], epsilon=0.2))
    third = write_report(changed, str(tmp_path / "r"))
    assert all(stamp_of(p) != stamps[p] for p in third["figures"] if p in stamps
               and "regret" not in p)


def test_reproduce_box_wraps_between_arguments_only(svt_report):
    _, html, _ = svt_report
    pre = re.search(r"pre\{[^}]*\}", html).group(0)
    assert "break-all" not in pre and "word-break:normal" in pre


# ------------------------------------------------------------------ gallery

def test_gallery_index_lists_learners_and_mechanisms_apart(tmp_path):
    def row(name, kind, verdict="consistent", error=None):
        doc = None if error else {"verdict": verdict, "epsilon_lower_bound": 0.1,
                                  "claim": {"epsilon": 1.0, "delta": 0.0, "output": "x"},
                                  "attacks": []}
        return {"name": name, "kind": kind, "summary": name, "true_epsilon": 0.5,
                "doc": doc, "error": error}
    rows = [row("exp3", "learner", "violation"), row("svt1", "mechanism"),
            row("svt3", "mechanism", error="RuntimeError: boom")]
    _write_index(str(tmp_path), rows, 1000, 0, 12.0, registered=len(REGISTRY))
    text = (tmp_path / "README.md").read_text()
    assert "## Algorithms (1)" in text and "## Mechanisms (2)" in text
    assert f"3 of the {len(REGISTRY)} registered entries" in text
    assert "`svt3`" in text and "**ERROR**" in text
    n_mech = sum(1 for e in REGISTRY if build(e).learner.reads_first)
    assert n_mech >= 20          # the gallery covers them (build_gallery loops the registry)


def test_the_kept_gallery_is_light_and_its_links_resolve():
    """The repository keeps the gallery's index, each report's Markdown and
    its figures — at most 20 MB in all (``audit gallery`` writes the HTML
    and result.json on demand; .gitignore leaves them out) — and every link
    of the index and every figure a report shows is there."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "reports"
    kept = [p for p in root.rglob("*") if p.suffix in (".md", ".png")]
    assert sum(p.stat().st_size for p in kept) <= 20e6
    ignored = (root.parent / ".gitignore").read_text().split()
    assert "reports/*/report.html" in ignored and "reports/*/result.json" in ignored
    index = (root / "README.md").read_text()
    links = re.findall(r"\]\(([\w.-]+/report\.md)\)", index)
    assert len(links) >= 50 and all((root / link).exists() for link in links)
    for link in links:
        report = root / link
        for fig in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", report.read_text()):
            assert (report.parent / fig).exists(), (link, fig)


# ------------------------------------------------------------------ store

def test_a_stored_rerun_reads_back_results_and_counts_every_chunk(tmp_path):
    alg = build("private-exp3", horizon=60)
    path = str(tmp_path / "store.sqlite")
    runs = []
    for _ in range(2):
        with Store(path) as store:
            ex = Executor(jobs=1, store=store)
            runs.append(audit_algorithm(alg, ["canary", "search"], trials=4000, seed=2,
                                        executor=ex, coupled=False))
    first, second = runs
    assert first.as_dict()["attacks"] == second.as_dict()["attacks"]
    assert second.summary() == first.summary()
    assert second.chunks_computed == 0 and second.chunks_reused > 0
    assert second.chunks_reused == first.chunks_computed - _witness_chunks(first)
    with Store(path) as store:
        assert store.count_chunks() == second.chunks_reused


def _witness_chunks(result) -> int:
    """Training runs are never stored: 2 sides × ⌈runs/10000⌉ a witness."""
    return sum(2 * -(-r.witness["training_runs_per_side"][0] // 10000)
               for r in result.results if getattr(r, "witness", None))


def test_audit_check_says_how_many_chunks_came_from_the_store(tmp_path, capsys):
    suite = tmp_path / "audit.toml"
    suite.write_text('trials = 2000\n[[audit]]\nalgorithm = "private-exp3"\n'
                     'attacks = ["canary"]\nmodes = ["black-box"]\n')
    args = ["check", "--config", str(suite), "--store", str(tmp_path / "s.sqlite"),
            "--jobs", "1"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    second = capsys.readouterr().out
    assert re.search(r"store: 0 of \d+ chunks came from", first), first
    m = re.search(r"store: (\d+) of (\d+) chunks came from .* \(every audit resumed\)", second)
    assert m and m.group(1) == m.group(2) != "0", second


def test_a_whole_output_observed_at_the_end_is_shown_alone_in_its_events():
    """A function's whole output is observed at its last round; the codes
    of the rounds before are padding, so an event on the sequence of codes
    shows the output alone (it read like nine releases of the first code
    before the real one)."""
    from audit.engine.words import event_label, final_output
    labels = ["('a', 'b')", "('c', 'd')"]
    assert event_label("I = (1,1,2)", labels, final=True) == "output = ('c', 'd')"
    assert event_label("I = (1,1,2)", labels) == "I = (('a', 'b'),('a', 'b'),('c', 'd'))"
    assert final_output(build("tests.as_written_algos:noisy_argmax"))
    assert not final_output(build("tests.as_written_algos:laplace_stream"))
