"""A TF graph's dumps as a pass timeline (``compiler_bridge.steps``, the model HLO pass
timelines use too), and what changed between any two of them: nodes added, removed and
changed (op, inputs, device, attributes, the XLA cluster a node is in), each node's text
side by side.

Nodes are paired by name; those left over by their name without
mark_for_compilation_annotated's ``cluster_N/`` or ``unclustered/`` prefix, so the
annotated dump shows every node renamed, not removed and added again. ``_XlaCluster`` (and
the ``_XlaAlreadyClustered`` mark that comes with it) is reported as the node's cluster
('clustered into cluster_3'), not as an attribute change.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from ..dumps import Dump, DumpError
from ..steps import (GRAPH_PASS, TF_GRAPH, ComputationTextDiff, Step, TextRow, Timeline,
                     change_counts, line_rows)
from .graphdef import CLUSTER_ATTR, GRAPH, GraphReadError, TfGraph, TfNode, base_name, node_texts
from .index import GraphFile, GraphGroup, TfIndex

ALREADY_CLUSTERED_ATTR = "_XlaAlreadyClustered"
_CLUSTER_ATTRS = frozenset({CLUSTER_ATTR, ALREADY_CLUSTERED_ATTR})
METRICS = ("nodes", "clusters", "clustered")
# what a change can be, in the order a row lists them
NODE_KINDS = ("renamed", "clustered", "declustered", "cluster", "op", "inputs", "controls",
              "device", "attributes")


@dataclass(frozen=True, slots=True)
class NodeChange:
    """One node in both dumps, changed."""

    old: TfNode
    new: TfNode
    kinds: tuple[str, ...]        # of NODE_KINDS

    def describe(self) -> str:
        """'clustered into cluster_0', 'renamed from pre/Sum', 'op Sum → Mean', ..."""
        o, n = self.old, self.new
        parts = []
        for k in self.kinds:
            if k == "renamed":
                parts.append(f"renamed from {o.name}")
            elif k == "clustered":
                parts.append(f"clustered into {n.cluster}")
            elif k == "declustered":
                parts.append(f"taken out of {o.cluster}")
            elif k == "cluster":
                parts.append(f"moved from {o.cluster} to {n.cluster}")
            elif k == "op":
                parts.append(f"op {o.op} → {n.op}")
            elif k in ("inputs", "controls"):
                was, now = _inputs(o, k), _inputs(n, k)
                plus = [x for x in now if x not in was]
                minus = [x for x in was if x not in now]
                what = "inputs" if k == "inputs" else "control inputs"
                if plus or minus:
                    parts.append(f"{what} " + ", ".join(["+" + x for x in plus[:4]]
                                                        + ["−" + x for x in minus[:4]]))
                else:
                    parts.append(f"{what} reordered")
            elif k == "device":
                parts.append(f"device {o.device or '(none)'} → {n.device or '(none)'}")
            elif k == "attributes":
                before, after = _attrs(o), _attrs(n)
                keys = ["+" + a for a in after if a not in before] + \
                    ["−" + a for a in before if a not in after] + \
                    ["~" + a for a in after if a in before and before[a] != after[a]]
                parts.append("attributes " + ", ".join(keys[:6]))
        return "; ".join(parts)


@dataclass(frozen=True)
class GraphDiff:
    """What changed from one dump of a graph (``old_file``) to another (``new_file``)."""

    old_file: str
    new_file: str
    added: tuple[TfNode, ...]
    removed: tuple[TfNode, ...]
    changed: tuple[NodeChange, ...]
    unchanged: int
    new_to_old: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def change_of_new(self, name: str) -> NodeChange | None:
        return next((c for c in self.changed if c.new.name == name), None)

    def summary(self) -> dict[str, int]:
        kinds = {k: sum(1 for c in self.changed if k in c.kinds) for k in NODE_KINDS}
        return {"added": len(self.added), "removed": len(self.removed),
                "changed": len(self.changed), "unchanged": self.unchanged, **kinds}


def _inputs(n: TfNode, kind: str) -> tuple[str, ...]:
    return tuple(base_name(x) for x in (n.inputs if kind == "inputs" else n.controls))


def _attrs(n: TfNode) -> dict[str, str]:
    return {k: v for k, v in n.attrs if k not in _CLUSTER_ATTRS}


def _kinds(o: TfNode, n: TfNode) -> tuple[str, ...]:
    out = []
    if o.name != n.name:
        out.append("renamed")
    if o.cluster != n.cluster:
        out.append("clustered" if o.cluster is None else
                   "declustered" if n.cluster is None else "cluster")
    if o.op != n.op:
        out.append("op")
    for k in ("inputs", "controls"):
        if _inputs(o, k) != _inputs(n, k):
            out.append(k)
    if o.device != n.device:
        out.append("device")
    if _attrs(o) != _attrs(n):
        out.append("attributes")
    return tuple(out)


def graph_diff(old: TfGraph, new: TfGraph) -> GraphDiff:
    """Nodes of ``new`` against ``old``: paired by name, then by name without the
    annotated dump's cluster prefix (when that name is unique on both sides)."""
    old_by = {n.name: n for n in old.nodes}
    new_by = {n.name: n for n in new.nodes}
    pairs = {name: name for name in new_by if name in old_by}
    lost = [n for n in old.nodes if n.name not in pairs]
    fresh = [n for n in new.nodes if n.name not in pairs]

    def unique(nodes: list[TfNode]) -> dict[str, TfNode]:
        seen: dict[str, list[TfNode]] = {}
        for n in nodes:
            seen.setdefault(n.base_name, []).append(n)
        return {k: v[0] for k, v in seen.items() if len(v) == 1}

    lost_by, fresh_by = unique(lost), unique(fresh)
    for base, n in fresh_by.items():
        o = lost_by.get(base)
        if o is not None:
            pairs[n.name] = o.name
    paired_old = set(pairs.values())
    changed = []
    unchanged = 0
    for n in new.nodes:
        if n.name not in pairs:
            continue
        o = old_by[pairs[n.name]]
        kinds = _kinds(o, n)
        if kinds:
            changed.append(NodeChange(o, n, kinds))
        else:
            unchanged += 1
    return GraphDiff(old.file, new.file,
                     tuple(n for n in new.nodes if n.name not in pairs),
                     tuple(n for n in old.nodes if n.name not in paired_old),
                     tuple(changed), unchanged, pairs)


