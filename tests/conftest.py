"""Shared fixtures: the committed sample dumps (real JAX output) and peer modules."""

from __future__ import annotations

import glob
import os
import subprocess

import pytest

from tests.support.samples import ROOT, SAMPLES, sample  # noqa: F401 - the tests' names for them

# the browser tests' fixtures (server, browser, new_page), for every test module
pytest_plugins = ("tests.support.fixtures",)

# A browser test runs once more when it fails, as Playwright's own runner does on CI
# (`retries`): on two loaded cores a Streamlit rerun can redraw under a test's feet (four
# such races in two sessions, two of them failing CI at stop 35). A defect fails both runs;
# a rerun is listed in the summary as RERUN, so none goes unseen.
BROWSER_RERUNS = 1


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("flaky"):
            item.add_marker(pytest.mark.flaky(reruns=BROWSER_RERUNS))


def _peer_corpus() -> str:
    """../shared/peer_hlo beside the checkout; for a clone of a local checkout (CI clones
    the work tree), beside the checkout it was cloned from; or $HLOLENS_PEER_HLO."""
    if os.environ.get("HLOLENS_PEER_HLO"):      # when given, the only place looked at
        return os.environ["HLOLENS_PEER_HLO"]
    candidates = ["", os.path.join(os.path.dirname(ROOT), "shared", "peer_hlo")]
    try:
        origin = subprocess.run(["git", "-C", ROOT, "config", "--get", "remote.origin.url"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        origin = ""
    if origin.startswith("file://"):
        origin = origin[7:]
    if origin and os.path.isdir(origin):
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(origin)), "shared",
                                       "peer_hlo"))
    for c in candidates:
        if c and os.path.isfile(os.path.join(c, "golden.jsonl.gz")):
            return c
    return candidates[1]


PEER = _peer_corpus()
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(what: str, *, module_level: bool = False) -> None:
    """An input a suite needs is absent: skip on a developer's machine, fail in CI (with
    CI=true), so a CI run never passes without the corpus, jaxlib or Chromium."""
    if IN_CI:
        pytest.fail(f"{what} (CI=true: the suites that need it must run)", pytrace=False)
    pytest.skip(what, allow_module_level=module_level)


def needs(*modules: str, module_level: bool = False) -> None:
    """The Python packages a suite needs (requirements.txt pins them): absent, ``missing``
    (a skip here, a failure in CI), where ``pytest.importorskip`` would skip in CI too."""
    import importlib
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            missing(f"{name} is not importable ({e})", module_level=module_level)


def peer_file(prefix: str) -> str:
    """The peer module whose file name starts with ``prefix`` (skips when the corpus is absent)."""
    hits = sorted(glob.glob(os.path.join(PEER, prefix + "*.hlo")))
    if not hits:
        missing(f"the peer corpus ({PEER}) is not available")
    return hits[0]


def sample_file(name: str, pattern: str) -> str:
    """The one file of a sample dump matching a glob (e.g. '*cpu_after_optimizations.txt')."""
    hits = sorted(glob.glob(os.path.join(sample(name), pattern)))
    assert hits, f"{name}: no file matches {pattern}"
    return hits[0]


def sample_hlo_texts() -> list[str]:
    """Every HLO text file in every sample dump (before/after optimizations and passes)."""
    from compiler_bridge import open_dump
    from compiler_bridge.dumps import HLO_TEXT_KINDS
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
