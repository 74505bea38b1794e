"""HLO text -> HloModule, accepting what XLA's own parser accepts.

One compiled regex reads a whole instruction line in the common case (XLA writes one
instruction a line); anything it does not cover (multi-line attributes, typed tuple
operands, complex literals, deep tuples) and every error goes through the general
statement reader, which knows the exact column of what went wrong.
"""

from __future__ import annotations

import re

from . import attributes as A
from .errors import HloParseError
from .hlo import (FileLocation, HloComputation, HloInstruction, HloModule, StackFrame,
                  StackFrameIndex)
from .hlo_names import NAME_PATTERN, NON_OPERAND_ARGS, OPCODES, NameUniquer, async_wrapped
from .shapes import ShapeSyntaxError, _shape_cache, shape_from_text

_NAME = NAME_PATTERN
# Fast path: '[ROOT ]%name = SHAPE opcode(args)tail' on one line.
_SHAPE_FAST = (r"[a-z][a-z0-9]*\[[^\]]*+\](?:\{[^{}]*+\})?"
               r"|\((?:[^()]++|\((?:[^()]++|\((?:[^()]++|\([^()]*+\))*+\))*+\))*+\)")
_INSTR = re.compile(
    rf"[ \t]*(ROOT[ \t]+)?%?({_NAME})[ \t]*=[ \t]*({_SHAPE_FAST})[ \t]+"
    rf"([a-z][\w\-]*)\(([^()]*+)\)(.*)")
_OPERANDS_FAST = re.compile(rf"[ \t]*%?(?:{_NAME})[ \t]*(?:,[ \t]*%?(?:{_NAME})[ \t]*)*+")
_STR = r'"(?:[^"\\]|\\.)*+"'
_BRACED2 = rf'\{{(?:[^{{}}"]++|{_STR}|\{{(?:[^{{}}"]++|{_STR}|\{{(?:[^{{}}"]++|{_STR})*+\}})*+\}})*+\}}'
_BARE = r'(?:[^,{}"\s()\[\]/]++|\[[^\[\]]*+\])++'
_TAIL_FAST = re.compile(
    rf"(?:[ \t]*,[ \t]*[A-Za-z_][\w.\-]*=(?:{_STR}|{_BRACED2}|{_BARE}))*+[ \t]*")
_CALLED = re.compile(
    r"(?<![\w.\-])(calls|to_apply|body|condition|branch_computations|true_computation"
    r"|false_computation|called_computations)=(%?[\w.\-]+|\{[^{}]*\})")
_CALL_HINT = re.compile(r"calls=|to_apply=|body=|condition=|_computation")

# General path pieces.
_HEAD = re.compile(rf"\s*(ROOT\s+)?%?({_NAME})\s*=\s*")
_ARRAY_HEAD = re.compile(r"[a-z][a-z0-9]*\[[^\]\n]*\]")
_OPCODE = re.compile(r"\s*([a-z][\w\-]*)\s*\(")
_COMP_HEAD = re.compile(rf"[ \t]*(ENTRY[ \t]+)?%?({_NAME})[ \t]*(.*?)[ \t]*\{{[ \t]*(?://.*)?")
_COMP_CLOSE = re.compile(r'[ \t]*\}[ \t]*(?:,[ \t]*execution_thread[ \t]*=[ \t]*("(?:[^"\\]|\\.)*")[ \t]*)?(?://.*)?')
_SIGNATURE = re.compile(r"\(.*\)\s*->\s*\S.*", re.S)
_MODULE = re.compile(rf"\s*HloModule\s+%?({_NAME})")
_TABLE_NAMES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_TABLE_STRING = re.compile(r'\s*(\d+)\s+("(?:[^"\\]|\\.)*")\s*')
_TABLE_BRACED = re.compile(r"\s*(\d+)\s+(\{[^{}]*\})\s*")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def parse_hlo(text: str, source: str | None = None, *, id: str | None = None) -> HloModule:
    """Parse one HLO module from its text; raises HloParseError naming file:line:col."""
    if not isinstance(text, str):
        raise TypeError("parse_hlo takes text; use parse_hlo_bytes for bytes")
    return _Parser(text, source).parse(id)


