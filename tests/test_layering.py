"""The data flows one way: files -> compiler_bridge -> viz -> ui -> app. Checked on the sources.

The rules, for every module of ``compiler_bridge``, ``viz``, ``ui`` and ``app.py``:
- another package is reached only through its face (its ``__init__``), and only for names in
  the face's ``__all__``; modules of one package import each other freely;
- no name starting with ``_`` is imported from another module, even within a package;
- ``compiler_bridge`` never imports viz, ui, streamlit or plotly; ``viz`` never imports ui or
  streamlit; only ``ui`` and ``app.py`` import streamlit;
- inside ``compiler_bridge``, each sub-package imports only the siblings ``MAY_IMPORT`` lists
  (the table of ARCHITECTURE.md, §3): hlo and config none, targets only hlo, dumps config,
  hlo and targets, steps only dumps, passes and tf hlo, dumps and steps, memory and kernels
  hlo, dumps and targets, perf those and config and memory, spmd hlo and targets, and compare (every
  dump-vs-dump comparison) reads the models, diffs and measurements; no sibling imports
  compare (only the face and the CLI reach it); tf never imports tensorflow.
- a ui page imports no other page (``PAGES``);
- an alias means one thing: ``import X as A`` names the same module in every file that
  uses ``A``, and a module is given the same alias wherever one is given.
"""

from __future__ import annotations

import ast
import os

from conftest import ROOT
from tests.support.sources import PRODUCT as FIRST_PARTY
from tests.support.sources import append, copy_sources, product_modules

# sub-package of compiler_bridge -> the siblings it may import
MAY_IMPORT: dict[str, set[str]] = {
    "config": set(),        # the settings object: every layer reads it, it reads none
    "hlo": set(),
    "targets": {"hlo"},     # what is particular to CPU, GPU, TPU
    "dumps": {"config", "hlo", "targets"},
    "steps": {"dumps"},     # the timeline model HLO passes and TF graph dumps share
    "passes": {"hlo", "dumps", "steps"},
    "tf": {"hlo", "dumps", "steps"},
    "memory": {"hlo", "dumps", "targets"},
    "kernels": {"hlo", "dumps", "targets"},   # what each backend decided per kernel
    "perf": {"config", "hlo", "dumps", "memory", "targets"},
    "spmd": {"hlo", "dumps", "targets"},     # sharded programs (dumps: the per-pass steps)
    "compare": {"config", "hlo", "dumps", "passes", "memory", "perf"},   # two dumps
}
FORBIDDEN = {   # package prefix -> what it must never import
    "compiler_bridge": {"viz", "ui", "plotly"},     # streamlit: the rule below, for all
    "viz": {"ui"},
    "compiler_bridge.tf": {"tensorflow"},
}
for _sub, _allowed in MAY_IMPORT.items():
    FORBIDDEN.setdefault(f"compiler_bridge.{_sub}", set()).update(
        f"compiler_bridge.{other}" for other in MAY_IMPORT if other not in _allowed | {_sub})
STREAMLIT_ALLOWED = ("ui", "app")

# A page is the layout of one part of the screen: a module whose functions ``app.py`` (or
# ``ui.workspace``, the fragment that composes several) places. Pages are leaves: what they
# share lives in ``ui.kit`` (widgets), ``ui.model`` (what pages hand one another),
# ``ui.data`` (cached loaders), ``ui.actions`` (what one page asks of another),
# ``ui.stepper``, ``ui.traces``, ``ui.visitor`` and ``ui.component``; never in a page.
PAGES = frozenset({"ui.opening", "ui.explorer", "ui.graph", "ui.inspector", "ui.compare",
                   "ui.memory", "ui.runtimes", "ui.sharing", "ui.tf", "ui.communication"})


