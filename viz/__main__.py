"""``python -m viz render``: write exactly the graph view the app would show."""

from __future__ import annotations

import argparse
import sys

from compiler_bridge import Dump, DumpError, HloParseError, open_dump, require_modules
from compiler_bridge.hlo import MLIR_TEXT
from compiler_bridge.dumps import AFTER, BEFORE, STABLEHLO
from compiler_bridge.passes import pass_timeline

from .export import titled_dot, titled_svg
from .layout import LayoutError, render_svg
from .render import graph_for, stage_path
from .state import GROUPINGS, ViewState


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m viz")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render", help="render a computation's graph view to SVG or DOT")
    r.add_argument("path", help="a dump folder, .zip or .tar.gz")
    r.add_argument("--module", default="", help="module id or name (default: the main program)")
    r.add_argument("--stage", default="after_optimizations",
                   help="before_optimizations, after_optimizations, pass:<sequence>, "
                        "after_codegen (XLA:TPU) or stablehlo (the module's module.mlir, "
                        "converted by jaxlib)")
    r.add_argument("--computation", default="", help="default: the ENTRY computation")
    r.add_argument("--focus", default="", help="show the neighbourhood of this instruction")
    r.add_argument("--radius", type=int, default=2)
    r.add_argument("--grouping", choices=GROUPINGS, default="layers")
    r.add_argument("--expand", action="append", default=[],
                   help="a group id to toggle open/closed (repeatable)")
    r.add_argument("--compare", default="",
                   help="colour what changed since this stage (default for a pass step: the "
                        "previous step; 'none': no colours)")
    r.add_argument("--changed-only", action="store_true",
                   help="draw only what the step changed and its neighbours")
    r.add_argument("--budget", type=int, default=1500)
    r.add_argument("--format", choices=("svg", "dot"), default="svg")
    r.add_argument("--out", required=True)
    args = p.parse_args(argv)
    try:
        dump = open_dump(args.path)
        require_modules(dump, args.path)    # exit 1 naming what was expected, as the CLI
        state = ViewState(dump=args.path, module=args.module, stage=args.stage,
                          computation=args.computation, focus=args.focus, radius=args.radius,
                          grouping=args.grouping, expanded=tuple(args.expand),
                          compare=args.compare, changed_only=args.changed_only)
        timeline = None
        if args.stage.startswith("pass:") or args.compare:   # as the app: the step's diff
            module = dump.module(args.module) if args.module else dump.main
            if module is not None:      # else graph_for says the dump has no modules
                timeline = pass_timeline(dump, module)
        view = graph_for(dump, state, budget=args.budget, timeline=timeline)
        what = _what(dump, state, view.computation)
        text = titled_dot(view.dot, what) if args.format == "dot" else \
            titled_svg(render_svg(view.dot), what)
    except (DumpError, HloParseError, LayoutError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:                # a usage error: the --out given cannot be written
        print(f"error: cannot write --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    for note in [_stage_note(dump, state)] + view.notes:
        if note:
            print(note, file=sys.stderr)
    print(f"{view.computation}: {view.node_count} nodes, {view.edge_count} edges -> {args.out}")
    return 0


def _drawn(dump: Dump, state: ViewState) -> str:
    """The before or after optimizations stage drawn for ``state``'s: the file drawn says
    (a single file holds one stage, which is drawn for either)."""
    f = dump.file(stage_path(dump, state))
    return ("StableHLO (converted by jaxlib)" if f.source == MLIR_TEXT
            else "after optimizations" if f.kind == AFTER else "before optimizations")


def _what(dump: Dump, state: ViewState, computation: str) -> str:
    """What the file shows, said in it: dump, module, the stage drawn, computation."""
    module = dump.module(state.module) if state.module else dump.main
    if state.stage.startswith("pass:"):
        stage = f"pass step {state.stage[5:]}"
    elif state.stage in (BEFORE, AFTER):
        stage = _drawn(dump, state)
    elif state.stage == STABLEHLO:
        stage = "StableHLO (converted by jaxlib)"
    else:
        stage = state.stage.replace("_", " ")
    label = module.label if module is not None else state.module
    return f"Dump {dump.name}, module {label}, {stage}, computation {computation}."


def _stage_note(dump: Dump, state: ViewState) -> str:
    """What was rendered instead of a before or after optimizations stage the module
    lacks (a single file holds one stage), or ''."""
    if state.stage not in (BEFORE, AFTER):
        return ""
    module = dump.module(state.module) if state.module else dump.main
    if module is None or module.first(state.stage) is not None:
        return ""
    drawn = _drawn(dump, state)
    return (f"module {module.label} has no {state.stage.replace('_', ' ')} text: "
            f"rendered {'its ' if drawn.startswith('StableHLO') else ''}{drawn}")


if __name__ == "__main__":
    sys.exit(main())
