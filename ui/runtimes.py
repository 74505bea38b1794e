"""The runtime parts of the page: measured and predicted kernel runtimes.

``app.py`` places them: ``overlay_control`` in the sidebar (none / measured / predicted /
ratio, in the URL as ``overlay``), ``graph_messages`` above the graph (what keeps the
overlay from showing measurements: no trace, a broken one, another stage), the report
for the graph (``Runtimes.for_graph``), the *Runtimes* tab (``panel``: the trace and a
place to add one, the predictor and why, metrics with their noise floor, scatter,
roofline, kernels) and the HTML report's kernel table (``Runtimes.export_rows``).

Traces: the dump's own (``plugins/profile/<session>/`` inside it) are used without
asking. A trace uploaded apart is checked against the dump first (a corrupt file, one
without per-op events or one of another program is refused with the reason), then kept
in the store beside the dump (``compiler_bridge.dumps.TraceShelf``) and named in the URL
(``trace=<id>``), so a link shows the same runtimes to anyone who opens it. A dump that
is not in the store keeps uploads in the session only.

The report is computed when something needs it (the overlay, the open tab, an export),
once per dump content, module, trace and cost model (``st.cache_resource``). Every
move (a click on a point or a row) goes through ``viz.navigation`` and the URL.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import streamlit as st

from compiler_bridge import DumpError, settings
from compiler_bridge.dumps import AFTER, Dump, TraceShelf, trace_id
from compiler_bridge.perf import (
    RuntimeReport,
    StepTime,
    TraceError,
    default_model_path,
    measure,
    profile_for_platform,
    rate_note,
    runtime_report,
    shipped_model_path,
    trace_sessions,
    uploaded,
)
from viz import OVERLAYS, GraphView, when
from viz import navigation as N
from viz import panels as P
from viz import runtime as V

from .explorer import Shown
from .inspector import Inspected, show_in_graph
from .kit import (
    BY_CONTENT,
    STAGES,
    Navigator,
    code,
    controlled,
    go,
    go_option,
    go_widget,
    md,
    selected_points,
    selected_row,
)
from .opening import Opened, store, upload_cap

log = logging.getLogger("hlolens")

SESSION_TRACES = "rt-session-traces"   # {Dump.key: {trace id: (name, bytes, time)}}
UPLOAD_GEN = "rt-upload-gen"           # a new uploader key after each upload
MESSAGE = "rt-message"                 # (kind, text) of the last upload
TRACE_TYPES = ["gz", "json", "pb"]     # perfetto_trace.json.gz, *.trace.json.gz, *.xplane.pb
OVERLAY_NAMES = {"": "none", "measured": "measured", "predicted": "predicted",
                 "ratio": "ratio"}
CHART_CONFIG = {"displayModeBar": False}


# --------------------------------------------------------------------------- traces

@dataclass(frozen=True)
class TraceChoice:
    """One trace the runtimes can come from."""

    key: str          # '' (the dump's own) or an uploaded trace's id (the URL's ``trace``)
    label: str        # for the picker
    origin: str       # 'dump' | 'store' | 'session'
    name: str         # the file, for messages


def shelf() -> TraceShelf:
    return TraceShelf(store())


def _session_traces(opened: Opened) -> dict[str, tuple[str, bytes, float]]:
    return st.session_state.setdefault(SESSION_TRACES, {}).setdefault(opened.dump.key, {})


def trace_choices(opened: Opened) -> list[TraceChoice]:
    """The dump's own trace first (if any), then uploaded ones, newest first."""
    out: list[TraceChoice] = []
    sessions = trace_sessions(opened.dump)
    if sessions:
        first = next(iter(sessions.values()))[0]
        more = f" (+{len(sessions) - 1} more sessions)" if len(sessions) > 1 else ""
        out.append(TraceChoice("", f"in the dump: {first.path}{more}", "dump", first.path))
    if opened.share_id:
        try:
            stored = shelf().list(opened.share_id)
        except (DumpError, OSError) as e:
            log.warning("traces of %s: %s", opened.share_id, e)
            stored = []
        for t in stored:
            out.append(TraceChoice(t.id, f"uploaded: {t.name} · {P.human_bytes(t.size)} · "
                                         f"{when(t.uploaded_at)}", "store", t.name))
    for tid, (name, data, at) in sorted(_session_traces(opened).items(),
                                        key=lambda kv: -kv[1][2]):
        out.append(TraceChoice(tid, f"uploaded (this session only): {name} · "
                                    f"{P.human_bytes(len(data))}", "session", name))
    return out


