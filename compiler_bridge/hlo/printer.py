"""HloModule -> HLO text that XLA's parser accepts, and ``extract`` for minimal repros."""

from __future__ import annotations

from .model import HloComputation, HloInstruction, HloModule
from .names import NON_OPERAND_ARGS
from .parser import parse_hlo
from .records import StackFrameIndex

# Header attributes that describe the whole program's entry and do not survive a cut.
_ENTRY_BOUND = ("entry_computation_layout", "input_output_alias", "buffer_donor",
                "is_scheduled", "spmd_output_sharding", "spmd_parameters_shardings")


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def print_instruction(inst: HloInstruction, root: bool | None = None,
                      skip: tuple[str, ...] = ()) -> str:
    """One instruction's line; ``root`` overrides its ROOT mark, ``skip`` drops attributes."""
    root_mark = "ROOT " if (inst.is_root if root is None else root) else ""
    if inst.opcode in NON_OPERAND_ARGS:
        args = inst.args_text.strip()
    else:
        args = ", ".join("%" + n for n in inst.operand_names)
    attrs = "".join(f", {k}={v}" for k, v in inst.attributes.items() if k not in skip)
    return f"{root_mark}%{inst.name} = {inst.shape} {inst.written_opcode}({args}){attrs}"


def signature(comp: HloComputation) -> str:
    params = ", ".join(f"{p.name}: {p.shape.without_layout()}" for p in comp.parameters)
    root = comp.root
    result = root.shape.without_layout() if root is not None else "()"
    return f"({params}) -> {result}"


def print_computation(comp: HloComputation, *, entry: bool | None = None) -> str:
    is_entry = comp.is_entry if entry is None else entry
    head = ("ENTRY " if is_entry else "") + f"%{comp.name} {signature(comp)} {{"
    lines = [head]
    lines += ["  " + print_instruction(i) for i in comp.instructions]
    close = "}"
    if comp.execution_thread:
        close += f", execution_thread={_quote(comp.execution_thread)}"
    lines.append(close)
    return "\n".join(lines)


def _print_frames(frames: StackFrameIndex) -> str:
    if not frames:
        return ""
    out = []
    if frames.file_names:
        out.append("FileNames")
        out += [f"{k} {_quote(v)}" for k, v in sorted(frames.file_names.items())]
        out.append("")
    if frames.function_names:
        out.append("FunctionNames")
        out += [f"{k} {_quote(v)}" for k, v in sorted(frames.function_names.items())]
        out.append("")
    if frames.file_locations:
        out.append("FileLocations")
        for k, loc in sorted(frames.file_locations.items()):
            out.append(f"{k} {{file_name_id={loc.file_name_id} function_name_id="
                       f"{loc.function_name_id} line={loc.line} end_line={loc.end_line} "
                       f"column={loc.column} end_column={loc.end_column}}}")
        out.append("")
    if frames.stack_frames:
        out.append("StackFrames")
        for k, fr in sorted(frames.stack_frames.items()):
            out.append(f"{k} {{file_location_id={fr.file_location_id} "
                       f"parent_frame_id={fr.parent_frame_id}}}")
        out.append("")
    return "\n".join(out) + "\n"


def print_module(module: HloModule, *, header_attributes: dict[str, str] | None = None) -> str:
    """The module as HLO text (computations in model order, callees first)."""
    attrs = module.attributes if header_attributes is None else header_attributes
    header = f"HloModule {module.name}" + "".join(f", {k}={v}" for k, v in attrs.items())
    parts = [header, ""]
    frames = _print_frames(module.stack_frames)
    if frames:
        parts.append(frames)
    for comp in module.computations:
        if comp.synthetic:
            continue   # XLA's own async wrappers for 'X-start' shorthand: not printed
        parts.append(print_computation(comp, entry=comp is module.entry))
        parts.append("")
    return "\n".join(parts)


def extract_text(module: HloModule, name: str) -> str:
    """A standalone module (HLO text) holding one computation or one instruction.

    ``name`` is a computation (it becomes the ENTRY, with everything it calls) or an
    instruction, e.g. a fusion: the ENTRY then takes one parameter per operand of the
    instruction and runs just it, with the computations it calls.
    """
    header = {k: v for k, v in module.attributes.items() if k not in _ENTRY_BOUND}
    frames = _print_frames(module.stack_frames)
    comp = module.get_computation(name)
    parts: list[str] = []
    if comp is not None:
        for c in module.reachable([comp.name]):
            if c is not comp:
                parts.append(print_computation(c, entry=False))
        parts.append(print_computation(comp, entry=True))
        mod_name = f"{module.name}.{comp.name}"
    else:
        inst = module.find(name)
        if inst is None:
            raise KeyError(f"module {module.name} has no computation or instruction {name!r}")
        for c in module.reachable(inst.called_names):
            parts.append(print_computation(c, entry=False))
        owner = inst.computation
        lines = []
        params: list[str] = []
        for op in dict.fromkeys(inst.operand_names):
            src = owner.get(op) if owner is not None else None
            if src is None:
                raise KeyError(f"operand {op!r} of {inst.name} not found")
            lines.append(f"  %{op} = {src.shape} parameter({len(params)})")
            params.append(f"{op}: {src.shape.without_layout()}")
        # alone in its module: no control predecessors to point at
        lines.append("  " + print_instruction(inst, root=True, skip=("control-predecessors",)))
        parts.append(f"ENTRY %extracted.{inst.name} ({', '.join(params)}) -> "
                     f"{inst.shape.without_layout()} {{\n" + "\n".join(lines) + "\n}")
        mod_name = f"{module.name}.{inst.name}"
    head = f"HloModule {mod_name}" + "".join(f", {k}={v}" for k, v in header.items())
    return "\n".join([head, "", frames] + [p + "\n" for p in parts])


def extract(module: HloModule, name: str) -> HloModule:
    """``extract_text`` parsed back into a model."""
    return parse_hlo(extract_text(module, name), f"{module.source or module.name}#{name}")
