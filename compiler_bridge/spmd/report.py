"""A sharded module's collectives and ENTRY shardings as plain rows: what the
``collectives`` and ``shardings`` commands print and the app's views draw."""

from __future__ import annotations

from ..dumps import Dump, DumpModule
from ..hlo import HloInstruction, HloModule, Shape, parse_shape
from .cause import causes, partitioner_input, partitioner_output
from .collectives import collectives, num_partitions
from .sharding import (TensorSharding, global_dims, is_partitioned, mesh_axes,
                       per_device_bytes, per_device_shape, sdy_meshes, sharding_of)


def collective_rows(module: HloModule, before: HloModule | None = None,
                    partitioned: HloModule | None = None) -> list[dict]:
    """One row per collective of ``module`` (an async pair once): name, opcode, async (and
    the done), groups, group size, result and sent bytes of one device, op_name, source
    line and — when ``before`` (the partitioner's input) is given — its cause
    (``partitioned``, the partitioner's output, names collectives a later pass stripped of
    their metadata)."""
    devices = num_partitions(module)
    found = collectives(module)
    why = causes(found, module, before, partitioned) if before is not None else {}
    rows = []
    for c in found:
        inst = c.instruction
        loc = module.source_location(inst)
        cause = why.get(inst.name)
        try:
            groups = c.groups(devices)
        except ValueError as e:
            raise ValueError(f"{inst.name}: {e}") from None
        rows.append({
            "name": inst.name, "opcode": inst.opcode, "kind": c.kind, "async": c.is_async,
            "done": c.done.name if c.done is not None else None,
            "groups": [list(g) for g in groups],
            "group_size": c.group_size(devices),
            "result_shape": c.result_shape.without_layout(),
            "result_bytes": c.result_bytes, "sent_bytes": c.sent_bytes(devices),
            "received_bytes": c.sent_bytes(devices),
            "op_name": inst.op_name,
            # a collective a later pass stripped of its metadata: its cause's line
            "source": f"{loc.file}:{loc.line}" if loc else cause.source if cause else "",
            "computation": inst.computation.name if inst.computation is not None else "",
            "cause": cause.to_json() if cause is not None else None,
        })
    return rows


def module_collectives(dump: Dump, module: DumpModule) -> dict:
    """The ``collectives`` command's entry for one module of a dump: its after-optimizations
    collectives (the before-optimizations ones when that is all there is), each with the
    cause found in the partitioner's input."""
    f = module.after_optimizations or module.before_optimizations
    if f is None:
        return {"name": module.name, "devices": 0, "collectives": []}
    hlo = dump.parse(f.path)
    pre = partitioner_input(dump, module) if f is module.after_optimizations else None
    try:
        rows = collective_rows(hlo, pre[0] if pre else None,
                               partitioner_output(dump, module) if pre else None)
    except ValueError as e:         # name the file: the message names the instruction
        raise ValueError(f"{f.path}: {e}") from None
    return {"name": module.name, "id": module.id, "devices": num_partitions(hlo),
            "stage": f.name, "partitioner_input": pre[1] if pre else None,
            "collectives": rows}


def _entry_row(name: str, shape: Shape, sharding: TensorSharding | None, devices: int,
               partitioned: bool = False) -> dict:
    """One ENTRY parameter or output. ``partitioned``: ``shape`` is one device's (the
    partitioner's output), the whole one is found from the tiles."""
    row: dict = {"name": name, "shape": shape.without_layout(),
                 "sharding": sharding.raw if sharding is not None else None}
    if sharding is None or not shape.is_array:
        return row
    whole = shape
    if partitioned:
        dims = global_dims(sharding, shape.dimensions)
        whole = parse_shape(f"{shape.element_type}[{','.join(map(str, dims))}]")
        row["shape"] = whole.without_layout()
        row["shape_on_one_device"] = shape.without_layout()
    try:
        per = list(per_device_shape(sharding, whole.dimensions))
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    row.update({"kind": sharding.kind, "label": sharding.label(),
                "mesh": str(sharding.mesh) if sharding.mesh is not None else None,
                "mesh_axes": mesh_axes(sharding), "per_device_shape": per,
                "per_device_bytes": per_device_bytes(sharding, whole),
                "bytes": whole.byte_size, "devices": devices})
    return row


def entry_shardings(module: HloModule) -> dict:
    """The ENTRY parameters' and outputs' shardings: sharding text, kind, mesh axes,
    per-device shape and bytes."""
    devices = num_partitions(module)
    meshes = sdy_meshes(module)
    entry = module.entry
    params: list[HloInstruction] = sorted(
        (i for i in entry.instructions if i.opcode == "parameter"),
        key=lambda i: i.parameter_number or 0)
    cut = is_partitioned(module)

    def of(inst: HloInstruction) -> TensorSharding | None:
        try:
            return sharding_of(inst, meshes)
        except ValueError as e:
            raise ValueError(f"{inst.name}: {e}") from None

    out = {"name": module.name, "devices": devices,
           "meshes": {k: str(v) for k, v in meshes.items()},
           "partitioned": cut,
           "parameters": [_entry_row(p.name, p.shape, of(p), devices, cut) for p in params],
           "outputs": []}
    root = entry.root
    if root is None:
        return out
    whole = of(root)
    if root.shape.is_tuple:
        parts = whole.elements if whole is not None and whole.kind == "tuple" else \
            (whole,) * len(root.shape.tuple_shapes)
        if whole is None and root.opcode == "tuple":    # each element's own, where it has one
            parts = tuple(_element_sharding(op, of) for op in root.operands)
        out["outputs"] = [_entry_row(f"{root.name}.{i}", s, part, devices, cut)
                          for i, (s, part) in enumerate(zip(root.shape.tuple_shapes, parts))]
    else:
        out["outputs"] = [_entry_row(root.name, root.shape, whole, devices, cut)]
    return out


def _element_sharding(inst: HloInstruction, of) -> TensorSharding | None:
    """The sharding of one element of a ROOT tuple: its own, or its part of the sharding of
    the tuple it is taken from (a shard_map of several results)."""
    own = of(inst)
    if own is not None or inst.opcode != "get-tuple-element" or not inst.operands:
        return own
    whole = of(inst.operands[0])
    index = inst.tuple_index
    if whole is not None and whole.kind == "tuple" and index is not None \
            and index < len(whole.elements):
        return whole.elements[index]
    return None


def module_shardings(dump: Dump, module: DumpModule) -> dict:
    """The ``shardings`` command's entry for one module: read where the shardings are
    annotated, the before-optimizations stage (else the after-optimizations one)."""
    f = module.before_optimizations or module.after_optimizations
    if f is None:
        return {"name": module.name, "devices": 0, "parameters": [], "outputs": []}
    try:
        report = entry_shardings(dump.parse(f.path))
    except ValueError as e:
        raise ValueError(f"{f.path}: {e}") from None
    report.update({"name": module.name, "id": module.id, "stage": f.name})
    return report
