"""N browser sessions on one server: server CPU and memory per session, and whether the
server keeps answering (issue 17's load benchmark).

Starts the app on a free port with a temporary store and the transformer sample, then for
N = 1, 2, 4, 8 opens N fresh Chromium contexts on the same link at once (every page asked
for before any is waited on), waits for every graph, and has each session click a few
nodes. Measured on the server process
(and its children) from /proc: resident memory once all N are idle, CPU seconds used while
they loaded and clicked, both as increments over the server with no session open (the
reference, measured in the same run); the time to the graph in each session; and the
slowest answer of the health endpoint, asked every 0.2 s throughout.

    .venv/bin/python -m bench.speed.load_bench [--sessions 1,2,4,8] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time


from bench.common import ROOT, command, machine, write_section
from tests.support.browser import GRAPH_DRAWN, HealthProbe, IDLE, launch, start_app, stop_app

TICK = os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """The process and its descendants."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def usage(pid: int) -> tuple[float, int]:
    """(CPU seconds, resident bytes) of the server and its children."""
    cpu, rss = 0.0, 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / TICK
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
    return cpu, rss


CLICK = """(k) => {
  const host = [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .find(h => h.shadowRoot && h.shadowRoot.querySelector('svg g.node'));
  const nodes = host.shadowRoot.querySelectorAll('svg g.node');
  nodes[(k * 7) % nodes.length].dispatchEvent(new MouseEvent('click', {bubbles: true}));
}"""


def sessions(browser, link: str, n: int, clicks: int) -> tuple[list, list[float]]:
    """N sessions loading at once (every page asked before any is waited for), then
    clicking in turn; returns the open contexts and each one's time to its graph."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 900}) for _ in range(n)]
    pages = [c.new_page() for c in contexts]
    t0 = time.perf_counter()
    for p in pages:
        p.goto(link, wait_until="commit")
    took = []
    for p in pages:
        p.wait_for_function(GRAPH_DRAWN, timeout=300_000)
        took.append(time.perf_counter() - t0)
    for k in range(clicks):
        for p in pages:
            p.wait_for_function(IDLE, timeout=300_000)
            p.evaluate(CLICK, k)
        for p in pages:
            p.wait_for_timeout(200)
            p.wait_for_function(IDLE, timeout=300_000)
    return contexts, took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", default="1,2,4,8")
    ap.add_argument("--clicks", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    data = tempfile.mkdtemp(prefix="hlolens-load-")
    env = dict(os.environ, HLOLENS_DATA=data,
               HLOLENS_DUMP=os.path.join(ROOT, "sample_dumps", "transformer"))
    log = open(os.path.join(data, "server.log"), "wb")  # noqa: SIM115
    proc, url = start_app(env, log, timeout=90)
    rows = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw)
            # one session first: the dump stored, parsed and laid out; the link it lands on
            first = browser.new_context()
            page = first.new_page()
            page.goto(url)
            page.wait_for_function(GRAPH_DRAWN, timeout=300_000)
            page.wait_for_function(IDLE, timeout=300_000)
            link = page.evaluate("location.href")
            first.close()
            time.sleep(3)
            base_cpu, base_rss = usage(proc.pid)
            for n in [int(x) for x in args.sessions.split(",")]:
                probe = HealthProbe(url)
                cpu0, _ = usage(proc.pid)
                contexts, took = sessions(browser, link, n, args.clicks)
                cpu1, rss = usage(proc.pid)
                probe.stop()
                rows.append({"n": n, "rss_mb": rss / 2**20,
                             "rss_per": (rss - base_rss) / n / 2**20,
                             "cpu_per": (cpu1 - cpu0) / n,
                             "graph_med": statistics.median(took), "graph_max": max(took),
                             "health": probe.worst})
                print(rows[-1], flush=True)
                for c in contexts:
                    c.close()
                time.sleep(3)
            browser.close()
    finally:
        stop_app(proc)
        log.close()
    lines = [
        "## Load: N browser sessions on one server",
        "",
        f"Command: {command()} · {machine()}",
        "",
        "The transformer sample's link opened in N fresh Chromium contexts (all kept open), "
        f"each clicking {args.clicks} nodes. Memory and CPU are the server process and its "
        "children, from /proc, as increments over the same server with no session open "
        f"(the reference, {base_rss / 2**20:.0f} MB resident, measured in this run). "
        "*health* is the slowest answer of `/_stcore/health`, asked every 0.2 s.",
        "",
        "| sessions | server RSS | RSS per session | CPU s per session | graph drawn "
        "(median / last) | health worst |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['n']} | {r['rss_mb']:.0f} MB | {r['rss_per']:.1f} MB | "
                     f"{r['cpu_per']:.2f} | {r['graph_med']:.2f} / {r['graph_max']:.2f} s | "
                     f"{r['health']:.2f} s |")
    print("\n".join(lines))
    if not args.no_write:
        write_section("load_bench", "\n".join(lines))


if __name__ == "__main__":
    main()
