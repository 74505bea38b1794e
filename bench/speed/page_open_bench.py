"""Page open -> first graph, before and after a change, measured in the same run (issue 32,
item 16): the transformer sample (755 instructions, its default view) opened by a fresh
browser context, on a warm server (it drew that view for an earlier page) and cold (the
first page after the server started, opened as soon as it answers).

The two checkouts' servers take turns, one cycle each, so that the machine's load falls on
both alike. Each server has a fresh store; its cache folder ($HLOLENS_CACHE) is one per
checkout for the whole run, as on a machine the app keeps running on (a first, untimed
cycle of each fills it). Time = navigation start to the first animation frame with a graph
node in the page (``interaction_rig.Bench.load``).

    .venv/bin/python -m bench.speed.page_open_bench --before /tmp/before [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

from bench.common import ROOT, command, machine, publish
from bench.speed.interaction_rig import SMALL, App, Bench
from tests.support.browser import launch


def _head(root: str) -> str:
    try:
        return subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cycle(bench: Bench, root: str, cache: str, warm: int,
          dump: str = SMALL) -> tuple[float, list[float]]:
    """One server of ``root`` on ``dump``: the cold first page, then ``warm`` pages."""
    app = App(root, dump=dump)
    app.env["HLOLENS_CACHE"] = cache
    try:
        app.start()
        page = bench.new_page()
        cold = bench.load(page, app.url)
        bench.close(page)
        times = []
        for _ in range(warm):
            page = bench.new_page()
            times.append(bench.load(page, app.url))
            bench.close(page)
        return cold, times
    finally:
        app.cleanup(False)


def _instructions(dump: str) -> str:
    """The main module's instructions after optimizations, as the page's header counts."""
    from compiler_bridge import open_dump, parse_hlo

    opened = open_dump(dump)
    module = opened.main
    f = module.after_optimizations or module.before_optimizations
    count = parse_hlo(opened.read_text(f.path)).instruction_count if f else 0
    return f"{module.name}, {count:,} instructions"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="the checkout before the change")
    ap.add_argument("--repeat", type=int, default=5, help="cycles (servers) per checkout")
    ap.add_argument("--warm", type=int, default=3, help="warm pages per server")
    ap.add_argument("--before-name", default="", help="its commit, when it is no git checkout")
    ap.add_argument("--dump", default=SMALL,
                    help="the dump opened (default: the transformer sample); another one's "
                         "table is a section of its own")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    args.dump = os.path.abspath(args.dump)        # each checkout's server runs in its own
    from playwright.sync_api import sync_playwright

    roots = {"before": os.path.abspath(args.before), "after": ROOT}
    caches = {k: tempfile.mkdtemp(prefix=f"hlolens-po-{k}-") for k in roots}
    cold: dict[str, list[float]] = {k: [] for k in roots}
    warm: dict[str, list[float]] = {k: [] for k in roots}
    load0 = os.getloadavg()[0]
    t0 = time.time()
    with sync_playwright() as p:
        browser = launch(p)
        bench = Bench(browser, argparse.Namespace(shots="", label="page_open", verbose=False))
        for k, root in roots.items():                  # untimed: caches, disk, Chromium
            cycle(bench, root, caches[k], 1, args.dump)
        for i in range(args.repeat):
            order = list(roots) if i % 2 == 0 else list(roots)[::-1]
            for k in order:
                c, w = cycle(bench, roots[k], caches[k], args.warm, args.dump)
                cold[k].append(c)
                warm[k].extend(w)
                print(f"cycle {i + 1} {k}: cold {c:.2f}, warm "
                      + ", ".join(f"{x:.2f}" for x in w), flush=True)
        browser.close()
    load1 = os.getloadavg()[0]

    def cell(xs: list[float]) -> str:
        return f"**{statistics.median(xs):.2f}** ({min(xs):.2f}–{max(xs):.2f})"

    small = os.path.abspath(args.dump) == os.path.abspath(SMALL)
    what = "The transformer sample (755 instructions)" if small else \
        f"`{os.path.relpath(os.path.abspath(args.dump), ROOT)}` ({_instructions(args.dump)})"
    lines = [
        "## Page open to first graph: before and after (issue 32, item 16)"
        + ("" if small else f", {os.path.basename(args.dump.rstrip('/'))}"),
        "",
        f"Command: {command()} — {machine()}, Chromium headless via Playwright, 1600×1100, "
        f"a fresh browser context per page. {what}, its "
        f"default view; time = navigation start to the first animation frame with a graph "
        f"node. Warm: the server drew the view for an earlier page; cold: the first page "
        f"after the server started, opened as soon as it answered. The two checkouts' "
        f"servers took turns ({args.repeat} servers each, {args.warm} warm pages per "
        f"server), each server with a fresh store and, as on a machine that keeps the app, "
        f"one cache folder per checkout for the run. Seconds, **median** (min–max). Goal: "
        f"≤ 1.5 s warm, ≤ 2.5 s cold. Load average (1 min): {load0:.1f} at the start, "
        f"{load1:.1f} at the end ({(time.time() - t0) / 60:.0f} min); both columns under "
        f"the same load.",
        "",
        f"| | before ({_head(roots['before']) or args.before_name}) | after ({_head(ROOT)}) |",
        "|---|---:|---:|",
        f"| warm s | {cell(warm['before'])} | {cell(warm['after'])} |",
        f"| cold s | {cell(cold['before'])} | {cell(cold['after'])} |",
    ]
    section = "page_open_bench" if small else \
        "page_open_bench_" + re.sub(r"\W", "_", os.path.basename(args.dump.rstrip("/")))
    publish(section, lines, write=not args.no_write)


if __name__ == "__main__":
    main()