# --------------------------------------------------------------------------- timeline

def _files(group: GraphGroup) -> list[GraphFile]:
    # FunctionDef dumps (encapsulate_fdef_cluster_N) are the cluster's function, not a graph
    return [f for f in group.files if f.graph.kind == GRAPH]


def _step(index: int, f: GraphFile, prev: GraphFile | None, names: frozenset[str]) -> Step:
    clusters = f.graph.clusters()
    # after encapsulation each cluster is one call node whose op is the cluster's name
    calls = sum(1 for n in f.graph.nodes if n.cluster is None and n.op in names)
    identical = prev is not None and prev.graph.nodes == f.graph.nodes
    return Step(index, f.path, GRAPH_PASS, "", f.pass_.name, sequence=index,
                identical=identical, nodes=len(f.graph.nodes),
                clusters=len(clusters) + calls,
                clustered=sum(len(v) for v in clusters.values()),
                part=f.pass_.cluster or "")


def graph_timeline(dump: Dump, ix: TfIndex, group: GraphGroup | None = None) -> Timeline:
    """The dumps of one graph (default: the step graph) as a timeline, in the order the
    passes ran; built once per index and graph."""
    g = group if group is not None else ix.step
    if g is None:
        return Timeline("tf:", "TF graph", (), True, dump_key=dump.key, source=TF_GRAPH,
                        unit="node", metrics=METRICS)

    def build(_: TfIndex) -> Timeline:
        assert g is not None
        files = _files(g)
        names = frozenset(c.name for c in ix.clusters)
        steps = tuple(_step(k, f, files[k - 1] if k else None, names)
                      for k, f in enumerate(files))
        name = "the step graph" if g is ix.step else f"graph {g.index}"
        return Timeline(f"tf:{g.index}", name, steps, True, dump_key=dump.key,
                        source=TF_GRAPH, unit="node", metrics=METRICS)
    return ix.derived(f"timeline:{g.index}", build)


def _graph_of(ix: TfIndex, path: str) -> TfGraph:
    for f in ix.files:
        if f.path == path:
            return f.graph
    raise KeyError(f"no TF graph dump {path}")


def graph_step_diff(ix: TfIndex, timeline: Timeline, index: int,
                    against: int | None = None) -> GraphDiff | None:
    """The diff from step ``against`` (default: the step before ``index`` it compares
    with) to step ``index``; None when there is nothing to compare with. Kept per index."""
    if against is None:
        against = timeline.previous_ok(index)
        if against is None:
            return None
    old, new = timeline.step(against).file, timeline.step(index).file
    return ix.derived(f"diff:{old}\0{new}",
                      lambda x: graph_diff(_graph_of(x, old), _graph_of(x, new)))


def graph_step_changes(ix: TfIndex, timeline: Timeline) -> list[dict]:
    """Per step, nodes added/removed/changed against the step it compares with (zeros for
    the first step and identical ones)."""
    return change_counts(timeline, lambda i, prev: graph_step_diff(ix, timeline, i, prev))


def _texts(dump: Dump, path: str, names: Collection[str]) -> dict[str, str]:
    try:
        return node_texts(dump.read_bytes(path), path, names)
    except (OSError, KeyError, DumpError, GraphReadError):
        return {}


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n") if text else []


def graph_text_diff(dump: Dump, diff: GraphDiff, names: Collection[str] | None = None,
                    context: int = 3) -> list[ComputationTextDiff]:
    """Per added, removed or changed node (``names``: only these, by either side's
    name), its text (the NodeDef as TF wrote it) in both dumps side by side."""
    wanted = None if names is None else set(names)

    def keep(*ns: str) -> bool:
        return wanted is None or any(n in wanted for n in ns)

    changed = [c for c in diff.changed if keep(c.old.name, c.new.name)]
    added = [n for n in diff.added if keep(n.name)]
    removed = [n for n in diff.removed if keep(n.name)]
    old = _texts(dump, diff.old_file, [c.old.name for c in changed] + [n.name for n in removed])
    new = _texts(dump, diff.new_file, [c.new.name for c in changed] + [n.name for n in added])
    out = []
    for c in changed:
        a, b = _lines(old.get(c.old.name, "")), _lines(new.get(c.new.name, ""))
        rows, plus, minus, tilde = line_rows(a, b, context)
        out.append(ComputationTextDiff(c.old.name, c.new.name, "changed", tuple(rows),
                                       len(a), len(b), plus, minus, tilde))
    for n in added:
        b = _lines(new.get(n.name, ""))
        out.append(ComputationTextDiff("", n.name, "added", tuple(
            TextRow("added", new_line=k + 1, new_text=x) for k, x in enumerate(b)),
            0, len(b), added=len(b)))
    for n in removed:
        a = _lines(old.get(n.name, ""))
        out.append(ComputationTextDiff(n.name, "", "removed", tuple(
            TextRow("removed", k + 1, x) for k, x in enumerate(a)), len(a), 0, removed=len(a)))
    return out
