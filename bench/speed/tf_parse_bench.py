"""Reading a large TF graph dump: ``read_graph`` on text GraphDefs of 2k-30k nodes
(``bench.corpus.make_tf_graph``: tf_autocluster's step graph repeated), through protoc
(``compiler_bridge.tf.protoc``, what the app does from ``protoc.MIN_BYTES`` on) against
protobuf's Python ``text_format`` (what it did before, and does below that size), in the
same run; then the first index of a dump holding the 30k-node graph and its
before_mark_for_compilation dump (``make_tf_graph.py --passes``), both ways.

    .venv/bin/python -m bench.speed.tf_parse_bench [--repeat 3] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import tempfile

from google.protobuf import text_format

from bench.common import command, machine, median_time, publish
from bench.corpus.make_tf_graph import build
from compiler_bridge import open_dump
from compiler_bridge.tf import protoc, read_graph, tf_index


def _slow(fn):
    """``fn`` with protoc off (every text file through text_format)."""
    def run():
        saved = protoc.MIN_BYTES
        protoc.MIN_BYTES = 1 << 62
        try:
            return fn()
        finally:
            protoc.MIN_BYTES = saved
    return run


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    rows = []
    for nodes in (2000, 10000, 30000):
        g = build(nodes)
        data = text_format.MessageToString(g).encode()
        fast, _ = median_time(lambda: read_graph(data, "g.pbtxt"), args.repeat)
        slow, _ = median_time(_slow(lambda: read_graph(data, "g.pbtxt")), args.repeat)
        rows.append((f"`read_graph`, {len(g.node):,} nodes", len(data), fast, slow))
    with tempfile.TemporaryDirectory() as tmp:
        g = build(30000)
        before = type(g)()
        before.CopyFrom(g)
        for n in before.node:
            n.attr.pop("_XlaCluster", None)
        size = 0
        for name, graph in (("mark_for_compilation", g), ("before_mark_for_compilation", before)):
            text = text_format.MessageToString(graph)
            size += len(text)
            with open(os.path.join(tmp, f"{name}.pbtxt"), "w", encoding="utf-8") as f:
                f.write(text)
        fast, _ = median_time(lambda: tf_index(open_dump(tmp)), args.repeat)
        slow, _ = median_time(_slow(lambda: tf_index(open_dump(tmp))), args.repeat)
        rows.append((f"first index of a dump: two dumps of {len(g.node):,} nodes", size, fast,
                     slow))
    lines = [
        "## Reading large TF graph dumps: protoc against text_format",
        "",
        f"Command: {command()} — {machine()}; load average (1 min) at the start: {load:.1f}. "
        "Median of the repeats, each a fresh parse (a fresh `Dump`, so no cache). "
        "*protoc*: the text handed to `protoc --encode` (grpcio-tools, the protobuf "
        "project's C++ parser) in a child process and the binary read by protobuf, as the "
        f"app does from {protoc.MIN_BYTES // 1024} KiB on; *text_format*: protobuf's Python "
        "parser alone, as before (and below that size).",
        "",
        "| what | text bytes | protoc s | text_format s | text_format / protoc |",
        "|---|---:|---:|---:|---:|",
    ]
    for what, size, fast, slow in rows:
        lines.append(f"| {what} | {size:,} | {fast:.2f} | {slow:.2f} | {slow / fast:.1f}× |")
    publish("tf_parse_bench", lines, write=not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
