"""Which module of a dump is the user's program. JAX compiles helpers of its own beside it:
eager operations (``jit_iota``, ``jit_broadcast_in_dim``), an argument resharded onto the
mesh (``jit__multi_slice``, one slice per device), a PRNG key (``jit__threefry_seed``).
JAX drops its own frames from the Python stack it records, so a helper's stack-frame table
(``FunctionNames``) names only its caller's functions, never the helper's own, while the
program's names the function it was jitted from (``jit_<name>``)."""

from __future__ import annotations

import re

from ..hlo import wire_fields

__all__ = ["names_its_function", "proto_names_its_function"]

# the table: 'FunctionNames', then one '<id> "<name>"' line per function
_TABLE = re.compile(r"^FunctionNames\n((?:\d+ \".*\"\n)*)\n", re.M)
_ENTRY = re.compile(r'^\d+ "(.*)"$', re.M)


def names_its_function(text: str, module_name: str) -> bool | None:
    """Whether a module's HLO text names, in its stack-frame table, the function the module
    was jitted from; None where it cannot say (no table: older JAX, other front ends; a name
    not of ``jax.jit``'s form)."""
    if not module_name.startswith("jit_"):
        return None
    table = _TABLE.search(text)
    if table is None:
        return None
    # the table holds qualified names ('make.<locals>.step', 'Trainer.step'); jax.jit
    # names the module after the function's own name, every character but word ones, '.'
    # and '-' made '_', trailing '_' dropped by newer JAX ('<lambda>' -> 'jit__lambda',
    # 'jit__lambda_' before)
    return _names(_ENTRY.findall(table.group(1)), module_name)


def _names(functions: list[str], module_name: str) -> bool:
    own = {re.sub(r"[^\w.-]", "_", n.rsplit(".", 1)[-1]) for n in functions}
    return module_name[len("jit_"):] in own | {n.rstrip("_") for n in own}


# HloProto.hlo_module, HloModuleProto.stack_frame_index, its function_names (hlo.proto)
_HLO_MODULE, _STACK_FRAME_INDEX, _FUNCTION_NAMES = 1, 17, 2


def proto_names_its_function(data: bytes, module_name: str) -> bool | None:
    """As :func:`names_its_function`, for a binary HloProto or HloModuleProto
    (``--xla_dump_hlo_as_proto``): its ``stack_frame_index`` is the same table. None where
    it cannot say (no table, not such a proto)."""
    if not module_name.startswith("jit_"):
        return None
    try:
        fields = wire_fields(data)
        for number, value in fields:     # an HloProto: the module is its field 1
            if number == _HLO_MODULE and isinstance(value, bytes) and value[:1] == b"\n":
                fields = wire_fields(value)
                break
        index = next((v for n, v in fields if n == _STACK_FRAME_INDEX
                      and isinstance(v, bytes)), None)
        if index is None:
            return None
        functions = [v.decode("utf-8", "replace") for n, v in wire_fields(index)
                     if n == _FUNCTION_NAMES and isinstance(v, bytes)]
    except ValueError:
        return None
    return _names(functions, module_name) if functions else None
