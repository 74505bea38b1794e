"""Shapes and layouts as XLA writes them in HLO text.

A shape's ``str()`` is XLA's own text form with layout (``f32[128,512]{1,0}``,
``(f32[2]{0}, s32[])``, ``bf16[8]{0:T(128)(2,1)S(1)}``, buffers ``b(f32[2,4]{1,0})``).
Shapes are immutable and interned by their text: a 20k-instruction module has a few
hundred distinct shapes.  ``parse_shape_at`` reads a shape inside a larger text the way
XLA's lexer does (blanks and comments may sit between its tokens).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable

from .errors import HloParseError
from .lexer import COMMENT, skip

# Bits per element of each primitive type (xla_data.proto / primitive_util).
ELEMENT_BITS: dict[str, int] = {
    "pred": 8,
    "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
    "c64": 64, "c128": 128,
    "f4e2m1fn": 4,
    "f8e3m4": 8, "f8e4m3": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e4m3fnuz": 8,
    "f8e5m2": 8, "f8e5m2fnuz": 8, "f8e8m0fnu": 8,
    "token": 0, "opaque": 0,
}
# XLA's kCombineDimension in a tile, printed as '*'.
TILE_COMBINE = -1
# XLA's unbounded dynamic size, printed as '?'.
UNBOUNDED = -1


@dataclass(frozen=True, slots=True)
class Layout:
    """A dense layout: ``minor_to_major`` plus the suffixes after ``:``."""

    minor_to_major: tuple[int, ...]
    tiles: tuple[tuple[int, ...], ...] = ()
    tail_padding_alignment: int = 1          # L(n)
    index_primitive_type: str = ""           # #(u32)
    pointer_primitive_type: str = ""         # *(u32)
    element_size_in_bits: int = 0            # E(n)
    memory_space: int = 0                    # S(n)
    split_configs: str = ""                  # SC(...)..., verbatim
    physical_shape: str = ""                 # P(...), verbatim
    dynamic_shape_metadata_prefix_bytes: int = 0  # M(n)
    dim_level_types: str = ""                # D(...), kept but not printed (XLA drops it)

    def __str__(self) -> str:
        out = ",".join(map(str, self.minor_to_major))
        extra = []
        if self.tiles:
            extra.append("T" + "".join(
                "(" + ",".join("*" if d == TILE_COMBINE else str(d) for d in t) + ")"
                for t in self.tiles))
        if self.tail_padding_alignment != 1:
            extra.append(f"L({self.tail_padding_alignment})")
        if self.index_primitive_type:
            extra.append(f"#({self.index_primitive_type})")
        if self.pointer_primitive_type:
            extra.append(f"*({self.pointer_primitive_type})")
        if self.element_size_in_bits:
            extra.append(f"E({self.element_size_in_bits})")
        if self.memory_space:
            extra.append(f"S({self.memory_space})")
        if self.split_configs:
            extra.append(self.split_configs)
        if self.physical_shape:
            extra.append(f"P({self.physical_shape})")
        if self.dynamic_shape_metadata_prefix_bytes:
            extra.append(f"M({self.dynamic_shape_metadata_prefix_bytes})")
        if extra:
            out += ":" + "".join(extra)
        return "{" + out + "}"

    @property
    def is_default(self) -> bool:
        n = len(self.minor_to_major)
        return (self.minor_to_major == tuple(range(n - 1, -1, -1))
                and str(self) == "{" + ",".join(map(str, self.minor_to_major)) + "}")


@dataclass(frozen=True, slots=True)
class Shape:
    """An array, tuple, token or opaque shape."""

    element_type: str                       # 'f32', ..., 'tuple', 'token', 'opaque'
    dimensions: tuple[int, ...] = ()        # bound for '<=N', UNBOUNDED for '?'
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple["Shape", ...] = ()
    text: str = field(default="", compare=False)
    buffer: bool = False                    # 'b(f32[2,4])': a buffer holding this array

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Shape({self.text!r})"

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def is_array(self) -> bool:
        return self.element_type not in ("tuple", "token", "opaque")

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    @property
    def is_dynamic(self) -> bool:
        return any(self.dynamic) or any(s.is_dynamic for s in self.tuple_shapes)

    @property
    def element_count(self) -> int:
        n = 1
        for d in self.dimensions:
            n *= max(d, 0)
        return n

    @property
    def byte_size(self) -> int:
        """Bytes of the data this shape holds (tuples: the sum of their leaves).

        Sub-byte types take one byte an element unless the layout packs them
        (``E(4)``), as XLA does; ``<=N`` dimensions count at their bound.
        """
        if self.element_type == "tuple":
            return sum(s.byte_size for s in self.tuple_shapes)
        bits = ELEMENT_BITS.get(self.element_type, 0)
        if not bits:
            return 0
        if self.layout is not None and self.layout.element_size_in_bits:
            return (self.element_count * self.layout.element_size_in_bits + 7) // 8
        return self.element_count * max(bits // 8, 1)

    def leaves(self) -> list["Shape"]:
        if self.element_type != "tuple":
            return [self]
        out: list[Shape] = []
        for s in self.tuple_shapes:
            out.extend(s.leaves())
        return out

    def without_layout(self) -> str:
        """The text form with no layouts (``f32[8,16]``)."""
        if self.element_type == "tuple":
            return "(" + ", ".join(s.without_layout() for s in self.tuple_shapes) + ")"
        out = self.element_type + "[" + _dims_text(self.dimensions, self.dynamic) + "]"
        return f"b({out})" if self.buffer else out


def _dims_text(dims: tuple[int, ...], dynamic: tuple[bool, ...]) -> str:
    parts = []
    for d, dyn in zip(dims, dynamic):
        if not dyn:
            parts.append(str(d))
        elif d == UNBOUNDED:
            parts.append("?")
        else:
            parts.append(f"<={d}")
    return ",".join(parts)


def default_layout(rank: int) -> Layout:
    return Layout(tuple(range(rank - 1, -1, -1)))


def array_shape(element_type: str, dimensions: tuple[int, ...],
                dynamic: tuple[bool, ...] | None = None,
                layout: Layout | None = None) -> Shape:
    if dynamic is None:
        dynamic = (False,) * len(dimensions)
    if layout is None and element_type not in ("token", "opaque"):
        layout = default_layout(len(dimensions))
    text = element_type + "[" + _dims_text(dimensions, dynamic) + "]"
    if layout is not None:
        lt = str(layout)
        if dimensions or lt != "{}":
            text += lt
    return Shape(element_type, dimensions, dynamic, layout, (), text)


def buffer_shape(inner: Shape) -> Shape:
    """``b(f32[2,4]{1,0})``: a buffer of an array shape."""
    return Shape(inner.element_type, inner.dimensions, inner.dynamic, inner.layout, (),
                 f"b({inner.text})", True)


def tuple_shape(elements: tuple[Shape, ...]) -> Shape:
    # XLA marks every fifth element of a long tuple: '..., /*index=5*/f32[2]{0}, ...'
    text = "(" + ", ".join(e.text if i == 0 or i % 5 else f"/*index={i}*/{e.text}"
                           for i, e in enumerate(elements)) + ")"
    return Shape("tuple", (), (), None, elements, text)


# --------------------------------------------------------------------------- parsing

_ARRAY_HEAD = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")
_LAYOUT_START = re.compile(r"[ \t]*\{[ \t]*[\d:]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LAYOUT_ITEM = re.compile(
    r"D\(([^)]*)\)|T((?:\([^)]*\))+)|L\((\d+)\)|#\((\w+)\)|\*\((\w+)\)|E\((\d+)\)"
    r"|S\((\d+)\)|((?:SC\([^)]*\))+)|P\((.*)\)(?=M\(|$)|M\((\d+)\)")
_TILE = re.compile(r"\(([^)]*)\)")
_shape_cache: dict[str, Shape] = {}
# the shape parsed from exactly this text before, or None (one dict look-up: the parser's
# fast path calls it once per instruction)
cached_shape: Callable[[str], Shape | None] = _shape_cache.get


class ShapeSyntaxError(Exception):
    """Raised inside shape parsing; carries the 0-based offset in the shape text."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def parse_shape(text: str) -> Shape:
    """Parse one shape; raises HloParseError (no position) on bad text."""
    try:
        return shape_from_text(text)
    except ShapeSyntaxError as e:
        raise HloParseError(e.message, column=e.offset + 1, text=text) from None


