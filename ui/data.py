"""Every cached loader of the page, in one place: what is read, parsed, compared, laid out
or predicted once and then found again. Each is ``st.cache_data`` or ``st.cache_resource``
and takes dumps, modules, timelines and runtime reports as plain arguments, which
``BY_CONTENT`` keys by their content (``.key``), never by a path or a session.

Pages call these; none of them draws anything.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import streamlit as st
from streamlit.runtime.caching.hashing import HashFuncsDict

from compiler_bridge import (Dump, DumpError, HloModule, HloParseError, PairReport,
                             compare_dumps, open_dump, settings)
from compiler_bridge.dumps import AFTER, BEFORE, Store, StoredDump
from compiler_bridge.hlo import layout_changes
from compiler_bridge.memory import MemoryFileError, ModuleMemory, module_memory
from compiler_bridge.compare import FlagsDiff, Pairing, flags_diff, pair_modules
from compiler_bridge.passes import (HistoryEvent, ModuleDiff, Timeline, instruction_history,
                                    pass_timeline, step_changes, step_diff)
from compiler_bridge.perf import RuntimeReport, runtime_report
from compiler_bridge.steps import TF_GRAPH
from compiler_bridge.tf import GraphDiff, graph_step_changes, graph_step_diff, tf_index
from viz import GraphView, ViewState, compare_step, graph_for
from viz import navigation as N
from viz import panels as P
from viz import runtime as RV
from viz import stepper as SV
from viz import warm as layout_warm

from .kit import describe, log
from .model import Opened, Shown, TraceChoice


def content_key(obj: Dump | HloModule | Timeline | RuntimeReport) -> str:
    """What a cache knows one of these objects by: its content identity (``.key``)."""
    return obj.key


# ``hash_funcs`` for st.cache_*: a cached function takes dumps, modules, timelines and
# runtime reports as plain arguments, and Streamlit keys them by content, never by path
BY_CONTENT: HashFuncsDict = {Dump: content_key, HloModule: content_key, Timeline: content_key,
                             RuntimeReport: content_key}


# --------------------------------------------------------------------------- dumps

@st.cache_resource(show_spinner=False)
def warm_up() -> threading.Thread:
    """Start the layout engine once per server process, in the background."""
    t = threading.Thread(target=layout_warm, name="hlolens-warm", daemon=True)
    t.start()
    return t


@st.cache_resource(show_spinner=False, max_entries=16)
def dump_at(path: str, key: str) -> Dump:
    """The dump at ``path`` whose content identity is ``key`` (opened once per content)."""
    return open_dump(path, key=key)


def upload_cap() -> int:
    """The upload size cap in bytes: Streamlit's ``server.maxUploadSize`` (MB; 2048 in
    .streamlit/config.toml), which the uploader enforces in the browser too."""
    try:
        mb = int(st.get_option("server.maxUploadSize"))
    except (RuntimeError, TypeError, ValueError):
        mb = 2048
    return max(mb, 1) << 20


@st.cache_resource(show_spinner=False)
def store_at(location: str, cap: int) -> Store:
    return Store(location or None, max_upload_bytes=cap)


def store() -> Store:
    """The dump store ($HLOLENS_DATA, default ./.hlolens-data): uploads and --dump."""
    return store_at(settings().data, upload_cap())


@st.cache_resource(show_spinner="Adding the dump to the store, so links to it work…",
                   max_entries=8)
def cli_stored(path: str, key: str, location: str) -> StoredDump | str:
    """The --dump folder's entry in the store (added once per content), or why not."""
    try:
        return store().add_path(path)
    except (DumpError, OSError) as e:       # StoreError is a DumpError
        log.warning("--dump %s is not in the store: %s", path, e)
        return describe(e)


@st.cache_data(show_spinner=False, max_entries=256, hash_funcs=BY_CONTENT)
def read_text(dump: Dump, path: str) -> str:
    return dump.read_text(path)


# --------------------------------------------------------------------------- modules

@st.cache_data(show_spinner=False, max_entries=4096, hash_funcs=BY_CONTENT)
def parse_stats(dump: Dump, path: str) -> dict:
    """The parsed file's stats ({'stats': …}), or the parser's message ({'error': …})."""
    try:
        return {"stats": dump.parse(path).stats()}
    except HloParseError as e:
        return {"error": str(e)}


@st.cache_resource(show_spinner="Reading the module's snapshots (once per dump)…",
                   max_entries=32, hash_funcs=BY_CONTENT)
