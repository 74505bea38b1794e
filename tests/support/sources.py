"""The product's sources as the structure checks read them (``test_layering``,
``test_structure``): every module of the first-party packages and ``app.py``, and a copy of
them in which a test plants a deliberate violation."""

from __future__ import annotations

import os
import shutil

from tests.support.samples import ROOT

PRODUCT = ("compiler_bridge", "viz", "ui", "hlolens")


def product_modules(root: str) -> dict[str, str]:
    """Module name -> path for every product module under ``root`` (a package by its name,
    not ``.__init__``; ``app.py`` as ``app``)."""
    out = {}
    for package in PRODUCT:
        for dirpath, _, files in os.walk(os.path.join(root, package)):
            for fn in sorted(files):
                if fn.endswith(".py"):
                    path = os.path.join(dirpath, fn)
                    mod = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                    out[mod.removesuffix(".__init__")] = path
    if os.path.exists(os.path.join(root, "app.py")):
        out["app"] = os.path.join(root, "app.py")
    return out


def copy_sources(tmp_path) -> str:
    """A copy of the product's Python sources (no assets, no shipped models) to break."""
    root = str(tmp_path / "tree")
    for package in PRODUCT:
        shutil.copytree(os.path.join(ROOT, package), os.path.join(root, package),
                        ignore=shutil.ignore_patterns("__pycache__", "*.js", "*.css", "models"))
    shutil.copy(os.path.join(ROOT, "app.py"), root)
    return root


def append(root: str, rel: str, text: str) -> None:
    """Add ``text`` as the last lines of the file ``rel`` under ``root``."""
    with open(os.path.join(root, rel), "a", encoding="utf-8") as f:
        f.write("\n" + text + "\n")
