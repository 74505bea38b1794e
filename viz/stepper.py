"""Pure view builders for the stepper (HLO pass steps and TF graph dumps alike): timeline
chart and table, graph diff decorations, "only what changed" node sets, side-by-side text
diff, instruction history.

Nothing here reads files or touches Streamlit. The bridge gives the data
(``compiler_bridge.passes``: ``pass_timeline``, ``step_diff``, ``step_changes``,
``instruction_history``, ``ModuleDiff``, ``text_diff``); these
functions turn it into what the page shows. A typical page::

    tl = pass_timeline(dump, module)                     # cache by dump hash
    changes = step_changes(dump, tl)                     # optional: +/-/~ per step
    fig = timeline_figure(tl, current=i, changes=changes)
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points")
    # a click: event.selection.points[0]["customdata"] is the step index (an int)
    d = step_diff(dump, tl, i)                           # None on the first step
    deco = diff_decorations(d) if d else {}
    grouped = group(d.new, computation, GraphOptions(...))   # viz.grouping
    deco |= group_decorations(grouped, deco)             # collapsed groups show changes too
    view = draw(grouped, deco)                           # viz.graph
    legend = DIFF_LEGEND                                 # next to the graph's own legend
    only = changed_nodes(d, computation, radius=1)       # "only what changed" mode
    ghosts = removed_ghosts(d, computation)              # if the graph draws ghost nodes
    st.html(text_diff_html(text_diff(d, computations={computation}), ...))
    st.dataframe(diff_tables(d)["changed"]); st.caption(diff_summary(d))
    events = instruction_history(dump, tl, i, selected)   # each names the step to link
"""

from __future__ import annotations

import difflib
import html
from collections import deque
from dataclasses import dataclass
from typing import Mapping, Sequence

from compiler_bridge.passes import ComputationTextDiff, InstructionChange, ModuleDiff, TextRow
from compiler_bridge.hlo import HloModule
from compiler_bridge.passes import Step, Timeline
from compiler_bridge.steps import TF_GRAPH
from compiler_bridge.tf import NODE_KINDS, GraphDiff, NodeChange

from .grouping import GroupIndex, neighbourhood

# --------------------------------------------------------------------------- colours

# Okabe-Ito sky blue and orange: apart from every category fill (viz.categories) and from
# each other for protan, deutan and tritan vision too (the light green of "added" was
# the data-movement green to a protanope)
ADDED_FILL, ADDED_BORDER = "#56b4e9", "#0072b2"
CHANGED_FILL, CHANGED_BORDER = "#e69f00", "#a35a00"
REMOVED_BORDER = "#e03131"

# (label, colour) like viz.categories.LEGEND; the graph diff's legend entries
DIFF_LEGEND: list[tuple[str, str]] = [
    ("added in this step", ADDED_FILL),
    ("changed (hover: what changed)", CHANGED_FILL),
    ("red dashed border: instructions were removed here (their users or operands)",
     REMOVED_BORDER),
]
DIFF_GHOST = "(ghost node)"      # the legend entry of removed instructions drawn as ghosts


def diff_legend(compared: bool = False) -> list[tuple[str, str]]:
    """DIFF_LEGEND as a view shows it, with the ghosts' entry: against a pass step, or
    against a baseline compile (``compared``)."""
    out = [(name.replace("in this step", "(not in the baseline)") if compared else name, c)
           for name, c in DIFF_LEGEND]
    out.append((("only in the baseline " if compared else "removed ") + DIFF_GHOST, REMOVED_BORDER))
    return out

_METRICS = {
    "instructions": ("instructions", "#1c7ed6"),
    "fusions": ("fusions", "#e8590c"),
    "entry_instructions": ("ENTRY instructions", "#2b8a3e"),
    "computations": ("computations", "#7048e8"),
    # TF graph dumps
    "nodes": ("nodes", "#1c7ed6"),
    "clusters": ("clusters", "#e8590c"),
    "clustered": ("nodes in clusters", "#2b8a3e"),
}

