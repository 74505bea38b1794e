"""The few protobuf forms XLA writes a target's facts in, read without protobuf's classes:
text format (``gpu_target_config.pbtxt``, ``topology.textproto``); the wire format of a
``bytes`` field inside it (``platform_specific_topology.value``: libtpu's topology, whose
message XLA's public sources do not define, so it is read by field number) is read by
``hlo.wire_fields``.
"""

from __future__ import annotations

import codecs
import re

# a token of text format: a string, a brace, a name with its colon, or a bare value
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]|[A-Za-z_][\w.]*\s*:?|[^\s{}"]+')

Message = dict[str, list]


def parse_text(text: str) -> Message:
    """A text-format message as ``{field: [values]}`` (a field may repeat): a nested message
    is a dict again, a string is its bytes decoded (escapes resolved, latin-1 for bytes
    that are not text), a number stays a string for the reader to convert. A map field
    (``rate_infos { key: 4 value {...} }``) reads as repeated messages with ``key`` and
    ``value``. Comments (``#``) are skipped; a malformed text raises ``ValueError``."""
    text = "\n".join(line.split("#", 1)[0] if '"' not in line else line
                     for line in text.splitlines())
    stack: list[Message] = [{}]
    name: str | None = None
    for tok in _TOKEN.findall(text):
        if tok == "{":
            if name is None:
                raise ValueError("a '{' without a field name")
            child: Message = {}
            stack[-1].setdefault(name, []).append(child)
            stack.append(child)
            name = None
        elif tok == "}":
            if len(stack) == 1:
                raise ValueError("a '}' without its '{'")
            stack.pop()
        elif name is None:
            name = tok.rstrip(": \t")
            if not name or not re.fullmatch(r"[A-Za-z_][\w.]*", name):
                raise ValueError(f"expected a field name, found {tok!r}")
        else:
            value = unquote(tok) if tok.startswith('"') else tok
            stack[-1].setdefault(name, []).append(value)
            name = None
    if len(stack) != 1:
        raise ValueError("a '{' is not closed")
    return stack[0]


def unquote(token: str) -> str:
    """A quoted text-format string's value (C escapes, octal bytes), as latin-1 text."""
    raw = codecs.escape_decode(token[1:-1].encode("latin-1"))[0]
    return raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)


def first(msg: Message, *path: str, default=None):
    """The first value at ``path`` (``first(m, "gpu_device_info", "core_count")``)."""
    node: object = msg
    for step in path:
        values = node.get(step) if isinstance(node, dict) else None
        if not values:
            return default
        node = values[0]
    return node
