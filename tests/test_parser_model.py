"""What the parser reads from real XLA output, feature by feature (like hlo_parser_test)."""

from __future__ import annotations


import pytest

from compiler_bridge import HloParseError, parse_hlo, parse_shape
from compiler_bridge.hlo import UNBOUNDED

from conftest import peer_file, read, sample_file


@pytest.fixture(scope="module")
def mlp_after():
    path = sample_file("mlp_train", "module_*.cpu_after_optimizations.txt")
    return parse_hlo(read(path), path)


@pytest.fixture(scope="module")
def legacy_after():
    path = sample_file("legacy_jax0430", "module_*after_optimizations.txt")
    return parse_hlo(read(path), path)


def peer(prefix: str):
    path = peer_file(prefix)
    return parse_hlo(read(path), path)


def test_module_header_attributes(mlp_after):
    assert mlp_after.name == "jit_train_step"
    assert mlp_after.is_scheduled
    layout = mlp_after.entry_computation_layout
    assert layout.startswith("{(") and "->" in layout
    assert mlp_after.entry.is_entry
    assert mlp_after.computations[-1] is mlp_after.entry


def test_computations_and_instructions_in_file_order(mlp_after):
    text = read(mlp_after.source)
    positions = [text.index(f"%{c.name} ") for c in mlp_after.computations]
    assert positions == sorted(positions)
    for comp in mlp_after.computations:
        lines = [i.line for i in comp.instructions]
        assert lines == sorted(lines)
        assert comp.root is not None and comp.root.is_root


def test_fusion_kind_kloop_and_fused_computation(mlp_after):
    fusions = [i for i in mlp_after.instructions() if i.opcode == "fusion"]
    assert fusions
    assert {"kLoop"} <= {f.fusion_kind for f in fusions}
    for f in fusions:
        assert f.calls and f.called_computations == f.calls
        fused = mlp_after.computation(f.calls[0])
        assert fused.is_fusion
        assert len(fused.parameters) == len(f.operand_names)


def test_stack_frame_ids_resolve_to_file_line(mlp_after):
    assert mlp_after.stack_frames
    dots = [i for i in mlp_after.instructions() if i.opcode == "dot"]
    assert dots
    loc = mlp_after.source_location(dots[0])
    assert loc is not None
    assert loc.file.endswith(".py") and loc.line > 0 and loc.function
    assert str(loc).startswith(f"{loc.file}:{loc.line}")
    # the caller chain ends in the program's outermost frame
    assert all(c.line > 0 for c in loc.callers)


def test_inline_source_file_resolves_in_old_format(legacy_after):
    with_source = [i for i in legacy_after.instructions() if i.metadata.source_file]
    assert with_source, "JAX 0.4.30 writes source_file/source_line inline"
    inst = with_source[0]
    loc = legacy_after.source_location(inst)
    assert loc.file == inst.metadata.source_file and loc.line == inst.metadata.source_line
    assert not legacy_after.stack_frames


def test_op_name_and_op_type(mlp_after):
    named = [i for i in mlp_after.instructions() if i.op_name]
    scoped = [i for i in named if i.op_name.startswith("jit(train_step)/")]
    assert len(scoped) > len(named) / 2
    assert any("/transpose(jvp(" in i.op_name or "/jvp(" in i.op_name for i in scoped)


def test_shape_text_has_layout(mlp_after):
    for inst in mlp_after.instructions():
        s = str(inst.shape)
        if inst.shape.is_array and inst.shape.rank:
            assert s.endswith("}"), s
        assert parse_shape(s) == inst.shape


@pytest.mark.parametrize("text, expected", [
    ("f32[8,16]", "f32[8,16]{1,0}"),
    ("f32[]", "f32[]"),
    ("pred[3]", "pred[3]{0}"),
    ("token[]", "token[]"),
    ("(f32[2], s32[])", "(f32[2]{0}, s32[])"),
    ("(f32[2], (s32[], token[]))", "(f32[2]{0}, (s32[], token[]))"),
    ("s32[<=4, 2]", "s32[<=4,2]{1,0}"),
    ("f32[?,784]", "f32[?,784]{1,0}"),
    ("bf16[8,128]{1,0:T(8,128)(2,1)S(1)}", "bf16[8,128]{1,0:T(8,128)(2,1)S(1)}"),
    ("u32[]{:T(128)}", "u32[]{:T(128)}"),
    ("s4[8]{0:E(4)}", "s4[8]{0:E(4)}"),
    ("f32[3]{0:S(0)}", "f32[3]{0}"),
])
def test_shape_text_matches_xla(text, expected):
    # expected strings are what jaxlib 0.10.2's parser prints for the same input
    assert str(parse_shape(text)) == expected


