"""Which module of a dump is the user's program. JAX compiles helpers of its own beside it:
eager operations (``jit_iota``, ``jit_broadcast_in_dim``), an argument resharded onto the
mesh (``jit__multi_slice``, one slice per device), a PRNG key (``jit__threefry_seed``).
JAX drops its own frames from the Python stack it records, so a helper's stack-frame table
(``FunctionNames``) names only its caller's functions, never the helper's own, while the
program's names the function it was jitted from (``jit_<name>``)."""

from __future__ import annotations

import re

__all__ = ["names_its_function"]

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
    # jax.jit names the module after the function with every other character as '_', and
    # the module keeps no trailing '_' ('<lambda>' -> 'jit__lambda', seen in JAX 0.10's dumps)
    names = {re.sub(r"\W", "_", n).rstrip("_") for n in _ENTRY.findall(table.group(1))}
    return module_name[len("jit_"):].rstrip("_") in names
