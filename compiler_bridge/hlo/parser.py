"""HLO text -> HloModule, accepting what XLA's own parser accepts and building what it builds.

Two readers share the work:

* the fast path: one compiled regex matches a whole instruction line in the form XLA
  writes (``[ROOT ]%name = SHAPE opcode(operands), attr=value, ...``); consecutive lines
  are matched with one scanner, attributes stay verbatim (decoded on access);
* the careful reader (``reader.py``): a token-level reader over the whole text, used
  for every other statement (several lines, comments, nested instructions, inline
  computations, shapes left for XLA to infer, async syntax sugar...) and for every
  error, which it reports with the exact line and column.  The fast path hands anything
  unusual to it.

The model follows XLA's parse: synthesized computations (``_`` for an inline
computation, ``async_wrapped`` for ``op-start`` sugar) sit before the computation that
made them, nested instructions (``parameter.anon``) before their user, instruction and
computation names are made unique across the module, async ops print as ``op-start``
when they wrap a single instruction, and the shapes XLA derives (``recv``, ``send``,
``after-all``, constants' element sizes, inferred shapes) are the ones stored.
"""

from __future__ import annotations

import hashlib
import re

from . import attributes as A
from .errors import HloParseError
from .gc_pause import gc_paused
from .lexer import KEYWORDS, NAME_TOKEN, STATEMENT_START, matches_back_to_back
from .model import HloComputation, HloInstruction, HloModule
from .names import NAME_PATTERN, OPCODES, RESERVED_NAMES, NameUniquer, sanitize_name
from .reader import Scope, StatementReader
from .records import FileLocation, StackFrame, StackFrameIndex
from .shapes import (
    ShapeSyntaxError,
    cached_shape,
    compatible,
    shape_from_text,
    without_element_size,
)

_NAME = NAME_PATTERN

# ----------------------------------------------------------------------------- fast path
_SHAPE_FAST = (r"[a-z][a-z0-9]*\[[^\]\n]*+\](?:\{[^{}\n]*+\})?"
               r"|\((?:[^()\n]++|\((?:[^()\n]++|\([^()\n]*+\))*+\))*+\)")
# one line of the usual forms: an instruction (groups 1-6), '}' (7), a computation
# header (8-11: ENTRY, name, signature, result shape) or nothing (no group)
_LINE = re.compile(
    rf"[ \t]*+(?:(ROOT[ \t]+)?%?({_NAME})[ \t]*=[ \t]*({_SHAPE_FAST})[ \t]+"
    rf"([a-z][a-z0-9\-]*)\(((?:[^()\n]++|\((?:[^()\n]++|\([^()\n]*+\))*+\))*+)\)"
    rf"[ \t]*+(,[^\n]*+)?"
    r"|(\})[ \t]*+"
    rf"|(ENTRY[ \t]+)?%?({_NAME})[ \t]*"
    rf"(\((?:[^()\n]++|\((?:[^()\n]++|\((?:[^()\n]++|\([^()\n]*+\))*+\))*+\))*+\)"
    rf"[ \t]*->[ \t]*({_SHAPE_FAST}))?[ \t]*\{{[ \t]*+"
    r"|)\n")
_TYPED_OPERANDS = re.compile(
    rf"(?:(?:{_SHAPE_FAST})[ \t]+%?{_NAME}(?:,[ \t]*|[ \t]*$))++")
