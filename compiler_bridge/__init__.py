"""compiler_bridge: everything that reads XLA's output. Never imports streamlit or viz.

Four sub-packages, each with its own face (its ``__init__``):

- ``compiler_bridge.hlo``: the HLO model, parser, printer and analyses;
- ``compiler_bridge.dumps``: dump folders and archives, and the store behind links;
- ``compiler_bridge.passes``: pass timelines and module diffs;
- ``compiler_bridge.perf``: traces, cost models and runtime reports.

(and ``steps``, the pass timeline model HLO passes and TF graph dumps share; ``tf``, the
TensorFlow graphs; ``memory``).

The names most callers need are here too.
"""

from .config import Settings, SettingsError, settings
from .comparison import CannotCompare, DumpComparison, KernelDelta, PairReport, compare_dumps
from .dumps import (
    Dump,
    DumpError,
    DumpFile,
    DumpModule,
    Store,
    StoreError,
    open_dump,
    path_key,
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
    "Dump", "DumpError", "DumpFile", "DumpModule", "open_dump", "path_key",
    "HloComputation", "HloInstruction", "HloModule", "HloParseError", "Layout", "Metadata",
    "Shape", "SourceLocation", "StackFrameIndex", "parse_hlo", "parse_hlo_bytes",
    "parse_shape", "pass_timeline", "step_diff", "diff_modules", "runtime_report",
    "TraceError", "measure", "Store", "StoreError",
    "Settings", "SettingsError", "settings",
    "CannotCompare", "DumpComparison", "KernelDelta", "PairReport", "compare_dumps",
]
