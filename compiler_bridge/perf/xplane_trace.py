"""The reader of ``<host>.xplane.pb``: the same op events as the Chrome JSON, plus
``program_id`` (the dump's module id), read through ``jax.profiler.ProfileData`` (jax
imported only when an xplane is read).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .trace_events import END_MARKER, OpEvent, RawTrace, TraceError, sorted_markers

def read_xplane(data: bytes, source: str, session: str) -> RawTrace:
    try:
        from jax.profiler import ProfileData
    except ImportError as e:   # pragma: no cover - jax is a dependency
        raise TraceError(source, f"reading .xplane.pb needs jax ({e})") from None
    try:
        profile = ProfileData.from_serialized_xspace(data)
    except Exception as e:   # jax raises RuntimeError('Failed to parse XSpace ...')
        raise TraceError(source, f"not a readable xplane.pb ({e})") from None
    events: list[OpEvent] = []
    markers: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    other = 0
    for plane in profile.planes:
        for line in plane.lines:
            thread = f"{plane.name}/{line.name}"
            for ev in line.events:
                name = ev.name
                if name.startswith(END_MARKER):
                    markers[(plane.name, name[len(END_MARKER):])].append(
                        (float(ev.start_ns) / 1e3, thread))
                    other += 1
                    continue
                stats: dict[str, Any] = {}     # jax's values: str, int or float
                for k, v in ev.stats:
                    stats.setdefault(k, v)
                op = stats.get("hlo_op")
                if not op:
                    other += 1
                    continue
                pid = stats.get("program_id")
                events.append(OpEvent(
                    module=str(stats.get("hlo_module", "")), op=str(op),
                    run=f"{session}#{stats.get('run_id', '')}", thread=thread,
                    start_us=float(ev.start_ns) / 1e3, dur_us=float(ev.duration_ns) / 1e3,
                    program_id=int(pid) if isinstance(pid, (int, float)) else None,
                    process=plane.name, device=str(stats.get("device_ordinal", ""))))
    return RawTrace(source, "xplane", events, other, sorted_markers(markers))
