"""TF clusters on real TF 2.21 CPU dumps (sample_dumps/tf_*, made by make_tf_samples.py).

Expected values come from TensorFlow's own output: the ``Clustering info`` summary and the
``Found uncompilable node`` / ``Dumped Graph to`` lines of its log (read here with plain
regexes, not with the bridge's log reader), the graph files themselves, and the
HLO metadata XLA wrote into each cluster's module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import config_pb2, graph_pb2

from compiler_bridge import open_dump
from compiler_bridge.tf import (GraphReadError, cycle_blocks, mangle, read_graph, reason_groups,
                                tf_index)

from conftest import ROOT, read, sample

AUTO = ["tf_autocluster", "tf_uncompilable"]
_GLOG = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ?")


def _log_lines(name: str) -> list[str]:
    return [_GLOG.sub("", line) for line in read(os.path.join(sample(name), "tf_log.txt"))
            .splitlines()]


def _run_lines(name: str, mark_file: str) -> list[str]:
    """The log's lines of the mark_for_compilation run that dumped ``mark_file``: from the
    'Starting fuel' before its 'Dumped Graph to' line to the next 'Starting fuel'."""
    lines = _log_lines(name)
    at = next(i for i, line in enumerate(lines)
              if line.startswith("Dumped Graph to") and line.endswith("/" + mark_file))
    start = max(i for i in range(at) if "Starting fuel" in lines[i])
    end = next((i for i in range(at, len(lines)) if "Starting fuel" in lines[i]), len(lines))
    return lines[start:end]


def _summary(lines: list[str]) -> tuple[int, dict[str, tuple[int, Counter]], Counter]:
    """TF's 'Clustering info' block: graph size, cluster -> (size, ops), unclustered ops."""
    i = next(i for i, line in enumerate(lines) if "Clustering info for graph of size" in line)
    size = int(lines[i].rsplit(" ", 1)[1])
    clusters: dict[str, tuple[int, Counter]] = {}
    unclustered: Counter = Counter()
    current: Counter | None = None
    for line in lines[i + 1:]:
        if m := re.match(r"^  (\S+) (\d+) / \d+ \(", line):
            current = Counter()
            clusters[m.group(1)] = (int(m.group(2)), current)
        elif line.startswith(" Unclustered nodes:"):
            current = unclustered
        elif m := re.match(r"^\s+(\S+): (\d+) instances", line):
            assert current is not None
            current[m.group(1)] = int(m.group(2))
        elif not line.startswith(" Built"):
            break
    return size, clusters, unclustered


@pytest.mark.parametrize("name", AUTO)
def test_clusters_equal_tfs_clustering_summary(name):
    ix = tf_index(open_dump(sample(name)))
    assert ix.main is not None and ix.clusters
    size, clusters, unclustered = _summary(_run_lines(name, ix.main.path))
    assert {c.name: (len(c.nodes), Counter(c.ops)) for c in ix.clusters} == clusters
    ours = Counter(n.op for n in ix.main.graph.nodes if ix.cluster_of(n.name) is None)
    # TF's count includes the graph's _SOURCE and _SINK (two NoOps) that GraphDef dumps omit
    assert ours + Counter({"NoOp": 2}) == unclustered
    assert len(ix.main.graph.nodes) + 2 == size


@pytest.mark.parametrize("name", AUTO)
def test_each_cluster_maps_to_the_module_xla_compiled_from_its_nodes(name):
    d = open_dump(sample(name))
    ix = tf_index(d)
    for c in ix.clusters:
        assert c.module is not None, c.name
        assert c.module.name.startswith(c.name + "__XlaCompiledKernel_true")
        hlo = d.parse(c.module.before_optimizations.path)
        op_names = {i.op_name for i in hlo.instructions()} - {"", "XLA_Args", "XLA_Retvals"}
        # every HLO instruction with a TF name came from a node of this cluster
        assert op_names and op_names <= {n.name for n in c.nodes}, op_names


