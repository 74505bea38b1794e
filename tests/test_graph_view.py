"""The graph view builder on real dumps: groups, fusion clusters, budget, focus, layouts."""

from __future__ import annotations

import re

import networkx as nx
import pytest

from compiler_bridge import open_dump
from compiler_bridge.hlo import layout_changes
from viz import GraphOptions, build_graph, split_scopes

from conftest import sample


@pytest.fixture(scope="module")
def transformer():
    d = open_dump(sample("transformer"))
    return d.stage(d.main)


def all_open(module, grouping="layers", **kw):
    base = build_graph(module, None, GraphOptions(grouping=grouping))
    closed = frozenset(g for g, info in base.groups.items() if not info.expanded)
    return build_graph(module, None, GraphOptions(grouping=grouping, expanded=closed, **kw))


def clusters_of_nodes(dot: str) -> dict[str, list[str]]:
    """svg id of each drawn node -> the ids of the clusters around it, outermost first."""
    stack: list[str] = []
    out: dict[str, list[str]] = {}
    pending = False
    for line in dot.split("\n"):
        s = line.strip()
        if s.startswith("subgraph cluster_"):
            pending = True
            continue
        if pending:
            stack.append(re.match(r'id="([^"]+)"', s).group(1))
            pending = False
            continue
        if s == "}":
            if stack:
                stack.pop()
            continue
        m = re.match(r'n\d+ \[id="([^"]+)"', s)
        if m:
            out[m.group(1)] = list(stack)
    return out


def test_every_instruction_is_shown_exactly_once(transformer):
    view = build_graph(transformer)
    entry = transformer.entry
    folded = {i.name for i in entry.instructions
              if i.opcode == "constant" and i.shape.rank == 0 and not i.is_root}
    assert set(view.shown_as) == {i.name for i in entry.instructions} - folded
    for svg_id in view.shown_as.values():
        assert svg_id in view.nodes


def test_layer_clusters_nest_as_op_name_scopes(transformer):
    view = all_open(transformer)
    nesting = clusters_of_nodes(view.dot)
    checked = 0
    for inst in transformer.entry.instructions:
        scopes = split_scopes(inst.op_name)
        if not scopes or f"node:{inst.name}" not in nesting:
            continue
        labels = [view.groups[c[len("group:"):]].label for c in nesting[f"node:{inst.name}"]
                  if view.groups[c[len("group:"):]].kind == "layer"]
        assert "/".join(labels) == "/".join(scopes), inst.name
        checked += 1
    assert checked > 20


def test_source_grouping_follows_the_python_call_path(transformer):
    view = all_open(transformer, "source")
    nesting = clusters_of_nodes(view.dot)
    checked = 0
    for inst in transformer.entry.instructions:
        loc = transformer.source_location(inst)
        if loc is None or inst.opcode == "parameter" or f"node:{inst.name}" not in nesting:
            continue
        labels = "/".join(view.groups[c[6:]].label for c in nesting[f"node:{inst.name}"]
                          if view.groups[c[6:]].kind == "source")
        assert labels.endswith(f"{loc.function or '?'} ({loc.file.rsplit('/', 1)[-1]}:{loc.line})")
        checked += 1
    assert checked > 10


def test_fusion_expands_in_place_into_its_fused_computation(transformer):
    fusion = next(i for i in transformer.entry.instructions
                  if i.opcode == "fusion" and len(transformer.computation(i.calls[0])) > 3)
    closed = build_graph(transformer)
    assert closed.shown_as[fusion.name] == f"node:{fusion.name}"
    gid = f"fusion:{fusion.name}"
    opened = build_graph(transformer, None, GraphOptions(expanded=frozenset({gid})))
    nesting = clusters_of_nodes(opened.dot)
    fused = transformer.computation(fusion.calls[0])
    for inst in fused.instructions:
        assert nesting[f"node:{inst.name}"][-1] == f"group:{gid}"
    assert opened.groups[gid].expanded and opened.groups[gid].kind == "fusion"
    # the fused root now stands for the fusion; each operand feeds its fused parameter
    assert opened.shown_as[fusion.name] == f"node:{fused.root.name}"
    ids = {svg: dot_id for dot_id, svg in re.findall(r'(n\d+) \[id="([^"]+)"', opened.dot)}
    for k, op in enumerate(fusion.operand_names):
        param = next(p for p in fused.parameters if p.parameter_number == k)
        src = opened.shown_as.get(op)
        if src and src != f"node:{param.name}":
            assert f"{ids[src]} -> {ids['node:' + param.name]}" in opened.dot


