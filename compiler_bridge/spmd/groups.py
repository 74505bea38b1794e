"""Which devices a collective joins: its ``replica_groups`` in every form XLA prints, and a
collective-permute's ``source_target_pairs``.

- explicit ``{{0,1},{2,3}}``; ``{}`` means one group of every device;
- iota ``[4,2]<=[2,2,2]T(2,1,0)``: 4 groups of 2, the devices of XLA's iota tile assignment
  (decoded by ``hlo.attributes``);
- the mesh form ``mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(2,1,0)) {'axis_0':(2)2}``:
  the mesh's devices grouped along the axes (or sub-axes) named, one group per position on
  the other axes. It is the tile assignment of a one-dimensional sharding split by those axes
  (``sharding.on_mesh``): group ``r`` is the devices of replica ``r`` of every tile, in tile
  order.
"""

from __future__ import annotations

import re

from ..hlo import HloInstruction
from .sharding import Mesh, axis_refs, on_mesh, parse_mesh

_MESH_GROUPS = re.compile(r"mesh\[([^\]]*)\]\s*,?\s*"
                          r"(?:device_ids=\((\[[^\]]*\](?:T\([^)]*\))?)\)\s*)?\{([^{}]*)\}")


def mesh_groups(raw: str) -> tuple[Mesh, tuple[tuple[int, ...], ...]]:
    """The mesh and the device groups of a mesh-form ``replica_groups``."""
    m = _MESH_GROUPS.match(raw.strip())
    if not m:
        raise ValueError(f"expected mesh[...] {{axes}} replica groups, got {raw[:80]!r}")
    mesh = parse_mesh(m.group(1), m.group(2))
    axes = axis_refs(m.group(3))
    sharding = on_mesh(mesh, (axes,))
    if sharding.kind != "tiled":           # grouped along no axis: every device alone
        return mesh, tuple((d,) for d in mesh.devices)
    tiles = sharding.tile_dims[0]
    per = len(sharding.devices) // tiles
    return mesh, tuple(tuple(sharding.devices[t * per + r] for t in range(tiles))
                       for r in range(per))


def device_groups(inst: HloInstruction, num_devices: int) -> tuple[tuple[int, ...], ...]:
    """The device groups of a collective (a collective-permute: its source-target pairs)."""
    pairs = inst.attributes.get("source_target_pairs")
    if pairs is not None:
        return tuple(tuple(int(x) for x in g.split(",") if x.strip())
                     for g in re.findall(r"\{([^{}]*)\}", pairs[1:-1]))
    rg = inst.replica_groups
    if rg is None:
        return (tuple(range(num_devices)),) if num_devices else ()
    if rg.form == "mesh":
        raw = rg.raw
        ids = inst.attributes.get("device_ids")
        if ids is not None:     # the attribute list splits the mesh form at its comma
            raw = f"{raw}, device_ids={ids}"
        return mesh_groups(raw)[1]
    groups = rg.groups or ()
    if not groups or groups == ((),):
        return (tuple(range(num_devices)),) if num_devices else ()
    return groups