_TYPED_OPERAND = re.compile(rf"({_SHAPE_FAST})[ \t]+%?({_NAME})")
_INLINE_COMMENT = re.compile(r"/\*(?:[^*]|\*(?!/))*+\*/")
# the value of an attribute naming computations, as the fast path reads it
_CALL_VALUE = re.compile(r"[ \t]*(%?[\w.\-]+|\{[^{}\n]*\})(?=[ \t]*(?:,|$))")
# words XLA's lexer reserves: not instruction names unless written with %
# the attributes through which each opcode calls computations (the fast path looks
# only for these; the careful reader takes any)
_TO_APPLY = ("to_apply=",)
_CALLS_OF = {
    "fusion": ("calls=",), "call": _TO_APPLY, "while": ("condition=", "body="),
    "conditional": ("branch_computations=", "true_computation=", "false_computation="),
    "custom-call": ("to_apply=", "called_computations=", "calls="),
    "reduce": _TO_APPLY, "reduce-window": _TO_APPLY, "map": _TO_APPLY, "sort": _TO_APPLY,
    "scatter": _TO_APPLY, "all-reduce": _TO_APPLY, "all-reduce-start": _TO_APPLY,
    "reduce-scatter": _TO_APPLY, "scan": _TO_APPLY,
}
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# opcode -> 0 (plain), 1 (no operands: parameter, constant); others go the careful way
_FAST_KIND: dict[str, int] = {op: 0 for op in OPCODES}
_FAST_KIND["parameter"] = 1
_FAST_KIND["constant"] = 1
for _op in ("async-start", "async-update", "async-done", "recv", "recv-done", "send",
            "send-done", "after-all", "add-dependency", "infeed", "outfeed",
            "select-and-scatter"):
    del _FAST_KIND[_op]

# ----------------------------------------------------------------------------- tables
_MODULE = re.compile(r"HloModule(?![\w.\-])")
_TABLE = re.compile(r"(FileNames|FunctionNames|FileLocations|StackFrames)(?![\w.\-])")
_TABLE_STRING = re.compile(r'(\d+)[ \t]+("(?:[^"\\\n]|\\.)*")')
_TABLE_BRACED = re.compile(r"(\d+)[ \t]+(\{[^{}]*\})")
_TABLE_FAST = {
    "FileNames": re.compile(r'\s*+(\d+) "((?:[^"\\\n]|\\.)*+)"[ \t]*+(?=\n)'),
    "FunctionNames": re.compile(r'\s*+(\d+) "((?:[^"\\\n]|\\.)*+)"[ \t]*+(?=\n)'),
    "FileLocations": re.compile(
        r"\s*+(\d+) \{file_name_id=(\d+) function_name_id=(\d+) line=(\d+) end_line=(\d+) "
        r"column=(\d+) end_column=(\d+)\}[ \t]*+(?=\n)"),
    "StackFrames": re.compile(
        r"\s*+(\d+) \{file_location_id=(\d+) parent_frame_id=(\d+)\}[ \t]*+(?=\n)"),
}