def parse_hlo_bytes(data: bytes, source: str | None = None, *, id: str | None = None) -> HloModule:
    """Parse HLO text given as bytes: binary data and bad UTF-8 become HloParseError."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise HloParseError(f"binary data (NUL byte at offset {nul}); expected HLO text",
                            source=source, line=line)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise HloParseError(
            f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
            "expected HLO text", source=source, line=line, column=col) from None
    return parse_hlo(text, source, id=id)


class _Parser:
    def __init__(self, text: str, source: str | None) -> None:
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.text = text
        self.source = source
        self.lines = text.split("\n")

    # ------------------------------------------------------------------ errors
    def error(self, message: str, line: int, column: int = 0) -> HloParseError:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return HloParseError(message, source=self.source, line=line, column=column, text=text)

    def error_at(self, message: str, start_line: int, stmt: str, offset: int) -> HloParseError:
        """Error at character ``offset`` of a statement that starts on ``start_line``."""
        line = start_line + stmt.count("\n", 0, offset)
        col = offset - (stmt.rfind("\n", 0, offset) + 1) + 1
        return self.error(message, line, col)

    # ------------------------------------------------------------------ top level
    def parse(self, id: str | None) -> HloModule:
        lines = self.lines
        n = len(lines)
        if "\0" in self.text:
            nul = self.text.index("\0")
            raise self.error(f"binary data (NUL character at offset {nul}); expected HLO text",
                             self.text.count("\n", 0, nul) + 1)
        i = self._skip_blank(0)
        if i >= n:
            raise HloParseError("empty file: expected 'HloModule <name>'", source=self.source)
        m = _MODULE.match(lines[i])
        if not m:
            raise self.error("expected 'HloModule <name>' at the start of an HLO module", i + 1,
                             len(lines[i]) - len(lines[i].lstrip()) + 1)
        name = m.group(1)
        header, i = self._statement(i, m.end(), continuation=False)
        try:
            module_attrs = A.split_attributes(header)
        except A.AttributeSyntaxError as e:
            raise self.error_at(e.message, i + 1 - header.count("\n") - 1,
                                lines[i - header.count("\n") - 1][:m.end()] + header,
                                m.end() + e.offset) from None
        frames = StackFrameIndex()
        computations: list[HloComputation] = []
        seen: dict[str, int] = {}
        while True:
            i = self._skip_blank(i)
            if i >= n:
                break
            line = lines[i]
            word = line.strip()
            if word in _TABLE_NAMES:
                i = self._table(word, i + 1, frames)
                continue
            comp, i = self._computation(i, seen)
            if comp.name in seen:
                raise self.error(f"computation '{comp.name}' is defined twice "
                                 f"(first on line {seen[comp.name]})", comp.line)
            seen[comp.name] = comp.line
            computations.append(comp)
        if not computations:
            raise HloParseError("module has no computations; expected 'ENTRY %name ... {'",
                                source=self.source, line=n)
        entries = [c for c in computations if c.is_entry]
        if len(entries) > 1:
            raise self.error("more than one ENTRY computation", entries[1].line)
        _uniquify(computations)
        return HloModule(name, module_attrs, computations, frames, source=self.source, id=id)

    def _skip_blank(self, i: int) -> int:
        lines = self.lines
        n = len(lines)
        while i < n:
            s = lines[i].strip()
            if not s or s.startswith("//"):
                i += 1
            elif s.startswith("/*"):
                # a block comment, possibly over several lines
                j = i
                rest = "\n".join(lines[i:i + 200]) if "*/" not in s else s
                end = rest.find("*/")
                if end < 0:
                    raise self.error("unterminated /* comment", i + 1)
                j = i + rest.count("\n", 0, end)
                after = lines[j][lines[j].find("*/") + 2:].strip()
                if after:
                    lines[j] = " " * (len(lines[j]) - len(after)) + after
                    return j
                i = j + 1
            else:
                break
        return i

    def _statement(self, i: int, start: int, continuation: bool = True) -> tuple[str, int]:
        """Text from column ``start`` of line ``i`` to the end of its statement.

        A statement goes on over the next lines while a bracket is open or while
        the next line continues it (starts with ',' or an attribute).
        """
        lines = self.lines
        n = len(lines)
        text = lines[i][start:]
        j = i + 1
        while True:
            try:
                A.scan_value(text, 0, stop_at_comma=False)
                open_bracket = False
            except A.AttributeSyntaxError as e:
                open_bracket = e.message.startswith("expected '") and "to close" in e.message \
                    or e.message.startswith("unterminated string")
            if j < n and (open_bracket or text.rstrip().endswith(",")
                          or (continuation and _continues(lines[j]))):
                text += "\n" + lines[j]
                j += 1
                continue
            return text, j

    def _table(self, kind: str, i: int, frames: StackFrameIndex) -> int:
        lines = self.lines
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                return i
            if kind in ("FileNames", "FunctionNames"):
                m = _TABLE_STRING.fullmatch(line)
                if not m:
                    if line.strip() in _TABLE_NAMES:
                        return i
                    raise self.error(f'expected a {kind} entry: <id> "<text>"', i + 1, 1)
                target = frames.file_names if kind == "FileNames" else frames.function_names
                target[int(m.group(1))] = A.unquote(m.group(2))
            else:
                m = _TABLE_BRACED.fullmatch(line)
                if not m:
                    if line.strip() in _TABLE_NAMES:
                        return i
                    raise self.error(f"expected a {kind} entry: <id> {{key=value ...}}", i + 1, 1)
                try:
                    kv = {k: int(v) for k, v in A.key_values(m.group(2))}
                    if kind == "FileLocations":
                        frames.file_locations[int(m.group(1))] = FileLocation(
                            kv["file_name_id"], kv["function_name_id"], kv["line"],
                            kv.get("end_line", 0), kv.get("column", 0), kv.get("end_column", 0))
                    else:
                        frames.stack_frames[int(m.group(1))] = StackFrame(
                            kv["file_location_id"], kv.get("parent_frame_id", 0))
                except (ValueError, KeyError) as e:
                    raise self.error(f"bad {kind} entry: {e}", i + 1, 1) from None
            i += 1
        return i

    # ------------------------------------------------------------------ computations
    def _computation(self, i: int, defined: dict[str, int]) -> tuple[HloComputation, int]:
        lines = self.lines
        n = len(lines)
        line = lines[i]
        m = _COMP_HEAD.fullmatch(line)
        if not m and "{" not in line and not _INSTR.match(line):
            # a signature over several lines, or '{' on a line of its own
            j = i + 1
            while j < n and j < i + 50 and "{" not in lines[j - 1]:
                j += 1
            joined = " ".join(x.strip() for x in lines[i:j])
            m = _COMP_HEAD.fullmatch(joined)
            if m:
                i = j - 1
        if not m:
            if _INSTR.match(line) or _HEAD.match(line):
                raise self.error("instruction outside a computation; expected "
                                 "'%name (params) -> shape {' or 'ENTRY %name {' first", i + 1, 1)
            raise self.error("expected a computation: '[ENTRY] %name [(params) -> shape] {'",
                             i + 1, len(line) - len(line.lstrip()) + 1)
        is_entry = bool(m.group(1))
        name = m.group(2)
        signature = m.group(3)
        if signature and not _SIGNATURE.fullmatch(signature):
            raise self.error("expected a computation signature '(params) -> shape' before '{'",
                             i + 1, m.start(3) + 1)
        start_line = i + 1
        i += 1
        instructions: list[HloInstruction] = []
        names: dict[str, int] = {}
        source = self.source
        cache = _shape_cache
        instr_match = _INSTR.match
        tail_ok = _TAIL_FAST.fullmatch
        ops_ok = _OPERANDS_FAST.fullmatch
        called_re = _CALLED.findall
        hint = _CALL_HINT.search
        roots = 0
        execution_thread = ""
        while True:
            if i >= n:
                raise self.error(f"unexpected end of file: computation '{name}' (line "
                                 f"{start_line}) is not closed; expected '}}'", n)
            line = lines[i]
            mi = instr_match(line)
            if mi is not None:
                tail = mi.group(6)
                nxt = lines[i + 1] if i + 1 < n else ""
                if (("{" in tail or "(" in tail)
                        and (tail.count("{") != tail.count("}")
                             or tail.count("(") != tail.count(")"))) or _continues(nxt) \
                        or tail.endswith(","):
                    inst, i = self._general_instruction(i)
                else:
                    root, iname, shape_text, opcode, args, tail = mi.groups()
                    shape = cache.get(shape_text)
                    if shape is None:
                        shape = self._shape(shape_text, i, mi.start(3))
                    if opcode not in OPCODES:
                        opcode = self._opcode(opcode, i, mi.start(4))
                    if opcode in NON_OPERAND_ARGS:
                        operands: tuple[str, ...] = ()
                    elif not args or args.isspace():
                        operands = ()
                    elif ops_ok(args):
                        operands = tuple(p.strip().lstrip("%") for p in args.split(","))
                    else:
                        operands = self._operands(args, i + 1, line, mi.start(5))
                    called: tuple[str, ...] = ()
                    if tail:
                        if not tail_ok(tail):
                            try:
                                A.split_attributes(tail)
                            except A.AttributeSyntaxError as e:
                                raise self.error(e.message, i + 1, mi.start(6) + e.offset + 1) \
                                    from None
                        if hint(tail):
                            called = self._called(tail, i + 1)
                    inst = HloInstruction(iname, opcode, shape, operands, root is not None,
                                          i + 1, args, tail, called, source)
                    i += 1
                if inst.name in names or inst.called_names or inst.is_root \
                        or inst.name.startswith("__"):
                    roots += self._check(inst, name, names, defined, roots)
                for op in inst.operand_names:
                    if op not in names:
                        raise self._undefined_operand(inst, op, name)
                names[inst.name] = inst.line
                instructions.append(inst)
                continue
            s = line.strip()
            if not s or s.startswith("//"):
                i += 1
                continue
            if s[0] == "}":
                mc = _COMP_CLOSE.fullmatch(line)
                if not mc:
                    raise self.error("unexpected text after '}' closing computation "
                                     f"'{name}'", i + 1, line.index("}") + 2)
                if mc.group(1):
                    execution_thread = A.unquote(mc.group(1))
                i += 1
                break
            if s.startswith("/*"):
                i = self._skip_blank(i)
                continue
            inst, i = self._general_instruction(i)
            roots += self._check(inst, name, names, defined, roots)
            for op in inst.operand_names:
                if op not in names:
                    raise self._undefined_operand(inst, op, name)
            names[inst.name] = inst.line
            instructions.append(inst)
        if not instructions:
            raise self.error(f"computation '{name}' has no instructions", start_line)
        if name.startswith("__") and not name.startswith("__xla_"):
            name = "a" + name[1:]   # XLA's NameUniquer renames reserved names
        comp = HloComputation(name, instructions, is_entry, start_line,
                              signature or "", execution_thread)
        return comp, i

    def _check(self, inst: HloInstruction, comp: str, names: dict[str, int],
               defined: dict[str, int], roots: int) -> int:
        """Checks XLA makes as it reads an instruction; returns 1 for a ROOT."""
        if inst.name in names:
            raise self.error(f"instruction '{inst.name}' is defined twice in computation "
                             f"'{comp}' (first on line {names[inst.name]})", inst.line)
        if inst.name.startswith("__") and not inst.name.startswith("__xla_"):
            raise self.error(f"illegal instruction name '{inst.name}': names starting with "
                             "'__' are reserved", inst.line)
        for callee in inst.called_names:
            if callee not in defined:
                line = self.lines[inst.line - 1]
                raise self.error(f"'{inst.name}' calls computation '{callee}', which is not "
                                 "defined before this point (XLA needs callees first)",
                                 inst.line, _column_of(line, callee))
        if inst.is_root and roots:
            raise self.error(f"computation '{comp}' has more than one ROOT", inst.line)
        return 1 if inst.is_root else 0

    def _undefined_operand(self, inst: HloInstruction, op: str, comp: str) -> HloParseError:
        line = self.lines[inst.line - 1]
        return self.error(f"'{inst.name}' uses operand '{op}', which is not defined before it "
                          f"in computation '{comp}'", inst.line, _column_of(line, op))

    # ------------------------------------------------------------------ instructions
    def _shape(self, text: str, i: int, col: int):
        try:
            return shape_from_text(text)
        except ShapeSyntaxError as e:
            raise self.error(e.message, i + 1, col + e.offset + 1) from None

    def _opcode(self, opcode: str, i: int, col: int) -> str:
        if opcode in OPCODES:
            return opcode
        if async_wrapped(opcode):
            return opcode   # 'call-start': XLA's shorthand for an async wrapper, kept as written
        raise self.error(f"unknown opcode '{opcode}'", i + 1, col + 1)

    def _called(self, tail: str, line: int) -> tuple[str, ...]:
        out: list[str] = []
        for _key, value in _CALLED.findall(tail):
            try:
                out.extend(A.computation_list(value))
            except ValueError as e:
                raise self.error(str(e), line) from None
        return tuple(dict.fromkeys(out))

    def _operands(self, args: str, line: int, stmt: str, offset: int) -> tuple[str, ...]:
        """Operand names from '%a, %b', 'f32[2]{0} %a, (f32[], s32[]) %t', with comments."""
        names: list[str] = []
        n = len(args)
        pos = 0
        while pos < n:
            end = A.scan_value(args, pos)
            piece = args[pos:end]
            if "/*" in piece or "//" in piece:
                piece = A.strip_comments(piece)
            piece = piece.strip()
            if not piece:
                if end < n or names:
                    raise self.error_at("expected an operand name", line, stmt,
                                        offset + pos + 1 if stmt is not None else 0)
            else:
                m = re.search(rf"%?({_NAME})$", piece)
                if not m:
                    raise self.error_at(f"expected an operand name, got '{piece[:40]}'", line,
                                        stmt, offset + pos + (len(args[pos:end]) - len(args[pos:end].lstrip())))
                prefix = piece[:m.start()].strip()
                if prefix:
                    try:
                        shape_from_text(prefix)
                    except ShapeSyntaxError as e:
                        raise self.error_at(f"bad operand shape: {e.message}", line, stmt,
                                            offset + pos + e.offset) from None
                names.append(m.group(1))
            pos = end + 1
        return tuple(names)

    def _general_instruction(self, i: int) -> tuple[HloInstruction, int]:
        """Read one instruction statement starting on line ``i`` (possibly several lines)."""
        stmt, j = self._statement(i, 0)
        line = i + 1
        m = _HEAD.match(stmt)
        if not m:
            col = len(stmt) - len(stmt.lstrip())
            raise self.error_at("expected an instruction '[ROOT] %name = shape opcode(operands)'",
                                line, stmt, col)
        pos = m.end()
        if pos >= len(stmt):
            raise self.error_at("expected a shape after '='", line, stmt, pos)
        if stmt[pos] == "(":
            try:
                end = A.scan_value(stmt, pos + 1, stop_at_comma=False)
            except A.AttributeSyntaxError as e:
                raise self.error_at(e.message, line, stmt, e.offset) from None
            if end >= len(stmt) or stmt[end] != ")":
                raise self.error_at("expected ')' to close the tuple shape", line, stmt, pos)
            end += 1
        else:
            ma = _ARRAY_HEAD.match(stmt, pos)
            if not ma:
                try:
                    shape_from_text(stmt[pos:pos + 60].split(" ")[0] or "?")
                except ShapeSyntaxError as e:
                    raise self.error_at(e.message, line, stmt, pos + e.offset) from None
                raise self.error_at("expected a shape such as f32[8,16]{1,0}", line, stmt, pos)
            end = ma.end()
            if end < len(stmt) and stmt[end] == "{":
                close = stmt.find("}", end)
                if close < 0:
                    raise self.error_at("expected '}' to close the layout", line, stmt, end)
                end = close + 1
        shape_text = stmt[pos:end]
        try:
            shape = shape_from_text(shape_text)
        except ShapeSyntaxError as e:
            raise self.error_at(e.message, line, stmt, pos + e.offset) from None
        mo = _OPCODE.match(stmt, end)
        if not mo:
            raise self.error_at("expected an opcode followed by '(' after the shape", line, stmt,
                                end + (len(stmt[end:]) - len(stmt[end:].lstrip())))
        opcode = mo.group(1)
        if opcode not in OPCODES and not async_wrapped(opcode):
            raise self.error_at(f"unknown opcode '{opcode}'", line, stmt, mo.start(1))
        args_start = mo.end()
        try:
            args_end = A.scan_value(stmt, args_start, stop_at_comma=False)
        except A.AttributeSyntaxError as e:
            raise self.error_at(e.message, line, stmt, e.offset) from None
        if args_end >= len(stmt) or stmt[args_end] != ")":
            raise self.error_at("expected ')' to close the operand list", line, stmt,
                                min(args_end, len(stmt)))
        args = stmt[args_start:args_end]
        tail = stmt[args_end + 1:]
        if opcode in NON_OPERAND_ARGS:
            operands: tuple[str, ...] = ()
        else:
            operands = self._operands(args, line, stmt, args_start)
        called: tuple[str, ...] = ()
        if tail.strip():
            try:
                attrs = A.split_attributes(tail)
            except A.AttributeSyntaxError as e:
                raise self.error_at(e.message, line, stmt, args_end + 1 + e.offset) from None
            names: list[str] = []
            for key in ("calls", "to_apply", "body", "condition", "branch_computations",
                        "true_computation", "false_computation", "called_computations"):
                if key in attrs:
                    try:
                        names.extend(A.computation_list(attrs[key]))
                    except ValueError as e:
                        raise self.error_at(f"bad '{key}': {e}", line, stmt,
                                            args_end + 1 + tail.find(key + "=")) from None
            called = tuple(dict.fromkeys(names))
            if "\n" in tail:
                tail = ", " + ", ".join(f"{k}={v}" for k, v in attrs.items())
        else:
            tail = ""
        if "\n" in args:
            args = " ".join(a.strip() for a in args.split("\n"))
        inst = HloInstruction(m.group(2), opcode, shape, operands, bool(m.group(1)), line,
                              args, tail, called, self.source)
        return inst, j


_STMT_START = re.compile(
    rf"\s*(?:$|//|/\*|\}}|ROOT\s|%?(?:{_NAME})\s*=\s*(?:[a-z][a-z0-9]*\[|\(|[a-z][\w\-]*\())")


def _continues(line: str) -> bool:
    """Does this line continue the statement before it (rather than start a new one)?"""
    return bool(line) and not _STMT_START.match(line)


def _column_of(line: str, name: str) -> int:
    m = re.search(rf"%?(?<![\w.\-]){re.escape(name)}(?![\w.\-])", line.split("=", 1)[-1])
    if not m:
        return 0
    return len(line.split("=", 1)[0]) + 1 + m.start() + 1


def _uniquify(computations: list[HloComputation]) -> None:
    """Rename instructions whose names repeat across computations, as XLA does."""
    uniquer = NameUniquer()
    for comp in computations:
        renames: dict[str, str] = {}
        for inst in comp.instructions:
            new = uniquer.unique(inst.name)
            if new != inst.name:
                renames[inst.name] = new
        if renames:
            for inst in comp.instructions:
                if inst.name in renames:
                    inst.written_name = inst.name
                    inst.name = renames[inst.name]
                if any(op in renames for op in inst.operand_names):
                    inst.operand_names = tuple(renames.get(op, op) for op in inst.operand_names)