_KIND_WORDS = {
    "renamed": "renamed", "fused": "fused", "unfused": "unfused", "moved": "moved",
    "opcode": "opcode", "shape": "shape", "layout": "layout", "operands": "operands",
    "attributes": "attributes", "fused_computation": "fused computation",
    "called_computation": "called computation",
}


def human_bytes(n: int | None) -> str:
    if n is None:
        return ""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


# --------------------------------------------------------------------------- timeline

LEGEND_ON_TOP = {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0,
                 "yanchor": "bottom"}


def step_counts(s: Step) -> str:
    """A step's counts in one line: HLO '1,234 instructions, 56 fusions, ...'; TF graph
    '26 nodes, 2 clusters, 17 nodes in clusters'."""
    if s.nodes is not None:
        return f"{s.nodes:,} nodes, {s.clusters} clusters, {s.clustered:,} nodes in clusters"
    return (f"{s.instructions:,} instructions, {s.fusions} fusions, "
            f"{s.computations} computations, {s.entry_instructions} in ENTRY")


def timeline_figure(timeline: Timeline, current: int | None = None,
                    hide_identical: bool = False,
                    metrics: Sequence[str] | None = None,
                    changes: Sequence[Mapping] | None = None, tensor_bytes: bool = True):
    """A plotly chart of counts across the steps; one point per step and metric.

    Every point's ``customdata`` is the step index (an int), so a click selects the step
    (``st.plotly_chart(..., on_select="rerun", selection_mode="points")``). Steps whose
    text equals the previous one are hollow (or left out with ``hide_identical``);
    error steps are red crosses on the x axis; ``current`` gets a vertical line.
    ``changes``: ``step_changes(dump, timeline)``, shown in the hover text.
    ``tensor_bytes`` adds that count on a second axis (dotted; HLO timelines only).
    ``metrics``: the step counts drawn (default: the timeline's own).
    """
    import plotly.graph_objects as go

    metrics = timeline.metrics if metrics is None else metrics
    tensor_bytes = tensor_bytes and timeline.source != TF_GRAPH
    unit = "nodes" if timeline.source == TF_GRAPH else "instructions"

    steps = timeline.visible(hide_identical)
    ok = [s for s in steps if s.ok]

    def hover(s: Step) -> str:
        lines = [f"<b>step {s.index}</b>: {html.escape(s.label)}"]
        if s.next_pass:
            lines.append(f"next: {html.escape(s.next_pass)}")
        lines.append(step_counts(s))
        if tensor_bytes:
            lines.append(f"ENTRY tensors {human_bytes(s.tensor_bytes)}")
        if changes is not None and s.index < len(changes):
            c = changes[s.index]
            if c.get("added") is not None:
                lines.append(f"+{c['added']} −{c['removed']} ~{c['changed']} {unit} vs "
                             "previous step")
        if s.identical:
            lines.append("<i>same nodes as the previous step</i>" if s.nodes is not None
                         else "<i>same text as the previous step</i>")
        return "<br>".join(lines)

    texts = [hover(s) for s in ok]
    fig = go.Figure()
    for key in metrics:
        name, colour = _METRICS.get(key, (key, "#495057"))
        fig.add_trace(go.Scatter(
            x=[s.index for s in ok], y=[getattr(s, key) for s in ok], name=name,
            mode="lines+markers", line={"color": colour, "width": 1.5, "shape": "hv"},
            marker={"size": [6 if s.identical else 8 for s in ok],
                    "symbol": ["circle-open" if s.identical else "circle" for s in ok],
                    "color": colour},
            customdata=[s.index for s in ok], hovertext=texts,
            hovertemplate="%{hovertext}<extra>" + name + "</extra>"))
    if tensor_bytes:
        fig.add_trace(go.Scatter(
            x=[s.index for s in ok], y=[s.tensor_bytes for s in ok], name="ENTRY tensor bytes",
            yaxis="y2", mode="lines+markers",
            line={"color": "#868e96", "width": 1, "dash": "dot", "shape": "hv"},
            marker={"size": 4, "color": "#868e96"}, customdata=[s.index for s in ok],
            hovertext=texts, hovertemplate="%{hovertext}<extra>bytes</extra>"))
    bad = [s for s in steps if not s.ok]
    if bad:
        fig.add_trace(go.Scatter(
            x=[s.index for s in bad], y=[0] * len(bad), name="does not parse",
            mode="markers", marker={"symbol": "x", "size": 11, "color": REMOVED_BORDER},
            customdata=[s.index for s in bad],
            hovertext=[f"<b>step {s.index}</b>: {html.escape(s.label)}<br>"
                       f"{html.escape(s.error.splitlines()[0][:200])}" for s in bad],
            hovertemplate="%{hovertext}<extra>error</extra>"))
    if current is not None:
        fig.add_vline(x=current, line={"color": "#212529", "width": 1.5, "dash": "dash"})
    layout = dict(
        height=300, margin={"l": 10, "r": 10, "t": 56, "b": 10}, hovermode="closest",
        title={"text": f"Pass timeline of {html.escape(timeline.module_name)} "
                       f"({len(timeline)} steps)",
               "font": {"size": 13}},
        xaxis={"title": {"text": "step", "standoff": 4}, "rangemode": "tozero"},
        yaxis={"title": None, "rangemode": "tozero"},
        # above the plot: below it, it covered the axis title
        legend=LEGEND_ON_TOP, plot_bgcolor="rgba(0,0,0,0)",
        clickmode="event+select")
    if tensor_bytes:
        layout["yaxis2"] = {"overlaying": "y", "side": "right", "rangemode": "tozero",
                            "ticksuffix": "B", "exponentformat": "SI",   # '1GB', not '1BB'
                            "showgrid": False, "title": None}
    fig.update_layout(**layout)
    return fig


