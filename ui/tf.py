"""The TensorFlow cluster view: what XLA auto-clustering put into each cluster, what it left
out and why, and each cluster's HLO module. Shown instead of the HLO explorer when the dump
has TF graph dumps and no module is chosen (the URL's ``module`` is empty); a cluster's or
jit function's module opens in the explorer, and the sidebar leads back.

The view lives in the URL like the rest: ``selected`` is the inspected TF node, ``expanded``
the open clusters, ``stage`` the pass step shown and ``compare`` the step it is diffed with.
The step graph's dumps go through the HLO pass explorer's stepper and diff tabs
(``ui.stepper``), from a TF graph timeline (``compiler_bridge.tf.graph_timeline``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from compiler_bridge import Dump, HloParseError
from compiler_bridge.dumps import AFTER, BEFORE, DUMP_EXPECTED
from compiler_bridge.passes import Timeline
from compiler_bridge.tf import (LOG_COMMAND, Cluster, GraphDiff, TfGraph, TfIndex, base_name,
                                call_bodies, caller_of, cycle_blocks, graph_timeline, has_tf, instructions_of,
                                reason_groups, tf_index, tf_node_of)
from viz import LayoutError, ViewState, render_svg
from viz import tf as TV

from .component import graph_events, graph_view, handled
from .kit import Navigator, code, go, md, section, selected_row
from .model import Opened
from .stepper import current_diff, graph_tabs, stepper

TF_GRAPH_KEY = "tf-graph"
PASS_PREFIX = "tf:"     # older links' stage for a pass: 'tf:<graph file>' (now 'pass:NNNN')
MAX_PICKER = 1000      # nodes listed in the node picker; more: a name box


def shows(nav: Navigator, opened: Opened) -> bool:
    """Whether this run shows the cluster view; if so the TF graphs are read now, so that
    the dump's list of unreadable files, drawn next, names the graph files too."""
    if nav.state.module or not has_tf(opened.dump):
        return False
    tf_index(opened.dump)
    return True


def _back(state: ViewState) -> ViewState:
    return ViewState(dump=state.dump, grouping=state.grouping, overlay=state.overlay,
                     trace=state.trace)


def _select(state: ViewState, name: str) -> ViewState:
    return state.with_(selected=name)


def _toggle(state: ViewState, cluster: str) -> ViewState:
    return state.toggle_expanded(cluster).with_(selected="")


def _set_open(state: ViewState, key: str) -> ViewState:
    return state.with_(expanded=tuple(st.session_state.get(key) or ()))


def _to_instruction(state: ViewState, module: str, instruction: str
                    ) -> tuple[ViewState, str]:
    return (ViewState(dump=state.dump, module=module, selected=instruction,
                      grouping=state.grouping, overlay=state.overlay, trace=state.trace),
            f"node:{instruction}")


def _open_module(state: ViewState, module: str) -> ViewState:
    return ViewState(dump=state.dump, module=module, grouping=state.grouping,
                     overlay=state.overlay, trace=state.trace)


def _select_in_graph(state: ViewState, name: str, cluster: str) -> ViewState:
    """A node picked in a diff table: selected, its cluster opened so it is drawn."""
    expanded = state.expanded
    if cluster and cluster not in expanded:
        expanded = tuple(expanded) + (cluster,)
    return state.with_(selected=name, expanded=tuple(expanded))


def _on_node_row(key: str, rows: list[dict], kind: str) -> None:
    """A click on a row of the pass diff's tables (``viz.stepper.graph_diff_tables``)."""
    row = selected_row(key, len(rows))
    if row is None or not rows[row].get("node"):
        return
    go(_select_in_graph, str(rows[row]["node"]), str(rows[row].get("cluster") or ""))


def _to_node(state: ViewState, node: str, cluster: str) -> ViewState:
    return _back(state).with_(selected=node, expanded=(cluster,) if cluster else ())


