"""HLO modules given as loose files, not as a ``--xla_dump_to`` folder: a single ``.hlo``
(a bug report's attachment, ``compiled.as_text()`` saved to disk), pasted text,
StableHLO/MLIR, a binary HLO proto; several of them make one dump.

Used only when no file of a dump is named as XLA names its dump files, so a real dump
folder is indexed exactly as before. Each file that holds a module (by its content,
whatever its name) becomes a module named from its ``HloModule`` (or ``module @name``)
line; its stage is guessed from the text: scheduled (``is_scheduled=true``) or holding
fusions means after optimizations, anything else before. StableHLO is the stage before
optimizations (``source`` says it came from MLIR). Two files of one module name at
different stages are one module (before and after).

A dump folder written with ``--xla_dump_hlo_as_proto`` alone has modules but no HLO text:
its ``*.hlo.pb`` files then stand for the stages (``protos_as_stages``).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from typing import Callable

from ..hlo import (HLO_PROTO_BINARY, HLO_PROTO_TEXT, HLO_TEXT, MLIR_TEXT, HloParseError,
                   module_name, sniff)
from ..hlo import to_hlo_text

_SCHEDULED = re.compile(rb"^HloModule[^\n]*\bis_scheduled=true", re.M)
_FUSED = (b" fusion(", b"kind=kLoop", b"kind=kInput", b"kind=kOutput", b"kind=kCustom")
_PROTO_STAGE = re.compile(r"(?:(.+)_)?(before|after)_optimizations\.hlo\.pb")


def guess_stage(text: bytes, before: str, after: str) -> str:
    """``after`` for a module XLA has optimized: scheduled, or holding fusions (plain
    substring searches: a 5 MB module takes milliseconds)."""
    if _SCHEDULED.search(text[:65536]) or any(f in text for f in _FUSED):
        return after
    return before


@dataclasses.dataclass
class _Found:
    path: str
    name: str
    stage: str
    source: str          # '' for HLO text, else what it is converted from


def index_loose(files: list, read: Callable[[str], bytes], *, before: str, after: str,
                unknown: str, also: tuple[str, ...] = ()) -> list:
    """``files`` (DumpFile) again, those holding a module given a module id, name and
    stage; files that hold none are left as they were. ``also``: other kinds a module's
    file may have been taken for by its name (``*.pb``/``*.pbtxt``: TF graphs too)."""
    found: list[_Found] = []
    for f in files:
        if (f.kind != unknown and f.kind not in also) or f.module_id is not None:
            continue
        try:
            data = read(f.path)
        except (OSError, KeyError):
            continue
        kind = sniff(data, f.name)
        if not kind:
            continue
        stem = posixpath.basename(f.path).split(".")[0] or f.path
        if kind == HLO_TEXT:
            found.append(_Found(f.path, module_name(data, kind) or stem,
                                guess_stage(data, before, after), ""))
        elif kind == MLIR_TEXT:
            found.append(_Found(f.path, module_name(data, kind) or stem, before, kind))
        elif kind in (HLO_PROTO_BINARY, HLO_PROTO_TEXT):
            try:
                text = to_hlo_text(data, kind, f.path)
            except HloParseError:
                if kind == HLO_PROTO_TEXT:     # a proto's text gone wrong: opening it says
                    found.append(_Found(f.path, stem, before, kind))    # where and why
                continue        # binary that is not a module after all: an unknown file
            found.append(_Found(f.path, module_name(text, HLO_TEXT) or stem,
                                guess_stage(text, before, after), kind))
    modules: list[tuple[str, dict[str, _Found]]] = []     # (name, stage -> file)
    for x in found:
        for name, stages in modules:
            if name == x.name and x.stage not in stages:
                stages[x.stage] = x
                break
        else:
            modules.append((x.name, {x.stage: x}))
    placed = {x.path: (f"{i:04d}", name, x)
              for i, (name, stages) in enumerate(modules) for x in stages.values()}
    out = []
    for f in files:
        hit = placed.get(f.path)
        if hit is None:
            out.append(f)
            continue
        mid, name, x = hit
        out.append(dataclasses.replace(f, kind=x.stage, module_id=mid, module_name=name,
                                       source=x.source))
    return out


def protos_as_stages(files: list, *, before: str, after: str, proto: str) -> list:
    """A module with no HLO text but ``*.before_optimizations.hlo.pb`` /
    ``*after_optimizations.hlo.pb`` files (``--xla_dump_hlo_as_proto`` alone): those
    files are its stages, read through jaxlib."""
    out = []
    for f in files:
        m = _PROTO_STAGE.fullmatch(f.name.split(f"{f.module_name}.", 1)[-1]) \
            if f.kind == proto and f.module_name else None
        if m is None:
            out.append(f)
            continue
        stage = before if m.group(2) == "before" else after
        out.append(dataclasses.replace(f, kind=stage, platform=m.group(1) or "",
                                       source=HLO_PROTO_BINARY))
    return out
