"""The JAX/jaxlib versions a dump was made with, as its profiler trace records them.

:func:`dump_versions` reads the first ``*.xplane.pb`` that says; :func:`xplane_versions`
decodes the few XSpace fields it needs by hand (protobuf wire format: ``hlo.wire_fields``),
so no proto package is needed.
"""

from __future__ import annotations

import posixpath

from ..dumps import Dump
from ..hlo import wire_fields


def xplane_versions(data: bytes) -> dict[str, str]:
    """The string stats of an XSpace's planes whose names end in ``_version``
    (``jax_version``, ``jaxlib_version``: what the profiler records on the host plane).
    XPlane: stat_metadata = 5 (map id -> XStatMetadata{name = 2}), stats = 6
    (XStat{metadata_id = 1, str_value = 5})."""
    out: dict[str, str] = {}
    try:
        for num, plane in wire_fields(data):
            if num != 1 or not isinstance(plane, bytes):
                continue
            names: dict[int, str] = {}
            stats: list[tuple[int, str]] = []
            for pn, pv in wire_fields(plane):
                if not isinstance(pv, bytes):
                    continue
                if pn == 5:
                    key, meta = 0, b""
                    for en, ev in wire_fields(pv):
                        if en == 1 and isinstance(ev, int):
                            key = ev
                        elif en == 2 and isinstance(ev, bytes):
                            meta = ev
                    for mn, mv in wire_fields(meta):
                        if mn == 2 and isinstance(mv, bytes):
                            names[key] = mv.decode("utf-8", "replace")
                elif pn == 6:
                    mid, text = 0, None
                    for sn, sv in wire_fields(pv):
                        if sn == 1 and isinstance(sv, int):
                            mid = sv
                        elif sn == 5 and isinstance(sv, bytes):
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
