"""Measured kernel runtimes: the op events of a dump's JAX profiler traces (read by
``trace_files``) matched to the instructions of its after-optimizations HLO (module by
name or program id, run by run), timed by ``attribution`` (own and charged time, an
asynchronous thunk's wait bounded by its first consumer's start) and aggregated per
kernel (:class:`KernelTiming`), module (:class:`ModuleTimings`: step times and the
timeline's slices) and dump (:class:`Measured`, with what matched nothing and why).

Nothing here invents numbers: a module with no events is listed as such, an event that
matches no instruction is counted and listed, and a trace that has no per-op events (JAX
0.4.30 on CPU), matches nothing in the dump, or runs a module of the dump's name with
instructions it lacks (a trace of another program: every JAX program's module is
``jit_<function>``) raises :class:`TraceError` naming the file.
"""

from __future__ import annotations

import bisect
import os
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .attribution import ASYNC_OPCODES, attribute, depths
from .trace_events import EPS_US, OpEvent, RawTrace, TraceError
from .trace_files import TraceSource, trace_sessions
from ..dumps import AFTER, Dump, DumpModule, open_dump
from ..hlo import walk_through

# --------------------------------------------------------------------------- aggregation

OUTLIER_FACTOR = 3.0     # a run over this many times a kernel's median run is an outlier
FOREIGN_SHARE = 0.25     # a run with this share of its ops not its module's is another program's


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default method), q in [0, 100]."""
    xs = sorted(values)
    if not xs:
        raise ValueError("percentile of no values")
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass
class KernelTiming:
    """One instruction's measured self times over all executions and runs (µs)."""

    module_id: str
    instruction: str
    opcode: str
    computation: str
    per_run: dict[str, list[float]]     # run -> own time of each execution in that run
    # run -> the executions' part of the run's wall time (see attribute): equal to the
    # sum of per_run's times unless the kernel ran alongside others
    charged: dict[str, float] = field(default_factory=dict)
    # run -> each execution's start to its completion: its event, and for an asynchronous
    # thunk the work on the thread pool after it, whoever owns the thread meanwhile
    work: dict[str, list[float]] = field(default_factory=dict)

    @property
    def samples(self) -> list[float]:
        return [x for xs in self.per_run.values() for x in xs]

    @property
    def count(self) -> int:
        return sum(len(xs) for xs in self.per_run.values())

    @property
    def runs(self) -> int:
        return len(self.per_run)

    @property
    def executions_per_run(self) -> float:
        return statistics.median(len(xs) for xs in self.per_run.values())

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples)

    @property
    def p10_us(self) -> float:
        return percentile(self.samples, 10)

    @property
    def p90_us(self) -> float:
        return percentile(self.samples, 90)

    @property
    def min_us(self) -> float:
        return min(self.samples)

    @property
    def total_us(self) -> float:
        return sum(self.samples)

    @property
    def max_us(self) -> float:
        return max(self.samples)

    def outlier_runs(self, factor: float = OUTLIER_FACTOR) -> int:
        """Runs in which the kernel's time (its executions' own times summed) was over
        ``factor`` times its median run's: what lifts a mean per step far above the
        median per execution."""
        totals = [sum(v) for v in self.per_run.values()]
        if len(totals) < 2:
            return 0
        mid = statistics.median(totals)
        return sum(1 for t in totals if t > factor * mid)

    @property
    def work_us(self) -> float:
        """Median start-to-completion time per execution (own time without work records):
        the time the kernel's work took, what a flop rate is computed from."""
        xs = [x for v in self.work.values() for x in v]
        return statistics.median(xs) if xs else self.median_us

    @property
    def charged_us(self) -> float:
        """Its part of the step time, summed over runs (see :func:`attribute`)."""
        return sum(self.charged.values()) if self.charged else self.total_us

    @property
    def overlap(self) -> float:
        """Share of its own time during which other kernels ran too (0 = none)."""
        own = self.total_us
        return max(0.0, 1.0 - self.charged_us / own) if own > 0 else 0.0

    def stat(self, name: str = "median") -> float:
        return {"median": self.median_us, "p10": self.p10_us, "p90": self.p90_us,
                "min": self.min_us, "mean": self.total_us / max(self.count, 1)}[name]

    def halves(self, stat: str = "median") -> tuple[float, float] | None:
        """The statistic over two disjoint halves of the data, or None when there is too
        little: alternate profiling sessions when there are several (a session minutes
        later differs more than two runs of one session: the honest spread), else
        alternate runs, else alternate executions."""
        runs = sorted(self.per_run)
        if len(runs) >= 2:
            first, second = split_runs(runs)
            a = [x for r in first for x in self.per_run[r]]
            b = [x for r in second for x in self.per_run[r]]
        else:
            xs = self.samples
            a, b = xs[0::2], xs[1::2]
        if not a or not b:
            return None
        return _stat(a, stat), _stat(b, stat)