@pytest.mark.parametrize("name", AUTO)
def test_reasons_equal_the_logs(name):
    ix = tf_index(open_dump(sample(name)))
    logged = {}
    for line in _run_lines(name, ix.main.path):
        if m := re.match(r"Found uncompilable node (\S+) \(op (\S+)\): (.*)$", line):
            logged[m.group(1)] = (m.group(2), m.group(3))
    out = ix.to_json()["main"]["unclustered"]
    ours = {u["node"]: (u["op"], u["reason"]) for u in out if u["reason"] is not None}
    assert ours == logged
    assert any(op == "_FusedMatMul" for op, _ in logged.values())


def test_the_string_ops_sample_says_why_each_was_left_out():
    ix = tf_index(open_dump(sample("tf_uncompilable")))
    ops = {u["op"] for u in ix.to_json()["main"]["unclustered"] if u["reason"]}
    assert {"AsString", "StringLength", "_FusedMatMul"} <= ops
    assert any(set(c.via) == {"text/AsString", "text/StringLength"} for c in ix.cycles)
    assert len(ix.clusters) == 2


@pytest.mark.parametrize("name", AUTO + ["tf_jit"])
def test_graphs_are_grouped_as_the_log_dumped_them(name):
    """Files of one graph are paired by node names (suffixes do not line up across passes);
    the log's 'Dumped Graph to' lines, graph by graph, are the truth."""
    ix = tf_index(open_dump(sample(name)))
    runs: list[list[str]] = []
    order = ["before_mark", "before_increase_dynamism"]
    for line in _log_lines(name):
        if "Starting fuel" in line:
            runs.append([])
        elif m := re.match(r"Dumped (?:Graph|FunctionDef) to (.+)$", line):
            base = m.group(1).rsplit("/", 1)[1]
            # logs without auto-clustering: a graph's dumps start with before_increase_dynamism
            if not runs or (base.startswith(order[1]) and any(
                    f.startswith(order[1]) for f in runs[-1])):
                runs.append([])
            runs[-1].append(base)
    expected = {frozenset(r) for r in runs if r}
    assert {frozenset(f.path for f in g.files) for g in ix.groups} == expected
    assert sum(len(g.files) for g in ix.groups) == len(ix.files)


def test_step_graph_is_the_marked_graph_tf_clustered():
    # (tf_keras: a larger graph TF clustered nothing of does not hide it; test_tf_keras)
    d = open_dump(sample("tf_autocluster"))
    ix = tf_index(d)
    marked = [f for f in ix.files if f.pass_.name == "mark_for_compilation"]
    assert [f for f in marked if f.graph.clusters()] == [ix.main]
    assert ix.main is max(marked, key=lambda f: len(f.graph.nodes))
    assert ix.step is not None and ix.main in ix.step.files
    passes = [f.pass_.name for f in ix.step.files]
    assert passes[:4] == ["before_mark_for_compilation", "mark_for_compilation",
                          "mark_for_compilation_annotated",
                          "before_increase_dynamism_for_auto_jit_pass"]
    assert passes[-1] == "build_xla_ops"


def test_jit_compile_functions_link_to_their_modules():
    d = open_dump(sample("tf_jit"))
    ix = tf_index(d)
    assert ix.main is None
    # the call node in the graph names the function; XLA named both modules after it
    calls = {n.function for f in ix.files for n in f.graph.nodes if n.must_compile}
    assert len(calls) == 1
    fn = calls.pop()
    assert re.fullmatch(r"__inference_norm_gelu_\d+", fn)
    assert [(j.function, j.module.id) for j in ix.jit] == [(fn, m.id) for m in d.modules]
    assert all(m.name.startswith(mangle(fn)) for m in d.modules)


def test_jit_modules_show_their_input_shapes():
    """A function retraced at other shapes compiles to modules whose names differ only by
    a number: the clusters command (text and JSON) and the TF page's table show each
    module's inputs, as XLA's entry_computation_layout writes them (layouts dropped)."""
    from viz.tf import jit_rows
    d = open_dump(sample("tf_jit"))
    want = {}
    for m in d.modules:
        header = read(os.path.join(sample("tf_jit"), m.before_optimizations.path)
                      ).splitlines()[0]
        layout = re.search(r"entry_computation_layout=\{\((.*?)\)->", header).group(1)
        want[m.id] = re.sub(r"\{[^}]*\}", "", layout)
    assert all(want.values())
    out = json.loads(_cli("clusters", sample("tf_jit"), "--json").stdout)
    assert {j["module"]: j["inputs"] for j in out["jit"]} == want
    text = _cli("clusters", sample("tf_jit")).stdout
    for mid, shapes in want.items():
        assert f"module {mid} inputs ({shapes})" in text, text
    rows = jit_rows(tf_index(d))
    assert [r["inputs"] for r in rows] == [want[j.module.id] for j in tf_index(d).jit]