def back_button(nav: Navigator, opened: Opened) -> None:
    """Sidebar, in the HLO explorer of a TF dump: back to the cluster view, and to the TF
    node the selected HLO instruction comes from (its metadata's op_name)."""
    dump = opened.dump
    if not has_tf(dump):
        return
    st.sidebar.button("◀ TensorFlow clusters", key="tf-back", on_click=go, args=(_back,),
                      help="The TF graph's XLA clusters, their modules and why nodes "
                           "stayed out", width="stretch")
    state = nav.state
    if not state.selected or ":" in state.selected:
        return
    ix = tf_index(dump)
    cluster = next((c for c in ix.clusters if c.module is not None
                    and c.module.id == state.module), None)
    module = cluster.module if cluster is not None else None
    if cluster is None or module is None:
        return
    try:
        hlo = dump.stage(module, state.stage if state.stage == BEFORE else AFTER)
    except (KeyError, HloParseError):
        return
    node = tf_node_of(hlo, state.selected)
    if node and ix.cluster_of(node) is None:     # a called function's node: its call's
        node = caller_of(ix, node) or node
    if node and ix.cluster_of(node) is cluster:
        st.sidebar.button(f"◀ TF node {md(node)}", key="tf-back-node", on_click=go,
                          args=(_to_node, node, cluster.name), width="stretch",
                          help="The TF node this HLO instruction was compiled from")


def _events(nav: Navigator, ix: TfIndex) -> None:
    for ev in graph_events(TF_GRAPH_KEY):
        if ev.kind in ("click", "dblclick") and ev.target:
            name = ev.name
            if ev.target.startswith("group:") and any(c.name == name for c in ix.clusters):
                nav.go(_toggle(nav.state, name))
            elif ev.target.startswith("node:"):
                nav.go(_select(nav.state, name))
        handled(TF_GRAPH_KEY, ev)


def cluster_page(nav: Navigator, opened: Opened) -> None:
    dump = opened.dump
    ix = tf_index(dump)
    if not ix.files and not dump.modules:    # a lone .pb taken for a graph by its name
        st.error(f"{code(opened.name)} holds no XLA module and no TF graph that could be "
                 f"read ({md(DUMP_EXPECTED)}); what each file is not is said above.")
        return
    st.subheader("TensorFlow clusters")      # unreadable graph files: in the dump's errors
    _events(nav, ix)
    state = nav.state
    if ix.main is None:
        if ix.files:
            st.info(f"{len(ix.files)} TF graph files, none from mark_for_compilation (no "
                    "auto-clustering: TF_XLA_FLAGS=--tf_xla_auto_jit=2 turns it on).")
    else:
        n = len(ix.main.graph.nodes)
        clustered = sum(len(c.nodes) for c in ix.clusters)
        st.markdown(
            f"Step graph {code(ix.main.path)}: **{n}** nodes, **{len(ix.clusters)}** "
            f"clusters holding **{clustered}** ({100 * clustered / max(n, 1):.0f}%); "
            f"{len(ix.groups)} graphs in {len(ix.files)} files"
            + (f"; log {code(ix.log.file)}" if ix.log is not None else "; no log"))
        tl = graph_timeline(dump, ix)
        index = _step_index(ix, tl, state)
        # the stepper sits above the graph but is sent after it: its chart's script is
        # large, and the graph is what the page is opened for
        panel = st.container()
        shown = _shown(opened, ix, tl, index, nav.state)
        _graph(nav, dump, ix, nav.state, shown)
        if len(tl) > 1:
            with panel, section("Passes"):
                stepper(nav, opened, tl, index)
        _diff_tabs(nav, opened, tl, index)
        _clusters_table(dump, ix)
        _elsewhere(ix, dump.derived("tf-runtimes", TV.module_runtimes))
    _loose_table(ix)
    _jit_table(ix)
    if ix.main is not None:
        _reasons(ix)
    _files(ix)