def pick_trace(choices: list[TraceChoice], wanted: str) -> tuple[TraceChoice | None, str]:
    """The choice the URL's ``trace`` names ('' = the dump's own, else the newest
    upload), and a warning when the named one is not here."""
    if wanted:
        for c in choices:
            if c.key == wanted:
                return c, ""
    default = choices[0] if choices else None
    if not wanted:
        return default, ""
    instead = f"showing {default.label}" if default is not None else "nothing is measured"
    return default, (f"The trace `{md(wanted)}` this link names is not stored with this "
                     f"dump (removed, or uploaded on another server): {md(instead)}.")


def _mtime(path: str) -> str:
    try:
        return str(os.stat(path).st_mtime_ns)
    except OSError:
        return "-"


@st.cache_resource(show_spinner="Reading the trace, predicting every kernel's runtime…",
                   max_entries=16, hash_funcs=BY_CONTENT)
def _report(dump: Dump, module_id: str, trace: TraceChoice | None, model: str,
            _load: Callable[[], list] | None) -> RuntimeReport:
    """The module's runtime report; ``trace`` (where the runtimes come from) and ``model``
    (the cost model files' times) are the key, ``_load`` reads that trace's bytes."""
    traces = _load() if _load is not None else None
    return runtime_report(dump, modules=[module_id], traces=traces)


class Runtimes:
    """The runtimes of the module on screen: the trace they come from, and the report,
    computed (cached) the first time something asks for it."""

    def __init__(self, nav: Navigator, opened: Opened, shown: Shown) -> None:
        self.nav = nav
        self.opened = opened
        self.shown = shown
        self.choices = trace_choices(opened)
        self.choice, self.warning = pick_trace(self.choices, nav.state.trace)
        f = shown.dump_module.after_optimizations
        self.device = profile_for_platform(f.platform if f is not None else "cpu")
        self.model_path = default_model_path(self.device.kind)
        shipped = shipped_model_path(self.device.kind)
        self.model = (f"{self.model_path}:{_mtime(self.model_path)}:{shipped}:"
                      f"{_mtime(shipped)}:{_mtime(settings().calibrated_profile)}")
        self.error = ""
        self._report: RuntimeReport | None = None
        self._load = self._loader()        # now: exports run outside the script's thread

    def _loader(self) -> Callable[[], list] | None:
        c, opened = self.choice, self.opened
        if c is None or c.origin == "dump":
            return None
        if c.origin == "session":
            name, data, _ = _session_traces(opened)[c.key]
            return lambda: [uploaded(name, data)]
        return lambda: [uploaded(c.name, shelf().read(opened.share_id, c.key))]

    def report(self) -> RuntimeReport | None:
        """The report (None when it cannot be made: ``error`` says why)."""
        if self._report is None and not self.error:
            try:
                self._report = _report(self.opened.dump, self.shown.dump_module.id,
                                       self.choice, self.model, self._load)
            except Exception as e:         # a model file that does not load, a lost trace
                log.exception("runtime report")
                self.error = f"{type(e).__name__}: {e}" if not isinstance(e, DumpError) \
                    else str(e)
        return self._report

    def for_graph(self) -> RuntimeReport | None:
        """The report for the graph when the overlay is on at the stage that ran."""
        if not self.nav.state.overlay or self.shown.stage != AFTER:
            return None
        return self.report()

    def export_rows(self) -> list[dict] | None:
        """The HTML report's kernel table: when there is a trace or the overlay is on."""
        if self.choice is None and not self.nav.state.overlay:
            return None
        r = self.report()
        if r is None or not (r.measured_rows or self.nav.state.overlay):
            return None
        return V.report_rows(r)

    def export_legend(self) -> list[tuple[str, str]]:
        """The overlay's colours for the HTML report (none when it is off)."""
        r = self.for_graph()
        if r is None:
            return []
        ov = V.overlay(r, self.nav.state.overlay, module_id=self.shown.dump_module.id)
        if not ov.values:
            return []
        return [(f"{ov.title}: {label}" if k == 0 else label, color)
                for k, (label, color) in enumerate(ov.stops)]

    def problem(self, r: RuntimeReport, in_panel: bool = False) -> str:
        """Why nothing is measured for this module (markdown, naming the file), or ''."""
        if self.choice is None:
            where = "above" if in_panel else "in the *Runtimes* tab below"
            return ("**No profiler trace for this dump**, so nothing is measured. Add one "
                    f"{where} (perfetto_trace.json.gz, *.trace.json.gz or *.xplane.pb), or "
                    "record dump and trace together with "
                    "`python -m compiler_bridge profile SCRIPT.py --out DIR`.")
        if r.trace_error:
            source, sep, message = r.trace_error.partition(": ")
            if not sep:
                source, message = self.choice.name, r.trace_error
            message = message.rstrip()
            if not message.endswith((".", ")")):
                message += "."
            return f"**Nothing measured** from {code(source)}: {md(message)}"
        if not r.measured_rows:
            mid = self.shown.dump_module.id
            others = ", ".join(f"{i} {md(n)}" for i, n in (
                (k, m.name) for k, m in (r.measured.modules.items() if r.measured else ())))
            return (f"**The trace has no events for module {mid}** (it did not run while "
                    "profiling)" + (f"; it measured module {others}, pick it in the sidebar."
                                    if others else "."))
        return ""