def shape_from_text(text: str) -> Shape:
    """Parse one shape, cached by its text; raises ShapeSyntaxError."""
    shape = _shape_cache.get(text)
    if shape is not None:
        return shape
    shape, end = parse_shape_at(text, 0)
    end = skip(text, end)
    if end < len(text):
        raise ShapeSyntaxError("unexpected text after the shape", end)
    if len(_shape_cache) > 200_000:
        _shape_cache.clear()
    _shape_cache[text] = shape
    return shape


def can_be_shape(text: str, pos: int) -> bool:
    """Does a shape start at ``pos`` (``(``, ``b(`` or an element type and ``[``)?"""
    c = text[pos:pos + 1]
    if c == "(":
        return True
    m = _WORD.match(text, pos)
    if m is None:
        return False
    word = m.group()
    nxt = skip(text, m.end())
    if word == "b":
        return text[nxt:nxt + 1] == "("
    return word in ELEMENT_BITS and text[nxt:nxt + 1] == "["


def parse_shape_at(s: str, pos: int) -> tuple[Shape, int]:
    """Parse the shape that starts at ``pos`` of ``s`` (whitespace and comments may sit
    between its tokens); returns it and the offset just after it."""
    return _parse_shape_at(s, pos, 0)


def _parse_shape_at(s: str, pos: int, depth: int) -> tuple[Shape, int]:
    if depth > 64:
        raise ShapeSyntaxError("shape nested too deeply", pos)
    n = len(s)
    pos = skip(s, pos)
    if pos < n and s[pos] == "(":
        pos += 1
        elems: list[Shape] = []
        while True:
            pos = skip(s, pos)
            if pos < n and s[pos] == ")":
                return tuple_shape(tuple(elems)), pos + 1
            if elems:
                if pos >= n or s[pos] != ",":
                    raise ShapeSyntaxError("expected ',' or ')' in tuple shape", pos)
                pos += 1
            elem, pos = _parse_shape_at(s, pos, depth + 1)
            elems.append(elem)
    word = _WORD.match(s, pos)
    if word is not None and word.group() == "b":
        after = skip(s, word.end())
        if after < n and s[after] == "(":
            inner, end = _parse_shape_at(s, after + 1, depth + 1)
            if not inner.is_array or inner.buffer:
                raise ShapeSyntaxError("a buffer shape b(...) holds an array shape", after + 1)
            end = skip(s, end)
            if end >= n or s[end] != ")":
                raise ShapeSyntaxError("expected ')' at the end of the buffer shape", end)
            return buffer_shape(inner), end + 1
    m = _ARRAY_HEAD.match(s, pos)
    if not m:
        if word is not None and word.group() not in ELEMENT_BITS:
            raise ShapeSyntaxError(f"unknown element type '{word.group()}'", pos)
        raise ShapeSyntaxError("expected a shape such as f32[8,16]{1,0} or (f32[], s32[])", pos)
    etype, dims_text = m.group(1), m.group(2)
    if etype not in ELEMENT_BITS:
        raise ShapeSyntaxError(f"unknown element type '{etype}'", m.start(1))
    dims, dynamic = _parse_dims(dims_text, m.start(2))
    if etype in ("token", "opaque") and dims:
        raise ShapeSyntaxError(f"{etype} shapes have no dimensions", m.start(2))
    end = m.end()
    layout = None
    lm = _LAYOUT_START.match(s, end)
    if lm is not None:
        open_at = s.index("{", end)
        close = _layout_end(s, open_at)
        layout = _parse_layout(s[open_at:close], open_at, len(dims))
        end = close
    return array_shape(etype, dims, dynamic, layout), end


