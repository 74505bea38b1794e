"""The pass timeline of a module: one step per HLO snapshot, in the order XLA wrote them.

With ``--xla_dump_hlo_pass_re=.*`` XLA writes one snapshot after every pass that changed
the module (``module_NNNN.<name>.SSSS.<pipeline>.after_<pass>.before_<next>.txt``). The
timeline is ``before_optimizations``, those snapshots by sequence number, then
``after_optimizations``; a dump without per-pass files gives just before -> after, and
``Timeline.per_pass`` is False so the app can say how to get them (``PER_PASS_FLAG``).

Counts per step (from the parsed module; None on an error step):

* ``instructions``: every instruction of every computation, fused computations included
  (what ``HloModule.stats()['instructions']`` counts);
* ``computations``, ``fusions`` (instructions with opcode ``fusion``),
  ``entry_instructions`` (the ENTRY computation's);
* ``tensor_bytes``: the bytes of every array the ENTRY computation defines —
  ``Shape.byte_size`` summed over its instructions, parameters and constants included,
  leaving out ``tuple``, ``get-tuple-element`` and ``bitcast``, which only alias another
  buffer. It is what the step would hold if nothing were freed or reused: a cheap measure
  to compare steps (a fusion pass makes it drop, a layout copy makes it grow), not a
  memory estimate (buffer assignment decides that, after the last pass).

A module with StableHLO (its ``module.mlir``, see ``DumpModule.stablehlo``) has one more
step, ``Timeline.stablehlo``: what JAX handed XLA, converted to HLO by jaxlib. It precedes
before_optimizations but is numbered ``STABLEHLO_INDEX`` (-1), outside ``steps``, so that
every other step keeps its index (the stepper's numbers, ``passes --diff N``, tests) whether
or not a dump has module.mlir; links name it by its stage (``stage=stablehlo``). It is not
converted when the timeline is read (its counts are None): jaxlib runs only when someone
opens it. Nothing compares with it unless asked (``previous_ok`` of before_optimizations
stays None): jaxlib's conversion names instructions as XLA's own does, so a diff to
before_optimizations pairs every instruction and shows what XLA changed on the way (mostly
metadata) — except in nested loops, whose instructions the two number apart (a name that
is a ``while`` in one is a ``parameter`` in the other: names pair only with one opcode).

A step whose file does not parse carries the parser's message in ``error``; the rest of
the timeline still works, and diffs skip over it (each step is compared with the last
step before it that parsed). Steps whose text is byte-identical to the previous step's
have ``identical=True`` (XLA writes a snapshot at each pipeline start); views may hide them.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from .changes import ModuleDiff
from .diff import diff_modules
from ..dumps import AFTER, AFTER_CODEGEN, BEFORE_BUFFER_ASSIGNMENT, PASS, STABLEHLO, Dump, DumpModule
from ..hlo import HloParseError
from ..hlo import HloModule
from ..steps import STABLEHLO_INDEX, Step, Timeline, change_counts
from .gaps import dumped_pass_re, narrowed, unseen

# The XLA flag that makes XLA write one snapshot per pass (exact text for the UI).
PER_PASS_FLAG = "--xla_dump_hlo_pass_re=.*"
PER_PASS_HINT = (
    "This dump has no per-pass snapshots, so the steps are before and after optimizations. "
    f"To step through every pass, compile again with XLA_FLAGS=\"--xla_dump_to=DIR "
    f"--xla_dump_hlo_as_text {PER_PASS_FLAG}\" (XLA then writes one file per pass that "
    "changed the module; narrow the regex, e.g. 'fusion|layout', for big programs).")

_ALIASING = frozenset({"tuple", "get-tuple-element", "bitcast"})


def module_counts(module: HloModule) -> dict[str, int]:
    """The per-step counts of one parsed module (see the module docstring): the model's
    own stats, and the bytes of the ENTRY computation's tensors."""
    stats = module.stats()
    tensor_bytes = 0
    if module.entry is not None:
        for inst in module.entry.instructions:
            if inst.opcode not in _ALIASING:
                tensor_bytes += inst.shape.byte_size
    return {"instructions": stats["instructions"], "computations": stats["computations"],
            "fusions": stats["fusions"], "entry_instructions": stats["entry_instructions"],
            "tensor_bytes": tensor_bytes}


