"""The lexical layer of HLO text, shared by the parser, the shape reader and the attribute
decoders: strings, comments, the whitespace between tokens, and how far a bracketed value
reaches (strings and comments skipped, brackets matched).

Errors are ``LexError`` with a 0-based offset in the text given; each reader turns it into
its own error (the parser adds file, line and column).
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, Protocol, cast

from .names import NAME_PATTERN

# a C-escaped string literal, quotes included
STRING = re.compile(r'"(?:[^"\\]|\\.)*+"', re.S)
# whitespace and comments, as XLA's lexer skips them (an unterminated /* is not skipped)
SKIP = re.compile(r"(?:\s++|//[^\n]*+|/\*(?:[^*]|\*(?!/))*+\*/)*+")
# a comment of either kind (for text that holds no strings)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# a string or a comment: comments are removed outside strings
STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*+"|/\*.*?\*/|//[^\n]*', re.S)
# a name, with its '%' if written (group 1) and without (group 2)
NAME_TOKEN = re.compile(rf"(%?)({NAME_PATTERN})")
# the start of an instruction ('[ROOT] name =') or of a computation's closing '}'
STATEMENT_START = re.compile(rf"(?:ROOT\s|%{NAME_PATTERN}\s*=|{NAME_PATTERN}\s+=|\}})")
# words XLA's lexer reserves: not instruction names unless written with %
KEYWORDS = frozenset("""true false inf nan HloModule ENTRY ROOT maximal replicated manual
unknown unreduced last_tile_dim_replicate shard_as shard_like FileNames FunctionNames
FileLocations StackFrames""".split())
# the bracket each opening bracket needs
CLOSE = {"{": "}", "(": ")", "[": "]"}

# what the bracket scanner stops at; with or without the commas that end a value
_TOKENS = re.compile(r'[{}()\[\]"]|//|/\*')
_TOKENS_COMMA = re.compile(r'[{}()\[\]",]|/\*|//')

# "the '{' on line 3", "'{' (offset 12)": how an error names an opening bracket
DescribeOpener = Callable[[str, int], str]


class LexError(ValueError):
    """A lexical error at ``offset`` (0-based); ``stop`` is where the scan stopped."""

    def __init__(self, message: str, offset: int = 0, stop: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.stop = offset if stop is None else stop


def skip(text: str, pos: int) -> int:
    """Offset after the whitespace and comments at ``pos``."""
    m = SKIP.match(text, pos)
    return pos if m is None else m.end()


def strip_comments(text: str) -> str:
    """Remove ``/* */`` and ``//`` comments outside strings (and the ends' whitespace)."""
    return STRING_OR_COMMENT.sub(
        lambda m: m.group() if m.group().startswith('"') else "", text).strip()


def _at_offset(opener: str, at: int) -> str:
    return f"'{opener}' (offset {at})"


def _scan(text: str, pos: int, stack: list[tuple[str, int]], commas: bool,
          describe: DescribeOpener) -> int:
    """The bracket scanner.  With a non-empty ``stack`` (the group opened at
    ``stack[0]``): the offset after the bracket that closes it.  With an empty one (a
    value): the offset of the first ',' (with ``commas``), '}' or ')' outside brackets
    and strings, or the end of the text."""
    n = len(text)
    group = bool(stack)
    tokens = _TOKENS_COMMA if commas else _TOKENS
    while True:
        m = tokens.search(text, pos)
        if m is None:
            if stack:
                opener, at = stack[-1]
                raise LexError(f"expected '{CLOSE[opener]}' to close this '{opener}'", at, n)
            return n
        c = m.group()
        i = m.start()
        if c == '"':
            sm = STRING.match(text, i)
            if sm is None:
                raise LexError("unterminated string", i)
            pos = sm.end()
        elif c in "{([":
            stack.append((c, i))
            pos = i + 1
        elif c in "})]":
            if not stack:
                if c == "}" or c == ")":
                    return i   # the caller's closing bracket ends the value
                raise LexError(f"unexpected '{c}'", i)
            opener, at = stack.pop()
            if CLOSE[opener] != c:
                raise LexError(f"expected '{CLOSE[opener]}' to close {describe(opener, at)}, "
                               f"found '{c}'", i)
            pos = i + 1
            if group and not stack:
                return pos
        elif c == ",":
            if not stack:
                return i
            pos = i + 1
        elif c == "/*":
            end = text.find("*/", i + 2)
            if end < 0:
                raise LexError("unterminated /* comment", i)
            pos = end + 2
        else:  # '//' comment to the end of the line
            end = text.find("\n", i)
            pos = n if end < 0 else end


def scan_value(text: str, pos: int, stop_at_comma: bool = True) -> int:
    """End of the value that starts at ``pos``: the next top-level ',' (with
    ``stop_at_comma``), the caller's closing '}' or ')', or the end; raises LexError."""
    return _scan(text, pos, [], stop_at_comma, _at_offset)


def group_end(text: str, pos: int, describe: DescribeOpener = _at_offset) -> int:
    """Offset after the bracket that closes the one at ``pos`` (strings and comments
    skipped, every bracket inside matched); raises LexError, whose ``stop`` is where the
    scan stopped (the end of the text when the group is not closed)."""
    return _scan(text, pos + 1, [(text[pos], pos)], False, describe)


class _Scanner(Protocol):
    def match(self) -> re.Match[str] | None: ...


class _HasScanner(Protocol):
    def scanner(self, string: str, pos: int = ..., endpos: int = ...) -> _Scanner: ...


def matches_back_to_back(pattern: re.Pattern[str], text: str,
                         pos: int) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` from ``pos``, each starting where the one before ended,
    until one fails (``re``'s scanner, which the typing stubs do not declare)."""
    return iter(cast(_HasScanner, pattern).scanner(text, pos).match, None)


def _nested(open_: str, close: str, depth: int) -> str:
    """A possessive regex for a bracket group nested up to ``depth`` levels (strings and
    /* */ comments skipped; no // comment inside)."""
    o, c = re.escape(open_), re.escape(close)
    atoms = rf'[^{o}{c}"/]++|"(?:[^"\\]|\\.)*+"|/\*(?:[^*]|\*(?!/))*+\*/|/(?![/*])'
    pat = rf"{o}(?:{atoms})*+{c}"
    for _ in range(depth - 1):
        pat = rf"{o}(?:{atoms}|{pat})*+{c}"
    return pat


# bracket groups read in one step: only brackets of the group's own kind are matched
_GROUP = {"{": re.compile(_nested("{", "}", 6)), "(": re.compile(_nested("(", ")", 6)),
          "[": re.compile(_nested("[", "]", 6))}


def quick_group(text: str, pos: int) -> re.Match[str] | None:
    """The usual bracket group at ``pos`` in one regex step: nested up to 6 levels, no
    ``//`` comment inside, only brackets of its own kind counted; None when it is not
    that simple (then ``group_end`` reads it bracket by bracket)."""
    return _GROUP[text[pos]].match(text, pos)


__all__ = ["CLOSE", "COMMENT", "DescribeOpener", "KEYWORDS", "LexError", "NAME_TOKEN", "SKIP",
           "STATEMENT_START", "STRING",
           "STRING_OR_COMMENT", "group_end", "matches_back_to_back", "quick_group", "scan_value", "skip",
           "strip_comments"]
