"""Finding and reading traces: a dump's trace files by profiling session
(``trace_sessions``), a trace to read (:class:`TraceSource`: a file of the dump, a file on
disk or uploaded bytes), and ``read_trace``, which picks the reader for the bytes
(Chrome JSON or xplane) and computes self times and asynchronous completions.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections import defaultdict
from dataclasses import dataclass

from .attribution import async_completions, self_times
from .chrome_trace import read_chrome, unpacked
from .trace_events import RawTrace, TraceError
from .xplane_trace import read_xplane
from ..dumps import TRACE, XPLANE, Dump, DumpFile

def looks_like_xplane(data: bytes, source: str) -> bool:
    name = source.lower()
    if name.endswith((".json", ".json.gz", ".gz")):
        return False
    if name.endswith(".pb"):
        return True
    return data[:2] != b"\x1f\x8b" and data.lstrip()[:1] not in (b"{", b"[")


def read_trace(data: bytes, source: str = "<trace>", session: str = "") -> RawTrace:
    """Per-op events of one trace file's bytes (Chrome JSON, gzipped or not, or xplane.pb).

    Raises TraceError (naming ``source``) for bytes that are not a readable trace.
    Self times are computed; matching to a dump is :func:`measure`'s job.
    """
    session = session or source
    if not data.strip():    # an empty xplane.pb parses as an XSpace with nothing in it
        raise TraceError(source, "not a readable trace: the file is empty")
    if looks_like_xplane(data, source):
        trace = read_xplane(data, source, session)
    else:
        trace = read_chrome(unpacked(data, source), source, session)
    self_times(trace.events)
    async_completions(trace.events, trace.markers)
    return trace


def read_trace_file(path: str | os.PathLike, session: str = "") -> RawTrace:
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(path, f"cannot read the file ({e.strerror or e})") from None
    return read_trace(data, path, session or os.path.dirname(path))


@dataclass(frozen=True, slots=True)
class TraceSource:
    """One trace to read: a file of the dump, a file on disk, or uploaded bytes."""

    name: str                   # shown in messages
    session: str                # runs of one profiling session share this
    path: str = ""              # inside the dump ('dump') or on disk ('file')
    origin: str = "dump"        # 'dump' | 'file' | 'bytes'
    data: bytes | None = None

    @property
    def key(self) -> str:
        """Content identity: the bytes' hash, a file's path, size and time, or the path of
        a file of the dump (whose own key then says which content)."""
        if self.origin == "bytes":
            what = hashlib.blake2b(self.data or b"", digest_size=16).hexdigest()
        elif self.origin == "file":
            try:
                st = os.stat(self.path)
                what = f"{os.path.abspath(self.path)}@{st.st_size}:{st.st_mtime_ns}"
            except OSError:
                what = f"{os.path.abspath(self.path)}@missing"
        else:
            what = self.path
        return f"{self.origin}:{self.session}:{self.name}:{what}"

    def read(self, dump: Dump | None = None) -> RawTrace:
        if self.origin == "bytes":
            return read_trace(self.data or b"", self.name, self.session)
        if self.origin == "file":
            return read_trace_file(self.path, self.session)
        assert dump is not None
        try:
            data = dump.read_bytes(self.path)
        except (OSError, KeyError) as e:
            raise TraceError(self.name, f"cannot read the file ({e})") from None
        return read_trace(data, self.name, self.session)


def _preference(f: DumpFile) -> int:
    if f.kind == TRACE:
        return 0 if f.name.startswith("perfetto_trace.json") else 1
    return 2   # xplane: needs jax; read when JSON is missing, broken or ambiguous


def trace_sessions(dump: Dump) -> dict[str, list[DumpFile]]:
    """A dump's trace files by profiling session (folder), best first.

    One session's files hold the same events (perfetto JSON, host JSON, xplane), so only
    one of them is read; sessions are merged.
    """
    sessions: dict[str, list[DumpFile]] = defaultdict(list)
    for f in dump.traces:
        if f.kind in (TRACE, XPLANE):
            sessions[posixpath.dirname(f.path)].append(f)
    return {k: sorted(v, key=lambda f: (_preference(f), f.path))
            for k, v in sorted(sessions.items())}


def uploaded(name: str, data: bytes) -> TraceSource:
    """A trace uploaded on its own (bytes), as a source for :func:`measure`."""
    return TraceSource(name, name, "", "bytes", data)
