"""The one path from (dump, ViewState) to a graph view, shared by the app and the CLI."""

from __future__ import annotations

from compiler_bridge import Dump, HloModule
from compiler_bridge.dump import AFTER, BEFORE, PASS

from .graph import GraphOptions, GraphView, build_graph
from .state import ViewState


def stage_path(dump: Dump, state: ViewState) -> str:
    """The file that holds the module at the state's stage."""
    mod = dump.module(state.module) if state.module else dump.main
    if mod is None:
        raise KeyError(f"{dump.name} holds no HLO modules")
    if state.stage in (BEFORE, AFTER):
        f = mod.first(state.stage) or mod.first(AFTER) or mod.first(BEFORE)
        if f is None:
            raise KeyError(f"module {mod.label} has no HLO text")
        return f.path
    if state.stage.startswith("pass:"):
        try:
            seq = int(state.stage[5:])
        except ValueError:
            raise KeyError(f"bad pass step {state.stage!r}") from None
        for f in mod.of_kind(PASS):
            if f.pass_info.sequence == seq:
                return f.path
        raise KeyError(f"module {mod.label} has no pass step {seq:04d}")
    raise KeyError(f"unknown stage {state.stage!r}")


def module_for(dump: Dump, state: ViewState) -> HloModule:
    return dump.parse(stage_path(dump, state))


def options_for(state: ViewState, budget: int = 1500, decorations=None) -> GraphOptions:
    return GraphOptions(expanded=frozenset(state.expanded), grouping=state.grouping,
                        focus=state.focus, radius=state.radius, budget=budget,
                        selected=state.selected, decorations=decorations or {})


def graph_for(dump: Dump, state: ViewState, budget: int = 1500) -> GraphView:
    """The graph view the app shows for this state."""
    module = module_for(dump, state)
    return build_graph(module, state.computation or None, options_for(state, budget))
