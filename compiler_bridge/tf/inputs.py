"""A TF module's input shapes, from its ENTRY parameters: a jit_compile function
retraced at other shapes compiles to modules whose names differ only by a number
(``a_inference_f_29__.3``, ``..._41__.5``); their inputs tell them apart."""

from __future__ import annotations

from ..dumps import AFTER, Dump, DumpModule
from ..hlo import HloParseError


def module_inputs(dump: Dump, module: DumpModule) -> str:
    """'f32[4,8], f32[8]' (ENTRY parameters in order, without layout); '' when the module
    has no HLO text that reads (its error is in ``dump.errors``)."""
    f = module.before_optimizations or module.first(AFTER)
    if f is None:
        return ""
    try:
        entry = dump.parse(f.path).entry
    except HloParseError:
        return ""
    return ", ".join(p.shape.without_layout() for p in entry.parameters)
