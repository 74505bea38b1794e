"""How the view moves: pure ViewState transitions for every user action.

The page maps a widget change or a graph event to one of these functions and writes the
result to the URL; nothing here touches Streamlit, so the rules are tested directly.
Each returns the new state and, where the graph should move, the SVG element id to
centre on (``node:<name>`` / ``group:<id>``), else ''.
"""

from __future__ import annotations

from compiler_bridge import HloModule

from .panels import locate
from .state import ViewState


def choose_dump(state: ViewState, dump: str) -> ViewState:
    return ViewState(dump=dump)


def choose_module(state: ViewState, module: str) -> ViewState:
    """Another module: everything below it starts over (stage and grouping stay)."""
    if module == state.module:
        return state
    return ViewState(dump=state.dump, module=module, stage=state.stage, grouping=state.grouping,
                     radius=state.radius, overlay=state.overlay)


def choose_stage(state: ViewState, stage: str) -> ViewState:
    """Another stage of the same module: keep the computation and the selection (names
    often survive optimization), start the layout afresh."""
    if stage == state.stage:
        return state
    return state.with_(stage=stage, expanded=(), viewport="", focus="")


def choose_computation(state: ViewState, computation: str) -> ViewState:
    if computation == state.computation:
        return state
    return state.with_(computation=computation, selected="", expanded=(), focus="",
                       viewport="")


def choose_grouping(state: ViewState, grouping: str) -> ViewState:
    if grouping == state.grouping:
        return state
    # group ids depend on the grouping; fusion toggles stay meaningful
    kept = tuple(g for g in state.expanded if g.startswith("fusion:"))
    return state.with_(grouping=grouping, expanded=kept, viewport="")


def set_focus(state: ViewState, on: bool) -> tuple[ViewState, str]:
    if on and state.selected and ":" not in state.selected:
        return state.with_(focus=state.selected), "node:" + state.selected
    if not on and state.focus:
        return state.with_(focus=""), ("node:" + state.selected if state.selected else "")
    return state, ""


def set_radius(state: ViewState, radius: int) -> ViewState:
    return state.with_(radius=max(0, min(int(radius), 20)))


def select(state: ViewState, name: str) -> tuple[ViewState, str]:
    """Select an instruction of the current computation (an operand, a user...); in focus
    mode the neighbourhood follows it."""
    new = state.with_(selected=name)
    if state.focus and ":" not in name:
        new = new.with_(focus=name)
    return new, ("node:" + name if ":" not in name else "group:" + name)


def go_to(state: ViewState, module: HloModule, name: str, *, focus: bool = True
          ) -> tuple[ViewState, str]:
    """Show an instruction anywhere in the module (a search hit): its computation, the
    fusions around it opened, selected and, with ``focus``, its neighbourhood only."""
    loc = locate(module, name)
    if loc is None:
        return state, ""
    current = state.computation or (module.entry.name if module.entry is not None else "")
    expanded = state.expanded if loc.computation == current \
        else tuple(g for g in state.expanded if g.startswith("fusion:"))
    expanded = expanded + tuple(g for g in loc.expand if g not in expanded)
    comp = "" if module.entry is not None and loc.computation == module.entry.name \
        else loc.computation
    new = state.with_(computation=comp, selected=name, expanded=expanded,
                      focus=loc.anchor if focus else state.focus,
                      viewport="" if comp != state.computation else state.viewport)
    return new, "node:" + name


def toggle_group(state: ViewState, group: str) -> tuple[ViewState, str]:
    """Open or close a group (a layer box or a fusion) in place."""
    new = state.toggle_expanded(group)
    if group.startswith("fusion:") and group not in new.expanded:
        return new, "node:" + group[len("fusion:"):]
    return new, "group:" + group


def on_graph_event(state: ViewState, module: HloModule, kind: str, target: str,
                   viewport: str = "") -> tuple[ViewState, str]:
    """A click, double-click or settled viewport from the graph component.

    Click selects. Double-click opens or closes: a group box, a fusion (the node when
    closed, its cluster when open), or steps into what a while/conditional/call calls.
    """
    if kind == "viewport":
        return state.with_(viewport=viewport), ""
    if target.startswith("group:"):
        group = target[len("group:"):]
        if kind == "dblclick":
            new, center = toggle_group(state, group)
            return new.with_(selected=group), center
        return state.with_(selected=group), ""
    if not target.startswith("node:"):
        return state, ""
    name = target[len("node:"):]
    if kind != "dblclick":
        return state.with_(selected=name), ""
    inst = module.find(name)
    if inst is not None and inst.opcode == "fusion":
        new, center = toggle_group(state, "fusion:" + name)
        return new.with_(selected=name), center
    if inst is not None and inst.called_names:
        callee = inst.body or inst.called_names[0]
        if module.get_computation(callee) is not None:
            return choose_computation(state, callee), ""
    return state.with_(selected=name), ""