def test_labels_carry_name_opcode_and_shape_with_layout(transformer):
    view = all_open(transformer)
    for inst in transformer.entry.instructions:
        if view.shown_as.get(inst.name) != f"node:{inst.name}" or inst.shape.is_tuple:
            continue
        line = next(ln for ln in view.dot.split("\n") if f'id="node:{inst.name}"' in ln)
        label = re.search(r'label="([^"]*)"', line).group(1)
        assert inst.name[:40] in label and str(inst.shape)[:40] in label


def test_a_custom_call_label_names_its_target():
    # what a custom call runs is its target (Sharding here; TopK, cuDNN's convolutions,
    # ...): a node labelled 'custom-call' alone does not say which
    d = open_dump(sample("spmd_train"))
    module = d.stage(d.main, "before_optimizations")
    calls = [i for i in module.entry.instructions if i.opcode == "custom-call"]
    assert {i.custom_call_target for i in calls} >= {"Sharding"}
    view = all_open(module)
    for inst in calls:
        line = next(ln for ln in view.dot.split("\n") if f'id="node:{inst.name}"' in ln)
        label = re.search(r'label="([^"]*)"', line).group(1)
        assert f"custom-call {inst.custom_call_target}" in label, label


def test_node_budget_holds_and_says_so(transformer):
    top = build_graph(transformer, None, GraphOptions(
        expanded=frozenset(build_graph(transformer).default_expanded))).node_count
    view = all_open(transformer, budget=25)
    assert view.node_count <= max(25, top)
    assert any("budget" in n for n in view.notes)
    full = all_open(transformer)
    assert full.node_count > 25 and not any("budget" in n for n in full.notes)


def test_focus_shows_the_k_hop_neighbourhood(transformer):
    entry = transformer.entry
    g = nx.Graph()
    g.add_nodes_from(i.name for i in entry.instructions)
    g.add_edges_from((op, i.name) for i in entry.instructions for op in i.operand_names)
    center = next(i for i in entry.instructions if i.opcode == "fusion" and len(i.operand_names) > 1)
    for radius in (1, 2):
        view = build_graph(transformer, None, GraphOptions(focus=center.name, radius=radius))
        expected = set(nx.ego_graph(g, center.name, radius=radius))
        assert set(view.shown_as) == expected - {n for n in expected if transformer.entry.get(
            n).opcode == "constant" and n != center.name and transformer.entry.get(n).shape.rank == 0}
        assert any("focus" in n for n in view.notes)


def test_layout_changes_in_the_transformer(transformer):
    changes = layout_changes(transformer)
    assert changes, "the transformer sample has layout-changing copies after layout assignment"
    reported = {c.instruction for c in changes}
    for inst in transformer.instructions():
        if inst.opcode != "copy":
            continue
        src = inst.operands[0].shape
        differs = src.layout.minor_to_major != inst.shape.layout.minor_to_major
        assert (inst.name in reported) == differs, inst.name
    view = build_graph(transformer)
    drawn = [c.instruction for c in changes if c.computation == transformer.entry.name]
    assert set(drawn) <= set(view.layout_changes) | {n for n in drawn if view.shown_as.get(n, "").startswith("group:")}


def test_called_computations_can_be_viewed(transformer):
    for comp in transformer.computations:
        view = build_graph(transformer, comp.name)
        assert view.computation == comp.name and view.node_count >= 1
    with pytest.raises(KeyError):
        build_graph(transformer, "no_such_computation")


