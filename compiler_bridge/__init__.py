"""compiler_bridge: everything that reads XLA's output.

The public surface: ``parse_hlo``, ``open_dump``, ``HloParseError`` and the model types.
"""

from .diff import diff_modules
from .dump import Dump, DumpError, DumpFile, DumpModule, open_dump
from .errors import HloParseError
from .hlo import (HloComputation, HloInstruction, HloModule, Metadata, SourceLocation,
                  StackFrameIndex)
from .parser import parse_hlo, parse_hlo_bytes
from .passes import pass_timeline, step_diff
from .runtimes import runtime_report
from .shapes import Layout, Shape, parse_shape
from .store import Store, StoreError
from .traces import TraceError, measure

__all__ = [
    "Dump", "DumpError", "DumpFile", "DumpModule", "open_dump",
    "HloComputation", "HloInstruction", "HloModule", "HloParseError", "Layout", "Metadata",
    "Shape", "SourceLocation", "StackFrameIndex", "parse_hlo", "parse_hlo_bytes",
    "parse_shape", "pass_timeline", "step_diff", "diff_modules", "runtime_report",
    "TraceError", "measure", "Store", "StoreError",
]
