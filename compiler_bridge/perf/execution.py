"""Which instructions run as kernels, and how often. A *kernel* is an instruction that
runs on its own and gets timed: an instruction of the ENTRY computation or of a
computation that control flow runs (``while`` body/condition, ``conditional`` branches,
``call``), other than the free ones (parameter, constant, tuple, get-tuple-element,
bitcast...); fused computations are costed as part of their fusion, never on their own.
Also the opcode classes the cost rules share, single-kernel calls, a loop's trip count
and each computation's runs per step.
"""

from __future__ import annotations

from ..hlo import HloComputation, HloInstruction, HloModule
from ..targets import is_single_kernel_call

# Instructions that never become a kernel of their own.
FREE_OPCODES = frozenset({
    "parameter", "constant", "get-tuple-element", "tuple", "bitcast", "after-all",
    "add-dependency", "opt-barrier", "domain", "get-dimension-size", "set-dimension-size",
})
# Control flow: the instruction's called computations run as kernels of their own.
CONTROL_FLOW = frozenset({"while", "conditional", "call", "async-start", "async-update",
                          "async-done"})

TRANSCENDENTAL = frozenset({
    "exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic",
    "rsqrt", "sqrt", "cbrt", "sine", "cosine", "tan", "atan2", "power", "erf",
})
# Far dearer on XLA:CPU than exp or tanh (a profile may measure them apart: trig_flops).
TRIGONOMETRIC = frozenset({"sine", "cosine", "tan"})
ELEMENTWISE = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "compare", "select",
    "and", "or", "xor", "not", "negate", "abs", "sign", "floor", "ceil", "round-nearest-afz",
    "round-nearest-even", "remainder", "clamp", "convert", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "popcnt", "count-leading-zeros",
    "is-finite", "real", "imag", "complex", "reduce-precision", "stochastic-convert",
    "bitcast-convert",
})
DATA_MOVEMENT = frozenset({
    "broadcast", "reshape", "transpose", "copy", "slice", "dynamic-slice",
    "dynamic-update-slice", "concatenate", "pad", "gather", "iota", "reverse", "bitcast",
    "copy-start", "copy-done",
})
SLICING = frozenset({"slice", "dynamic-slice", "gather"})

# A while loop whose trip count XLA does not know is assumed to run this many times.
UNKNOWN_TRIP_COUNT = 10


def executed_computations(module: HloModule) -> list[HloComputation]:
    """ENTRY and every computation that control flow runs from it, in module order."""
    if module.entry is None:
        return []
    seen = {module.entry.name}
    stack = [module.entry]
    while stack:
        comp = stack.pop()
        for inst in comp.instructions:
            if inst.opcode in CONTROL_FLOW and not is_single_kernel_call(inst):
                for callee in inst.called_names:
                    c = module.get_computation(callee)
                    if c is not None and c.name not in seen and not c.is_fusion:
                        seen.add(c.name)
                        stack.append(c)
    return [c for c in module.computations if c.name in seen]


def kernels(module: HloModule) -> list[HloInstruction]:
    """Instructions that run as kernels (see the module docstring), in schedule order."""
    return [inst for comp in executed_computations(module) for inst in comp.instructions
            if inst.opcode not in FREE_OPCODES]


def runs_per_step(module: HloModule) -> dict[str, tuple[float, bool]]:
    """Computation name -> (times it runs per execution of the module, whether that is
    known): the entry once; a while loop's body once per trip and its condition once
    more (the trip count XLA wrote in the loop's backend config; a loop without one
    counts UNKNOWN_TRIP_COUNT trips, not known); each branch of a conditional once (at
    most: an upper bound, not known); what a call calls as often as the call runs. Only
    computations control flow runs (``executed_computations``) are counted."""
    executed = {c.name: c for c in executed_computations(module)}
    if module.entry is None or not executed:
        return {}
    calls: dict[str, list[tuple[str, float, bool]]] = {}   # caller -> (callee, times, known)
    waiting = dict.fromkeys(executed, 0)                     # callee -> callers not yet done
    for comp in executed.values():
        for inst in comp.instructions:
            if inst.opcode not in CONTROL_FLOW or is_single_kernel_call(inst):
                continue
            trips = trip_count(inst) if inst.opcode == "while" else None
            for callee in inst.called_names:
                if callee not in executed:
                    continue
                if inst.opcode == "while":
                    times = float(trips if trips is not None else UNKNOWN_TRIP_COUNT)
                    times += 1.0 if callee == inst.condition else 0.0
                    ok = trips is not None
                else:
                    times, ok = 1.0, inst.opcode != "conditional"
                calls.setdefault(comp.name, []).append((callee, times, ok))
                waiting[callee] += 1
    # callers before callees (a computation's runs are its callers' summed)
    runs: dict[str, tuple[float, bool]] = {module.entry.name: (1.0, True)}
    ready = [module.entry.name]
    while ready:
        name = ready.pop()
        n, known = runs.get(name, (0.0, True))
        for callee, times, ok in calls.get(name, []):
            before, was = runs.get(callee, (0.0, True))
            runs[callee] = (before + n * times, was and known and ok)
            waiting[callee] -= 1
            if waiting[callee] == 0:
                ready.append(callee)
    return runs


def trip_count(inst: HloInstruction) -> int | None:
    cfg = inst.backend_config if "backend_config" in inst.attributes else None
    if isinstance(cfg, dict):
        n = (cfg.get("known_trip_count") or {}).get("n")
        try:
            return int(n) if n is not None else None
        except (TypeError, ValueError):
            return None
    return None