def test_mangle_follows_xla():
    assert mangle("__inference_train_step_173[_XlaMustCompile=true]") == \
        "a_inference_train_step_173__XlaMustCompile_true_"
    assert mangle("cluster_1") == "cluster_1"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "compiler_bridge", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_clusters_cli_json():
    p = _cli("clusters", sample("tf_autocluster"), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) == {"graphs", "main", "elsewhere", "loose", "loose_unclustered", "jit"}
    assert out["elsewhere"] == []       # TF clustered no other graph of this program
    assert out["loose"] == out["loose_unclustered"] == []   # every module is its graph's
    assert all(set(g) == {"file", "pass", "nodes", "clusters", "unclustered"}
               for g in out["graphs"])
    assert len(out["graphs"]) == len([f for f in os.listdir(sample("tf_autocluster"))
                                      if f.endswith(".pbtxt")])
    main = out["main"]
    assert set(main) == {"file", "nodes", "clusters", "unclustered"}
    size, clusters, _ = _summary(_run_lines("tf_autocluster", main["file"]))
    assert {c["name"]: (c["nodes"], Counter(c["ops"])) for c in main["clusters"]} == clusters
    assert all(set(c) == {"name", "nodes", "ops", "module"} for c in main["clusters"])
    d = open_dump(sample("tf_autocluster"))
    assert [c["module"] for c in main["clusters"]] == [d.modules[0].id]
    # 'reason': TF's 'Found uncompilable node' words; 'why': the page's answer (issue 32)
    assert all(set(u) == {"node", "op", "reason", "why"} for u in main["unclustered"])
    assert all(u["why"] for u in main["unclustered"])
    assert main["nodes"] + 2 == size
    g = next(g for g in out["graphs"] if g["file"] == main["file"])
    assert g["pass"] == "mark_for_compilation" and g["clusters"] == {"cluster_0": 30}
    assert g["unclustered"] == main["nodes"] - 30 == len(main["unclustered"])
    assert out["jit"] == []


def test_clusters_cli_jit_only_and_not_tf():
    out = json.loads(_cli("clusters", sample("tf_jit"), "--json").stdout)
    assert out["main"] == {} and [j["module"] for j in out["jit"]] == ["0000", "0001"]
    p = _cli("clusters", sample("mlp_train"))
    assert p.returncode == 1 and "no TF graph dumps" in p.stderr
    human = _cli("clusters", sample("tf_uncompilable")).stdout
    assert "cluster_0" in human and "AsString" in human


# --------------------------------------------------------------------------- bad input

def test_binary_graphdef_reads_like_its_text():
    path = os.path.join(sample("tf_autocluster"), "mark_for_compilation_6.pbtxt")
    g = graph_pb2.GraphDef()
    text_format.Parse(read(path), g)
    from_text = read_graph(open(path, "rb").read(), "a.pbtxt")
    from_binary = read_graph(g.SerializeToString(), "a.pb")
    assert from_binary.nodes == from_text.nodes and len(from_text.nodes) == len(g.node)


