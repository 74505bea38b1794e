"""What every trace reader produces: :class:`OpEvent` (one executed HLO op as the profiler
recorded it: module name, instruction, run, thread, start and duration),
:class:`RawTrace` (one file's op events and XLA:CPU's ``end: <op>`` completion markers),
and :class:`TraceError` for a trace that cannot be used.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# A nested event may end this much (µs) after its parent and still count as nested
# (timestamps are rounded to the nanosecond).
EPS_US = 1e-3
END_MARKER = "end: "     # XLA:CPU's completion marker of an op: 'end: <op name>'


class TraceError(ValueError):
    """A trace that cannot be used: unreadable, without per-op events, or of another program.

    ``str()`` starts with the file name: ``perfetto_trace.json.gz: not a readable trace
    (truncated gzip: ...)``.
    """

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        self.message = message
        super().__init__(f"{source}: {message}")


# --------------------------------------------------------------------------- raw events

@dataclass(slots=True)
class OpEvent:
    """One executed HLO op, as the profiler recorded it."""

    module: str                 # args.hlo_module (a module *name*)
    op: str                     # args.hlo_op (an instruction name)
    run: str                    # '<session>#<run_id>': one execution of the program
    thread: str                 # events nest only within one thread
    start_us: float
    dur_us: float
    program_id: int | None = None   # xplane only: the dump's module id
    self_us: float = 0.0        # dur_us minus the op events nested directly inside
    parent: int = -1            # index of the enclosing op event on the same thread, or -1
    async_us: float | None = None   # start to completion, for an op that ran asynchronously
    process: str = ""           # events of one process share completion markers
    device: str = ""            # args.device_ordinal: a sharded program's devices share a run

    @property
    def end_us(self) -> float:
        return self.start_us + self.dur_us


@dataclass(slots=True)
class RawTrace:
    """The per-op events of one trace file (self times computed)."""

    source: str                 # the file's name or path, for messages
    format: str                 # 'chrome' | 'xplane'
    events: list[OpEvent]
    other_events: int = 0       # complete events that are not HLO ops (Python, runtime)
    # XLA:CPU's thunk executor marks each op's completion with an 'end: <op>' event:
    # (process, op) -> [(ts µs, thread)], sorted
    markers: dict = field(default_factory=dict)


def sorted_markers(markers: dict) -> dict:
    return {k: sorted(v) for k, v in markers.items()}
