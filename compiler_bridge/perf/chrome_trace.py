"""The reader of Chrome trace JSON (``perfetto_trace.json.gz``, ``<host>.trace.json.gz``,
gzipped or not): one complete event (``ph: "X"``, ``ts``/``dur`` in µs) per executed HLO
op, whose ``args`` carry ``hlo_op``, ``hlo_module`` (a module *name*) and ``run_id``.
Gzip is unpacked in bounded steps, refused past the trace size cap.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict

from .trace_events import END_MARKER, OpEvent, RawTrace, TraceError, sorted_markers
from ..config import settings

# the most a gzipped trace may unpack to: a 2 MB upload that unpacked to 2 GiB took the
# server to 4.4 GB of memory (issue 17); real profiles are a few MB to a few hundred
# (HLOLENS_MAX_TRACE_BYTES: settings().max_trace_bytes)


def decompress(data: bytes, source: str, limit: int | None = None) -> bytes:
    """Gzip members unpacked in bounded steps, refused past ``limit`` bytes."""
    if data[:2] != b"\x1f\x8b":
        return data
    limit = settings().max_trace_bytes if limit is None else limit
    out = bytearray()
    rest = data
    try:
        while rest[:2] == b"\x1f\x8b":          # one gzip member after another
            member = zlib.decompressobj(wbits=31)
            todo = rest
            while todo and not member.eof:
                out += member.decompress(todo, limit + 1 - len(out))
                if len(out) > limit:
                    raise TraceError(source, f"unpacks to more than {limit:,} bytes, over "
                                     "the trace size cap (HLOLENS_MAX_TRACE_BYTES)")
                todo = member.unconsumed_tail
            if not member.eof:
                raise EOFError("compressed file ended before the end-of-stream marker")
            rest = member.unused_data
    except EOFError as e:
        raise TraceError(source, f"not a readable trace: truncated gzip data ({e})") from None
    except zlib.error as e:
        raise TraceError(source, f"not a readable trace: corrupt gzip data ({e})") from None
    return bytes(out)


def read_chrome(text: bytes, source: str, session: str) -> RawTrace:
    try:
        doc = json.loads(text)
    except UnicodeDecodeError as err:
        raise TraceError(source, f"not a readable trace: not UTF-8 JSON ({err.reason})") from None
    except json.JSONDecodeError as err:
        what = "truncated JSON" if err.pos >= len(text) - 1 else "invalid JSON"
        raise TraceError(source, f"not a readable trace: {what} at line {err.lineno} "
                                 f"column {err.colno} ({err.msg})") from None
    if isinstance(doc, dict):
        raw_events = doc.get("traceEvents")
        if raw_events is None:
            raise TraceError(source, "not a Chrome trace: the JSON has no 'traceEvents'")
    elif isinstance(doc, list):
        raw_events = doc
    else:
        raise TraceError(source, "not a Chrome trace: expected a JSON object or array")
    if not isinstance(raw_events, list):
        raise TraceError(source, "not a Chrome trace: 'traceEvents' is not a list")
    events: list[OpEvent] = []
    markers: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    other = 0
    for e in raw_events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        args = e.get("args")
        if not isinstance(args, dict):
            args = {}
        op = args.get("hlo_op")
        if not op:
            other += 1
            name = e.get("name")
            if isinstance(name, str) and name.startswith(END_MARKER) and "ts" in e:
                try:
                    markers[(str(e.get("pid", "")), name[len(END_MARKER):])].append(
                        (float(e["ts"]), f"{e.get('pid', '')}/{e.get('tid', '')}"))
                except (TypeError, ValueError):
                    pass
            continue
        try:
            start, dur = float(e["ts"]), float(e.get("dur", 0.0))
        except (KeyError, TypeError, ValueError):
            other += 1
            continue
        pid = args.get("program_id")
        try:
            pid = int(pid) if pid is not None else None
        except (TypeError, ValueError):
            pid = None
        events.append(OpEvent(
            module=str(args.get("hlo_module", "")), op=str(op),
            run=f"{session}#{args.get('run_id', '')}",
            thread=f"{e.get('pid', '')}/{e.get('tid', '')}",
            start_us=start, dur_us=dur, program_id=pid, process=str(e.get("pid", ""))))
    return RawTrace(source, "chrome", events, other, sorted_markers(markers))