def pass_timeline(dump: Dump, module: DumpModule | str) -> Timeline:
    """The timeline of a module (parses every distinct snapshot once, for its counts)."""
    mod = dump.module(module) if isinstance(module, str) else module
    files = []
    if mod.before_optimizations is not None:
        files.append(mod.before_optimizations)
    files += mod.passes
    before_ba = mod.first(BEFORE_BUFFER_ASSIGNMENT)     # XLA:TPU: after the last pass
    if before_ba is not None:
        files.append(before_ba)
    if mod.after_optimizations is not None:
        files.append(mod.after_optimizations)
    codegen = mod.first(AFTER_CODEGEN)     # XLA:TPU's after-codegen module: the last stage
    if codegen is not None:
        files.append(codegen)
    steps: list[Step] = []
    prev_hash = ""
    prev_counts: dict = {}
    prev_error = ""
    gaps = narrowed(dumped_pass_re(dump, mod)) if mod.passes else False
    prev_pass: Step | None = None         # the last pass snapshot (for ``unseen``)
    for index, f in enumerate(files):
        try:
            data = dump.read_bytes(f.path)
            digest = hashlib.sha1(data).hexdigest()
        except (OSError, KeyError) as e:
            digest = ""
            data = None
            read_error = f"cannot read the file: {e}"
        else:
            read_error = ""
        identical = bool(digest) and digest == prev_hash
        if identical:
            counts, error = prev_counts, prev_error
        elif read_error:
            counts, error = {}, read_error
            dump.report(f.path, read_error)
        else:
            try:
                counts, error = module_counts(dump.parse(f.path, data)), ""
            except HloParseError as e:
                counts, error = {}, str(e)
        info = f.pass_info
        if f.kind == PASS and info is not None:     # (every PASS file has its pass_info)
            step = Step(index, f.path, PASS, info.pipeline, info.after, info.before,
                        info.sequence, digest, identical, error=error, **counts)
        else:
            step = Step(index, f.path, f.kind, "", f.kind, "", None, digest, identical,
                        error=error, **counts)
        if gaps and f.kind in (PASS, AFTER):
            step = replace(step, unseen=unseen(prev_pass, step))
        if f.kind == PASS:
            prev_pass = step
        steps.append(step)
        prev_hash, prev_counts, prev_error = digest, counts, error
    per_pass = bool(mod.passes)
    mlir = mod.stablehlo
    # not converted here: jaxlib runs when the stage is opened (counts unknown until then)
    stablehlo = Step(STABLEHLO_INDEX, mlir.path, STABLEHLO, "", STABLEHLO) \
        if mlir is not None else None
    return Timeline(mod.id, mod.name, tuple(steps), per_pass, "" if per_pass else PER_PASS_HINT,
                    dump.key, stablehlo=stablehlo)


# --------------------------------------------------------------------------- diffs

_DIFF_CACHE_SIZE = 8      # step diffs kept per dump, least recently used first out
_lock = threading.Lock()  # guards every dump's step-diff cache


def _diff_cache(dump: Dump) -> OrderedDict[tuple[str, str, bool], ModuleDiff]:
    return dump.derived("step-diffs", lambda d: OrderedDict())


def step_diff(dump: Dump, timeline: Timeline, index: int,
              against: int | None = None) -> ModuleDiff | None:
    """The diff from step ``against`` (default: the last step before ``index`` that parsed)
    to step ``index``; None when there is nothing to compare with (the first step).

    Raises HloParseError when either step does not parse. Steps that are not neighbours
    (``against`` given and more than one parsed step apart, or before -> after) also pair
    instructions by source op (``diff_modules(by_source=True)``). Results are cached per
    dump (a few, least recently used first out).
    """
    if against is None:
        against = timeline.previous_ok(index)
        if against is None:
            return None
    return _diff_between(dump, timeline, index, against)


def _diff_between(dump: Dump, timeline: Timeline, index: int, against: int) -> ModuleDiff:
    """``step_diff`` with both steps known (cached the same way)."""
    new_step, old_step = timeline.step(index), timeline.step(against)
    for s in (new_step, old_step):
        if s.error:      # the reader's diagnostic as it was (it names the file and line)
            error = HloParseError(s.error)
            error.source = s.file
            raise error
    lo, hi = sorted((against, index))
    # neighbours: consecutive per-pass snapshots (only error or identical steps between),
    # or the StableHLO and before_optimizations (XLA's conversion, no pass between);
    # before -> after with nothing between is many passes apart
    adjacent = (timeline.per_pass or (lo, hi) == (STABLEHLO_INDEX, 0)) and all(
        not timeline.step(k).ok or timeline.step(k).identical for k in range(lo + 1, hi))
    key = (old_step.file, new_step.file, not adjacent)
    cache = _diff_cache(dump)
    with _lock:
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
    old, new = dump.parse(old_step.file), dump.parse(new_step.file)
    result = diff_modules(old, new, by_source=not adjacent)
    with _lock:
        cache[key] = result
        while len(cache) > _DIFF_CACHE_SIZE:
            cache.popitem(last=False)
    return result


