"""The HLO model and its reader/writer: parse text into ``HloModule`` (computations,
instructions, shapes with layouts, metadata), print it back, extract a piece as a repro.
"""

from __future__ import annotations

from .analysis import layout_change, layout_changes
from .attributes import replica_groups
from .errors import HloParseError
from .model import (
    COMPUTATION_ATTRIBUTES,
    HloComputation,
    HloInstruction,
    HloModule,
    Metadata,
    SourceLocation,
    StackFrameIndex,
    backend_config_text,
)
from .parser import parse_hlo, parse_hlo_bytes
from .printer import extract_text, print_module
from .shapes import UNBOUNDED, Layout, Shape, parse_shape

__all__ = [
    "COMPUTATION_ATTRIBUTES",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "Layout",
    "Metadata",
    "Shape",
    "SourceLocation",
    "StackFrameIndex",
    "UNBOUNDED",
    "backend_config_text",
    "extract_text",
    "layout_change",
    "layout_changes",
    "parse_hlo",
    "parse_hlo_bytes",
    "parse_shape",
    "print_module",
    "replica_groups",
]
