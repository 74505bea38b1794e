"""Compare two dumps: what the ``compare`` command prints and the app's comparison shows.

The structure comes from the sibling modules (``modules``: modules paired, counts and the
diff of each pair; ``flags``; ``versions``); this adds what other packages measure: the
memory totals of each module and, when both dumps carry profiler traces, the measured step
time and the time of each kernel, kernels matched through the diff's pairing (structural
identity, not names).

``compare_dumps(a, b)`` pairs every module; with ``module_a``/``module_b`` it compares the
modules named (two modules of one dump: a recompilation). :meth:`DumpComparison.to_json`
is the command's JSON; :meth:`DumpComparison.regressions` its ``--fail-if-slower`` gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dumps import Dump
from ..hlo import HloParseError
from ..memory import MemoryFileError, memory_totals
from ..perf import TraceError, measure
from .steps import whole_step_us
from .flags import FlagsDiff, dump_flags, flags_diff
from .modules import (
    ModuleComparison,
    ModulePair,
    Pairing,
    chosen_pair,
    compare_modules,
    module_text,
    pair_modules,
)
from .versions import dump_versions


class CannotCompare(ValueError):
    """The two dumps (or the modules asked for) cannot be compared; the message says why."""


@dataclass(frozen=True)
class KernelDelta:
    """One kernel's measured median self time on each side (None: not on that side)."""

    name_a: str
    name_b: str
    opcode: str
    us_a: float | None
    us_b: float | None

    @property
    def delta_us(self) -> float:
        return (self.us_b or 0.0) - (self.us_a or 0.0)

    def to_json(self) -> dict:
        return {"a": self.name_a or None, "b": self.name_b or None, "opcode": self.opcode,
                "us": [self.us_a, self.us_b]}


@dataclass
class PairReport:
    """A compared pair with its measurements (None where a side lacks them)."""

    comparison: ModuleComparison
    memory_a: dict[str, int] | None = None     # argument/output/temp/alias/peak bytes
    memory_b: dict[str, int] | None = None
    memory_missing: tuple[str, str] = ("", "")  # why a side has no memory totals
    step_us: tuple[float, float] | None = None  # median step time, A and B
    # how step_us was measured: 'kernels' (the span of each run's per-op events) or
    # 'calls' (the jitted call, where a side's trace has no per-op events)
    step_basis: str = ""
    kernels: list[KernelDelta] = field(default_factory=list)
    error: str = ""                             # why the pair could not be diffed

    @property
    def pair(self) -> ModulePair:
        return self.comparison.pair

    def slower_pct(self) -> float | None:
        """How much slower B's step is than A's, in percent (negative: faster)."""
        if self.step_us is None or self.step_us[0] <= 0:
            return None
        return 100.0 * (self.step_us[1] - self.step_us[0]) / self.step_us[0]

    def to_json(self) -> dict:
        c = self.comparison
        d = c.diff.summary()
        temp = [(self.memory_a or {}).get("temp"), (self.memory_b or {}).get("temp")]
        return {"name": c.pair.name, "a": c.pair.a, "b": c.pair.b,
                "instructions": [c.counts_a.instructions, c.counts_b.instructions],
                "fusions": [c.counts_a.fusions, c.counts_b.fusions],
                "added": d["added"], "removed": d["removed"], "changed": d["changed"],
                "temp_bytes": temp,
                "step_us": list(self.step_us) if self.step_us is not None else None,
                "step_basis": self.step_basis or None}


@dataclass
class DumpComparison:
    a: Dump
    b: Dump
    path_a: str
    path_b: str
    pairing: Pairing
    flags: FlagsDiff
    reports: list[PairReport]
    versions_a: dict[str, str]
    versions_b: dict[str, str]
    notes: list[str] = field(default_factory=list)   # traces that could not be read...

    def regressions(self, pct: float) -> list[tuple[PairReport, float]]:
        """Pairs whose measured step time grew by more than ``pct`` percent."""
        out = []
        for r in self.reports:
            s = r.slower_pct()
            if s is not None and s > pct:
                out.append((r, s))
        return out

    def side_json(self, which: str) -> dict:
        dump, path, versions = (self.a, self.path_a, self.versions_a) if which == "a" \
            else (self.b, self.path_b, self.versions_b)
        explicit, _ = dump_flags(dump)
        return {"path": path, "jax": versions.get("jax_version"),
                "xla_flags": explicit.as_xla_flags()}

    def to_json(self) -> dict:
        return {"a": self.side_json("a"), "b": self.side_json("b"),
                "flags": self.flags.to_json(),
                "modules": [r.to_json() for r in self.reports],
                "unpaired": {"a": list(self.pairing.only_a), "b": list(self.pairing.only_b)},
                "notes": list(self.notes)}