# --------------------------------------------------------------------------- sidebar

def overlay_control(nav: Navigator, rt: Runtimes | None) -> None:
    """Sidebar: colour the graph by runtime, and where the runtimes come from."""
    state = nav.state
    sb = st.sidebar
    controlled("pick-overlay", state.overlay)
    sb.segmented_control(
        "Runtime overlay", list(OVERLAYS), key="pick-overlay", required=True,
        format_func=lambda o: OVERLAY_NAMES.get(o, o), on_change=go_widget,
        args=(N.set_overlay, "pick-overlay"), width="stretch",
        help="Colour each kernel by its measured time (the trace), its predicted time "
             "(roofline or learned model), or predicted / measured; boxes show totals per "
             "step. The Runtimes tab below has the numbers.")
    if rt is None:
        return
    if rt.choice is None:
        sb.caption(":material/timer: No trace for this dump: *predicted* works; add a trace "
                   "in the Runtimes tab.")
    elif rt.choice.origin == "dump":
        sb.caption(":material/timer: Trace in the dump: "
                   + code(os.path.basename(rt.choice.name)))
    else:
        sb.caption(f":material/timer: Uploaded trace: {code(rt.choice.name)}")


# --------------------------------------------------------------------------- graph

def graph_messages(nav: Navigator, rt: Runtimes | None) -> None:
    """Above the graph, with the overlay on: what keeps it from showing measurements."""
    state = nav.state
    if not state.overlay or rt is None:
        return
    if rt.warning:
        st.warning(rt.warning)
    if rt.shown.stage != AFTER:
        cols = st.columns([4, 1], vertical_alignment="center")
        cols[0].info(f"The runtime overlay colours the module **after optimizations** (what "
                     f"ran); this is {md(_stage_name(rt.shown))}.")
        cols[1].button("Show after optimizations", key="rt-to-after", on_click=go,
                       args=(N.choose_step, AFTER))
        return
    r = rt.report()
    if r is None:
        st.error(f"Runtimes cannot be computed: {code(rt.error)}")
        return
    if state.overlay != "predicted":
        problem = rt.problem(r)
        if problem:
            st.warning(problem + " The graph shows no measured colours; *predicted* still "
                       "works.")


def _stage_name(shown: Shown) -> str:
    if shown.timeline is not None:
        step = shown.timeline.step(shown.index)
        if step.kind == "pass":
            return f"pass step {step.index} ({step.pass_name})"
    return STAGES.get(shown.stage, shown.stage)


