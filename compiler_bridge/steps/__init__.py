"""Pass steps, whatever ran the passes: a timeline of snapshots (an HLO module's per-pass
files, or a TF graph's dumps around XLA clustering), each with its counts, and the
side-by-side text diff rows both kinds of diff produce. ``compiler_bridge.passes`` builds
HLO timelines and diffs, ``compiler_bridge.tf`` TF graph ones; the pass stepper draws either.

Imports no sibling but the ``dumps`` face.
"""

from __future__ import annotations

from .model import (GRAPH_PASS, HLO, STABLEHLO_INDEX, TF_GRAPH, Step, Timeline,
                    change_counts)
from .text import ComputationTextDiff, TextRow, fold_rows, line_rows

__all__ = [
    "ComputationTextDiff",
    "GRAPH_PASS",
    "HLO",
    "STABLEHLO_INDEX",
    "Step",
    "TF_GRAPH",
    "TextRow",
    "Timeline",
    "change_counts",
    "fold_rows",
    "line_rows",
]
