"""The careful reader of HLO text: one statement at a time, token by token.

It reads every statement the parser's fast path does not (several lines, comments,
nested instructions, inline computations, shapes left for XLA to infer, async syntax
sugar...) and reports every error with the exact line and column.  ``StatementReader``
holds the text and what the statements read so far have built (computations, names);
the parser (``parser.py``) drives it.
"""

from __future__ import annotations

import re

from . import attributes as A
from . import shape_inference as SI
from .errors import HloParseError
from .lexer import (
    KEYWORDS,
    NAME_TOKEN,
    STATEMENT_START,
    STRING,
    LexError,
    group_end,
    quick_group,
    skip,
    strip_comments,
)
from .model import HloComputation, HloInstruction
from .names import NAME_PATTERN, OPCODES, RESERVED_NAMES, NameUniquer, async_wrapped, sanitize_name
from .shapes import (
    Shape,
    ShapeSyntaxError,
    array_shape,
    can_be_shape,
    compatible,
    parse_shape_at,
    tuple_shape,
    without_element_size,
)

_NAME = NAME_PATTERN
_IDENT = re.compile(r"[A-Za-z_][\w.\-]*")
_ROOT_KW = re.compile(r"ROOT(?![\w.\-%])")
_ENTRY_KW = re.compile(r"ENTRY(?![\w.\-%])")
_ATTR_NAME = re.compile(r"([A-Za-z_][\w.\-]*)=")
_BARE = re.compile(r"[^\s,{}()\[\]\"/]+")
_STMT_LINE = re.compile(rf"\n[ \t]*(?:ROOT[ \t]|ENTRY[ \t]|%{_NAME}[ \t]*=|{_NAME}[ \t]+="
                        rf"|%?{_NAME}[ \t]*\([^\n]*\)[ \t]*->)")
_INT = re.compile(r"[+-]?\d+")

# attributes whose values XLA reads as a braced list of integers, an integer, a boolean:
# the careful reader checks them (the error then points at the value)
_INT_LIST_ATTRS = frozenset("""dimensions dynamic_slice_sizes lhs_contracting_dims
rhs_contracting_dims lhs_batch_dims rhs_batch_dims offset_dims
collapsed_slice_dims start_index_map update_window_dims inserted_window_dims
scatter_dims_to_operand_dims fft_length operand_batching_dims start_indices_batching_dims
input_batching_dims scatter_indices_batching_dims lhs_ragged_dims rhs_group_dims""".split())
_INT_ATTRS = frozenset("""index channel_id feature_group_count batch_group_count
iota_dimension index_vector_dim k delta exponent_bits mantissa_bits num_carries
inferred_dimension cross_program_prefetch_index""".split())
_BOOL_ATTRS = frozenset("""is_stable indices_are_sorted unique_indices constrain_layout
use_global_device_ids is_host_transfer custom_call_has_side_effect largest is_composite
is_reverse is_associative""".split())
_INT_LIST_RE = re.compile(r"\{\s*(?:[+-]?\d+\s*(?:,\s*[+-]?\d+\s*)*)?\}")
_SINGLE_COMPUTATION = frozenset({"calls", "to_apply", "body", "condition",
                                 "true_computation", "false_computation"})
_COMPUTATION_LISTS = frozenset({"branch_computations", "called_computations"})
_ASYNC = frozenset({"async-start", "async-update", "async-done"})
_MAX_DEPTH = 200
_TOKEN = array_shape("token", ())
_U32 = array_shape("u32", ())


class Scope:
    """The instructions of one computation while it is read."""

    __slots__ = ("name", "line", "is_entry", "signature", "insts", "names", "root",
                 "async_comp", "last_fast")

    def __init__(self, name: str, line: int, is_entry: bool, signature: str) -> None:
        self.name = name
        self.line = line
        self.is_entry = is_entry
        self.signature = signature
        self.insts: list[HloInstruction] = []
        self.names: dict[str, HloInstruction] = {}
        self.root: HloInstruction | None = None
        self.async_comp: dict[str, HloComputation] = {}
        self.last_fast: tuple[int, HloInstruction] | None = None