# --------------------------------------------------------------------------- inspector

def inspector(nav: Navigator, rt: Runtimes | None, inspected: Inspected,
              view: GraphView | None = None) -> None:
    """In the inspector: the selected kernel's runtime, or a box's totals per step, when
    there is a trace or the overlay is on (at the stage that ran)."""
    name = inspected.name
    if rt is None or not name or rt.shown.stage != AFTER:
        return
    if rt.choice is None and not nav.state.overlay:
        return
    if inspected.info is None and not (view is not None and name in view.groups):
        return
    r = rt.report()
    if r is None:
        return
    if inspected.info is None:
        if view is None:
            return
        line = group_line(r, view, name, rt.shown.module, rt.shown.dump_module.id)
        if line:
            with inspected.slot:
                st.markdown(line)
        return
    row = r.row(name, rt.shown.dump_module.id)
    if row is not None:
        with inspected.slot:
            st.markdown(kernel_line(r, row, rt.shown.module))


def group_line(r: RuntimeReport, view: GraphView, gid: str, module, module_id: str) -> str:
    """A box's kernels per step: measured, predicted and their ratio (markdown, or '')."""
    inc = V.inclusive_totals(r, module, module_id)
    got = {mode: V.overlay(r, mode, view=view, module_id=module_id,
                           inclusive=inc).values.get(gid) for mode in V.MODES}
    if got["predicted"] is None:
        return ""
    parts = []
    if got["measured"] is not None:
        parts.append(f"measured **{V.fmt_us(got['measured'])}** per step")
    parts.append(f"predicted **{V.fmt_us(got['predicted'])}** ({r.predictor})")
    if got["ratio"] is not None:
        parts.append(f"×{got['ratio']:.2f} of measured over the measured kernels")
    return ":material/timer: **Runtime of its kernels**: " + \
        md(" · ".join(parts)).replace("\\*", "*")


def kernel_line(r: RuntimeReport, row, module) -> str:
    """One kernel's runtime, measured beside predicted, as a markdown line."""
    fmt = V._fmt_us
    parts = []
    t = row.timing
    if row.measured_us is not None and t is not None:
        spread = f"p10 {fmt(t.p10_us)} · p90 {fmt(t.p90_us)}, {t.count} executions"
        parts.append(f"measured **{fmt(row.measured_us)}** {r.stat} per execution ({spread})")
        if row.executions_per_run and row.executions_per_run > 1:
            parts.append(f"×{row.executions_per_run:g} per step")
        if row.share is not None:
            parts.append(V.share_text(row))
        if row.overlap:
            parts.append(f"**overlapped**: other kernels ran during {row.overlap:.0%} of "
                         "its time (that time is split between them in the share)")
    elif r.measured is not None:
        parts.append("not measured (no event for it in the trace)")
    ratio = f", ×{row.ratio:.2f} of measured" if row.ratio is not None else ""
    parts.append(f"predicted **{fmt(row.predicted_us)}** ({r.predictor}{ratio})")
    inc = V.inclusive_totals(r, module, row.module_id).get(row.instruction)
    if inc is not None and inc[0]:
        parts.append(f"with body {fmt(inc[0])} per step")
    if row.cost.flops or row.cost.bytes:
        parts.append(f"{V.si(row.cost.flops, 'flop')}, {V.si(row.cost.bytes, 'B')}, "
                     f"{row.bound}-bound")
    else:
        parts.append(f"{row.bound}-bound")
    why = rate_note(row.cost, r.device)
    if why:
        parts.append(why)
    return ":material/timer: **Runtime**: " + md(" · ".join(parts)).replace("\\*", "*")


# --------------------------------------------------------------------------- panel

