"""compiler_bridge: everything that reads XLA's output. Never imports streamlit or viz.

Sub-packages, each with its own face (its ``__init__``):

- ``compiler_bridge.hlo``: the HLO model, parser, printer and analyses;
- ``compiler_bridge.dumps``: dump folders and archives, and the store behind links;
- ``compiler_bridge.steps``: the pass timeline model HLO passes and TF graph dumps share;
- ``compiler_bridge.passes``: pass timelines and module diffs;
- ``compiler_bridge.compare``: every dump-vs-dump comparison (modules paired, flags,
  versions, counts, diffs, memory and measured times side by side);
- ``compiler_bridge.memory``: a module's buffers, live ranges and peak memory;
- ``compiler_bridge.perf``: traces, cost models and runtime reports;
- ``compiler_bridge.tf``: TensorFlow's graphs, clusters and log around XLA;
- ``compiler_bridge.config``: the settings object (``settings``), read from the
  environment and the command line in one place.

The names most callers need are here too.
"""

from .config import Settings, SettingsError, settings
from .cross_compile import CompileError, compile_module
from .compare import CannotCompare, DumpComparison, KernelDelta, PairReport, compare_dumps
from .dumps import (
    Dump,
    DumpError,
    DumpFile,
    DumpModule,
    Store,
    StoreError,
    dump_target,
    module_target,
    open_dump,
    path_key,
    require_modules,
)
from .hlo import (
                  HloComputation,
                  HloInstruction,
                  HloModule,
                  HloParseError,
                  Layout,
                  Metadata,
                  Shape,
                  SourceLocation,
                  StackFrameIndex,
                  parse_hlo,
                  parse_hlo_bytes,
                  parse_shape,
)
from .passes import diff_modules, pass_timeline, step_diff
from .perf import TraceError, measure, runtime_report

__all__ = [
    "Dump", "DumpError", "DumpFile", "DumpModule", "open_dump", "path_key", "dump_target",
    "module_target", "require_modules",
    "HloComputation", "HloInstruction", "HloModule", "HloParseError", "Layout", "Metadata",
    "Shape", "SourceLocation", "StackFrameIndex", "parse_hlo", "parse_hlo_bytes",
    "parse_shape", "pass_timeline", "step_diff", "diff_modules", "runtime_report",
    "TraceError", "measure", "Store", "StoreError",
    "Settings", "SettingsError", "settings",
    "CompileError", "compile_module",
    "CannotCompare", "DumpComparison", "KernelDelta", "PairReport", "compare_dumps",
]
