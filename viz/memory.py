"""Memory views from a ``compiler_bridge.memory.ModuleMemory``: the live-bytes figure over
the schedule (stacked by allocation kind or by allocation, the peak marked, each point
naming its instruction), the values live at a point grouped by op_name scope, a value's
allocation and the values sharing its bytes, and the graph overlay (bytes an instruction
defines, or bytes live while it runs).
"""

from __future__ import annotations

import html
import math
from functools import lru_cache
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from compiler_bridge.hlo import HloInstruction, HloModule
from compiler_bridge.memory import STACK_ORDER, ModuleMemory, OomReport

from .grouping import GroupInfo, split_scopes
from .panels import human_bytes
from .runtime import scale_html

__all__ = ["BY", "KIND_COLORS", "MemoryOverlay", "MODES", "ScopeRow", "binary_unit", "live_rows", "oom_rows",
           "memory_overlay", "overlay_legend_html", "scope_rows", "timeline_figure",
           "value_rows"]

MODES = ("defined", "live")          # the graph overlay: bytes defined / live across
BY = ("kind", "allocation")          # how the live-bytes figure is stacked
KIND_COLORS = {"parameter": "#4c6ef5", "constant": "#868e96", "output": "#12b886",
               "temp": "#f76707", "thread-local": "#ae3ec9", "other": "#fab005"}
KIND_LABELS = {"parameter": "arguments", "constant": "constants", "output": "output",
               "temp": "temp", "thread-local": "thread-local", "other": "other"}
TOP_ALLOCATIONS = 12                 # stacked one by one; the rest as one band


# --------------------------------------------------------------------------- figure

def _by_allocation(mem: ModuleMemory) -> list[tuple[str, str, list[int]]]:
    """(label, colour, curve) of the biggest allocations seen on the schedule, the rest
    as one band (the total less theirs)."""
    end = mem.live_range.end if mem.live_range is not None else -1
    scheduled = {v.value.allocation for v in mem.lives if v.start is not None}
    top = sorted(scheduled, key=lambda a: (-mem.allocation(a).size, a))[:TOP_ALLOCATIONS]
    per: dict[int, list[int]] = {a: [0] * (end + 2) for a in top}
    for v in mem.lives:
        d = per.get(v.value.allocation)
        if d is None or v.start is None or v.end is None:
            continue
        d[max(v.start, 0)] += v.value.size
        d[min(v.end, end) + 1] -= v.value.size
    out_rows = []
    palette = ["#4c6ef5", "#f76707", "#12b886", "#ae3ec9", "#fab005", "#e64980", "#15aabf",
               "#82c91e", "#7950f2", "#fd7e14", "#40c057", "#228be6"]
    rest = list(mem.curve)
    for k, index in enumerate(top):
        run, curve = 0, [0] * (end + 1)
        for i in range(end + 1):
            run += per[index][i]
            curve[i] = run
            rest[i] -= run
        a = mem.allocation(index)
        out_rows.append((f"allocation {index} ({KIND_LABELS[a.kind]}, "
                         f"{human_bytes(a.size)})", palette[k % len(palette)], curve))
    if len(scheduled) > len(top):
        out_rows.append((f"{len(scheduled) - len(top)} other allocations", "#adb5bd", rest))
    return out_rows