def panel(nav: Navigator, rt: Runtimes | None) -> None:
    """The Runtimes tab."""
    if rt is None:
        st.caption("Runtimes are not available for this module.")
        return
    _trace_row(nav, rt)
    r = rt.report()
    if r is None:
        st.error(f"Runtimes cannot be computed: {code(rt.error)}")
        return
    st.markdown(predictor_line(r, rt))
    step = r.step_time(rt.shown.dump_module.id)
    if step is not None:
        st.markdown(step_line(step, r))
    if rt.shown.stage != AFTER:
        st.caption(f"These are the kernels of the module after optimizations (what ran); "
                   f"this is {md(_stage_name(rt.shown))}. Picking one shows it there.")
    problem = rt.problem(r, in_panel=True)
    if problem:
        st.warning(problem)
    measured = r.measured_rows
    if r.measured is not None and measured:
        st.caption(_measured_line(r))
    notes = [n for n in r.notes if "has no events in the trace" not in n or not measured]
    if notes:
        with st.expander(f"Notes on the trace ({len(notes)})"):
            st.markdown("\n".join(f"- {md(n)}" for n in notes))
    if len(measured) >= 2:
        _metrics(r)
    selected = nav.state.selected
    if measured:
        charts = (("rt-scatter", V.scatter_figure), ("rt-roofline", V.roofline_figure))
        for col, (name, figure) in zip(st.columns(2, gap="medium"), charts):
            with col:
                fig = figure(r, selected=selected)
                fig.update_layout(height=420, title={"font": {"size": 14}})
                key = f"{name}:{rt.shown.dump_module.id}:{r.key}:{selected}"
                st.plotly_chart(fig, key=key, on_select=partial(_on_points, key, rt),
                                selection_mode="points", config=CHART_CONFIG)
        st.caption("Click a point to select that kernel in the graph. Left: on the dashed "
                   "diagonal the prediction is exact, in the grey band within ×2. Right: "
                   "how close each kernel came to the device's roofs.")
        _timeline(rt, r, selected)
    _kernels(nav, rt, r)


def _timeline(rt: Runtimes, r: RuntimeReport, selected: str) -> None:
    """One step's kernels in per-thread lanes (a trace viewer): click selects."""
    mid = rt.shown.dump_module.id
    runs = V.timeline_runs(r, mid)
    if not runs:
        return
    mt = r.measured.module(mid) if r.measured is not None else None
    median = mt.median_run() if mt is not None else None
    names = [k for k, _ in runs]
    labels = {k: f"step {i + 1} of {len(runs)} · {V.fmt_us(us)}"
                 + (" (median)" if k == median else "") for i, (k, us) in enumerate(runs)}
    st.markdown("**Trace timeline**")
    run = st.selectbox("Step", names, index=names.index(median) if median in names else 0,
                       format_func=lambda k: labels[k], key=f"rt-step:{mid}:{r.key}")
    fig = V.timeline_figure(r, mid, run, selected=selected)
    key = f"rt-timeline:{mid}:{r.key}:{run}:{selected}"
    st.plotly_chart(fig, key=key, on_select=partial(_on_points, key, rt),
                    selection_mode="points",
                    config={"scrollZoom": True, "displayModeBar": True,
                            "displaylogo": False})
    st.caption("Drag to pan, scroll to zoom, double-click to reset; hover a bar for the "
               "instruction, click it to select it in the graph. Hatched bars: an "
               "asynchronous thunk's work on the thread pool after its event; a dark "
               "outline: the kernel ran alongside others.")


def predictor_line(r: RuntimeReport, rt: Runtimes) -> str:
    """Which predictor, and why that one."""
    dev = r.device
    path = code(_home(rt.model_path))
    if r.predictor == "learned" and r.predictor_detail.startswith("default model"):
        head, _, rest = r.predictor_detail.partition(" (")
        text = (f"**Predictor: {md(head)}** ({md(rest.rstrip(')'))}): shipped with HLO "
                f"Lens, a correction to the roofline of {md(dev.name)}, used because no "
                f"model of your own for {md(dev.kind)} devices is saved at {path} "
                "(`python -m compiler_bridge train DUMP_DIRS… --out "
                f"{_home(rt.model_path)}` fine-tunes it on your traces).")
    elif r.predictor == "learned":
        text = (f"**Predictor: learned model** ({md(r.predictor_detail)}): a correction "
                f"to the roofline of {md(dev.name)}, used because a model for "
                f"{md(dev.kind)} devices is saved at {path}.")
        tau = r.roofline_metrics.get("kendall_tau") if r.roofline_metrics else None
        if tau is not None and not math.isnan(tau):
            text += f" The roofline alone ranks these kernels with Kendall tau {tau:.2f}."
    else:
        text = (f"**Predictor: roofline** on {md(dev.name)}: max(flops / peak, bytes / "
                "bandwidth) + launch overhead per kernel, because no learned model for "
                f"{md(dev.kind)} devices is saved yet (`python -m compiler_bridge train "
                f"DUMP_DIRS… --out {_home(rt.model_path)}` trains one on dumps with traces; "
                "the app then uses it).")
    if dev.measured:
        text += " Device profile: calibrated on this machine."
    elif dev.kind == "cpu":
        text += (" Device profile: generic CPU (`python -m compiler_bridge calibrate` "
                 "measures this machine).")
    return text


