"""The TensorFlow cluster view through Streamlit's AppTest: shown for a dump with TF graphs
and no module in the URL; clicks open clusters and inspect nodes; a cluster's module opens
in the explorer; broken graph files are named and the rest still shows."""

from __future__ import annotations

import os
import re
import shutil

from conftest import sample
from tests.support.apptest import app, mount, ok, query, select_row, texts

from compiler_bridge import open_dump
from compiler_bridge.tf import graph_timeline, tf_index
from ui.stepper import CHART_MIN_STEPS
from ui.tf import TF_GRAPH_KEY

_seq = iter(range(1, 1_000_000))


def click(at, target: str):
    at.session_state[TF_GRAPH_KEY] = {"click": {"id": target, "dbl": False,
                                                "seq": f"tf{next(_seq)}"}}
    at.run()
    ok(at)
    return at


def _label(button) -> str:
    """A button's label as shown (labels are markdown, names in them escaped)."""
    return button.label.replace("\\", "")


def _plain(at) -> str:
    """The page's text with markdown's escapes taken out."""
    return texts(at).replace("\\", "")


def _svg(at) -> str:
    for c in at.get("bidi_component"):
        if '"svg"' in (c.proto.json or ""):
            import json
            return json.loads(c.proto.json).get("svg", "")
    return ""


def test_a_tf_dump_opens_on_its_clusters(monkeypatch):
    at = app(sample("tf_uncompilable"), monkeypatch)
    assert any(h.value == "TensorFlow clusters" for h in at.subheader)
    page = _plain(at)
    assert "mark_for_compilation_3.pbtxt" in page
    assert "String ops (AsString, StringLength)" in page
    assert "'remapper': False" in page
    assert "cluster_0 and cluster_1 stay two clusters" in page.replace("*", "")
    svg = _svg(at)
    assert 'id="group:cluster_0"' in svg and 'id="group:cluster_1"' in svg
    assert 'id="node:text/AsString"' in svg
    assert [_label(b) for b in at.button if _label(b).startswith("Open cluster_")] == [
        "Open cluster_0's HLO (module 0000)", "Open cluster_1's HLO (module 0001)"]


def test_clicks_open_a_cluster_and_inspect_a_node(monkeypatch):
    at = app(sample("tf_uncompilable"), monkeypatch)
    click(at, "group:cluster_0")
    assert query(at).get("expanded") == "cluster_0"
    assert 'id="node:pre/Sum"' in _svg(at) and 'id="node:post/Mean"' not in _svg(at)
    click(at, "node:text/AsString")
    assert query(at).get("selected") == "text/AsString"
    page = _plain(at)
    assert "No registered 'AsString' OpKernel for XLA_CPU_JIT devices" in page
    ix = tf_index(open_dump(sample("tf_uncompilable")))
    assert all(x in page for x in ix.main.graph.node("text/AsString").inputs)


def test_the_cluster_button_opens_its_module_and_the_sidebar_leads_back(monkeypatch):
    at = app(sample("tf_autocluster"), monkeypatch)
    next(b for b in at.button if _label(b).startswith("Open cluster_0")).click().run()
    ok(at)
    assert query(at).get("module") == "0000"
    assert not any(h.value == "TensorFlow clusters" for h in at.subheader)
    assert mount(at, "card") is not None
    next(b for b in at.sidebar.button if "TensorFlow clusters" in b.label).click().run()
    ok(at)
    assert "module" not in query(at)
    assert any(h.value == "TensorFlow clusters" for h in at.subheader)


def test_jit_only_dump_lists_its_functions(monkeypatch):
    at = app(sample("tf_jit"), monkeypatch)
    labels = [b.label for b in at.button]
    assert "Open module 0000" in labels and "Open module 0001" in labels


def test_without_a_log_the_page_gives_the_command(monkeypatch, tmp_path):
    folder = tmp_path / "nolog"
    shutil.copytree(sample("tf_uncompilable"), folder)
    (folder / "tf_log.txt").unlink()
    at = app(str(folder), monkeypatch)
    assert any("TF_CPP_VMODULE=mark_for_compilation_pass=3,compilability_check_util=3"
               in c.value for c in at.code)


