"""Graph view speed: module choice -> SVG ready, cold and warm, with peak memory.

Each measurement of a cold view runs in a fresh process (nothing parsed, nothing
cached; the Graphviz worker already started, as the app starts it at launch):
open the dump, parse the module, build the top-level view, lay it out. Warm = the same
view again in that process (the app's caches), and opening one group (a new layout).

    .venv/bin/python -m bench.speed.view_bench [--repeat 3] [--no-write]

Needs generated/scale_20k (make scale) and, for the 460k row, generated/scale_460k
(bench/corpus/make_scale.py --variant 460k; about 5 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys


from bench.common import ROOT, command, machine, write_section

CHILD = r"""
import json, resource, sys, time
from viz import layout
layout.warm()
t_import = time.perf_counter()
from compiler_bridge import open_dump
from viz import GraphOptions, build_graph, render_svg
t0 = time.perf_counter()
dump = open_dump({path!r})
module = dump.stage(dump.main)
t1 = time.perf_counter()
view = build_graph(module)
t2 = time.perf_counter()
svg = render_svg(view.dot, timeout=120)
t3 = time.perf_counter()
rss_cold = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
# warm: the same view again (parse cache + layout cache), then one group opened
w0 = time.perf_counter()
module = dump.stage(dump.main)
again = build_graph(module)
render_svg(again.dot)
w1 = time.perf_counter()
closed = sorted((g for g in view.groups.values() if not g.expanded), key=lambda g: -g.size)
opened = build_graph(module, None, GraphOptions(expanded=frozenset([closed[0].id]))) if closed else view
render_svg(opened.dot, timeout=120)
w2 = time.perf_counter()
print(json.dumps({{"instructions": module.instruction_count, "entry": len(module.entry.instructions),
    "bytes": dump.main.after_optimizations.size, "parse": t1 - t0, "build": t2 - t1,
    "layout": t3 - t2, "cold": t3 - t0, "warm_same": w1 - w0, "warm_open_group": w2 - w1,
    "nodes": view.node_count, "edges": view.edge_count, "opened_nodes": opened.node_count,
    "rss_cold": rss_cold,
    "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}}))
"""


def run_child(path: str) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD.format(path=path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, goal in (("scale_20k", "≤ 2 s cold / ≤ 0.3 s warm"), ("scale_460k", "≤ 10 s cold")):
        path = os.path.join(ROOT, "generated", name)
        if not os.path.isdir(path):
            print(f"{path} missing: run bench/corpus/make_scale.py", file=sys.stderr)
            continue
        runs = [run_child(path) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        rows.append((name, goal, med))
        print(name, json.dumps(med), flush=True)
    lines = [
        "## Graph view: module choice to SVG ready",
        "",
        f"Command: {command()} — {machine()}, median of {args.repeat} fresh processes each.",
        "Cold = open the dump, parse the main module, build the top-level view (layers "
        "grouping), lay it out with Graphviz (the wasm worker already running, as the app "
        "starts it at launch). Warm = the same view again in that process (parse and layout "
        "caches), and opening the biggest closed group (a new build and layout). Peak memory = "
        "the process's max resident set after the cold path (Python, jax-free imports, the "
        "dump's parsed model and the view; the Graphviz worker is a separate process).",
        "",
        "| module | instructions (ENTRY) | file MB | parse s | build s | layout s | **cold s** | "
        "warm s | open a group s | nodes / edges | peak RSS MB | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, goal, m in rows:
        lines.append(
            f"| {name} | {int(m['instructions']):,} ({int(m['entry']):,}) | {m['bytes'] / 1e6:.1f} | "
            f"{m['parse']:.2f} | {m['build']:.2f} | {m['layout']:.2f} | **{m['cold']:.2f}** | "
            f"{m['warm_same']:.3f} | {m['warm_open_group']:.2f} | {int(m['nodes'])} / {int(m['edges'])} | "
            f"{m['rss_cold'] / 1e6:.0f} | {goal} |")
    if not args.no_write and rows:
        write_section("view_bench", "\n".join(lines))


if __name__ == "__main__":
    main()