def binary_unit(n: float) -> tuple[str, int]:
    """The binary unit a figure of at most ``n`` bytes is drawn in: ('MiB', 2**20), ...
    (one unit system on cards, tables and axes: IEC, base 1024)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return unit, size
    return "B", 1


def timeline_figure(mem: ModuleMemory, by: str = "kind", selected: str = ""):
    """Live bytes at each position of the schedule (HloLiveRange's sum of every value live
    there, all memory spaces), stacked; its maximum marked as the live-bytes peak and XLA's
    ``peak_memory_in_bytes`` drawn as a line (another definition: ``xla_stats``). The axis
    is in one binary unit; each point of the top line carries its instruction as
    ``customdata`` (a click selects it)."""
    import numpy as np
    import plotly.graph_objects as go

    seq = mem.sequence
    n = len(mem.curve)
    xla_peak = mem.xla().peak_bytes
    unit, scale = binary_unit(max(max(mem.curve, default=0), xla_peak or 0))
    xs = np.arange(n)
    names = np.array([seq[i] if i < len(seq) else "(end)" for i in range(n)], dtype=object)
    bands = (_by_allocation(mem) if by == "allocation" else
             [(KIND_LABELS[k], KIND_COLORS[k], mem.curve_by_kind[k])
              for k in STACK_ORDER + ("other",) if k in mem.curve_by_kind])
    # numpy arrays: plotly checks a list element by element (0.3 s at 24k instructions)
    traces = [go.Scatter(x=xs, y=np.asarray(curve) / scale, name=label, stackgroup="live",
                         mode="lines", line={"width": 0.5, "color": color}, fillcolor=color,
                         hoverinfo="skip")
              for label, color, curve in bands]
    hover = np.array([f"{i}: {html.escape(str(names[i]))}<br>{human_bytes(b)} live"
                      for i, b in enumerate(mem.curve)], dtype=object)
    traces.append(go.Scatter(
        x=xs, y=np.asarray(mem.curve) / scale, name="all live bytes", mode="lines+markers",
        line={"width": 1.5, "color": "#212529"}, marker={"size": 5, "color": "#212529"},
        customdata=names.reshape(-1, 1), hovertext=hover, hoverinfo="text"))
    shapes = []
    peak = mem.peak_index
    if peak is not None:
        shapes.append({"type": "line", "x0": peak, "x1": peak, "yref": "paper", "y0": 0,
                       "y1": 1, "line": {"color": "#e03131", "dash": "dash", "width": 1.5}})
        traces.append(go.Scatter(
            x=[peak], y=[mem.curve[peak] / scale], mode="markers+text",
            name="live-bytes peak",
            marker={"size": 12, "color": "#e03131", "symbol": "triangle-down"},
            text=[f"live-bytes peak {human_bytes(mem.curve[peak])}"],
            textposition="top center", customdata=[[names[peak]]],
            hovertext=[f"live-bytes peak at {hover[peak]}"], hoverinfo="text"))
    if xla_peak is not None:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1,
                       "y0": xla_peak / scale, "y1": xla_peak / scale,
                       "line": {"color": "#7048e8", "dash": "dot", "width": 1.5}})
        traces.append(go.Scatter(
            x=[0], y=[xla_peak / scale], mode="text", name="XLA's peak",
            text=[f"XLA's peak (memory_analysis) {human_bytes(xla_peak)}"],
            textposition="bottom right", hoverinfo="skip", showlegend=False))
    if selected and selected in seq:
        i = seq.index(selected)
        shapes.append({"type": "line", "x0": i, "x1": i, "yref": "paper", "y0": 0, "y1": 1,
                       "line": {"color": "#1c7ed6", "width": 1}})
    return go.Figure(data=traces, layout={
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10}, "height": 390,
        "hovermode": "closest", "shapes": shapes,
        "xaxis": {"title": {"text": "position in the schedule"}},
        "yaxis": {"title": {"text": f"live {unit}"}, "ticksuffix": f" {unit}",
                  "exponentformat": "none"},
        "legend": {"orientation": "h", "y": -0.25}, "clickmode": "event+select",
        "title": {"text": f"Live bytes over the schedule ({n - 1} instructions, every "
                          "memory space; not XLA's peak definition)",
                  "font": {"size": 14}}})


# --------------------------------------------------------------------------- tables

def _op_name(inst: HloInstruction) -> str:
    try:
        return inst.op_name
    except ValueError:
        return ""


def _scope_of(module: HloModule, inst: HloInstruction) -> str:
    """The op_name a value is grouped under: its instruction's, else (a loop's parameter,
    a tuple XLA made) that of the nearest caller of its computation that has one;
    '(arguments)' for the entry's parameters."""
    if inst.opcode == "parameter" and inst.computation is not None \
            and inst.computation.is_entry:
        return "(arguments)"
    op = _op_name(inst)
    seen: set[str] = set()
    while not op and inst.computation is not None and inst.computation.name not in seen:
        comp = inst.computation
        seen.add(comp.name)
        if comp.is_entry:
            return ""
        callers = module.callers().get(comp.name) or []
        if not callers:
            return ""
        inst = callers[0]
        op = _op_name(inst)
    return op


