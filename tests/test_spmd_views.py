"""A sharded program in the app: the sharding badges on the graph, the inspector's picture of
the mesh and the Communication tab, on the ``spmd_train`` sample (expected values from the
sample's ``spmd_facts.json``, what JAX said at generation time)."""

from __future__ import annotations

import json
import os
import re

from compiler_bridge import open_dump, parse_hlo
from compiler_bridge.spmd import LINKS, link_for, partitioner_input
from conftest import SAMPLES, read, sample, sample_file
from tests.support.apptest import (app, click, node_text, open_tab, query, select_row, svg_of,
                                   texts)
from viz import sharding as SHV

PER_PASS = os.path.join(SAMPLES, "spmd_train_per_pass.tar.xz")


def _facts() -> dict:
    with open(os.path.join(sample("spmd_train"), "spmd_facts.json"), encoding="utf-8") as f:
        return json.load(f)


def _before():
    return parse_hlo(read(sample_file("spmd_train", "*before_optimizations.txt")))


def test_badges_name_each_parameter_s_partition_spec():
    """A ``⊞`` line per sharded instruction with the mesh axes the program's PartitionSpec
    named (w1: P('data', 'model')), one border colour per distinct sharding; none on a
    module that runs on one device."""
    module = _before()
    deco = SHV.sharding_decorations(module)
    facts = _facts()
    params = sorted((i for i in module.entry.instructions if i.opcode == "parameter"),
                    key=lambda i: i.parameter_number)
    for p, fact in zip(params, facts["entry_parameters"]):
        spec = fact["spec"] + [None] * (len(fact["shape"]) - len(fact["spec"]))
        if not any(spec):
            assert deco[p.name]["label"] == "⊞ replicated"
            continue
        assert deco[p.name]["label"].startswith(
            "⊞ [" + ", ".join(a or "-" for a in spec) + "]"), p.name
    w1 = next(p for p in params if p.name.startswith("params__w1__"))
    x = next(p for p in params if p.name.startswith("x."))
    assert deco[w1.name]["color"] != deco[x.name]["color"]
    single = parse_hlo(read(sample_file("mlp_train", "*before_optimizations.txt")))
    assert SHV.sharding_decorations(single) == {}


def test_the_mesh_picture_puts_each_tile_on_the_device_jax_says():
    module = _before()
    facts = _facts()
    w1 = next(i for i in module.entry.instructions if i.name.startswith("params__w1__"))
    fact = facts["entry_parameters"][2]
    card = SHV.sharding_card(module, w1)
    assert card.axes == ("data", "model")
    assert [[c.device for c in row] for row in card.grid] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    for row in card.grid:
        for c in row:
            part = ", ".join(f"{a}:{b}" for a, b in fact["device_slices"][str(c.device)])
            assert c.text.endswith(f"[{part}]"), c
    assert "per device: f32[4,16] = 256 B" in "\n".join(card.lines)


def test_communication_view_estimates_exposed_time_over_the_stated_link():
    dump = open_dump(PER_PASS)
    m = dump.modules[0]
    module = dump.stage(m)
    view = SHV.communication(module, partitioner_input(dump, m)[0], LINKS["cpu"])
    assert len(view["rows"]) == 19 and view["async"] == 0
    total = sum(r["sent bytes"] for r in view["rows"])
    assert view["total_sent"] == total
    assert abs(view["exposed_s"] - total / 10e9) < 1e-12     # all synchronous on CPU
    assert all(r["cause"] for r in view["rows"])
    assert sum(g["collectives"] for g in view["by_source"]) == 19


def test_tpu_and_gpu_links_are_the_published_figures():
    assert link_for("sm_9.0a_gpu", []).bytes_per_second == 450e9
    assert link_for("", ["x.tpu_comp_env.txt"]).bytes_per_second == 200e9
    assert link_for("cpu", []).name.endswith("(stated default)")


def test_app_communication_tab_and_the_inspector_s_mesh(monkeypatch):
    at = open_tab(app(PER_PASS, monkeypatch), "Communication")
    page = texts(at)
    assert "**19** collectives" in page and "8** devices" in page
    table = next(d.value for d in at.dataframe if "collective" in d.value.columns)
    assert len(table) == 19 and set(table["kind"]) >= {"all-gather", "all-reduce",
                                                         "all-to-all", "collective-permute"}
    by_line = next(d.value for d in at.dataframe if "kinds" in d.value.columns)
    assert int(by_line["collectives"].sum()) == 19
    first = str(table["collective"][0])
    select_row(at, "comm:", 0)
    assert query(at)["selected"] == first
    assert any(e.label.startswith("On the mesh") for e in at.expander)
    page = texts(at)
    assert "8 source → target pairs" in page          # the token shift's ring
    assert "rows: data · columns: model" in page       # the mesh before optimizations named
    at = click(at, "node:" + first)
    assert not at.exception