def timeline_rows(timeline: Timeline, changes: Sequence[Mapping] | None = None,
                  hide_identical: bool = False) -> list[dict]:
    """The timeline as table rows (``st.dataframe``): one dict per step, same keys always
    (a TF graph's: step, pass, file, nodes, Δ, clusters, nodes in clusters, +, −, ~)."""
    rows = []
    prev_instr = None
    for s in timeline.steps:
        delta = None
        if s.count is not None and prev_instr is not None:
            delta = s.count - prev_instr
        if s.count is not None:
            prev_instr = s.count
        if hide_identical and s.identical:
            continue
        c = changes[s.index] if changes is not None and s.index < len(changes) else {}
        status = f"error: {s.error.splitlines()[0][:160]}" if s.error else \
            "same text" if s.identical else ""
        if timeline.source == TF_GRAPH:
            rows.append({"step": s.index, "pass": s.pass_name, "file": s.file,
                         "nodes": s.nodes, "Δ": delta, "clusters": s.clusters,
                         "nodes in clusters": s.clustered, "+": c.get("added"),
                         "−": c.get("removed"), "~": c.get("changed"),
                         "status": "same nodes" if s.identical else ""})
            continue
        rows.append({
            "step": s.index, "seq": s.sequence, "pipeline": s.pipeline, "pass": s.pass_name,
            "instructions": s.instructions, "Δ": delta, "fusions": s.fusions,
            "computations": s.computations, "ENTRY": s.entry_instructions,
            "tensor bytes": s.tensor_bytes,
            "+": c.get("added"), "−": c.get("removed"), "~": c.get("changed"),
            "status": status,
        })
    return rows


def shown_rows(rows: Sequence[Mapping]) -> list[dict]:
    """Table rows as a table shows them: a column nobody knows yet (the +/−/~ counts
    before they are counted) left out, and an unknown cell (the first step's Δ, a step
    that does not parse) a dash instead of a raw 'None'."""
    keys = [k for k in (rows[0] if rows else {}) if any(r[k] is not None for r in rows)]
    gaps = {k for k in keys if any(r[k] is None for r in rows)}
    out = []
    for r in rows:
        row = {}
        for k in keys:
            v = r[k]
            if k in gaps:     # one type per column: text here
                v = "–" if v is None else f"{v:+,}" if k == "Δ" else \
                    f"{v:,}" if isinstance(v, int) else str(v)
            row[k] = v
        out.append(row)
    return out


