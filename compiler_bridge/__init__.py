"""compiler_bridge: everything that reads XLA's output.

The public surface: ``parse_hlo``, ``open_dump``, ``HloParseError`` and the model types.
"""

from .dump import Dump, DumpError, DumpFile, DumpModule, open_dump
from .errors import HloParseError
from .hlo import (HloComputation, HloInstruction, HloModule, Metadata, SourceLocation,
                  StackFrameIndex)
from .parser import parse_hlo, parse_hlo_bytes
from .shapes import Layout, Shape, parse_shape

__all__ = [
    "Dump", "DumpError", "DumpFile", "DumpModule", "open_dump",
    "HloComputation", "HloInstruction", "HloModule", "HloParseError", "Layout", "Metadata",
    "Shape", "SourceLocation", "StackFrameIndex", "parse_hlo", "parse_hlo_bytes",
    "parse_shape",
]
