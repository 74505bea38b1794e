"""Protocol buffers' wire format, read without a proto package: the fields of a message
(a TPU topology's libtpu message inside ``topology.textproto``, an XSpace's profiler
stats), one level at a time."""

from __future__ import annotations

from typing import Any

__all__ = ["varint", "wire_fields"]


def varint(data: Any, i: int) -> tuple[int, int]:
    """The varint at ``data[i]`` and the position after it; ``ValueError`` when ``data``
    ends within it (``data``: bytes, or a buffer such as an mmap)."""
    shift = value = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def wire_fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """The fields of a wire-format message, in order: ``(number, value)`` with an int for
    a varint (and fixed32/64), bytes for a length-delimited field. ``ValueError`` on a
    truncated message or a wire type it does not know."""
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
            out.append((number, value))
        elif wire == 2:
            n, i = varint(data, i)
            if i + n > len(data):
                raise ValueError("truncated field")
            out.append((number, data[i:i + n]))
            i += n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            out.append((number, int.from_bytes(data[i:i + n], "little")))
            i += n
        else:
            raise ValueError(f"wire type {wire} of field {number}")
    return out
