"""TF dumps unlike the first samples (found by the TF sweep): graph files cut to nothing, graphs
that TF clustered beside the largest one, folders with only some of TF's output. Expected
values come from TF's own output: the samples' logs and graph files."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from tests.support.apptest import app

from compiler_bridge import open_dump
from compiler_bridge.tf import read_graph, tf_index

from conftest import ROOT, read, sample

_GLOG = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ?")


@pytest.mark.parametrize("name, step", [("tf_uncompilable", "mark_for_compilation_3.pbtxt"),
                                        ("tf_binary", "mark_for_compilation_3.pb")])
def test_an_empty_graph_file_is_an_error_not_an_empty_graph(tmp_path, name, step):
    """A dump cut to 0 bytes (a full disk, a killed run) is not TF's empty graph (TF writes
    at least its 'versions'): it is named as unreadable, and not shown as a graph of 0
    nodes, not clustered."""
    folder = tmp_path / name
    shutil.copytree(sample(name), folder)
    (folder / step).write_bytes(b"")
    d = open_dump(folder)
    ix = tf_index(d)
    errors = dict(ix.errors)
    assert set(errors) == {step}
    assert errors[step].startswith(f"{step}: empty file (0 bytes)")
    assert {e.file for e in d.errors} == {step}
    assert all(f.path != step for f in ix.files)


def _logged_clusters(name: str) -> dict[str, tuple[int, Counter]]:
    """Every cluster of every 'Clustering info' block of the sample's log (all graphs TF
    clustered): name -> (size, op histogram), read with plain regexes."""
    lines = [_GLOG.sub("", line) for line in read(os.path.join(sample(name), "tf_log.txt"))
             .splitlines()]
    out: dict[str, tuple[int, Counter]] = {}
    current: Counter | None = None
    for line in lines:
        if m := re.match(r"^  (cluster_\d+) (\d+) / \d+ \(", line):
            current = Counter()
            out[m.group(1)] = (int(m.group(2)), current)
        elif (m := re.match(r"^   (\S+): (\d+) instances", line)) and current is not None:
            current[m.group(1)] = int(m.group(2))
        else:
            current = None
    return out


def test_clusters_of_every_graph_tf_clustered_are_listed_with_their_modules(monkeypatch):
    """tf_two_steps: TF clustered a training step and an evaluation step, two graphs. The
    step graph shown is one of them; the other's clusters are listed too, each with the
    module XLA compiled from its nodes, as TF's log summarizes them, in the index, the
    CLI and the page."""
    d = open_dump(sample("tf_two_steps"))
    ix = tf_index(d)
    logged = _logged_clusters("tf_two_steps")
    assert len(logged) == 2
    every = ix.clusters + ix.elsewhere
    assert {c.name: (len(c.nodes), Counter(c.ops)) for c in every} == logged
    assert ix.elsewhere and all(c.graph != ix.main.path for c in ix.elsewhere)
    for c in every:
        assert c.module is not None, c.name
        hlo = d.parse(c.module.before_optimizations.path)
        op_names = {i.op_name for i in hlo.instructions()} - {"", "XLA_Args", "XLA_Retvals"}
        assert op_names and op_names <= {n.name for n in c.nodes}, c.name

    p = subprocess.run([sys.executable, "-m", "compiler_bridge", "clusters",
                        sample("tf_two_steps"), "--json"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [(c["name"], c["nodes"], c["module"]) for c in out["elsewhere"]] == [
        (c.name, len(c.nodes), c.module.id) for c in ix.elsewhere]

    at = app(sample("tf_two_steps"), monkeypatch)
    labels = [b.label.replace("\\", "") for b in at.button]
    for c in every:
        assert f"Open {c.name}'s HLO (module {c.module.id})" in labels


def test_a_folder_with_only_xlas_files_lists_its_clusters_from_modules_and_log(
        tmp_path, monkeypatch):
    """TF_DUMP_GRAPH_PREFIX unset (only --xla_dump_to, and the log kept): each cluster is
    known by its module's name, and TF's log's 'Clustering info' gives its size and ops;
    the CLI lists them (not 'nothing found'), and the app opens on them."""
    folder = tmp_path / "xla_only"
    folder.mkdir()
    for f in os.listdir(sample("tf_uncompilable")):
        if f.startswith("module_") or f == "tf_log.txt":
            shutil.copy(os.path.join(sample("tf_uncompilable"), f), folder / f)
    d = open_dump(folder)
    ix = tf_index(d)
    logged = _logged_clusters("tf_uncompilable")
    assert not ix.files and len(logged) == 2
    assert {c.name: (c.summary.size, Counter(c.summary.ops)) for c in ix.loose} == logged
    for c in ix.loose:
        assert c.module.name.startswith(c.name + "__XlaCompiledKernel_true")
    # the log's reasons of the run that built them: TF's words, its own _Arg/_Retval aside
    runs = "\n".join(_GLOG.sub("", x) for x in read(os.path.join(folder, "tf_log.txt"))
                     .splitlines()).split("Starting fuel")
    (built,) = [r for r in runs if re.search(r"^  cluster_\d+ \d+ / ", r, re.M)]
    found = re.findall(r"Found uncompilable node (\S+) \(op (\S+)\): (.*)$", built, re.M)
    assert [(u.node, u.op, u.reason) for u in ix.loose_reasons] == [
        x for x in found if x[1] not in ("_Arg", "_Retval")]
    assert {u.op for u in ix.loose_reasons} == {"AsString", "StringLength", "_FusedMatMul"}

    p = subprocess.run([sys.executable, "-m", "compiler_bridge", "clusters", str(folder),
                        "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert {c["name"]: (c["nodes"], c["module"]) for c in json.loads(p.stdout)["loose"]} == {
        c.name: (logged[c.name][0], c.module.id) for c in ix.loose}

    at = app(str(folder), monkeypatch)
    assert any(h.value == "TensorFlow clusters" for h in at.subheader)
    labels = [b.label.replace("\\", "") for b in at.button]
    for c in ix.loose:
        assert f"Open {c.name}'s HLO (module {c.module.id})" in labels
    assert any("TF_DUMP_GRAPH_PREFIX" in i.value for i in at.info)
    assert "`text/AsString` (AsString): No registered 'AsString' OpKernel" in \
        " ".join(m.value for m in at.markdown).replace("\\", "")


def _hlo_op_names(hlo, inst) -> set[str]:
    """The TF names an ENTRY instruction's metadata gives: its own, and those of the
    instructions of the computations it calls (a fusion's)."""
    names = {inst.op_name}
    for callee in inst.called_names:
        comp = hlo.get_computation(callee)
        for i in comp.instructions if comp is not None else ():
            names |= _hlo_op_names(hlo, i)
    return names


def test_a_clustered_call_of_a_jit_function_leads_to_its_bodys_hlo_and_back(monkeypatch):
    """tf_jit_in_cluster: the call of a jit_compile function (PartitionedCall) joined the
    step's cluster; XLA's metadata names the called function's nodes (in the graph's
    library), never the call. The call's inspector shows those instructions (not 'XLA
    folded it away'), and from one of them the sidebar leads back to the call."""
    from compiler_bridge.dumps import AFTER
    from compiler_bridge.tf import call_bodies, instructions_of
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2

    d = open_dump(sample("tf_jit_in_cluster"))
    ix = tf_index(d)
    (call,) = [n for c in ix.clusters for n in c.nodes if n.op == "PartitionedCall"]
    g = graph_pb2.GraphDef()
    text_format.Parse(read(os.path.join(sample("tf_jit_in_cluster"), ix.main.path)), g)
    (fn,) = [f for f in g.library.function if f.signature.name == call.function]
    body = {n.name for n in fn.node_def} - {n.name for n in g.node}
    cluster = ix.cluster_of(call.name)
    hlo = d.stage(cluster.module, AFTER)
    from_body = [i.name for i in hlo.entry.instructions if _hlo_op_names(hlo, i) & body]
    assert from_body and not [i for i in hlo.entry.instructions if i.op_name == call.name]
    assert set(call_bodies(ix)[call.name]) == body
    assert instructions_of(hlo, call.name, call_bodies(ix)[call.name]) == from_body

    at = app(sample("tf_jit_in_cluster"), monkeypatch, {"selected": call.name})
    show = [b for b in at.button if b.label.startswith("Show ")]
    assert len(show) == min(len(from_body), 4)
    assert not any("folded it away" in c.value for c in at.caption)
    show[0].click().run()
    back = [b.label.replace("\\", "") for b in at.sidebar.button if "TF node" in b.label]
    assert back == [f"◀ TF node {call.name}"]


def test_without_the_clustering_debug_flag_the_clusters_come_from_encapsulations_input():
    """tf_no_debug: the program of tf_uncompilable run without --tf_xla_clustering_debug
    (encapsulate_subgraphs_pass's VLOG on): TF dumps no mark_for_compilation graph, but its
    encapsulate_subgraphs_before dump is the marked step graph. Its clusters are TF's own
    summary's, each with its module, and the unclustered nodes have the log's reasons."""
    folder = sample("tf_no_debug")
    assert not [f for f in os.listdir(folder) if f.startswith("mark_for_compilation")]
    d = open_dump(folder)
    ix = tf_index(d)
    assert ix.main is not None and ix.main.path.startswith("encapsulate_subgraphs_before")
    assert {c.name: (len(c.nodes), Counter(c.ops)) for c in ix.clusters} == \
        _logged_clusters("tf_no_debug")
    assert not ix.loose and not ix.elsewhere
    for c in ix.clusters:
        hlo = d.parse(c.module.before_optimizations.path)
        op_names = {i.op_name for i in hlo.instructions()} - {"", "XLA_Args", "XLA_Retvals"}
        assert op_names and op_names <= {n.name for n in c.nodes}, c.name
    logged = {}
    for line in read(os.path.join(folder, "tf_log.txt")).splitlines():
        if m := re.search(r"Found uncompilable node (\S+) \(op (\S+)\): (.*)$", line):
            logged[m.group(1)] = m.group(3)
    unclustered = ix.to_json()["main"]["unclustered"]
    ours = {u["node"]: u["reason"] for u in unclustered if u["reason"] is not None}
    assert ours and ours == {n: r for n, r in logged.items() if n in ours}
    assert {"text/AsString", "text/StringLength"} <= set(ours)


def _field_ends(data: bytes) -> list[int]:
    """Where each top-level field of a binary proto ends (all length-delimited in a
    GraphDef: node 1, library 2, versions 4)."""
    ends, i = [], 0
    while i < len(data):
        i += 1                                  # the tag: one byte for fields 1-15
        length = shift = 0
        while True:
            b = data[i]
            i += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        i += length
        ends.append(i)
    return ends


@pytest.mark.parametrize("name, step", [("tf_uncompilable", "mark_for_compilation_3.pbtxt"),
                                        ("tf_binary", "mark_for_compilation_3.pb")])
def test_a_graph_dump_cut_between_two_nodes_is_an_error(tmp_path, name, step):
    """A dump cut right after a node still parses as a GraphDef (text, and binary at a
    field's end) but lacks the 'versions' TF writes last: it is named as cut short, not
    shown as a step graph missing half its nodes (and clusters)."""
    folder = tmp_path / name
    shutil.copytree(sample(name), folder)
    data = (folder / step).read_bytes()
    nodes = len(read_graph(data, step).nodes)
    half = nodes // 2
    if step.endswith(".pb"):
        at = _field_ends(data)[half - 1]
    else:                               # a node's closing brace, at the start of a line
        at = [m.end() for m in re.finditer(rb"^}\n", data, re.M)][half - 1]
    (folder / step).write_bytes(data[:at])
    ix = tf_index(open_dump(folder))
    errors = dict(ix.errors)
    assert set(errors) == {step}
    assert errors[step] == (f"{step}: the GraphDef ends early, after {half} nodes and "
                            "without the 'versions' TF writes last: a dump cut short")
    assert ix.main is None or ix.main.path != step


def test_an_open_cluster_of_a_thousand_nodes_folds_by_scope_and_lays_out(tmp_path):
    """The sweep's 400-layer step graph (49 MB of dumps, too big to commit) put 806 nodes
    in one cluster: opened, it was drawn node by node in its box, with no node budget,
    and Graphviz gave up after its 60 s limit on every click. Here make_tf_graph's
    repeated tf_autocluster step graph with its blocks' clusters made one (1,410 nodes, 47
    name scopes; each drawn before): opened, the cluster's nodes fold by name scope in
    its box (the scopes with most nodes a folder each, the rest one), the selected node
    stays itself, every node is drawn as something, and the view lays out."""
    from bench.corpus.make_tf_graph import build
    from google.protobuf import text_format
    from viz import render_svg
    from viz.tf import FOLDERS, cluster_dot

    g = build(2000)
    for n in g.node:
        if "_XlaCluster" in n.attr:
            n.attr["_XlaCluster"].s = b"cluster_0"
    (tmp_path / "mark_for_compilation.pbtxt").write_text(text_format.MessageToString(g))
    ix = tf_index(open_dump(tmp_path))
    (cluster,) = ix.clusters
    assert len(cluster.nodes) == 30 * (len(g.node) // 43) > 1000
    selected = cluster.nodes[len(cluster.nodes) // 2].name
    d = cluster_dot(ix, frozenset({"cluster_0"}), selected)
    inside = {d.ids[n.name] for n in cluster.nodes}
    assert d.folded and f"node:{selected}" in inside
    assert len(inside) <= FOLDERS + 2          # the folders, 'other scopes', the selection
    assert all(f'id="{sid}"' in d.dot for sid in inside)     # each drawn
    render_svg(d.dot)                          # raises LayoutError past the time limit


def _computes(hlo, inst, names: set[str], entry: bool = True) -> bool:
    """Whether an ENTRY instruction, or one a fusion holds (at any depth) other than a
    constant, is named after one of ``names`` in XLA's metadata."""
    if inst.op_name in names and (entry or inst.opcode != "constant"):
        return True
    for callee in inst.called_names if inst.opcode == "fusion" else ():
        comp = hlo.get_computation(callee)
        if comp is not None and any(_computes(hlo, i, names, False)
                                    for i in comp.instructions):
            return True
    return False


@pytest.mark.parametrize("name", ["tf_autocluster", "tf_uncompilable", "tf_keras"])
def test_a_node_leads_to_the_instructions_computing_it_not_to_copies_of_its_constants(name):
    """XLA's CSE keeps one of equal constants, named after its node, and fusion copies it
    into each user: tf_autocluster's SparseSoftmaxCrossEntropyWithLogits listed 2 fusions
    that only hold such a constant (a 400-layer graph of the sweep: 'layer0/mul' listed
    101 fusions for its one multiply). A node leads to the instructions that compute it
    (its own constants too, an ENTRY constant, or a Const node's fusions)."""
    from compiler_bridge.dumps import AFTER
    from compiler_bridge.tf import instructions_of

    d = open_dump(sample(name))
    ix = tf_index(d)
    checked = 0
    for c in ix.clusters:
        hlo = d.stage(c.module, AFTER)
        entry = {i.name: i for i in hlo.entry.instructions}
        for n in c.nodes:
            found = instructions_of(hlo, n.name)
            computing = [i for i in entry if _computes(hlo, entry[i], {n.name})]
            if computing:
                assert found == computing, n.name
                checked += 1
    assert checked > 10


def test_the_modules_of_one_jit_function_say_how_it_was_called(monkeypatch):
    """tf_jit calls norm_gelu from Python first, then from outer's graph: XLA compiled two
    modules of the one function (numbered in compile order), listed as two rows alike.
    Called eagerly, the module's name carries the eager op's attributes; from a graph's
    call node, the function's name alone. Each row says which."""
    d = open_dump(sample("tf_jit"))
    ix = tf_index(d)
    assert [(j.module.id, j.eager) for j in ix.jit] == [("0000", True), ("0001", False)]
    assert len({j.function for j in ix.jit}) == 1
    # the graph's call of it: a node of outer's graph, _XlaMustCompile on
    assert any(n.must_compile and n.function == ix.jit[0].function
               for f in ix.files for n in f.graph.nodes)
    at = app(sample("tf_jit"), monkeypatch)
    (table,) = [df.value for df in at.dataframe if "function" in df.value.columns]
    assert list(table["called"]) == ["from Python (eager)", "from a tf.function's graph"]


def test_a_tfdata_map_tf_clustered_is_not_the_step_graph(monkeypatch):
    """tf_data: TF clustered the training step (13 nodes) and the tf.data map that feeds
    it (28 nodes, more than the step's). The step graph is the training step's; the map's
    cluster is listed among the other graphs' with the tf.data function it is, the one
    the dataset's MapDataset runs (read with TF's protos), in the index, CLI and page."""
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2

    folder = sample("tf_data")
    g = graph_pb2.GraphDef()
    text_format.Parse(read(os.path.join(folder, "encapsulate_subgraphs_before_4.pbtxt")), g)
    (map_node,) = [n for n in g.node if n.op == "MapDataset"]
    fn_name = map_node.attr["f"].func.name
    (fn,) = [f for f in g.library.function if f.signature.name == fn_name]
    body = {n.name for n in fn.node_def}

    ix = tf_index(open_dump(folder))
    logged = _logged_clusters("tf_data")
    assert {c.name: (len(c.nodes), Counter(c.ops)) for c in ix.clusters + ix.elsewhere} \
        == logged
    assert max(size for size, _ in logged.values()) > len(ix.clusters[0].nodes)  # the map
    (step,) = ix.clusters
    # train_step(x, y) and its matmul, which the map has none of
    assert "MatMul" in step.ops and "MatMul" not in {n.op for n in fn.node_def}
    assert {n.name for n in ix.main.graph.nodes if n.op == "_Arg"} >= {"x", "y"}
    assert not step.pipeline
    (mapped,) = ix.elsewhere
    assert mapped.pipeline == fn_name
    assert {n.name for n in mapped.nodes} <= body | {n.name for n in mapped.nodes
                                                      if "/clone_" in n.name}

    p = subprocess.run([sys.executable, "-m", "compiler_bridge", "clusters", folder,
                        "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["main"]["file"] == ix.main.path
    assert [c["pipeline"] for c in out["elsewhere"]] == [fn_name]

    at = app(folder, monkeypatch)
    shown = [str(df.value["graph"].tolist()) for df in at.dataframe
             if "graph" in df.value.columns]
    assert any(f"tf.data function {fn_name}" in s for s in shown)