def test_broken_graph_files_are_named_and_the_rest_shows(monkeypatch, tmp_path):
    folder = tmp_path / "broken"
    shutil.copytree(sample("tf_uncompilable"), folder)
    text = (folder / "build_xla_ops_5.pbtxt").read_text()
    (folder / "build_xla_ops_5.pbtxt").write_text(text[: len(text) // 2])
    (folder / "junk.pb").write_bytes(b"\x0a\xff\xff\xff\x0f garbage")
    at = app(str(folder), monkeypatch)
    warnings = " ".join(e.value for e in at.error)      # the dump's unreadable files
    assert "build_xla_ops_5.pbtxt:" in warnings and "not a text GraphDef" in warnings
    assert "junk.pb: not a binary GraphDef" in warnings
    assert str(tmp_path) not in warnings + texts(at)         # no server paths
    assert 'id="group:cluster_0"' in _svg(at)


def test_from_a_tf_node_to_its_hlo_and_back(monkeypatch):
    at = app(sample("tf_autocluster"), monkeypatch,
             {"selected": "gradient_tape/dense2/MatMul/MatMul"})
    show = [b for b in at.button if _label(b).startswith("Show ")]
    assert [_label(b) for b in show] == ["Show MatMul.4 in module 0000"]
    show[0].click().run()
    ok(at)
    assert query(at).get("module") == "0000" and query(at).get("selected") == "MatMul.4"
    back = [b for b in at.sidebar.button if _label(b).startswith("◀ TF node")]
    assert [_label(b) for b in back] == ["◀ TF node gradient_tape/dense2/MatMul/MatMul"]
    back[0].click().run()
    ok(at)
    assert "module" not in query(at)
    assert query(at).get("selected") == "gradient_tape/dense2/MatMul/MatMul"
    assert query(at).get("expanded") == "cluster_0"


def _step(tl, pass_name: str) -> int:
    return next(s.index for s in tl.steps if s.pass_name == pass_name)


def _clustered(path: str) -> set[str]:
    """The nodes TF marked _XlaCluster in a pbtxt, read with TF's own protos."""
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2
    g = graph_pb2.GraphDef()
    with open(path, encoding="utf-8") as f:
        text_format.Parse(f.read(), g)
    return {n.name for n in g.node if "_XlaCluster" in n.attr}


def test_the_pass_stepper_steps_through_the_step_graphs_dumps(monkeypatch):
    """The HLO pass explorer's stepper, chart, compare picker and diff tabs, on the TF
    step graph's dumps."""
    dump = open_dump(sample("tf_uncompilable"))
    ix = tf_index(dump)
    tl = graph_timeline(dump, ix)
    at = app(sample("tf_uncompilable"), monkeypatch)
    # the step graph as mark_for_compilation left it, diffed with the dump before it
    mark = _step(tl, "mark_for_compilation")
    assert at.select_slider(key="pass-slider").value == mark
    assert [int(o) for o in at.select_slider(key="pass-slider").proto.options] == \
        [s.index for s in tl.visible(True)]
    # the slider's steps are the dumps in the order TF's log wrote them
    run = ix.log.run_of(ix.main.path)
    logged = [p.rsplit("/", 1)[1] for p in run.dumped if "fdef_cluster" not in p]
    assert [s.file for s in tl.steps] == logged and len(logged) >= 9
    # a dozen steps: the slider names each, so no timeline chart (its script is most of a
    # small page's load); the HLO per-pass samples, with more steps, have one
    assert len(tl.visible(True)) < CHART_MIN_STEPS and not at.get("plotly_chart")
    page = _plain(at)
    folder = sample("tf_uncompilable")
    newly = _clustered(os.path.join(folder, tl.step(mark).file)) - _clustered(
        os.path.join(folder, tl.step(mark - 1).file))
    assert f"0 nodes added, 0 removed, {len(newly)} changed ({len(newly)} clustered)" in page
    options = at.button_group(key="diff-table").options
    assert options == [f"Changed ({len(newly)})"]
    table = next(d for d in at.dataframe if "node" in d.value.columns
                 and "what" in d.value.columns)
    assert set(table.value["node"]) == newly
    assert set(table.value["what"]) == {"clustered"}
    # the closed cluster boxes say what the pass did inside them
    for c in ix.clusters:
        assert f"{len({n.name for n in c.nodes} & newly)} changed" in _svg(at)

    # Next ▶: the annotated dump, every node renamed (not removed and added again)
    at.button(key="pass-next").click().run()
    ok(at)
    assert query(at)["stage"] == tl.step(mark + 1).stage
    nodes = tl.step(mark).nodes
    assert f"0 nodes added, 0 removed, {nodes} changed ({nodes} renamed)" in _plain(at)
    # a row of the Changes table selects that node in the TF graph, opening its cluster
    table = next(d for d in at.dataframe if "node" in d.value.columns
                 and "what" in d.value.columns)
    row = next(i for i, n in enumerate(table.value["node"]) if n.startswith("cluster_0/"))
    name = table.value["node"][row]
    select_row(at, "diff-rows:", row)
    assert query(at).get("selected") == name
    assert "cluster_0" in query(at).get("expanded", "")
    assert f'id="node:{name}"' in _svg(at)
    assert f"node: {name}" in _plain(at).replace("`", "")       # the inspector

    # the slider, and a compare target in the URL: encapsulation vs before_mark
    after = _step(tl, "encapsulate_subgraphs_after")
    at.select_slider(key="pass-slider").set_value(after).run()
    ok(at)
    assert query(at)["stage"] == tl.step(after).stage
    svg = _svg(at)
    # after encapsulation the cluster is one call node named after it
    assert 'id="node:cluster_0"' in svg and 'id="node:post/Mean"' not in svg
    clustered = sum(len(c.nodes) for c in ix.clusters)
    assert f"2 nodes added, {clustered} removed" in _plain(at)
    at.selectbox(key="pass-compare").select(tl.step(0).stage).run()
    ok(at)
    assert query(at)["compare"] == tl.step(0).stage
    assert f"2 nodes added, {clustered} removed" in _plain(at)
    # the text diff: each node's NodeDef side by side
    at.session_state[next(k for k in at.session_state if str(k).startswith("tf-details:"))] \
        = "Text diff"
    at.run()
    ok(at)
    html = "\n".join(h.value for h in at.get("html"))
    assert 'class="hl-diff"' in html and "removed node" in html and "<script" not in html
    # a removed node picked in the Changes table: the inspector says the pass removed it
    tabs = next(k for k in at.session_state if str(k).startswith("tf-details:"))
    at.session_state[tabs] = "Changes"
    at.run()
    ok(at)
    at.button_group(key="diff-table").set_value("removed").run()
    ok(at)
    table = next(d for d in at.dataframe if "node" in d.value.columns
                 and "device" in d.value.columns)
    gone = table.value["node"][0]
    select_row(at, "diff-rows:", 0)
    assert query(at).get("selected") == gone
    assert f"{gone} was removed by this pass" in _plain(at).replace("`", "")
    click(at, "node:cluster_0")
    assert "the call of cluster_0" in _plain(at)
    # the Steps tab: a row per dump; a click goes to that step
    at.session_state[tabs] = "Steps"
    at.run()
    ok(at)
    steps = next(d for d in at.dataframe if "nodes in clusters" in d.value.columns)
    assert list(steps.value["file"]) == [s.file for s in tl.visible(True)]
    select_row(at, "steps:", 0)
    assert query(at)["stage"] == tl.step(0).stage


def test_an_older_links_pass_stage_still_opens(monkeypatch):
    at = app(sample("tf_uncompilable"), monkeypatch,
             {"stage": "tf:encapsulate_subgraphs_after_5.pbtxt"})
    assert 'id="node:cluster_0"' in _svg(at) and 'id="node:post/Mean"' not in _svg(at)


def test_hostile_node_names_reach_the_page_escaped(monkeypatch, tmp_path):
    folder = tmp_path / "hostile"
    shutil.copytree(sample("tf_uncompilable"), folder)
    evil = "text/<img src=x onerror=alert(1)>*b*_`c`"
    for f in folder.iterdir():
        if f.suffix in (".pbtxt", ".txt") and not f.name.startswith("module_"):
            f.write_text(f.read_text().replace("text/AsString", evil))
    at = app(str(folder), monkeypatch, {"selected": evil})
    shown = 0
    for m in at.markdown:
        if "img" in m.value and not m.value.startswith("<style>"):
            outside_code = re.sub(r"`[^`]*`", "", m.value)     # code spans show text as is
            assert "<img" not in outside_code.replace("\\<img", ""), m.value
            shown += 1
    assert shown >= 2
    svg = _svg(at)
    assert "<img" not in svg and "&lt;img" in svg


def test_a_lone_pb_that_is_neither_hlo_nor_a_tf_graph_says_so(monkeypatch, tmp_path):
    # a profile saved under another name: a .pb, so taken for a TF graph dump by its name,
    # but neither a GraphDef nor an HLO proto. The page says what it expected, names the
    # file once, and draws no empty cluster page
    xplane = next(p for p in os.listdir(os.path.join(
        sample("scan_while"), "trace", "plugins", "profile")))
    src = os.path.join(sample("scan_while"), "trace", "plugins", "profile", xplane,
                       "vm.xplane.pb")
    lone = tmp_path / "profile.pb"
    shutil.copy(src, lone)
    at = app(str(lone), monkeypatch)
    shown = " ".join(e.value for e in at.error)
    assert "profile.pb: not a binary GraphDef" in shown
    assert "profile.pb`: `profile.pb" not in shown                  # named once
    assert "no XLA module and no TF graph" in shown and "HloProto" in shown, shown
    assert not any("Graph dumps:" in e.label for e in at.expander)
    # the expected names read as written ('module_NNNN.<name>.*', '*.pbtxt'): not markdown
    from compiler_bridge.dumps import DUMP_EXPECTED
    from ui.kit import md
    assert md(DUMP_EXPECTED) in shown