def split_runs(runs: list[str]) -> tuple[list[str], list[str]]:
    """Two disjoint halves of a set of runs ('<session>#<id>'): alternate profiling
    sessions when there are several, else alternate runs."""
    runs = sorted(runs)
    sessions = sorted({r.rpartition("#")[0] for r in runs})
    if len(sessions) >= 2:
        first = set(sessions[0::2])
        return ([r for r in runs if r.rpartition("#")[0] in first],
                [r for r in runs if r.rpartition("#")[0] not in first])
    return runs[0::2], runs[1::2]


def _stat(xs: list[float], name: str) -> float:
    if name == "median":
        return statistics.median(xs)
    if name == "min":
        return min(xs)
    if name == "mean":
        return sum(xs) / len(xs)
    return percentile(xs, {"p10": 10, "p90": 90}[name])


@dataclass(frozen=True, slots=True)
class Slice:
    """One op execution of one run, placed in time (µs from the run's start): what a
    trace timeline draws."""

    instruction: str
    thread: str
    depth: int          # nesting on its thread (0: top level; a while's body ops: 1)
    start_us: float
    end_us: float       # its event's end
    done_us: float      # its completion: after end_us for an asynchronous thunk
    own_us: float       # see attribute()
    charged_us: float

    @property
    def overlapped(self) -> bool:
        return self.own_us - self.charged_us > max(0.05 * self.own_us, EPS_US)


