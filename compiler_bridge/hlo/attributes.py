"""Instruction attributes: split verbatim, decode the ones the views need.

``split_attributes`` turns ``, dimensions={0,1}, to_apply=%add, metadata={...}``
into an ordered dict of verbatim values; the decoders read one value each.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Any

from .lexer import LexError, scan_value, skip, strip_comments
from .names import NAME_RE
from .records import Metadata

# a syntax error in attribute text (``offset``: where, in that text)
AttributeSyntaxError = LexError

_ATTR_NAME = re.compile(r"([A-Za-z_][\w.\-]*)\s*=\s*")


_FSTR = r'"(?:[^"\\]|\\.)*+"'
_FBRACED = (rf'\{{(?:[^{{}}"]++|{_FSTR}|\{{(?:[^{{}}"]++|{_FSTR}|\{{(?:[^{{}}"]++|{_FSTR})*+\}})*+\}})*+\}}')
_FBARE = r'(?:[^,{}"\s()\[\]/]++|\[[^\[\]]*+\]|\([^()]*+\))++'
_FITEM = rf'[ \t]*,[ \t]*([A-Za-z_][\w.\-]*)=({_FSTR}|{_FBRACED}|{_FBARE})'
_ITEMS = re.compile(_FITEM)


def split_attributes(tail: str) -> dict[str, str]:
    """``, a=1, b={x}`` -> ``{'a': '1', 'b': '{x}'}``; raises AttributeSyntaxError."""
    # the shapes XLA writes: one regex pass, items back to back up to the end
    out: dict[str, str] = {}
    end = n = 0
    for m in _ITEMS.finditer(tail):
        if m.start() != end:
            break
        out[m.group(1)] = m.group(2)
        end = m.end()
        n += 1
    else:
        if len(out) == n and (end == len(tail) or not tail[end:].strip(" \t")):
            return out
    out = {}
    n = len(tail)
    pos = skip(tail, 0)
    while pos < n:
        if tail[pos] != ",":
            raise AttributeSyntaxError("expected ',' and then an attribute (name=value)", pos)
        pos = skip(tail, pos + 1)
        am = _ATTR_NAME.match(tail, pos)
        if am is None:
            raise AttributeSyntaxError("expected an attribute name=value", pos)
        key = am.group(1)
        start = am.end()
        end = scan_value(tail, start)
        if end < n and tail[end] != ",":
            raise AttributeSyntaxError(f"unexpected '{tail[end]}'", end)
        value = tail[start:end].strip()
        if not value:
            raise AttributeSyntaxError(f"expected a value for attribute '{key}'", start)
        if "/*" in value or "//" in value:
            value = strip_comments(value)
        if key in out:
            raise AttributeSyntaxError(f"attribute '{key}' is given twice", am.start())
        out[key] = value
        pos = skip(tail, end)
    return out


# --------------------------------------------------------------------------- decoders

def unquote(s: str) -> str:
    """A C-escaped string literal (with or without quotes) -> its text."""
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        s = s[1:-1]
    if "\\" not in s:
        return s
    return codecs.escape_decode(s.encode("utf-8"))[0].decode("utf-8", "replace")


def string_value(raw: str) -> str:
    raw = raw.strip()
    if not (raw.startswith('"') and raw.endswith('"')):
        raise ValueError(f"expected a quoted string, got {raw[:40]!r}")
    return unquote(raw)


def computation_name(raw: str) -> str:
    name = raw.strip().lstrip("%")
    if not NAME_RE.fullmatch(name):
        raise ValueError(f"expected a computation name, got {raw[:40]!r}")
    return name


def computation_list(raw: str) -> tuple[str, ...]:
    raw = raw.strip()
    if raw.startswith("{"):
        if not raw.endswith("}"):
            raise ValueError("expected '}'")
        body = raw[1:-1].strip()
        if not body:
            return ()
        return tuple(computation_name(x) for x in body.split(","))
    return (computation_name(raw),)


def int_list(raw: str) -> tuple[int, ...]:
    raw = raw.strip()
    if raw.startswith("{") and raw.endswith("}"):
        raw = raw[1:-1]
    raw = raw.strip()
    if not raw:
        return ()
    return tuple(int(x) for x in raw.split(","))


_KV = re.compile(r'([\w.\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|[^\s,{}]+)')


def key_values(raw: str) -> list[tuple[str, str]]:
    """``{a="x" b=3, c={...}}`` -> [('a', '"x"'), ('b', '3'), ('c', '{...}')]."""
    raw = raw.strip()
    if not (raw.startswith("{") and raw.endswith("}")):
        raise ValueError(f"expected '{{...}}', got {raw[:40]!r}")
    body = raw[1:-1]
    out = []
    pos = 0
    for m in _KV.finditer(body):
        gap = body[pos:m.start()].strip(" \t\r\n,")
        if gap:
            raise ValueError(f"unexpected {gap[:30]!r}")
        out.append((m.group(1), m.group(2)))
        pos = m.end()
    if body[pos:].strip(" \t\r\n,"):
        raise ValueError(f"unexpected {body[pos:].strip()[:30]!r}")
    return out


_METADATA_INTS = frozenset({"source_line", "source_end_line", "source_column",
                            "source_end_column", "stack_frame_id"})
_METADATA_STRS = frozenset({"op_type", "op_name", "source_file"})


def metadata(raw: str) -> Metadata:
    """``{op_type="add" op_name="jit(f)/add" source_line=3 ...}`` -> Metadata."""
    strs: dict[str, str] = {}
    ints: dict[str, int] = {}
    other = []
    for k, v in key_values(raw):
        if k in _METADATA_STRS:
            strs[k] = unquote(v)
        elif k in _METADATA_INTS:
            ints[k] = int(v)
        else:
            other.append((k, v))
    return Metadata(strs.get("op_type", ""), strs.get("op_name", ""),
                    strs.get("source_file", ""), ints.get("source_line", 0),
                    ints.get("source_end_line", 0), ints.get("source_column", 0),
                    ints.get("source_end_column", 0), ints.get("stack_frame_id", 0),
                    tuple(other))


def backend_config(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith("{"):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    text = string_value(raw) if raw.startswith('"') else raw
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def string_dict(raw: str) -> dict[str, str]:
    """``{a="x",b="y"}`` -> ``{'a': 'x', 'b': 'y'}`` (unquoted values kept verbatim)."""
    raw = raw.strip()
    if not (raw.startswith("{") and raw.endswith("}")):
        raise ValueError("expected '{...}'")
    body = raw[1:-1].strip()
    if not body:
        return {}
    try:
        items = split_attributes("," + body)
    except AttributeSyntaxError as e:
        raise ValueError(e.message) from None
    return {k: unquote(v) if v.startswith('"') else v for k, v in items.items()}


@dataclass(frozen=True, slots=True)
class Window:
    size: tuple[int, ...]
    stride: tuple[int, ...]
    pad_low: tuple[int, ...]
    pad_high: tuple[int, ...]
    lhs_dilate: tuple[int, ...]
    rhs_dilate: tuple[int, ...]
    rhs_reversal: tuple[int, ...]
    raw: str = ""


def window(raw: str) -> Window:
    parts = dict(key_values(raw))
    size = tuple(int(x) for x in parts["size"].split("x")) if "size" in parts else ()
    n = len(size)

    def dims(key: str, default: int) -> tuple[int, ...]:
        if key not in parts:
            return (default,) * n
        return tuple(int(x) for x in parts[key].split("x"))

    pads_low, pads_high = [0] * n, [0] * n
    if "pad" in parts:
        pairs = parts["pad"].split("x")
        pads_low, pads_high = [], []
        for p in pairs:
            if p.count("_") != 1:
                raise ValueError(f"bad pad {p!r}")
            lo, _, hi = p.partition("_")
            pads_low.append(int(lo))
            pads_high.append(int(hi))
    return Window(size, dims("stride", 1), tuple(pads_low), tuple(pads_high),
                  dims("lhs_dilate", 1), dims("rhs_dilate", 1), dims("rhs_reversal", 0), raw)


@dataclass(frozen=True, slots=True)
class DimLabels:
    lhs: str
    rhs: str
    output: str

    def __str__(self) -> str:
        return f"{self.lhs}_{self.rhs}->{self.output}"


def dim_labels(raw: str) -> DimLabels:
    m = re.fullmatch(r"\s*([\w?]+)_([\w?]+)->([\w?]+)\s*", raw)
    if not m:
        raise ValueError(f"expected dim_labels like b01f_01io->b01f, got {raw[:40]!r}")
    return DimLabels(*m.groups())


@dataclass(frozen=True, slots=True)
class DotDimensionNumbers:
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]
    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ReplicaGroups:
    """``replica_groups``: explicit ``{{0,1},{2,3}}``, iota ``[2,2]<=[4]`` or mesh form."""

    form: str                                  # 'list', 'iota' or 'mesh'
    groups: tuple[tuple[int, ...], ...] | None  # expanded groups (None for mesh)
    raw: str


_IOTA = re.compile(r"\[([\d,\s]+)\]\s*<=\s*\[([\d,\s]+)\]\s*(?:T\(([\d,\s]+)\))?")


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def iota_tile_assignment(dims: list[int], reshape: list[int], perm: list[int] | None) -> list[int]:
    """Flattened device list of XLA's iota tile assignment ``[dims]<=[reshape]T(perm)``."""
    total = 1
    for d in reshape:
        total *= d
    if perm is None:
        return list(range(total))
    strides = [1] * len(reshape)
    for i in range(len(reshape) - 2, -1, -1):
        strides[i] = strides[i + 1] * reshape[i + 1]
    tdims = [reshape[p] for p in perm]
    tstrides = [strides[p] for p in perm]
    out = []
    idx = [0] * len(tdims)
    for _ in range(total):
        out.append(sum(i * s for i, s in zip(idx, tstrides)))
        for k in range(len(idx) - 1, -1, -1):
            idx[k] += 1
            if idx[k] < tdims[k]:
                break
            idx[k] = 0
    return out


