"""The JAX/jaxlib versions a dump was made with, as its profiler trace records them.

:func:`dump_versions` reads the first ``*.xplane.pb`` that says; :func:`xplane_versions`
decodes the few XSpace fields it needs by hand (protobuf wire format), so no proto
package is needed.
"""

from __future__ import annotations

import posixpath

from ..dumps import Dump


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated varint")
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7


def _fields(data: bytes):
    """(field number, wire type, value) of one protobuf message, top level only."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            yield num, wire, value
        elif wire == 2:
            n, i = _varint(data, i)
            yield num, wire, data[i:i + n]
            i += n
        elif wire == 1:
            yield num, wire, data[i:i + 8]
            i += 8
        elif wire == 5:
            yield num, wire, data[i:i + 4]
            i += 4
        else:
            raise ValueError(f"wire type {wire}")


def xplane_versions(data: bytes) -> dict[str, str]:
    """The string stats of an XSpace's planes whose names end in ``_version``
    (``jax_version``, ``jaxlib_version``: what the profiler records on the host plane).
    XPlane: stat_metadata = 5 (map id -> XStatMetadata{name = 2}), stats = 6
    (XStat{metadata_id = 1, str_value = 5})."""
    out: dict[str, str] = {}
    try:
        for num, wire, plane in _fields(data):
            if num != 1 or wire != 2:
                continue
            names: dict[int, str] = {}
            stats: list[tuple[int, str]] = []
            for pn, pw, pv in _fields(plane):
                if pw != 2:
                    continue
                if pn == 5:
                    key, meta = 0, b""
                    for en, ew, ev in _fields(pv):
                        if en == 1 and ew == 0:
                            key = ev
                        elif en == 2 and ew == 2:
                            meta = ev
                    for mn, mw, mv in _fields(meta):
                        if mn == 2 and mw == 2:
                            names[key] = mv.decode("utf-8", "replace")
                elif pn == 6:
                    mid, text = 0, None
                    for sn, sw, sv in _fields(pv):
                        if sn == 1 and sw == 0:
                            mid = sv
                        elif sn == 5 and sw == 2:
                            text = sv.decode("utf-8", "replace")
                    if text is not None:
                        stats.append((mid, text))
            for mid, text in stats:
                name = names.get(mid, "")
                if name.endswith("_version") and name not in out:
                    out[name] = text
    except ValueError:
        return out
    return out


def dump_versions(dump: Dump) -> dict[str, str]:
    """JAX/jaxlib versions as the dump's files say (a profiler ``*.xplane.pb``); empty
    when no file says."""
    def compute(d: Dump) -> dict[str, str]:
        for f in d.files:
            if posixpath.basename(f.path).endswith(".xplane.pb"):
                try:
                    found = xplane_versions(d.read_bytes(f.path))
                except OSError:
                    continue
                if found:
                    return found
        return {}
    return dump.derived("compare:versions", compute)
