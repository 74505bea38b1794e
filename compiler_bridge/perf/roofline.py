"""A kernel's time on a device profile from its cost: ``max(flops / peak, bytes /
bandwidth) + overhead`` (launch, and per buffer for wide fusions), which term bounds it,
and the rates it runs at: the matmul rate for dots and library convolutions, a grouped or
generated-loop convolution's slower one (CPU profiles), FFTs and reduce-windows at their
measured rates, program outputs and freshly mapped pages at their bandwidths. Control
flow costs one dispatch per kernel its body runs.
"""

from __future__ import annotations

from .costs import KernelCost
from .devices import DeviceProfile
from .execution import CONTROL_FLOW, UNKNOWN_TRIP_COUNT

def control_iterations(cost: KernelCost) -> int:
    if cost.opcode == "while":
        return cost.trip_count if cost.trip_count is not None else UNKNOWN_TRIP_COUNT
    return 1


def roofline_us(cost: KernelCost, device: DeviceProfile) -> float:
    """``max(flops / peak, bytes / bandwidth) + overhead`` in µs for one execution.

    Control flow (``while``/``conditional``): its self time is dispatching the body's
    kernels (which are timed on their own), so one overhead per kernel the body runs
    per iteration, plus one."""
    if cost.opcode in CONTROL_FLOW and cost.buffers == 0:
        n = control_iterations(cost) * max(cost.loop_kernels, 1)
        return device.launch_overhead_us * (n + 1)
    return max(compute_seconds(cost, device), memory_seconds(cost, device)) * 1e6 \
        + device.launch_overhead_us + device.per_buffer_us * cost.buffers


def compute_seconds(cost: KernelCost, device: DeviceProfile) -> float:
    """Flops (transcendentals at their cost in flops) over the peak: the matmul rate for
    dots and library convolutions (a grouped one: ``grouped_conv_flops``; one in generated
    loops: the vector rate of one thread), else the vector rate of one thread times the
    threads the kernel is split over, up to the device's measured parallel speed-up. Where
    the profile measured them: an FFT's transforms at ``fft_flops``, reduce-windows in
    generated loops at ``window_flops``."""
    if cost.fft_work > 0 and device.fft_flops > 0:
        return cost.fft_work / device.fft_flops
    windows = 0.0
    if cost.window_flops > 0 and device.window_flops > 0:
        windows = min(cost.window_flops, cost.flops)
    slow = slow_conv_rate(cost, device)
    if slow is not None:
        peak = slow
    elif cost.matmul:
        peak = device.matmul_rate(cost.dtype)
    else:
        peak = device.vector_flops * min(float(max(cost.partitions, 1)),
                                         max(device.threads, 1.0))
    if peak <= 0:
        return 0.0
    rest = (cost.flops - windows + transcendental_work(cost, device)) / peak
    return rest + (windows / device.window_flops if windows else 0.0)


def slow_conv_rate(cost: KernelCost, device: DeviceProfile) -> float | None:
    """The flop rate of a convolution XLA:CPU runs outside its libraries: a grouped one at
    the profile's ``grouped_conv_flops`` (the vector rate when it has none), one out of the
    library's dimension order at the vector rate of one thread; None for any other kernel,
    and on GPUs, whose libraries take any convolution."""
    path = cost.conv_path if device.kind == "cpu" else ""
    if path == "grouped" and device.grouped_conv_flops > 0:
        return device.grouped_conv_flops
    if path in ("grouped", "loops"):
        return device.vector_flops
    return None


def transcendental_work(cost: KernelCost, device: DeviceProfile) -> float:
    """The kernel's transcendentals in flops: each at the profile's cost of one (tanh),
    sines, cosines and tangents at theirs (``trig_flops``) when it has one."""
    trig = min(cost.trig, cost.transcendentals)
    per_trig = device.trig_flops or device.transcendental_flops
    return (cost.transcendentals - trig) * device.transcendental_flops + trig * per_trig


def memory_seconds(cost: KernelCost, device: DeviceProfile) -> float:
    """Bytes over bandwidth: the working set's bandwidth (caches) for everything, except
    bytes written into a program output at ``output_bandwidth`` and into pages of a large
    temp allocation mapped fresh this run at ``fresh_bandwidth``, when the profile has
    them."""
    bw = device.bandwidth_for(cost.bytes)
    if bw <= 0:
        return 0.0
    seconds, rest = 0.0, cost.bytes
    if device.output_bandwidth > 0 and cost.output_bytes > 0:
        seconds += cost.output_bytes / min(device.output_bandwidth, bw)
        rest -= cost.output_bytes
    fresh_bw = device.fresh_rate
    if fresh_bw > 0 and cost.fresh_bytes > 0:
        seconds += cost.fresh_bytes / min(fresh_bw, bw)
        rest -= cost.fresh_bytes
    return seconds + max(rest, 0.0) / bw


def bound(cost: KernelCost, device: DeviceProfile) -> str:
    """'compute', 'memory' or 'overhead': which term of the roofline is largest."""
    if cost.opcode in CONTROL_FLOW and cost.buffers == 0:
        return "overhead"
    compute = compute_seconds(cost, device) * 1e6
    memory = memory_seconds(cost, device) * 1e6
    overhead = device.launch_overhead_us + device.per_buffer_us * cost.buffers
    return max((compute, "compute"), (memory, "memory"), (overhead, "overhead"))[1]