def step_line(step: StepTime, r: RuntimeReport) -> str:
    """The module's time per step: what the predictor sums to, what was measured."""
    how = "predicted time" if r.predictor != "roofline" else "roofline"
    text = (f"**Step time: {V.fmt_us(step.predicted_us)} predicted** (each kernel's {how} "
            "times its executions per step, summed")
    text += f"; an estimate: {md(step.caveat)})" if step.caveat else ")"
    if step.measured_us is not None:
        text += f" · {V.fmt_us(step.measured_us)} measured (median step while profiling)"
    return text + "."


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home and path.startswith(home + os.sep) else path


def _measured_line(r: RuntimeReport) -> str:
    m = r.measured
    if m is None:
        return ""
    mt = m.module(r.rows[0].module_id) if r.rows else None
    parts = [f"{len(r.measured_rows)} of {len(r.rows)} kernels measured",
             f"{m.matched_events:,} per-op events matched"
             + (f", {m.unmatched_events:,} match nothing" if m.unmatched_events else "")]
    if mt is not None:
        parts.append(f"{len(mt.step_us)} runs, step {V.fmt_us(mt.step_median_us)} median, "
                     f"{V.fmt_us(mt.step_mean_us)} mean (while profiling)")
    parts.append(f"{r.stat} per execution")
    return " · ".join(parts) + f" · from {md(', '.join(m.sources))}"


def _fmt_metric(value, percent: bool) -> str:
    if value is None:
        return "–"
    return f"{value:.0%}" if percent else f"{value:.2f}"


def _metrics(r: RuntimeReport) -> None:
    rows = V.metrics_rows(r)
    learned = r.predictor != "roofline"
    table = []
    for m in rows:
        row = {"metric": m["metric"], r.predictor: _fmt_metric(m["value"], m["percent"]),
               "noise floor": _fmt_metric(m["noise_floor"], m["percent"])}
        if learned:
            row["roofline"] = _fmt_metric(m["roofline"], m["percent"])
        row["better"] = "higher" if m["higher_is_better"] else "lower"
        row["what it measures"] = m["help"]
        table.append(row)
    st.dataframe(table, hide_index=True, key="rt-metrics", width="stretch",
                 column_config={"what it measures": st.column_config.TextColumn(width="large")})
    st.caption("Noise floor: the same metric between two halves of the measurements "
               "(alternate profiling sessions when the trace has several, else alternate "
               "runs: the trace against itself). A model cannot be expected to beat it; with "
               "few runs it is itself noisy.")


