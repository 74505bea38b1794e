"""A 10k-node TF step graph for the cluster-view benchmark, built from the real one: the
auto-clustered train step of ``sample_dumps/tf_autocluster`` (TF 2.21's
``mark_for_compilation`` dump, 43 nodes, one cluster) repeated as blocks ``bNNN/...``, each
block's cluster renamed ``cluster_NNN`` and chained to the block before by a control edge.
Written as text (as TF_DUMP_GRAPH_PREFIX writes) to generated/tf_10k/ (not committed).
With ``--passes`` the same graph's ``before_mark_for_compilation`` dump is written beside it
(the sample's, repeated the same way), so the cluster view draws the pass stepper and its
diff of 10k nodes.

    .venv/bin/python -m bench.corpus.make_tf_graph [--nodes 10000] [--out generated/tf_10k] [--passes]
"""

from __future__ import annotations

import argparse
import os
import sys

from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

from bench.common import ROOT

SOURCE = os.path.join(ROOT, "sample_dumps", "tf_autocluster", "mark_for_compilation_6.pbtxt")
# the same graph's dump before clustering (the sample's step graph pairs these two)
BEFORE = os.path.join(ROOT, "sample_dumps", "tf_autocluster",
                      "before_mark_for_compilation_6.pbtxt")


def rename(ref: str, prefix: str) -> str:
    control = ref.startswith("^")
    name = ref.lstrip("^")
    return ("^" if control else "") + prefix + name


def build(nodes: int, source: str = SOURCE) -> graph_pb2.GraphDef:
    base = graph_pb2.GraphDef()
    with open(source, encoding="utf-8") as f:
        text_format.Parse(f.read(), base)
    blocks = -(-nodes // len(base.node))
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(base.versions)
    last = base.node[-1].name
    for b in range(blocks):
        prefix = f"b{b:03d}/"
        for i, n in enumerate(base.node):
            m = out.node.add()
            m.CopyFrom(n)
            m.name = prefix + n.name
            del m.input[:]
            m.input.extend(rename(x, prefix) for x in n.input)
            if b and i == 0:
                m.input.append(f"^b{b - 1:03d}/{last}")
            if "_XlaCluster" in m.attr:
                m.attr["_XlaCluster"].s = f"cluster_{b}".encode()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--out", default=os.path.join(ROOT, "generated", "tf_10k"))
    ap.add_argument("--passes", action="store_true",
                    help="also write the before_mark_for_compilation dump")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    dumps = [("mark_for_compilation.pbtxt", SOURCE)]
    if args.passes:
        dumps.append(("before_mark_for_compilation.pbtxt", BEFORE))
    for name, source in dumps:
        g = build(args.nodes, source)
        path = os.path.join(args.out, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text_format.MessageToString(g))
        print(f"{path}: {len(g.node)} nodes, {os.path.getsize(path):,} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
