"""TF cluster view: page load to the cluster graph drawn, in headless Chromium, for a
10k-node TF step graph (``bench/corpus/make_tf_graph.py``, made here when missing) and, as the
reference measured in the same run, the tf_autocluster sample (43 nodes); the same 10k-node
graph with its before_mark_for_compilation dump too (``make_tf_graph.py --passes``, made in
the run's temporary folder), whose page draws the pass stepper and a diff of 10k nodes; the
HLO explorer's transformer page is timed too, for scale.

Starts the app with a temporary store holding both dumps, opens each dump's link (no
module: the cluster view) in a fresh browser context and times navigation start -> the
view's nodes in the page's SVG. The first load after the server started is cold (graph
parsed, grouped, laid out); later loads are warm (server caches).

    .venv/bin/python -m bench.speed.tf_bench [--repeat 5] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.parse


from bench.common import ROOT, command, machine, write_section
from tests.support.browser import launch, start_app, stop_app, time_to_nodes

BIG = os.path.join(ROOT, "generated", "tf_10k")


def drawn(path: str) -> tuple[int, int]:
    """(TF nodes in the step graph, nodes the default cluster view draws)."""
    from compiler_bridge import open_dump
    from compiler_bridge.tf import tf_index
    from viz.tf import cluster_dot
    ix = tf_index(open_dump(path))
    assert ix.main is not None
    return len(ix.main.graph.nodes), cluster_dot(ix).drawn


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from compiler_bridge.dumps import Store
    if not os.path.isdir(BIG):
        subprocess.run([sys.executable, "-m", "bench.corpus.make_tf_graph"],
                       check=True, cwd=ROOT)
    data = tempfile.mkdtemp(prefix="hlolens-bench-")
    store = Store(data)
    small_path = os.path.join(ROOT, "sample_dumps", "tf_autocluster")
    stepped = os.path.join(data, "tf_10k_passes")
    subprocess.run([sys.executable, "-m", "bench.corpus.make_tf_graph",
                    "--out", stepped, "--passes"], check=True, cwd=ROOT)
    views = {}
    for label, path in (("10k-node TF step graph (generated/tf_10k), 233 clusters", BIG),
                        ("reference: tf_autocluster sample", small_path),
                        ("10k-node graph with its before_mark_for_compilation dump: pass "
                         "stepper and a 10k-node diff drawn", stepped)):
        stored = store.add_path(path, os.path.basename(path))
        nodes, want = drawn(path)
        views[label] = ({"dump": stored.share_id}, nodes, want)
    # the app's HLO page of the same size class, for scale: the transformer's default view
    hlo = store.add_path(os.path.join(ROOT, "sample_dumps", "transformer"), "transformer")
    views["HLO explorer: transformer sample, default view"] = ({"dump": hlo.share_id}, 0, 20)
    env = dict(os.environ, HLOLENS_DATA=data)
    log = open(os.path.join(data, "server.log"), "wb")  # noqa: SIM115
    try:
        proc, base = start_app(env, log, timeout=90)
    except RuntimeError as e:
        raise SystemExit(str(e)) from None
    rows = []
    load_before = os.getloadavg()[0]
    try:
        with sync_playwright() as p:
            browser = launch(p)

            def load(query: dict, want: int) -> tuple[float, int]:
                return time_to_nodes(browser, base + "?" + urllib.parse.urlencode(query), want)

            for label, (query, nodes, want) in views.items():
                cold, n = load(query, want)
                warm = [load(query, want)[0] for _ in range(args.repeat)]
                rows.append((label, nodes, n, cold, statistics.median(warm), min(warm),
                             max(warm)))
                print(f"{label}: {nodes} TF nodes, {n} drawn, cold {cold:.2f} s, warm median "
                      f"{statistics.median(warm):.2f} s", flush=True)
            browser.close()
    finally:
        stop_app(proc)
        log.close()
    ref = next((r[4] for r in rows if r[0].startswith("reference")), 0.0)
    lines = [
        "## TF cluster view: page load to cluster graph drawn",
        "",
        f"Command: {command()} — {machine()}, Chromium headless via Playwright, fresh "
        "browser context per load. Time = navigation start to the cluster view's nodes in "
        "the page's SVG (Streamlit's page load, the script run, the SVG transfer and "
        "drawing). Cold = the first load after the server started (GraphDef text parsed "
        "with tensorboard's protos, graphs grouped, Graphviz layout); warm = later loads of "
        "the same link (server caches). Closed clusters draw as one box each; over 300 "
        "unclustered nodes fold by name scope. Goal: 10k nodes ≤ 2 s warm. Load average "
        f"(1 min) when the run started: {load_before:.1f}, when it ended: "
        f"{os.getloadavg()[0]:.1f} (other work on this machine slows every row alike).",
        "",
        "| dump | TF nodes | nodes drawn | cold s | warm s (median) | warm min–max | "
        "warm / reference |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, nodes, n, cold, med, lo, hi in rows:
        lines.append(f"| {label} | {nodes or '-'} | {n} | {cold:.2f} | **{med:.2f}** | "
                     f"{lo:.2f}–{hi:.2f} | {med / ref:.2f}× |")
    if not args.no_write and rows:
        write_section("tf_bench", "\n".join(lines))


if __name__ == "__main__":
    main()