TABLE_CONFIG = {
    "instruction": st.column_config.TextColumn("instruction", pinned=True),
    "fused_ops": st.column_config.NumberColumn("ops", format="%d",
                                               help="A fusion's fused ops (not parameters)"),
    "share": st.column_config.NumberColumn(
        "share of step (mean)", format="percent",
        help="Mean time per step over the mean step; time it ran alongside other kernels "
             "is split between them, so shares add up to at most 100%"),
    "per_step_us": st.column_config.NumberColumn("µs per step (mean)", format="%.2f"),
    "overlap": st.column_config.NumberColumn(
        "overlapped", format="percent",
        help="Share of its own time during which kernels on other threads (or the "
             "thread's other ops, while an asynchronous thunk waited) ran too"),
    "measured_us": st.column_config.NumberColumn("measured µs per execution", format="%.2f"),
    "predicted_us": st.column_config.NumberColumn("predicted µs", format="%.2f"),
    "ratio": st.column_config.NumberColumn("pred / meas", format="%.2f"),
    "executions_per_run": st.column_config.NumberColumn("runs per step", format="%.0f"),
    "p10_us": st.column_config.NumberColumn("p10 µs", format="%.2f"),
    "p90_us": st.column_config.NumberColumn("p90 µs", format="%.2f"),
    "flops": st.column_config.NumberColumn("flops", format="compact"),
    "bytes": st.column_config.NumberColumn("bytes", format="compact"),
    "intensity": st.column_config.NumberColumn("flop / byte", format="%.2f"),
}


@st.cache_resource(show_spinner=False, max_entries=16, hash_funcs=BY_CONTENT)
def _sizes(dump: Dump, module_id: str) -> dict[str, int]:
    return V.kernel_sizes(dump.stage(dump.module(module_id), AFTER))


def _kernels(nav: Navigator, rt: Runtimes, r: RuntimeReport) -> None:
    try:
        sizes = _sizes(rt.opened.dump, rt.shown.dump_module.id)
    except (KeyError, ValueError):
        sizes = {}
    sorts = list(V.SORTS) if r.measured_rows else \
        ["predicted_us"] + [k for k in V.SORTS if k not in ("share", "measured_us",
                                                             "predicted_us")]
    head = st.columns([3, 2], vertical_alignment="bottom")
    sort = head[1].selectbox("Sort by (largest first)", sorts, key="rt-sort",
                             format_func=lambda k: V.SORTS[k])
    rows = V.kernel_rows(r, sizes=sizes, sort=sort or sorts[0])
    if not rows:
        st.caption("This module runs no kernels.")
        return
    names = [x["instruction"] for x in rows]
    head[0].markdown(f"**Kernels and fusions** ({len(rows):,}, by {V.SORTS[sort or sorts[0]]})")
    key = f"rt-kernels:{rt.shown.dump_module.id}:{r.key}:{sort}:{nav.state.selected}"
    columns = [c for c in V.TABLE_COLUMNS if r.measured_rows or c not in
               ("share", "per_step_us", "overlap", "measured_us", "ratio",
                "executions_per_run", "p10_us", "p90_us")]
    st.dataframe(rows, hide_index=True, key=key, column_order=columns,
                 column_config=TABLE_CONFIG, on_select=partial(_on_row, key, names, rt),
                 selection_mode="single-row", height=min(38 + 35 * len(rows), 460))
    st.caption(f"Click a row to select that kernel in the graph. *ops*: a fusion's fused "
               f"instructions other than parameters (its node's label counts the same). "
               f"*measured* is the {r.stat} per execution; *share of step* and *µs per "
               "step* are means over the runs (only means add up). Kernels in a loop body "
               "run once per iteration: *runs per step* counts them, *share of step* sums "
               "them.")


# --------------------------------------------------------------------------- selection

def _select_kernel(state, rt: Runtimes, name: str):
    """Show a kernel in the graph: the after-optimizations module (what ran), its
    computation, the boxes around it opened; selected."""
    if rt.shown.stage != AFTER:
        state, _ = N.choose_step(state, AFTER)
        module = rt.opened.dump.stage(rt.shown.dump_module, AFTER)
        new, center = N.go_to(state, module, name, focus=False)
        return new.with_(selected=name), center
    new, center = show_in_graph(state, rt.opened, rt.shown, name)
    return new.with_(selected=name), center


def _on_points(key: str, rt: Runtimes) -> None:
    name = V.selectable(selected_points(st.session_state.get(key)))
    if name:
        go(_select_kernel, rt, name)


def _on_row(key: str, names: list[str], rt: Runtimes) -> None:
    row = selected_row(key, len(names))
    if row is not None:
        go(_select_kernel, rt, names[row])


# --------------------------------------------------------------------------- trace row

