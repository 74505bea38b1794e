"""spmd: sharded programs. What XLA's SPMD partitioner decided, read from its output: the
collectives it inserted (``collectives``) and, as the sharding work lands, each tensor's
sharding on the device mesh and why a collective is there.

Imports ``hlo`` (whose attribute decoders read ``sharding=`` and ``replica_groups=``) and
``targets`` (link bandwidths) at most.
"""

from __future__ import annotations

from .collectives import (COLLECTIVE_OPCODES, NATIVE_ASYNC, SYNC, Collective, collective_of,
                          collectives)

__all__ = ["COLLECTIVE_OPCODES", "NATIVE_ASYNC", "SYNC", "Collective", "collective_of",
           "collectives"]