def test_bad_graph_files_are_named_and_the_rest_opens(tmp_path):
    folder = tmp_path / "dump"
    shutil.copytree(sample("tf_autocluster"), folder)
    text = (folder / "build_xla_ops_10.pbtxt").read_text()
    (folder / "build_xla_ops_10.pbtxt").write_text(text[: len(text) // 3].rsplit("\n", 1)[0])
    lines = (folder / "encapsulate_subgraphs_after_10.pbtxt").read_text().splitlines()
    lines.insert(3, '  colour: "red"')
    (folder / "encapsulate_subgraphs_after_10.pbtxt").write_text("\n".join(lines))
    foreign = config_pb2.ConfigProto(device_count={"CPU": 2}, intra_op_parallelism_threads=4)
    (folder / "settings.pb").write_bytes(foreign.SerializeToString())
    (folder / "noise.pb").write_bytes(b"\x0a\xff\xff\xff\x0f garbage")

    d = open_dump(folder)
    ix = tf_index(d)
    errors = dict(ix.errors)
    assert set(errors) == {"build_xla_ops_10.pbtxt", "encapsulate_subgraphs_after_10.pbtxt",
                           "settings.pb", "noise.pb"}
    assert re.match(r"build_xla_ops_10\.pbtxt:\d+:\d+: not a text GraphDef", errors[
        "build_xla_ops_10.pbtxt"])
    assert errors["encapsulate_subgraphs_after_10.pbtxt"].startswith(
        "encapsulate_subgraphs_after_10.pbtxt:4:3: not a text GraphDef")
    assert 'no field named "colour"' in errors["encapsulate_subgraphs_after_10.pbtxt"]
    assert errors["settings.pb"].startswith("settings.pb: not a binary GraphDef")
    assert errors["noise.pb"].startswith("noise.pb: not a binary GraphDef")
    assert {e.file for e in d.errors} == set(errors)
    # the rest still opens: the step graph, its cluster and module
    assert ix.main is not None and [c.name for c in ix.clusters] == ["cluster_0"]
    assert ix.clusters[0].module is not None
    p = _cli("clusters", str(folder), "--json")
    assert p.returncode == 0 and "settings.pb: not a binary GraphDef" in p.stderr


def test_a_cut_binary_graphdef_says_what_was_expected_not_protobufs_type():
    """A binary GraphDef cut short: the error names the file and 'a binary TF GraphDef',
    not protobuf's internal message type ('tensorboard.GraphDef')."""
    name = "before_mark_for_compilation.pb"
    with open(os.path.join(sample("tf_binary"), name), "rb") as f:
        data = f.read()
    with pytest.raises(GraphReadError) as e:
        read_graph(data[: len(data) // 2], name)
    said = str(e.value)
    assert said.startswith(f"{name}: not a binary GraphDef") and "tensorboard" not in said
    assert "expected a binary TF GraphDef" in said and "cut short" in said


def test_read_graph_rejects_what_is_not_a_graph():
    with pytest.raises(GraphReadError, match=r"^x\.pbtxt:1:1: not a text GraphDef"):
        read_graph(b"hello world\n", "x.pbtxt")


@pytest.mark.parametrize("name", AUTO)
def test_networkx_finds_the_cycles_tf_logged(name):
    """'Could not contract A -> B because contracting the edge would create a cycle via
    [...]': the same two parts (a node or the cluster it ended in) and the same path,
    found on the step graph with networkx."""
    ix = tf_index(open_dump(sample(name)))
    cluster_of = {n.name: c.name for c in ix.clusters for n in c.nodes}
    logged = set()
    for line in _run_lines(name, ix.main.path):
        if m := re.search(r"Could not contract <(.+?)(?: \+ \d+ others)? #\d+> -> <(.+?)"
                          r"(?: \+ \d+ others)? #\d+> because contracting the edge would "
                          r"create a cycle via \[(.*)\]", line):
            a, b = (cluster_of.get(x, x) for x in m.group(1, 2))
            logged.add((frozenset((a, b)), frozenset(m.group(3).split(","))))
    assert logged
    assert {(frozenset((b.node, b.cluster)), frozenset(b.via)) for b in cycle_blocks(ix)} \
        == logged


def test_reasons_are_grouped_with_fixes():
    ix = tf_index(open_dump(sample("tf_uncompilable")))
    groups = {g.kind: g for g in reason_groups(ix)}
    assert {n for n, _ in groups["strings"].nodes} == {"text/AsString", "text/StringLength"}
    fused = [n.name for n in ix.main.graph.nodes if n.op == "_FusedMatMul"]
    assert [n for n, _ in groups["remapper"].nodes] == fused and len(fused) == 1
    assert "'remapper': False" in groups["remapper"].fix
    assert "no_log" not in groups
    # the two clusters kept apart by the string ops: a cluster pair, not a node's reason
    assert "cycle" not in groups
    assert [(b.node, b.cluster) for b in cycle_blocks(ix)] == [("cluster_0", "cluster_1")]
    auto = {g.kind: g for g in reason_groups(tf_index(open_dump(sample("tf_autocluster"))))}
    assert [n for n, _ in auto["cycle"].nodes] == ["dense2/MatMul/ReadVariableOp"]


def test_without_a_log_the_reasons_say_how_to_get_them(tmp_path):
    folder = tmp_path / "nolog"
    shutil.copytree(sample("tf_uncompilable"), folder)
    (folder / "tf_log.txt").unlink()
    ix = tf_index(open_dump(folder))
    groups = reason_groups(ix)
    assert ix.log is None and [g.kind for g in groups] == ["no_log"]
    assert "TF_CPP_VMODULE=mark_for_compilation_pass=3,compilability_check_util=3" in \
        groups[0].fix
    assert all(u["reason"] is None for u in ix.to_json()["main"]["unclustered"])


def test_a_folder_of_tf_graphs_alone_is_a_dump_the_store_keeps(tmp_path):
    from compiler_bridge.dumps import Store
    folder = tmp_path / "graphs"
    folder.mkdir()
    for f in os.listdir(sample("tf_uncompilable")):
        if f.endswith(".pbtxt") or f == "tf_log.txt":
            shutil.copy(os.path.join(sample("tf_uncompilable"), f), folder)
    stored = Store(str(tmp_path / "data")).add_path(str(folder), "graphs")
    assert stored.modules == []
    ix = tf_index(open_dump(folder))
    assert [c.name for c in ix.clusters] == ["cluster_0", "cluster_1"]
    assert all(c.module is None for c in ix.clusters)


@pytest.mark.parametrize("name", AUTO)
def test_tf_nodes_and_hlo_instructions_link_both_ways(name):
    """Every ENTRY instruction whose metadata (written by XLA's TF bridge) names a TF node
    links to that node, and the node back to the instruction."""
    from compiler_bridge.tf import instructions_of, tf_node_of
    d = open_dump(sample(name))
    ix = tf_index(d)
    c = ix.clusters[0]
    hlo = d.stage(c.module, "after_optimizations")
    nodes = {n.name for n in c.nodes}
    linked = 0
    for inst in hlo.entry.instructions:
        node = tf_node_of(hlo, inst.name)
        if inst.op_name and inst.op_name not in ("XLA_Args", "XLA_Retvals"):
            assert node == inst.op_name
        if node:
            assert node in nodes
            assert inst.name in instructions_of(hlo, node)
            linked += 1
    assert linked >= 1


def test_a_clusters_hlo_is_grouped_by_the_tf_name_scopes_of_its_nodes():
    """The explorer's 'layers' grouping reads op_name, which holds the TF node name: the
    boxes of a cluster's module are the name scopes of the cluster's TF nodes."""
    from viz import GraphOptions, build_graph
    d = open_dump(sample("tf_autocluster"))
    c = tf_index(d).clusters[0]
    view = build_graph(d.stage(c.module), None, GraphOptions(grouping="layers"))
    scopes = {n.name.rsplit("/", 1)[0] for n in c.nodes if "/" in n.name}
    scopes |= {s.rsplit("/", k)[0] for s in scopes for k in range(1, s.count("/") + 1)}
    groups = {g[2:] for g in view.groups if g.startswith("L:")}
    assert {"gradient_tape", "gradient_tape/dense1"} <= groups <= scopes


def test_graphs_and_xla_files_in_sub_folders_of_a_zip_open_as_one(tmp_path):
    import zipfile
    src = sample("tf_uncompilable")
    out = tmp_path / "run.zip"
    with zipfile.ZipFile(out, "w") as z:
        for f in sorted(os.listdir(src)):
            sub = "graphs" if f.endswith(".pbtxt") else "xla" if f.startswith("module_") else ""
            z.write(os.path.join(src, f), "/".join(x for x in ("run", sub, f) if x))
    flat = tf_index(open_dump(src)).to_json()
    nested = tf_index(open_dump(out)).to_json()
    assert nested["main"]["file"] == "graphs/" + flat["main"]["file"]
    for key in ("clusters", "unclustered"):
        assert nested["main"][key] == flat["main"][key]
    assert len(nested["graphs"]) == len(flat["graphs"])


def test_binary_graph_dumps_from_tf_read_like_the_text_ones():
    """tf_binary: the same program as tf_uncompilable, dumped by TF as binary GraphDefs
    (TF_DUMP_GRAPH_FMT=BIN) and without a log: the same clusters, per TF's own summary in
    the text sample's log."""
    binary = tf_index(open_dump(sample("tf_binary")))
    assert binary.main is not None and binary.main.path.endswith(".pb")
    size, clusters, _ = _summary(_run_lines("tf_uncompilable", "mark_for_compilation_3.pbtxt"))
    assert {c.name: (len(c.nodes), Counter(c.ops)) for c in binary.clusters} == clusters
    assert len(binary.main.graph.nodes) + 2 == size
    text = tf_index(open_dump(sample("tf_uncompilable")))
    assert binary.main.graph.nodes == text.main.graph.nodes
    assert binary.log is None and [g.kind for g in reason_groups(binary)] == ["no_log"]
    assert binary.clusters[0].module is not None


def test_a_clusters_measured_runtime_comes_from_the_profiler_trace():
    """tf_autocluster ran 5 steps under TF's profiler: every kernel event in the trace
    belongs to the cluster's module, and the table's runtime is those kernels' medians."""
    from compiler_bridge.perf import measure
    from viz.tf import cluster_rows, module_runtimes
    d = open_dump(sample("tf_autocluster"))
    ix = tf_index(d)
    m = measure(d)
    assert m.unmatched_events == 0 and m.matched_events > 0
    mid = ix.clusters[0].module.id
    timings = m.module(mid)
    assert list(m.modules) == [mid]
    rt = module_runtimes(d)[mid]
    assert rt.executions == 5
    assert rt.us == pytest.approx(sum(k.median_us for k in timings.kernels.values()))
    row = cluster_rows(ix, module_runtimes(d))[0]
    assert row["measured"].endswith("µs per run (5 runs)")
    assert "measured" not in cluster_rows(tf_index(open_dump(sample("tf_uncompilable"))), {})[0]


def test_a_big_step_graph_draws_closed_clusters_and_folds_unclustered_nodes(tmp_path):
    """bench/corpus/make_tf_graph.py's repeated train step, 2,000 nodes: each closed cluster is one
    node, the unclustered nodes fold by name scope (one box per block), and every edge
    joins what is drawn."""
    from bench.corpus.make_tf_graph import build
    from viz.tf import cluster_dot
    g = build(2000)
    (tmp_path / "mark_for_compilation.pbtxt").write_text(text_format.MessageToString(g))
    ix = tf_index(open_dump(tmp_path))
    blocks = len(g.node) // 43
    assert len(ix.clusters) == blocks and all(len(c.nodes) == 30 for c in ix.clusters)
    d = cluster_dot(ix)
    assert d.folded and d.drawn == 2 * blocks
    drawn = set(d.ids.values())
    assert len(drawn) == 2 * blocks
    for line in d.dot.splitlines():
        if " -> " in line:
            a, b = re.findall(r'"([^"]+)"', line)[:2]
            assert a in drawn and b in drawn
    opened = cluster_dot(ix, frozenset({"cluster_0"}))
    assert opened.drawn == 2 * blocks - 1 + 30


@pytest.mark.parametrize("name", AUTO)
def test_the_cluster_view_opens_on_the_largest_cluster(name):
    """The step graph's drawing names where the view opens when it is too big to read
    whole (a 10k-node graph opened on an empty corner of its diagonal layout): the first
    of the largest clusters by TF's clustering summary, drawn as one box."""
    from viz.tf import cluster_dot
    ix = tf_index(open_dump(sample(name)))
    _, clusters, _ = _summary(_run_lines(name, ix.main.path))
    largest = max(size for size, _ in clusters.values())
    first = min((n for n, (size, _) in clusters.items() if size == largest),
                key=lambda n: int(n.rsplit("_", 1)[1]))
    drawing = cluster_dot(ix)
    assert drawing.home == f"group:{first}"
    assert f'id="group:{first}"' in drawing.dot