def _layout_end(s: str, open_at: int) -> int:
    """Offset just after the '}' that closes the layout opened at ``open_at``."""
    depth = 0
    i = open_at
    n = len(s)
    while i < n:
        c = s[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "\n":
            break
        i += 1
    raise ShapeSyntaxError("expected '}' to close the layout", open_at)


def _lead(s: str) -> int:
    return len(s) - len(s.lstrip())


def _parse_dims(text: str, offset: int) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    if "/" in text:
        text = _blank_comments(text)
    if not text.strip():
        return (), ()
    dims, dynamic = [], []
    pos = 0
    for part in text.split(","):
        p = part.strip()
        if p.isascii() and p.isdigit():
            dims.append(int(p))
            dynamic.append(False)
        elif p == "?":
            dims.append(UNBOUNDED)
            dynamic.append(True)
        elif p.startswith("<=") and p[2:].strip().isascii() and p[2:].strip().isdigit():
            dims.append(int(p[2:]))
            dynamic.append(True)
        else:
            raise ShapeSyntaxError(
                f"expected a dimension size (N, <=N or ?), got '{p}'", offset + pos + _lead(part))
        pos += len(part) + 1
    return tuple(dims), tuple(dynamic)


def _parse_layout(text: str, offset: int, rank: int) -> Layout:
    try:
        return _parse_layout_checked(text, offset, rank)
    except ValueError:
        raise ShapeSyntaxError(f"bad layout {text[:60]}", offset) from None


def _blank_comments(text: str) -> str:
    """Comments replaced by spaces (offsets stay)."""
    return COMMENT.sub(lambda m: " " * len(m.group()), text)


def _parse_layout_checked(text: str, offset: int, rank: int) -> Layout:
    if "/" in text:
        text = _blank_comments(text)
    if " " in text or "\t" in text or "\n" in text:
        # XLA's lexer allows blanks between a layout's tokens: drop them (offsets are
        # then only approximate, which is fine for this rare spelling)
        text = re.sub(r"\s+", "", text)
    body = text[1:-1]
    m2m_text, colon, rest = body.partition(":")
    m2m: tuple[int, ...] = ()
    if m2m_text.strip():
        try:
            m2m = tuple(int(x) for x in m2m_text.split(","))
        except ValueError:
            raise ShapeSyntaxError("expected minor-to-major dimension numbers in the layout",
                                   offset + 1) from None
    elif not colon and rank:
        raise ShapeSyntaxError("expected minor-to-major dimension numbers in the layout",
                               offset + 1)
    if len(m2m) != rank:
        raise ShapeSyntaxError(
            f"layout {{{m2m_text.strip()}}} has {len(m2m)} dimensions but the shape has {rank}",
            offset + 1)
    if sorted(m2m) != list(range(rank)):
        raise ShapeSyntaxError("layout minor-to-major is not a permutation of the dimensions",
                               offset + 1)
    fields: dict = {}
    rest = rest.strip()
    pos = 0
    base = offset + 1 + len(m2m_text) + 1
    while pos < len(rest):
        m = _LAYOUT_ITEM.match(rest, pos)
        if not m:
            raise ShapeSyntaxError(
                "unknown layout suffix; expected T(...), L(n), #(type), *(type), E(n), S(n), "
                "SC(...), M(n)", base + pos)
        d, tiles, l_, idx, ptr, e, s, sc, p, mm = m.groups()
        if d is not None:
            fields["dim_level_types"] = d
        elif tiles is not None:
            fields["tiles"] = tuple(
                tuple(TILE_COMBINE if x.strip() == "*" else int(x) for x in t.split(",") if x.strip())
                for t in _TILE.findall(tiles))
        elif l_ is not None:
            fields["tail_padding_alignment"] = int(l_)
        elif idx is not None:
            fields["index_primitive_type"] = idx
        elif ptr is not None:
            fields["pointer_primitive_type"] = ptr
        elif e is not None:
            fields["element_size_in_bits"] = int(e)
        elif s is not None:
            fields["memory_space"] = int(s)
        elif sc is not None:
            fields["split_configs"] = sc
        elif p is not None:
            raise ShapeSyntaxError("Layout has physical shape, but is not for a sparse array",
                                   base + pos)
        elif mm is not None:
            fields["dynamic_shape_metadata_prefix_bytes"] = int(mm)
        pos = m.end()
    return Layout(m2m, **fields)


# --------------------------------------------------------------------------- helpers

def without_element_size(shape: Shape) -> Shape:
    """The shape with ``E(n)`` removed from every layout (what a constant's literal keeps)."""
    if shape.element_type == "tuple":
        elems = tuple(without_element_size(e) for e in shape.tuple_shapes)
        return shape if elems == shape.tuple_shapes else tuple_shape(elems)
    layout = shape.layout
    if layout is None or not layout.element_size_in_bits:
        return shape
    out = array_shape(shape.element_type, shape.dimensions, shape.dynamic,
                      replace(layout, element_size_in_bits=0))
    return buffer_shape(out) if shape.buffer else out


def compatible(a: Shape, b: Shape) -> bool:
    """XLA's ShapeUtil::Compatible: equal ignoring layouts and dynamic-ness."""
    if a.element_type == "tuple" or b.element_type == "tuple":
        return (a.element_type == b.element_type and len(a.tuple_shapes) == len(b.tuple_shapes)
                and all(compatible(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes)))
    return (a.element_type == b.element_type and a.dimensions == b.dimensions
            and a.buffer == b.buffer)
