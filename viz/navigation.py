"""How the view moves: pure ViewState transitions for every user action.

The page maps a widget change or a graph event to one of these functions and writes the
result to the URL; nothing here touches Streamlit, so the rules are tested directly.
Each returns the new state and, where the graph should move, the SVG element id to
centre on (``node:<name>`` / ``group:<id>``), else ''.
"""

from __future__ import annotations

from compiler_bridge import HloModule

from .panels import locate
from .state import BUDGET, OVERLAYS, RADIUS, ViewState, clamp


def choose_dump(state: ViewState, dump: str) -> ViewState:
    return ViewState(dump=dump)


def choose_module(state: ViewState, module: str) -> ViewState:
    """Another module: everything below it starts over (grouping stays, the runtime
    overlay and trace, which belong to the dump, and the stage unless it is a pass step,
    which belongs to one module). A comparison stays, with the new module's partner."""
    if module == state.module:
        return state
    stage = ViewState().stage if state.stage.startswith("pass:") else state.stage
    return ViewState(dump=state.dump, module=module, stage=stage, grouping=state.grouping,
                     radius=state.radius, overlay=state.overlay, trace=state.trace,
                     base=state.base)


def choose_base(state: ViewState, base: str, base_module: str = "") -> ViewState:
    """Compare the dump shown with a baseline dump ('' = stop comparing); its module
    ('' = the partner of the module shown). The place in the graph stays."""
    if not base:
        return state.with_(base="", base_module="", changed_only=False)
    return state.with_(base=base, base_module=base_module, compare="", viewport="")


def compare_recompilation(state: ViewState, base_module: str, module: str) -> ViewState:
    """Two compiles of one function in the dump shown: ``base_module`` is the baseline."""
    new = choose_module(state, module) if module != state.module else state
    return new.with_(base=state.dump, base_module=base_module, compare="", viewport="",
                     stage=ViewState().stage)


def swap_sides(state: ViewState, base_module: str) -> ViewState:
    """Show the baseline, compared with the dump that was shown (``base_module``: the
    baseline's module in use, when the state leaves it to pairing)."""
    return ViewState(dump=state.base, module=base_module, base=state.dump,
                     base_module=state.module, grouping=state.grouping,
                     changed_only=state.changed_only, budget=state.budget)


def choose_step(state: ViewState, stage: str) -> tuple[ViewState, str]:
    """Another stage of the same module: before/after optimizations or a pass step (the
    stage picker, the stepper, the timeline, a history entry).

    The user's place is kept: computation, selection, open groups and focus (names and
    op_name scopes mostly survive a pass); the layout is new,
    so the viewport goes and the view centres on the selection instead. A fixed compare
    target stays; the default one (the previous step) moves along.
    """
    if stage == state.stage:
        return state, ""
    new = state.with_(stage=stage, viewport="")
    if new.compare == stage:
        new = new.with_(compare="")
    center = ("node:" + state.selected) if state.selected and ":" not in state.selected else ""
    return new, center


def step_to(state: ViewState, stage: str, name: str) -> tuple[ViewState, str]:
    """Jump to a step with an instruction selected (a line of its history)."""
    new, _ = choose_step(state, stage)
    if not name:
        return new, ""
    new = new.with_(selected=name, focus=name if state.focus else "")
    return new, "node:" + name


def set_compare(state: ViewState, compare: str) -> ViewState:
    """What the step is diffed against: '' (the previous step), 'none', or a stage."""
    compare = "" if compare == state.stage else compare
    new = state.with_(compare=compare)
    if compare == "none":
        new = new.with_(changed_only=False)
    return new


def set_changed_only(state: ViewState, on: bool) -> ViewState:
    """Draw only what changed and its neighbours (the focus mode is left for it)."""
    return state.with_(changed_only=bool(on), focus="" if on else state.focus, viewport="")


def restore_view(state: ViewState, query: dict) -> ViewState:
    """A saved view of this dump: its state, on this dump (whatever link it was saved from)."""
    return ViewState.from_query(query).with_(dump=state.dump)


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
    return state.with_(radius=clamp(radius, RADIUS))


def set_budget(state: ViewState, budget: int) -> ViewState:
    """The most nodes a view draws before it keeps groups closed."""
    return state.with_(budget=clamp(budget, BUDGET))


def set_overlay(state: ViewState, overlay: str) -> ViewState:
    """Colour the graph by measured, predicted or predicted/measured runtime ('' = off)."""
    return state.with_(overlay=overlay if overlay in OVERLAYS else "")


def set_trace(state: ViewState, trace: str) -> ViewState:
    """The trace the runtimes come from ('' = the dump's own, or an uploaded trace's id)."""
    return state.with_(trace=trace)


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
