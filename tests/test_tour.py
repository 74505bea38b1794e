"""Issue 16: what a new user hit on a tour, one test per item (AppTest and unit tests;
the browser ones are in test_browser_tour.py).

Traces: the committed samples (``transformer``, ``scan_while``: one thread, no overlap)
and ``tests/fixtures/attn_async``: a real JAX 0.10.2 CPU trace of a d128 transformer
block, where XLA:CPU runs dots asynchronously and two threads run ops of one step
(see its README for the command that made it).
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
from collections import defaultdict

import pytest
from conftest import ROOT, sample
from tests.support.apptest import app, plain
from tests.support.cli import run
from tests.support.samples import ASYNC

from compiler_bridge import open_dump
from compiler_bridge.perf import measure

TRACED = [sample("transformer"), sample("scan_while"), ASYNC]


def _chrome_events(dump: str) -> list[dict]:
    path = glob.glob(os.path.join(dump, "trace/plugins/profile/*/perfetto_trace.json.gz"))[0]
    with gzip.open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


# --------------------------------------------------------------------------- item 1

@pytest.mark.parametrize("dump", TRACED, ids=os.path.basename)
def test_item1_shares_of_step_time_sum_to_at_most_one(dump, tmp_path):
    p = run("runtimes", dump, "--json", tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    shares = [k["share"] for k in json.loads(p.stdout)["kernels"] if k["share"] is not None]
    assert shares and sum(shares) <= 1.0 + 1e-9, sum(shares)


def test_item1_an_async_dot_is_not_charged_the_ops_its_thread_ran_meanwhile():
    """In the trace itself: after a dot's event, its thread runs other ops before the
    dot's 'end: dot.N' completion marker. The dot's own time per execution is at most
    its window (start to marker) less those ops' durations."""
    events = _chrome_events(ASYNC)
    ops = [e for e in events if e.get("args", {}).get("hlo_op")]
    ends = defaultdict(list)
    for e in events:
        if e["name"].startswith("end: "):
            ends[e["name"][5:]].append(e["ts"])
    by_tid = defaultdict(list)
    for e in ops:
        by_tid[e["tid"]].append(e)
    m = measure(open_dump(ASYNC)).module("0000")
    session = next(iter(m.step_us)).rpartition("#")[0]
    checked = overlapped = 0
    for e in ops:
        name = e["args"]["hlo_op"]
        if not name.startswith("dot."):
            continue
        done = min((t for t in ends[name] if t >= e["ts"]), default=None)
        if done is None:
            continue
        inside = sum(o["dur"] for o in by_tid[e["tid"]] if o is not e
                     and o["ts"] >= e["ts"] + e["dur"] and o["ts"] + o["dur"] <= done)
        if inside <= 0:
            continue
        overlapped += 1
        run_key = f"{session}#{e['args']['run_id']}"
        mine = m.kernels[name].per_run[run_key]
        # the execution of this dot in this run (a dot runs once per step)
        assert len(mine) == 1
        assert mine[0] <= (done - e["ts"]) - inside + 1e-3, (name, mine[0], done - e["ts"],
                                                             inside)
        checked += 1
    assert checked >= 5 and overlapped == checked
    # and the kernels that ran alongside others say so
    flagged = [k for k in m.kernels.values() if k.overlap > 0.05]
    assert flagged


def test_item1_attribute_splits_overlap_and_gives_a_wait_to_its_op():
    """The arithmetic, on intervals (µs): a while on thread t holds an asynchronous dot
    (event 10-20, work done at 50) and an op (60-70); thread u runs 5-15 alongside."""
    from compiler_bridge.perf.attribution import attribute
    execs = [("t", 0, 100, 100), ("t", 10, 20, 50), ("t", 60, 70, 70), ("u", 5, 15, 15)]
    own, charged = attribute(execs)
    # the while owns the gaps its body leaves; the dot its event and its wait
    assert own == pytest.approx([10 + 10 + 30, 40, 10, 10])
    # 5-10 (while and u) and 10-15 (dot and u) are shared by two threads
    assert charged == pytest.approx([10 - 2.5 + 10 + 30, 40 - 2.5, 10, 5])
    assert sum(charged) == pytest.approx(100)          # the span, not more


def test_item1_overlap_is_flagged_in_the_inspector_and_the_table(monkeypatch):
    at = app(ASYNC, monkeypatch, {"selected": "dot.18"})
    line = plain(next(x.value for x in at.markdown if "**Runtime**" in x.value))
    assert re.search(r"\*\*overlapped\*\*: other kernels ran during \d+% of its time", line)
    from viz import runtime as V
    from compiler_bridge.perf import runtime_report
    rows = V.kernel_rows(runtime_report(open_dump(ASYNC), auto_model=False, device="cpu"))
    assert "overlap" in V.TABLE_COLUMNS and any((r["overlap"] or 0) > 0.05 for r in rows)


