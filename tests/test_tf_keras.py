"""A Keras model trained by ``model.fit`` under TF 2.21's auto-clustering
(sample_dumps/tf_keras, made by make_tf_samples.py): many rounds of graph dumps, the
remapper's fused ops left out, TF 2.21's other reasons, and XLA's older memory-usage
report. Expected values come from TF's log (read here with plain regexes) and XLA's files.
"""

from __future__ import annotations

import glob
import os
import re

from compiler_bridge import open_dump
from compiler_bridge.memory import module_memory
from compiler_bridge.tf import reason_groups, tf_index, why_not_clustered

from conftest import read, sample

_GLOG = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ?")


def _log_lines() -> list[str]:
    return [_GLOG.sub("", line) for line in
            read(os.path.join(sample("tf_keras"), "tf_log.txt")).splitlines()]


def test_tf_2_21_memory_usage_reports_are_read():
    """TF 2.21's XLA writes the report in its older form ('Total bytes used: N' first,
    then the allocations and their chunks): read, not refused, and its total is the
    buffer assignment's."""
    d = open_dump(sample("tf_keras"))
    reports = glob.glob(os.path.join(sample("tf_keras"), "*-memory-usage-report.txt"))
    assert len(reports) == len(d.modules) == 2
    for m in d.modules:
        mem = module_memory(d, m)
        f = next(r for r in reports if os.path.basename(r).startswith(f"module_{m.id}."))
        first = read(f).splitlines()[0]
        assert first.startswith("Total bytes used: ")
        assert mem.report is not None, mem.missing
        assert mem.report.total_bytes == int(first.split()[3]) == mem.totals().total_bytes
        # one chunk table per allocation the report lists with its values
        assert len(mem.report.spaces[0].chunks) == read(f).count("used_by_n_values")
        assert not mem.missing
    assert not d.errors


def _clustered_rounds() -> dict[str, int]:
    """mark_for_compilation file -> clusters TF built in that round (its 'Clustering info'
    block follows the round's 'Dumped Graph to .../mark_for_compilation[_N].pbtxt')."""
    out: dict[str, int] = {}
    last = None
    for line in _log_lines():
        if m := re.match(r"Dumped Graph to .*/(mark_for_compilation(?:_\d+)?\.pbtxt)$", line):
            last = m.group(1)
        elif (m := re.match(r"\s*Built (\d+) clusters", line)) and last is not None:
            out[last] = int(m.group(1))
            last = None
    return out


def test_the_step_graph_is_the_round_tf_clustered():
    """Keras's fit dumps a round per function TF optimizes; a larger graph of string ops
    that TF clustered nothing of comes later. The step graph is the round TF clustered,
    whatever its number or size, with its clusters and their modules."""
    rounds = _clustered_rounds()
    clustered = [f for f, n in rounds.items() if n]
    assert len(rounds) > 20 and clustered == ["mark_for_compilation_23.pbtxt"]
    d = open_dump(sample("tf_keras"))
    ix = tf_index(d)
    largest = max(ix.files, key=lambda f: len(f.graph.nodes))
    assert largest.path != clustered[0] and rounds[largest.path] == 0
    assert ix.main is not None and ix.main.path == clustered[0]
    assert ix.step is not None and ix.main in ix.step.files
    assert len(ix.clusters) == rounds[clustered[0]]
    for c in ix.clusters:
        assert c.module is not None and c.module.name.startswith(c.name + "__XlaCompiled")
    main = ix.to_json()["main"]
    assert main["file"] == clustered[0]
    assert len(main["unclustered"]) == main["nodes"] - sum(c["nodes"] for c in
                                                           main["clusters"]) > 0


def _step_run_lines() -> list[str]:
    """The log's lines of the run that dumped the step graph (Starting fuel to Starting
    fuel around 'Dumped Graph to .../mark_for_compilation_23.pbtxt')."""
    lines = _log_lines()
    at = next(i for i, line in enumerate(lines)
              if line.endswith("/mark_for_compilation_23.pbtxt"))
    start = max(i for i in range(at) if "Starting fuel" in lines[i])
    end = next((i for i in range(at, len(lines)) if "Starting fuel" in lines[i]), len(lines))
    return lines[start:end]


def test_every_could_not_contract_reason_of_tf_2_21_is_read():
    """TF 2.21 logs why two parts were not merged in more words than 'cycle via [...]':
    'cycle via (all clusters) [...]' and 'the new cluster would break resource variable
    semantics'. Each such line's unclustered node gets that reason, in TF's words."""
    ix = tf_index(open_dump(sample("tf_keras")))
    cycles = resource = 0
    for line in _step_run_lines():
        m = re.match(r"Could not contract <(.+?)(?: \+ \d+ others)? #\d+> -> <(.+?)(?: \+ \d+ "
                     r"others)? #\d+> because (.*)\.$", line)
        if m is None:
            continue
        cycles += "cycle via" in m.group(3)
        out = [x for x in m.group(1, 2) if ix.cluster_of(x) is None]
        for node in out:
            why = why_not_clustered(ix, node)
            assert why is not None and "the log gives no reason" not in why, (node, why)
            if "resource variable semantics" in m.group(3):
                resource += 1
                assert "resource variable semantics" in why
            else:
                assert "cycle" in why
    assert resource >= 2 and cycles >= 4
    # the 'cycle via (all clusters) [...]' form is a cycle note too, its cluster named by
    # the node TF names it by
    loss = "StatefulPartitionedCall/compile_loss/sparse_categorical_crossentropy/" \
           "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits"
    assert any("(all clusters)" in line and loss in line for line in _step_run_lines())
    assert [c.via for c in ix.cycles if c.source == loss] == [("StatefulPartitionedCall/Add",)]


def test_a_log_appended_by_two_runs_still_gives_the_reasons(tmp_path):
    """`python prog.py 2>> log` twice: the graph files on disk are the last run's, and so
    are the reasons."""
    import shutil
    folder = tmp_path / "tf_keras"
    shutil.copytree(sample("tf_keras"), folder)
    log = folder / "tf_log.txt"
    log.write_text(log.read_text() * 2)
    ix = tf_index(open_dump(folder))
    fused = [n.name for n in ix.main.graph.nodes if n.op == "_FusedConv2D"]
    assert len(fused) == 1
    r = ix.reason(fused[0])
    assert r is not None and "No registered '_FusedConv2D' OpKernel" in r.reason
    dumped = [run for run in ix.log.runs
              if any(p.endswith("/" + ix.main.path) for p in run.dumped)]
    assert len(dumped) == 2 and ix.run is dumped[-1]


def test_the_inspector_and_why_not_clustered_give_one_answer():
    """For every unclustered node of the step graph the inspector's 'not clustered' row is
    the answer of 'Why not clustered' (before: 'the log gives no reason' beside a cycle
    TF logged for the same node)."""
    from viz.tf import node_rows
    for name in ("tf_keras", "tf_autocluster"):
        ix = tf_index(open_dump(sample(name)))
        groups = {n: g for g in reason_groups(ix) for n, _ in g.nodes}
        for node, g in groups.items():
            row = dict(node_rows(ix, node))["not clustered"]
            assert row == why_not_clustered(ix, node)
            logged = ix.reason(node)
            assert row.startswith(g.title) or (logged is not None and row == logged.reason)
        cycle = next(g for g in reason_groups(ix) if g.kind == "cycle")
        row = dict(node_rows(ix, cycle.nodes[0][0]))["not clustered"]
        assert "close a cycle" in row and "no reason" not in row
