"""XLA's own estimates of a module's time, beside the roofline: predictions both, never
measurements.

- XLA:TPU writes each kernel's ``estimated_cycles`` (its cost model's count, in the chip's
  clock) into the fusion's ``window_config`` in ``after_codegen.txt``; at the profile's
  ``clock_hz`` they are microseconds.
- ``compiled.cost_analysis()["optimal_seconds"]`` is XLA's estimate of the whole module (on
  TPU; absent on CPU and GPU; a negative value is XLA's "not known"). A dump does not hold
  it: it is read from the ``xla_facts.json`` that ``make samples-backends`` and
  ``python -m compiler_bridge compile`` write beside the dump.

:func:`agreement` reports, per module, how the roofline and XLA's estimates agree: Kendall's
tau over the kernels both price (do they order the kernels alike?) and the ratio of their
totals (roofline / XLA), each kernel weighted by its executions per step.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Sequence

from . import metrics as M
from ..dumps import AFTER_CODEGEN, Dump, DumpModule
from ..hlo import HloModule, HloParseError
from ..targets import cycles_to_us, window_config

FACTS = "xla_facts.json"
def estimated_cycles(module: HloModule) -> dict[str, int]:
    """Instruction name -> XLA:TPU's ``estimated_cycles`` in an after-codegen module (the
    instructions whose backend config carries a window config: ``targets.window_config``,
    the reader the kernels command lists them with)."""
    out: dict[str, int] = {}
    for inst in module.instructions():
        window = window_config(inst)
        if window is not None and window.estimated_cycles is not None:
            out[inst.name] = window.estimated_cycles
    return out


def module_cycles(dump: Dump, module: DumpModule) -> dict[str, int]:
    """The estimated cycles of the module's after-codegen file ({} when it has none or it
    cannot be read)."""
    f = module.first(AFTER_CODEGEN)
    if f is None:
        return {}
    try:
        return estimated_cycles(dump.parse(f.path))
    except HloParseError:
        return {}


def optimal_seconds(dump: Dump, module: DumpModule) -> float | None:
    """XLA's ``optimal_seconds`` of the module from the dump's ``xla_facts.json`` (the module
    matched by its files' prefix ``module_NNNN.<name>``); None when there is none, it is not
    a number, or XLA did not know (negative)."""
    facts = next((f for f in dump.files if f.name == FACTS and f.module_id is None), None)
    if facts is None:
        return None
    try:
        data = json.loads(dump.read_text(facts.path))
    except (OSError, KeyError, ValueError):
        return None
    prefix = f"module_{module.id}."
    for entry in data.get("modules", []) if isinstance(data, dict) else []:
        if not isinstance(entry, dict) or not str(entry.get("files", "")).startswith(prefix):
            continue
        value = (entry.get("cost_analysis") or {}).get("optimal_seconds")
        if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
            return float(value)
    return None


@dataclass(frozen=True)
class Agreement:
    """How the roofline and XLA's own estimates agree on one module (all predictions)."""

    module_id: str
    kernels: int                    # kernels both price
    kendall_tau: float | None       # roofline vs XLA's estimated cycles, per kernel
    ratio: float | None             # roofline / XLA, summed over those kernels
    roofline_us: float              # the roofline's total over those kernels
    xla_us: float | None            # XLA's estimated cycles over them at the chip's clock
    clock_hz: float
    step_roofline_us: float         # the roofline's whole step
    optimal_us: float | None        # XLA's optimal_seconds, in µs
    optimal_ratio: float | None     # step roofline / optimal_seconds

    def to_json(self) -> dict:
        return {"module_id": self.module_id, "kernels": self.kernels,
                "kendall_tau": self.kendall_tau, "ratio": self.ratio,
                "roofline_us": self.roofline_us, "xla_estimate_us": self.xla_us,
                "clock_hz": self.clock_hz or None, "step_roofline_us": self.step_roofline_us,
                "optimal_seconds_us": self.optimal_us, "optimal_ratio": self.optimal_ratio,
                "note": "predictions both: the roofline against XLA's own cost model, "
                        "not a measurement"}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def agreement(module_id: str, rows: Sequence, cycles: dict[str, int], clock_hz: float,
              optimal: float | None) -> Agreement | None:
    """The agreement of the module's kernel rows (``KernelRow``: ``instruction``,
    ``roofline_us``, ``runs``) with XLA's estimated cycles and ``optimal_seconds``; None
    when XLA gave neither."""
    if not cycles and optimal is None:
        return None
    both = [r for r in rows if r.instruction in cycles]
    roof = [r.roofline_us for r in both]
    xla = [float(cycles[r.instruction]) for r in both]
    tau = _finite(M.kendall_tau(roof, xla)) if len(both) >= 2 else None
    roof_total = sum(r.roofline_us * r.runs for r in both)
    xla_total = cycles_to_us(sum(cycles[r.instruction] * r.runs for r in both), clock_hz) \
        if both else None
    step = sum(r.roofline_us * r.runs for r in rows)
    optimal_us = optimal * 1e6 if optimal is not None else None
    return Agreement(
        module_id, len(both), tau,
        roof_total / xla_total if xla_total else None, roof_total, xla_total, clock_hz,
        step, optimal_us, step / optimal_us if optimal_us else None)