# --------------------------------------------------------------------------- item 2

def test_item2_the_share_and_the_time_beside_it_are_one_named_statistic(monkeypatch):
    dump = sample("transformer")
    m = measure(open_dump(dump)).module("0000")
    mean_step = sum(m.step_us.values()) / len(m.step_us)
    at = app(dump, monkeypatch, {"selected": "ynn_fusion.7"})
    line = plain(next(x.value for x in at.markdown if "**Runtime**" in x.value))
    assert "median per execution" in line, line
    got = re.search(r"mean ([\d.]+) (µs|ms) per step = ([\d.]+)% of the mean step", line)
    assert got, line
    per_step = float(got.group(1)) * (1000 if got.group(2) == "ms" else 1)
    share = float(got.group(3)) / 100
    # the time beside the share is the share of the mean step (to the digits shown)
    assert per_step == pytest.approx(share * mean_step, rel=0.03, abs=1.0)
    k = m.kernels["ynn_fusion.7"]
    assert per_step == pytest.approx(k.total_us / len(m.step_us), rel=0.03, abs=1.0)


# --------------------------------------------------------------------------- item 3

def _timeline_figure(at) -> dict:
    for el in at.get("plotly_chart"):
        if "rt-timeline:" in str(el.proto.id):
            return json.loads(el.proto.spec)
    raise AssertionError("no trace timeline on the page")


def test_item3_a_trace_timeline_of_one_step_selects_in_the_graph(monkeypatch):
    from tests.support.apptest import query, texts
    from tests.support.apptest import open_tab, select_point
    at = open_tab(app(ASYNC, monkeypatch))
    fig = _timeline_figure(at)
    lanes = {y for trace in fig["data"] for y in trace["y"]}
    # per-thread lanes (this trace's steps ran on two threads), the async waits apart
    assert {"thread 1", "thread 2"} <= lanes and any(y.endswith("· wait") for y in lanes)
    names = {c[0] for trace in fig["data"] for c in trace["customdata"]}
    m = measure(open_dump(ASYNC)).module("0000")
    run = m.median_run()
    assert names == {x.instruction for x in m.slices[run]}
    # bars placed at the trace's own times: every bar lies inside the step
    for trace in fig["data"]:
        for base, width in zip(trace["base"], trace["x"]):
            assert 0 <= base and base + width <= m.step_us[run] + 1e-3
    assert fig["layout"]["dragmode"] == "pan"
    name = "copy_bitcast_fusion.3"
    select_point(at, "rt-timeline:", name)
    assert query(at)["selected"] == name and f"%{name} = " in texts(at)


# --------------------------------------------------------------------------- item 4

def _drawn(at) -> str:
    from tests.support.apptest import svg_of
    return svg_of(at)


def test_item4_a_search_hit_picked_with_focus_on_is_drawn(monkeypatch):
    """A wide neighbourhood (8 hops) is split into part boxes; the hit must still be a
    node of the view, and 'Show it in the graph' must keep it so."""
    from tests.support.apptest import query, texts
    at = app(sample("transformer"), monkeypatch, {"radius": "8", "selected": "reduce_sum.27",
                                                  "focus": "reduce_sum.27"})
    at.text_input(key="search-q").input("ynn_fusion.17").run()   # Enter: the one hit
    q = query(at)
    assert q["selected"] == "ynn_fusion.17" and q["focus"] == "ynn_fusion.17"
    svg = _drawn(at)
    assert 'id="group:root#' in svg             # the focus view is split into parts
    assert '<g id="node:ynn_fusion.17" class="node">' in svg
    assert "Not drawn in this view" not in texts(at)


def test_item4_show_it_in_the_graph_with_focus_on_draws_it(monkeypatch):
    from tests.support.apptest import query
    from viz.grouping import neighbourhood
    dump = open_dump(sample("transformer"))
    module = dump.stage(dump.main, "after_optimizations")
    entry = module.entry
    near = neighbourhood(entry, [entry.get("ynn_fusion.17")], 1)
    far = next(i.name for i in entry.instructions
               if i.name not in near and i.opcode == "fusion")
    at = app(sample("transformer"), monkeypatch,
             {"focus": "ynn_fusion.17", "radius": "1", "selected": far})
    assert f'<g id="node:{far}" class="node">' not in _drawn(at)
    at.button(key=f"show:{far}").click().run()
    assert query(at)["selected"] == far
    assert f'<g id="node:{far}" class="node">' in _drawn(at)


# --------------------------------------------------------------------------- item 5

