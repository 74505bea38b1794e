"""Pass timelines and diffs: the per-pass snapshots of one module as steps, and what
changed between any two modules (instructions, attributes, text).

``timeline`` (steps, step diffs, an instruction's history), ``diff`` (``diff_modules``),
``pairing`` (how it pairs instructions), ``changes`` (its result types), ``textdiff``
(the side-by-side text). Two compiles compared (modules of two dumps paired, flags,
versions) live in ``compiler_bridge.compare``.
"""

from __future__ import annotations

from .changes import KINDS, InstructionChange, ModuleDiff
from .diff import diff_modules
from .textdiff import ComputationTextDiff, TextRow, text_diff
from .timeline import (
    PER_PASS_FLAG,
    PER_PASS_HINT,
    STABLEHLO_INDEX,
    HistoryEvent,
    Step,
    Timeline,
    instruction_history,
    module_counts,
    pass_timeline,
    step_changes,
    step_diff,
    timeline_json,
)

__all__ = [
    "ComputationTextDiff",
    "HistoryEvent",
    "InstructionChange",
    "KINDS",
    "ModuleDiff",
    "PER_PASS_FLAG",
    "PER_PASS_HINT",
    "STABLEHLO_INDEX",
    "Step",
    "TextRow",
    "Timeline",
    "diff_modules",
    "instruction_history",
    "module_counts",
    "pass_timeline",
    "step_changes",
    "step_diff",
    "text_diff",
    "timeline_json",
]