def test_names_are_escaped_in_dot():
    from viz import dot
    _q = dot.quote
    assert _q('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_only_shows_the_given_instructions(transformer):
    entry = transformer.entry
    keep = frozenset(i.name for i in entry.instructions if i.opcode == "fusion")
    view = build_graph(transformer, None, GraphOptions(only=keep))
    assert set(view.shown_as) == keep
    assert any(f"{len(keep)} of {len(entry.instructions)}" in n for n in view.notes)


def test_ghosts_of_removed_instructions_are_drawn_with_their_edges(transformer):
    from types import SimpleNamespace
    entry = transformer.entry
    fusion = next(i for i in entry.instructions if i.opcode == "fusion" and i.users)
    ghost = SimpleNamespace(name="gone.1", label="removed · add · f32[2]{0}",
                            inputs=(fusion.name,), outputs=(fusion.users[0].name,))
    view = build_graph(transformer, None, GraphOptions(ghosts=(ghost,)))
    ids = {svg: d for d, svg in re.findall(r'(n\d+) \[id="([^"]+)"', view.dot)}
    g = ids["ghost:gone.1"]
    assert f"{ids[view.shown_as[fusion.name]]} -> {g} [style=dashed" in view.dot
    assert f"{g} -> {ids[view.shown_as[fusion.users[0].name]]} [style=dashed" in view.dot


def test_hub_edges_are_thinned_and_counted_in_labels():
    d = open_dump(sample("mlp_train"))
    module = d.stage(d.main)
    root = module.entry.root
    assert len(set(root.operand_names)) > 16, "the MLP's ROOT tuple returns every parameter"
    view = build_graph(module, None, GraphOptions(grouping="flat"))
    ids = {svg: d for d, svg in re.findall(r'(n\d+) \[id="([^"]+)"', view.dot)}
    root_id = ids[view.shown_as[root.name]]
    drawn_in = len(re.findall(rf" -> {root_id}[ ;]", view.dot))
    assert drawn_in <= 16
    hidden = len({view.shown_as[o] for o in root.operand_names}) - drawn_in
    line = next(ln for ln in view.dot.split("\n") if ln.strip().startswith(root_id + " ["))
    assert f"⋯ {hidden} more operands not drawn" in line
    assert any("not drawn" in n for n in view.notes)


def test_a_megabyte_op_name_groups_in_bounded_depth(tmp_path):
    """A valid module whose op_name is 200k scopes deep (1 MB; issue 17: the graph build
    ran for minutes, cost growing with the square of the depth) groups at once, with at
    most 32 levels of boxes of bounded labels. Built from the real transformer sample."""
    import glob
    import shutil
    import threading

    from viz import ViewState, graph_for
    src = sample("transformer")
    out = tmp_path / "deep"
    shutil.copytree(src, out)
    path = glob.glob(str(out / "*cpu_after_optimizations.txt"))[0]
    text = open(path, encoding="utf-8").read()
    deep = "/".join(f"s{i}" for i in range(200_000)) + "/op"
    lines = text.split("\n")
    entry = next(i for i, line in enumerate(lines) if line.startswith("ENTRY "))
    at = next(i for i in range(entry, len(lines))           # an instruction ENTRY draws
              if "op_name=" in lines[i] and " parameter(" not in lines[i])
    lines[at] = re.sub(r'op_name="[^"]*"', f'op_name="{deep}"', lines[at])
    text = "\n".join(lines)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    dump = open_dump(str(out))
    done = []
    worker = threading.Thread(target=lambda: done.append(
        graph_for(dump, ViewState(budget=6000, expanded=()))), daemon=True)
    worker.start()
    worker.join(120)              # a hang detector, not a speed goal
    assert done, "the graph build did not finish"
    view = done[0]

    def depth(gid: str) -> int:
        d = 0
        while gid:
            d, gid = d + 1, view.groups[gid].parent
        return d
    assert max(depth(g) for g in view.groups) <= 32
    assert max(len(g.label) for g in view.groups.values()) <= 32 * 161


def test_an_escaped_tag_in_an_op_name_is_drawn_as_written(tmp_path):
    """An op_name holding `&lt;img src=x&gt;` (issue 17): Graphviz reads entities in
    labels, so the box drew `<img src=x>`; it is drawn as written."""
    import glob
    import shutil

    from viz import ViewState, graph_for, render_svg
    out = tmp_path / "ent"
    shutil.copytree(sample("transformer"), out)
    path = glob.glob(str(out / "*cpu_after_optimizations.txt"))[0]
    lines = open(path, encoding="utf-8").read().split("\n")
    entry = next(i for i, line in enumerate(lines) if line.startswith("ENTRY "))
    at = next(i for i in range(entry, len(lines))
              if "op_name=" in lines[i] and " parameter(" not in lines[i])
    lines[at] = re.sub(r'op_name="[^"]*"', 'op_name="jit(f)/&lt;img src=x&gt;/op"', lines[at])
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    view = graph_for(open_dump(str(out)), ViewState(grouping="layers"))
    svg = render_svg(view.dot)
    assert "&amp;lt;img src=x&amp;gt;" in svg          # shows as &lt;img src=x&gt;
    assert ">&lt;img src=x&gt;" not in svg and "&lt;img src=x&gt;  (" not in svg