# --------------------------------------------------------------------------- graph diff

def _owners(module: HloModule) -> dict[str, str]:
    """Fused computation -> its fusion instruction (the first caller)."""
    out: dict[str, str] = {}
    for c in module.computations:
        for inst in c.instructions:
            if inst.opcode == "fusion":
                for callee in inst.called_names:
                    out.setdefault(callee, inst.name)
    return out


def _outermost(module: HloModule, owners: Mapping[str, str], name: str) -> list[str]:
    """The instruction and the fusions around it, innermost first."""
    out = [name]
    inst = module.find(name)
    seen = set()
    while inst is not None and inst.computation is not None:
        owner = owners.get(inst.computation.name)
        if owner is None or owner in seen:
            break
        seen.add(owner)
        out.append(owner)
        inst = module.find(owner)
    return out


def removed_anchors(diff: ModuleDiff, limit: int = 50) -> dict[str, list[str]]:
    """Where each removed instruction leaves a mark in the newer snapshot.

    newer instruction -> the removed (older) instructions it marks. A removed instruction
    marks what its users became (following users that were removed too), or else what
    its operands became; when the mark lies inside a fusion, the fusion instruction
    around it is marked too, so a collapsed fusion node shows it. Removed instructions
    with no mark at all are listed under the key ''.
    """
    old, new = diff.old, diff.new
    o2n = diff.old_to_new
    owners = _owners(new)
    out: dict[str, list[str]] = {}
    comps = {c.name: c for c in old.computations}
    for r in diff.removed:
        comp = comps.get(r.computation)
        marks: list[str] = []
        if comp is not None:
            seen = {r.name}
            queue = deque([r.name])
            while queue and len(seen) < limit:
                for u in comp.users_of(queue.popleft()):
                    if u.name in seen:
                        continue
                    seen.add(u.name)
                    if u.name in o2n:
                        marks.append(o2n[u.name])
                    else:
                        queue.append(u.name)
            if not marks:
                inst = comp.get(r.name)
                for op in inst.operand_names if inst is not None else ():
                    if op in o2n:
                        marks.append(o2n[op])
        if not marks:
            out.setdefault("", []).append(r.name)
            continue
        for m in dict.fromkeys(marks):
            for name in _outermost(new, owners, m):
                lst = out.setdefault(name, [])
                if not lst or lst[-1] != r.name:
                    lst.append(r.name)
    return out


@dataclass(frozen=True)
class Ghost:
    """A removed instruction, placed in the newer snapshot's graph of one computation:
    draw it as a red dashed node with edges from ``inputs`` and to ``outputs`` (newer
    instruction names in that computation; either may be empty)."""

    name: str                  # in the older snapshot
    opcode: str
    shape: str
    inputs: tuple[str, ...]    # what its operands became
    outputs: tuple[str, ...]   # what its users became
    label: str                 # 'removed · multiply · f32[128]'


def removed_ghosts(diff: ModuleDiff, computation: str | None = None,
                   limit: int = 200) -> list[Ghost]:
    """Ghost nodes for the removed instructions of one computation (the newer
    snapshot's ENTRY by default; its older counterpart is looked up), at most ``limit``
    (a pass that deletes thousands should be read in the tables, not the graph)."""
    new_comp = diff.new.get_computation(computation) if computation else diff.new.entry
    if new_comp is None:
        return []
    back = {v: k for k, v in diff.computation_map.items()}
    old_comp = diff.old.get_computation(back.get(new_comp.name, new_comp.name))
    if old_comp is None:
        return []
    o2n = diff.old_to_new
    here = new_comp.instruction_map
    out = []
    for r in diff.removed:
        if r.computation != old_comp.name:
            continue
        inst = old_comp.get(r.name)
        if inst is None:
            continue
        ins = tuple(dict.fromkeys(o2n[n] for n in inst.operand_names
                                  if n in o2n and o2n[n] in here))
        outs = tuple(dict.fromkeys(o2n[u.name] for u in old_comp.users_of(inst.name)
                                   if u.name in o2n and o2n[u.name] in here))
        out.append(Ghost(inst.name, inst.opcode, str(inst.shape), ins, outs,
                         f"removed · {inst.opcode} · {inst.shape}"))
        if len(out) >= limit:
            break
    return out


