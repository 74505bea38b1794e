"""Where the time goes: profiler traces matched to kernels (measured), roofline and learned
cost models (predicted), their agreement metrics, calibration and the runtimes CLI.

Measured: ``trace_events`` (what a reader yields), ``chrome_trace`` and ``xplane_trace``
(the readers), ``trace_files`` (finding and reading a dump's traces), ``attribution``
(self time, overlap), ``traces`` (events matched to instructions, timings per kernel).
Predicted: ``execution`` (which instructions are kernels, how often), ``flops``,
``costs`` (bytes, ``KernelCost``), ``roofline`` and ``devices`` (time on a device
profile), ``xla_costs`` (XLA's totals, the check of our counting); the learned models'
``features``, ``kernel_graphs``, ``dataset`` and ``training``, their base ``model_base``,
the kinds ``mlp``, ``graph_model`` and ``boosted``, ``model_loader`` (reads any kind) and
``evaluation``. Then ``metrics`` (agreement), ``trace_fit`` (the predictor corrected for the
machine that made the trace, scored on held-out kernels), ``runtimes`` (the report the CLI
and the app show), ``calibrate`` and ``profile_runner`` (measuring this machine, profiling a script),
``cli`` (the runtime commands). Results derived from one module (kernel costs, schedule
positions, program context) are kept with it, in ``HloModule.derived``.
"""

from __future__ import annotations

from .calibrate import calibrate, ensure_calibrated
from .cli import add_runtime_commands
from .costs import KernelCost, kernel_cost, module_costs
from .execution import kernels, runs_per_step
from .roofline import roofline_us
from .xla_costs import CostTotals, xla_cost_totals
from .devices import (
    BUILTIN,
    CPU,
    DeviceProfile,
    device_profile,
    load_profile,
    profile_for_module,
    profile_for_platform,
)
from .model_loader import default_model_path, load_model, shipped_model_path
from .metrics import HIGHER_IS_BETTER, METRICS
from .runtimes import KernelRow, RuntimeReport, StepTime, rate_note, runtime_report
from .trace_events import TraceError
from .trace_files import TraceSource, read_trace, read_trace_file, trace_sessions, uploaded
from .traces import measure, percentile

__all__ = [
    "BUILTIN",
    "CostTotals",
    "CPU",
    "DeviceProfile",
    "HIGHER_IS_BETTER",
    "KernelCost",
    "KernelRow",
    "METRICS",
    "RuntimeReport",
    "StepTime",
    "TraceError",
    "TraceSource",
    "add_runtime_commands",
    "calibrate",
    "default_model_path",
    "device_profile",
    "ensure_calibrated",
    "kernel_cost",
    "kernels",
    "load_model",
    "load_profile",
    "measure",
    "module_costs",
    "percentile",
    "profile_for_module",
    "profile_for_platform",
    "rate_note",
    "read_trace",
    "read_trace_file",
    "roofline_us",
    "runs_per_step",
    "xla_cost_totals",
    "runtime_report",
    "shipped_model_path",
    "trace_sessions",
    "uploaded",
]
