"""Why nodes of the step graph were not clustered, grouped by cause, in plain words with a
fix where one exists; and the graph question behind the unlogged cases: a compilable node
(or cluster) kept out of a neighbouring cluster because merging would close a cycle through
an unclustered node (answered with networkx on the step graph, control edges included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import networkx as nx

from .graphdef import TfGraph
from .index import TfIndex

LOG_COMMAND = (
    'TF_XLA_FLAGS="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_clustering_debug" '
    "TF_CPP_VMODULE=mark_for_compilation_pass=3,compilability_check_util=3 "
    "TF_DUMP_GRAPH_PREFIX=DIR XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text\" "
    "python your_program.py 2> DIR/tf_log.txt")

_NO_KERNEL = re.compile(r"No registered '([^']+)' OpKernel for (\S+) devices")
_STRING_OPS = re.compile(r"^(AsString|String\w*|Regex\w*|Substr|ReduceJoin|DecodeJSONExample|"
                         r"Unicode\w*|StaticRegex\w*|ParseExample\w*|EncodeBase64|"
                         r"DecodeBase64|StringToNumber)$")

ARGS = "args"
REMAPPER = "remapper"
STRINGS = "strings"
NO_KERNEL = "no_kernel"
CYCLE = "cycle"
RESOURCE = "resource"
UNLOGGED = "unlogged"
NO_LOG = "no_log"
OTHER = "other"


@dataclass(frozen=True, slots=True)
class ReasonGroup:
    kind: str
    title: str                          # what happened, in plain words
    fix: str                            # what to do ('' when nothing is to be done)
    nodes: tuple[tuple[str, str], ...]  # (node, op)
    detail: str = ""                    # the log's own words, one example


@dataclass(frozen=True, slots=True)
class CycleBlock:
    """Merging ``node`` (an unclustered node, or a cluster) into ``cluster`` would close a
    cycle via ``via`` (unclustered nodes on the other path between them)."""

    node: str
    cluster: str
    via: tuple[str, ...]
    node_is_cluster: bool = False


def step_digraph(graph: TfGraph) -> nx.DiGraph:
    g = nx.DiGraph()
    names = {n.name for n in graph.nodes}
    for n in graph.nodes:
        g.add_node(n.name)
        for src in n.inputs:
            if src in names:
                g.add_edge(src, n.name, control=False)
        for src in n.controls:
            if src in names:
                g.add_edge(src, n.name, control=True)
    return g


def cycle_blocks(ix: TfIndex) -> list[CycleBlock]:
    """(Computed once per index; see :func:`find_cycle_blocks`.)"""
    return ix.derived("cycle-blocks", find_cycle_blocks)


def reason_groups(ix: TfIndex) -> list[ReasonGroup]:
    """The step graph's unclustered nodes, grouped by cause (once per index)."""
    return ix.derived("reason-groups", group_reasons)


def find_cycle_blocks(ix: TfIndex) -> list[CycleBlock]:
    """Each unclustered node next to a cluster that is compilable as far as the log says
    (no 'uncompilable' line), and each cluster next to another, whose merge would close a
    cycle through unclustered nodes: the path between the two avoiding their direct
    edge, with each cluster contracted to one vertex."""
    if ix.main is None:
        return []
    graph = ix.main.graph
    g = step_digraph(graph)
    cluster_of = {n.name: c.name for c in ix.clusters for n in c.nodes}
    # contract each cluster into one vertex named after it
    h = nx.DiGraph()
    for u, v in g.edges():
        cu, cv = cluster_of.get(u, u), cluster_of.get(v, v)
        if cu != cv:
            h.add_edge(cu, cv)
    def detour(a: str, b: str) -> tuple[str, ...] | None:
        """The other path a -> b (their direct edge left out), or None."""
        if not h.has_edge(a, b):
            return None
        h.remove_edge(a, b)
        try:
            return tuple(nx.shortest_path(h, a, b)[1:-1])
        except nx.NetworkXNoPath:
            return None
        finally:
            h.add_edge(a, b)

    out: list[CycleBlock] = []
    names = [c.name for c in ix.clusters]
    # a function's _Arg/_Retval never joins a cluster: no question to ask about them
    candidates = [(n.name, False) for n in graph.nodes
                  if n.name not in cluster_of and ix.reason(n.name) is None and n.name in h
                  and n.op not in ("_Arg", "_Retval")]
    candidates += [(c, True) for c in names if c in h]
    for unit, is_cluster in candidates:
        for c in names:
            if c == unit:
                continue
            for a, b in ((unit, c), (c, unit)):
                if is_cluster and a != unit:
                    continue        # each pair of clusters once, in edge direction
                via = detour(a, b)
                if via is not None:
                    out.append(CycleBlock(unit, c, via, is_cluster))
    return out


def _kind(op: str, reason: str) -> str:
    if "top level _Arg or _Retval" in reason:
        return ARGS
    m = _NO_KERNEL.search(reason)
    if m and op.startswith("_Fused"):
        return REMAPPER
    if "DT_STRING" in reason or (m and _STRING_OPS.match(op)):
        return STRINGS
    if m:
        return NO_KERNEL
    return OTHER


