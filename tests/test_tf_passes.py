"""TF graph dumps as a pass timeline and the diff between two of them, on the real TF
samples. Expected values come from the pbtxt files read through TF's own protos (the
compat copies in ``tensorboard``), never from the diff code under test."""

from __future__ import annotations

import os

import pytest
from conftest import sample
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

from compiler_bridge import open_dump
from compiler_bridge.steps import GRAPH_PASS, TF_GRAPH
from compiler_bridge.tf import (CLUSTER_ATTR, graph_step_changes, graph_step_diff,
                                graph_text_diff, graph_timeline, pass_of, tf_index)

NAME = "tf_uncompilable"


def proto(path: str, name: str = NAME) -> graph_pb2.GraphDef:
    g = graph_pb2.GraphDef()
    full = os.path.join(sample(name), path)
    if path.endswith(".pb"):
        with open(full, "rb") as fb:
            g.ParseFromString(fb.read())
    else:
        with open(full, encoding="utf-8") as f:
            text_format.Parse(f.read(), g)
    return g


def clustered(g: graph_pb2.GraphDef) -> dict[str, str]:
    """Node -> its _XlaCluster, as TF wrote it."""
    return {n.name: n.attr[CLUSTER_ATTR].s.decode() for n in g.node if CLUSTER_ATTR in n.attr}


@pytest.fixture(scope="module")
def step():
    dump = open_dump(sample(NAME))
    ix = tf_index(dump)
    return dump, ix, graph_timeline(dump, ix)


def _at(tl, pass_name: str) -> int:
    return next(s.index for s in tl.steps if s.pass_name == pass_name)


def test_the_step_graphs_dumps_are_the_steps_in_the_logs_order(step):
    dump, ix, tl = step
    assert tl.source == TF_GRAPH and tl.unit == "node" and tl.per_pass
    run = ix.log.run_of(ix.main.path)
    logged = [p.rsplit("/", 1)[1] for p in run.dumped if "fdef_cluster" not in p]
    assert [s.file for s in tl.steps] == logged          # TF's own order, from its log
    for s in tl.steps:
        assert s.kind == GRAPH_PASS and s.pass_name == pass_of(s.file).name
        assert s.nodes == len(proto(s.file).node)
        assert tl.index_of(s.stage) == s.index               # 'pass:NNNN' names the step
    mark = tl.step(_at(tl, "mark_for_compilation"))
    assert mark.clusters == len(set(clustered(proto(mark.file)).values()))
    assert mark.clustered == len(clustered(proto(mark.file)))
    # a cluster's own dumps compare with that cluster's previous dump, else the whole graph
    sub = next(s for s in tl.steps if s.part)
    assert not tl.step(tl.previous_ok(sub.index)).part
    after = _at(tl, "encapsulate_subgraphs_after")
    assert not tl.step(tl.previous_ok(after)).part


@pytest.mark.parametrize("name", [NAME, "tf_autocluster", "tf_binary"])
def test_mark_for_compilation_changed_exactly_the_nodes_it_clustered(name):
    dump = open_dump(sample(name))
    ix = tf_index(dump)
    tl = graph_timeline(dump, ix)
    i = _at(tl, "mark_for_compilation")
    before, after = proto(tl.step(i - 1).file, name), proto(tl.step(i).file, name)
    assert tl.step(i - 1).pass_name == "before_mark_for_compilation"
    got = clustered(after)
    expected = {n for n in got if n not in clustered(before)}
    assert expected and len(expected) < len(after.node)
    d = graph_step_diff(ix, tl, i)
    assert not d.added and not d.removed
    assert {c.new.name for c in d.changed} == expected
    for c in d.changed:
        assert c.kinds == ("clustered",)
        assert c.describe() == f"clustered into {got[c.new.name]}"
    assert d.unchanged == len(after.node) - len(expected)