def _measured(dump: Dump):
    """The dump's traces matched to its modules (None when it has none that match)."""
    def compute(d: Dump):
        if not d.traces:
            return None, ""
        try:
            return measure(d), ""
        except TraceError as e:
            return None, f"{d.name}: {e}"
    return dump.derived("compare:measured", compute)


def memory_of(dump: Dump, module_id: str) -> tuple[dict[str, int] | None, str]:
    """argument / output / temp / alias / peak bytes of one module, as XLA's buffer
    assignment (and live ranges, for the peak) say; None without a readable buffer
    assignment, with why."""
    try:
        t = memory_totals(dump, module_id)
    except (MemoryFileError, KeyError, OSError) as e:
        return None, str(e).splitlines()[0] if str(e) else type(e).__name__
    out = {"argument": t.argument_bytes, "output": t.output_bytes, "temp": t.temp_bytes,
           "alias": t.alias_bytes}
    if t.peak_bytes is not None:
        out["peak"] = t.peak_bytes
    return out, ""


def _fused(module, name: str) -> list[str]:
    """``name`` and, for a fusion, the instructions of its fused computation."""
    inst = module.find(name) if module is not None else None
    if inst is None or inst.opcode != "fusion" or not inst.called_names:
        return [name]
    comp = module.get_computation(inst.called_names[0])
    return [name] + ([i.name for i in comp.instructions] if comp is not None else [])


def _kernel_of(module, name: str, kernels) -> str:
    """The measured kernel that ran instruction ``name``: itself, or the fusion it is in."""
    if name in kernels:
        return name
    inst = module.find(name) if module is not None else None
    comp = inst.computation if inst is not None else None
    if comp is not None and comp.is_fusion:
        for user in module.callers().get(comp.name, []):
            if user.opcode == "fusion" and user.name in kernels:
                return user.name
    return ""


def kernel_deltas(report: PairReport, ma, mb) -> list[KernelDelta]:
    """Every measured kernel of either side, paired through the diff, biggest change first.
    An instruction a side took out of a fusion (or fused) pairs with the kernel that ran
    it on the other side: the fusion, not nothing."""
    d = report.comparison.diff
    out: list[KernelDelta] = []
    seen_b: set[str] = set()
    for name, k in ma.kernels.items():
        partner = ""
        for inst in _fused(d.old, name):
            partner = _kernel_of(d.new, d.old_to_new.get(inst, ""), mb.kernels)
            if partner and partner not in seen_b:
                break
            partner = ""
        kb = mb.kernels.get(partner) if partner else None
        if kb is not None:
            seen_b.add(partner)
        out.append(KernelDelta(name, partner if kb is not None else "", k.opcode, k.median_us,
                               kb.median_us if kb is not None else None))
    for name, k in mb.kernels.items():
        if name not in seen_b:
            out.append(KernelDelta("", name, k.opcode, None, k.median_us))
    out.sort(key=lambda x: (-abs(x.delta_us), x.name_a or x.name_b))
    return out