def _step_index(ix: TfIndex, tl: Timeline, state: ViewState) -> int:
    """The step the URL's stage names (an older link's 'tf:<file>' too); by default the
    step graph as mark_for_compilation left it."""
    assert ix.main is not None
    main = next((s.index for s in tl.steps if s.file == ix.main.path), 0)
    index = tl.index_of(state.stage)
    if index is None and state.stage.startswith(PASS_PREFIX):
        wanted = state.stage[len(PASS_PREFIX):]
        index = next((s.index for s in tl.steps if s.file == wanted), None)
    if index is None and (state.stage.startswith((PASS_PREFIX, "pass:"))):
        st.warning(f"The step graph has no step {code(state.stage)}; showing "
                   f"{code(ix.main.path)}.")
    return main if index is None else index


@dataclass(frozen=True)
class ShownGraph:
    """The pass step's graph on screen and what its diff marks."""

    graph: TfGraph | None       # None: the step graph as mark_for_compilation left it
    added: frozenset[str]       # nodes the step added, changed against the one compared
    changed: frozenset[str]
    removed: frozenset[str] = frozenset()   # nodes of the compared dump this one lacks


def _shown(opened: Opened, ix: TfIndex, tl: Timeline, index: int, state: ViewState
           ) -> ShownGraph:
    assert ix.main is not None
    path = tl.step(index).file if len(tl) else ix.main.path
    graph = next((f.graph for f in ix.files if f.path == path), None)
    d, _, _ = current_diff(opened, tl, index, state) if len(tl) > 1 else (None, None, "")
    if not isinstance(d, GraphDiff):
        return ShownGraph(None if path == ix.main.path else graph, frozenset(), frozenset())
    return ShownGraph(None if path == ix.main.path else graph,
                      frozenset(n.name for n in d.added),
                      frozenset(c.new.name for c in d.changed),
                      frozenset(n.name for n in d.removed))


def _here(graph: TfGraph | None, name: str) -> str:
    """``name`` as this dump names it: mark_for_compilation_annotated adds 'cluster_N/'
    to every name, later dumps take it off again."""
    if not name or graph is None or graph.node(name) is not None:
        return name
    base = base_name(name)
    return next((n.name for n in graph.nodes if n.base_name == base), name)


def _diff_tabs(nav: Navigator, opened: Opened, tl: Timeline, index: int) -> None:
    """The pass diff's tabs (Changes, Text diff, Steps), as the HLO explorer shows them;
    only the open one computes."""
    tabs = graph_tabs(nav, opened, tl, index, _on_node_row)
    if not tabs:
        return
    names = [name for name, _ in tabs]
    drawn = st.tabs(names, key="tf-details:" + "|".join(names), on_change="rerun")
    for k, (tab, (name, draw)) in enumerate(zip(drawn, tabs)):
        if tab.open or (k == 0 and tab.open is None):
            with tab, section(name):
                draw()