def _short_change(c: InstructionChange) -> str:
    det = c.details
    if "fused" in c.kinds:
        return f"~ fused into {det['fused'][1]}"
    if "layout" in c.kinds:
        a, b = det["layout"]
        return "~ layout " + a[a.find("{"):] + " → " + b[b.find("{"):]
    words = [_KIND_WORDS[k] for k in c.kinds if k != "renamed"]
    if "renamed" in c.kinds:
        words.insert(0, f"was {c.old.name}")
    return "~ " + ", ".join(words[:3])


def diff_decorations(diff: ModuleDiff) -> dict[str, dict[str, str]]:
    """``GraphOptions.decorations`` for the newer snapshot's graph.

    Added instructions are green, changed ones amber (the label says what changed, the
    tooltip the whole story: "sub.2 fused into fusion.3 (as sub.16)"), and instructions
    marked by a removal (``removed_anchors``) get a red dashed border and "✕ n removed".
    A new fusion's label counts the instructions fused into it. Keys are instruction
    names of the whole module (fused computations included, so an opened fusion cluster
    is coloured too).
    """
    out: dict[str, dict[str, str]] = {}
    fused_in: dict[str, int] = {}
    for f in diff.fusions:
        if f.new:
            fused_in[f.new] = len(f.absorbed)
    for r in diff.added:
        dup = diff.duplicates.get(r.name)
        label = "+ added"
        if r.opcode == "fusion" and fused_in.get(r.name):
            label = f"+ new fusion · {fused_in[r.name]} fused in"
        elif dup:
            label = f"+ copy of {dup}"
        out[r.name] = {"fillcolor": ADDED_FILL, "color": ADDED_BORDER, "penwidth": "2",
                       "label": label,
                       "tooltip": f"added in this step{' (a copy of ' + dup + ')' if dup else ''}"}
    for c in diff.changed:
        label = _short_change(c)
        if c.new.opcode == "fusion" and fused_in.get(c.new.name):
            label += f" · {fused_in[c.new.name]} fused in"
        out[c.new.name] = {"fillcolor": CHANGED_FILL, "color": CHANGED_BORDER, "penwidth": "2",
                           "label": label, "tooltip": c.describe()}
    for name, removed in removed_anchors(diff).items():
        if not name:
            continue
        shown = ", ".join(removed[:8]) + (", …" if len(removed) > 8 else "")
        dec = out.setdefault(name, {})
        dec["color"] = REMOVED_BORDER
        dec["penwidth"] = "3"
        dec["style"] = "rounded,filled,dashed"
        mark = f"✕ {len(removed)} removed"
        dec["label"] = f"{dec['label']}\n{mark}" if dec.get("label") else mark
        tip = f"removed next to this: {shown}"
        dec["tooltip"] = f"{dec['tooltip']}\n{tip}" if dec.get("tooltip") else tip
    return out


