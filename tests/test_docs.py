"""Every example in README.md and docs/*.md runs, at a small budget.

The convention for code blocks in the documentation
---------------------------------------------------

* A ```` ```bash ```` block is a list of shell commands, one a line (text after
  ``#`` is a comment).  Every line must start with ``audit `` or ``python ``;
  such a block is run, line by line, in order.
* A ```` ```python ```` block whose first line is a comment naming a path
  (``# mypkg/greedy.py``) defines a module: it is written to that path.  So is
  any other block (e.g. ```` ```toml ````) whose first line is ``# NAME.toml``.
  Every module defined anywhere in README.md or docs/ is written before the
  commands of any file run, so one page may use a module another defines
  (``mypkg.hedge`` from docs/your-algorithm.md in docs/ci.md).
* Any other ```` ```python ```` block is run: with pytest when it defines a
  ``test_`` function (``--audit-scale 0.01``), else as a script.
* An HTML comment on the line right before a block annotates it, as
  ``key: value`` pairs separated by ``;``:

  - ``<!-- exit: 1 -->``: every command of the block must exit with this code
    (default 0);
  - ``<!-- budget: --horizon 3000 -->``: flags set (replaced, or appended)
    on every ``audit run`` of the block, on top of the default small budget
    below;
  - ``<!-- not run: REASON -->``: the block is not run (installs, needs a
    cluster, is not a command).  A bash or python block that cannot be run
    (a line not starting with ``audit ``/``python ``) must carry this marker
    with a non-empty reason; the test fails otherwise.

  Output blocks (```` ``` ```` with no language, or ```` ```text ````) and
  other languages (toml, yaml) are never run.

Small budgets (the documentation prints the real ones):

* ``audit run``: ``--trials 2000``; ``audit regret``: ``--runs 200``;
  ``audit check``: ``--scale 0.02`` (50 000 → 1 000 runs per side); all
  three with ``--jobs 1`` (the test runs beside others on every core: a
  pool of workers per command would only add its start-up);
* ``audit gallery --out DIR`` becomes the same code (``build_gallery``)
  restricted to one algorithm at 1 000 runs per side;
* ``python benchmarks/X.py`` runs from the repository root with the small
  arguments in ``BENCHMARK_ARGS``.

Each documentation file runs in its own temporary directory with its own
store (``AUDIT_STORE``).  A command must exit with the expected code and
never print a traceback.  ``audit`` lines run inside the test process
(``tests.cli.audit_here``: the ``main`` the installed command calls, in
that directory and store), which spares each a second of importing; the
installed command itself is tested as a process in test_exit_codes.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli import audit_here

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN_PREFIXES = ("audit ", "python ")
SMALL = {"run": {"--trials": "2000", "--jobs": "1"}, "regret": {"--runs": "200", "--jobs": "1"},
         "check": {"--scale": "0.02", "--jobs": "1"}}
BENCHMARK_ARGS = {
    "throughput.py": ["--runs", "2000", "--horizon", "100", "--jobs", "1", "--only", "exp3"],
    "replay.py": ["--only", "scaled coin"],
    "reexecution.py": ["--only", "truncated geometric"],
    "tightness.py": ["--cases", "1:2000", "--jobs", "1"],
    "distributed.py": ["--trials", "10000", "--repeat", "1"],
    "whitebox_validity.py": ["--seeds", "1", "--trials", "200", "--jobs", "1"],
    "power.py": ["--trials", "2000", "--jobs", "1", "--factors", "2", "--algorithms", "tbe-lazy"],
    "tbe_adaptive_horizon.py": ["--grids", "501", "--certified-grid", "501"],
    "testers.py": ["--trials", "2000", "--seconds", "2", "--jobs", "1",
                   "--only", "laplace,report-noisy-max1"],
    "bug_zoo.py": ["--trials", "2000", "--jobs", "1", "--only", "shared-noise-counter"],
    "traced.py": ["--only", "laplace_sum"],
    "as_written_zoo.py": ["--only", "rr_choices_bug", "--time", "10"],
}
GALLERY = ("from audit.report.gallery import build_gallery; "
           "build_gallery({out!r}, trials=1000, jobs=1, names=['laplace'])")
QUICK_START = ("python3 -m venv .venv && . .venv/bin/activate && pip install . && "
               "audit run private-exp3 --epsilon 0.5 --report report")
TEST_COMMAND = ("python3 -m venv .venv && . .venv/bin/activate && pip install -q '.[test,dask,jax]' "
                "&& python -m pytest -q")


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    text: str
    notes: dict = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    @property
    def module_path(self):
        first = self.text.splitlines()[0].strip() if self.text.strip() else ""
        m = re.fullmatch(r"#\s*([\w./-]+\.(?:py|toml))", first)
        return m.group(1) if m else None


def parse_notes(comment: str) -> dict:
    notes = {}
    for part in comment.split(";"):
        if ":" in part:
            key, value = part.split(":", 1)
            notes[key.strip()] = value.strip()
    return notes


def blocks(doc: Path) -> list[Block]:
    lines = doc.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while not lines[j].startswith("```"):
            j += 1
        notes = {}
        if start > 0:
            c = re.fullmatch(r"\s*<!--(.*)-->\s*", lines[start - 1])
            if c:
                notes = parse_notes(c.group(1))
        out.append(Block(doc, start + 1, lang, "\n".join(lines[start + 1:j]) + "\n", notes))
        i = j + 1
    return out


def command_lines(block: Block) -> list[str]:
    return [ln for ln in block.text.splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


def runnable(block: Block) -> bool:
    if block.lang == "python":
        return True
    return all(ln.startswith(RUN_PREFIXES) for ln in command_lines(block))


def all_blocks():
    return [b for doc in DOC_FILES for b in blocks(doc)]


def set_flags(tokens: list[str], flags: dict) -> list[str]:
    tokens = list(tokens)
    for flag, value in flags.items():
        if flag in tokens:
            tokens[tokens.index(flag) + 1] = value
        else:
            tail = tokens.index(">") if ">" in tokens else len(tokens)
            tokens[tail:tail] = [flag, value]
    return tokens


def small(line: str, block: Block, cwd: Path) -> tuple[list[str], Path]:
    """The command to run for one documented line, at a small budget, and
    the folder to run it in."""
    tokens = shlex.split(line, comments=True)
    if tokens[0] == "python" and tokens[1].startswith("benchmarks/"):
        script = ROOT / tokens[1]
        return [sys.executable, str(script), *BENCHMARK_ARGS[script.name]], ROOT
    assert tokens[0] == "audit", block.where
    sub = tokens[1]
    if sub == "gallery":
        out = tokens[tokens.index("--out") + 1]
        return [sys.executable, "-c", GALLERY.format(out=out)], cwd
    tokens = set_flags(tokens, SMALL.get(sub, {}))
    if sub == "run":
        extra = shlex.split(block.notes.get("budget", ""))
        tokens = set_flags(tokens, dict(zip(extra[::2], extra[1::2])))
    return tokens, cwd


def run(cmd, cwd: Path, env: dict, block: Block, expected: int, what: str):
    """One command: ``audit ...`` (a list starting with ``audit``) inside
    this process, the same ``main`` the installed command calls (its exit
    codes as a process are tested in test_exit_codes), its ``> FILE``
    written as the shell would; anything else as a process."""
    start = time.perf_counter()
    if cmd[0] == "audit":
        argv, target = cmd[1:], None
        if ">" in argv:
            argv, target = argv[:argv.index(">")], cwd / argv[argv.index(">") + 1]
        r = audit_here(*argv, cwd=cwd, env={"AUDIT_STORE": env["AUDIT_STORE"],
                                            "AUDIT_SCHEDULER": None})
        if target is not None:
            target.write_text(r.stdout)
    else:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    print(f"{time.perf_counter() - start:6.1f} s  {block.where}: {what}")
    assert r.returncode == expected, (f"{block.where}: {what} exited {r.returncode}, expected "
                                      f"{expected}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    assert "Traceback" not in r.stdout + r.stderr, (block.where, what, r.stderr[-3000:])
    return r


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    bash = [b.text.strip() for b in blocks(ROOT / "README.md") if b.lang == "bash"]
    assert bash[:2] == [QUICK_START, TEST_COMMAND]
    for link in re.findall(r"\]\((docs/[\w.-]+\.md)\)", text):
        assert (ROOT / link).exists(), link
    assert "SPEC" not in text
    for doc in DOC_FILES:
        assert "SPEC" not in doc.read_text(), doc


def _testers_table() -> list[dict]:
    """The rows of docs/benchmarks.md's table of the testers' benchmark
    (the one with a DP-Sniper column), each as {column: cell}."""
    lines = (ROOT / "docs" / "benchmarks.md").read_text().splitlines()
    head = next(i for i, line in enumerate(lines)
                if line.startswith("| mechanism |") and "DP-Sniper (90%)" in line)
    cols = [c.strip() for c in lines[head].strip("|").split("|")]
    rows = []
    for line in lines[head + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(cols, (c.strip() for c in line.strip("|").split("|")))))
    return rows


def _number(cell: str) -> float:
    return float("inf") if cell == "∞" else float(cell)


def test_readme_figures_are_those_of_docs_benchmarks():
    """Every figure the README quotes from the testers' table in
    docs/benchmarks.md is recounted here from that table: the exact
    evidence at 0.99 of the true ε, the exact and the black-box figures
    above DP-Sniper's, and the samples."""
    rows = _testers_table()
    bb = next(c for c in rows[0] if c.startswith("black-box ε_lb"))
    known = [r for r in rows if r["true ε"] != "-"]          # ∞ is known
    near = sum(_number(r["exact ε_lb"]) >= 0.99 * _number(r["true ε"]) for r in known)
    rated = [r for r in rows if r["DP-Sniper (90%)"] != "-"]
    exact_above = sum(_number(r["exact ε_lb"]) > _number(r["DP-Sniper (90%)"]) for r in rated)
    bb_above = sum(_number(r[bb]) > _number(r["DP-Sniper (90%)"]) for r in rated)
    samples = max(float(r["samples"].replace("·10", "e").translate(
        str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789"))) for r in rows)
    readme = " ".join((ROOT / "README.md").read_text().split())
    for phrase in (f"reaches 0.99 of the true ε on {near} of the {len(known)} mechanisms",
                   f"published 90% figure on {exact_above} of {len(rated)}",
                   f"figure on {bb_above} of {len(rated)} in the latest run",
                   "at ≤ 2·10⁷ samples"):
        assert phrase in readme, phrase
    assert samples <= 2e7
    # The page's own closing lines say the same.
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert (f"0.99 × the true ε (where known): {near} of {len(known)}" in page
            and f"black-box {bb_above} of {len(rated)}, exact {exact_above} of {len(rated)}"
            in page)


def test_every_block_that_is_not_run_says_why():
    seen = 0
    for b in all_blocks():
        if b.lang not in ("bash", "sh", "python") or b.module_path:
            continue
        seen += 1
        if "not run" in b.notes:
            assert b.notes["not run"], f"{b.where}: 'not run' needs a reason"
        else:
            assert b.lang != "sh", f"{b.where}: write ```bash"
            assert runnable(b), (f"{b.where}: a line does not start with 'audit ' or 'python ': "
                                 f"mark the block <!-- not run: REASON -->")
            assert "exit" not in b.notes or b.notes["exit"].isdigit(), b.where
    assert seen >= 10


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run(doc, tmp_path):
    for b in all_blocks():
        if b.module_path:
            target = tmp_path / b.module_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(b.text)
    env = {**os.environ, "AUDIT_STORE": str(tmp_path / "store.sqlite")}
    env.pop("AUDIT_SCHEDULER", None)
    done = set()
    for k, b in enumerate(blocks(doc)):
        if b.lang not in ("bash", "python") or b.module_path or "not run" in b.notes:
            continue
        expected = int(b.notes.get("exit", "0"))
        if b.lang == "python":
            name = f"test_doc_block_{k}.py" if "def test_" in b.text else f"doc_block_{k}.py"
            (tmp_path / name).write_text(b.text)
            cmd = ([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--audit-scale", "0.01", name] if name.startswith("test_")
                   else [sys.executable, name])
            run(cmd, tmp_path, env, b, expected, name)
            continue
        for line in command_lines(b):
            cmd, cwd = small(line, b, tmp_path)
            # Two documented lines can become one command at the small
            # budget (``bug_zoo.py`` and ``bug_zoo.py --validity``): it runs once.
            key = (str(cmd), str(cwd), expected)
            if key not in done:
                done.add(key)
                run(cmd, cwd, env, b, expected, line)
