"""The one path from (dump, ViewState) to a graph view, shared by the app and the CLI.

A view of a pass step is coloured by what the step changed (``viz.stepper``): the diff
is against ``ViewState.compare`` ('' = the previous step of a per-pass dump; 'none' = no
diff; or any other stage), removed instructions come back as red ghost nodes, and
``changed_only`` draws only the changes and their neighbours. Comment counts (from the
store) add a badge to the nodes and groups that carry comments.

With a runtime report and ``ViewState.overlay`` set, the after-optimizations graph is
coloured by runtime (``viz.runtime.overlay``): the fill is the runtime (nodes that run
no kernel are blank), a diff keeps its border colour and label, a comment its violet
border; closed groups show totals per step, a while/conditional/call its body's too.
With ``ViewState.memory`` set (and no runtime overlay), the after-optimizations graph is
coloured by the bytes each instruction defines or the bytes live while it runs
(``viz.memory``).

The computation is grouped once (``viz.grouping.group``); the decorations of closed
boxes are computed from that grouping, and the view is drawn once with all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from compiler_bridge import Dump, HloModule, HloParseError
from compiler_bridge.passes import ModuleDiff
from compiler_bridge.dumps import (AFTER, AFTER_CODEGEN, BEFORE, BEFORE_BUFFER_ASSIGNMENT, PASS,
                                   STABLEHLO)
from compiler_bridge.passes import Timeline, step_diff
from compiler_bridge.perf import RuntimeReport

from compiler_bridge.memory import MemoryFileError, ModuleMemory, module_memory
from compiler_bridge.kernels import module_kernels
from compiler_bridge.spmd import Mesh, num_partitions, sdy_meshes

from .backend import kernel_decorations

from . import runtime as RV
from .memory import memory_overlay
from .sharding import mesh_hint, sharding_decorations
from .graph import GraphView, draw
from .grouping import GraphOptions, GroupIndex, group
from .stepper import changed_nodes, diff_decorations, group_decorations, removed_ghosts
from .share import (
    closed_groups,
    comment_decorations,
    comment_group_decorations,
    merge_decorations,
)
from .state import ViewState

MAX_GHOSTS = 40       # more removals than this are marked on their neighbours only
NO_KERNEL = {"fillcolor": "#ffffff", "fontcolor": "#868e96"}   # under a runtime overlay


def stage_path(dump: Dump, state: ViewState) -> str:
    """The file that holds the module at the state's stage."""
    mod = dump.module(state.module) if state.module else dump.main
    if mod is None:
        raise KeyError(f"{dump.name} holds no HLO modules")
    if state.stage in (BEFORE, AFTER):
        # no HLO text at all (a dump of .dot/.html only): XLA's input, the StableHLO
        f = mod.first(state.stage) or mod.first(AFTER) or mod.first(BEFORE) or mod.stablehlo
        if f is None:
            raise KeyError(f"module {mod.label} has no HLO text")
        return f.path
    if state.stage in (AFTER_CODEGEN, BEFORE_BUFFER_ASSIGNMENT):
        f = mod.first(state.stage)
        if f is None:
            raise KeyError(f"module {mod.label} has no {state.stage.replace('_', ' ')} file")
        return f.path
    if state.stage == STABLEHLO:        # module.mlir: Dump.parse converts it with jaxlib
        mlir = mod.stablehlo
        if mlir is None:
            raise KeyError(f"module {mod.label} has no StableHLO (module.mlir)")
        return mlir.path
    if state.stage.startswith("pass:"):
        try:
            seq = int(state.stage[5:])
        except ValueError:
            raise KeyError(f"bad pass step {state.stage!r}") from None
        for f in mod.of_kind(PASS):
            if f.pass_info is not None and f.pass_info.sequence == seq:
                return f.path
        raise KeyError(f"module {mod.label} has no pass step {seq:04d}")
    raise KeyError(f"unknown stage {state.stage!r}")


def module_for(dump: Dump, state: ViewState) -> HloModule:
    return dump.parse(stage_path(dump, state))


def options_for(state: ViewState, budget: int | None = None) -> GraphOptions:
    return GraphOptions(expanded=frozenset(state.expanded), grouping=state.grouping,
                        focus=state.focus, radius=state.radius, budget=budget or state.budget,
                        selected=state.selected)


# --------------------------------------------------------------------------- diffs

