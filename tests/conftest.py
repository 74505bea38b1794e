"""Shared fixtures: the committed sample dumps (real JAX output) and peer modules."""

from __future__ import annotations

import glob
import os
import subprocess
from contextlib import contextmanager

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "sample_dumps")


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


def peer_file(prefix: str) -> str:
    """The peer module whose file name starts with ``prefix`` (skips when the corpus is absent)."""
    hits = sorted(glob.glob(os.path.join(PEER, prefix + "*.hlo")))
    if not hits:
        missing(f"the peer corpus ({PEER}) is not available")
    return hits[0]


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


@contextmanager
def app_server(data, *, env: dict | None = None, port: int | None = None,
               options: tuple[str, ...] = (), keep_log: str = ""):
    """An app server (``streamlit run app.py``) on the store folder ``data``, started
    without --dump; yields its URL and stops it after. A server that does not start
    fails the test with the end of its log."""
    from bench.common import start_app, stop_app
    full = dict(os.environ, HLOLENS_DATA=str(data))
    full.pop("HLOLENS_DUMP", None)
    full.update(env or {})
    log_path = os.path.join(str(data), "server.log")
    log = open(log_path, "wb")  # noqa: SIM115 - open while the server runs
    try:
        proc, url = start_app(full, log, timeout=60, port=port, options=options)
    except RuntimeError as e:
        log.close()
        pytest.fail(f"{e}:\n" + open(log_path, encoding="utf-8", errors="replace").read()[-3000:])
    try:
        yield url
    finally:
        stop_app(proc)
        log.close()
        if keep_log and os.environ.get("HLOLENS_KEEP_LOG"):
            import shutil
            shutil.copy(log_path, os.path.join(ROOT, "test-artifacts", keep_log))


@contextmanager
def chromium_browser():
    """Debian's Chromium, headless, through Playwright (never ``playwright install``)."""
    from playwright.sync_api import sync_playwright

    from bench.common import CHROMIUM, CHROMIUM_ARGS
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def disk_full(monkeypatch) -> None:
    """From now on SQLite's index cannot be written, as on a full disk. On a real full
    disk (a 3 MiB tmpfs filled with zeros) opening the index failed at ``PRAGMA
    journal_mode=WAL`` with 'disk I/O error': WAL mode needs a shared-memory file even to
    read, and it cannot grow. That statement fails here with that error; a connection that
    asks for nothing to be written (``immutable=1``) works, as it did on the full disk.
    (A read-only folder does not reproduce it for root, who may write anywhere.)"""
    import sqlite3

    class FullDisk(sqlite3.Connection):
        def execute(self, sql, *args):
            if sql.strip().upper().startswith("PRAGMA JOURNAL_MODE=WAL"):
                raise sqlite3.OperationalError("disk I/O error")
            return super().execute(sql, *args)

    real = sqlite3.connect

    def connect(database, *args, **kwargs):
        if kwargs.get("uri") and "immutable=1" in str(database):
            return real(database, *args, **kwargs)
        return real(database, *args, factory=FullDisk, **kwargs)
    monkeypatch.setattr(sqlite3, "connect", connect)
