"""Dumps: an ``--xla_dump_to`` folder or archive indexed by module and stage, and the
content-addressed store that keeps dumps, traces, saved views and comments for links.

``Dump.key`` (and :func:`path_key` for a path not yet opened) is a dump's content
identity: caches of what is computed from a dump are keyed by it.
"""

from __future__ import annotations

from .dump import (
    AFTER,
    DUMP_EXPECTED,
    AFTER_CODEGEN,
    BEFORE,
    BEFORE_BUFFER_ASSIGNMENT,
    BUFFER_ASSIGNMENT,
    BUFFER_ASSIGNMENT_VALUES,
    HLO_TEXT_KINDS,
    LIVE_RANGE,
    LLVM_IR_NO_OPT,
    LLVM_IR_WITH_OPT,
    MLIR,
    MEMORY_USAGE_REPORT,
    PASS,
    PTX,
    STABLEHLO,
    TF_GRAPH,
    TOPOLOGY,
    TRACE,
    XPLANE,
    Dump,
    DumpFile,
    DumpModule,
    open_dump,
    path_key,
    require_modules,
)
from .errors import DumpError, StoreError
from .notes import Comment, SavedView
from .content import dump_hash
from .store import Store, StoredDump
from .trace_shelf import TraceShelf, is_trace_id, trace_id
from .target_files import dump_target, gpu_target_config, module_target, target_note

__all__ = [
    "AFTER",
    "DUMP_EXPECTED",
    "AFTER_CODEGEN",
    "BEFORE_BUFFER_ASSIGNMENT",
    "BEFORE",
    "BUFFER_ASSIGNMENT",
    "BUFFER_ASSIGNMENT_VALUES",
    "Comment",
    "Dump",
    "DumpError",
    "DumpFile",
    "DumpModule",
    "HLO_TEXT_KINDS",
    "LIVE_RANGE",
    "LLVM_IR_NO_OPT",
    "LLVM_IR_WITH_OPT",
    "MLIR",
    "MEMORY_USAGE_REPORT",
    "PASS",
    "PTX",
    "STABLEHLO",
    "SavedView",
    "Store",
    "StoreError",
    "StoredDump",
    "TF_GRAPH",
    "TOPOLOGY",
    "TRACE",
    "TraceShelf",
    "XPLANE",
    "dump_hash",
    "dump_target",
    "gpu_target_config",
    "target_note",
    "is_trace_id",
    "module_target",
    "open_dump",
    "path_key",
    "require_modules",
    "trace_id",
]
