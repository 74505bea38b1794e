"""The buffer assignment inside an ``HloProto`` (``*.after_optimizations.hlo.pb``).

With ``--xla_dump_hlo_as_proto`` alone XLA writes no ``*-buffer-assignment.txt``; the
after-optimizations proto carries the assignment itself (``HloProto.buffer_assignment``:
logical buffers, each defined at an instruction id and a shape index, and the
allocations that hold them, with their flags). This module writes it out as XLA's
``BufferAssignment::ToString`` would, so the one text reader
(:func:`.buffer_assignment.parse_buffer_assignment`) reads both and nothing downstream
knows the difference. Field numbers are those of ``xla/service/hlo.proto``; read with the
wire-format reader (no proto package)."""

from __future__ import annotations

from collections.abc import Callable

from compiler_bridge.hlo import varint, wire_fields

__all__ = ["assignment_text_from_proto", "heap_ranges"]

# HloProto
_HLO_MODULE, _BUFFER_ASSIGNMENT = 1, 3
# HloModuleProto.computations, HloComputationProto.instructions, HloInstructionProto
_COMPUTATIONS, _INSTRUCTIONS, _NAME, _ID = 3, 2, 1, 35
# BufferAssignmentProto
_LOGICAL_BUFFERS, _ALLOCATIONS = 1, 3
# LogicalBufferProto and its Location
_LB_ID, _LB_SIZE, _LB_DEFINED_AT, _LB_COLOR = 1, 2, 3, 4
_LOC_NAME, _LOC_INDEX, _LOC_ID = 2, 3, 4
# BufferAllocationProto and its Assigned
(_A_INDEX, _A_SIZE, _A_THREAD_LOCAL, _A_PARAMETER, _A_PARAMETER_NUMBER, _A_LIVE_OUT,
 _A_COLOR, _A_ASSIGNED, _A_PARAMETER_INDEX, _A_CONSTANT) = (1, 2, 3, 5, 6, 7, 8, 9, 10, 12)
_AS_BUFFER, _AS_OFFSET, _AS_SIZE = 1, 2, 3
# BufferAssignmentProto.heap_simulator_traces, HeapSimulatorTrace.events and Event
_HEAP_TRACES, _EVENTS = 4, 1
_EV_KIND, _EV_BUFFER, _EV_INSTRUCTION = 1, 2, 4
_FREE = 1


def _ints(fields: list[tuple[int, int | bytes]], number: int) -> list[int]:
    """A repeated int64: packed (one length-delimited run of varints) or not."""
    out: list[int] = []
    for n, v in fields:
        if n != number:
            continue
        if isinstance(v, int):
            out.append(v)
        else:
            i = 0
            while i < len(v):
                x, i = varint(v, i)
                out.append(x)
    return out


def _int(fields: list[tuple[int, int | bytes]], number: int) -> int:
    got = [v for n, v in fields if n == number and isinstance(v, int)]
    return got[-1] if got else 0


def _message(fields: list[tuple[int, int | bytes]], number: int) -> bytes | None:
    got = [v for n, v in fields if n == number and isinstance(v, bytes)]
    return got[-1] if got else None


def _names(module: bytes) -> dict[int, str]:
    """Instruction id -> name, over every computation of an ``HloModuleProto``."""
    out: dict[int, str] = {}
    for n, comp in wire_fields(module):
        if n != _COMPUTATIONS or not isinstance(comp, bytes):
            continue
        for m, inst in wire_fields(comp):
            if m != _INSTRUCTIONS or not isinstance(inst, bytes):
                continue
            f = wire_fields(inst)
            name = _message(f, _NAME)
            if name is not None:
                out[_int(f, _ID)] = name.decode("utf-8", "replace")
    return out


def _assignment(data: bytes) -> tuple[list[tuple[int, int | bytes]],
                                      dict[int, tuple[str, tuple[int, ...], int]]] | None:
    """The assignment's fields and its logical buffers (id -> instruction name, tuple
    index, color); None when the proto holds none."""
    top = wire_fields(data)
    assignment = _message(top, _BUFFER_ASSIGNMENT)
    module = _message(top, _HLO_MODULE)
    if not assignment:
        return None
    names = _names(module) if module else {}
    fields = wire_fields(assignment)
    values: dict[int, tuple[str, tuple[int, ...], int]] = {}
    for n, lb in fields:
        if n != _LOGICAL_BUFFERS or not isinstance(lb, bytes):
            continue
        f = wire_fields(lb)
        loc = wire_fields(_message(f, _LB_DEFINED_AT) or b"")
        old = _message(loc, _LOC_NAME)     # XLA before instruction ids
        name = names.get(_int(loc, _LOC_ID)) or (old.decode("utf-8", "replace") if old
                                                 else f"instruction-{_int(loc, _LOC_ID)}")
        values[_int(f, _LB_ID)] = (name, tuple(_ints(loc, _LOC_INDEX)), _int(f, _LB_COLOR))
    return fields, values