def replica_groups(raw: str) -> ReplicaGroups:
    raw_s = raw.strip()
    m = _IOTA.fullmatch(raw_s)
    if m:
        dims = _ints(m.group(1))
        flat = iota_tile_assignment(dims, _ints(m.group(2)),
                                    _ints(m.group(3)) if m.group(3) else None)
        size = dims[-1] if dims else 1
        groups = tuple(tuple(flat[i:i + size]) for i in range(0, len(flat), size))
        return ReplicaGroups("iota", groups, raw_s)
    if raw_s.startswith("mesh"):
        return ReplicaGroups("mesh", None, raw_s)
    if raw_s.startswith("{"):
        inner = raw_s[1:-1].strip()
        groups = tuple(tuple(_ints(g)) for g in re.findall(r"\{([^{}]*)\}", inner))
        return ReplicaGroups("list", groups, raw_s)
    raise ValueError(f"expected replica groups, got {raw_s[:40]!r}")


@dataclass(frozen=True, slots=True)
class Sharding:
    """``sharding={...}``: its kind and, for tiled ones, the tile shape."""

    kind: str                     # replicated, maximal, manual, tuple, devices, unknown, other
    tile_shape: tuple[int, ...] = ()
    device: int | None = None
    raw: str = ""


def sharding(raw: str) -> Sharding:
    raw_s = raw.strip()
    body = raw_s[1:-1].strip() if raw_s.startswith("{") and raw_s.endswith("}") else raw_s
    if body.startswith("{"):
        return Sharding("tuple", raw=raw_s)
    head = re.match(r"(\w+)", body)
    word = head.group(1) if head else ""
    if word == "maximal":
        dm = re.search(r"device=(\d+)", body)
        return Sharding("maximal", device=int(dm.group(1)) if dm else None, raw=raw_s)
    if word == "devices":
        dm = re.match(r"devices=\[([\d,\s]+)\]", body)
        return Sharding("devices", tuple(_ints(dm.group(1))) if dm else (), raw=raw_s)
    if word in ("replicated", "manual", "unknown"):
        return Sharding(word, raw=raw_s)
    return Sharding("other", raw=raw_s)