class StatementReader:
    """The text of one module and the careful reading of its statements."""

    def __init__(self, text: str, source: str | None) -> None:
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        # a file whose last line has no newline was cut short (a run killed while XLA
        # wrote it): what is wrong on that line is where the file ends
        self.cut_short = bool(text) and not text.endswith("\n")
        if self.cut_short:
            text += "\n"
        self.text = text
        self.n = len(text)
        self.source = source
        self.computations: list[HloComputation] = []
        self.by_written: dict[str, HloComputation] = {}   # file's names -> computation
        # computation names: kept as written until one could clash, then XLA's NameUniquer
        # (replaying the names given so far) takes over
        self.comp_names: set[str] = set()
        self.comp_order: list[str] = []
        self.comp_uniquer: NameUniquer | None = None
        self.anon_uniquer = NameUniquer()
        self.depth = 0
        # line bookkeeping: (offset, line) of the last place a line number was computed
        self._lpos = 0
        self._lno = 1

    # ------------------------------------------------------------------ positions, errors
    def mark_line(self, pos: int, line: int) -> None:
        """``pos`` is on line ``line`` (a reader that counted lines itself says so)."""
        self._lpos = pos
        self._lno = line

    def line_of(self, pos: int) -> int:
        if pos >= self._lpos:
            self._lno += self.text.count("\n", self._lpos, pos)
        else:
            self._lno -= self.text.count("\n", pos, self._lpos)
        self._lpos = pos
        return self._lno

    def error_at(self, message: str, pos: int) -> HloParseError:
        text = self.text
        pos = max(0, min(pos, self.n - 1))   # at the end: just after the last line's text
        line = text.count("\n", 0, pos) + 1
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        if end < 0:
            end = self.n
        if self.cut_short and end >= self.n - 1 and not message.startswith("unexpected end"):
            message = f"unexpected end of file (its last line is cut short): {message}"
        return HloParseError(message, source=self.source, line=line,
                             column=pos - start + 1, text=text[start:end])

    def ws(self, pos: int) -> int:
        end = skip(self.text, pos)
        if self.text.startswith("/*", end):
            raise self.error_at("unterminated /* comment", end)
        return end

    def expect(self, pos: int, char: str, what: str) -> int:
        if pos < self.n and self.text[pos] == char:
            return pos + 1
        if pos >= self.n - 1 and not self.text[pos:].strip():
            raise self.error_at(f"unexpected end of file: {what}", pos)
        raise self.error_at(what, pos)

    # ------------------------------------------------------------------ computations
    def execution_thread(self, pos: int) -> tuple[int, str]:
        """', execution_thread="..."' after a computation's '}' (if there)."""
        text = self.text
        p = self.ws(pos)
        if p >= self.n or text[p] != ",":
            return pos, ""
        thread = ""
        items, pos = self.attribute_list(pos, None, True)
        for key, value, at in items:
            if key != "execution_thread":
                raise self.error_at(f"unexpected attribute '{key}' after a computation; "
                                    "expected execution_thread", at)
            try:
                thread = A.string_value(value)
            except ValueError as e:
                raise self.error_at(f"bad execution_thread: {e}", at) from None
        return pos, thread

    def computation_head(self, pos: int, seen: dict[str, int]) -> tuple[bool, str, int, str, int]:
        """'[ENTRY] name [(params) -> shape] {' read carefully; returns is_entry, name, line,
        signature and the offset of '{'."""
        text = self.text
        start = pos
        em = _ENTRY_KW.match(text, pos)
        is_entry = em is not None
        if em:
            pos = self.ws(em.end())
        nm = NAME_TOKEN.match(text, pos)
        if not nm or text.startswith("=", nm.end()):
            if STATEMENT_START.match(text, pos):
                raise self.error_at("instruction outside a computation; expected "
                                    "'%name (params) -> shape {' or 'ENTRY %name {' first", pos)
            raise self.error_at("expected a computation: '[ENTRY] %name [(params) -> shape] {'",
                                pos)
        name = nm.group(2)
        line = self.line_of(start)
        pos = self.ws(nm.end())
        signature = ""
        if pos < self.n and text[pos] == "(":
            sig_start = pos
            pos = self.ws(self._balanced_end(pos))
            if not text.startswith("->", pos):
                raise self.error_at("expected '->' and the result shape after the parameters",
                                    pos)
            pos = self.ws(pos + 2)
            pos = self._shape(pos)[1]
            signature = text[sig_start:pos]
            if "\n" in signature:
                signature = re.sub(r"\s*\n\s*", " ", strip_comments(signature))
            pos = self.ws(pos)
        if pos >= self.n or text[pos] != "{":
            if STATEMENT_START.match(text, start) and not signature:
                raise self.error_at("instruction outside a computation; expected "
                                    "'%name (params) -> shape {' or 'ENTRY %name {' first",
                                    start)
            raise self.error_at(f"expected '{{' to open computation '{name}'"
                                if signature else
                                "expected a computation: '[ENTRY] %name [(params) -> shape] {'",
                                pos)
        if name in seen:
            raise self.error_at(f"computation '{name}' is defined twice "
                                f"(first on line {seen[name]})", start)
        return is_entry, name, line, signature, pos

    def add_computation(self, comp: HloComputation) -> None:
        name = comp.name
        final_names = self.comp_names
        uniquer = self.comp_uniquer
        if uniquer is None:
            if name not in final_names and _plain_name(name) and \
                    name not in RESERVED_NAMES and \
                    (name[:-2] if name.endswith(".0") else name + ".0") not in final_names:
                final_names.add(name)
                self.comp_order.append(name)
                self.computations.append(comp)
                return
            uniquer = self.comp_uniquer = NameUniquer()
            for given in self.comp_order:
                uniquer.unique(given)
        comp.name = uniquer.unique(name)
        final_names.add(comp.name)
        self.computations.append(comp)

    def _instruction_list(self, pos: int, comp_name: str,
                          comp_line: int) -> tuple[list[HloInstruction], int]:
        """Instructions of an inline computation, from just after '{' to the matching '}';
        returns them and the offset after the '}'."""
        text = self.text
        scope = Scope(comp_name, comp_line, False, "")
        while True:
            pos = self.ws(pos)
            if pos >= self.n:
                raise self.error_at(f"unexpected end of file: computation '{comp_name}' (line "
                                    f"{comp_line}) is not closed; expected '}}'", self.n)
            if text[pos] == "}":
                if not scope.insts:
                    raise self.error_at(f"computation '{comp_name}' has no instructions", pos)
                return scope.insts, pos + 1
            pos = self.statement(pos, scope)

    # ------------------------------------------------------------------ statements
    def statement(self, pos: int, scope: Scope) -> int:
        """Read one instruction '[ROOT] name = ...' at ``pos``; returns the offset after it."""
        text = self.text
        start = pos
        rm = _ROOT_KW.match(text, pos)
        is_root = rm is not None
        if rm:
            pos = self.ws(rm.end())
        nm = NAME_TOKEN.match(text, pos)
        if not nm:
            if pos >= self.n - 1:
                raise self.error_at("unexpected end of file: expected an instruction", pos)
            if text[pos] in ",)]" or _ATTR_NAME.match(text, pos):
                raise self.error_at("unexpected text; expected an instruction "
                                    "'[ROOT] %name = shape opcode(operands)' or '}'", pos)
            raise self.error_at("expected an instruction '[ROOT] %name = shape opcode(operands)'",
                                pos)
        name = nm.group(2)
        if not nm.group(1) and name in KEYWORDS:
            raise self.error_at(f"expected an instruction name, got the keyword '{name}' "
                                f"(write %{name})", nm.start())
        p = self.ws(nm.end())
        if p >= self.n or text[p] != "=":
            raise self.error_at(f"expected '=' after the instruction name '{name}'", p)
        line = self.line_of(start)
        inst, pos = self._rhs(self.ws(p + 1), name, nm.start(), is_root, line, scope, True)
        self._register(inst, scope, nm.start())
        return pos

    def _register(self, inst: HloInstruction, scope: Scope, at: int) -> None:
        name = inst.name
        if name in scope.names:
            raise self.error_at(f"instruction '{name}' is defined twice in computation "
                                f"'{scope.name}' (first on line {scope.names[name].line})", at)
        if sanitize_name(name) != name:
            raise self.error_at(f"illegal instruction name '{name}'; XLA would rename it to "
                                f"'{sanitize_name(name)}' (names starting with '__' and type "
                                "names are reserved)", at)
        if inst.is_root:
            if scope.root is not None:
                raise self.error_at(f"computation '{scope.name}' has more than one ROOT", at)
            scope.root = inst
        scope.names[name] = inst
        scope.insts.append(inst)

    def _shape(self, pos: int) -> tuple[Shape, int]:
        try:
            return parse_shape_at(self.text, pos)
        except ShapeSyntaxError as e:
            raise self.error_at(e.message, e.offset) from None

    def _rhs(self, pos: int, name: str, name_at: int, is_root: bool, line: int,
             scope: Scope, allow_attrs: bool) -> tuple[HloInstruction, int]:
        """Read 'shape opcode(operands), attrs' at ``pos``; ``name`` is '' for a nested
        instruction.  Returns the instruction (not yet registered) and the offset after it."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.error_at("instructions nested too deeply", pos)
        try:
            return self._rhs_inner(pos, name, name_at, is_root, line, scope, allow_attrs)
        finally:
            self.depth -= 1

    def _rhs_inner(self, pos: int, name: str, name_at: int, is_root: bool, line: int,
                   scope: Scope, allow_attrs: bool) -> tuple[HloInstruction, int]:
        text = self.text
        shape: Shape | None = None
        shape_at = pos
        if pos < self.n and can_be_shape(text, pos):
            shape, pos = self._shape(pos)
            pos = self.ws(pos)
        om = _IDENT.match(text, pos)
        if not om:
            if pos >= self.n - 1:
                raise self.error_at("unexpected end of file: expected a shape and an opcode", pos)
            if shape is None:
                raise self.error_at("expected a shape such as f32[8,16]{1,0} or an opcode",
                                    pos)
            raise self.error_at("expected an opcode followed by '(' after the shape", pos)
        op = om.group()
        op_at = om.start()
        wrapped = None
        if op not in OPCODES:
            wrapped = async_wrapped(op)
            if wrapped is None:
                if shape is None and text.startswith("[", om.end()):
                    raise self.error_at(f"unknown element type '{op}'", op_at)
                raise self.error_at(f"unknown opcode '{op}'", op_at)
        if shape is None and (wrapped is not None or op not in SI.INFERABLE):
            raise self.error_at(f"cannot infer shape for opcode: {op}; write the result "
                                "shape before it", op_at)
        pos = self.ws(om.end())
        if pos >= self.n or text[pos] != "(":
            raise self.error_at(f"expected '(' after the opcode '{op}'", pos)
        args_start = pos + 1
        if op in ("parameter", "constant"):
            pos = self._balanced_end(pos)
            ops: tuple[str, ...] = ()
            op_shapes: list[Shape] = []
            if op == "parameter" and not _INT.fullmatch(text[args_start:pos - 1].strip()):
                raise self.error_at("expected a parameter number", args_start)
        else:
            ops, op_shapes, pos = self._operands(args_start, scope, name or op)
        args = text[args_start:pos - 1]
        if "\n" in args:
            args = " ".join(a.strip() for a in args.split("\n"))
        attr_start = pos
        items, pos = self.attribute_list(pos, scope, allow_attrs)
        raw_tail = text[attr_start:pos]
        if not items:
            tail = ""
        elif "\n" in raw_tail or "//" in raw_tail or "/*" in raw_tail or any(
                at < 0 for _, _, at in items):
            tail = "".join(f", {k}={v}" for k, v, _ in items)
        else:
            tail = raw_tail
        attrs = {k: v for k, v, _ in items}
        called: list[str] = []
        for key, value, at in items:
            if at < 0 or key in _SINGLE_COMPUTATION or key in _COMPUTATION_LISTS or (
                    op == "select-and-scatter" and key in ("select", "scatter")):
                called.extend(self._computation_refs(key, value, at, name or op))
        called_t = tuple(dict.fromkeys(called))
        # ---- async ops
        if wrapped is not None or op in _ASYNC:
            assert shape is not None   # async ops have no inferred shape: refused above
            return self._async(name, op, wrapped, shape, ops, op_shapes, args, tail, attrs,
                               called_t, is_root, line, scope, op_at, pos)
        # ---- shapes XLA infers or derives
        if shape is None:
            try:
                shape = SI.infer_shape(op, op_shapes, attrs, called_t, self._root_shape)
            except SI.InferenceError as e:
                raise self.error_at(f"failed to infer shape for opcode: {op}, error: {e}",
                                    op_at) from None
        shape = self._derived_shape(op, shape, op_shapes, shape_at)
        if not name:
            name = self.anon_uniquer.unique(f"{op}.anon")
        inst = HloInstruction(name, op, shape, ops, is_root, line, args, tail, called_t,
                              self.source)
        return inst, pos

    def _derived_shape(self, op: str, shape: Shape, op_shapes: list[Shape], at: int) -> Shape:
        """The shape XLA's instruction factories give these opcodes, whatever is written."""
        if op == "constant":
            return without_element_size(shape)
        if op in ("after-all", "send-done", "outfeed"):
            return _TOKEN
        if op == "add-dependency" and op_shapes:
            return op_shapes[0]
        if op in ("recv", "infeed"):
            if not shape.is_tuple or not shape.tuple_shapes:
                raise self.error_at(f"{op} must have a non-empty tuple shape", at)
            data = shape.tuple_shapes[0]
            return tuple_shape((data, _U32, _TOKEN) if op == "recv" else (data, _TOKEN))
        if op == "recv-done" and op_shapes:
            src = op_shapes[0]
            if src.is_tuple and src.tuple_shapes:
                return tuple_shape((src.tuple_shapes[0], _TOKEN))
        if op == "send" and op_shapes:
            return tuple_shape((op_shapes[0], _U32, _TOKEN))
        return shape

    def _root_shape(self, comp_name: str) -> Shape:
        for comp in reversed(self.computations):
            if comp.name == comp_name:
                root = comp.root
                if root is None:
                    raise SI.InferenceError(f"computation {comp_name} is empty")
                return root.shape
        raise SI.InferenceError(f"no computation {comp_name}")

    def _async(self, name: str, op: str, wrapped: tuple[str, str] | None, shape: Shape,
               ops: tuple[str, ...], op_shapes: list[Shape], args: str, tail: str,
               attrs: dict[str, str], called: tuple[str, ...], is_root: bool, line: int,
               scope: Scope, op_at: int, pos: int) -> tuple[HloInstruction, int]:
        comp: HloComputation | None = None
        kind = wrapped[0] if wrapped else op
        if kind == "async-start":
            if not shape.is_tuple or len(shape.tuple_shapes) < 2 or \
                    not shape.tuple_shapes[0].is_tuple:
                raise self.error_at("AsyncStart expects the op shape to be in the form of "
                                    "((async-operands), async-outputs, state)", op_at)
            if wrapped:
                thread = attrs.get("async_execution_thread", "")
                try:
                    thread = A.string_value(thread) if thread else ""
                except ValueError:
                    thread = ""
                comp = self._async_wrapped(wrapped[1], shape.tuple_shapes[1], op_shapes, tail,
                                           called, line, thread)
                called = (comp.name,)
            else:
                if not called:
                    raise self.error_at("async-start needs calls=<computation>", op_at)
                comp = self._computation_named(called[0])
        else:
            if len(ops) != 1 or ops[0] not in scope.async_comp:
                raise self.error_at(f"{op} expects a single async op (a -start or -update) "
                                    "as its operand", op_at)
            comp = scope.async_comp[ops[0]]
            if called and called[0] != comp.name:
                raise self.error_at(f"expect async_wrapped_computation to be {comp.name}, "
                                    f"but got {called[0]}", op_at)
            if wrapped and comp.root is not None and \
                    comp.root.written_opcode != wrapped[1]:
                raise self.error_at(f"expect async wrapped opcode to be {comp.root.written_opcode},"
                                    f" but got {wrapped[1]}", op_at)
            called = (comp.name,)
        printed = op
        root = comp.root
        if root is not None and all(i is root or i.opcode == "parameter"
                                    for i in comp.instructions):
            printed = root.written_opcode + {"async-start": "-start", "async-update": "-update",
                                        "async-done": "-done"}[kind]
        else:
            printed = kind
        if not name:
            name = self.anon_uniquer.unique(f"{kind}.anon")
        inst = HloInstruction(name, printed, shape, ops, is_root, line, args, tail, called,
                              self.source)
        if printed != op:
            inst.written_opcode = op
        if kind != "async-done":
            scope.async_comp[name] = comp
        return inst, pos

    def _async_wrapped(self, opcode: str, shape: Shape, op_shapes: list[Shape], tail: str,
                       called: tuple[str, ...], line: int, thread: str) -> HloComputation:
        """The computation XLA builds for 'op-start(...)' sugar: parameters and the op."""
        insts = []
        params = []
        for i, s in enumerate(op_shapes):
            pname = "async_param" if i == 0 else f"async_param.{i}"
            params.append(pname)
            insts.append(HloInstruction(pname, "parameter", s, (), False, line, str(i), "",
                                        (), self.source))
        insts.append(HloInstruction(opcode, opcode, shape, tuple(params), True, line,
                                    ", ".join("%" + p for p in params), tail, called,
                                    self.source))
        comp = HloComputation("async_wrapped", insts, False, line, "", thread)
        comp.synthetic = True
        self.add_computation(comp)
        return comp

    def _computation_named(self, name: str) -> HloComputation:
        for comp in reversed(self.computations):
            if comp.name == name:
                return comp
        raise KeyError(name)

    def _computation_refs(self, key: str, value: str, at: int, who: str) -> list[str]:
        """Final names of the computations an attribute value names ('%a', '{%a, %b}')."""
        if at < 0:   # inline computations, already named
            return [x.strip() for x in value.strip("{}").split(",") if x.strip()]
        try:
            written = A.computation_list(value)
        except ValueError as e:
            raise self.error_at(f"bad '{key}': {e}", at) from None
        out = []
        for w in written:
            comp = self.by_written.get(w)
            if comp is None:
                raise self.error_at(f"'{who}' calls computation '{w}', which is not defined "
                                    "before this point (XLA needs callees first)",
                                    self.text.find(w, at))
            out.append(comp.name)
        return out

    def _operands(self, pos: int, scope: Scope,
                  who: str) -> tuple[tuple[str, ...], list[Shape], int]:
        """Operands after '(' up to and past ')': names, their shapes, end offset."""
        text = self.text
        names: list[str] = []
        shapes: list[Shape] = []
        p = self.ws(pos)
        if p < self.n and text[p] == ")":
            return (), shapes, p + 1
        while True:
            p = self.ws(p)
            if p >= self.n - 1:
                raise self.error_at("unexpected end of file: expected ')' to close the "
                                    "operand list", self.n)
            op_start = p
            declared: Shape | None = None
            q = p
            if can_be_shape(text, p):
                declared, q = self._shape(p)
                q = self.ws(q)
            nm = NAME_TOKEN.match(text, q)
            after = self.ws(nm.end()) if nm else q
            if nm and nm.group(1) == "" and text[after:after + 1] == "(":
                inst, p = self._rhs(op_start, "", op_start, False, self.line_of(op_start),
                                    scope, False)
                self._register(inst, scope, op_start)
                names.append(inst.name)
                shapes.append(inst.shape)
                p = self.ws(p)
            elif nm:
                oname = nm.group(2)
                operand = scope.names.get(oname)
                if operand is None:
                    raise self.error_at(f"'{who}' uses operand '{oname}', which is not defined "
                                        f"before it in computation '{scope.name}'", nm.start())
                if declared is not None and not compatible(declared, operand.shape):
                    raise self.error_at(f"the declared operand shape {declared} is not "
                                        f"compatible with the shape of '{oname}', "
                                        f"{operand.shape}", op_start)
                names.append(oname)
                shapes.append(operand.shape)
                p = after
            elif declared is not None and text[q:q + 1] in (",", ")"):
                p = q    # XLA drops an operand that is only a shape
            else:
                raise self.error_at("expected an operand: '[shape] %name' or a nested "
                                    "instruction", q)
            if p < self.n and text[p] == ",":
                p += 1
                continue
            if p < self.n and text[p] == ")":
                return tuple(names), shapes, p + 1
            if p >= self.n - 1:
                raise self.error_at("unexpected end of file: expected ')' to close the "
                                    "operand list", self.n)
            raise self.error_at("expected ',' or ')' after an operand", p)

    # ------------------------------------------------------------------ attributes
    def attribute_list(self, pos: int, scope: Scope | None,
                    allow: bool) -> tuple[list[tuple[str, str, int]], int]:
        """', key=value' pairs from ``pos``: [(key, value, offset)] (offset -1: an inline
        computation, value its name) and the offset after the last value."""
        text = self.text
        items: list[tuple[str, str, int]] = []
        seen: set[str] = set()
        while allow:
            p = self.ws(pos)
            if p >= self.n or text[p] != ",":
                break
            p = self.ws(p + 1)
            am = _ATTR_NAME.match(text, p)
            if not am:
                raise self.error_at("expected an attribute name=value after ','", p)
            key = am.group(1)
            if key in seen:
                raise self.error_at(f"attribute '{key}' is given twice", p)
            seen.add(key)
            v = self.ws(am.end())
            if v >= self.n - 1:
                raise self.error_at(f"unexpected end of file: expected a value for "
                                    f"attribute '{key}'", v)
            if scope is not None and text[v] == "{" and (
                    key in _SINGLE_COMPUTATION or key in _COMPUTATION_LISTS) and \
                    self._looks_inline(v):
                if key in _COMPUTATION_LISTS:
                    names, pos = self._inline_list(v, key)
                    items.append((key, "{" + ", ".join(names) + "}", -1))
                    continue
                comp, pos = self._inline_computation(v)
                items.append((key, comp.name, -1))
                continue
            value, pos = self._value(v, key)
            if key in _INT_LIST_ATTRS:
                if not _INT_LIST_RE.fullmatch(value):
                    raise self.error_at(f"expected a list of integers such as {{0,1}} for "
                                        f"'{key}'", v)
            elif key in _INT_ATTRS:
                if not _INT.fullmatch(value):
                    raise self.error_at(f"expected an integer for '{key}'", v)
            elif key in _BOOL_ATTRS and value not in ("true", "false"):
                raise self.error_at(f"expected true or false for '{key}'", v)
            items.append((key, value, p))
        return items, pos

    def _looks_inline(self, pos: int) -> bool:
        """Does the '{' at ``pos`` open instructions (an inline computation)?"""
        text = self.text
        p = self.ws(pos + 1)
        if text.startswith("{", p):
            return True
        return bool(STATEMENT_START.match(text, p)) and not text.startswith("}", p)

    def _inline_list(self, pos: int, key: str) -> tuple[list[str], int]:
        text = self.text
        names = []
        p = self.ws(pos + 1)
        while True:
            if text.startswith("{", p):
                comp, p = self._inline_computation(p)
                names.append(comp.name)
            else:
                nm = NAME_TOKEN.match(text, p)
                if not nm:
                    raise self.error_at(f"expected a computation in '{key}'", p)
                named = self.by_written.get(nm.group(2))
                if named is None:
                    raise self.error_at(f"computation '{nm.group(2)}' is not defined before "
                                        "this point (XLA needs callees first)", p)
                names.append(named.name)
                p = nm.end()
            p = self.ws(p)
            if text.startswith(",", p):
                p = self.ws(p + 1)
                continue
            return names, self.expect(p, "}", f"expected '}}' to close '{key}'")

    def _inline_computation(self, pos: int) -> tuple[HloComputation, int]:
        line = self.line_of(pos)
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.error_at("computations nested too deeply", pos)
        try:
            insts, end = self._instruction_list(pos + 1, "_", line)
        finally:
            self.depth -= 1
        comp = HloComputation("_", insts, False, line)
        self.add_computation(comp)
        return comp, end

    def _value(self, pos: int, key: str) -> tuple[str, int]:
        """One attribute value at ``pos``: everything up to a ',', a closing bracket or the
        end of the line outside brackets and strings.  Returns its text and end offset."""
        text = self.text
        start = pos
        end = pos
        n = self.n
        while pos < n:
            c = text[pos]
            if c in "{([":
                pos = self._balanced_end(pos, check_statements=(c == "{"))
                end = pos
            elif c == '"':
                sm = STRING.match(text, pos)
                if sm is None:
                    raise self.error_at("unterminated string", pos)
                pos = end = sm.end()
            elif c in ",)}]\n":
                break
            elif c == " " or c == "\t":
                pos += 1
            elif text.startswith("//", pos) or text.startswith("/*", pos):
                break
            else:
                bm = _BARE.match(text, pos)
                pos = end = bm.end() if bm else pos + 1
        if end == start:
            raise self.error_at(f"expected a value for attribute '{key}'", start)
        value = text[start:end]
        if "//" in value or "/*" in value:
            value = strip_comments(value)
        return value, end

    def _balanced_end(self, pos: int, check_statements: bool = False) -> int:
        """Offset after the bracket that closes the one at ``pos`` (strings and comments
        skipped).  With ``check_statements``, a '{' whose span holds the start of another
        instruction is reported as not closed (a value never spans statements)."""
        text = self.text
        gm = quick_group(text, pos)
        if gm is not None and not (check_statements and "\n" in gm.group()):
            return gm.end()
        failure: HloParseError | None = None
        try:
            p = group_end(text, pos, self._opener_line)
        except LexError as e:
            failure = self.error_at(e.message, e.offset)
            p = e.stop
        if check_statements and "\n" in text[pos:p] and \
                _STMT_LINE.search(STRING.sub('""', text[pos:p])) is not None:
            raise self.error_at("expected '}' to close this '{' (the next instruction "
                                "starts before it is closed)", pos)
        if failure is not None:
            raise failure
        return p

    def _opener_line(self, opener: str, at: int) -> str:
        return f"the '{opener}' on line {self.text.count(chr(10), 0, at) + 1}"


_PLAIN_CHARS = re.compile(r"(?!__(?!xla_))[A-Za-z_][A-Za-z0-9_.\-]*")


def _plain_name(name: str) -> bool:
    """Does NameUniquer keep ``name`` as it is while no other name has its stem and
    suffix?  (No character to replace, no '__' prefix, a canonical numeric suffix.)"""
    if _PLAIN_CHARS.fullmatch(name) is None:
        return False
    tail = name[name.rfind(".") + 1:] if "." in name[1:] else ""
    if not tail:
        return True
    if tail[0] == "-":
        return not tail[1:].isdigit()
    return not tail.isdigit() or tail[0] != "0" or tail == "0"
