"""Shared fixtures: the committed sample dumps (real JAX output) and peer modules."""

from __future__ import annotations

import glob
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "sample_dumps")
PEER = os.path.join(os.path.dirname(ROOT), "shared", "peer_hlo")


def sample(name: str) -> str:
    path = os.path.join(SAMPLES, name)
    if not os.path.isdir(path):
        pytest.fail(f"sample dump {name} is missing; run `make samples`")
    return path


def sample_file(name: str, pattern: str) -> str:
    """The one file of a sample dump matching a glob (e.g. '*cpu_after_optimizations.txt')."""
    hits = sorted(glob.glob(os.path.join(sample(name), pattern)))
    assert hits, f"{name}: no file matches {pattern}"
    return hits[0]


def sample_hlo_texts() -> list[str]:
    """Every HLO text file in every sample dump (before/after optimizations and passes)."""
    from compiler_bridge import open_dump
    from compiler_bridge.dump import HLO_TEXT_KINDS
    out = []
    for name in sorted(os.listdir(SAMPLES)):
        path = os.path.join(SAMPLES, name)
        if not os.path.isdir(path) or name == "programs":
            continue
        d = open_dump(path)
        out += [os.path.join(path, f.path) for f in d.files if f.kind in HLO_TEXT_KINDS]
    return out


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="session")
def artifacts_dir() -> str:
    path = os.path.join(ROOT, "test-artifacts")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(autouse=True)
def _store_outside_the_repo(monkeypatch, tmp_path):
    """The app adds every dump it opens to its store: keep that in a temporary folder
    (a test that wants a particular one sets HLOLENS_DATA itself)."""
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "hlolens-data"))
