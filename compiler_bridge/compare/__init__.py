"""Every dump-vs-dump comparison: two compiles side by side (two dumps made with other
flags, JAX/XLA versions or commits, or two compiles of one jit function in one dump).

``modules`` (modules paired by name and structure, a dump's recompilations, counts and
the diff of a pair), ``flags`` (the XLA flags each dump was made with, and which differ),
``versions`` (the JAX/jaxlib versions a profiler trace records), ``dumps``
(``compare_dumps``: all of it for two dumps, with memory totals and measured times; the
``compare`` command's report).
"""

from __future__ import annotations

from .dumps import CannotCompare, DumpComparison, KernelDelta, PairReport, compare_dumps
from .flags import FlagsDiff, flags_diff
from .modules import (
    Counts,
    ModuleComparison,
    ModulePair,
    Pairing,
    Recompilation,
    chosen_pair,
    compare_modules,
    pair_modules,
    recompilations,
)
from .versions import dump_versions

__all__ = [
    "CannotCompare",
    "Counts",
    "DumpComparison",
    "FlagsDiff",
    "KernelDelta",
    "ModuleComparison",
    "ModulePair",
    "PairReport",
    "Pairing",
    "Recompilation",
    "chosen_pair",
    "compare_dumps",
    "compare_modules",
    "dump_versions",
    "flags_diff",
    "pair_modules",
    "recompilations",
]