def _trace_row(nav: Navigator, rt: Runtimes) -> None:
    """The trace the runtimes come from (a picker when there are several), a place to
    add one, and what happened to the last upload."""
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    with left:
        if len(rt.choices) > 1 and rt.choice is not None:
            keys = [c.key for c in rt.choices]
            labels = {c.key: c.label for c in rt.choices}
            controlled("rt-trace", rt.choice.key)
            st.selectbox("Trace", keys, key="rt-trace", format_func=lambda k: labels.get(k, k),
                         on_change=go_option, args=(N.set_trace, "rt-trace", keys),
                         help="Where the measured runtimes come from; the link names it")
        elif rt.choice is not None:
            st.markdown(f"**Trace**: {code(rt.choice.label)}")
    where = right if rt.choice is not None else left
    with where:
        if rt.choice is not None:
            with st.popover("Add a trace", icon=":material/upload_file:", width="stretch"):
                _uploader(rt)
        else:
            _uploader(rt)
    kind, text = st.session_state.pop(MESSAGE, ("", ""))
    if kind == "error":
        st.error(text)
    elif kind:
        st.success(text)


def _uploader(rt: Runtimes) -> None:
    gen = st.session_state.setdefault(UPLOAD_GEN, 0)
    key = f"rt-upload:{gen}"
    kept = "kept with the dump in the store, so links show it too" if rt.opened.share_id \
        else "kept for this session (this dump is not in the store)"
    st.file_uploader(
        "Add a profiler trace of this program", type=TRACE_TYPES, key=key,
        on_change=_on_upload, args=(key, rt.opened),
        help="What jax.profiler.trace(DIR, create_perfetto_trace=True) writes under "
             "DIR/plugins/profile/<session>/: perfetto_trace.json.gz, <host>.trace.json.gz "
             f"or <host>.xplane.pb. It is checked against this dump, then {kept}.")


def add_trace(opened: Opened, name: str, data: bytes) -> tuple[str, str]:
    """Check an uploaded trace against the dump and keep it; returns (trace id, message)
    or raises TraceError naming the file."""
    if len(data) > upload_cap():
        raise TraceError(name, f"{P.human_bytes(len(data))} is over this server's upload cap "
                               f"of {P.human_bytes(upload_cap())}")
    if not data:
        raise TraceError(name, "the file is empty")
    m = measure(opened.dump, [uploaded(name, data)])
    tid = trace_id(data)
    where = "kept with the dump in the store, so the link shows it to anyone"
    if opened.share_id:
        try:
            shelf().add(opened.share_id, name, data)
        except (DumpError, OSError) as e:
            log.warning("trace %s not stored: %s", name, e)
            _session_traces(opened)[tid] = (name, data, time.time())
            where = f"kept for this session only (the store refused it: {e})"
    else:
        _session_traces(opened)[tid] = (name, data, time.time())
        where = "kept for this session only"
    kernels = sum(len(t.kernels) for t in m.modules.values())
    modules = ", ".join(f"{mid} {t.name}" for mid, t in m.modules.items())
    return tid, (f"Added {code(name)}: {m.matched_events:,} per-op events matched "
                 f"{kernels:,} kernels of module {md(modules)}"
                 + (f" ({m.unmatched_events:,} events match nothing)" if m.unmatched_events
                    else "") + f"; {where}.")


def _on_upload(key: str, opened: Opened) -> None:
    f = st.session_state.get(key)
    st.session_state[UPLOAD_GEN] = st.session_state.get(UPLOAD_GEN, 0) + 1
    if f is None:
        return
    name = f.name
    try:
        tid, message = add_trace(opened, name, f.getvalue())
    except TraceError as e:
        st.session_state[MESSAGE] = ("error", f"**{md(name)} cannot be used**: "
                                              f"{md(e.message)}")
        return
    except Exception as e:                 # a reader bug must not take the page down
        log.exception("trace upload %s", name)
        st.session_state[MESSAGE] = ("error", f"**{md(name)} cannot be used**: "
                                              f"{code(f'{type(e).__name__}: {e}')}")
        return
    st.session_state[MESSAGE] = ("success", message)
    go(N.set_trace, tid)