def _exports(path: str) -> set[str]:
    """The names in a face's ``__all__``."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {ast.literal_eval(e) for e in node.value.elts}      # type: ignore[attr-defined]
    return set()


def _within(mod: str, prefix: str) -> bool:
    return mod == prefix or mod.startswith(prefix + ".")


def violations(root: str) -> list[str]:
    """Every import under ``root`` that breaks a rule, as 'path:line: what'."""
    modules = product_modules(root)
    packages = {m for m, p in modules.items() if p.endswith("__init__.py")}
    out: list[str] = []
    alias_of: dict[str, tuple[str, str]] = {}    # target -> (alias, where), the first seen
    target_of: dict[str, tuple[str, str]] = {}   # alias -> (target, where), the first seen
    for mod, path in sorted(modules.items()):
        is_package = mod in packages
        home = mod if is_package else mod.rpartition(".")[0]      # the importer's package
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        where = os.path.relpath(path, root)
        for node in ast.walk(tree):
            targets: list[tuple[str, list[str]]] = []      # (module, names imported from it)
            aliases: list[tuple[str, str]] = []              # (what, the alias it is given)
            if isinstance(node, ast.Import):
                targets = [(a.name, []) for a in node.names]
                aliases = [(a.name, a.asname) for a in node.names if a.asname]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = home.split(".")
                    parts = parts[:len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                aliases = [(f"{base}.{a.name}", a.asname) for a in node.names if a.asname]
                names = [a.name for a in node.names]
                # `from pkg import submodule` inside pkg names a module, not a face export
                subs = [n for n in names if f"{base}.{n}" in modules]
                if base == home and subs:
                    targets = [(f"{base}.{n}", []) for n in subs]
                    names = [n for n in names if n not in subs]
                targets.append((base, names))
            else:
                continue
            at = f"{where}:{node.lineno}"
            for what, alias in aliases:
                first_target, seen_at = target_of.setdefault(alias, (what, at))
                first_alias, alias_at = alias_of.setdefault(what, (alias, at))
                if first_target != what:
                    out.append(f"{at}: the alias {alias} names {what} here but {first_target} "
                               f"at {seen_at}")
                elif first_alias != alias:
                    out.append(f"{at}: {what} is imported as {alias} here but as "
                               f"{first_alias} at {alias_at}")
            for target, names in targets:
                if mod in PAGES and target in PAGES and target != mod:
                    out.append(f"{at}: the page {mod} imports the page {target}")
                for prefix, banned in FORBIDDEN.items():
                    if _within(mod, prefix) and any(_within(target, b) for b in banned):
                        out.append(f"{at}: {mod} must not import {target}")
                if _within(target, "streamlit") and not any(
                        _within(mod, p) for p in STREAMLIT_ALLOWED):
                    out.append(f"{at}: only ui imports streamlit ({mod} imports {target})")
                if target.split(".")[0] not in FIRST_PARTY:
                    continue
                for n in names:
                    if n.startswith("_") and n != "__version__":
                        out.append(f"{at}: {mod} imports the private name {n} from {target}")
                same_package = target == home or (target.rpartition(".")[0] == home
                                                  and target not in packages)
                if same_package:
                    continue
                if target not in packages:
                    out.append(f"{at}: {mod} reaches into {target}; import its package's face")
                    continue
                missing = [n for n in names if not n.startswith("_")
                           and n not in _exports(modules[target])]
                if missing:
                    out.append(f"{at}: {mod} imports {', '.join(missing)} from {target}, "
                               f"which its face does not export (__all__)")
    return out


def test_the_sources_follow_the_layering_rules():
    assert violations(ROOT) == []


def test_each_kind_of_violation_is_caught(tmp_path):
    """The checker is not vacuous: a copy of the tree with one deliberate violation of each
    rule reports exactly those."""
    root = copy_sources(tmp_path)
    assert violations(root) == []
    append(root, "viz/state.py", "import streamlit as st")
    append(root, "viz/state.py", "from compiler_bridge.hlo.parser import parse_hlo")
    append(root, "ui/kit.py", "from compiler_bridge.hlo import _no_such_private")
    append(root, "ui/kit.py", "from compiler_bridge.perf import not_exported")
    append(root, "compiler_bridge/hlo/shapes.py", "from ..dumps import Dump")
    append(root, "compiler_bridge/perf/costs.py", "from viz import ViewState")
    append(root, "compiler_bridge/passes/diff.py", "from .timeline import _private_helper")
    append(root, "compiler_bridge/tf/index.py", "from ..compare import pair_modules")
    append(root, "ui/memory.py", "from .graph import legend")
    append(root, "ui/graph.py", "from viz import stepper as N")
    append(root, "ui/tf.py", "from viz import panels as PANELS")
    found = violations(root)
    expected = [
        "only ui imports streamlit (viz.state imports streamlit)",
        "viz.state reaches into compiler_bridge.hlo.parser",
        "ui.kit imports the private name _no_such_private from compiler_bridge.hlo",
        "ui.kit imports not_exported from compiler_bridge.perf",
        "compiler_bridge.hlo.shapes must not import compiler_bridge.dumps",
        "compiler_bridge.perf.costs must not import viz",
        "compiler_bridge.passes.diff imports the private name _private_helper",
        "compiler_bridge.tf.index must not import compiler_bridge.compare",
        "the page ui.memory imports the page ui.graph",
        "the alias N names viz.stepper here but viz.navigation",
        "viz.panels is imported as PANELS here but as P",
    ]
    for e in expected:
        assert any(e in f for f in found), (e, found)
    assert len(found) == len(expected), found