def heap_ranges(data: bytes, time: dict[str, int]) -> dict[tuple[str, tuple[int, ...]],
                                                            tuple[int, int]]:
    """The live interval of each value the heap simulator placed (the proto's
    ``heap_simulator_traces``: one per memory space), as the live-range file writes them:
    from the schedule position (``time``: instruction -> position in the flattened
    schedule) of the instruction that allocated it (or shared its bytes) to that of the
    one that freed it. Empty when the proto holds no traces. Raises ValueError on a
    message cut short."""
    got = _assignment(data)
    if got is None:
        return {}
    fields, values = got
    out: dict[tuple[str, tuple[int, ...]], tuple[int, int]] = {}
    for n, trace in fields:
        if n != _HEAP_TRACES or not isinstance(trace, bytes):
            continue
        # events come in the simulator's order; an allocation names the instruction
        # that defines the buffer (its time), a free the same instruction, not the last
        # user: it ends at the latest time allocated before it
        start: dict[int, int] = {}
        now = 0
        for m, event in wire_fields(trace):
            if m != _EVENTS or not isinstance(event, bytes):
                continue
            e = wire_fields(event)
            buffer = _int(e, _EV_BUFFER)
            if buffer not in values:
                continue
            if _int(e, _EV_KIND) == _FREE:
                if buffer in start:
                    name, index, _ = values[buffer]
                    out[(name, index)] = (start.pop(buffer), now)
                continue
            name_bytes = _message(e, _EV_INSTRUCTION)   # ALLOC, or SHARE_WITH another's bytes
            at = time.get(name_bytes.decode("utf-8", "replace")) if name_bytes else None
            if at is not None:
                now = max(now, at)
                start[buffer] = at
    return out


def assignment_text_from_proto(data: bytes,
                               shape_of: Callable[[str, tuple[int, ...]], str]) -> str | None:
    """The assignment of an ``HloProto`` as ``*-buffer-assignment.txt`` text; None when
    the proto holds none (a before-optimizations module, a per-pass step). ``shape_of``:
    the shape text of an instruction's value at a tuple index ('' when not known).
    Raises ValueError on a message cut short."""
    got = _assignment(data)
    if got is None:
        return None
    fields, values = got
    lines = ["BufferAssignment:"]
    for n, alloc in fields:
        if n != _ALLOCATIONS or not isinstance(alloc, bytes):
            continue
        f = wire_fields(alloc)
        # the tags in BufferAllocation::ToString's order
        tags = []
        color = _int(f, _A_COLOR)
        if color:
            tags.append(f"color {color}")
        assigned = [wire_fields(a) for m, a in f if m == _A_ASSIGNED and isinstance(a, bytes)]
        if _int(f, _A_PARAMETER):
            at = ",".join(map(str, _ints(f, _A_PARAMETER_INDEX)))
            first = values.get(_int(assigned[0], _AS_BUFFER)) if assigned else None
            shape = shape_of(first[0], first[1]) if first else ""
            tags.append(f"parameter {_int(f, _A_PARAMETER_NUMBER)}, shape |{shape}| at "
                        f"ShapeIndex {{{at}}}")
        if _int(f, _A_CONSTANT):
            tags.append("constant")
        if _int(f, _A_THREAD_LOCAL):
            tags.append("thread-local")
        if _int(f, _A_LIVE_OUT):
            tags.append("maybe-live-out")
        if not (_int(f, _A_PARAMETER) or _int(f, _A_LIVE_OUT) or _int(f, _A_THREAD_LOCAL)
                or _int(f, _A_CONSTANT)):
            tags.append("preallocated-temp")
        lines.append(f"allocation {_int(f, _A_INDEX)}: size {_int(f, _A_SIZE)}"
                     + "".join(f", {t}" for t in tags) + ":")
        for a in assigned:
            vid = _int(a, _AS_BUFFER)
            name, index, vcolor = values.get(vid, (f"buffer-{vid}", (), 0))
            shown = "{" + ",".join(map(str, index)) + "}" if index else ""
            lines.append(f" value: <{vid} {name}{shown} @{vcolor}> (size={_int(a, _AS_SIZE)},"
                         f"offset={_int(a, _AS_OFFSET)}): {shape_of(name, index) or '?'}")
    return "\n".join(lines) + "\n"
