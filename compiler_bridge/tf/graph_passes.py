"""The graph passes whose dumps TF writes around XLA clustering, in the order they run, and
what a dump file's name says: ``<pass>.pbtxt``, ``<pass>_1.pbtxt``, ... (one counter per
name, so the suffixes of one graph's files do not line up across passes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# graph-wide passes, in the order they run on one graph
ORDER = (
    "before_clone_constants_for_better_clustering",
    "after_clone_constants_for_better_clustering",
    "before_mark_for_compilation",
    "mark_for_compilation",
    "mark_for_compilation_annotated",
    "before_increase_dynamism_for_auto_jit_pass",
    "encapsulate_subgraphs_before",
    "encapsulate_subgraphs_subgraph",     # per cluster: ..._cluster_N
    "encapsulate_fdef_graph",             # per cluster
    "encapsulate_fdef",                   # per cluster (a FunctionDef)
    "encapsulate_subgraphs_after",
    "build_xla_ops",
)
PER_CLUSTER = ("encapsulate_subgraphs_subgraph", "encapsulate_fdef_graph", "encapsulate_fdef")
MARK = "mark_for_compilation"
ANNOTATED = "mark_for_compilation_annotated"
BEFORE_ENCAPSULATE = "encapsulate_subgraphs_before"
UNKNOWN_RANK = len(ORDER)

_SUFFIXES = (".pbtxt", ".pb")
_PER_CLUSTER = re.compile(r"^(" + "|".join(PER_CLUSTER) + r")_(cluster_\d+)(?:_(\d+))?$")
_GRAPH_WIDE = re.compile(r"^(" + "|".join(p for p in sorted(ORDER, key=len, reverse=True)
                                         if p not in PER_CLUSTER) + r")(?:_(\d+))?$")
_ANY = re.compile(r"^(.*?)(?:_(\d+))?$")


@dataclass(frozen=True, slots=True)
class GraphPass:
    """What a graph dump's file name says."""

    name: str            # the pass as the file names it ('encapsulate_fdef_cluster_0')
    kind: str            # the pass of ORDER ('encapsulate_fdef'), or name for others
    counter: int         # the dumper's suffix: 0 for '<pass>.pbtxt', N for '<pass>_N'
    cluster: str | None  # per-cluster passes: the cluster

    @property
    def rank(self) -> int:
        return ORDER.index(self.kind) if self.kind in ORDER else UNKNOWN_RANK

    @property
    def per_cluster(self) -> bool:
        return self.cluster is not None


def pass_of(base: str) -> GraphPass:
    """The pass of a graph dump, from its base name."""
    stem = base
    for suffix in _SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if m := _PER_CLUSTER.match(stem):
        return GraphPass(f"{m.group(1)}_{m.group(2)}", m.group(1), int(m.group(3) or 0),
                         m.group(2))
    if m := _GRAPH_WIDE.match(stem):
        return GraphPass(m.group(1), m.group(1), int(m.group(2) or 0), None)
    m = _ANY.match(stem)
    assert m is not None
    return GraphPass(m.group(1), m.group(1), int(m.group(2) or 0), None)
