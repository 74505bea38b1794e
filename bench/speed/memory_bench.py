"""Memory view speed on the 24k-instruction module (generated/scale_20k, 9 layers).

Two measurements, both on the same machine in one run:

* In process: open the dump and parse the module (the graph needs that too; the
  reference), read the memory files (buffer assignment, live ranges) and join them with
  the HLO, then build what the Memory tab draws (the live-bytes figure, the values live at
  the peak, their scopes, the overlay's colours). Cold = a fresh process; warm = again in
  that process (the memory is cached per dump, the figures are rebuilt on every run).
* In the browser (what the user feels): the app serving the dump, Chromium headless via
  Playwright; click the Memory tab until the chart's peak marker is drawn. Cold = the
  first time after the page loaded; warm = again after another tab (median of
  ``--repeat``). Reference: the same for the Module summary tab (a tab of the same page).

    .venv/bin/python -m bench.corpus.make_scale            # once: generated/scale_20k
    .venv/bin/python -m bench.speed.memory_bench [--repeat 5] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


from bench.common import ROOT, command, machine, publish
from tests.support.browser import GRAPH_DRAWN, IDLE, launch, start_app, stop_app

DUMP = os.path.join(ROOT, "generated", "scale_20k")
GOAL_WARM_S = 1.0

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from compiler_bridge import open_dump
from compiler_bridge.memory import module_memory
from viz import memory as MV
dump = open_dump({path!r})
module = dump.stage(dump.main)
t1 = time.perf_counter()
mem = module_memory(dump, dump.main)
t2 = time.perf_counter()
def draw():
    MV.timeline_figure(mem, "kind").to_json()
    rows = MV.live_rows(mem, mem.peak_index)
    MV.scope_rows(rows, 2)
    MV.memory_overlay(mem, "live")
draw()
t3 = time.perf_counter()
warm = []
for _ in range({repeat}):
    w0 = time.perf_counter()
    module_memory(dump, dump.main)
    draw()
    warm.append(time.perf_counter() - w0)
print(json.dumps({{"instructions": module.instruction_count, "values": len(mem.lives),
    "allocations": len(mem.allocations), "positions": len(mem.curve),
    "hlo": t1 - t0, "memory": t2 - t1, "draw": t3 - t2, "warm": warm}}))
"""

PEAK_DRAWN = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
    .some(c => [...c.querySelectorAll('text')].some(t => t.textContent.startsWith('peak ')))"""
SUMMARY_DRAWN = """() => [...document.querySelectorAll('[data-testid=stMarkdownContainer]')]
    .some(m => m.textContent.includes('ENTRY instructions') && m.textContent.includes('Computations'))
    && !document.querySelector('[data-testid=stPlotlyChart]')"""


def in_process(repeat: int) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD.format(path=DUMP, repeat=repeat)],
                       cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def idle(page) -> None:
    page.wait_for_function(
        IDLE, timeout=120_000)


def in_browser(repeat: int) -> dict:
    from playwright.sync_api import sync_playwright
    env = dict(os.environ, HLOLENS_DUMP=DUMP)
    log = open(os.devnull, "wb")  # noqa: SIM115 - open while the server runs
    proc, url = start_app(env, log, timeout=120)
    out: dict = {"memory_warm": [], "summary_warm": []}
    try:
        with sync_playwright() as p:
            b = launch(p)
            page = b.new_context(viewport={"width": 1600, "height": 1100}).new_page()
            page.goto(url)
            page.wait_for_function(GRAPH_DRAWN, timeout=300_000)
            idle(page)

            def tab(name: str, drawn: str) -> float:
                t0 = time.perf_counter()
                page.get_by_role("tab", name=name).click()
                page.wait_for_function(drawn, timeout=120_000)
                idle(page)
                return time.perf_counter() - t0

            out["memory_cold"] = tab("Memory", PEAK_DRAWN)
            for _ in range(repeat):
                out["summary_warm"].append(tab("Module summary", SUMMARY_DRAWN))
                out["memory_warm"].append(tab("Memory", PEAK_DRAWN))
            b.close()
    finally:
        stop_app(proc)
        log.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = ap.parse_args(argv)
    if not os.path.isdir(DUMP):
        print(f"{DUMP} is missing: run bench/corpus/make_scale.py first", file=sys.stderr)
        return 2
    proc = in_process(args.repeat)
    print(json.dumps(proc, indent=1))
    browser = None if args.no_browser else in_browser(args.repeat)
    print(json.dumps(browser, indent=1))
    warm = statistics.median(proc["warm"])
    lines = [
        "## Memory view: the 24k-instruction module",
        "",
        f"Command: {command()} — {machine()}. Module: generated/scale_20k "
        f"({proc['instructions']:,} instructions; {proc['allocations']:,} allocations, "
        f"{proc['values']:,} values, {proc['positions']:,} schedule positions).",
        "In process: the HLO parse (needed by the graph too) is the reference; *memory* = "
        "read the buffer-assignment and live-range files and join them with the HLO; "
        "*draw* = the live-bytes figure (to JSON), the values at the peak, their scopes and "
        f"the overlay's colours. Warm = memory (cached) + draw again, median of "
        f"{args.repeat}.",
        "",
        "| measure | s |",
        "|---|---:|",
        f"| HLO parse (reference) | {proc['hlo']:.2f} |",
        f"| memory files read and joined (cold) | {proc['memory']:.2f} |",
        f"| draw, first time in the process (plotly imported) | {proc['draw']:.2f} |",
        f"| **memory + draw, warm** | **{warm:.3f}** |",
    ]
    if browser is not None:
        mw = statistics.median(browser["memory_warm"])
        sw = statistics.median(browser["summary_warm"])
        lines += [
            "",
            "In the browser (Chromium headless, the app serving the dump): click on the tab "
            "until its content is drawn (the Memory chart's peak marker; the summary's "
            f"text) and the run is over. Warm = median of {args.repeat}, switching tabs in "
            "between.",
            "",
            "| tab | cold s | warm s (median) | warm min–max | goal |",
            "|---|---:|---:|---:|---|",
            f"| Memory | {browser['memory_cold']:.2f} | **{mw:.2f}** | "
            f"{min(browser['memory_warm']):.2f}–{max(browser['memory_warm']):.2f} | "
            f"≤ {GOAL_WARM_S:g} s warm |",
            f"| Module summary (reference) | – | {sw:.2f} | "
            f"{min(browser['summary_warm']):.2f}–{max(browser['summary_warm']):.2f} | |",
            "",
            f"Memory tab / summary tab, warm: ×{mw / sw:.2f}.",
        ]
    publish("memory_bench", lines, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