def group_decorations(view: GroupIndex, decorations: Mapping[str, Mapping[str, str]]
                      ) -> dict[str, dict[str, str]]:
    """Decorations for the groups (of a ``viz.grouping.Grouping`` or a ``GraphView``) that
    hold changes.

    A collapsed group draws one node for many instructions; this gives that node the
    diff's colour (amber if anything inside changed, else green if something was added)
    and a "+a ~c ✕r" line. Merge them into the decorations the grouping is drawn with.
    """
    counts: dict[str, list[int]] = {}
    for name, node_dec in decorations.items():
        gid = view.group_of.get(name, "")
        if not gid:
            continue
        fill = node_dec.get("fillcolor")
        slot = 0 if fill == ADDED_FILL else 1 if fill == CHANGED_FILL else None
        removed = node_dec.get("color") == REMOVED_BORDER
        if slot is None and not removed:
            continue
        while gid:
            count = counts.setdefault(gid, [0, 0, 0])
            if slot is not None:
                count[slot] += 1
            if removed:
                count[2] += 1
            info = view.groups.get(gid)
            gid = info.parent if info is not None else ""
    out: dict[str, dict[str, str]] = {}
    for gid, (a, c, r) in counts.items():
        dec: dict[str, str] = {}
        if c:
            dec.update(fillcolor=CHANGED_FILL, color=CHANGED_BORDER, penwidth="2")
        elif a:
            dec.update(fillcolor=ADDED_FILL, color=ADDED_BORDER, penwidth="2")
        if r:
            dec.update(color=REMOVED_BORDER, penwidth="3")
        parts = [p for p in (f"+{a}" if a else "", f"~{c}" if c else "",
                             f"✕{r}" if r else "") if p]
        dec["label"] = "diff: " + " ".join(parts)
        dec["tooltip"] = f"inside: {a} added, {c} changed, {r} marked by removals"
        out[gid] = dec
    return out


def changed_nodes(diff: ModuleDiff, computation: str | None = None, radius: int = 1,
                  decorations: Mapping[str, Mapping[str, str]] | None = None) -> set[str]:
    """Instructions of one computation (of the newer snapshot) to show in "only what
    changed" mode: the added, changed and removal-marked ones, plus everything within
    ``radius`` operand/user hops of them."""
    comp = diff.new.get_computation(computation) if computation else diff.new.entry
    if comp is None:
        return set()
    decorations = decorations if decorations is not None else diff_decorations(diff)
    return neighbourhood(comp, [i for i in comp.instructions if i.name in decorations], radius)


# --------------------------------------------------------------------------- tables

_NODE_WORDS = {"renamed": "renamed", "clustered": "clustered", "declustered": "declustered",
               "cluster": "other cluster", "op": "op", "inputs": "inputs",
               "controls": "control inputs", "device": "device", "attributes": "attributes"}
assert set(_NODE_WORDS) == set(NODE_KINDS)


def _node_change_row(c: NodeChange) -> dict:
    return {"node": c.new.name, "was": c.old.name if c.old.name != c.new.name else "",
            "op": c.new.op, "cluster": c.new.cluster or "",
            "what": ", ".join(_NODE_WORDS[k] for k in c.kinds), "detail": c.describe()}


def graph_diff_tables(diff: GraphDiff, limit: int = 2000) -> dict[str, list[dict]]:
    """A TF graph diff as tables: changed, added and removed nodes (key 'node')."""
    return {
        "changed": [_node_change_row(c) for c in diff.changed[:limit]],
        "added": [{"node": n.name, "op": n.op, "cluster": n.cluster or "",
                   "device": n.device} for n in diff.added[:limit]],
        "removed": [{"node": n.name, "op": n.op, "cluster": n.cluster or "",
                     "device": n.device} for n in diff.removed[:limit]],
    }


def graph_diff_summary(diff: GraphDiff) -> str:
    """One line: '0 nodes added, 0 removed, 17 changed (17 clustered)'."""
    s = diff.summary()
    detail = ", ".join(f"{s[k]} {_NODE_WORDS[k]}" for k in NODE_KINDS if s[k])
    return (f"{s['added']} nodes added, {s['removed']} removed, {s['changed']} changed"
            + (f" ({detail})" if detail else ""))


