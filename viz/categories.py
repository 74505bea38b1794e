"""Opcode categories and their colours, shared by the graph, legend and plots."""

from __future__ import annotations

from compiler_bridge.hlo import layout_change
from compiler_bridge.spmd import COLLECTIVE_OPCODES

ELEMENTWISE = "elementwise"
REDUCTION = "reduction"
DOT_CONV = "dot/conv"
DATA_MOVEMENT = "data movement"
CONTROL_FLOW = "control flow"
COLLECTIVE = "collective"
CUSTOM_CALL = "custom call"
PARAMETER_CONSTANT = "parameter/constant"
FUSION = "fusion"
OTHER = "other"

# Fill colours: light, distinguishable, readable with black text (Okabe-Ito inspired).
COLORS = {
    ELEMENTWISE: "#cfe8fc",
    REDUCTION: "#ffe3b3",
    DOT_CONV: "#f9c6c9",
    DATA_MOVEMENT: "#d9f2d0",
    CONTROL_FLOW: "#e4d7f5",
    COLLECTIVE: "#fff3a8",
    CUSTOM_CALL: "#f4cce8",
    PARAMETER_CONSTANT: "#e9ecef",
    FUSION: "#ffffff",
    OTHER: "#f1f3f5",
}
# Border colour of a fusion node: the colour of its hero's category, darker.
BORDERS = {
    ELEMENTWISE: "#1c7ed6", REDUCTION: "#e8590c", DOT_CONV: "#c92a2a",
    DATA_MOVEMENT: "#2b8a3e", CONTROL_FLOW: "#7048e8", COLLECTIVE: "#d4a300",
    CUSTOM_CALL: "#a61e4d", PARAMETER_CONSTANT: "#868e96", FUSION: "#495057",
    OTHER: "#868e96",
}

_BY_OPCODE: dict[str, str] = {}
for _cat, _ops in {
    REDUCTION: "reduce reduce-window select-and-scatter sort topk scan",
    DOT_CONV: "dot convolution ragged-dot scaled-dot fft triangular-solve cholesky "
              "batch-norm-training batch-norm-inference batch-norm-grad",
    DATA_MOVEMENT: "copy copy-start copy-done transpose reshape dynamic-reshape bitcast broadcast "
                   "slice dynamic-slice dynamic-update-slice concatenate pad gather scatter "
                   "reverse get-tuple-element tuple set-dimension-size get-dimension-size",
    CONTROL_FLOW: "while conditional call async-start async-update async-done after-all "
                  "add-dependency opt-barrier domain infeed outfeed send send-done recv recv-done",
    COLLECTIVE: " ".join(sorted(COLLECTIVE_OPCODES)) + " partition-id replica-id",
    CUSTOM_CALL: "custom-call",
    PARAMETER_CONSTANT: "parameter constant iota rng rng-bit-generator rng-get-and-update-state",
    FUSION: "fusion",
}.items():
    for _op in _ops.split():
        _BY_OPCODE[_op] = _cat

# Ranking used to pick a fusion's hero: the op that most likely dominates its cost.
_HERO_RANK = {DOT_CONV: 0, COLLECTIVE: 1, CUSTOM_CALL: 2, REDUCTION: 3, DATA_MOVEMENT: 5,
              ELEMENTWISE: 4, CONTROL_FLOW: 6, PARAMETER_CONSTANT: 9, OTHER: 8, FUSION: 7}


def category(opcode: str) -> str:
    """The category of an opcode; async '-start'/'-done' forms follow their base op."""
    cat = _BY_OPCODE.get(opcode)
    if cat is not None:
        return cat
    for suffix in ("-start", "-update", "-done"):
        if opcode.endswith(suffix) and opcode[: -len(suffix)] in _BY_OPCODE:
            return _BY_OPCODE[opcode[: -len(suffix)]]
    return ELEMENTWISE


def layout_change_reason(inst, module) -> str:
    """Why a node changes layout ('' when it does not): a copy, transpose or bitcast
    itself, or a fusion through the first fused op that does (the fusion node is what
    is drawn, and what runs)."""
    try:
        change = layout_change(inst)
        if change is not None:
            return change.reason
        if inst.opcode == "fusion" and inst.called_names and module is not None:
            fused = module.get_computation(inst.called_names[0])
            for i in fused.instructions if fused is not None else ():
                change = layout_change(i)
                if change is not None:
                    return f"fused {i.name}: {change.reason}"
    except (ValueError, KeyError, AttributeError):   # an odd shape: no verdict
        return ""
    return ""


def fused_ops(instructions) -> int:
    """A fusion's size, the one count the label, inspector and tables show: the
    instructions of its fused computation other than parameters ("ops")."""
    return sum(1 for i in instructions if i.opcode != "parameter")


def hero_category(opcodes: list[str]) -> str:
    """The category that names a fusion: its most expensive kind of fused op."""
    cats = [category(o) for o in opcodes]
    return min(cats, key=lambda c: _HERO_RANK.get(c, 8)) if cats else FUSION


LEGEND = [(c, COLORS[c]) for c in (ELEMENTWISE, REDUCTION, DOT_CONV, DATA_MOVEMENT,
                                   CONTROL_FLOW, COLLECTIVE, CUSTOM_CALL, PARAMETER_CONSTANT)]
