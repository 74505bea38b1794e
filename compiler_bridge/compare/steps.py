"""Whole step times from a trace's jitted calls, for a comparison where a side's trace has
no per-op events (JAX 0.4.30 on CPU records only the executable; issue 32, item 2).

Every JAX version the samples cover records each call of a jitted function as a
``PjitFunction(<function>)`` complete event (nested twice: the outermost is the call);
its duration is the whole step as the program saw it, dispatch included. Only Chrome JSON
traces are read here (``*.trace.json[.gz]``, ``perfetto_trace.json[.gz]``, which JAX
writes beside its xplane); a function compiled more than once in the dump is ambiguous
(its calls do not say which compile ran) and gets no time.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics

from ..dumps import Dump, DumpError
from ..perf import trace_sessions

_CALL = re.compile(r"^PjitFunction\((.+)\)$")
_JSON = (".json", ".json.gz")


def call_times(dump: Dump) -> dict[str, list[float]]:
    """Function -> the duration (µs) of each of its calls in the dump's traces (once per
    dump; a trace that cannot be read gives nothing)."""
    def compute(d: Dump) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for files in trace_sessions(d).values():
            f = next((f for f in files if f.path.endswith(_JSON)), None)
            if f is None:
                continue
            try:
                data = d.read_bytes(f.path)
                if data[:2] == b"\x1f\x8b":
                    data = gzip.decompress(data)
                doc = json.loads(data)
            except (OSError, KeyError, DumpError, EOFError, ValueError):
                continue
            events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
            for fn, durations in _outermost_calls(events).items():
                out.setdefault(fn, []).extend(durations)
        return out
    return dump.derived("compare:call-times", compute)


def _outermost_calls(events) -> dict[str, list[float]]:
    calls: dict[tuple, list[tuple[float, float]]] = {}
    for e in events if isinstance(events, list) else ():
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        m = _CALL.match(str(e.get("name", "")))
        ts, dur = e.get("ts"), e.get("dur")
        if m and isinstance(ts, (int, float)) and isinstance(dur, (int, float)):
            calls.setdefault((m.group(1), e.get("pid"), e.get("tid")), []).append((ts, dur))
    out: dict[str, list[float]] = {}
    for (fn, _, _), spans in calls.items():
        end = float("-inf")
        for ts, dur in sorted(spans, key=lambda s: (s[0], -s[1])):
            if ts >= end:              # not inside the call before it
                out.setdefault(fn, []).append(float(dur))
                end = ts + dur
    return out


def whole_step_us(dump: Dump, module_id: str) -> float | None:
    """The median duration of the calls of the jitted function a module was compiled from
    (``jit_<function>``); None when the trace has none or the dump compiled that function
    more than once."""
    m = dump.module(module_id)
    if not m.name.startswith("jit_") or sum(x.name == m.name for x in dump.modules) > 1:
        return None
    durations = call_times(dump).get(m.name[len("jit_"):])
    return round(statistics.median(durations), 3) if durations else None