def _graph(nav: Navigator, dump: Dump, ix: TfIndex, state: ViewState, step: ShownGraph
           ) -> None:
    state = state.with_(selected=_here(step.graph or (ix.main.graph if ix.main else None),
                                       state.selected))
    names = [c.name for c in ix.clusters]
    opened = frozenset(x for x in state.expanded if x in names)
    graph_col, inspector_col = st.columns([3, 2], gap="medium")
    with graph_col:
        key = "tf-open-clusters"
        if st.session_state.get(key) != sorted(opened):
            st.session_state[key] = sorted(opened)
        st.multiselect("Open clusters", names, key=key, on_change=go,
                       args=(_set_open, key), placeholder="clusters drawn as one box",
                       help="An open cluster shows its nodes; a click on a closed one "
                            "opens it")
        drawing = TV.cluster_dot(ix, opened, state.selected, graph=step.graph,
                                added=step.added, changed=step.changed)
        try:
            svg = render_svg(drawing.dot)
        except LayoutError as e:
            st.error(f"The graph could not be laid out: {code(str(e))}")
            return
        graph_view(svg, selected=f"node:{state.selected}" if state.selected else "",
                   key=TF_GRAPH_KEY, height=560, home=drawing.home)
        legend = ("coloured boxes: XLA clusters · red border: XLA cannot compile (log) · "
                  "cylinders: variables/resources · dashed: control edges")
        if step.added or step.changed:
            legend += " · blue: added by this pass · orange: changed (see Changes below)"
        if drawing.folded:
            legend += " · folders: nodes by name scope (too many to draw one by one)"
        st.caption(legend)
    with inspector_col:
        st.markdown("**TF node**")
        rows = TV.node_rows(ix, state.selected, step.graph) if state.selected else []
        if not rows:
            st.caption("Click a node in the graph, or pick one:")
        graph = step.graph or (ix.main.graph if ix.main else None)
        names = [n.name for n in graph.nodes] if graph is not None else []
        pick = "tf-pick-node"
        if len(names) <= MAX_PICKER:
            choices = [""] + names
            current = state.selected if state.selected in choices else ""
            if st.session_state.get(pick) != current:
                st.session_state[pick] = current
            st.selectbox("Node", choices, key=pick, label_visibility="collapsed",
                         on_change=lambda: go(_select, st.session_state.get(pick) or ""))
        else:       # thousands of options would be sent on every run: type the name
            if st.session_state.get(pick) != state.selected:
                st.session_state[pick] = state.selected
            st.text_input("Node", key=pick, label_visibility="collapsed",
                          placeholder="a node's full name",
                          on_change=lambda: go(_select, st.session_state.get(pick) or ""))
            if state.selected and not rows:
                st.warning(f"No node {code(state.selected)} in the step graph.")
        if state.selected and not rows and state.selected in step.removed:
            st.error(f"✕ {code(state.selected)} was removed by this pass (it is in the "
                     "dump this one is compared with; see Changes below).")
        if rows:
            st.markdown("\n".join(f"- {md(k)}: {code(v)}" for k, v in rows))
            if step.graph is None:
                _hlo_buttons(dump, ix, state.selected)


def _hlo_buttons(dump: Dump, ix: TfIndex, node: str) -> None:
    """The selected TF node's HLO instructions in its cluster's module, each a button."""
    c = ix.cluster_of(node)
    if c is None or c.module is None or c.module.after_optimizations is None:
        return
    try:
        hlo = dump.stage(c.module, AFTER)
    except (KeyError, HloParseError):
        return
    names = instructions_of(hlo, node, call_bodies(ix).get(node, ()))
    if not names:
        st.caption("No HLO instruction names this node (XLA folded it away).")
    for name in names[:4]:
        st.button(f"Show {md(name)} in module {c.module.id}", key=f"tf-hlo-{name}", on_click=go,
                  args=(_to_instruction, c.module.id, name))


def _clusters_table(dump: Dump, ix: TfIndex) -> None:
    st.markdown("**Clusters**")
    runtimes = dump.derived("tf-runtimes", TV.module_runtimes)
    rows = TV.cluster_rows(ix, runtimes)
    if not rows:
        st.caption("Auto-clustering built no cluster in the step graph.")
        return
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="tf-clusters")
    if runtimes:
        st.caption("measured: each kernel's median self time in the profiler trace, summed "
                   "per run of the cluster's module")
    _open_buttons(ix.clusters, lambda c: f"tf-open-{c.name}")


def _open_buttons(clusters: list[Cluster], key: Callable[[Cluster], str]) -> None:
    """A button per cluster with a module: open that module's HLO."""
    with st.container(horizontal=True):
        for c in clusters:
            if c.module is not None:
                st.button(f"Open {md(c.name)}'s HLO (module {c.module.id})", key=key(c),
                          on_click=go, args=(_open_module, c.module.id))