def test_on_a_trace_the_tab_shows_each_collective_s_measured_time(monkeypatch):
    """The sample's folder has its profiler trace: each collective's measured time (the
    trace's events are named after the instructions) stands beside the estimate."""
    at = open_tab(app(sample("spmd_train"), monkeypatch), "Communication")
    table = next(d.value for d in at.dataframe if "collective" in d.value.columns)
    assert len(table) == 19
    assert table["measured (µs)"].notna().all() and (table["measured (µs)"] > 0).all()
    assert "Measured: the" in texts(at)


def test_the_graph_of_a_sharded_module_carries_the_badges_and_says_what_they_mean(
        monkeypatch):
    at = app(sample("spmd_train"), monkeypatch, {"stage": "before_optimizations"})
    svg = svg_of(at)
    w1 = next(i.name for i in _before().entry.instructions if i.name.startswith("params__w1"))
    assert "⊞ [data, model]" in node_text(svg, "node:" + w1)
    assert "⊞ a sharding: the mesh axes" in texts(at)


def test_after_partitioning_the_mesh_picture_reads_shapes_as_one_device_s():
    """After optimizations a parameter's shape is one device's (w1: f32[4,16] of
    f32[16,32]): the picture's slices are those of the whole, as JAX said."""
    module = parse_hlo(read(sample_file("spmd_train", "*cpu_after_optimizations.txt")))
    fact = _facts()["entry_parameters"][2]                  # w1, P('data', 'model')
    w1 = next(i for i in module.entry.instructions
              if i.opcode == "parameter" and i.parameter_number == 2)
    assert w1.shape.without_layout() == "f32[4,16]"
    card = SHV.sharding_card(module, w1, SHV.mesh_hint(_before()))
    assert "per device: f32[4,16] = 256 B of f32[16,32] = 2.0 KiB" in card.lines
    for row in card.grid:
        for c in row:
            part = ", ".join(f"{a}:{b}" for a, b in fact["device_slices"][str(c.device)])
            assert c.text.endswith(f"[{part}]"), c


def test_after_optimizations_the_badges_keep_the_mesh_axes(monkeypatch):
    """The after-optimizations text no longer names the mesh: the badges take it from the
    before-optimizations text (w1's P('data', 'model'))."""
    at = app(sample("spmd_train"), monkeypatch)
    module = parse_hlo(read(sample_file("spmd_train", "*cpu_after_optimizations.txt")))
    w1 = next(i.name for i in module.entry.instructions
              if i.opcode == "parameter" and i.parameter_number == 2)
    assert "⊞ [data, model]" in node_text(svg_of(at), "node:" + w1)


def test_a_tpu_topology_compile_is_timed_over_its_ici(monkeypatch):
    """The sharded MLP compiled for TPU v6e: the Communication tab's estimate is over v6e's
    published ICI figure, each of its 3 collectives with its cause."""
    at = open_tab(app(sample("tpu_v6e"), monkeypatch, {"module": "0081"}), "Communication")
    page = texts(at)
    assert "**3** collectives" in page and "TPU v6e ICI" in page and "448 GB/s" in page
    table = next(d.value for d in at.dataframe if "collective" in d.value.columns)
    assert table["cause"].astype(bool).all()


def test_overlap_lists_the_compute_xla_scheduled_between_start_and_done():
    """The H100 compile's async all-reduces: what runs between each start and its done is
    what XLA's scheduled text puts between those lines; a pair with compute between counts
    as hidden, one without as exposed (bytes over NVLink's 450 GB/s each way)."""
    dump = open_dump(os.path.join(SAMPLES, "gpu_h100"))
    [m] = [m for m in dump.modules if "sharded" in m.name]
    text = dump.read_text(m.after_optimizations.path)
    entry = text[text.index("\nENTRY"):]
    names = re.findall(r"^\s*(?:ROOT )?%([\w.\-]+) = \S+ ([\w\-]+)\(", entry, re.M)
    order = [n for n, op in names]
    view = SHV.communication(dump.stage(m), partitioner_input(dump, m)[0], LINKS["h100"])
    assert view["async"] == 3
    for r in view["rows"]:
        start = order.index(r["collective"])
        done = order.index(r["collective"].replace("-start", "-done"))
        between = [n for n, op in names[start + 1:done]
                   if op not in ("get-tuple-element", "bitcast", "constant", "parameter",
                                 "tuple")]
        assert r["compute between"] == len(between), r["collective"]
        expected = 0.0 if between else round(r["sent bytes"] / 450e9 * 1e6, 3)
        assert r["exposed (µs)"] == expected
    assert any(r["compute between"] for r in view["rows"])
