"""Measured kernels as training data: a dump with profiler traces becomes a
:class:`Dataset` of every timed kernel's features, opcode counts, graph, roofline and
measured time (and the same over two halves of the runs: the noise floor). Also
``module_with_pages``: a dump's module after optimizations, its costs told which pages
its buffer assignment maps fresh in every run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .costs import FRESH_PAGES, costs_of, fresh_pages
from .execution import kernels
from .roofline import roofline_us
from .devices import DeviceProfile
from .features import NUMERIC, VOCAB, module_features
from .kernel_graphs import KernelGraph, kernel_graph
from .traces import measure
from ..dumps import AFTER, BUFFER_ASSIGNMENT, Dump, DumpModule, open_dump
from ..hlo import HloModule
from ..memory import MemoryFileError, parse_buffer_assignment

@dataclass
class Dataset:
    """Measured kernels of several programs, as arrays."""

    numeric: np.ndarray          # [n, len(NUMERIC)]
    counts: np.ndarray           # [n, len(VOCAB)]
    weighted: np.ndarray         # [n, len(VOCAB)]
    log_roofline: np.ndarray     # [n]
    label_us: np.ndarray         # [n] measured (the chosen statistic)
    half_a: np.ndarray           # [n] the statistic over half the runs (NaN if none)
    half_b: np.ndarray           # [n]
    program: list[str]           # [n] program of each kernel (a dump folder)
    instruction: list[str]       # [n]
    roofline_us: np.ndarray      # [n]
    programs: list[str] = field(default_factory=list)
    graphs: list[KernelGraph] = field(default_factory=list)    # [n] (empty: not built)
    executions: np.ndarray = field(default_factory=lambda: np.zeros((0,)))  # [n] per step
    step_us: dict[str, float] = field(default_factory=dict)    # program -> median step
    # program -> median step over two halves of the runs (the noise floor of step times)
    step_halves: dict[str, tuple[float, float]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.label_us)

    def subset(self, mask: np.ndarray) -> "Dataset":
        idx = np.nonzero(mask)[0]
        progs = sorted({self.program[i] for i in idx})
        return Dataset(self.numeric[idx], self.counts[idx], self.weighted[idx],
                       self.log_roofline[idx], self.label_us[idx], self.half_a[idx],
                       self.half_b[idx], [self.program[i] for i in idx],
                       [self.instruction[i] for i in idx], self.roofline_us[idx], progs,
                       [self.graphs[i] for i in idx] if self.graphs else [],
                       self.executions[idx] if len(self.executions) else self.executions,
                       {p: v for p, v in self.step_us.items() if p in set(progs)},
                       {p: v for p, v in self.step_halves.items() if p in set(progs)})

    @staticmethod
    def concat(parts: Sequence["Dataset"]) -> "Dataset":
        parts = [p for p in parts if len(p)]
        if not parts:
            return empty_dataset()
        graphs = sum((p.graphs for p in parts), []) if all(p.graphs for p in parts) else []
        execs = np.concatenate([p.executions for p in parts]) \
            if all(len(p.executions) == len(p) for p in parts) else np.zeros((0,))
        steps: dict[str, float] = {}
        halves: dict[str, tuple[float, float]] = {}
        for p in parts:
            for k, v in p.step_us.items():
                steps[k] = steps.get(k, 0.0) + v
            for k, (a, b) in p.step_halves.items():
                was = halves.get(k, (0.0, 0.0))
                halves[k] = (was[0] + a, was[1] + b)
        return Dataset(np.concatenate([p.numeric for p in parts]),
                       np.concatenate([p.counts for p in parts]),
                       np.concatenate([p.weighted for p in parts]),
                       np.concatenate([p.log_roofline for p in parts]),
                       np.concatenate([p.label_us for p in parts]),
                       np.concatenate([p.half_a for p in parts]),
                       np.concatenate([p.half_b for p in parts]),
                       sum((p.program for p in parts), []),
                       sum((p.instruction for p in parts), []),
                       np.concatenate([p.roofline_us for p in parts]),
                       sorted({x for p in parts for x in p.programs}), graphs, execs, steps,
                       halves)


def empty_dataset() -> Dataset:
    z = np.zeros((0,), np.float32)
    return Dataset(np.zeros((0, len(NUMERIC)), np.float32), np.zeros((0, len(VOCAB)), np.float32),
                   np.zeros((0, len(VOCAB)), np.float32), z, z, z, z, [], [], z, [])


def module_with_pages(dump: Dump, mod: DumpModule) -> HloModule:
    """The module after optimizations, its costs told which pages its dump's buffer
    assignment maps fresh in every run (``costs.fresh_pages``); without a readable
    assignment, none."""
    hlo = dump.stage(mod, AFTER)
    if hlo.knows(FRESH_PAGES):
        return hlo
    pages: dict[str, float] = {}
    ba = mod.first(BUFFER_ASSIGNMENT)
    if ba is not None:
        try:
            assignment = parse_buffer_assignment(dump.read_text(ba.path), ba.path)
            pages = fresh_pages(hlo, assignment)
        except (OSError, KeyError, MemoryFileError):
            pass           # the memory view names the broken file; costs go without it
    hlo.attach(FRESH_PAGES, pages)
    return hlo


def dataset_from_dump(dump: Dump | str, device: DeviceProfile, stat: str = "median",
                      program: str | None = None) -> Dataset:
    """The measured kernels of a dump with traces (raises TraceError without them)."""
    if isinstance(dump, str):
        dump = open_dump(dump)
    name = program or dump.name
    measured = measure(dump)
    parts = []
    for mid, timings in measured.modules.items():
        hlo = module_with_pages(dump, dump.module(mid))
        insts = [i for i in kernels(hlo) if i.name in timings.kernels]
        costs = costs_of(hlo, insts)
        num, cnt, wtd = module_features(hlo, insts, costs, device)
        label, ha, hb, execs = [], [], [], []
        for i in insts:
            t = timings.kernels[i.name]
            label.append(t.stat(stat))
            h = t.halves(stat)
            ha.append(h[0] if h else np.nan)
            hb.append(h[1] if h else np.nan)
            execs.append(t.executions_per_run)
        roof = np.asarray([roofline_us(c, device) for c in costs], np.float64)
        parts.append(Dataset(num, cnt, wtd, np.log(np.maximum(roof, 1e-3)).astype(np.float32),
                             np.asarray(label, np.float64), np.asarray(ha, np.float64),
                             np.asarray(hb, np.float64), [name] * len(insts),
                             [i.name for i in insts], roof, [name],
                             [kernel_graph(i, hlo) for i in insts],
                             np.asarray(execs, np.float64), {name: timings.step_median_us},
                             {name: h} if (h := timings.step_halves()) else {}))
    return Dataset.concat(parts)


def dataset_from_dumps(paths: Sequence[str], device: DeviceProfile, stat: str = "median",
                       log=None) -> Dataset:
    parts = []
    for p in paths:
        name = os.path.basename(os.path.normpath(p))
        ds = dataset_from_dump(p, device, stat, program=name)
        if log is not None:
            log(f"{name}: {len(ds)} measured kernels")
        parts.append(ds)
    return Dataset.concat(parts)