def diff_tables(diff: ModuleDiff | GraphDiff, limit: int = 2000) -> dict[str, list[dict]]:
    """The diff as tables (``st.dataframe``): changed, added, removed, fusions, layout
    changes and layout conflicts; each a list of dicts with fixed keys. A TF graph's
    diff: ``graph_diff_tables``."""
    if isinstance(diff, GraphDiff):
        return graph_diff_tables(diff, limit)
    return {
        "changed": [{"instruction": c.new.name, "was": c.old.name if c.old.name != c.new.name
                     else "", "where": c.new.where, "opcode": c.new.opcode,
                     "what": ", ".join(_KIND_WORDS[k] for k in c.kinds), "detail": c.describe()}
                    for c in diff.changed[:limit]],
        "added": [{"instruction": r.name, "opcode": r.opcode, "where": r.where,
                   "copy of": diff.duplicates.get(r.name, "")} for r in diff.added[:limit]],
        "removed": [{"instruction": r.name, "opcode": r.opcode, "where": r.where}
                    for r in diff.removed[:limit]],
        "fusions": [{"fusion": f.new or f.old, "status": f.status, "took in": len(f.absorbed),
                     "gave away": len(f.released), "detail": f.describe()}
                    for f in diff.fusions[:limit]],
        "layout changes": [{"instruction": c.name, "computation": c.computation,
                            "before": c.old_shape, "after": c.new_shape, "bytes": c.bytes}
                           for c in diff.layout_changes[:limit]],
        "layout conflicts": [{"inserted": c.instruction, "op": c.opcode, "tensor": c.operand,
                              "from": c.from_shape, "to": c.to_shape, "bytes moved": c.bytes,
                              "for": ", ".join(c.users[:6])}
                             for c in diff.layout_conflicts[:limit]],
    }


def diff_summary(diff: ModuleDiff | GraphDiff) -> str:
    """One line: '169 added, 0 removed, 154 changed (154 fused) · 35 fusions changed'
    (a TF graph's diff: ``graph_diff_summary``)."""
    if isinstance(diff, GraphDiff):
        return graph_diff_summary(diff)
    s = diff.summary()
    parts = [f"{s['added']} added, {s['removed']} removed, {s['changed']} changed"
             + (f" ({s['fused']} fused)" if s["fused"] else "")]
    if s["computations_added"] or s["computations_removed"]:
        parts.append(f"computations +{s['computations_added']} −{s['computations_removed']}")
    if diff.fusions:
        parts.append(f"{len(diff.fusions)} fusions changed")
    if s["layout_changes"]:
        parts.append(f"{s['layout_changes']} layout changes")
    if s["layout_conflicts"]:
        parts.append(f"{s['layout_conflicts']} layout conflicts "
                     f"({human_bytes(s['bytes_moved'])} moved)")
    if diff.reordered:
        parts.append(f"{len(diff.reordered)} computations reordered")
    if diff.header_changes:
        parts.append("header: " + ", ".join(sorted(diff.header_changes)))
    return " · ".join(parts)





# --------------------------------------------------------------------------- text diff

_CSS = """
.hl-diff{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#212529}
.hl-diff details{border:1px solid #dee2e6;border-radius:4px;margin:4px 0}
.hl-diff summary{cursor:pointer;padding:3px 8px;background:#f8f9fa;font-weight:600}
.hl-diff summary .st{font-weight:400;color:#495057;margin-left:8px}
.hl-diff table{border-collapse:collapse;width:100%;table-layout:fixed}
.hl-diff td{padding:0 6px;vertical-align:top;white-space:pre-wrap;word-break:break-all}
.hl-diff td.n{width:3.5em;color:#868e96;text-align:right;user-select:none;background:#f8f9fa}
.hl-diff th{font-weight:600;text-align:left;padding:2px 6px;background:#e9ecef}
.hl-diff tr.removed td.o,.hl-diff tr.replace td.o{background:#ffe3e3}
.hl-diff tr.added td.w,.hl-diff tr.replace td.w{background:#d3f9d8}
.hl-diff tr.changed td.o{background:#fff4e6}.hl-diff tr.changed td.w{background:#fff4e6}
.hl-diff tr.fold td{background:#f1f3f5;color:#868e96;text-align:center;font-style:italic}
.hl-diff span.d{background:#ffc9c9}.hl-diff td.w span.d{background:#b2f2bb}
.hl-diff div.note{color:#5c7cfa;font-size:11px}
.hl-diff .same{color:#868e96;padding:3px 8px}
"""


