"""The package layout keeps the pipeline readable: no import cycles between
modules (function-level imports included), lower layers never import upper
ones (algorithms ← attacks ← audit.execution ← audit.engine ← audit.report
← audit.cli / audit.testing; the attacks' pilots run
``algorithms.simulate``, so attacks sit directly on algorithms and neither
imports anything from ``audit``), and every module of ``audit`` opens with a
docstring that says what it holds and what it may import.  Static (ast),
so it checks every import, whether or not a test happens to execute it."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("algorithms", "attacks", "audit")
LAYERS = [("algorithms", 0), ("attacks", 1), ("audit.execution", 2), ("audit.engine", 3),
          ("audit.report", 4), ("audit.cli", 5), ("audit.testing", 5), ("audit", 0)]


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The project module an import names (``a.b.c`` may be a module or an
    attribute of ``a.b``), or None for third-party modules."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] or [base]
        for n in names:
            target = _resolve(n)
            if target is not None and target != module:
                found.add(target)
    return found


GRAPH = {m: _imports(m) for m in MODULES}


def _layer(module: str) -> tuple[str, int]:
    for prefix, rank in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return prefix, rank
    raise AssertionError(f"{module} belongs to no layer")


def test_lower_layers_never_import_upper_ones():
    bad = []
    for m, targets in GRAPH.items():
        layer, rank = _layer(m)
        for t in targets:
            t_layer, t_rank = _layer(t)
            sideways = rank == t_rank and layer != t_layer and t_layer != "audit"
            if t_rank > rank or sideways:
                bad.append(f"{m} ({layer}) imports {t} ({t_layer})")
    assert not bad, "\n".join(bad)


def _imported_names(source: str) -> set[str]:
    """Every absolute module name an import in ``source`` names, at any depth
    (function-level imports included): relative imports stay within the
    package, so they never reach ``audit`` from attacks or algorithms."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found


def test_attacks_and_algorithms_do_not_import_audit():
    """The attacks and the algorithms stand on their own: a pilot runs
    ``algorithms.simulate``, never the engine or the executor."""
    bad = []
    for m, path in MODULES.items():
        if m.split(".")[0] not in ("attacks", "algorithms"):
            continue
        for name in sorted(_imported_names(path.read_text())):
            if name == "audit" or name.startswith("audit."):
                bad.append(f"{m} imports {name}")
    assert not bad, "\n".join(bad)


def test_no_import_cycles():
    # Tarjan's strongly connected components over every import edge.
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_every_audit_module_says_what_it_holds_and_may_import():
    missing = []
    for m, path in MODULES.items():
        if not m.startswith("audit"):
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if not doc:
            missing.append(f"{m}: no docstring")
        elif path.name != "__init__.py" and path.name != "__main__.py" and \
                "May import" not in doc:
            missing.append(f"{m}: docstring does not say what it may import")
    assert not missing, "\n".join(missing)


def test_the_checks_above_can_fail():
    """The graph sees function-level imports, and a deliberate upward edge
    would be reported (so the layer test is not vacuous)."""
    assert "audit.execution.cluster" in GRAPH["audit.execution.executor"]  # function-level
    assert _layer("audit.engine.audit")[1] > _layer("audit.execution.executor")[1]
    assert _resolve("audit.engine.bounds.one_sided_bounds") == "audit.engine.bounds"
    assert _layer("attacks.search")[1] < _layer("audit.execution.runs")[1]
    # A function-level import of audit is seen by the scan for attacks/algorithms.
    assert "audit.execution.runs" in _imported_names(
        "def f():\n    from audit.execution.runs import simulate\n")
