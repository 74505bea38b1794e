"""The TensorFlow cluster view: what XLA auto-clustering put into each cluster, what it left
out and why, and each cluster's HLO module. Shown instead of the HLO explorer when the dump
has TF graph dumps and no module is chosen (the URL's ``module`` is empty); a cluster's or
jit function's module opens in the explorer, and the sidebar leads back.

The view lives in the URL like the rest: ``selected`` is the inspected TF node, ``expanded``
the open clusters.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from compiler_bridge import Dump, HloParseError
from compiler_bridge.dumps import AFTER, BEFORE
from compiler_bridge.tf import (GRAPH, LOG_COMMAND, TfGraph, TfIndex, cycle_blocks, has_tf,
                                instructions_of, reason_groups, tf_index, tf_node_of)
from viz import LayoutError, ViewState, render_svg
from viz import tf as T

from .component import graph_events, graph_view, handled
from .kit import Navigator, code, go, md
from .opening import Opened

TF_GRAPH_KEY = "tf-graph"
PASS_PREFIX = "tf:"     # the URL's stage in the cluster view: 'tf:<graph file>' for a pass
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


def _set_pass(state: ViewState, key: str, main: str) -> ViewState:
    path = st.session_state.get(key) or main
    return state.with_(stage=PASS_PREFIX + path if path != main else ViewState().stage,
                       selected="")


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
        shown = _stepper(ix, state)
        _graph(nav, dump, ix, state, shown)
        _clusters_table(dump, ix)
    _jit_table(ix)
    if ix.main is not None:
        _reasons(ix)
    _files(ix)


def _stepper(ix: TfIndex, state: ViewState) -> Step:
    """The step graph's dumps pass by pass (slider); what the shown pass added and removed
    against the pass before it."""
    assert ix.main is not None
    files = [f for f in (ix.step.files if ix.step is not None else [ix.main])
             if f.graph.kind == GRAPH]
    paths = [f.path for f in files]
    wanted = state.stage[len(PASS_PREFIX):] if state.stage.startswith(PASS_PREFIX) else ""
    current = wanted if wanted in paths else ix.main.path
    if wanted and wanted not in paths:
        st.warning(f"The step graph has no dump {code(wanted)}; showing "
                   f"{code(ix.main.path)}.")
    i = paths.index(current)
    names = {f.path: f"{k}. {f.pass_.name}" for k, f in enumerate(files)}
    key = "tf-pass"
    if st.session_state.get(key) != current:
        st.session_state[key] = current
    if len(paths) > 1:
        st.select_slider("Pass", paths, key=key, format_func=lambda p: names[p],
                         on_change=go, args=(_set_pass, key, ix.main.path),
                         help="TF's dumps of the step graph around XLA clustering, in the "
                              "order the passes ran; green: nodes the pass added")
    shown = files[i]
    added: frozenset[str] = frozenset()
    # against the pass before it that dumped the whole graph (per-cluster dumps hold one)
    prev = next((f for f in reversed(files[:i]) if f.pass_.cluster is None), None)
    if prev is not None:
        before = {n.name for n in prev.graph.nodes}
        after = {n.name for n in shown.graph.nodes}
        added = frozenset(after - before)
        removed = sorted(before - after)
        gone = ", ".join(code(x) for x in removed[:8]) + (" …" if len(removed) > 8 else "")
        st.caption(f"{md(shown.pass_.name)} ({code(shown.path)}) against "
                   f"{md(prev.pass_.name)}: +{len(added)} nodes, −{len(removed)}"
                   + (f" ({gone})" if removed else ""))
    return Step(shown.graph if shown is not ix.main else None, added)


@dataclass(frozen=True)
class Step:
    graph: TfGraph | None       # None: the step graph as mark_for_compilation left it
    added: frozenset[str]


def _graph(nav: Navigator, dump: Dump, ix: TfIndex, state: ViewState, step: Step) -> None:
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
        drawing = T.cluster_dot(ix, opened, state.selected, graph=step.graph,
                                added=step.added)
        try:
            svg = render_svg(drawing.dot)
        except LayoutError as e:
            st.error(f"The graph could not be laid out: {code(str(e))}")
            return
        graph_view(svg, selected=f"node:{state.selected}" if state.selected else "",
                   key=TF_GRAPH_KEY, height=560)
        legend = ("coloured boxes: XLA clusters · red border: XLA cannot compile (log) · "
                  "cylinders: variables/resources · dashed: control edges")
        if drawing.folded:
            legend += " · folders: unclustered nodes by name scope"
        st.caption(legend)
    with inspector_col:
        st.markdown("**TF node**")
        rows = T.node_rows(ix, state.selected, step.graph) if state.selected else []
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
    names = instructions_of(hlo, node)
    if not names:
        st.caption("No HLO instruction names this node (XLA folded it away).")
    for name in names[:4]:
        st.button(f"Show {md(name)} in module {c.module.id}", key=f"tf-hlo-{name}", on_click=go,
                  args=(_to_instruction, c.module.id, name))


def _clusters_table(dump: Dump, ix: TfIndex) -> None:
    st.markdown("**Clusters**")
    runtimes = dump.derived("tf-runtimes", T.module_runtimes)
    rows = T.cluster_rows(ix, runtimes)
    if not rows:
        st.caption("Auto-clustering built no cluster in the step graph.")
        return
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="tf-clusters")
    if runtimes:
        st.caption("measured: each kernel's median self time in the profiler trace, summed "
                   "per run of the cluster's module")
    with st.container(horizontal=True):
        for c in ix.clusters:
            if c.module is not None:
                st.button(f"Open {md(c.name)}'s HLO (module {c.module.id})",
                          key=f"tf-open-{c.name}", on_click=go,
                          args=(_open_module, c.module.id))


def _jit_table(ix: TfIndex) -> None:
    if not ix.jit:
        return
    st.markdown("**jit_compile functions** (each compiled as one XLA program)")
    st.dataframe(pd.DataFrame(T.jit_rows(ix)), hide_index=True, width="stretch",
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
    with st.expander(f"Graph dumps: {len(ix.files)} files, {len(ix.groups)} graphs"):
        rows = []
        for g in ix.groups:
            for f in g.files:
                clusters = f.graph.clusters()
                rows.append({"graph": g.index, "pass": f.pass_.name, "file": f.path,
                             "nodes": len(f.graph.nodes), "clusters": len(clusters),
                             "step graph": "✓" if g is ix.step else ""})
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="tf-files")