def _fused_ops_in_text(dump_dir: str) -> dict[str, int]:
    """Each fusion's fused ops, counted in the after-optimizations HLO text XLA wrote:
    the lines of its fused computation that are not parameters."""
    path = glob.glob(os.path.join(dump_dir, "*after_optimizations.txt"))[0]
    text = open(path).read()
    bodies = {}
    for m in re.finditer(r"^(%?[\w.\-]+) .*?\{\n(.*?)\n\}", text, re.S | re.M):
        lines = [x for x in m.group(2).splitlines() if " = " in x]
        bodies[m.group(1).lstrip("%")] = sum(1 for x in lines if " parameter(" not in x)
    out = {}
    for m in re.finditer(r"%([\w.\-]+) = .*? fusion\(.*?calls=%?([\w.\-]+)", text):
        out[m.group(1)] = bodies[m.group(2)]
    return out


def test_item5_sort_by_ops_then_one_click_to_the_biggest_fusion(monkeypatch):
    from tests.support.apptest import query, texts
    from tests.support.apptest import open_tab, select_row, svg_of, node_text
    sizes = _fused_ops_in_text(sample("transformer"))
    biggest = max(sizes.values())
    at = open_tab(app(sample("transformer"), monkeypatch))
    at.selectbox(key="rt-sort").select("fused_ops").run()
    table = next(d for d in at.dataframe if "fused_ops" in d.value.columns)
    assert int(table.value["fused_ops"].iloc[0]) == biggest
    name = table.value["instruction"].iloc[0]
    assert sizes[name] == biggest
    # sortable by the other sizes too, largest first
    for key in ("bytes", "flops", "predicted_us", "measured_us"):
        at.selectbox(key="rt-sort").select(key).run()
        table = next(d for d in at.dataframe if "fused_ops" in d.value.columns)
        col = list(table.value[key])
        assert col == sorted(col, reverse=True), key
    at.selectbox(key="rt-sort").select("fused_ops").run()
    select_row(at, "rt-kernels:", 0)
    assert query(at)["selected"] == name
    # one count, named the same, in the node's label and the inspector
    label = node_text(svg_of(at), f"node:{name}")
    assert f"{biggest} ops" in label, label
    assert f"({biggest} ops + " in texts(at) or any(
        f"({biggest} ops + " in e.label for e in at.expander)


# --------------------------------------------------------------------------- item 7

def test_item7_a_fusion_that_changes_layout_is_flagged_at_its_node(monkeypatch):
    """copy_bitcast_fusion's fused computation holds a copy from layout {0,2,1} to
    {2,1,0} (XLA's own after-optimizations text): the fusion node says so."""
    from tests.support.apptest import card, click
    from tests.support.apptest import node_svg, node_text, svg_of
    text = open(glob.glob(os.path.join(sample("transformer"),
                                       "*after_optimizations.txt"))[0]).read()
    body = re.search(r"^%fused_computation\.31 .*?\n\}", text, re.S | re.M).group(0)
    assert re.search(r"copy\.18 = f32\[[\d,]+\]\{2,1,0\} copy\(.*\{0,2,1\}", body) or \
        re.search(r"\{0,2,1\}.*\n.*copy\.18 = f32\[[\d,]+\]\{2,1,0\} copy", body), body
    at = app(sample("transformer"), monkeypatch)
    svg = svg_of(at)
    assert "layout change inside" in node_text(svg, "node:copy_bitcast_fusion")
    assert "#e8590c" in node_svg(svg, "node:copy_bitcast_fusion")
    click(at, "node:copy_bitcast_fusion")
    assert "copy.18" in card(at).get("layout_change", "")


# --------------------------------------------------------------------------- item 9

def test_item9_a_text_diff_note_sits_under_its_own_line():
    """The transformer's fusion step (XLA's per-pass files): a line fused away
    ('→ fusion F as N') gets its note in its own (left) cell, never under the unrelated
    right line it happens to sit beside."""
    from compiler_bridge.passes import pass_timeline, step_diff, text_diff
    from viz.stepper import text_diff_html
    d = open_dump(os.path.join(ROOT, "sample_dumps", "transformer_per_pass.tar.xz"))
    tl = pass_timeline(d, d.main)
    (idx,) = [s.index for s in tl.steps if s.pass_name == "fusion"]
    diff = step_diff(d, tl, idx)
    fused = diff.fused_into()                       # old name -> the fusion holding it
    page = text_diff_html(text_diff(diff))
    rows = re.findall(r'<tr class="(replace|removed|added)">(.*?)</tr>', page, re.S)
    checked = 0
    for _kind, row in rows:
        cells = re.findall(r'<td class="(\w)">(.*?)</td>', row, re.S)
        for side, cell in cells:
            for note in re.findall(r'<div class="note">(.*?)</div>', cell):
                m = re.match(r"→ fusion ([\w.\-]+)", note.replace("&gt;", ">"))
                if not m:
                    continue
                # the note is on the left, under the line of the instruction it names
                assert side == "o", (note, row[:300])
                name = re.sub(r"<[^>]+>", "", cell).split(" = ")[0].replace("ROOT ", "")
                assert fused[name.lstrip("%")] == m.group(1), (name, note)
                checked += 1
    assert checked >= 10