def content_key(data: str | bytes) -> str:
    """The content identity of a module's text (``HloModule.key``). Text is hashed in
    slices: encoding a 64 MB module at once would add its size to the peak memory."""
    h = hashlib.blake2b(digest_size=16)
    if isinstance(data, bytes):
        h.update(data)
    else:
        for i in range(0, len(data), 1 << 20):
            h.update(data[i:i + (1 << 20)].encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def parse_hlo(text: str, source: str | None = None, *, id: str | None = None,
              key: str | None = None) -> HloModule:
    """Parse one HLO module from its text; raises HloParseError naming file:line:col.
    ``key``: the text's ``content_key`` when the caller has it."""
    if not isinstance(text, str):
        raise TypeError("parse_hlo takes text; use parse_hlo_bytes for bytes")
    # collector paused (thread-safe): parses of 10k-42k-instruction modules take ~8% less
    # time (medians, the deferred collection counted), no rescans of young acyclic objects
    try:
        with gc_paused():
            module = _Parser(text, source).parse(id)
    except RecursionError:
        raise HloParseError("input nested too deeply", source=source) from None
    module.key = key or content_key(text)
    return module


def parse_hlo_bytes(data: bytes, source: str | None = None, *, id: str | None = None) -> HloModule:
    """Parse HLO text given as bytes: binary data and bad UTF-8 become HloParseError."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise HloParseError(f"binary data (NUL byte at offset {nul}); expected HLO text",
                            source=source, line=line)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = _decode_latin1_strings(data, source)
    return parse_hlo(text, source, id=id, key=content_key(data))


def _decode_latin1_strings(data: bytes, source: str | None) -> str:
    """Text with bytes that are not UTF-8 read as Latin-1 where they sit inside a quoted
    string (a ``source_file`` written on a Latin-1 file system, an ``op_name`` of a
    Latin-1 script): XLA takes such text once it is Unicode, and a viewer should show it.
    Anywhere else they are not HLO: HloParseError at the first such byte."""
    text = data.decode("utf-8", "surrogateescape")        # a bad byte b -> U+DC00+b
    for m in _ESCAPED_BYTE.finditer(text):
        at = m.start()
        start = text.rfind("\n", 0, at) + 1
        prefix = text[start:at]
        if (prefix.count('"') - prefix.count('\\"')) % 2 == 0:   # outside a string
            offset = len(text[:at].encode("utf-8", "surrogateescape"))
            raise HloParseError(
                f"not UTF-8 text (byte 0x{ord(m.group()) - 0xDC00:02x} at offset {offset}); "
                "expected HLO text", source=source, line=text.count("\n", 0, at) + 1,
                column=at - start + 1)
    return _ESCAPED_BYTE.sub(lambda m: chr(ord(m.group()) - 0xDC00), text)


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


class _Parser(StatementReader):
    """Reads a whole module: the fast path over the lines, the careful reader for the rest."""

    # ------------------------------------------------------------------ top level
    def parse(self, id: str | None) -> HloModule:
        text = self.text
        if "\0" in text:
            nul = text.index("\0")
            raise self.error_at(f"binary data (NUL character at offset {nul}); "
                                "expected HLO text", nul)
        pos = self.ws(0)
        if pos >= self.n:
            raise HloParseError("empty file: expected 'HloModule <name>'", source=self.source)
        m = _MODULE.match(text, pos)
        if not m:
            raise self.error_at("expected 'HloModule <name>' at the start of an HLO module", pos)
        pos = self.ws(m.end())
        nm = NAME_TOKEN.match(text, pos)
        if not nm:
            raise self.error_at("expected the module name after 'HloModule'", pos)
        name = nm.group(2)
        items, pos = self.attribute_list(nm.end(), None, True)
        module_attrs = {k: v for k, v, _ in items}
        frames = StackFrameIndex()
        self._computations(pos, frames)
        if not self.computations:
            raise HloParseError("module has no computations; expected 'ENTRY %name ... {'",
                                source=self.source, line=text.count("\n"))
        entries = [c for c in self.computations if c.is_entry]
        if len(entries) > 1:
            raise HloParseError("more than one ENTRY computation", source=self.source,
                                line=entries[1].line)
        insts = [i for c in self.computations for i in c.instructions]
        names = [i.name for i in insts]
        nameset = set(names)
        joined = "\n".join(names)
        self._check_names(nameset, joined)
        self._uniquify(insts, names, nameset, joined)
        return HloModule(name, module_attrs, self.computations, frames, source=self.source,
                         id=id)

    def _table(self, kind: str, pos: int, frames: StackFrameIndex) -> int:
        """One of the FileNames / FunctionNames / FileLocations / StackFrames tables."""
        text = self.text
        strings = kind in ("FileNames", "FunctionNames")
        fast = _TABLE_FAST[kind]
        while True:
            # entries in XLA's own spelling, many at a time
            m = None
            if strings:
                target = frames.file_names if kind == "FileNames" else frames.function_names
                for m in matches_back_to_back(fast, text, pos):
                    value = m.group(2)
                    target[int(m.group(1))] = value if "\\" not in value else A.unquote(
                        '"' + value + '"')
            elif kind == "FileLocations":
                locs = frames.file_locations
                for m in matches_back_to_back(fast, text, pos):
                    k, f, fn, ln, eln, col, ecol = map(int, m.groups())
                    locs[k] = FileLocation(f, fn, ln, eln, col, ecol)
            else:
                frs = frames.stack_frames
                for m in matches_back_to_back(fast, text, pos):
                    k, loc, parent = map(int, m.groups())
                    frs[k] = StackFrame(loc, parent)
            if m is not None:
                pos = m.end()
            # anything else, one entry
            p = self.ws(pos)
            if p >= self.n or not text[p].isdigit():
                return p
            m = (_TABLE_STRING if strings else _TABLE_BRACED).match(text, p)
            if not m:
                what = '<id> "<text>"' if strings else "<id> {key=value ...}"
                raise self.error_at(f"expected a {kind} entry: {what}", p)
            key = int(m.group(1))
            if kind == "FileNames":
                frames.file_names[key] = A.unquote(m.group(2))
            elif kind == "FunctionNames":
                frames.function_names[key] = A.unquote(m.group(2))
            else:
                try:
                    kv = {k: int(v) for k, v in A.key_values(m.group(2))}
                    if kind == "FileLocations":
                        frames.file_locations[key] = FileLocation(
                            kv["file_name_id"], kv["function_name_id"], kv["line"],
                            kv.get("end_line", 0), kv.get("column", 0), kv.get("end_column", 0))
                    else:
                        frames.stack_frames[key] = StackFrame(
                            kv["file_location_id"], kv.get("parent_frame_id", 0))
                except (ValueError, KeyError) as e:
                    raise self.error_at(f"bad {kind} entry: {e}", p) from None
            pos = m.end()

    # ------------------------------------------------------------------ computations
    def _computations(self, pos: int, frames: StackFrameIndex) -> None:
        """Every computation from ``pos`` to the end of the text.

        One scanner walks the lines while they have the usual one-line forms (instruction,
        computation header, closing brace, blank line); anything else is read by the
        careful reader, after which the scanner resumes."""
        text = self.text
        n = self.n
        seen: dict[str, int] = {}
        cached = cached_shape
        kinds = _FAST_KIND
        calls_of = _CALLS_OF
        source = self.source
        by_written = self.by_written
        scope: Scope | None = None
        names: dict[str, HloInstruction] = {}
        insts: list[HloInstruction] = []
        has_name = names.__contains__
        ops: tuple[str, ...]
        while True:
            # ---------------------------------------------------------- fast run
            pos = self.ws(pos)
            line = self.line_of(pos)
            bail = -1
            m = None
            last_inst = None   # the match of the last instruction read in this run
            for m in matches_back_to_back(_LINE, text, pos):
                li = m.lastindex
                if li is not None and li <= 6:
                    # an instruction
                    root, name, st, op, args, tail = m.group(1, 2, 3, 4, 5, 6)
                    kind = kinds.get(op)
                    if kind is None or scope is None or name in names:
                        bail = m.start()
                        break
                    shape = cached(st)
                    if shape is None:
                        try:
                            shape = shape_from_text(st)
                        except ShapeSyntaxError:
                            bail = m.start()
                            break
                    if kind:
                        ops = ()
                        if op == "constant" and "E(" in st:
                            shape = without_element_size(shape)
                    elif not args:
                        ops = ()
                    else:
                        if "/" in args:
                            args_c = _INLINE_COMMENT.sub("", args)
                        else:
                            args_c = args
                        if "[" in args_c or "(" in args_c:
                            typed = self._fast_typed(args_c, names)
                            if typed is None:
                                bail = m.start()
                                break
                            ops = typed
                        else:
                            ops = tuple(args_c.replace("%", "").split(", "))
                            if not all(map(has_name, ops)):
                                bail = m.start()
                                break
                    called: tuple[str, ...] = ()
                    if tail is None:
                        tail = ""
                    else:
                        if tail.count("{") != tail.count("}"):
                            bail = m.start()
                            break
                        words = calls_of.get(op)
                        if words is not None:
                            callees = self._fast_called(tail, words, by_written)
                            if callees is None:
                                bail = m.start()
                                break
                            called = callees
                    inst = HloInstruction(name, op, shape, ops, root is not None, line, args,
                                          tail, called, source)
                    if root is not None:
                        if scope.root is not None:
                            bail = m.start()
                            break
                        scope.root = inst
                    names[name] = inst
                    insts.append(inst)
                    last_inst = m
                elif li == 7:
                    # '}' closing a computation
                    if scope is None or not insts:
                        bail = m.start()
                        break
                    self._finish(scope, "")
                    scope = None
                    last_inst = None
                elif li is None:
                    pass   # a blank line
                else:
                    # a computation header '[ENTRY] %name [(params) -> shape] {'
                    cname = m.group(9)
                    if scope is not None or cname in seen:
                        bail = m.start()
                        break
                    signature = m.group(10)
                    if signature:
                        st = m.group(11)
                        if cached(st) is None:
                            try:
                                shape_from_text(st)
                            except ShapeSyntaxError:
                                bail = m.start()
                                break
                    scope = Scope(cname, line, m.group(8) is not None, signature or "")
                    seen[cname] = line
                    names = scope.names
                    insts = scope.insts
                    has_name = names.__contains__
                line += 1
            else:
                if m is not None:
                    pos = m.end()
                    self.mark_line(pos, line)
                    if last_inst is not None and scope is not None and insts:
                        scope.last_fast = (last_inst.start(), insts[-1])
            if bail >= 0:
                pos = bail
                self.mark_line(pos, line)
                if scope is not None:
                    scope.last_fast = None
            # ---------------------------------------------------------- careful step
            pos = self.ws(pos)
            if scope is None:
                if pos >= n:
                    return
                tm = _TABLE.match(text, pos)
                if tm:
                    pos = self._table(tm.group(1), tm.end(), frames)
                    continue
                is_entry, cname, cline, signature, pos = self.computation_head(pos, seen)
                scope = Scope(cname, cline, is_entry, signature)
                seen[cname] = cline
                names = scope.names
                insts = scope.insts
                has_name = names.__contains__
                pos += 1
                continue
            if pos >= n:
                raise self.error_at(f"unexpected end of file: computation '{scope.name}' (line "
                                    f"{scope.line}) is not closed; expected '}}'", n)
            if text[pos] == "}":
                if not insts:
                    raise self.error_at(f"computation '{scope.name}' has no instructions", pos)
                pos, thread = self.execution_thread(pos + 1)
                self._finish(scope, thread)
                scope = None
                continue
            last = scope.last_fast
            scope.last_fast = None
            if last is not None and insts and last[1] is insts[-1] and \
                    not STATEMENT_START.match(text, pos):
                # the line before goes on here: read it again, carefully
                start, prev = last
                insts.pop()
                del names[prev.name]
                if scope.root is prev:
                    scope.root = None
                pos = self.ws(start)
            pos = self.statement(pos, scope)

    def _finish(self, scope: Scope, execution_thread: str) -> None:
        comp = HloComputation(scope.name, scope.insts, scope.is_entry, scope.line,
                              scope.signature, execution_thread)
        self.by_written[scope.name] = comp
        self.add_computation(comp)

    def _fast_typed(self, args: str, names: dict[str, HloInstruction]) -> tuple[str, ...] | None:
        """Operand names of 'f32[2]{0} %a, (f32[], s32[]) %b', or None to read it carefully."""
        if not _TYPED_OPERANDS.fullmatch(args):
            return None
        out = []
        for st, nm in _TYPED_OPERAND.findall(args):
            inst = names.get(nm)
            if inst is None:
                return None
            if st != inst.shape.text:
                try:
                    declared = shape_from_text(st)
                except ShapeSyntaxError:
                    return None
                if not compatible(declared, inst.shape):
                    return None
            out.append(nm)
        return tuple(out)

    @staticmethod
    def _fast_called(tail: str, words: tuple[str, ...],
                     by_written: dict[str, HloComputation]) -> tuple[str, ...] | None:
        """Computations named by 'calls=%c', 'to_apply=%c', 'branch_computations={%a, %b}'...
        in a one-line tail, or None to read the instruction carefully."""
        if len(words) == 1:
            # the usual case: one attribute naming one computation ('calls=%fused')
            word = words[0]
            p = tail.find(word)
            if p < 0:
                return ()
            q = p - 1
            while tail[q] == " ":
                q -= 1
            if tail[q] == "," and tail.find(word, p + 1) < 0:
                vm = _CALL_VALUE.match(tail, p + len(word))
                if vm is not None:
                    value = vm.group(1)
                    if value[0] != "{":
                        comp = by_written.get(value[1:] if value[0] == "%" else value)
                        return None if comp is None else (comp.name,)
        found: list[tuple[int, str]] = []
        for word in words:
            p = tail.find(word)
            while p >= 0:
                if tail[p - 1] not in _NAME_CHARS:
                    before = tail[:p].rstrip()
                    if not before.endswith(","):
                        return None   # inside a string or a comment: read it carefully
                    vm = _CALL_VALUE.match(tail, p + len(word))
                    if vm is None:
                        return None
                    found.append((p, vm.group(1)))
                p = tail.find(word, p + 1)
        if not found:
            return ()
        if len(found) > 1:
            found.sort()
        out: list[str] = []
        for _, value in found:
            if value[0] == "{":
                if "=" in value:
                    return None
                body = value[1:-1].strip()
                written = [x.strip().lstrip("%") for x in body.split(",")] if body else []
            else:
                written = [value.lstrip("%")]
            for w in written:
                comp = by_written.get(w)
                if comp is None:
                    return None
                out.append(comp.name)
        return tuple(dict.fromkeys(out)) if len(out) > 1 else tuple(out)

    # ------------------------------------------------------------------ names
    def _check_names(self, nameset: set[str], joined: str) -> None:
        """Instruction names XLA refuses: keywords (without '%'), reserved prefixes and
        type names (its NameUniquer would change them)."""
        if nameset.isdisjoint(KEYWORDS) and nameset.isdisjoint(RESERVED_NAMES) and \
                not joined.startswith("__") and "\n__" not in joined:
            return
        for comp in self.computations:
            if comp.synthetic:
                continue
            for inst in comp.instructions:
                name = inst.name
                if name in KEYWORDS:
                    at = self._name_offset(inst)
                    if at >= 0 and not self.text.startswith("%", at - 1):
                        raise self.error_at(f"expected an instruction name, got the keyword "
                                            f"'{name}' (write %{name})", at)
                if sanitize_name(name) != name:
                    raise self.error_at(
                        f"illegal instruction name '{name}'; XLA would rename it to "
                        f"'{sanitize_name(name)}' (names starting with '__' and type names are "
                        "reserved)", max(self._name_offset(inst), 0))

    def _name_offset(self, inst: HloInstruction) -> int:
        text = self.text
        start = 0
        for _ in range(inst.line - 1):
            start = text.index("\n", start) + 1
        m = re.compile(rf"(?<![\w.\-]){re.escape(inst.name)}(?![\w.\-])").search(text, start)
        return m.start() if m else start

    def _uniquify(self, insts: list[HloInstruction], names: list[str], nameset: set[str],
                  joined: str) -> None:
        """Rename instructions as XLA's module does (same NameUniquer, same order).

        Only names that share a stem with another name can change; those are replayed
        through NameUniquer (stems are independent of each other)."""
        if len(nameset) == len(names) and _NONCANONICAL.search(joined) is None:
            if nameset.isdisjoint(_zero_suffixed_stems(joined)):
                return
        stems = _SUFFIX.sub("", joined).split("\n")
        counts: dict[str, int] = {}
        for st in stems:
            counts[st] = counts.get(st, 0) + 1
        shared = {st for st, c in counts.items() if c > 1}
        # a non-canonical suffix ('x.01') is rewritten even without a clash
        shared.update(_SUFFIX.sub("", n) for n in _NONCANONICAL_NAME.findall(joined))
        renamed: dict[int, HloComputation] = {}
        uniquer = NameUniquer()
        for inst, st in zip(insts, stems):
            if st in shared:
                new = uniquer.unique(inst.name)
                if new != inst.name:
                    inst.written_name = inst.name
                    inst.name = new
                    owner = inst.computation
                    if owner is not None:
                        renamed[id(owner)] = owner
        for comp in renamed.values():
            renames = {i.written_name: i.name for i in comp.instructions
                       if i.written_name != i.name}
            for inst in comp.instructions:
                ops = inst.operand_names
                for op in ops:
                    if op in renames:
                        inst.operand_names = tuple(renames.get(o, o) for o in ops)
                        break




def _zero_suffixed_stems(joined: str) -> list[str]:
    """'x' for every name 'x.0' in a newline-joined list of names."""
    out = []
    text = joined + "\n"
    p = text.find(".0\n")
    while p >= 0:
        out.append(text[text.rfind("\n", 0, p) + 1:p])
        p = text.find(".0\n", p + 3)
    return out


_NONCANONICAL_NAME = re.compile(r"^[^\n]*?\.(?:0\d+|[+-]\d+)$", re.M)
_NONCANONICAL = re.compile(r"\.(?:0\d+|[+-]\d+)$", re.M)
_SUFFIX = re.compile(r"\.[+-]?\d{1,18}$", re.M)


