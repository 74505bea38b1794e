"""The shape of the code, as issue 29 set it: no product file over 1,000 lines, and no import
cycle between product modules, a lazy import inside a function counted as a dependency like any
other (it runs the same code, only later). The checks read the sources; each is shown to catch a
deliberate violation on a copy of the tree.
"""

from __future__ import annotations

import ast
import os

import networkx as nx

from conftest import ROOT
from tests.support.sources import append, copy_sources, product_modules

MAX_LINES = 1000


def import_graph(root: str) -> nx.DiGraph:
    """Module -> each product module it imports, wherever in the file the import stands.

    ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``;
    a parent package that Python initialises on the way is no edge of its own (every submodule
    would otherwise make a cycle with the ``__init__`` that imports it).
    """
    modules = product_modules(root)
    packages = {m for m, p in modules.items() if p.endswith("__init__.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for mod, path in modules.items():
        home = mod if mod in packages else mod.rpartition(".")[0]
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = home.split(".")
                    parts = parts[:len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = subs if len(subs) == len(node.names) else subs + [base]
            for target in targets:
                while target and target not in modules:     # `import a.b.c` of a name
                    target = target.rpartition(".")[0]
                if target and target != mod:
                    graph.add_edge(mod, target)
    return graph


def cycles(root: str) -> list[list[str]]:
    """Each group of modules that import each other, directly or around a loop, sorted."""
    graph = import_graph(root)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def long_files(root: str) -> list[str]:
    out = []
    for mod, path in product_modules(root).items():
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES:
            out.append(f"{os.path.relpath(path, root)}: {n} lines")
    return sorted(out)


def test_no_import_cycle_between_product_modules():
    assert cycles(ROOT) == []


def test_no_product_file_over_a_thousand_lines():
    assert long_files(ROOT) == []


def test_the_checks_catch_a_lazy_cycle_and_a_long_file(tmp_path):
    root = copy_sources(tmp_path)
    assert cycles(root) == [] and long_files(root) == []
    # a cycle closed by an import inside a function, two packages apart
    append(root, "compiler_bridge/hlo/shapes.py",
           "\ndef _late():\n    from viz import state  # noqa: F401")
    append(root, "viz/state.py", "from compiler_bridge.hlo import shapes  # noqa: F401")
    found = cycles(root)
    assert len(found) == 1 and {"compiler_bridge.hlo.shapes", "viz.state"} <= set(found[0])
    append(root, "viz/grouping.py", "\n" * MAX_LINES)
    assert long_files(root) == [f"viz{os.sep}grouping.py: "
                                f"{sum(1 for _ in open(os.path.join(root, 'viz', 'grouping.py')))}"
                                " lines"]


def test_no_test_imports_another_test():
    """What several tests share lives in ``tests/support`` (issue 29): a test module imports
    no other test module (``conftest`` is pytest's own, for fixtures and the corpus path)."""
    tests = os.path.join(ROOT, "tests")
    names = {fn[:-3] for fn in os.listdir(tests) if fn.startswith("test_") and fn.endswith(".py")}
    found = []
    for fn in sorted(names):
        tree = ast.parse(open(os.path.join(tests, fn + ".py"), encoding="utf-8").read())
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{fn} imports {m}" for m in mods if m.split(".")[-1] in names]
    assert found == []