def timeline(dump: Dump, module_id: str) -> Timeline:
    """The module's pass timeline (counts per step)."""
    return pass_timeline(dump, dump.module(module_id))


@st.cache_resource(show_spinner=False, max_entries=64, hash_funcs=BY_CONTENT)
def search(module: HloModule, query: str, regex: bool) -> P.SearchResult:
    return P.search(module, query, regex=regex)


@st.cache_resource(show_spinner=False, max_entries=64, hash_funcs=BY_CONTENT)
def module_summary(module: HloModule) -> P.ModuleSummary:
    return P.module_summary(module)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=BY_CONTENT)
def layout_changes_of(module: HloModule) -> list:
    return layout_changes(module)


@st.cache_resource(show_spinner=False, max_entries=32, hash_funcs=BY_CONTENT)
def memory(dump: Dump, module_id: str) -> tuple[ModuleMemory | None, str]:
    """The module's memory, or why there is none (cached per dump and module)."""
    try:
        return module_memory(dump, module_id), ""
    except MemoryFileError as e:
        return None, str(e)


# --------------------------------------------------------------------------- graph views

@dataclass(frozen=True)
class ViewParams:
    """Everything a graph view is drawn from besides the dump, the module's timeline and
    the runtime report (which the cache knows by their ``key``): the view state reduced
    to what changes the drawing, and the comment badges. The cache key of the view.

    Left out: the selection and viewport (the browser highlights and pans), the dump and
    trace (the dump and report arguments). Normalised so that equal drawings share one
    entry: the computation '' when the module lacks it, the groups sorted, ``compare``
    the stage actually compared with ('none' for no diff), ``changed_only`` only with a
    diff, ``overlay`` only with a report at the stage that ran."""

    state: ViewState
    comments: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, shown: Shown, state: ViewState, comments: Mapping[str, int] | None,
           overlay: bool) -> ViewParams:
        comp = state.computation if shown.module.get_computation(state.computation or "") \
            else ""
        tl = shown.timeline
        # comparing with another compile: its diff replaces the step's (ui.compare)
        against = compare_step(tl, state) if tl is not None and not state.base else None
        compare = tl.step(against).stage if tl is not None and against is not None else "none"
        drawn = ViewState(module=shown.dump_module.id, stage=shown.stage, computation=comp,
                          expanded=tuple(sorted(state.expanded)), grouping=state.grouping,
                          focus=state.focus, radius=state.radius, compare=compare,
                          changed_only=state.changed_only and (against is not None
                                                               or bool(state.base)),
                          overlay=state.overlay if overlay else "", budget=state.budget,
                          memory=state.memory if shown.stage == AFTER else "",
                          base=state.base, base_module=state.base_module)
        return cls(drawn, tuple(sorted((comments or {}).items())))


def draw_view(dump: Dump, timeline: Timeline | None, runtime: RuntimeReport | None,
              params: ViewParams) -> GraphView:
    """The view of ``params``: what the page draws, and what the graph lays out ahead
    (one function, so both make the same DOT and the layout is found)."""
    state = params.state
    cross = diff_for_graph(dump, stage_file(dump, state), state) if state.base else None
    return graph_for(dump, state, timeline=None if state.base else timeline,
                     comments=dict(params.comments), runtime=runtime, diff=cross)


def stage_file(dump: Dump, state: ViewState) -> str:
    """The dump file of the state's module and stage ('' when there is none)."""
    try:
        mod = dump.module(state.module) if state.module else dump.main
    except KeyError:
        return ""
    if mod is None:
        return ""
    if state.stage.startswith("pass:"):
        return ""
    f = mod.first(state.stage) or mod.first(AFTER) or mod.first(BEFORE)
    return f.path if f is not None else ""


@st.cache_resource(show_spinner=False, max_entries=48, hash_funcs=BY_CONTENT)
def built_view(dump: Dump, timeline: Timeline | None, runtime: RuntimeReport | None,
               params: ViewParams) -> tuple[GraphView, float]:
    """The view of ``params`` and the seconds it took to build."""
    t0 = time.perf_counter()
    view = draw_view(dump, timeline, runtime, params)
    return view, time.perf_counter() - t0


@st.cache_resource(show_spinner=False, max_entries=48, hash_funcs=BY_CONTENT)
def cards(module: HloModule, drawn: tuple[str, ...]) -> str:
    """The inspector headers of the drawn instructions, as the JSON the graph carries."""
    return json.dumps(P.cards(module, drawn), separators=(",", ":"), ensure_ascii=False)


