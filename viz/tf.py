"""TF cluster view builders: the step graph as DOT with each XLA cluster a coloured box
(open: its nodes inside; closed: one node standing for them), unclustered nodes outside,
data edges solid and control ('^') edges dashed, variables and resources as cylinders; the
clusters table and a TF node's inspector rows.

Ids in the SVG: ``node:<tf node>`` for nodes, ``group:<cluster>`` for a cluster (closed
node or open box), ``group:scope:<name>`` for unclustered nodes folded by name scope when
there are more than the budget.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from compiler_bridge import Dump
from compiler_bridge.dumps import DumpModule
from compiler_bridge.perf import TraceError, measure
from compiler_bridge.tf import Cluster, TfGraph, TfIndex, TfNode, why_not_clustered

from .dot import quote, quote_text
from .stepper import ADDED_BORDER, ADDED_FILL, CHANGED_BORDER, CHANGED_FILL

# one colour per cluster (fill of a closed cluster, border of an open one) and its light
# tint (fill of an open cluster's box)
PALETTE = (("#1971c2", "#e7f5ff"), ("#2f9e44", "#ebfbee"), ("#e8590c", "#fff4e6"),
           ("#9c36b5", "#f8f0fc"), ("#0c8599", "#e3fafc"), ("#c2255c", "#fff0f6"),
           ("#5c940d", "#f4fce3"), ("#e67700", "#fff9db"))
REASON_BORDER = "#e03131"       # nodes the log says XLA cannot compile
BUDGET = 300                    # unclustered nodes drawn one by one; more fold by scope
FOLDERS = 30                    # scope folders in a folded cluster's box; the rest share one
MAX_LABEL = 40


def colour(index: int) -> tuple[str, str]:
    return PALETTE[index % len(PALETTE)]


def _short(text: str, n: int = MAX_LABEL) -> str:
    return text if len(text) <= n else "…" + text[-(n - 1):]


@dataclass(frozen=True)
class TfDrawing:
    dot: str
    drawn: int                  # nodes drawn (TF nodes + closed clusters + scopes)
    edges: int
    folded: bool                # unclustered nodes folded by name scope
    ids: dict[str, str]         # TF node -> the svg id that shows it
    home: str = ""              # the svg id to open on when the graph is too big to read
                                # whole: the largest cluster, box or node


def _scope(name: str) -> str:
    return name.split("/", 1)[0] if "/" in name else ""


def _uncompilable(ix: TfIndex, name: str) -> bool:
    r = ix.reason(name)
    return r is not None and "top level _Arg or _Retval" not in r.reason


@dataclass(frozen=True)
class _Box:
    name: str
    nodes: list[TfNode]
    module: DumpModule | None


def cluster_dot(ix: TfIndex, opened: frozenset[str] = frozenset(), selected: str = "",
                budget: int = BUDGET, graph: TfGraph | None = None,
                added: frozenset[str] = frozenset(),
                changed: frozenset[str] = frozenset()) -> TfDrawing:
    """The step graph as mark_for_compilation left it, or ``graph`` (another pass's dump
    of it, its clusters read from its own nodes); ``added`` and ``changed``: nodes the pass
    stepper's diff marks (the HLO diff's colours)."""
    if graph is None:
        if ix.main is None:
            return TfDrawing("digraph tf {}\n", 0, 0, False, {})
        graph = ix.main.graph
    modules = {c.name: c.module for c in ix.clusters}
    boxes = [_Box(name, nodes, modules.get(name)) for name, nodes in graph.clusters().items()]
    cluster_of = {n.name: b.name for b in boxes for n in b.nodes}
    index = {c.name: i for i, c in enumerate(ix.clusters)}
    for b in boxes:
        index.setdefault(b.name, len(index))
    reasons = {n.name for n in graph.nodes if _uncompilable(ix, n.base_name)}
    unclustered = [n for n in graph.nodes if n.name not in cluster_of]
    # open clusters holding more nodes than a view draws (Graphviz takes minutes on a box
    # of 800): the largest fold by name scope inside their box, until the rest fit
    sizes = sorted(((len(b.nodes), b.name) for b in boxes if b.name in opened), reverse=True)
    total = sum(size for size, _ in sizes)
    fold_in: set[str] = set()
    for size, name in sizes:
        if total <= budget:
            break
        fold_in.add(name)
        total -= size
    folded = len(unclustered) > budget or bool(fold_in)
    # a box lays out slowly even with one folder per scope (a 400-layer model): the
    # scopes with most nodes get a folder each, the others one together
    shown_scopes = {}
    for name in fold_in:
        counts = Counter(_scope(n.name) for b in boxes if b.name == name for n in b.nodes)
        shown_scopes[name] = {sc for sc, _ in counts.most_common(FOLDERS)} \
            if len(counts) > FOLDERS else set(counts)
    ids: dict[str, str] = {}
    for n in graph.nodes:
        home = cluster_of.get(n.name)
        if home in fold_in and n.name != selected:
            scope = _scope(n.name)
            ids[n.name] = (f"group:scope:{home}/{scope}" if scope in shown_scopes[home]
                           else f"group:scope:{home}/*")
        elif home is not None:
            ids[n.name] = f"node:{n.name}" if home in opened else f"group:{home}"
        elif folded and _scope(n.name) and n.name != selected:
            ids[n.name] = f"group:scope:{_scope(n.name)}"
        else:
            ids[n.name] = f"node:{n.name}"
    lines = ["digraph tf {",
             '  graph [rankdir=TB, nodesep=0.25, ranksep=0.35, fontname="Helvetica", '
             'fontsize=11, bgcolor="transparent"];',
             '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", '
             'color="#868e96", fontname="Helvetica", fontsize=10, height=0.3];',
             '  edge [color="#868e96", arrowsize=0.6];']
    drawn = 0

    def node_line(n: TfNode, indent: str) -> str:
        attrs = {"id": f"node:{n.name}", "label": f"{_short(n.base_name)}\n{n.op}",
                 "tooltip": f"{n.name} ({n.op})"}
        if n.is_resource:
            attrs["shape"] = "cylinder"
            attrs["style"] = "filled"
            attrs["fillcolor"] = "#f1f3f5"
        if n.name in reasons:
            attrs["color"] = REASON_BORDER
            attrs["penwidth"] = "2"
        if n.name in added:
            attrs.update(fillcolor=ADDED_FILL, color=ADDED_BORDER)
        elif n.name in changed:
            attrs.update(fillcolor=CHANGED_FILL, color=CHANGED_BORDER)
        if n.op in index:           # after encapsulation: the cluster as one call
            line, _ = colour(index[n.op])
            attrs.update(shape="box3d", style="filled", fillcolor=line, fontcolor="#ffffff",
                         color=line)
        if n.name == selected:
            attrs["penwidth"] = "3"
        parts = ", ".join(f"{k}={quote_text(v) if k in ('label', 'tooltip') else quote(v)}"
                          for k, v in attrs.items())
        return f"{indent}{quote(n.name)} [{parts}];"

    for c in boxes:
        line, fill = colour(index[c.name])
        module = f"module {c.module.id}" if c.module is not None else "no module"
        if c.name in opened:
            lines.append(f"  subgraph {quote('cluster_box_' + c.name)} {{")
            title = f"{c.name} · {len(c.nodes)} nodes · {module}"
            if c.name in fold_in:
                title += " · folded by name scope"
            lines.append(f"    id={quote('group:' + c.name)}; label={quote_text(title)};")
            lines.append(f'    style="rounded,filled"; color="{line}"; fillcolor="{fill}"; '
                         'penwidth=2;')
            inner: Counter[str] = Counter()
            for n in c.nodes:
                if ids[n.name].startswith("group:scope:"):
                    inner[ids[n.name]] += 1
                else:
                    lines.append(node_line(n, "    "))
                    drawn += 1
            for sid, count in sorted(inner.items()):
                scope = sid[len(f"group:scope:{c.name}/"):]
                label = {"": "(no scope)", "*": "other scopes"}.get(scope, scope + "/")
                lines.append(_folder_line(sid, f"{label}\n{count} nodes", "    "))
                drawn += 1
            lines.append("  }")
        else:
            label = f"{c.name}\n{len(c.nodes)} nodes · {module}"
            new = sum(1 for n in c.nodes if n.name in added)
            moved = sum(1 for n in c.nodes if n.name in changed)
            if new or moved:        # a closed box still says what the pass did inside
                label += "\n" + " · ".join(x for x in (f"{new} added" if new else "",
                                                        f"{moved} changed" if moved else "")
                                             if x)
            lines.append(f"  {quote('group:' + c.name)} [id={quote('group:' + c.name)}, "
                         f"label={quote_text(label)}, shape=box3d, style=filled, "
                         f'fillcolor="{line}", fontcolor="#ffffff", color="{line}", '
                         f"tooltip={quote_text(c.name + ': double-click to open')}];")
            drawn += 1
    scopes: Counter[str] = Counter()
    for n in unclustered:
        sid = ids[n.name]
        if sid.startswith("group:scope:"):
            scopes[sid] += 1
        else:
            lines.append(node_line(n, "  "))
            drawn += 1
    for sid, count in sorted(scopes.items()):
        lines.append(_folder_line(sid, f"{sid[12:]}/\n{count} unclustered nodes", "  "))
        drawn += 1
    edges: set[tuple[str, str, bool]] = set()
    for n in graph.nodes:
        dst = ids[n.name]
        for srcs, control in ((n.inputs, False), (n.controls, True)):
            for s in srcs:
                src = ids.get(s)
                if src is not None and src != dst:
                    edges.add((src, dst, control))
    data_pairs = {(a, b) for a, b, control in edges if not control}
    kept = 0
    for src_id, dst_id, control in sorted(edges):
        if control and (src_id, dst_id) in data_pairs:
            continue        # a data edge already joins them
        style = ' [style=dashed, color="#adb5bd"]' if control else ""
        lines.append(f"  {quote(_dot_name(src_id))} -> {quote(_dot_name(dst_id))}{style};")
        kept += 1
    lines.append("}")
    largest = max(boxes, key=lambda b: len(b.nodes), default=None)    # the first of them
    return TfDrawing("\n".join(lines) + "\n", drawn, kept, folded, ids,
                     f"group:{largest.name}" if largest is not None else "")


def _folder_line(sid: str, label: str, indent: str) -> str:
    """A folder standing for the nodes of one name scope."""
    return (f"{indent}{quote(sid)} [id={quote(sid)}, label={quote_text(label)}, "
            'shape=folder, fillcolor="#f8f9fa", color="#adb5bd"];')


def _dot_name(svg_id: str) -> str:
    """The DOT node name of what an svg id shows (TF nodes are named by their TF name)."""
    return svg_id[5:] if svg_id.startswith("node:") else svg_id


# --------------------------------------------------------------------------- tables

@dataclass(frozen=True)
class Runtime:
    """A module's measured kernel time per execution: each kernel's median self time,
    summed (the profiler trace's events, matched by ``compiler_bridge.perf``)."""

    us: float
    executions: int


def module_runtimes(dump: Dump) -> dict[str, Runtime]:
    """Module id -> its measured runtime, from the profiler traces in the dump (none: {})."""
    if not dump.traces:
        return {}
    try:
        measured = measure(dump)
    except TraceError:
        return {}
    out = {}
    for mid, timings in measured.modules.items():
        kernels = list(timings.kernels.values())
        if kernels:
            out[mid] = Runtime(sum(k.median_us for k in kernels),
                               max(k.count for k in kernels))
    return out


def cluster_rows(ix: TfIndex, runtimes: dict[str, Runtime] | None = None) -> list[dict]:
    """One row per cluster of the step graph: nodes, share, op histogram, XLA module, and
    its measured runtime when the dump has a profiler trace."""
    total = len(ix.main.graph.nodes) if ix.main is not None else 0
    rows = []
    for c in ix.clusters:
        row = {"cluster": c.name, "nodes": len(c.nodes),
               "share": f"{100 * len(c.nodes) / total:.1f}%" if total else ""}
        rows.append(_cluster_row(row, c, runtimes))
    return rows


def elsewhere_rows(ix: TfIndex, runtimes: dict[str, Runtime] | None = None) -> list[dict]:
    """One row per cluster TF built in another graph than the step graph, with its graph."""
    return [_cluster_row({"cluster": c.name, "graph": c.graph
                          + (f" (tf.data function {c.pipeline})" if c.pipeline else ""),
                          "nodes": len(c.nodes)}, c, runtimes) for c in ix.elsewhere]


def _cluster_row(row: dict, c: Cluster, runtimes: dict[str, Runtime] | None) -> dict:
    ops = sorted(c.ops.items(), key=lambda kv: (-kv[1], kv[0]))
    row["ops"] = ", ".join(f"{op} ×{k}" for op, k in ops)
    row["module"] = c.module.label if c.module is not None else "(not compiled in this dump)"
    if runtimes:
        rt = runtimes.get(c.module.id) if c.module is not None else None
        row["measured"] = (f"{rt.us:,.1f} µs per run ({rt.executions} runs)"
                           if rt is not None else "no events")
    return row


def loose_rows(ix: TfIndex) -> list[dict]:
    """One row per cluster module no graph dump holds: its size and ops from TF's log."""
    rows = []
    for c in ix.loose:
        ops = sorted((c.summary.ops if c.summary else {}).items(), key=lambda kv: (-kv[1], kv[0]))
        rows.append({"cluster": c.name,
                     "nodes (TF's log)": c.summary.size if c.summary else None,
                     "ops (TF's log)": ", ".join(f"{op} ×{k}" for op, k in ops),
                     "module": c.module.label})
    return rows


def jit_rows(ix: TfIndex) -> list[dict]:
    """One row per jit module; 'called' tells apart the modules of one function."""
    return [{"function": j.function,
             "called": "from Python (eager)" if j.eager else "from a tf.function's graph",
             "inputs": j.inputs or "–", "module": j.module.label} for j in ix.jit]


def node_rows(ix: TfIndex, name: str, graph: TfGraph | None = None) -> list[tuple[str, str]]:
    """The inspector of a TF node of ``graph`` (default: the step graph as
    mark_for_compilation left it): op, device, cluster or why not, inputs, attrs."""
    graph = graph if graph is not None else ix.main.graph if ix.main is not None else None
    if graph is None:
        return []
    n = graph.node(name)
    if n is None:
        return []
    modules = {c.name: c.module for c in ix.clusters}
    rows = [("node", n.name), ("op", n.op), ("device", n.device or "(not placed)")]
    if n.cluster is not None:
        m = modules.get(n.cluster)
        rows.append(("cluster", n.cluster + (f" → module {m.label}" if m else "")))
    elif n.op in modules:
        m = modules[n.op]
        rows.append(("cluster", f"the call of {n.op}" + (f" → module {m.label}" if m else "")))
    else:       # the answer 'Why not clustered' gives (one source for both)
        why = why_not_clustered(ix, n.base_name) or "(see 'Why not clustered')"
        rows.append(("not clustered", why))
    if n.is_resource:
        rows.append(("state", "variable / resource"))
    rows.append(("inputs", ", ".join(n.inputs) or "-"))
    if n.controls:
        rows.append(("control inputs", ", ".join("^" + x for x in n.controls)))
    users = [u.name for u in graph.nodes if name in u.inputs or name in u.controls]
    rows.append(("users", ", ".join(users[:20]) + (" …" if len(users) > 20 else "") or "-"))
    for k, v in n.attrs:
        rows.append((f"attr {k}", v if len(v) <= 200 else v[:199] + "…"))
    return rows