def test_shape_fields_and_bytes():
    s = parse_shape("bf16[8,128]{0,1:T(8,128)(2,1)S(1)}")
    assert s.element_type == "bf16" and s.dimensions == (8, 128)
    assert s.layout.minor_to_major == (0, 1)
    assert s.layout.tiles == ((8, 128), (2, 1)) and s.layout.memory_space == 1
    assert s.byte_size == 8 * 128 * 2
    assert parse_shape("s32[<=4,2]").dynamic == (True, False)
    assert parse_shape("f32[?,3]").dimensions[0] == UNBOUNDED
    assert parse_shape("s4[8]{0:E(4)}").byte_size == 4
    assert parse_shape("s4[8]").byte_size == 8
    t = parse_shape("(f32[2], (s32[], pred[4]))")
    assert t.is_tuple and t.byte_size == 8 + 4 + 4
    assert [str(x) for x in t.leaves()] == ["f32[2]{0}", "s32[]", "pred[4]{0}"]


def test_long_tuple_marks_every_fifth_index():
    s = parse_shape("(f32[], f32[], f32[], f32[], f32[], f32[], f32[])")
    assert str(s) == "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[])"


def test_bad_shapes_raise_parse_error():
    for bad in ("f33[8]", "f32[8,x]", "f32[2,3]{0}", "f32[2,3]{0,0}", "(f32[2]", "f32[8]{0:Q(1)}"):
        with pytest.raises(HloParseError):
            parse_shape(bad)


def test_every_attribute_kept_verbatim(mlp_after):
    for inst in mlp_after.instructions():
        text = read(mlp_after.source).split("\n")[inst.line - 1]
        for key, value in inst.attributes.items():
            assert f"{key}={value}" in text


def test_dot_dimension_numbers(mlp_after):
    dots = [i for i in mlp_after.instructions() if i.opcode == "dot"]
    dn = dots[0].dot_dimension_numbers
    assert len(dn.lhs_contracting) == 1 and len(dn.rhs_contracting) == 1


def test_backend_config_json_when_json():
    m = peer("0012")
    configs = [i.backend_config for i in m.instructions() if i.attribute("backend_config")]
    assert any(isinstance(c, dict) for c in configs)


def test_convolution_window_and_dim_labels():
    m = peer("0017")
    conv = next(i for i in m.instructions() if i.opcode == "convolution" and i.window.size)
    assert conv.dim_labels.lhs and "->" in str(conv.dim_labels)
    w = conv.window
    assert len(w.size) == len(w.stride) == len(w.pad_low) == len(w.pad_high)


def test_replica_groups_forms():
    from compiler_bridge.hlo import replica_groups
    assert replica_groups("{{0,1},{2,3}}").groups == ((0, 1), (2, 3))
    assert replica_groups("[2,2]<=[4]").groups == ((0, 1), (2, 3))
    assert replica_groups("[2,2]<=[2,2]T(1,0)").groups == ((0, 2), (1, 3))
    assert replica_groups("{}").groups == ()
    assert replica_groups("mesh['x'=2] {'x'}").form == "mesh"


def test_sharding_and_control_predecessors():
    m = peer("0003")
    sharded = [i for i in m.instructions() if i.attribute("sharding")]
    assert sharded and {s.sharding.kind for s in sharded} & {"devices", "replicated", "tuple"}


def test_called_computations_of_while_and_conditional():
    path = sample_file("scan_while", "module_*.cpu_after_optimizations.txt")
    m = parse_hlo(read(path), path)
    whiles = [i for i in m.instructions() if i.opcode == "while"]
    assert whiles
    for w in whiles:
        assert set(w.called_names) == {w.body, w.condition}
    path = sample_file("cond_switch", "module_*.cpu_after_optimizations.txt")
    m = parse_hlo(read(path), path)
    conds = [i for i in m.instructions() if i.opcode == "conditional"]
    assert conds and max(len(c.branch_computations) for c in conds) >= 3


def test_users_and_operands(mlp_after):
    entry = mlp_after.entry
    for inst in entry.instructions:
        for op in inst.operands:
            assert inst in op.users