def compare_step(timeline: Timeline, state: ViewState) -> int | None:
    """The step the state's stage is compared with, or None for no diff.

    Default (``compare == ''``): the last parsed step before this one in a dump with
    per-pass files; nothing in a dump without them (the plain explorer), where the
    page offers "compare with before optimizations" (``compare='before_optimizations'``).
    """
    index = timeline.index_of(state.stage)
    if index is None or state.compare == "none":
        return None
    if state.compare:
        other = timeline.index_of(state.compare)
        return other if other is not None and other != index else None
    if not timeline.per_pass:
        return None
    return timeline.previous_ok(index)


def diff_for(dump: Dump, state: ViewState, timeline: Timeline) -> ModuleDiff | None:
    """The diff the view of ``state`` shows (None: no diff). Raises HloParseError when
    either snapshot does not parse."""
    index = timeline.index_of(state.stage)
    against = compare_step(timeline, state)
    if index is None or against is None:
        return None
    if not timeline.step(index).ok:
        return None
    return step_diff(dump, timeline, index, against)


def module_id_for(dump: Dump, state: ViewState) -> str:
    mod = dump.module(state.module) if state.module else dump.main
    return mod.id if mod is not None else ""


def runtime_overlay(report: RuntimeReport | None, state: ViewState, module: HloModule,
                    module_id: str, view: GroupIndex | None = None) -> RV.Overlay | None:
    """The runtime overlay of ``state`` (None: off, or not the after-optimizations stage,
    the one that ran); with ``view``, closed groups get totals too."""
    if report is None or state.overlay not in RV.MODES or state.stage != AFTER:
        return None
    return RV.overlay(report, state.overlay, view=view, module_id=module_id,
                      inclusive=RV.inclusive_totals(report, module, module_id))


def memory_for(dump: Dump, state: ViewState) -> tuple[ModuleMemory | None, str]:
    """The module's memory for the memory overlay of ``state`` (None when off, at another
    stage than after optimizations, or unreadable; then a note says why)."""
    if not state.memory or state.stage != AFTER:
        return None, ""
    mod = dump.module(state.module) if state.module else dump.main
    if mod is None:
        return None, ""
    try:
        return module_memory(dump, mod), ""
    except MemoryFileError as e:
        return None, f"no memory overlay: {e.message}"


def backend_badges(dump: Dump, state: ViewState) -> dict[str, dict[str, str]]:
    """What the backend decided, as badges on kernel nodes (GPU emitter, TPU estimated
    cycles and memory space), at the stages whose instructions the kernels are."""
    if state.stage not in (AFTER, AFTER_CODEGEN):
        return {}
    mod = dump.module(state.module) if state.module else dump.main
    if mod is None:
        return {}
    try:
        return kernel_decorations(module_kernels(dump, mod))
    except (KeyError, HloParseError, OSError):
        return {}


def _blank_non_kernels(module: HloModule, comp: str | None, state: ViewState,
                       valued: Mapping[str, object]) -> dict[str, dict[str, str]]:
    """Instructions drawn without a runtime (parameters, tuples, what is fused into an
    opened fusion): blank, so the colours on screen are runtimes only."""
    c = module.get_computation(comp) if comp else module.entry
    if c is None:
        return {}
    insts = list(c.instructions)
    for gid in state.expanded:
        if gid.startswith("fusion:"):
            inst = c.get(gid[len("fusion:"):])
            fused = module.get_computation(inst.called_names[0]) \
                if inst is not None and inst.called_names else None
            if fused is not None:
                insts.extend(fused.instructions)
    return {i.name: dict(NO_KERNEL) for i in insts if i.name not in valued}


