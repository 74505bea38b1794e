"""Pass timelines and diffs: the per-pass snapshots of one module as steps, and what
changed between any two modules (instructions, attributes, text).
"""

from __future__ import annotations

from .diff import (
    KINDS,
    ComputationTextDiff,
    InstructionChange,
    ModuleDiff,
    TextRow,
    diff_modules,
    text_diff,
)
from .timeline import (
    PER_PASS_FLAG,
    PER_PASS_HINT,
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