def test_the_annotated_dump_renames_rather_than_replaces(step):
    dump, ix, tl = step
    i = _at(tl, "mark_for_compilation_annotated")
    mark, annotated = proto(tl.step(i - 1).file), proto(tl.step(i).file)
    cluster = clustered(mark)
    # TF's renaming: cluster_N/<name> or unclustered/<name>
    expected = {f"{cluster.get(n.name, 'unclustered')}/{n.name}": n.name for n in mark.node}
    assert {n.name for n in annotated.node} == set(expected)
    d = graph_step_diff(ix, tl, i)
    assert not d.added and not d.removed
    assert {c.new.name: c.old.name for c in d.changed} == expected
    assert all(c.kinds == ("renamed",) for c in d.changed)


def test_encapsulation_replaces_each_cluster_by_one_call(step):
    dump, ix, tl = step
    i = _at(tl, "encapsulate_subgraphs_after")
    before = proto(tl.step(tl.previous_ok(i)).file)
    after = proto(tl.step(i).file)
    d = graph_step_diff(ix, tl, i)
    names_before = {n.name for n in before.node}
    assert {n.name for n in d.removed} == names_before - {n.name for n in after.node}
    assert {n.name for n in d.removed} == set(clustered(before))
    added = {n.name: n.op for n in d.added}
    assert added == {n.name: n.op for n in after.node if n.name not in names_before}
    assert set(clustered(before).values()) <= set(added.values())    # the cluster calls
    # any other step against any other: the compare target is free
    anyway = graph_step_diff(ix, tl, i, _at(tl, "before_mark_for_compilation"))
    assert {n.name for n in anyway.removed} == set(clustered(before))


def test_text_diff_shows_the_nodes_text_as_tf_wrote_it(step):
    dump, ix, tl = step
    i = _at(tl, "mark_for_compilation")
    d = graph_step_diff(ix, tl, i)
    name = d.changed[0].new.name
    node = next(n for n in proto(tl.step(i).file).node if n.name == name)
    [block] = graph_text_diff(dump, d, {name}, context=1000)
    assert block.status == "changed" and block.title == name
    new_text = [r.new_text for r in block.rows if r.new_text]
    assert new_text == text_format.MessageToString(node).rstrip("\n").split("\n")
    added = "\n".join(r.new_text for r in block.rows if r.kind in ("added", "replace"))
    assert CLUSTER_ATTR in added and node.attr[CLUSTER_ATTR].s.decode() in added


def test_step_changes_count_every_steps_diff(step):
    dump, ix, tl = step
    ch = graph_step_changes(ix, tl)
    assert len(ch) == len(tl) and ch[0] == {"added": 0, "removed": 0, "changed": 0}
    i = _at(tl, "mark_for_compilation")
    mark, before = proto(tl.step(i).file), proto(tl.step(i - 1).file)
    assert ch[i]["changed"] == len(set(clustered(mark)) - set(clustered(before)))


def test_the_pass_explorers_chart_and_tables_draw_a_tf_timeline(step):
    from viz import stepper as V
    dump, ix, tl = step
    ch = graph_step_changes(ix, tl)
    fig = V.timeline_figure(tl, current=1, changes=ch)
    assert [t.name for t in fig.data] == ["nodes", "clusters", "nodes in clusters"]
    assert list(fig.data[0].customdata) == [s.index for s in tl.steps]   # a click: the step
    assert list(fig.data[0].y) == [len(proto(s.file).node) for s in tl.steps]
    rows = V.timeline_rows(tl, ch)
    assert [r["file"] for r in rows] == [s.file for s in tl.steps]
    assert [r["+"] for r in rows] == [c["added"] for c in ch]
    i = _at(tl, "mark_for_compilation")
    tables = V.diff_tables(graph_step_diff(ix, tl, i))
    assert set(tables) == {"changed", "added", "removed"}
    assert {r["node"] for r in tables["changed"]} == set(clustered(proto(tl.step(i).file))) \
        - set(clustered(proto(tl.step(i - 1).file)))
    assert all(r["cluster"] for r in tables["changed"])      # the row's click opens it
