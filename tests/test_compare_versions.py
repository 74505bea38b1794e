"""Two JAX versions' compiles of one program (sample_dumps/legacy_jax0430: JAX 0.4.30,
mlp_train: JAX 0.10) pair by structure, not by name (issue 32, item 1).

The independent source is the HLO text itself: each instruction's opcode and its
metadata (``op_name``'s last part; ``source_line`` in 0.4.30, a stack frame in 0.10, both
``mlp_train.py:N``) as read with plain regexes here.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from conftest import read, sample

from compiler_bridge import open_dump
from compiler_bridge.compare import compare_modules, pair_modules
from viz import compare as CV

_INST = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = .*? ([a-z][\w\-]*)\((.*)$")


def _sources(name: str) -> Counter:
    """(opcode, source op) of every instruction of the module's ENTRY and fused
    computations that has an op_name, counted — what both compiles compute."""
    text = read(os.path.join(sample(name), "module_0000.jit_train_step.cpu_after_optimizations.txt"))
    out: Counter = Counter()
    for line in text.splitlines():
        m = _INST.match(line)
        op = re.search(r'op_name="([^"]*)"', line)
        if m and op and m.group(2) != "parameter":
            last = re.sub(r"\[[^\]]*\]", "", op.group(1).split(";")[0]).rsplit("/", 1)[-1]
            out[(m.group(2), last)] += 1
    return out


def _comparison():
    a, b = open_dump(sample("legacy_jax0430")), open_dump(sample("mlp_train"))
    return a, b, compare_modules(a, b, pair_modules(a, b).pairs[0])


def test_two_jax_versions_of_one_program_pair_by_structure():
    a, b, c = _comparison()
    d = c.diff
    # what both texts compute alike (same opcode, same source op): that many pair at least
    common = sum((_sources("legacy_jax0430") & _sources("mlp_train")).values())
    pairs = [(d.old.find(o.split("@")[0]), d.new.find(n.split("@")[0]))
             for o, n in d.old_to_new.items()]
    alike = [(x, y) for x, y in pairs if x is not None and y is not None
             and x.opcode == y.opcode != "parameter"]
    assert len(alike) >= 0.9 * common, (len(alike), common)
    # and each pair is one source line of the program
    ma, mb = d.old, d.new
    for x, y in alike:
        la, lb = ma.source_location(x), mb.source_location(y)
        if la is not None and lb is not None:
            assert (la.file.rsplit("/", 1)[-1], la.line) == (lb.file.rsplit("/", 1)[-1],
                                                             lb.line), (x.name, y.name)
    # names are counters of each compile: a pair with other names is not a change
    assert not [ch for ch in d.changed if ch.kinds == ("renamed",)]
    assert len(d.added) + len(d.removed) < 0.5 * c.counts_a.instructions


def _entry_parameters(name: str) -> dict[str, tuple[str, str]]:
    """ENTRY's parameters as XLA wrote them: name -> (number, shape)."""
    text = read(os.path.join(sample(name), "module_0000.jit_train_step.cpu_after_optimizations.txt"))
    entry = text.split("\nENTRY ", 1)[1]
    return {m.group(1): (m.group(3), m.group(2)) for m in re.finditer(
        r"^\s*%?([\w.\-]+) = (\S+) parameter\((\d+)\)", entry, re.M)}


def test_each_argument_pairs_with_the_same_argument():
    """The function's arguments are ENTRY's parameters by number (the same shapes in both
    texts): each pairs with its own, not with a fused computation's parameter that reads
    it (which comes first in the file)."""
    _, _, c = _comparison()
    d = c.diff
    old, new = _entry_parameters("legacy_jax0430"), _entry_parameters("mlp_train")
    assert sorted(old.values()) == sorted(new.values()) and len(old) > 10
    by_number = {v[0]: k for k, v in new.items()}
    assert {o: d.old_to_new.get(o) for o in old} == {o: by_number[v[0]] for o, v in old.items()}


def test_a_fusion_whose_members_changed_shows_as_changed_and_the_inspector_agrees():
    _, _, c = _comparison()
    d = c.diff
    assert any(f.status == "changed" for f in d.fusions)
    for f in d.fusions:
        if f.new and d.is_added(f.new) and f.absorbed:
            note = CV.added_note(d, f.new)
            assert "Not in the baseline" not in note and f.describe() in note


def _calls_median(name: str) -> float:
    """The median of the outermost 'PjitFunction(train_step)' events of the sample's
    Chrome trace, read here with json (each call is two nested events)."""
    import glob
    import gzip
    import json
    import statistics
    path = sorted(glob.glob(os.path.join(sample(name), "trace", "**", "*.json.gz"),
                            recursive=True))[0]
    doc = json.load(gzip.open(path))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    spans = sorted((e["ts"], e["dur"]) for e in events
                   if e.get("ph") == "X" and e.get("name") == "PjitFunction(train_step)")
    outer, end = [], float("-inf")
    for ts, dur in spans:
        if ts >= end:
            outer.append(dur)
            end = ts + dur
    return statistics.median(outer)


def test_whole_step_times_compare_when_one_trace_has_no_per_op_events():
    """JAX 0.4.30 on CPU records only the executable: no kernel times, but the jitted
    calls still give each side's whole step (issue 32, item 2)."""
    from compiler_bridge import compare_dumps
    c = compare_dumps(open_dump(sample("legacy_jax0430")), open_dump(sample("transformer")))
    (r,) = c.reports
    assert any("no per-op events" in n for n in c.notes)      # why there are no kernels
    assert r.step_us == (round(_calls_median("legacy_jax0430"), 3),
                         round(_calls_median("transformer"), 3))
    assert r.step_basis == "calls" and not r.kernels
    assert r.to_json()["step_us"] == list(r.step_us)
