"""spmd: sharded programs. What XLA's SPMD partitioner decided, read from its output: each
tensor's sharding on the device mesh (``sharding``), the collectives it inserted with their
device groups and bytes (``collectives``, ``groups``), why each is there (``cause``: the
partitioner's input from the per-pass dump), the rows the commands and views show
(``report``) and the ``collectives`` / ``shardings`` commands (``cli``).

Imports ``hlo``, ``dumps`` (the per-pass steps) and ``targets`` (link bandwidths) at most.
"""

from __future__ import annotations

from .cause import Cause, by_source, causes, op_names, partitioner_input, partitioner_output
from .cli import add_spmd_commands
from .collectives import (COLLECTIVE_OPCODES, NATIVE_ASYNC, SYNC, Collective, collective_of,
                          collectives, num_partitions)
from .groups import device_groups, mesh_groups
from .overlap import LINKS, Link, link_for, overlap
from .report import collective_rows, entry_shardings, module_collectives, module_shardings
from .sharding import (AxisRef, Mesh, TensorSharding, device_slices, global_dims,
                       is_partitioned, mesh_axes, on_mesh,
                       parse_mesh, parse_sharding, per_device_bytes, per_device_shape,
                       sdy_meshes, sdy_sharding, sharding_of, tile_of_device)

__all__ = ["COLLECTIVE_OPCODES", "LINKS", "NATIVE_ASYNC", "SYNC", "AxisRef", "Cause",
           "Collective", "Link", "link_for", "overlap", "Mesh", "TensorSharding",
           "add_spmd_commands", "by_source", "causes", "collective_of", "collective_rows",
           "collectives", "device_groups", "device_slices", "entry_shardings", "global_dims",
           "is_partitioned", "mesh_axes", "mesh_groups", "module_collectives",
           "module_shardings", "num_partitions", "on_mesh", "op_names", "parse_mesh",
           "parse_sharding", "partitioner_input", "partitioner_output", "per_device_bytes",
           "per_device_shape", "sdy_meshes", "sdy_sharding", "sharding_of", "tile_of_device"]