def _meta(module: HloModule | None, name: str) -> tuple[str, str, str, str]:
    """(opcode, op_name, the scope it is grouped under, source 'file:line')."""
    inst = module.find(name) if module is not None else None
    if inst is None or module is None:
        return "", "", "", ""
    op = _op_name(inst)
    try:
        loc = module.source_location(inst)
    except ValueError:
        loc = None
    src = f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" if loc is not None else ""
    return inst.opcode, op, _scope_of(module, inst), src


def live_rows(mem: ModuleMemory, index: int) -> list[dict[str, object]]:
    """The values live at ``index``, biggest first, with what defines them."""
    rows = []
    for v in mem.live_at(index):
        shape, _, layout = v.value.shape.partition("{")
        opcode, op, scope, src = _meta(mem.hlo, v.value.instruction)
        rows.append({"bytes": v.value.size, "size": human_bytes(v.value.size),
                     "instruction": v.value.instruction,
                     "value": v.value.name, "opcode": opcode, "shape": shape,
                     "layout": ("{" + layout) if layout else "", "kind": KIND_LABELS[v.kind],
                     "allocation": v.value.allocation, "offset": v.value.offset,
                     "live": f"{v.start}–{v.end}", "op_name": op, "scope": scope,
                     "source": src})
    return rows


def oom_rows(report: OomReport) -> list[dict[str, object]]:
    """The buffers that needed the bytes of a compile that ran out of memory, biggest
    first."""
    return [{"bytes": b.bytes, "size": human_bytes(b.bytes), "buffer": b.buffer,
             "kind": b.kind, "shape": b.shape, "source": b.source, "scope": b.scope,
             "tile padding": human_bytes(b.padding_bytes) if b.padding_bytes else "",
             "instruction": b.instruction} for b in report.largest]


@dataclass
class ScopeRow:
    scope: str
    bytes: int
    values: int
    biggest: str                      # the instruction of the biggest value in it
    share: float = 0.0
    instructions: list[str] = field(default_factory=list)


def scope_rows(rows: Iterable[Mapping[str, object]], depth: int = 2) -> list[ScopeRow]:
    """Live rows summed by the first ``depth`` levels of their scope (the op_name, or
    the caller's for a loop's state; '(no op_name)' for values without any), biggest
    first."""
    out: dict[str, ScopeRow] = {}
    total = 0
    for r in rows:
        size = int(str(r["bytes"]))
        total += size
        text = str(r.get("scope") or r.get("op_name") or "")
        scopes = [text] if text.startswith("(") else split_scopes(text)
        scope = "/".join(scopes[:depth]) if scopes else "(no op_name)"
        s = out.get(scope)
        if s is None:
            s = out[scope] = ScopeRow(scope, 0, 0, str(r["instruction"]))
        s.bytes += size
        s.values += 1
        s.instructions.append(str(r["instruction"]))
    for s in out.values():
        s.share = s.bytes / total if total else 0.0
    return sorted(out.values(), key=lambda s: (-s.bytes, s.scope))


def value_rows(mem: ModuleMemory, instruction: str) -> list[dict[str, object]]:
    """An instruction's values: where each lives (allocation, offset, size, live range)
    and which values share those bytes of the allocation."""
    out = []
    for v in mem.values_of(instruction):
        a = mem.allocation(v.value.allocation)
        sharing = mem.sharing(v.value)
        out.append({
            "value": v.value.name, "shape": v.value.shape, "bytes": v.value.size,
            "allocation": a.index, "allocation bytes": a.size, "kind": KIND_LABELS[a.kind],
            "tags": ", ".join(a.tags), "offset": v.value.offset,
            "live": f"{v.start}–{v.end}" if v.start is not None else "not scheduled",
            "shares its bytes with": ", ".join(s.name for s in sharing[:12])
            + (f" … (+{len(sharing) - 12})" if len(sharing) > 12 else ""),
            "used by": ", ".join(f"{u} (operand {k})" for u, k in mem.uses(v.value)[:12]),
        })
    return out


