"""The HLO model and its reader/writer: parse text into ``HloModule`` (computations,
instructions, shapes with layouts, metadata), print it back, extract a piece as a repro.
"""

from __future__ import annotations

from .analysis import layout_change, layout_changes, walk_through
from .attributes import iota_tile_assignment, replica_groups
from .errors import HloParseError, diagnostic
from .formats import (
    EXPECTED,
    HLO_PROTO_BINARY,
    HLO_PROTO_TEXT,
    HLO_TEXT,
    MLIR_TEXT,
    compile_dump_for_cpu,
    compile_for_cpu,
    is_text_proto,
    mlir_to_hlo_text,
    module_name,
    not_a_module,
    xla_message,
    proto_to_hlo_text,
    sniff,
    to_hlo_text,
)
from .gc_pause import gc_paused
from .model import (
    COMPUTATION_ATTRIBUTES,
    HloComputation,
    HloInstruction,
    HloModule,
    backend_config_text,
)
from .parser import parse_hlo, parse_hlo_bytes
from .printer import extract_text, print_module
from .records import FileLocation, Metadata, SourceLocation, StackFrame, StackFrameIndex
from .shapes import UNBOUNDED, Layout, Shape, parse_shape
from .wire import varint, wire_fields

__all__ = [
    "varint",
    "wire_fields",
    "diagnostic",
    "EXPECTED",
    "HLO_PROTO_BINARY",
    "HLO_PROTO_TEXT",
    "HLO_TEXT",
    "MLIR_TEXT",
    "compile_dump_for_cpu",
    "compile_for_cpu",
    "is_text_proto",
    "mlir_to_hlo_text",
    "module_name",
    "not_a_module",
    "xla_message",
    "proto_to_hlo_text",
    "sniff",
    "to_hlo_text",
    "COMPUTATION_ATTRIBUTES",
    "FileLocation",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "Layout",
    "Metadata",
    "Shape",
    "SourceLocation",
    "StackFrame",
    "StackFrameIndex",
    "UNBOUNDED",
    "backend_config_text",
    "extract_text",
    "gc_paused",
    "layout_change",
    "layout_changes",
    "parse_hlo",
    "parse_hlo_bytes",
    "parse_shape",
    "print_module",
    "replica_groups",
    "iota_tile_assignment",
    "walk_through",
]