def _elsewhere(ix: TfIndex, runtimes: dict) -> None:
    """The clusters TF built in the program's other graphs (another tf.function)."""
    if not ix.elsewhere:
        return
    st.markdown(f"**Clusters in other graphs** ({len(ix.elsewhere)}: TF clustered other "
                "functions of the program too; the graph above is the one with most nodes "
                "in clusters, a tf.data function's only where no other graph has any)")
    st.dataframe(pd.DataFrame(TV.elsewhere_rows(ix, runtimes)), hide_index=True,
                 width="stretch", key="tf-elsewhere")
    _open_buttons(ix.elsewhere, lambda c: f"tf-open-{c.graph}-{c.name}")


def _loose_table(ix: TfIndex) -> None:
    """Cluster modules that no graph dump of the folder holds: named by their modules, sized
    by TF's log."""
    if not ix.loose:
        return
    st.markdown(f"**Cluster modules without their graph** ({len(ix.loose)})")
    if not ix.files:
        st.info("This folder has XLA's files but no TF graph dumps: each cluster is known "
                "by its module" + (" and TF's log's summary" if ix.log is not None else "")
                + ". Set TF_DUMP_GRAPH_PREFIX to this folder as well to see each cluster's "
                "nodes and the nodes left out.")
    st.dataframe(pd.DataFrame(TV.loose_rows(ix)), hide_index=True, width="stretch",
                 key="tf-loose")
    with st.container(horizontal=True):
        for c in ix.loose:
            st.button(f"Open {md(c.name)}'s HLO (module {c.module.id})",
                      key=f"tf-loose-{c.module.id}", on_click=go,
                      args=(_open_module, c.module.id))
    reasons = ix.loose_reasons
    if reasons:
        st.markdown("Not clustered, in TF's log:\n" + "\n".join(
            f"- {code(u.node)} ({md(u.op)}): {md(u.reason)}" for u in reasons))


def _jit_table(ix: TfIndex) -> None:
    if not ix.jit:
        return
    st.markdown("**jit_compile functions** (each compiled as one XLA program)")
    st.dataframe(pd.DataFrame(TV.jit_rows(ix)), hide_index=True, width="stretch",
                 key="tf-jit")
    with st.container(horizontal=True):
        for j in ix.jit:
            st.button(f"Open module {j.module.id}", key=f"tf-jit-{j.module.id}", on_click=go,
                      args=(_open_module, j.module.id))


def _reasons(ix: TfIndex) -> None:
    st.markdown("**Why not clustered**")
    groups = reason_groups(ix)
    if ix.log is None:
        st.info("Why a node stayed out is written only to TF's log. Run the program again "
                "with the log kept in the dump folder:")
        st.code(LOG_COMMAND, language="bash")
    for g in groups:
        nodes = ", ".join(code(n) for n, _ in g.nodes[:8])
        more = f" and {len(g.nodes) - 8} more" if len(g.nodes) > 8 else ""
        text = f"- **{md(g.title)}** ({len(g.nodes)}): {nodes}{more}"
        if g.detail and g.kind not in ("args",):
            text += f"  \n  TF: {md(g.detail)}"
        if g.fix:
            text += f"  \n  *Fix:* {md(g.fix)}"
        st.markdown(text)
    for b in cycle_blocks(ix):
        if b.node_is_cluster:
            st.markdown(f"- **{md(b.node)}** and **{md(b.cluster)}** stay two clusters: "
                        "merging them would close a cycle through "
                        + ", ".join(code(v) for v in b.via) + " (unclustered).")
    for note in ix.cycles:
        st.caption(f"TF's log: {md(note.source)} was kept out of the cluster of "
                   f"{md(note.target)}: merging would close a cycle via "
                   f"{md(', '.join(note.via))}.")


def _files(ix: TfIndex) -> None:
    if not ix.files:
        return
    with st.expander(f"Graph dumps: {len(ix.files)} files, {len(ix.groups)} graphs"):
        rows = []
        for g in ix.groups:
            for f in g.files:
                clusters = f.graph.clusters()
                rows.append({"graph": g.index, "pass": f.pass_.name, "file": f.path,
                             "nodes": len(f.graph.nodes), "clusters": len(clusters),
                             "step graph": "✓" if g is ix.step else ""})
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="tf-files")