def _border_only(decorations: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """A diff's decorations without their fill (under a runtime overlay the fill is the
    runtime; the diff keeps its border colour and label)."""
    return {k: {a: v for a, v in d.items() if a != "fillcolor"} for k, d in decorations.items()}


def graph_for(dump: Dump, state: ViewState, budget: int | None = None, *,
              timeline: Timeline | None = None,
              comments: Mapping[str, int] | None = None,
              runtime: RuntimeReport | None = None,
              diff: ModuleDiff | None = None) -> GraphView:
    """The graph view the app shows for this state (with a timeline: the step's diff
    colours; with comment counts: their badges; with a runtime report and
    ``state.overlay``: runtime colours). ``diff``: a diff whose newer side is the module
    shown (another compile's module against it), coloured instead of the timeline's."""
    module = module_for(dump, state)
    comp = state.computation or None
    mid = module_id_for(dump, state) if runtime is not None else ""
    overlay = runtime_overlay(runtime, state, module, mid)
    notes: list[str] = []
    memory, why = memory_for(dump, state) if overlay is None else (None, "")
    if why:
        notes.append(why)
    if diff is None and timeline is not None:
        try:
            diff = diff_for(dump, state, timeline)
        except HloParseError as e:
            notes.append(f"cannot compare with the chosen step: {str(e).splitlines()[0]}")
    deco: dict[str, dict[str, str]] = {}
    options = options_for(state, budget)
    if diff is not None:
        deco = diff_decorations(diff)
        removed_here = sum(1 for r in diff.removed
                           if r.computation == _old_name(diff, module, comp))
        ghosts = removed_ghosts(diff, comp) if removed_here <= MAX_GHOSTS else []
        if removed_here > MAX_GHOSTS:
            notes.append(f"{removed_here} instructions of this computation were removed: too "
                         "many to draw as ghosts, so their neighbours carry a red dashed "
                         "border ('✕ n removed'); the Changes tab lists them all")
        only: frozenset[str] = frozenset()
        if state.changed_only and not state.focus:
            only = frozenset(changed_nodes(diff, comp, radius=1, decorations=deco))
            if not only:
                notes.append("nothing in this computation changed in this step; "
                             "showing all of it")
        options = replace(options, ghosts=tuple(ghosts), only=only)
    marks = comment_decorations(module, comments) if comments else {}
    marks = merge_decorations(backend_badges(dump, state), marks)
    if overlay is not None:      # fill: the runtime; border: the diff, then comments
        runtime_deco = merge_decorations(
            _blank_non_kernels(module, comp, state, overlay.decorations), overlay.decorations)
        node_deco = merge_decorations(_border_only(deco), runtime_deco, marks)
    elif memory is not None:     # fill: the bytes; border: the diff, then comments
        node_deco = merge_decorations(_border_only(deco),
                                      memory_overlay(memory, state.memory).decorations, marks)
    else:
        node_deco = merge_decorations(deco, marks)
    # a partitioned module's shardings and collectives: a label line each, their borders
    # under the overlays' and comments' (a later layer wins)
    badges = sharding_decorations(module, _mesh_before(dump, state, module))
    node_deco = merge_decorations(badges, node_deco)
    if badges:
        notes.append("⊞ a sharding: the mesh axes splitting each dimension (a border colour "
                     "per sharding); ⇄ a collective: its group size and the bytes one device "
                     "sends")
    grouped = group(module, comp, options)
    # closed groups say what is inside them: the diff's counts, runtime totals, comments
    diff_groups = group_decorations(grouped, deco) if deco else {}
    runtime_groups: dict[str, dict[str, str]] = {}
    if overlay is not None:
        diff_groups = _border_only(diff_groups)
        totals = runtime_overlay(runtime, state, module, mid, grouped)
        if totals is not None:
            runtime_groups = {g: d for g, d in totals.decorations.items()
                              if g in grouped.groups}
    elif memory is not None:
        diff_groups = _border_only(diff_groups)
        sums = memory_overlay(memory, state.memory, grouped.group_of, grouped.groups)
        runtime_groups = {g: d for g, d in sums.decorations.items() if g in grouped.groups}
    groups = merge_decorations(diff_groups, runtime_groups,
                               comment_group_decorations(grouped, marks) if marks else {})
    view = draw(grouped, {**node_deco, **closed_groups(grouped, groups)}, options.selected,
                options.ghosts)
    view.notes.extend(notes)
    return view


def _mesh_before(dump: Dump, state: ViewState, module: HloModule) -> Mesh | None:
    """The mesh the before-optimizations text names, for a later stage of a partitioned
    module (whose own text no longer does); None otherwise."""
    if state.stage == BEFORE or num_partitions(module) <= 1 or sdy_meshes(module):
        return None
    mod = dump.module(state.module) if state.module else dump.main
    f = mod.before_optimizations if mod is not None else None
    return mesh_hint(dump.parse(f.path)) if f is not None else None


def _old_name(diff: ModuleDiff, module: HloModule, comp: str | None) -> str:
    """The older snapshot's name of the computation shown."""
    new = module.get_computation(comp) if comp else module.entry
    if new is None:
        return ""
    back = {v: k for k, v in diff.computation_map.items()}
    return back.get(new.name, new.name)