def step_changes(dump: Dump, timeline: Timeline) -> list[dict]:
    """Per step, added/removed/changed against the previous parsed step (the CLI's
    numbers; zeros for the first step and for identical steps, None on error steps)."""
    return change_counts(timeline, lambda i, prev: _diff_between(dump, timeline, i, prev))


def timeline_json(dump: Dump, timeline: Timeline) -> dict:
    """``{"module": ..., "steps": [{"index", "file", "pipeline", "pass", "instructions",
    "fusions", "added", "removed", "changed"}]}`` (an error step adds ``"error"``)."""
    steps = []
    for s, ch in zip(timeline.steps, step_changes(dump, timeline)):
        row = {"index": s.index, "file": s.file, "pipeline": s.pipeline, "pass": s.pass_name,
               "instructions": s.instructions, "fusions": s.fusions, **ch}
        if s.error:
            row["error"] = s.error
        steps.append(row)
    return {"module": timeline.module_name, "steps": steps}


# --------------------------------------------------------------------------- history

@dataclass(frozen=True)
class HistoryEvent:
    """Something a step did to one instruction."""

    index: int               # the step that did it
    label: str               # that step's label
    event: str               # 'created' | 'removed' | 'renamed' | 'fused' | 'layout' | ... (KINDS)
    name_before: str         # the instruction's name before the step ('' when created)
    name_after: str          # ... after it ('' when removed)
    detail: str              # what it did, beyond the event ('' when the event says it all)

    @property
    def line(self) -> str:
        """One line for the UI: 'fused: mul.20 fused into ...', 'created: new', 'removed'."""
        return f"{self.event}: {self.detail}" if self.detail else self.event


def instruction_history(dump: Dump, timeline: Timeline, index: int, name: str,
                        limit: int | None = None) -> list[HistoryEvent]:
    """Every step that created, changed, fused, moved or removed instruction ``name`` (as
    named at step ``index``), followed backwards to its creation and forwards to its
    removal through renames and fusion; in timeline order. Error steps are skipped
    (the instruction is followed across them). ``limit`` bounds the steps visited each
    way. Costs one diff per changed step visited (cached)."""
    events: list[HistoryEvent] = []
    # backwards
    current = name
    k = index
    visited = 0
    while current:
        if not timeline.step(k).ok:
            break
        prev = timeline.previous_ok(k)
        if prev is None or (limit is not None and visited >= limit):
            break
        visited += 1
        if not timeline.step(k).identical:
            d = _diff_between(dump, timeline, k, prev)
            ev, before = _event(d, timeline.step(k), new_name=current)
            if ev is not None:
                events.append(ev)
            current = before
        k = prev
    events.reverse()
    # forwards
    current = name
    k = index
    visited = 0
    while current and timeline.step(k).ok:
        nxt = next((j for j in range(k + 1, len(timeline)) if timeline.step(j).ok), None)
        if nxt is None or (limit is not None and visited >= limit):
            break
        visited += 1
        if not timeline.step(nxt).identical:
            d = _diff_between(dump, timeline, nxt, k)
            ev, after = _event(d, timeline.step(nxt), old_name=current)
            if ev is not None:
                events.append(ev)
            current = after
        k = nxt
    return events


def _event(d: ModuleDiff, step: Step, new_name: str = "", old_name: str = ""):
    """The event of one diff for one instruction, and its name on the other side."""
    if new_name:
        old = d.new_to_old.get(new_name)
        if old is None:
            if d.is_added(new_name):
                dup = d.duplicates.get(new_name)
                detail = f"a copy of {dup}" if dup else "new"
                return HistoryEvent(step.index, step.label, "created", "", new_name, detail), ""
            return None, ""
    else:
        old = old_name
        new_name = d.old_to_new.get(old_name, "")
        if not new_name:
            if d.removed_ref(old_name) is not None:
                return HistoryEvent(step.index, step.label, "removed", old_name, "", ""), ""
            return None, ""
    change = d.change_of_new(new_name)
    if change is None:
        return None, (old if old_name == "" else new_name)
    main = next((k for k in change.kinds if k != "renamed"), "renamed")
    ev = HistoryEvent(step.index, step.label, main, change.old.name, change.new.name,
                      change.describe())
    return ev, (change.old.name if old_name == "" else change.new.name)