def _intraline(a: str, b: str, limit: int = 4000) -> tuple[str, str]:
    """Escaped a and b with their differing spans wrapped in <span class="d">."""
    if len(a) > limit or len(b) > limit:
        return html.escape(a), html.escape(b)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    xa, xb = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        sa, sb = html.escape(a[i1:i2]), html.escape(b[j1:j2])
        if tag == "equal":
            xa.append(sa)
            xb.append(sb)
        else:
            if sa:
                xa.append(f'<span class="d">{sa}</span>')
            if sb:
                xb.append(f'<span class="d">{sb}</span>')
    return "".join(xa), "".join(xb)


def _row_html(r: TextRow) -> str:
    if r.kind == "fold":
        return f'<tr class="fold"><td colspan="4">… {r.folded} unchanged lines …</td></tr>'
    if r.kind in ("changed", "replace"):
        left, right = _intraline(r.old_text, r.new_text)
    else:
        left, right = html.escape(r.old_text), html.escape(r.new_text)
    on = str(r.old_line) if r.old_text else ""
    nn = str(r.new_line) if r.new_text else ""
    left_note = f'<div class="note">{html.escape(r.old_note)}</div>' if r.old_note else ""
    right_note = f'<div class="note">{html.escape(r.note)}</div>' if r.note else ""
    return (f'<tr class="{r.kind}"><td class="n">{on}</td><td class="o">{left}{left_note}</td>'
            f'<td class="n">{nn}</td><td class="w">{right}{right_note}</td></tr>')


def text_diff_html(diffs: Sequence[ComputationTextDiff], old_title: str = "before",
                   new_title: str = "after", max_rows: int = 3000,
                   block: str = "computation", unit: str = "instructions") -> str:
    """Side-by-side HLO text diff, one collapsible section per computation (changed ones
    open, unchanged ones folded together at the end), like Compiler Explorer's diff view.

    Self-contained HTML with inline CSS (no scripts, nothing fetched); every piece of
    HLO text is escaped. ``max_rows`` caps the rows drawn per computation. ``block`` and
    ``unit`` name the sections and their lines (a TF graph's: 'node', 'lines').
    """
    parts = [f'<div class="hl-diff"><style>{_CSS}</style>']
    same = [d for d in diffs if d.status == "same"]
    for d in diffs:
        if d.status == "same":
            continue
        status = {"added": f"new {block}, {d.new_count} {unit}",
                  "removed": f"removed {block}, {d.old_count} {unit}"}.get(
            d.status, f"+{d.added} −{d.removed} ~{d.changed} · {d.old_count} → {d.new_count} "
                      f"{unit}")
        opened = " open" if d.status == "changed" else ""
        parts.append(f"<details{opened}><summary>{html.escape(d.title)}"
                     f'<span class="st">{html.escape(status)}</span></summary>')
        parts.append(f'<table><colgroup><col style="width:3.5em"><col><col style="width:3.5em">'
                     f'<col></colgroup><tr><th></th><th>{html.escape(old_title)}</th><th></th>'
                     f"<th>{html.escape(new_title)}</th></tr>")
        for r in d.rows[:max_rows]:
            parts.append(_row_html(r))
        if len(d.rows) > max_rows:
            parts.append(f'<tr class="fold"><td colspan="4">… {len(d.rows) - max_rows} more '
                         "rows not shown …</td></tr>")
        parts.append("</table></details>")
    if same:
        names = ", ".join(d.title for d in same[:200])
        more = f" and {len(same) - 200} more" if len(same) > 200 else ""
        parts.append(f"<details><summary>{len(same)} unchanged {block}s</summary>"
                     f'<div class="same">{html.escape(names + more)}</div></details>')
    if not diffs:
        parts.append('<div class="same">nothing to compare</div>')
    parts.append("</div>")
    return "".join(parts)
