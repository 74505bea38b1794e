"""The HLO model: module, computations, instructions, as XLA's text describes them.

Instructions keep their attribute text verbatim and decode the attributes the views
need (``calls``, ``metadata``, ``backend_config``, ``window``...) on first access, so
opening a 20k-instruction module costs one pass over its lines.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator, TypeVar

from . import attributes as A
from .errors import HloParseError
from .records import Metadata, SourceLocation, StackFrameIndex
from .shapes import Shape

T = TypeVar("T")

# Attributes that name computations, and whether they hold a list.
COMPUTATION_ATTRIBUTES = {
    "calls": True, "to_apply": False, "body": False, "condition": False,
    "branch_computations": True, "true_computation": False, "false_computation": False,
    "called_computations": True,
}


class HloInstruction:
    """One instruction: ``[ROOT ]%name = SHAPE opcode(operands), attr=value, ...``."""

    __slots__ = ("name", "opcode", "shape", "operand_names", "is_root", "line",
                 "computation", "_args", "_tail", "_attrs", "called_names", "source",
                 "written_name", "written_opcode", "_decoded")

    def __init__(self, name: str, opcode: str, shape: Shape, operand_names: tuple[str, ...],
                 is_root: bool, line: int, args: str, tail: str,
                 called_names: tuple[str, ...] = (), source: str | None = None) -> None:
        self.name = name
        self.opcode = opcode
        self.shape = shape
        self.operand_names = operand_names
        self.is_root = is_root
        self.line = line                # 1-based line of the instruction in its file
        self.computation: HloComputation | None = None
        self._args = args               # text inside the parentheses, verbatim
        self._tail = tail               # attribute text after them, verbatim
        self._attrs: dict[str, str] | None = None
        self.called_names = called_names
        self.source = source
        self.written_name = name        # the name in the file, if XLA's uniquing changed it
        self._decoded: dict | None = None
        self.written_opcode = opcode    # the opcode as written ('async-start' printed 'call-start')

    def __repr__(self) -> str:
        return f"<HloInstruction {self.name} = {self.shape} {self.opcode}>"

    # -- attributes, verbatim
    @property
    def attributes(self) -> dict[str, str]:
        """Every attribute as written (``{'dimensions': '{0,1}', ...}``), in order."""
        if self._attrs is None:
            try:
                self._attrs = A.split_attributes(self._tail)
            except A.AttributeSyntaxError as e:
                raise HloParseError(e.message, source=self.source, line=self.line,
                                    text=self.text) from None
        return self._attrs

    def attribute(self, key: str, default: str | None = None) -> str | None:
        return self.attributes.get(key, default)

    @property
    def args_text(self) -> str:
        """Text between the opcode's parentheses (operands, a literal or a parameter number)."""
        return self._args

    @property
    def attributes_text(self) -> str:
        return self._tail

    @property
    def text(self) -> str:
        """The instruction as one line of HLO text."""
        root = "ROOT " if self.is_root else ""
        return f"{root}%{self.name} = {self.shape} {self.opcode}({self._args}){self._tail}"

    def _decode(self, key: str, fn: Callable[[str], Any]) -> Any:
        """An attribute's value decoded by ``fn`` (once; values are shared, read-only)."""
        cache = self._decoded
        if cache is not None and key in cache:
            return cache[key]
        raw = self.attributes.get(key)
        value = None
        if raw is not None:
            try:
                value = fn(raw)
            except (ValueError, A.AttributeSyntaxError) as e:
                raise HloParseError(f"bad value for attribute '{key}': {e}", source=self.source,
                                    line=self.line, text=self.text) from None
        if cache is None:
            cache = self._decoded = {}
        cache[key] = value
        return value

    # -- decoded attributes the views need
    def _get(self, key: str) -> Any:
        """Attribute ``key`` decoded by its decoder in ``_DECODERS`` (one table for the
        properties and ``materialize``)."""
        return self._decode(key, _DECODERS[key])

    @property
    def called_computations(self) -> tuple[str, ...]:
        return self.called_names

    @property
    def calls(self) -> tuple[str, ...]:
        return self._get("calls") or ()

    @property
    def to_apply(self) -> str | None:
        return self._get("to_apply")

    @property
    def body(self) -> str | None:
        return self._get("body")

    @property
    def condition(self) -> str | None:
        return self._get("condition")

    @property
    def branch_computations(self) -> tuple[str, ...]:
        out = self._get("branch_computations")
        if out:
            return out
        t, f = self._get("true_computation"), \
            self._get("false_computation")
        return tuple(x for x in (t, f) if x)

    @property
    def fusion_kind(self) -> str | None:
        return self.attributes.get("kind")

    kind = fusion_kind

    @property
    def dimensions(self) -> tuple[int, ...] | None:
        return self._get("dimensions")

    @property
    def metadata(self) -> Metadata:
        return self._get("metadata") or _EMPTY_METADATA

    @property
    def op_name(self) -> str:
        return self.metadata.op_name

    @property
    def backend_config(self) -> Any:
        """``backend_config`` as JSON when it is JSON, else its string."""
        return self._get("backend_config")

    @property
    def custom_call_target(self) -> str | None:
        return self._get("custom_call_target")

    @property
    def window(self) -> A.Window | None:
        return self._get("window")

    @property
    def dim_labels(self) -> A.DimLabels | None:
        return self._get("dim_labels")

    @property
    def dot_dimension_numbers(self) -> A.DotDimensionNumbers:
        def dims(k: str) -> tuple[int, ...]:
            return self._get(k) or ()
        return A.DotDimensionNumbers(dims("lhs_contracting_dims"), dims("rhs_contracting_dims"),
                                     dims("lhs_batch_dims"), dims("rhs_batch_dims"))

    @property
    def replica_groups(self) -> A.ReplicaGroups | None:
        return self._get("replica_groups")

    @property
    def sharding(self) -> A.Sharding | None:
        return self._get("sharding")

    @property
    def control_predecessors(self) -> tuple[str, ...]:
        return self._get("control-predecessors") or ()

    @property
    def frontend_attributes(self) -> dict[str, str]:
        return self._get("frontend_attributes") or {}

    @property
    def parameter_number(self) -> int | None:
        if self.opcode != "parameter":
            return None
        try:
            return int(self._args.strip())
        except ValueError:
            raise HloParseError("expected a parameter number", source=self.source,
                                line=self.line, text=self.text) from None

    @property
    def literal(self) -> str | None:
        """A ``constant``'s literal text, verbatim (``0``, ``{...}``, ``-inf``)."""
        return self._args.strip() if self.opcode == "constant" else None

    @property
    def tuple_index(self) -> int | None:
        return self._get("index")

    @property
    def operands(self) -> list["HloInstruction"]:
        comp = self.computation
        if comp is None:
            return []
        by_name = comp.instruction_map
        return [by_name[n] for n in self.operand_names if n in by_name]

    @property
    def users(self) -> list["HloInstruction"]:
        comp = self.computation
        return comp.users_of(self.name) if comp is not None else []

    def materialize(self) -> None:
        """Decode every attribute the views read (raises HloParseError on a bad one)."""
        for key in self.attributes:
            fn = _DECODERS.get(key)
            if fn is not None:
                self._decode(key, fn)
        _ = self.parameter_number