def measure_pair(a: Dump, b: Dump, report: PairReport) -> None:
    """Fill in memory totals, step times and kernel deltas where the dumps have them."""
    p = report.pair
    (report.memory_a, why_a), (report.memory_b, why_b) = memory_of(a, p.a), memory_of(b, p.b)
    report.memory_missing = (why_a, why_b)
    ma, _ = _measured(a)
    mb, _ = _measured(b)
    ta = ma.module(p.a) if ma is not None else None
    tb = mb.module(p.b) if mb is not None else None
    if ta is not None and tb is not None and ta.step_us and tb.step_us:
        report.step_us = (round(ta.step_median_us, 3), round(tb.step_median_us, 3))
        report.step_basis = "kernels"
        report.kernels = kernel_deltas(report, ta, tb)
        return
    # a side without per-op events: the whole steps still compare, both measured alike
    wa, wb = whole_step_us(a, p.a), whole_step_us(b, p.b)
    if wa is not None and wb is not None:
        report.step_us, report.step_basis = (wa, wb), "calls"


def _partner(pairing: Pairing, a: Dump, b: Dump, module_a: str, module_b: str) -> ModulePair:
    """The pair of the one module named (in A or in B) that pairing found."""
    side, other, named = (a, b, module_a) if module_a else (b, a, module_b)
    mid = side.module(named).id
    found = pairing.of_a(mid) if module_a else pairing.of_b(mid)
    if found is None:
        flag = "--module-b" if module_a else "--module-a"
        raise CannotCompare(f"module {named} of {side.name} pairs with no module of "
                            f"{other.name}; name one with {flag}")
    return found


def _unreadable(dump: Dump, side: str) -> list[str]:
    """A note for each module whose HLO text could not be read, so pairing left it out
    (it is in no pair and in neither unpaired list)."""
    broken = {e.file: e.error for e in dump.errors}
    out = []
    for m in dump.modules:
        try:
            path = module_text(dump, m)
        except KeyError:          # no HLO text at all: nothing to pair
            continue
        if path in broken:
            out.append(f"{side} ({dump.name}): module {m.label} left out, its file could not "
                       f"be read: {broken[path].splitlines()[0]}")
    return out


def compare_dumps(a: Dump, b: Dump, path_a: str = "", path_b: str = "",
                  module_a: str = "", module_b: str = "", measured: bool = True
                  ) -> DumpComparison:
    """Pair, count, diff (and with ``measured``, measure) two dumps.

    ``module_a`` / ``module_b``: compare these modules only (one given: its partner is
    the one pairing finds). Raises CannotCompare when nothing pairs, or a module named
    is not there."""
    pairing = pair_modules(a, b)
    left_out = _unreadable(a, "A") + _unreadable(b, "B")
    try:
        if module_a and module_b:
            pairs = [chosen_pair(a, b, module_a, module_b)]
        elif module_a or module_b:
            pairs = [_partner(pairing, a, b, module_a, module_b)]
        else:
            pairs = list(pairing.pairs)
    except KeyError as e:
        raise CannotCompare(str(e.args[0])) from None
    if not pairs:
        raise CannotCompare(f"no module of {a.name} pairs with a module of {b.name} "
                            "(different programs?); name two with --module-a/--module-b"
                            + "".join(f"; {n}" for n in left_out))
    reports = []
    notes: list[str] = list(left_out)
    for p in pairs:
        try:
            c = compare_modules(a, b, p)
        except (HloParseError, KeyError) as e:
            said = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
            notes.append(f"module {p.a} / {p.b}: {said.splitlines()[0]}")
            continue
        r = PairReport(c)
        if measured:
            measure_pair(a, b, r)
        reports.append(r)
    if not reports:
        raise CannotCompare("no pair of modules could be read: " + "; ".join(notes))
    if measured:
        for d in (a, b):
            _, why = _measured(d)
            if why:
                notes.append(why)
    # the flags of the pair compared, or of the user's program's pair (JAX's helpers do
    # not get the program's jit options)
    main = a.main.id if a.main is not None else None
    flagged = pairs[0] if len(pairs) == 1 else next((p for p in pairs if p.a == main), None)
    ma = a.module(flagged.a) if flagged is not None else None
    mb = b.module(flagged.b) if flagged is not None else None
    flags = flags_diff(a, b, ma, mb)
    notes += [f"A ({a.name}): {p}" for p in flags.problems_a]
    notes += [f"B ({b.name}): {p}" for p in flags.problems_b]
    return DumpComparison(a, b, path_a or a.name, path_b or b.name, pairing, flags, reports,
                          dump_versions(a), dump_versions(b), notes)
