"""The result document is strict JSON (``audit.jsondoc``): +∞ → "inf",
−∞ → "-inf", NaN → null, written in one place, read back as documented;
``audit report``, the store and ``audit history --json`` keep working."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from audit import jsondoc


def strict(text: str):
    """A parser that refuses the NaN/Infinity tokens (RFC 8259)."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


def _nan_to_none(x):
    if isinstance(x, dict):
        return {k: _nan_to_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_nan_to_none(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def test_the_convention_round_trips():
    doc = {"a": math.inf, "b": -math.inf, "c": math.nan, "d": [1.5, np.float64(np.inf)],
           "e": np.array([0.0, -np.inf, np.nan]), "f": (np.int64(3), np.bool_(True)),
           "g": "text", "h": None, "i": {"j": [np.float32(2.5)]}}
    text = jsondoc.dumps(doc)
    raw = strict(text)
    assert raw["a"] == "inf" and raw["b"] == "-inf" and raw["c"] is None
    assert raw["e"] == [0.0, "-inf", None] and raw["f"] == [3, True]
    back = jsondoc.loads(text)
    assert back == {"a": math.inf, "b": -math.inf, "c": None, "d": [1.5, math.inf],
                    "e": [0.0, -math.inf, None], "f": [3, True], "g": "text", "h": None,
                    "i": {"j": [2.5]}}
    # Documents of earlier versions (NaN/Infinity tokens) are still read.
    assert jsondoc.loads('{"x": Infinity, "y": -Infinity}') == {"x": math.inf, "y": -math.inf}


def test_svt5_integral_document_is_strict_json(tmp_path, capsys):
    """``audit run svt5 --mode integral --json``: no NaN/Infinity token (a strict
    parser reads it), the infinite ε lower bound is "inf", and reading it back
    gives the in-memory document with NaN as None; ``audit report`` renders it
    and rewrites it strictly."""
    from audit.cli.main import main
    from audit.cli.report import load_result
    out = tmp_path / "svt5.json"
    assert main(["run", "svt5", "--mode", "integral", "--trials", "2000", "--jobs", "1",
                 "--no-store", "--quiet", "--json", str(out)]) == 1
    text = out.read_text()
    assert not re.search(r"\bNaN\b|\bInfinity\b", text)
    raw = strict(text)
    assert raw["epsilon_lower_bound"] == "inf"
    assert any(a["epsilon_lower_bound"] == "inf" for a in raw["attacks"])
    assert "null" in text                   # losses of outputs impossible on one side
    doc = load_result(str(out))
    assert doc["epsilon_lower_bound"] == math.inf
    assert doc == jsondoc.loads(text)
    assert jsondoc.dumps(doc, indent=2) == jsondoc.dumps(strict(text), indent=2)
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 0
    again = (tmp_path / "rep" / "result.json").read_text()
    assert not re.search(r"\bNaN\b|\bInfinity\b", again)
    assert jsondoc.loads(again) == doc
    assert "∞" in (tmp_path / "rep" / "report.md").read_text()
    capsys.readouterr()


def test_the_store_and_history_keep_strict_json(tmp_path, capsys):
    """The store keeps the document in the same representation; history rows
    and ``audit history --json`` read infinities back."""
    from algorithms import build
    from audit.cli.main import main
    from audit.engine import audit_algorithm
    from audit.execution.store import Store
    res = audit_algorithm(build("svt5"), ["patterns"], trials=200, modes=["integral"])
    assert res.epsilon_lower_bound == math.inf
    path = str(tmp_path / "store.sqlite")
    with Store(path) as store:
        rid = store.record_audit(res, None, git=(None, None))
        kept = store._db.execute("SELECT result FROM audits WHERE id = ?", (rid,)).fetchone()[0]
        assert strict(kept)["epsilon_lower_bound"] == "inf"
        assert store.result_document(rid) == _nan_to_none(
            jsondoc.loads(jsondoc.dumps(res.as_dict())))
        assert store.history()[0]["epsilon_lower_bound"] == math.inf
    capsys.readouterr()
    assert main(["history", "--store", path, "--json"]) == 0
    rows = strict(capsys.readouterr().out)["audits"]
    assert rows[0]["epsilon_lower_bound"] == "inf"


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_no_path_writes_a_non_finite_token(value, tmp_path):
    from audit.cli.common import write_json_atomic
    p = tmp_path / "x.json"
    write_json_atomic(str(p), {"v": value, "w": [value], "z": {"k": np.float64(value)}})
    strict(p.read_text())