_EMPTY_METADATA = Metadata()
_DECODERS: dict[str, Callable[[str], Any]] = {
    "calls": A.computation_list, "to_apply": A.computation_name, "body": A.computation_name,
    "condition": A.computation_name, "branch_computations": A.computation_list,
    "true_computation": A.computation_name, "false_computation": A.computation_name,
    "dimensions": A.int_list, "metadata": A.metadata, "backend_config": A.backend_config,
    "custom_call_target": A.string_value, "window": A.window, "dim_labels": A.dim_labels,
    "lhs_contracting_dims": A.int_list, "rhs_contracting_dims": A.int_list,
    "lhs_batch_dims": A.int_list, "rhs_batch_dims": A.int_list,
    "replica_groups": A.replica_groups, "sharding": A.sharding,
    "control-predecessors": A.computation_list, "frontend_attributes": A.string_dict,
    "index": int,
}


class HloComputation:
    """A named list of instructions; ENTRY is the module's entry point."""

    __slots__ = ("name", "instructions", "is_entry", "is_fusion", "line", "signature",
                 "execution_thread", "module", "_by_name", "_users", "synthetic")

    def __init__(self, name: str, instructions: list[HloInstruction], is_entry: bool,
                 line: int, signature: str = "", execution_thread: str = "") -> None:
        self.name = name
        self.instructions = instructions
        self.is_entry = is_entry
        self.is_fusion = False     # set by the module: called by a fusion
        self.line = line
        self.signature = signature  # '(p: f32[8]) -> f32[8]' as written, or ''
        self.execution_thread = execution_thread
        self.synthetic = False     # made by the parser for 'op-start' sugar (XLA does not print it)
        self.module: HloModule | None = None
        self._by_name: dict[str, HloInstruction] | None = None
        self._users: dict[str, list[HloInstruction]] | None = None
        for inst in instructions:
            inst.computation = self

    def __repr__(self) -> str:
        return f"<HloComputation {self.name}: {len(self.instructions)} instructions>"

    def __iter__(self) -> Iterator[HloInstruction]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    @property
    def instruction_map(self) -> dict[str, HloInstruction]:
        if self._by_name is None:
            self._by_name = {i.name: i for i in self.instructions}
        return self._by_name

    def get(self, name: str) -> HloInstruction | None:
        return self.instruction_map.get(name.lstrip("%"))

    @property
    def root(self) -> HloInstruction | None:
        for inst in reversed(self.instructions):
            if inst.is_root:
                return inst
        return self.instructions[-1] if self.instructions else None

    @property
    def parameters(self) -> list[HloInstruction]:
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(params, key=lambda i: i.parameter_number or 0)

    def users_of(self, name: str) -> list[HloInstruction]:
        if self._users is None:
            users: dict[str, list[HloInstruction]] = {}
            for inst in self.instructions:
                for op in dict.fromkeys(inst.operand_names):
                    users.setdefault(op, []).append(inst)
            self._users = users
        return self._users.get(name, [])


