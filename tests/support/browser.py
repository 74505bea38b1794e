"""The one harness for driving the app in headless Chromium, shared by the browser tests and
the benchmarks: the app started and stopped on a free local port, Debian's Chromium launched
with the project's flags, the page predicates that say the graph is drawn or Streamlit is
idle, and a health probe that watches the server answer."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from typing import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Debian's Chromium as DEVELOPERS.md asks (never `playwright install`): browser tests and the
# browser benchmarks launch it alike
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


# page predicates for Playwright's wait_for_function: the graph component drew a node;
# how many nodes it drew; Streamlit finished its run
GRAPH_DRAWN = """() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .some(h => h.shadowRoot && h.shadowRoot.querySelector('svg g.node'))"""
NODES = """() => { let n = 0;
  for (const h of document.querySelectorAll('[data-testid=stBidiComponentIsolated]'))
    if (h.shadowRoot) n = Math.max(n, h.shadowRoot.querySelectorAll('svg g.node').length);
  return n; }"""
IDLE = "() => !document.querySelector('[data-testid=stStatusWidget]')"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(env: dict, log, timeout: float, root: str = ROOT, *, port: int | None = None,
              options: tuple[str, ...] = (), app_args: tuple[str, ...] = (),
              poll: float = 0.3, new_session: bool = False) -> tuple[subprocess.Popen, str]:
    """``python -m ui.serve`` (``streamlit run app.py``) of the checkout ``root`` on ``port`` (default: a free local
    one) with more Streamlit ``options`` (e.g. ``--secrets.files PATH``) and the app's own
    ``app_args`` (after ``--``), output to ``log``; with ``new_session``, in a process group
    of its own. Returns the process and its URL once healthy (asked every ``poll`` s). Raises
    RuntimeError (the process killed) if it exits or is not healthy within ``timeout``
    seconds."""
    port = port or free_port()
    # as `make run` serves it: streamlit run app.py, uploads spooled to disk (ui.serve;
    # a checkout from before it, measured by a benchmark, runs app.py itself)
    serve = (["-m", "ui.serve"] if os.path.exists(os.path.join(root, "ui", "serve.py"))
             else ["-m", "streamlit", "run", os.path.join(root, "app.py")])
    args = [sys.executable, *serve,
            "--server.port", str(port), "--server.address", "127.0.0.1",
            "--server.headless", "true", "--browser.gatherUsageStats", "false", *options]
    if app_args:
        args += ["--", *app_args]
    proc = subprocess.Popen(args, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=new_session)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise RuntimeError("the app did not start")
        time.sleep(poll)


def stop_app(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def launch(playwright):
    """Debian's Chromium through Playwright, headless, with the project's flags (Playwright
    gives every launch a fresh temporary ``--user-data-dir``)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                      headless=True)


@contextmanager
def chromium() -> Iterator:
    """A launched Chromium (``launch``) for the length of a ``with`` block."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = launch(p)
        try:
            yield b
        finally:
            b.close()


def time_to_nodes(browser, url: str, want: int) -> tuple[float, int]:
    """Open ``url`` in a fresh context (1600x1100): seconds from navigation start until the
    page draws ``want`` nodes (up to 300 s), and how many it drew."""
    ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(f"() => ({NODES})() >= {want}", timeout=300_000)
    elapsed = time.perf_counter() - t0
    n = page.evaluate(NODES)
    ctx.close()
    return elapsed, n


class HealthProbe:
    """Asks ``/_stcore/health`` every 0.2 s from a thread; the slowest answer since
    ``reset`` (a request that fails or takes over 5 s counts as 5 s)."""

    def __init__(self, url: str) -> None:
        self.url = url + "_stcore/health"
        self.worst = 0.0
        self.asked = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url, timeout=5) as r:
                    r.read()
                took = time.perf_counter() - t0
            except OSError:
                took = 5.0
            self.worst = max(self.worst, took)
            self.asked += 1
            self._stop.wait(0.2)

    def reset(self) -> None:
        self.worst, self.asked = 0.0, 0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