def cards_for(shown: Shown, view: GraphView) -> str:
    drawn = tuple(sorted(n for sid, n in view.nodes.items() if sid.startswith("node:")))
    return cards(shown.module, drawn)


def view_params(shown: Shown, state: ViewState, comments: Mapping[str, int] | None,
                runtime: RuntimeReport | None) -> tuple[ViewParams, RuntimeReport | None]:
    """The view's params, and the runtime report it is coloured by (only with the overlay
    on, at the stage that ran)."""
    if not (state.overlay and shown.stage == AFTER):
        runtime = None
    return ViewParams.of(shown, state, comments, overlay=runtime is not None), runtime


def view_for(opened: Opened, shown: Shown, state: ViewState,
             comments: Mapping[str, int] | None = None,
             runtime: RuntimeReport | None = None) -> tuple[GraphView, float]:
    """The (cached) graph view of ``state`` and the seconds it took to build: diff colours
    when the step is compared with another, comment badges from ``comments``
    (instruction -> count), runtime colours from ``runtime`` when ``state.overlay`` is on
    at the stage that ran."""
    params, runtime = view_params(shown, state, comments, runtime)
    return built_view(opened.dump, shown.timeline, runtime, params)


# at most this many views laid out ahead after each one drawn
PREFETCH_VIEWS = 3


def likely_next(opened: Opened, shown: Shown, state: ViewState, view: GraphView,
                comments: Mapping[str, int] | None, runtime: RuntimeReport | None,
                steps: Sequence[int] = ()) -> Iterator[str]:
    """The DOT texts of the views a user is likely to open from this one, the likeliest
    first: the pass steps ``steps`` (the next one on screen), the selected
    fusion opened or closed, the biggest closed groups opened. Built the way a click
    builds them (``viz.navigation``), so asking for one finds its layout ready."""
    tl = shown.timeline
    for index in steps:
        if tl is None:
            break
        step = tl.step(index)
        try:
            module = opened.dump.parse(step.file)
        except HloParseError:
            continue
        other = Shown(shown.dump_module, step.stage, step.file, module, tl, index)
        new, _ = N.choose_step(state, step.stage)
        params, rt = view_params(other, new, comments, runtime)
        yield draw_view(opened.dump, tl, rt, params).dot
    targets = []
    if state.selected and ":" not in state.selected:
        inst = shown.module.find(state.selected)
        if inst is not None and inst.opcode == "fusion":
            targets.append("node:" + state.selected)
    closed = sorted((g for g in view.groups.values() if not g.expanded and g.size > 1),
                    key=lambda g: -g.size)
    targets += ["group:" + g.id for g in closed]
    for target in targets[:PREFETCH_VIEWS]:
        new, _ = N.on_graph_event(state, shown.module, "dblclick", target)
        params, rt = view_params(shown, new, comments, runtime)
        yield draw_view(opened.dump, tl, rt, params).dot


# the diffs the graph draws, by (dump key, file shown, base, base module): registered by
# the comparison before the graph draws, read by the graph's builder (also from the
# layout-ahead thread, which must not call Streamlit's caches)
_DIFFS: OrderedDict[tuple[str, str, str, str], ModuleDiff] = OrderedDict()
_DIFFS_LOCK = threading.Lock()


def register_diff(dump: Dump, path: str, state: ViewState, diff: ModuleDiff) -> None:
    with _DIFFS_LOCK:
        _DIFFS[(dump.key, path, state.base, state.base_module)] = diff
        _DIFFS.move_to_end((dump.key, path, state.base, state.base_module))
        while len(_DIFFS) > 32:
            _DIFFS.popitem(last=False)


def diff_for_graph(dump: Dump, path: str, state: ViewState) -> ModuleDiff | None:
    """The comparison's diff when the graph shows the file it compares, else None."""
    if not state.base:
        return None
    with _DIFFS_LOCK:
        return _DIFFS.get((dump.key, path, state.base, state.base_module))


# --------------------------------------------------------------------------- pass steps

CHART_HEIGHT = 190


@st.cache_resource(show_spinner="Counting what every step changed (once per dump)…",
                   max_entries=16, hash_funcs=BY_CONTENT)
def changes_per_step(dump: Dump, tl: Timeline) -> list[dict]:
    if tl.source == TF_GRAPH:
        return graph_step_changes(tf_index(dump), tl)
    return step_changes(dump, tl)