# --------------------------------------------------------------------------- overlay

@dataclass
class MemoryOverlay:
    """Decorations for the graph (node id or group id -> DOT attributes) and a legend."""

    mode: str
    decorations: dict[str, dict[str, str]]
    title: str
    stops: list[tuple[str, str]]
    values: dict[str, int] = field(default_factory=dict)
    note: str = ""


SCALE = "Blues"


def _color(t: float) -> str:
    """The colour at ``t`` (0..1) of the scale, in 256 steps (plotly's sampler parses the
    scale on every call)."""
    return _color_step(round(min(max(t, 0.0), 1.0) * 255))


@lru_cache(maxsize=256)
def _color_step(step: int) -> str:
    from plotly.colors import sample_colorscale
    c = sample_colorscale(SCALE, [step / 255])[0]
    if c.startswith("#"):
        return c
    r, g, b = (int(round(float(x))) for x in c[c.index("(") + 1:c.index(")")].split(",")[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _dark(color: str) -> bool:
    r, g, b = int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
    return 0.299 * r + 0.587 * g + 0.114 * b < 120


def instruction_bytes(mem: ModuleMemory, mode: str) -> dict[str, int]:
    """Instruction -> bytes it defines (its values' sizes, ``defined``) or bytes live at
    its position in the schedule (``live``)."""
    out: dict[str, int] = {}
    if mode == "live":
        for i, name in enumerate(mem.sequence):
            if i < len(mem.curve):
                out[name] = mem.curve[i]
        return out
    for v in mem.lives:
        out[v.value.instruction] = out.get(v.value.instruction, 0) + v.value.size
    return out


def memory_overlay(mem: ModuleMemory, mode: str, group_of: Mapping[str, str] | None = None,
                   groups: Mapping[str, GroupInfo] | None = None) -> MemoryOverlay:
    """Colour nodes by ``mode`` (:data:`MODES`) on a log scale; closed groups show the
    bytes their instructions define (summed) or the most live while one of them runs."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    values = {k: v for k, v in instruction_bytes(mem, mode).items() if v > 0}
    group_values: dict[str, int] = {}
    if group_of:
        for name, v in values.items():
            gid, seen = group_of.get(name, ""), set()
            while gid and gid not in seen:
                seen.add(gid)
                group_values[gid] = group_values.get(gid, 0) + v if mode == "defined" \
                    else max(group_values.get(gid, 0), v)
                info = (groups or {}).get(gid)
                gid = info.parent if info is not None else ""
    every = list(values.values()) + list(group_values.values())
    lo, hi = (min(every), max(every)) if every else (1, 1)
    llo, lhi = math.log2(max(lo, 1)), math.log2(max(hi, lo + 1, 2))
    span = max(lhi - llo, 1e-9)

    def color(v: int) -> str:
        return _color(0.12 + 0.88 * (math.log2(max(v, 1)) - llo) / span)

    verb = "defines" if mode == "defined" else "live"
    decorations: dict[str, dict[str, str]] = {}
    for key, v in list(values.items()) + list(group_values.items()):
        fill = color(v)
        label = f"▤ {human_bytes(v)} {verb}" if key in values else \
            f"Σ {human_bytes(v)} {verb}" if mode == "defined" else f"▤ max {human_bytes(v)} live"
        decorations[key] = {"fillcolor": fill, "label": label,
                            "tooltip": f"memory: {label}",
                            "fontcolor": "#ffffff" if _dark(fill) else "#000000"}
    stops = [(human_bytes(int(2 ** (llo + span * t))), color(int(2 ** (llo + span * t))))
             for t in (0.0, 0.25, 0.5, 0.75, 1.0)] if every else []
    title = ("bytes each instruction defines (its values in the buffer assignment)"
             if mode == "defined" else "bytes live while each instruction runs")
    note = "" if every else "no instruction of this module has bytes to show"
    return MemoryOverlay(mode, decorations, title, stops, {**values, **group_values}, note)


def overlay_legend_html(ov: MemoryOverlay) -> str:
    return scale_html(ov.title, ov.stops, ov.note)
