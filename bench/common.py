"""Shared helpers for the benchmarks: timing, peak memory, BENCHMARKS.md sections."""

from __future__ import annotations

import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "BENCHMARKS.md")

# Debian's Chromium as DEVELOPERS.md asks (never `playwright install`): browser tests and the
# browser benchmark launch it alike
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
              options: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` of the checkout ``root`` on ``port`` (default: a free local
    one) with more Streamlit ``options`` (e.g. ``--secrets.files PATH``), output to
    ``log``; returns the process and its URL once healthy. Raises RuntimeError (the process
    killed) if it exits or is not healthy within ``timeout`` seconds."""
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", os.path.join(root, "app.py"),
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--server.headless", "true", "--browser.gatherUsageStats", "false", *options],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
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
        time.sleep(0.3)


def stop_app(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def median_time(fn, repeat: int = 5) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d')}")


def publish(name: str, lines: list[str], write: bool = True) -> None:
    """A benchmark's result: printed, and (unless ``write`` is off, ``--no-write``) its
    section ``name`` of BENCHMARKS.md replaced."""
    body = "\n".join(lines)
    print("\n" + body)
    if write:
        write_section(name, body)


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section ``name`` of BENCHMARKS.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = open(BENCHMARKS, encoding="utf-8").read() if os.path.exists(BENCHMARKS) else \
        "# Benchmarks\n\nEach section is written by the command named in it; numbers from " \
        "the machine and day it names. Ratios compare with a reference measured in the same " \
        "run, since these machines are noisy.\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text:
        text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(BENCHMARKS, "w", encoding="utf-8") as f:
        f.write(text)


def command() -> str:
    return "`" + " ".join([".venv/bin/python", os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]) + "`"


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
