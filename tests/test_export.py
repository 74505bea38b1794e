"""Exports for bug reports: HTML with no network, escaped names, Model Explorer JSON, bundles."""

from __future__ import annotations

import io
import re
import zipfile

from compiler_bridge import open_dump, parse_hlo
from viz import html_report, model_explorer_graphs, model_explorer_node_data
from viz import GraphOptions, build_graph
from viz import render_svg

from conftest import read, sample, sample_file

EVIL = '<script>alert("x")</script>'


def evil_module():
    """A real dump file whose op_name, custom attribute and backend_config carry markup."""
    text = read(sample_file("cond_switch", "module_*.cpu_after_optimizations.txt"))
    text = text.replace('op_name="jit(', 'op_name="' + EVIL.replace('"', '\\"') + '/jit(')
    m = re.search(r"(%[\w.\-]+ = \S+ fusion\([^)]*\))", text)
    text = text.replace(m.group(1), m.group(1) + ', frontend_attributes={note="' +
                        EVIL.replace('"', '\\"') + '"}', 1)
    return parse_hlo(text, "evil.txt")


def test_html_report_is_self_contained_and_escaped():
    module = evil_module()
    view = build_graph(module, None, GraphOptions(grouping="layers"))
    svg = render_svg(view.dot)
    inst = next(i for i in module.instructions() if EVIL in i.op_name)
    page = html_report(title=f"{module.name} {EVIL}", svg=svg, view_query={"selected": EVIL},
                       inspector={"HLO": inst.text, "op_name": inst.op_name},
                       runtime_rows=[{"instruction": EVIL, "measured_us": 1.0}],
                       legend=view.legend, notes=view.notes)
    assert "<script" not in page.lower()
    assert "http" not in page.lower()
    assert "&lt;script&gt;" in page
    assert page.count("<svg") == 1


def test_svg_escapes_names_and_attributes():
    module = evil_module()
    svg = render_svg(build_graph(module).dot)
    assert "<script" not in svg.lower()
    assert "&lt;script&gt;" in svg    # the text is there, escaped


def test_model_explorer_graph_json():
    d = open_dump(sample("scan_while"))
    module = d.stage(d.main)
    doc = model_explorer_graphs(module)
    assert doc["label"] == module.name
    assert [g["id"] for g in doc["graphs"]] == [c.name for c in module.computations]
    entry = next(g for g in doc["graphs"] if g["id"] == module.entry.name)
    by_id = {n["id"]: n for n in entry["nodes"]}
    for inst in module.entry.instructions:
        node = by_id[inst.name]
        assert [e["sourceNodeId"] for e in node["incomingEdges"]] == list(inst.operand_names)
        assert node["subgraphIds"] == list(inst.called_names)
        assert {"key": "shape", "value": str(inst.shape)} in node["outputsMetadata"][0]["attrs"]
    whiles = [n for n in entry["nodes"] if n["label"] == "while"]
    assert whiles and all(len(n["subgraphIds"]) == 2 for n in whiles)
    data = model_explorer_node_data(module, {i.name: 1.5 for i in module.entry.instructions})
    assert set(data) == {module.entry.name}
    assert all(v == {"value": 1.5} for v in data[module.entry.name]["results"].values())


def test_repro_bundle_holds_the_module_and_traces_only():
    d = open_dump(sample("transformer"))
    blob = d.repro_bundle(d.main)
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        names = z.namelist()
    assert len(names) == len(d.main.files) + len(d.traces)
    bundle = open_dump_bytes(blob)
    assert bundle.main.name == d.main.name and len(bundle.traces) == len(d.traces)


def open_dump_bytes(blob: bytes):
    import os
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), "bundle.zip")
    with open(path, "wb") as f:
        f.write(blob)
    return open_dump(path)


def test_the_reports_view_query_opens_that_view(tmp_path):
    """The report's 'view ?…' joined the parameters as they were: a group id of an op_name
    scope with '&' or '#' in it ended the parameter there, so the query pasted after the
    app's address opened another view."""
    import html
    import urllib.parse

    from tests.support.fresh import compile_program
    from viz import ViewState, graph_for
    dump_dir, _ = compile_program(tmp_path, (
        "def f(x):\n"
        "    with jax.named_scope('a&b c#d=e%f'):\n"
        "        return jnp.tanh(x @ x) + 1\n"
        "ARGS = (jnp.ones((4, 4)),)"))
    dump = open_dump(str(dump_dir))
    module = dump.stage(dump.main, "before_optimizations")
    scope = next(g for g in build_graph(module, None, GraphOptions()).groups
                 if "a&b c#d=e%f" in g)
    state = ViewState(dump="x y&z", module=dump.main.id, stage="before_optimizations",
                      selected=scope, expanded=(scope,), focus=scope)
    page = html_report(title="t", svg=render_svg(graph_for(dump, state).dot),
                       view_query=state.to_query())
    shown = html.unescape(re.search(r"view <code>\?(.*?)</code>", page).group(1))
    assert ViewState.from_query(dict(urllib.parse.parse_qsl(shown))) == state
