"""``python -m compiler_bridge clusters PATH [--json]``: what XLA auto-clustering made of a
TF dump folder (added to the bridge's CLI by :func:`add_tf_commands`)."""

from __future__ import annotations

import argparse
import json
import sys

from ..dumps import open_dump
from .index import tf_index
from .reasons import cycle_blocks, why_not_clustered


def cmd_clusters(args: argparse.Namespace) -> int:
    dump = open_dump(args.path)
    ix = tf_index(dump)
    data = ix.to_json()
    for u in (data["main"] or {}).get("unclustered", []):
        u["why"] = why_not_clustered(ix, u["node"])     # what the page says
    if args.json:
        print(json.dumps(data, indent=2))
    for path, error in ix.errors:
        print(f"error: {error}", file=sys.stderr)
    if ix.empty:
        print(f"error: {args.path}: no TF graph dumps (*.pbtxt / *.pb from "
              "TF_DUMP_GRAPH_PREFIX) and no jit_compile modules found", file=sys.stderr)
        return 1
    if args.json:
        return 0
    print(f"dump {dump.name}: {len(ix.files)} graph files, {len(ix.groups)} graphs")
    main = data["main"]
    if main:
        print(f"step graph {main['file']}: {main['nodes']} nodes, "
              f"{len(main['clusters'])} clusters, {len(main['unclustered'])} unclustered")
        for c in main["clusters"]:
            ops = ", ".join(f"{op} {n}" for op, n in c["ops"].items())
            print(f"  {c['name']:<12} {c['nodes']:5d} nodes  module {c['module'] or '-'}  ({ops})")
        reasons: dict[str, list[str]] = {}
        for u in main["unclustered"]:
            reasons.setdefault(u["why"] or "(no reason in a log)", []).append(u["node"])
        for reason, nodes in reasons.items():
            print(f"  not clustered: {reason}: {', '.join(nodes[:6])}"
                  + (f" and {len(nodes) - 6} more" if len(nodes) > 6 else ""))
        for b in cycle_blocks(ix):
            if b.node_is_cluster:
                print(f"  {b.node} and {b.cluster} stay apart: merging them would close a "
                      f"cycle through {', '.join(b.via)}")
        if ix.log is None:
            print("  (no log: run with TF_CPP_VMODULE=mark_for_compilation_pass=3,"
                  "compilability_check_util=3 and keep stderr in the folder for the reasons)")
    if data["elsewhere"]:
        print("clusters TF built in other graphs:")
    for c in data["elsewhere"]:
        ops = ", ".join(f"{op} {n}" for op, n in c["ops"].items())
        print(f"  {c['name']:<12} {c['nodes']:5d} nodes  module {c['module'] or '-'}  "
              f"in {c['graph']}"
              + (f", tf.data function {c['pipeline']}" if c["pipeline"] else "") + f"  ({ops})")
    if data["loose"]:
        print("cluster modules no graph dump in the folder holds"
              + (" (the log's summary of each):" if ix.log is not None else ":"))
    for c in data["loose"]:
        ops = ", ".join(f"{op} {n}" for op, n in (c["ops"] or {}).items())
        size = f"{c['nodes']:5d} nodes" if c["nodes"] is not None else "    ? nodes"
        print(f"  {c['name']:<12} {size}  module {c['module']}" + (f"  ({ops})" if ops else ""))
    for u in data["loose_unclustered"]:
        print(f"  not clustered (TF's log): {u['node']} ({u['op']}): {u['reason']}")
    if data["loose"] and not ix.files:
        print("  (no TF graph dumps: set TF_DUMP_GRAPH_PREFIX to this folder as well to see "
              "each cluster's nodes and the nodes left out)")
    for j in data["jit"]:
        print(f"jit_compile {j['function']}: module {j['module']} "
              + (f"inputs ({j['inputs']}) " if j["inputs"] else "")
              + f"(called from {'Python, eager' if j['called'] == 'eager' else 'a tf.function graph'})")
    return 0


def add_tf_commands(sub) -> None:
    c = sub.add_parser("clusters", help="TF auto-clustering: clusters, their XLA modules, "
                                        "why nodes stayed out, jit_compile functions")
    c.add_argument("path", help="a folder (or .zip / .tar.gz) with TF graph dumps and XLA files")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_clusters)
