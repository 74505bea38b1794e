"""What one part of the page asks of another, as moves of the view: show an instruction in
the graph and select it (from a diff row, a kernel, a memory value), go to a computation.
Each is a function of the ``ViewState`` for ``kit.go``, or a widget callback built on one;
the graph they move is built by ``data.view_for``.
"""

from __future__ import annotations

from compiler_bridge import HloModule, HloParseError
from compiler_bridge.dumps import AFTER
from viz import ViewState
from viz import navigation as N
from viz import panels as P

from .data import view_for
from .kit import go, selected_row
from .model import Opened, Shown


def show_in_graph(state: ViewState, opened: Opened, shown: Shown, name: str):
    """Draw an instruction as its own node: go to its computation, open the fusions
    around it and the boxes holding it (``GraphView.reveal``) in the view that will be
    drawn; in focus mode the focus moves to it."""
    new, center = N.go_to(state, shown.module, name, focus=False)
    loc = P.locate(shown.module, name)
    if loc is None:
        return state, ""
    if new.focus:
        # in focus mode the neighbourhood follows it (a focus view opens around its node)
        new = new.with_(focus=loc.anchor)
    try:
        view, _ = view_for(opened, shown, new.with_(changed_only=False))
    except (KeyError, HloParseError):
        return new, center
    if new.changed_only and ("node:" + loc.anchor) not in view.nodes:
        new = new.with_(changed_only=False)           # it is not among the changes
    for gid in view.reveal(loc.anchor):
        new = new.toggle_expanded(gid)
    return new, center


def select_and_show(state: ViewState, opened: Opened, shown: Shown, name: str):
    """``show_in_graph``, and the instruction selected."""
    new, center = show_in_graph(state, opened, shown, name)
    return new.with_(selected=name), center


def select_after(state: ViewState, opened: Opened, shown: Shown, name: str):
    """Show an instruction of the after-optimizations module (what ran, where buffers are
    assigned) in the graph, selected: that stage, its computation, the boxes around it
    opened."""
    if shown.stage != AFTER:
        state, _ = N.choose_step(state, AFTER)
        module = opened.dump.stage(shown.dump_module, AFTER)
        new, center = N.go_to(state, module, name, focus=False)
        return new.with_(selected=name), center
    return select_and_show(state, opened, shown, name)


def choose_computation(state: ViewState, name: str, module: HloModule) -> ViewState:
    """Show computation ``name`` (the ENTRY is the URL's '')."""
    entry = module.entry.name if module.entry is not None else ""
    return N.choose_computation(state, "" if name == entry else name)


_NAME_COLUMN = {"changed": "instruction", "added": "instruction", "removed": "instruction",
                "fusions": "fusion", "layout changes": "instruction",
                "layout conflicts": "inserted"}


def on_diff_row(key: str, rows: list[dict], kind: str, opened: Opened, shown: Shown) -> None:
    """A click on a row of a diff table (``kit.diff_table``): select that instruction and
    show it in the graph (a removed one: select it, the inspector says where it went).
    The pass stepper's and the comparison's tables share it."""
    row = selected_row(key, len(rows))
    if row is None:
        return
    name = str(rows[row].get(_NAME_COLUMN[kind], ""))
    if not name:
        return
    if kind == "removed" or shown.module.find(name) is None:
        go(lambda s: (s.with_(selected=name), ""))       # the inspector tells its story
        return
    go(select_and_show, opened, shown, name)