@dataclass
class ModuleTimings:
    """Everything measured for one dump module."""

    module_id: str
    name: str
    kernels: dict[str, KernelTiming]
    step_us: dict[str, float]           # run -> wall time of the run (span of its op events)
    events: int = 0
    slices: dict[str, list[Slice]] = field(default_factory=dict)   # run -> its executions
    # run -> the devices its events came from (a sharded program runs on each device in
    # parallel within one run: its events share the run id)
    devices: dict[str, int] = field(default_factory=dict)

    def median_run(self) -> str | None:
        """The run whose step time is the median (the lower one of an even count)."""
        if not self.step_us:
            return None
        runs = sorted(self.step_us, key=lambda r: (self.step_us[r], r))
        return runs[(len(runs) - 1) // 2]

    @property
    def runs(self) -> list[str]:
        return sorted(self.step_us)

    @property
    def step_median_us(self) -> float:
        return statistics.median(self.step_us.values()) if self.step_us else 0.0

    def step_halves(self) -> tuple[float, float] | None:
        """The median step time over two disjoint halves of the runs (alternate profiling
        sessions when there are several), or None with fewer than two runs: the noise
        floor of comparing step times."""
        if len(self.step_us) < 2:
            return None
        a, b = split_runs(list(self.step_us))
        if not a or not b:
            return None
        return (statistics.median(self.step_us[r] for r in a),
                statistics.median(self.step_us[r] for r in b))

    @property
    def step_mean_us(self) -> float:
        return sum(self.step_us.values()) / len(self.step_us) if self.step_us else 0.0

    def share(self, instruction: str) -> float | None:
        """The kernel's share of step time: its charged time (time it ran alongside
        other kernels split between them, see :func:`attribute`) summed over runs, over
        the runs' wall time. That is its mean time per step over the mean step (only
        means add up), and shares of a module sum to at most 1."""
        k = self.kernels.get(instruction)
        total = sum(self.step_us.values())
        if k is None or total <= 0:
            return None
        return k.charged_us / total

    def executions_per_step(self, instruction: str) -> float | None:
        """The kernel's executions per step on one device: its executions over the
        module's runs, a run in which it did not run counting none (a conditional's
        branch taken in 1 of 4 runs: 0.25), each run's over the devices that ran it (a
        sharded program's devices each run the kernel once per step, in parallel)."""
        k = self.kernels.get(instruction)
        if k is None or not k.per_run or not self.step_us:
            return None
        return sum(len(k.per_run.get(r, ())) / max(self.devices.get(r, 1), 1)
                   for r in self.step_us) / len(self.step_us)

    def per_step_us(self, instruction: str) -> float | None:
        """The kernel's charged time per step, mean over runs: ``share * step_mean_us``."""
        k = self.kernels.get(instruction)
        if k is None or not self.step_us:
            return None
        return k.charged_us / len(self.step_us)


@dataclass(frozen=True, slots=True)
class Unmatched:
    """Events that name no instruction of the dump, grouped."""

    module: str
    op: str
    events: int
    reason: str         # 'no module named ...', 'module ... has no instruction ...'


@dataclass
class Measured:
    """The traces of a dump, matched to its modules and instructions."""

    sources: list[str]
    modules: dict[str, ModuleTimings]               # dump module id -> timings
    matched_events: int
    unmatched_events: int
    unmatched: list[Unmatched]
    modules_without_events: list[tuple[str, str]]   # (id, name) of compiled modules
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # trace files skipped (and why)

    def module(self, module_id: str) -> ModuleTimings | None:
        return self.modules.get(module_id)

    def kernel(self, module_id: str, instruction: str) -> KernelTiming | None:
        m = self.modules.get(module_id)
        return m.kernels.get(instruction) if m else None

    def summary(self) -> dict:
        return {
            "sources": self.sources,
            "matched_events": self.matched_events,
            "unmatched_events": self.unmatched_events,
            "modules": {mid: {"name": m.name, "runs": len(m.step_us), "events": m.events,
                              "kernels": len(m.kernels), "step_median_us": m.step_median_us}
                        for mid, m in self.modules.items()},
            "unmatched": [{"module": u.module, "op": u.op, "events": u.events,
                           "reason": u.reason} for u in self.unmatched],
            "modules_without_events": [{"id": i, "name": n}
                                       for i, n in self.modules_without_events],
            "notes": self.notes, "errors": self.errors,
        }


class _ModuleIndex:
    """Instruction names of one dump module's after-optimizations HLO."""

    def __init__(self, dump: Dump, module: DumpModule) -> None:
        self.id = module.id
        self.number = module.number
        self.name = module.name
        self.error = ""
        self.instructions: dict[str, tuple[str, str]] = {}   # name -> (opcode, computation)
        try:
            hlo = dump.stage(module, AFTER)
        except (KeyError, ValueError) as e:   # HloParseError is a ValueError
            self.error = str(e).splitlines()[0]
            return
        self.hlo = hlo
        for c in hlo.computations:
            for inst in c.instructions:
                self.instructions[inst.name] = (inst.opcode, c.name)
        self._consumers: dict[str, list[str]] = {}

    def consumers(self, name: str) -> list[str]:
        """Instructions that read ``name``'s result (through tuples, get-tuple-element and
        bitcasts, which run no kernel): they cannot start before it is done."""
        got = self._consumers.get(name)
        if got is not None:
            return got
        inst = self.hlo.find(name)
        users = inst.users if inst is not None else []
        out = [u.name for u in walk_through(users, ("tuple", "get-tuple-element", "bitcast"))]
        self._consumers[name] = out
        return out


def _held(m: _ModuleIndex, ops: set[str]) -> int:
    """How many of a run's ops the module has."""
    return sum(1 for o in ops if o in m.instructions)


def _pick_module(candidates: list[_ModuleIndex], ops: Iterable[str]) -> _ModuleIndex:
    ops = set(ops)
    return max(candidates, key=lambda m: (_held(m, ops), m.number))


def measure(dump: Dump, traces: Sequence[TraceSource | str] | None = None) -> Measured:
    """Read the dump's traces (or the given ones) and map every per-op event to its
    instruction in the dump's after-optimizations HLO.

    ``traces``: None -> every profiling session found inside the dump; else paths on disk
    or :class:`TraceSource` objects (uploaded bytes). Raises TraceError when no trace is
    found or readable, when the traces hold no per-op events, or when no event matches
    the dump (a trace of another program).
    """
    sources = _sources(dump, traces)
    raws: list[RawTrace] = []
    errors: list[str] = []
    ambiguous_names = _ambiguous_names(dump)
    for group in sources:
        raw, errs = _read_group(dump, group, ambiguous_names)
        errors += errs
        if raw is not None:
            raws.append(raw)
    if not raws:
        if len(errors) == 1:
            source, _, message = errors[0].partition(": ")
            raise TraceError(source, message)
        raise TraceError(sources[0][0].name if sources else dump.name,
                         "no trace could be read: " + "; ".join(errors))
    raws, same = _distinct(raws)
    events = [e for r in raws for e in r.events]
    names = ", ".join(r.source for r in raws)
    if not events:
        others = sum(r.other_events for r in raws)
        raise TraceError(names, f"the trace has no per-op events ({others} other events): "
                                "this JAX/XLA version or backend does not record HLO ops "
                                "(JAX 0.4.30 on CPU records only the executable), so no "
                                "kernel runtimes can be measured")
    out = _match(dump, raws, events, errors)
    out.notes += same
    return out


def _distinct(raws: list[RawTrace]) -> tuple[list[RawTrace], list[str]]:
    """The traces without those that repeat runs already read (one profile's JSON and
    xplane.pb, or one file given twice: the same executions, whose two halves would make
    a perfect noise floor), and a note for each one left out."""
    seen: dict[tuple[str, str], str] = {}
    kept, notes = [], []
    for r in raws:
        runs = {(e.module, e.run.rpartition("#")[2]) for e in r.events}
        first = next((seen[k] for k in runs if k in seen), None)
        if runs and first is not None and runs <= seen.keys():
            notes.append(f"{r.source}: the same runs as {first} (one profile's two files): "
                         "read once")
            continue
        for k in runs:
            seen.setdefault(k, r.source)
        kept.append(r)
    return kept, notes


def _sources(dump: Dump, traces) -> list[list[TraceSource]]:
    if traces is None:
        out = []
        for session, files in trace_sessions(dump).items():
            out.append([TraceSource(f.path, session or ".", f.path, "dump") for f in files])
        if not out:
            raise TraceError(dump.name, "no profiler trace in this dump (expected "
                                        "plugins/profile/<session>/perfetto_trace.json.gz "
                                        "or *.xplane.pb); run `python -m compiler_bridge "
                                        "profile` or add --trace")
        return out
    out = []
    for t in traces:
        if isinstance(t, TraceSource):
            out.append([t])
        elif os.path.isdir(path := os.fspath(t)):
            out.extend(_folder_sessions(path))
        else:
            out.append([TraceSource(path, path, path, "file")])
    return out


def _folder_sessions(folder: str) -> list[list[TraceSource]]:
    """A folder given as a trace (the profiler's output, ``jax.profiler.trace(DIR)``):
    the trace files under it, by profiling session, as a dump's own are read."""
    sessions = trace_sessions(open_dump(folder))
    if not sessions:
        raise TraceError(folder, "a folder with no profiler trace under it (expected "
                                 "plugins/profile/<session>/perfetto_trace.json.gz or "
                                 "*.xplane.pb)")
    return [[TraceSource(p, os.path.join(folder, session), p, "file")
             for p in (os.path.join(folder, f.path) for f in files)]
            for session, files in sessions.items()]


def _ambiguous_names(dump: Dump) -> set[str]:
    seen: dict[str, int] = defaultdict(int)
    for m in dump.modules:
        if m.after_optimizations is not None:
            seen[m.name] += 1
    return {n for n, k in seen.items() if k > 1}


def _read_group(dump: Dump, group: list[TraceSource], ambiguous: set[str]):
    """Read the first readable file of one session (xplane first if names are ambiguous)."""
    errors: list[str] = []
    order = list(group)
    if ambiguous:
        order.sort(key=lambda s: 0 if s.name.endswith(".xplane.pb") else 1)
    for src in order:
        try:
            return src.read(dump), errors
        except TraceError as e:
            errors.append(str(e))
    return None, errors


def _match(dump: Dump, raws: list[RawTrace], events: list[OpEvent],
           errors: list[str]) -> Measured:
    indexes: dict[str, _ModuleIndex] = {}
    by_name: dict[str, list[_ModuleIndex]] = defaultdict(list)
    for m in dump.modules:
        if m.after_optimizations is None:
            continue
        idx = indexes[m.id] = _ModuleIndex(dump, m)
        by_name[m.name].append(idx)
    notes: list[str] = []
    # resolve (module name, program id, run) -> dump module
    groups: dict[tuple[str, int | None, str], list[OpEvent]] = defaultdict(list)
    for e in events:
        groups[(e.module, e.program_id, e.run)].append(e)
    resolved: dict[tuple[str, int | None, str], _ModuleIndex | None] = {}
    foreign: list[tuple[tuple[str, int | None, str], _ModuleIndex, list[str]]] = []
    # module name -> (module matched, others holding the same ops) -> runs
    by_ops: dict[str, dict[tuple[str, tuple[str, ...]], int]] = defaultdict(
        lambda: defaultdict(int))
    unmatched_counts: dict[tuple[str, str, str], int] = defaultdict(int)
    for key, evs in groups.items():
        name, pid, _run = key
        ran = {e.op for e in evs}
        target = None
        if pid is not None:
            target = next((m for m in indexes.values() if m.number == pid), None)
            if target is not None and target.name != name and name:
                target = None
        if target is None:
            cands = by_name.get(name, [])
            if len(cands) == 1:
                target = cands[0]
            elif cands:
                target = _pick_module(cands, ran)
                best = _held(target, ran)
                ties = [m.id for m in cands if m is not target and _held(m, ran) == best]
                by_ops[name][(target.id, tuple(ties))] += 1
        resolved[key] = target
        if target is not None and not target.error:
            absent = sorted(ran - target.instructions.keys())
            if len(absent) >= FOREIGN_SHARE * len(ran):
                foreign.append((key, target, absent))
    if foreign:
        # a run of the program names every op it ran: one where a quarter of the ops are
        # not its module's is of another program of the same name (every JAX program's is
        # jit_<function>), and its ops of the same name would be matched to the wrong
        # instructions; fewer (an event a runtime names its own way) are listed unmatched
        (fname, _pid, frun), ftarget, absent = foreign[0]
        session = frun.rpartition("#")[0]
        source = next((r.source for r in raws
                       if r.events and r.events[0].run.rpartition("#")[0] == session),
                      ", ".join(r.source for r in raws))
        nruns = sum(1 for (n, _p, _r), _t, _a in foreign if n == fname)
        raise TraceError(source, f"the trace is of another program: {nruns} run(s) of "
                                 f"module {fname} name instructions that module {ftarget.id} "
                                 f"{ftarget.name} of this dump does not have "
                                 f"({', '.join(absent[:5])}"
                                 f"{', ...' if len(absent) > 5 else ''}); record the dump "
                                 "and its trace in one run (python -m compiler_bridge "
                                 "profile)")
    for name, picks in by_ops.items():      # one note per name, not one per run
        for (mid, tied_ids), n in sorted(picks.items()):
            notes.append(
                f"{len(by_name[name])} modules are named {name} and the trace names modules "
                f"by name only: {n} run(s) were matched to module {mid}, the one holding "
                "their ops" + (f" (so do {', '.join(tied_ids)}: which of them ran is not known)"
                               if tied_ids else "") + "; an xplane.pb would say for sure")
    # aggregate
    per_kernel: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    charged: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    work: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    spans: dict[tuple[str, str], list[float]] = {}
    module_events: dict[str, int] = defaultdict(int)
    matched = unmatched = asynchronous = 0
    overlapped_runs = 0
    slices: dict[tuple[str, str], list[Slice]] = defaultdict(list)
    devices: dict[tuple[str, str], set[str]] = defaultdict(set)
    for key, evs in groups.items():
        target = resolved[key]
        starts: dict[str, list[float]] | None = None   # op -> its start times in this run
        timed: list[tuple[OpEvent, float]] = []        # matched event, its completion
        for e in evs:
            info = target.instructions.get(e.op) if target is not None else None
            if target is None or info is None:
                unmatched += 1
                if target is None:
                    reason = (f"no module named {e.module!r} in the dump" if e.module
                              else "the event names no module")
                    if target is None and key[1] is not None and by_name.get(e.module):
                        reason = f"no module with program id {key[1]} named {e.module!r}"
                else:
                    reason = f"module {target.id} {target.name} has no instruction {e.op!r}"
                    if target.error:
                        reason = f"module {target.id} {target.name} could not be parsed"
                unmatched_counts[(e.module, e.op, reason)] += 1
                continue
            matched += 1
            module_events[target.id] += 1
            end = e.end_us
            if e.async_us is not None and info[0] in ASYNC_OPCODES:
                # done by its 'end:' marker, or earlier when a consumer started first (the
                # marker can wait for a busy thread)
                if starts is None:
                    starts = defaultdict(list)
                    for x in evs:
                        starts[x.op].append(x.start_us)
                    for v in starts.values():
                        v.sort()
                done = e.start_us + e.async_us
                for c in target.consumers(e.op):
                    cs = starts.get(c)
                    if cs:
                        k = bisect.bisect_left(cs, e.end_us - EPS_US)
                        if k < len(cs):
                            done = min(done, cs[k])
                end = max(e.end_us, done)
                asynchronous += 1
            timed.append((e, end))
        if target is None or not timed:
            continue
        own, share = attribute([(e.thread, e.start_us, e.end_us, end) for e, end in timed])
        if any(o - c > EPS_US for o, c in zip(own, share)):
            overlapped_runs += 1
        depth = depths([e for e, _ in timed])
        devices[(target.id, key[2])].update(e.device for e, _ in timed)
        for (e, end), o, part, dep in zip(timed, own, share, depth):
            per_kernel[(target.id, e.op)][e.run].append(o)
            charged[(target.id, e.op)][e.run] += part
            if target.instructions[e.op][0] in ASYNC_OPCODES:
                work[(target.id, e.op)][e.run].append(end - e.start_us)
            slices[(target.id, e.run)].append(Slice(e.op, e.thread, dep, e.start_us, e.end_us,
                                                    end, o, part))
            span = spans.setdefault((target.id, e.run), [e.start_us, end])
            span[0] = min(span[0], e.start_us)
            span[1] = max(span[1], end)
    if matched == 0:
        names = sorted({e.module for e in events})
        have = ", ".join(f"{m.id} {m.name}" for m in indexes.values()) or "none"
        raise TraceError(", ".join(r.source for r in raws),
                         f"0 of {len(events)} per-op events match this dump: the trace is of "
                         f"another program (trace modules: {', '.join(names[:8])}; dump "
                         f"modules: {have})")
    modules: dict[str, ModuleTimings] = {}
    for (mid, op), runs in per_kernel.items():
        idx = indexes[mid]
        mt = modules.get(mid)
        if mt is None:
            mt = modules[mid] = ModuleTimings(mid, idx.name, {}, {}, module_events[mid])
        opcode, comp = idx.instructions[op]
        mt.kernels[op] = KernelTiming(mid, op, opcode, comp,
                                      {r: list(v) for r, v in runs.items()},
                                      dict(charged[(mid, op)]),
                                      {r: list(v) for r, v in work[(mid, op)].items()})
    for (mid, run), (a, b) in spans.items():
        modules[mid].step_us[run] = b - a
        modules[mid].devices[run] = len(devices[(mid, run)])
        modules[mid].slices[run] = sorted(
            (Slice(x.instruction, x.thread, x.depth, x.start_us - a, x.end_us - a,
                   x.done_us - a, x.own_us, x.charged_us) for x in slices[(mid, run)]),
            key=lambda x: (x.start_us, x.depth))
    without = [(m.id, m.name) for m in indexes.values() if m.id not in modules]
    tied = {t for picks in by_ops.values() for (_m, ties) in picks for t in ties}
    without_told = [w for w in without if w[0] not in tied]    # a tied one: said above
    if without_told:
        notes.append(f"{len(without_told)} compiled module(s) have no events in the trace "
                     "(not run while profiling, or the backend records no per-op events): "
                     + ", ".join(f"{i} {n}" for i, n in without_told[:10])
                     + (" ..." if len(without_told) > 10 else ""))
    unmatched_list = sorted((Unmatched(mod, op, n, reason)
                             for (mod, op, reason), n in unmatched_counts.items()),
                            key=lambda u: (-u.events, u.module, u.op))
    if asynchronous:
        notes.append(f"{asynchronous} events of asynchronous dot/convolution thunks end "
                     "before their work does (it runs on the thread pool until an 'end:' "
                     "marker, or the first consumer's start if earlier): each is charged its "
                     "event plus the wait in which its thread ran no other op")
    if overlapped_runs:
        notes.append(f"kernels overlapped in time in {overlapped_runs} run(s) (several "
                     "threads, or asynchronous thunks): a kernel's share of step time "
                     "counts time it ran alongside k other kernels as 1/(k+1), so shares "
                     "add up to at most 100%")
    if unmatched:
        notes.append(f"{unmatched} of {matched + unmatched} per-op events match no "
                     "instruction of the dump")
    for err in errors:
        notes.append(f"skipped: {err}")
    return Measured([r.source for r in raws], dict(sorted(modules.items())), matched,
                    unmatched, unmatched_list, without, notes, errors)