@st.cache_resource(show_spinner=False, max_entries=64, hash_funcs=BY_CONTENT)
def timeline_chart(dump: Dump, tl: Timeline, current: int, hide: bool, with_changes: bool):
    """The timeline chart with step ``current`` marked; with the +/−/~ counts per step
    when ``with_changes`` (counted once per dump)."""
    counts = changes_per_step(dump, tl) if with_changes else None
    fig = SV.timeline_figure(tl, current=current, hide_identical=hide, changes=counts)
    fig.update_layout(height=CHART_HEIGHT, title=None, margin={"l": 6, "r": 6, "t": 24, "b": 6},
                      legend={**SV.LEGEND_ON_TOP, "font": {"size": 10}})
    return fig


@st.cache_data(show_spinner="Following the instruction through the steps…", max_entries=256,
               hash_funcs=BY_CONTENT)
def step_history(dump: Dump, tl: Timeline, index: int, name: str) -> list[HistoryEvent]:
    return instruction_history(dump, tl, index, name)


@st.cache_resource(show_spinner=False, max_entries=16, hash_funcs=BY_CONTENT)
def step_tables(dump: Dump, tl: Timeline, index: int, against: int) -> dict[str, list[dict]]:
    """The diff of step ``index`` against step ``against`` as tables."""
    d: ModuleDiff | GraphDiff | None = graph_step_diff(tf_index(dump), tl, index, against) \
        if tl.source == TF_GRAPH else step_diff(dump, tl, index, against)
    if d is None:
        raise KeyError(f"step {index} has nothing to compare with")
    return SV.diff_tables(d)


# --------------------------------------------------------------------------- comparison

@st.cache_resource(show_spinner="Adding the dump to compare with to the store…", max_entries=8)
def baseline_stored(path: str, key: str, location: str) -> StoredDump | str:
    try:
        return store().add_path(path)
    except (DumpError, OSError) as e:
        return describe(e)


# a cache of its own beside ``dump_at``: the baseline is opened from its whole folder
@st.cache_resource(show_spinner=False, max_entries=16)
def baseline_at(folder: str, key: str) -> Dump:
    return open_dump(folder, key=key)


@st.cache_resource(show_spinner="Pairing the modules of both dumps…", max_entries=16,
                   hash_funcs=BY_CONTENT)
def pairing(base: Dump, dump: Dump) -> Pairing:
    return pair_modules(base, dump)


@st.cache_resource(show_spinner="Comparing the two compiles…", max_entries=32,
                   hash_funcs=BY_CONTENT)
def pair_report(base: Dump, base_module: str, dump: Dump, module: str) -> PairReport:
    """The comparison of ``module`` with ``base_module`` ('' = its pairing partner)."""
    return compare_dumps(base, dump, module_a=base_module, module_b=module).reports[0]


@st.cache_resource(show_spinner=False, max_entries=32, hash_funcs=BY_CONTENT)
def flags(base: Dump, base_module: str, dump: Dump, module: str) -> FlagsDiff:
    return flags_diff(base, dump, base.module(base_module), dump.module(module))


@st.cache_data(show_spinner="Following the instruction through the baseline's passes…",
               max_entries=128, hash_funcs=BY_CONTENT)
def baseline_history(base: Dump, module_id: str, name: str
                     ) -> tuple[list[HistoryEvent], list[str]]:
    """The baseline's pass steps that changed ``name`` (as named after optimizations), and
    each step's stage; nothing when the baseline has no per-pass files."""
    tl = pass_timeline(base, base.module(module_id))
    index = tl.index_of(AFTER)
    if not tl.per_pass or index is None:
        return [], []
    events = instruction_history(base, tl, index, name)
    return events, [tl.step(e.index).stage for e in events]


# --------------------------------------------------------------------------- runtimes

@st.cache_resource(show_spinner="Reading the trace, predicting every kernel's runtime…",
                   max_entries=16, hash_funcs=BY_CONTENT)
def runtime_report_of(dump: Dump, module_id: str, trace: TraceChoice | None, model: str,
             _load: Callable[[], list] | None) -> RuntimeReport:
    """The module's runtime report; ``trace`` (where the runtimes come from) and ``model``
    (the cost model files' times) are the key, ``_load`` reads that trace's bytes."""
    traces = _load() if _load is not None else None
    return runtime_report(dump, modules=[module_id], traces=traces)


@st.cache_resource(show_spinner=False, max_entries=16, hash_funcs=BY_CONTENT)
def kernel_sizes(dump: Dump, module_id: str) -> dict[str, int]:
    return RV.kernel_sizes(dump.stage(dump.module(module_id), AFTER))
