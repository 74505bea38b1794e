"""TensorFlow's side of a dump: the graphs ``TF_DUMP_GRAPH_PREFIX`` wrote (GraphDef and
FunctionDef, text or binary, read with TF's protos as the ``tensorboard`` package ships
them; TensorFlow is never imported), grouped by graph across the clustering passes (one
graph's dumps are a pass timeline of ``compiler_bridge.steps``, diffed node by node); the XLA
clusters auto-clustering made, each with its XLA module; ``jit_compile`` functions and
their modules; and why nodes stayed out, from TF's log when the folder has one.
"""

from __future__ import annotations

from .cli import add_tf_commands
from .graphdef import (
    CLUSTER_ATTR,
    FUNCTION,
    GRAPH,
    MUST_COMPILE_ATTR,
    GraphReadError,
    TfFunction,
    TfGraph,
    TfNode,
    base_name,
    node_texts,
    read_graph,
)
from .calls import call_bodies, caller_of
from .hlo_links import instructions_of, tf_node_of
from .index import (
    Cluster,
    GraphFile,
    GraphGroup,
    JitUnit,
    LooseCluster,
    TfIndex,
    build_index,
    group_files,
    has_tf,
    mangle,
    modules_named,
    tf_index,
)
from .log import (
    ClusteringInfo,
    ClusterSummary,
    CycleNote,
    KeptOut,
    LogRun,
    TfLog,
    Uncompilable,
    parse_log,
)
from .graph_passes import ORDER, GraphPass, pass_of
from .timeline import (
    NODE_KINDS,
    GraphDiff,
    NodeChange,
    graph_diff,
    graph_step_changes,
    graph_step_diff,
    graph_text_diff,
    graph_timeline,
)
from .reasons import (
    LOG_COMMAND,
    CycleBlock,
    NodeReason,
    ReasonGroup,
    cycle_blocks,
    node_reasons,
    reason_groups,
    step_digraph,
    why_not_clustered,
)

__all__ = [
    "call_bodies",
    "caller_of",
    "GraphDiff",
    "NODE_KINDS",
    "NodeChange",
    "base_name",
    "graph_diff",
    "graph_step_changes",
    "graph_step_diff",
    "graph_text_diff",
    "graph_timeline",
    "node_texts",
    "add_tf_commands",
    "CLUSTER_ATTR",
    "CycleBlock",
    "LOG_COMMAND",
    "NodeReason",
    "ReasonGroup",
    "cycle_blocks",
    "node_reasons",
    "reason_groups",
    "step_digraph",
    "why_not_clustered",
    "tf_node_of",
    "Cluster",
    "ClusterSummary",
    "ClusteringInfo",
    "CycleNote",
    "KeptOut",
    "FUNCTION",
    "GRAPH",
    "GraphFile",
    "GraphGroup",
    "GraphPass",
    "GraphReadError",
    "JitUnit",
    "LogRun",
    "LooseCluster",
    "MUST_COMPILE_ATTR",
    "ORDER",
    "TfFunction",
    "TfGraph",
    "TfIndex",
    "TfLog",
    "TfNode",
    "Uncompilable",
    "build_index",
    "group_files",
    "has_tf",
    "instructions_of",
    "mangle",
    "modules_named",
    "parse_log",
    "pass_of",
    "read_graph",
    "tf_index",
]
