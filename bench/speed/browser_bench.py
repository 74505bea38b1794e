"""Page load to graph drawn, in headless Chromium, for a ~2000-node view and a small one.

Starts the app on a free port with a temporary store, opens a link whose view draws about
2000 nodes of the 23.9k-instruction module (flat grouping, every part and the biggest
fusions open, budget 2500), and times navigation start -> that many nodes in the page's
SVG. Each run uses a fresh browser context (nothing cached in the browser); the server
has laid the view out once before (its layout cache is warm), and one cold run is timed
too.

    .venv/bin/python -m bench.speed.browser_bench [--repeat 3] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import urllib.parse
import urllib.request


from bench.common import ROOT, command, machine, write_section
from tests.support.browser import launch, start_app, stop_app, time_to_nodes



def view_of_2000(path: str) -> tuple[list[str], int]:
    """Group ids to open so that the flat view of the main module draws ~2000 nodes."""
    from compiler_bridge import open_dump
    from viz import GraphOptions, build_graph
    d = open_dump(path)
    m = d.stage(d.main)
    base = build_graph(m, None, GraphOptions(grouping="flat"))
    expanded = [g for g, info in base.groups.items() if not info.expanded]
    fusions = sorted((i for i in m.entry.instructions if i.opcode == "fusion"),
                     key=lambda i: -len(m.computation(i.called_names[0]).instructions))
    nodes = base.node_count
    for f in fusions:
        view = build_graph(m, None, GraphOptions(grouping="flat", budget=2500,
                                                 expanded=frozenset(expanded)))
        nodes = view.node_count
        if nodes >= 1900:
            break
        expanded.append("fusion:" + f.name)
    return expanded, nodes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from compiler_bridge.dumps import Store
    scale = os.path.join(ROOT, "generated", "scale_20k")
    if not os.path.isdir(scale):
        sys.exit("generated/scale_20k is missing: run `make scale`")
    data = tempfile.mkdtemp(prefix="hlolens-bench-")
    store = Store(data)
    big = store.add_path(scale, "scale_20k")
    small = store.add_path(os.path.join(ROOT, "sample_dumps", "transformer"), "transformer")
    expanded, expected = view_of_2000(scale)
    views = {
        f"~{expected}-node view (scale_20k, flat, parts and big fusions open)": (
            {"dump": big.share_id, "grouping": "flat", "budget": "2500",
             "expanded": "~".join(expanded)}, int(expected * 0.95)),
        "transformer sample, default view": ({"dump": small.share_id}, 20),
    }
    env = dict(os.environ, HLOLENS_DATA=data)
    log = open(os.path.join(data, "server.log"), "wb")  # noqa: SIM115
    try:
        proc, base = start_app(env, log, timeout=90)
    except RuntimeError as e:
        raise SystemExit(str(e)) from None
    rows = []
    try:
        with sync_playwright() as p:
            browser = launch(p)

            def load(query: dict, want: int) -> tuple[float, int]:
                return time_to_nodes(browser, base + "?" + urllib.parse.urlencode(query), want)

            for label, (query, want) in views.items():
                cold, n = load(query, want)
                warm = [load(query, want)[0] for _ in range(args.repeat)]
                rows.append((label, n, cold, statistics.median(warm), min(warm), max(warm)))
                print(f"{label}: {n} nodes, cold {cold:.2f} s, warm median "
                      f"{statistics.median(warm):.2f} s", flush=True)
            browser.close()
    finally:
        stop_app(proc)
        log.close()
    lines = [
        "## Browser: page load to graph drawn",
        "",
        f"Command: {command()} — {machine()}, Chromium 156 headless via Playwright, fresh "
        "browser context per load. Time = navigation start to the expected number of nodes "
        "in the page's SVG (includes Streamlit's page load, the script run, the SVG transfer "
        "and drawing). Cold = the first load after the server started (parse, build and "
        "Graphviz layout on the server); warm = later loads of the same link (server caches).",
        "",
        "| view | nodes drawn | cold s | warm s (median) | warm min–max |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, n, cold, med, lo, hi in rows:
        lines.append(f"| {label} | {n} | {cold:.2f} | **{med:.2f}** | {lo:.2f}–{hi:.2f} |")
    if not args.no_write and rows:
        write_section("browser_bench", "\n".join(lines))


if __name__ == "__main__":
    main()