# --------------------------------------------------------------------------- item 11

# Machado, Oliveira & Fernandes (2009), full severity, on linear RGB
_CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}


def _lab(hex_colour: str, vision: str | None):
    import numpy as np
    c = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    if vision:
        c = np.clip(np.array(_CVD[vision]) @ c, 0, 1)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                  [0.0193, 0.1192, 0.9505]])
    xyz = m @ c / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_item11_diff_colours_stand_apart_for_colour_blind_eyes():
    """'added' and 'changed' against every category fill and each other: a CIELAB
    distance of at least 20 for normal, protan, deutan and tritan vision."""
    import numpy as np
    from viz.categories import COLORS
    from viz.stepper import ADDED_FILL, CHANGED_FILL
    pairs = [(ADDED_FILL, c, k) for k, c in COLORS.items()] + \
        [(CHANGED_FILL, c, k) for k, c in COLORS.items()] + [(ADDED_FILL, CHANGED_FILL, "")]
    for a, b, what in pairs:
        for vision in (None, *_CVD):
            d = float(np.linalg.norm(_lab(a, vision) - _lab(b, vision)))
            assert d >= 20, (a, b, what, vision, round(d, 1))


def test_item11_the_steps_tab_shows_no_raw_none(monkeypatch):
    from tests.support.apptest import ok
    from tests.support.apptest import details_key
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0017"})
    at.session_state[details_key(at)] = "Steps"
    at.run()
    ok(at)
    table = next(d.value for d in at.dataframe if "pass" in d.value.columns)
    assert len(table) > 10
    cells = [v for col in table.columns for v in table[col]]
    assert not any(v is None or (isinstance(v, float) and v != v) or v == "None"
                   for v in cells), [c for c in table.columns if table[c].isna().any()]


# --------------------------------------------------------------------------- item 6

@pytest.fixture(scope="module")
def lm8(tmp_path_factory) -> str:
    """A real 8-layer decoder LM train step, written as a Python loop over its layers (no
    named scopes), compiled by JAX on CPU: bench/corpus/make_scale.py --layers 8 (~15 s)."""
    import subprocess
    import sys
    out = tmp_path_factory.mktemp("lm8") / "lm8"
    p = subprocess.run([sys.executable, "-m", "bench.corpus.make_scale",
                        "--layers", "8", "--out", str(out)], cwd=ROOT, capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return str(out)


def test_item6_a_model_written_as_a_loop_groups_as_layer_1_to_8(lm8):
    from viz.grouping import GraphOptions, group
    dump = open_dump(lm8)
    module = dump.stage(dump.main, "after_optimizations")
    g = group(module, None, GraphOptions())
    layers = {info.label: info for info in g.groups.values()
              if re.fullmatch(r"layer \d+", info.label)}
    assert sorted(layers, key=lambda s: int(s.split()[1])) == [f"layer {k}"
                                                               for k in range(1, 9)]
    sizes = {info.size for info in layers.values()}
    assert len(sizes) == 1 and sizes.pop() >= 40        # eight identical layers
    # each layer holds the forward and the backward of one iteration: the parameters
    # layer k's instructions read are mostly those of the k-th entry of the Python list
    # (XLA's names: params__layers___<k-1>___...; XLA's wide backward fusions also read
    # a few of the later layers')
    from collections import Counter
    for label, info in layers.items():
        k = int(label.split()[1]) - 1
        members = [module.find(n) for n, gid in g.group_of.items() if gid.startswith(info.id)]
        read = Counter(re.search(r"__layers___(\d+)___", o.name).group(1)
                       for m in members for o in m.operands
                       if o.opcode == "parameter" and "__layers___" in o.name)
        (most, n), *rest = read.most_common()
        assert most == str(k) and all(n > 2 * other for _, other in rest), (label, read)


def test_item6_no_layers_where_nothing_repeats():
    from viz.grouping import repeated_layers
    for name in ("transformer", "mlp_train", "scan_while", "cond_switch"):
        dump = open_dump(sample(name))
        module = dump.stage(dump.main, "after_optimizations")
        assert repeated_layers(module, module.entry) == {}, name
