"""The reader of Chrome trace JSON (``perfetto_trace.json.gz``, ``<host>.trace.json.gz``,
gzipped or not): one complete event (``ph: "X"``, ``ts``/``dur`` in µs) per executed HLO
op, whose ``args`` carry ``hlo_op``, ``hlo_module`` (a module *name*) and ``run_id``.

Read as a stream: gzip is unpacked in bounded steps (refused past the trace size cap) and
the ``traceEvents`` array decoded one element at a time, keeping only op events and
completion markers, at most the trace event cap of them. A 533 MB trace of 5.3M events
decoded whole took 5.7 GB (issue 33); streamed, memory is the kept events and a few MB.
"""

from __future__ import annotations

import codecs
import json
import re
import zlib
from collections import defaultdict
from typing import Any, Iterable, Iterator

from .trace_events import END_MARKER, OpEvent, RawTrace, TraceError, sorted_markers
from ..config import settings

# the most a gzipped trace may unpack to: a 2 MB upload that unpacked to 2 GiB took the
# server to 4.4 GB of memory (issue 17); real profiles are a few MB to a few hundred
# (HLOLENS_MAX_TRACE_BYTES: settings().max_trace_bytes). The op events and markers kept
# are capped too (HLOLENS_MAX_TRACE_EVENTS: settings().max_trace_events).

GZIP = b"\x1f\x8b"
STEP = 1 << 20            # bytes unpacked, and read, at a time
MAX_VALUE = 16 << 20      # characters of one JSON value (an event, a metadata object)
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def unpacked(data: bytes, source: str, limit: int | None = None) -> Iterator[bytes]:
    """The trace's bytes in steps of at most :data:`STEP`, gzip members unpacked; refused
    past ``limit`` unpacked bytes (TraceError naming ``source``)."""
    view = memoryview(data)
    if data[:2] != GZIP:
        for at in range(0, len(data), STEP):
            yield bytes(view[at:at + STEP])
        return
    limit = settings().max_trace_bytes if limit is None else limit
    total = 0
    at = 0                                  # where the next gzip member starts
    try:
        while data[at:at + 2] == GZIP:      # one gzip member after another
            member = zlib.decompressobj(wbits=31)
            fed = at
            pending: bytes | memoryview = b""
            while not member.eof:
                if not pending:             # the next slice of input, never all of it
                    pending = view[fed:fed + STEP]
                    fed += len(pending)
                out = member.decompress(pending, min(STEP, limit + 1 - total))
                total += len(out)
                if total > limit:
                    raise TraceError(source, f"unpacks to more than {limit:,} bytes, over "
                                     "the trace size cap (HLOLENS_MAX_TRACE_BYTES)")
                if out:
                    yield out
                elif not pending and fed >= len(data):
                    raise EOFError("compressed file ended before the end-of-stream marker")
                pending = member.unconsumed_tail
            at = fed - len(member.unconsumed_tail) - len(member.unused_data)
    except zlib.error as e:
        raise TraceError(source, f"not a readable trace: corrupt gzip data ({e})") from None
    except EOFError as e:
        raise TraceError(source, f"not a readable trace: truncated gzip data ({e})") from None


def decompress(data: bytes, source: str, limit: int | None = None) -> bytes:
    """Gzip members unpacked whole (for small files; traces are read by :func:`unpacked`)."""
    if data[:2] != GZIP:
        return data
    return b"".join(unpacked(data, source, limit))