class HloModule:
    """A parsed HLO module."""

    def __init__(self, name: str, attributes: dict[str, str],
                 computations: list[HloComputation], stack_frames: StackFrameIndex,
                 source: str | None = None, id: str | None = None) -> None:
        self.name = name
        self.attributes = attributes      # header attributes, verbatim
        self.computations = computations  # in file order
        self.stack_frames = stack_frames
        self.source = source
        self.id = id                      # the dump's module id ('0006') when known
        self.key = ""                     # content identity (a hash of the text), set by the parser
        self._derived: dict[str, Any] = {}
        self._by_name = {c.name: c for c in computations}
        self._callers: dict[str, list[HloInstruction]] | None = None
        if not computations:
            raise HloParseError(f"module {name} has no computations; expected an ENTRY "
                                "computation", source=source)
        # with no ENTRY keyword XLA takes the last computation as the entry
        self.entry: HloComputation = next((c for c in computations if c.is_entry),
                                          computations[-1])
        self.entry.is_entry = True
        for c in computations:
            c.module = self
        for c in computations:
            for inst in c.instructions:
                if inst.opcode == "fusion":
                    for callee in inst.called_names:
                        fc = self._by_name.get(callee)
                        if fc is not None:
                            fc.is_fusion = True

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations>"

    def derived(self, what: str, compute: Callable[["HloModule"], T]) -> T:
        """``compute(self)`` once per module: the one cache of results derived from a module
        (kernel costs, schedule positions, ...), dropped with it. Two threads may both
        compute a missing entry; they get equal results and one is kept."""
        try:
            return self._derived[what]
        except KeyError:
            return self._derived.setdefault(what, compute(self))

    def knows(self, what: str) -> bool:
        """Is ``what`` derived (or attached) already?"""
        return what in self._derived

    def attach(self, what: str, value: T) -> T:
        """Give the module a fact its text does not hold (from the rest of its dump) under
        ``what``, for ``derived`` to return. Results derived before are dropped: they may
        have read its absence."""
        self._derived.clear()
        self._derived[what] = value
        return value

    def computation(self, name: str) -> HloComputation:
        try:
            return self._by_name[name.lstrip("%")]
        except KeyError:
            raise KeyError(f"module {self.name} has no computation {name!r}") from None

    def get_computation(self, name: str) -> HloComputation | None:
        return self._by_name.get(name.lstrip("%"))

    def instructions(self) -> Iterator[HloInstruction]:
        for c in self.computations:
            yield from c.instructions

    def find(self, name: str) -> HloInstruction | None:
        """The instruction with this name in any computation (the first computation that
        has it, in file order)."""
        index = self.derived("instructions-by-name", _instruction_index)
        return index.get(name.lstrip("%"))

    @property
    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    # -- header attributes
    @property
    def is_scheduled(self) -> bool:
        return self.attributes.get("is_scheduled", "false") == "true"

    @property
    def entry_computation_layout(self) -> str | None:
        return self.attributes.get("entry_computation_layout")

    @property
    def input_output_alias(self) -> str | None:
        return self.attributes.get("input_output_alias")

    @property
    def frontend_attributes(self) -> dict[str, str]:
        raw = self.attributes.get("frontend_attributes")
        return A.string_dict(raw) if raw else {}

    def source_location(self, inst: HloInstruction) -> SourceLocation | None:
        """``file:line`` (and function) of an instruction, from either metadata form."""
        md = inst.metadata
        if md.stack_frame_id and self.stack_frames:
            loc = self.stack_frames.location(md.stack_frame_id)
            if loc is not None:
                return loc
        if md.source_file:
            return SourceLocation(md.source_file, md.source_line, "", md.source_column,
                                  md.source_end_line, md.source_end_column)
        return None

    def materialize(self) -> "HloModule":
        """Decode every lazily decoded attribute (raises HloParseError on a bad one)."""
        for inst in self.instructions():
            inst.materialize()
        _ = self.frontend_attributes
        return self

    def reachable(self, roots: Iterable[str]) -> list[HloComputation]:
        """The computations ``roots`` (names) call, directly or not, themselves included,
        in module order (callees before callers, as XLA writes them)."""
        seen: set[str] = set()
        stack = list(roots)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            comp = self._by_name.get(name)
            if comp is not None:
                for inst in comp.instructions:
                    stack.extend(inst.called_names)
        return [c for c in self.computations if c.name in seen]

    def callers(self) -> dict[str, list[HloInstruction]]:
        """Computation name -> the instructions that call it (built once)."""
        if self._callers is None:
            out: dict[str, list[HloInstruction]] = {}
            for inst in self.instructions():
                for callee in inst.called_names:
                    out.setdefault(callee, []).append(inst)
            self._callers = out
        return self._callers

    def stats(self) -> dict:
        """Counts as the ``stats`` command prints them."""
        opcodes: dict[str, int] = {}
        for inst in self.instructions():
            opcodes[inst.opcode] = opcodes.get(inst.opcode, 0) + 1
        return {
            "module": self.name,
            "computations": len(self.computations),
            "instructions": sum(opcodes.values()),
            "entry_instructions": len(self.entry.instructions),
            "fusions": opcodes.get("fusion", 0),
            "opcodes": dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))),
        }


def backend_config_text(value: Any) -> str:
    """Pretty text of a decoded backend_config for display."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, sort_keys=False)
    return "" if value is None else str(value)


def _instruction_index(module: HloModule) -> dict[str, HloInstruction]:
    """Name -> instruction over the whole module, as ``find`` would search it: a lookup
    scanned every computation (0.7 ms a call at 24k instructions, called per node)."""
    index: dict[str, HloInstruction] = {}
    for c in module.computations:
        for name, inst in c.instruction_map.items():
            index.setdefault(name, inst)
    return index
