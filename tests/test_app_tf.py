"""The TensorFlow cluster view through Streamlit's AppTest: shown for a dump with TF graphs
and no module in the URL; clicks open clusters and inspect nodes; a cluster's module opens
in the explorer; broken graph files are named and the rest still shows."""

from __future__ import annotations

import re
import shutil

from conftest import sample
from test_app import _mount, app, ok, query, texts

from compiler_bridge import open_dump
from compiler_bridge.tf import pass_of, tf_index
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
    assert _mount(at, "card") is not None
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


def test_the_pass_stepper_shows_each_dump_of_the_step_graph(monkeypatch):
    at = app(sample("tf_uncompilable"), monkeypatch)
    slider = at.get("select_slider")[0]
    files = [o.split(". ", 1)[1] for o in slider.proto.options]
    ix = tf_index(open_dump(sample("tf_uncompilable")))
    # the order the log dumped the step graph's GraphDefs in (FunctionDefs left out)
    run = ix.log.run_of(ix.main.path)
    logged = [pass_of(p.rsplit("/", 1)[1]).name for p in run.dumped
              if "fdef_cluster" not in p]
    assert files == logged and len(files) >= 9
    at = app(sample("tf_uncompilable"), monkeypatch,
             {"stage": "tf:encapsulate_subgraphs_after_5.pbtxt"})
    svg = _svg(at)
    # after encapsulation the cluster is one call node named after it
    assert 'id="node:cluster_0"' in svg and 'id="node:post/Mean"' not in svg
    page = _plain(at)
    # each cluster's nodes became one call node
    clustered = sum(len(c.nodes) for c in ix.clusters)
    assert f"against encapsulate_subgraphs_before: +2 nodes, −{clustered}" in page
    click(at, "node:cluster_0")
    assert "the call of cluster_0" in _plain(at)


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