_TEXT = {
    ARGS: ("The function's inputs and outputs (_Arg, _Retval): never inside a cluster", ""),
    REMAPPER: ("Grappler's remapper fused these ops (MatMul + BiasAdd + activation, Conv2D "
               "+ ...) into {ops} before clustering, and XLA has no kernel for the fused op",
               "Turn the remapper off for the program: "
               "tf.config.optimizer.set_experimental_options({'remapper': False}); the "
               "MatMul, BiasAdd and activation then cluster."),
    STRINGS: ("String ops ({ops}): XLA has no string type",
              "Do the string work outside the compiled step (in tf.data, or before the "
              "tf.function) and pass numbers in."),
    NO_KERNEL: ("No XLA kernel on this device for {ops}",
                "Replace them with ops XLA compiles, or move them out of the step; the "
                "clusters split around them."),
    CYCLE: ("Compilable, but kept out of {ops}: merging would close a cycle through "
            "unclustered nodes",
            "Move the unclustered ops on that path (see why they stay out) so that they no "
            "longer sit between the two parts."),
    RESOURCE: ("Compilable, but kept out of {ops}: merging would break resource variable "
               "semantics (TF keeps a variable's reads and writes in their order)",
               "Nothing to change in most programs: the variable's read or write runs "
               "outside the cluster."),
    UNLOGGED: ("Compilable but not clustered (the log gives no reason: e.g. a cluster below "
               "--tf_xla_min_cluster_size, or a node TF keeps on the host)",
               "If they would have made a cluster below the minimum size (TF drops those on "
               "purpose), TF_XLA_FLAGS=--tf_xla_min_cluster_size=1 lifts that limit."),
    NO_LOG: ("Not clustered; why is only in TF's log, and this folder has none",
             "Run again with the log kept in the folder: " + LOG_COMMAND),
    OTHER: ("{reason}", ""),
}


@dataclass(frozen=True, slots=True)
class NodeReason:
    """Why one node of the step graph is not in a cluster: the one answer the inspector,
    the 'Why not clustered' list and the CLI give."""

    kind: str
    key: str          # what groups it beside its kind: the cluster, or TF's words (other)
    detail: str       # TF's words for this node, or the cycle's path ('' when none)


def node_reasons(ix: TfIndex) -> dict[str, NodeReason]:
    """Each unclustered node of the step graph and why (once per index)."""
    return ix.derived("node-reasons", find_node_reasons)


def why_not_clustered(ix: TfIndex, node: str) -> str | None:
    """Why ``node`` stayed out of the clusters, in words; None when it is in one (or not
    in the step graph)."""
    r = node_reasons(ix).get(node)
    if r is None:
        return None
    if r.kind in (ARGS, REMAPPER, STRINGS, NO_KERNEL, OTHER) and r.detail:
        return r.detail                 # TF's own words
    n = ix.main.graph.node(node) if ix.main is not None else None
    text = _TEXT[r.kind][0].format(ops=r.key or (n.op if n else ""), reason=r.key)
    # a cycle's path is this node's own; the other kinds' title says it all
    return f"{text}: {r.detail}" if r.detail and r.kind == CYCLE else text


def find_node_reasons(ix: TfIndex) -> dict[str, NodeReason]:
    """What TF logged for the node ('Found uncompilable node', else its last 'Could not
    contract' line), else the graph's answer (a cycle through unclustered nodes), else
    that the log says nothing."""
    if ix.main is None:
        return {}
    clustered = {n.name for c in ix.clusters for n in c.nodes}
    blocks = {b.node: b for b in cycle_blocks(ix) if not b.node_is_cluster}
    out: dict[str, NodeReason] = {}
    for n in ix.main.graph.nodes:
        if n.name in clustered:
            continue
        r = ix.reason(n.name)
        kept = ix.kept_out(n.name)
        if r is not None:
            kind = _kind(n.op, r.reason)
            out[n.name] = NodeReason(kind, r.reason if kind == OTHER else "", r.reason)
        elif ix.log is None:
            out[n.name] = NodeReason(NO_LOG, "", "")
        elif kept is not None:
            other = kept.target if kept.source == n.name else kept.source
            c = ix.cluster_of(other)
            where = c.name if c is not None else other
            if kept.via:
                out[n.name] = NodeReason(CYCLE, where, f"via {', '.join(kept.via)}")
            elif "resource variable semantics" in kept.because:
                out[n.name] = NodeReason(RESOURCE, where, kept.because)
            else:
                out[n.name] = NodeReason(OTHER, kept.because, kept.because)
        elif n.name in blocks:
            b = blocks[n.name]
            out[n.name] = NodeReason(CYCLE, b.cluster, f"via {', '.join(b.via)}")
        else:
            out[n.name] = NodeReason(UNLOGGED, "", "")
    return out


def group_reasons(ix: TfIndex) -> list[ReasonGroup]:
    if ix.main is None:
        return []
    ops = {n.name: n.op for n in ix.main.graph.nodes}
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for node, r in node_reasons(ix).items():
        groups.setdefault((r.kind, r.key), []).append((node, ops[node], r.detail))
    order = [REMAPPER, STRINGS, NO_KERNEL, CYCLE, RESOURCE, OTHER, UNLOGGED, NO_LOG, ARGS]
    out = []
    for (kind, extra), members in sorted(groups.items(), key=lambda kv: order.index(kv[0][0])):
        title, fix = _TEXT[kind]
        names = ", ".join(sorted({op for _, op, _ in members}))
        if kind in (CYCLE, RESOURCE):
            names = extra
        title = title.format(ops=names, reason=extra)
        out.append(ReasonGroup(kind, title, fix, tuple((n, op) for n, op, _ in members),
                               members[0][2]))
    return out
