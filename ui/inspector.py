"""The inspector: what is known about the selected instruction or group, and the links
that move the view to its operands, users and called computations.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from compiler_bridge.dumps import AFTER

from viz import GraphView
from viz import navigation as N
from viz import panels as P

from . import backend_info, sharding_info
from .actions import choose_computation, show_in_graph
from .component import node_card
from .data import read_text
from .kit import GRAPH_KEY, MAX_CODE, STAGES, Navigator, clip, code, go, go_pick, md, stage_label
from .model import Inspected, Opened, Shown


# --------------------------------------------------------------------------- inspector

def show(nav: Navigator, opened: Opened, shown: Shown, view: GraphView | None
              ) -> Inspected:
    state = nav.state
    sel = state.selected
    # the header of a selected instruction is the card, drawn by the browser; mounted in
    # every case, first, so that a click fills it before this run answers
    inst = shown.module.find(sel) if sel and ":" not in sel else None
    node_card(GRAPH_KEY, sel, P.card(shown.module, inst) if inst is not None else None)
    if not sel:
        st.markdown("#### Inspector")
        st.caption("Click a node to inspect it. Double-click a fusion or a box to open it in "
                   "place, a while/conditional/call to step into what it calls.")
        return Inspected("", None, st.container())
    if ":" in sel:
        _group_inspector(nav, sel, view)
        return Inspected(sel, None, st.container())
    info = P.inspect(shown.module, sel)
    if info is None:
        st.markdown(f"#### {md(sel)}")
        where = STAGES.get(shown.stage) or stage_label(shown.timeline.step(shown.index), True) \
            if shown.timeline is not None else shown.stage
        st.warning(f"{code(sel)} is not in {md(shown.module.name)} at {md(where)}.")
        return Inspected(sel, None, st.container())
    slot = _instruction_inspector(nav, opened, shown, view, info)
    return Inspected(sel, info, slot)


def _group_inspector(nav: Navigator, gid: str, view: GraphView | None) -> None:
    g = view.groups.get(gid) if view is not None else None
    st.markdown(f"#### {md(g.label if g else gid)}")
    if g is None:
        st.caption(f"Group {code(gid)} is not part of this view.")
        return
    kind = {"layer": "op_name scope", "source": "source call path", "split": "part of a big group",
            "fusion": "fusion"}.get(g.kind, g.kind)
    st.markdown(f"{kind} · **{g.size:,}** instructions" + (f" · {g.fusions} fusions" if g.fusions
                                                          else ""))
    st.button("Close it" if g.expanded else "Open it in place", key=f"toggle:{gid}",
              on_click=go, args=(N.toggle_group, gid), type="primary")


def _instruction_inspector(nav: Navigator, opened: Opened, shown: Shown,
                           view: GraphView | None, info: P.Inspector) -> DeltaGenerator:
    """The instruction's links and expanders under its card; returns the place under
    them for more (history, comments)."""
    state = nav.state
    if info.in_fusion:
        st.button(f"↑ fusion {info.in_fusion}", key=f"up:{info.name}", type="tertiary",
                  on_click=go, args=(N.select, info.in_fusion),
                  help="Select the fusion this instruction is fused into")
    drawn = view is not None and (("node:" + info.name) in view.nodes
                                  or ("group:fusion:" + info.name) in view.nodes)
    if not drawn:
        cols = st.columns([3, 2], vertical_alignment="center")
        cols[0].caption("Not drawn in this view (inside a closed box or another computation).")
        cols[1].button("Show it in the graph", key=f"show:{info.name}", on_click=go,
                       args=(show_in_graph, opened, shown, info.name))
    slot = st.container()                # history and comments go here
    # expanders fill only when opened (on_change="rerun"): a collapsed one still costs the
    # browser its highlighted code on every click, ~0.2 s for a big fusion's body
    if info.source_stack:
        box = st.expander(f"Python call stack ({len(info.source_stack) + 1} frames)",
                          key=f"stack:{info.name}", on_change="rerun")
        if box.open:
            box.code("\n".join([info.source] + info.source_stack), language=None)
    sharding_info.show(opened, shown, info.name)    # the mesh: tiles or groups per device
    _refs("Operands", info.operands, info.name, shown)
    _refs("Users", info.users, info.name, shown)
    called = [(role, comp) for role, comp in info.called if role != "fused computation"]
    if called:
        st.markdown("**Calls**")
        with st.container(horizontal=True, gap="small"):
            for role, comp in called:
                st.button(f"{role}: {comp}", key=f"call:{info.name}:{comp}",
                          on_click=go, args=(choose_computation, comp, shown.module))
    if info.is_fusion:
        gid = "fusion:" + info.name
        is_open = gid in state.expanded
        st.button("Close the fusion" if is_open else "Open the fusion in the graph",
                  key=f"fusion:{info.name}", type="primary", on_click=go,
                  args=(N.toggle_group, gid))
        if info.fused_lines:
            params = len(info.fused_lines) - info.fused_ops
            box = st.expander(f"Fused computation {info.fused_computation} "
                              f"({info.fused_ops} ops + {params} parameters)",
                              key=f"fused:{info.name}", on_change="rerun")
            if box.open:
                box.code("\n".join(info.fused_lines), language=None, wrap_lines=False)
    if info.backend_config:
        box = st.expander("backend_config", key=f"config:{info.name}", on_change="rerun")
        if box.open:
            box.code(info.backend_config, language="json")
    if info.attributes:
        box = st.expander(f"Attributes ({len(info.attributes)})", key=f"attrs:{info.name}",
                          on_change="rerun")
        if box.open:
            box.markdown("\n".join(f"- {code(k)} = {code(clip(v, 300))}"
                                    for k, v in info.attributes))
    _kernel(opened, shown, info.name, info.opcode)
    backend_info.show(opened, shown, shown.module.find(info.name))   # emitter, tiles, cycles
    return slot


def _refs(title: str, refs: list[P.Ref], owner: str, shown: Shown) -> None:
    if not refs:
        return
    names = [r.name for r in refs]
    key = f"refs:{title}:{owner}"
    shapes = {r.name: r for r in refs}
    st.pills(f"{title} ({len(refs)})", names, key=key, selection_mode="single",
             format_func=lambda n: f"{n} · {shapes[n].shape}" if len(refs) <= 6 else n,
             on_change=go_pick, args=(N.select, key))


_NO_KERNEL = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "while",
              "conditional", "call", "after-all", "partition-id", "replica-id"}


def _kernel(opened: Opened, shown: Shown, name: str, opcode: str) -> None:
    """The kernel XLA compiled for this instruction, when the dump has its IR or PTX
    (read only when the user opens it)."""
    files = P.kernel_files(shown.dump_module, name)
    shared = []
    if not files and shown.stage == AFTER and opcode not in _NO_KERNEL:
        shared = [f for f in P.shared_kernel_files(shown.dump_module)
                  if P.extract_function(read_text(opened.dump, f.path), name,
                                        P.file_language(f))]
    candidates = files or shared
    if not candidates:
        return
    f = candidates[0]
    kind = {"llvm_ir_with_opt": "LLVM IR (optimized)", "llvm_ir_no_opt": "LLVM IR",
            "ptx": "PTX"}.get(f.kind, f.kind)
    box = st.expander(f"Kernel · {kind}", key=f"kernel:{name}", on_change="rerun")
    if not box.open:
        return
    text = read_text(opened.dump, f.path)
    body = P.extract_function(text, name, P.file_language(f)) or text
    box.caption(f"`{f.path}`")
    if len(body) > MAX_CODE:
        box.caption(f"first {MAX_CODE:,} of {len(body):,} characters")
        body = body[:MAX_CODE]
    box.code(body, language="llvm" if P.file_language(f) == "llvm" else None)