class _Text:
    """JSON text arriving in chunks: a window on it, the values in it one at a time."""

    def __init__(self, chunks: Iterable[bytes], source: str) -> None:
        self.chunks = iter(chunks)
        self.source = source
        self.utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.offset = 0                 # characters dropped before buf
        self.lines = 0                  # line breaks among them
        self.last_nl = -1               # where the last of them was

    def more(self) -> bool:
        """Read the next chunk (dropping what was read); False at the end of the text."""
        if self.eof:
            return False
        if self.pos:
            n = self.buf.count("\n", 0, self.pos)
            if n:
                self.lines += n
                self.last_nl = self.offset + self.buf.rindex("\n", 0, self.pos)
            self.offset += self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        chunk = next(self.chunks, None)
        if chunk is None:
            self.eof = True
            self.buf += self.utf8.decode(b"", final=True)
        else:
            self.buf += self.utf8.decode(chunk)
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()   # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def value(self) -> Any:
        """The next JSON value, decoded."""
        self.peek()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as err:
                if self.eof:
                    raise self.error(err.msg, err.pos) from None
                if len(self.buf) - self.pos > MAX_VALUE:
                    raise TraceError(self.source, "not a readable trace: a JSON value of more "
                                     f"than {MAX_VALUE:,} characters at "
                                     f"{self.where(self.pos)} ({err.msg})") from None
                self.more()
                continue
            if end == len(self.buf) and self.more():    # a number may go on: 12|34
                continue
            self.pos = end
            return obj

    def expect(self, chars: str, what: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            raise self.error(f"Expecting {what}", self.pos)
        self.pos += 1
        return c

    def where(self, pos: int) -> str:
        at = self.offset + pos
        nl = self.buf.rfind("\n", 0, pos)
        line = self.lines + self.buf.count("\n", 0, pos) + 1
        col = pos - nl if nl >= 0 else at - self.last_nl
        return f"line {line} column {col}"

    def error(self, msg: str, pos: int) -> TraceError:
        what = "truncated JSON" if self.eof and pos >= len(self.buf) - 1 else "invalid JSON"
        return TraceError(self.source, f"not a readable trace: {what} at {self.where(pos)} "
                                       f"({msg})")

    def items(self) -> Iterator[Any]:
        """The elements of the array whose '[' was just read."""
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value()
            if self.expect(",]", "',' delimiter") == "]":
                return


def _trace_events(text: _Text) -> Iterator[Any]:
    """The elements of the document's ``traceEvents`` (or of the document, an array)."""
    first = text.peek()
    if first == "[":
        text.pos += 1
        yield from text.items()
    elif first == "{":
        text.pos += 1
        found = False
        if text.peek() == "}":
            text.pos += 1
        else:
            while True:
                if text.peek() != '"':
                    raise text.error("Expecting property name enclosed in double quotes",
                                     text.pos)
                key = text.value()
                text.expect(":", "':' delimiter")
                if key == "traceEvents" and text.peek() == "[":
                    text.pos += 1
                    found = True
                    yield from text.items()
                elif key == "traceEvents":
                    if text.value() is not None:
                        raise TraceError(text.source,
                                         "not a Chrome trace: 'traceEvents' is not a list")
                else:
                    text.value()            # metadata, displayTimeUnit: not needed
                if text.expect(",}", "',' delimiter") == "}":
                    break
        if not found:
            raise TraceError(text.source, "not a Chrome trace: the JSON has no 'traceEvents'")
    elif first:
        text.value()                        # a JSON error if it is not JSON at all
        raise TraceError(text.source, "not a Chrome trace: expected a JSON object or array")
    else:
        raise text.error("Expecting value", text.pos)
    if text.peek():
        raise text.error("Extra data", text.pos)


def read_chrome(chunks: Iterable[bytes], source: str, session: str) -> RawTrace:
    """The op events of a Chrome trace arriving as ``chunks`` of its (unpacked) bytes."""
    cap = settings().max_trace_events
    events: list[OpEvent] = []
    markers: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    kept = 0
    other = 0
    names: dict[str, str] = {}              # one string per distinct name, not per event
    share = names.setdefault
    try:
        for e in _trace_events(_Text(chunks, source)):
            if not isinstance(e, dict) or e.get("ph") != "X":
                continue
            args = e.get("args")
            if not isinstance(args, dict):
                args = {}
            op = args.get("hlo_op")
            thread = f"{e.get('pid', '')}/{e.get('tid', '')}"
            if not op:
                other += 1
                name = e.get("name")
                if isinstance(name, str) and name.startswith(END_MARKER) and "ts" in e:
                    try:
                        markers[(str(e.get("pid", "")), name[len(END_MARKER):])].append(
                            (float(e["ts"]), share(thread, thread)))
                    except (TypeError, ValueError):
                        continue
                    kept += 1
                    if kept > cap:
                        raise _over(source, cap)
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
            kept += 1
            if kept > cap:
                raise _over(source, cap)
            module, op, run = (str(args.get("hlo_module", "")), str(op),
                               f"{session}#{args.get('run_id', '')}")
            process = str(e.get("pid", ""))
            device = str(args.get("device_ordinal", ""))
            events.append(OpEvent(
                module=share(module, module), op=share(op, op), run=share(run, run),
                thread=share(thread, thread), start_us=start, dur_us=dur, program_id=pid,
                process=share(process, process), device=share(device, device)))
    except UnicodeDecodeError as err:
        raise TraceError(source, f"not a readable trace: not UTF-8 JSON ({err.reason})") from None
    return RawTrace(source, "chrome", events, other, sorted_markers(markers))


def _over(source: str, cap: int) -> TraceError:
    return TraceError(source, f"holds more than {cap:,} per-op events and completion markers, "
                              "over the trace event cap (HLOLENS_MAX_TRACE_EVENTS): profile "
                              "fewer steps")
