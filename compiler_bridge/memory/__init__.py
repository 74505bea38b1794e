"""Memory: where a compiled module's bytes go — XLA's buffer assignment (allocations and
the values in them), the live ranges over the schedule, totals as ``memory_analysis()``
counts them, the live-bytes curve and what is live at its peak, each value linked to its
HLO instruction.

Read with :func:`module_memory` / :func:`memory_totals` from a dump; the file readers
(:func:`parse_buffer_assignment`, :func:`parse_live_range`, :func:`parse_usage_report`,
:func:`parse_values`) raise MemoryFileError naming the file and line.
"""

from __future__ import annotations

from .analysis import STACK_ORDER, MemoryTotals, ModuleMemory, ValueLife, build_memory
from .buffer_assignment import (KINDS, Allocation, BufferAssignment, LogicalValue,
                                parse_buffer_assignment)
from .cli import add_memory_command
from .derive import derive_live_range, flatten_schedule
from .errors import MemoryFileError
from .live_range import LiveRange, parse_live_range
from .loader import memory_totals, module_memory
from .oom import OomBuffer, OomError, OomReport, parse_oom_error
from .reports import (MemorySpace, UsageReport, ValueInfo, ValuesFile, parse_usage_report,
                      parse_values)
from .xla_stats import XlaStats

__all__ = [
    "Allocation",
    "BufferAssignment",
    "KINDS",
    "LiveRange",
    "LogicalValue",
    "MemoryFileError",
    "MemorySpace",
    "MemoryTotals",
    "ModuleMemory",
    "OomBuffer",
    "OomError",
    "OomReport",
    "STACK_ORDER",
    "UsageReport",
    "ValueInfo",
    "ValuesFile",
    "ValueLife",
    "XlaStats",
    "add_memory_command",
    "build_memory",
    "derive_live_range",
    "flatten_schedule",
    "memory_totals",
    "module_memory",
    "parse_buffer_assignment",
    "parse_live_range",
    "parse_oom_error",
    "parse_usage_report",
    "parse_values",
]
