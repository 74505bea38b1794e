"""Where the runtimes come from: the trace (the dump's own, or one uploaded beside it) and
the report computed from it, ``Runtimes``, which ``app.py`` makes once per run and the
graph, the inspector, the exports and the *Runtimes* tab (``ui.runtimes``) read; and the
tab's row that picks a trace or adds one (``trace_row``).

Traces: the dump's own (``plugins/profile/<session>/`` inside it) are used without
asking. A trace uploaded apart is checked against the dump first (a corrupt file, one
without per-op events or one of another program is refused with the reason), then kept
in the store beside the dump, under the link it was uploaded under (another link to the
same bytes does not see it: ``compiler_bridge.dumps.TraceShelf``), and named in the URL
(``trace=<id>``), so that link shows the same runtimes to anyone who opens it. A dump that
is not in the store keeps uploads in the session only.

The report is computed when something needs it (the overlay, the open tab, an export),
once per dump content, module, trace and cost model (``data.runtime_report_of``).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

import streamlit as st

from compiler_bridge import DumpError, settings
from compiler_bridge.dumps import AFTER, TraceShelf, trace_id
from compiler_bridge.perf import (
    RuntimeReport,
    TraceError,
    default_model_path,
    measure,
    profile_for_platform,
    shipped_model_path,
    trace_sessions,
    uploaded,
)
from viz import when
from viz import navigation as N
from viz import panels as P
from viz import runtime as RV

from . import upload_spool
from .data import runtime_report_of, store, upload_cap
from .kit import Navigator, code, controlled, go, go_option, md
from .model import Opened, Shown, TraceChoice

log = logging.getLogger("hlolens")

SESSION_TRACES = "rt-session-traces"   # {Dump.key: {trace id: (name, bytes, time)}}
UPLOAD_GEN = "rt-upload-gen"           # a new uploader key after each upload
MESSAGE = "rt-message"                 # (kind, text) of the last upload
TRACE_TYPES = ["gz", "json", "pb"]     # perfetto_trace.json.gz, *.trace.json.gz, *.xplane.pb


# --------------------------------------------------------------------------- traces

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
    return default, (f"The trace {code(wanted)} this link names is not stored with this "
                     f"dump (removed, or uploaded on another server): {md(instead)}.")


def _mtime(path: str) -> str:
    try:
        return str(os.stat(path).st_mtime_ns)
    except OSError:
        return "-"


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
                self._report = runtime_report_of(self.opened.dump, self.shown.dump_module.id,
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
        return RV.report_rows(r)

    def export_measured(self) -> dict[str, float] | None:
        """Measured µs per execution of each instruction of the module on screen, for
        Model Explorer's node data: None where nothing is measured, or at a stage that did
        not run (a pass step, before optimizations)."""
        if self.choice is None or self.shown.stage != AFTER:
            return None
        r = self.report()
        if r is None:
            return None
        mid = self.shown.dump_module.id
        return {k.instruction: k.measured_us for k in r.rows
                if k.module_id == mid and k.measured_us} or None

    def export_legend(self) -> list[tuple[str, str]]:
        """The overlay's colours for the HTML report (none when it is off)."""
        r = self.for_graph()
        if r is None:
            return []
        ov = RV.overlay(r, self.nav.state.overlay, module_id=self.shown.dump_module.id)
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


# --------------------------------------------------------------------------- trace row

def trace_row(nav: Navigator, rt: Runtimes) -> None:
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
    kept = "kept with the dump in the store, so this link shows it too" if rt.opened.share_id \
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
    where = "kept with the dump in the store, so this link shows it to anyone who has it"
    if opened.share_id:
        try:
            shelf().add(opened.share_id, name, data)
        except (DumpError, OSError) as e:
            log.warning("trace %s not stored: %s", name, e)
            _session_traces(opened)[tid] = (name, data, time.time())
            where = f"kept for this session only (the store refused it: {md(str(e))})"
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
        if upload_spool.size(f) > upload_cap():    # before reading it whole
            raise TraceError(name, f"{P.human_bytes(upload_spool.size(f))} is over this "
                                   f"server's upload cap of {P.human_bytes(upload_cap())}")
        tid, message = add_trace(opened, name, upload_spool.read(f))
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
