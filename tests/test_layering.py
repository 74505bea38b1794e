"""The data flows one way: files -> compiler_bridge -> viz -> app. Checked on the sources."""

from __future__ import annotations

import ast
import os

from conftest import ROOT


def imports(package: str) -> dict[str, set[str]]:
    out = {}
    for root, _, files in os.walk(os.path.join(ROOT, package)):
        for fn in files:
            if fn.endswith(".py"):
                path = os.path.join(root, fn)
                tree = ast.parse(open(path, encoding="utf-8").read(), path)
                names = set()
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        names |= {a.name.split(".")[0] for a in node.names}
                    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                        names.add(node.module.split(".")[0])
                out[os.path.relpath(path, ROOT)] = names
    return out


def test_compiler_bridge_never_imports_streamlit_or_viz():
    for path, names in imports("compiler_bridge").items():
        assert not names & {"streamlit", "viz", "plotly"}, path


def test_view_builders_do_not_import_streamlit():
    # the Streamlit parts of the page live in viz/page.py and its *_page.py siblings and the
    # component; every other viz module is a pure builder that tests can call directly
    for path, names in imports("viz").items():
        base = os.path.basename(path)
        if base in ("page.py",) or base.endswith("_page.py") or "component" in path:
            continue
        assert "streamlit" not in names, path
