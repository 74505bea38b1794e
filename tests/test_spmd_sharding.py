"""Shardings read as XLA reads them: every ``sharding=`` text of the peer corpus and of the
sharded samples (the per-pass steps of ``spmd_train`` included, mesh form and Shardy's
attributes) against jaxlib's own ``HloSharding`` (``v3_to_v2_sharding`` for the mesh form), and
each device's slice of the ENTRY parameters against what JAX said at generation time
(``NamedSharding.devices_indices_map``, in the sample's ``spmd_facts.json``)."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import tarfile

import pytest

from compiler_bridge import parse_hlo
from compiler_bridge.spmd import (device_slices, mesh_axes, on_mesh, parse_mesh, parse_sharding,
                                  per_device_bytes, per_device_shape, sdy_meshes, sdy_sharding,
                                  sharding_of, tile_of_device)
from conftest import PEER, SAMPLES, missing, peer_file, read, sample_file
from tests.support.cli import run

SPMD = "spmd_train"
PER_PASS = os.path.join(SAMPLES, "spmd_train_per_pass.tar.xz")


def _hlo_sharding():
    try:
        from jax._src.lib import xla_client as xc
    except ImportError:
        missing("jaxlib (XLA's HloSharding) is not importable")
    return xc.HloSharding


def _xla_parser():
    try:
        from jaxlib import _hlo
    except ImportError:
        missing("jaxlib._hlo (XLA's own parser) is not importable")
    return _hlo


def _balanced(text: str, start: int) -> str:
    depth = 0
    for j in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[start:j + 1]
    raise AssertionError("unbalanced braces")


def _texts() -> list[str]:
    """Every module text: the peer corpus, the sharded samples and spmd_train's steps."""
    out = [read(p) for p in sorted(glob.glob(os.path.join(PEER, "*.hlo")))]
    for name in (SPMD, "tpu_v5e", "gpu_h100"):
        out += [read(p) for p in sorted(glob.glob(os.path.join(SAMPLES, name, "*.txt")))]
    with tarfile.open(PER_PASS) as tar:
        out += [tar.extractfile(m).read().decode() for m in tar.getmembers()
                if m.name.endswith(".txt")]
    return out


def _shardings() -> list[str]:
    found = set()
    for text in _texts():
        at = text.find("sharding={")
        while at >= 0:
            found.add(_balanced(text, at + len("sharding=")))
            at = text.find("sharding={", at + 1)
    return sorted(found)


def _xla_tiles(h) -> dict[int, tuple[int, ...]]:
    """device -> tile index from jaxlib's tile assignment (subgroup dimensions dropped)."""
    import numpy as np
    dims = h.tile_assignment_dimensions()
    subgroups = 1 if h.replicate_on_last_tile_dim() else len(h.subgroup_types())
    arr = np.array(h.tile_assignment_devices()).reshape(dims)
    return {int(arr[idx]): tuple(int(i) for i in idx[:len(dims) - subgroups])
            for idx in np.ndindex(*dims)}


def _xla_kind(h) -> str:
    for kind in ("replicated", "maximal", "manual", "unknown", "unreduced"):
        if getattr(h, f"is_{kind}")():
            return kind
    return "tiled"


def _check(ours, h) -> None:
    if ours.kind == "tuple":
        elements = h.tuple_elements()
        assert len(ours.elements) == len(elements), ours.raw
        for a, b in zip(ours.elements, elements):
            _check(a, b)
        return
    if ours.raw.startswith("{mesh"):
        h = h.v3_to_v2_sharding()
    assert ours.kind == _xla_kind(h), ours.raw
    if ours.kind == "tiled":
        assert tile_of_device(ours, len(ours.devices)) == _xla_tiles(h), ours.raw
        assert len(ours.devices) == len(h.tile_assignment_devices())
    if ours.kind == "maximal":
        assert [ours.device] == list(h.tile_assignment_devices()), ours.raw


def test_every_sharding_reads_as_xla_s():
    """Kind, tuple elements and which device holds which tile, for every form written in
    the corpus and samples: explicit and iota tile assignments, last_tile_dim_replicate,
    last_tile_dims={manual, replicated}, maximal, manual, tuples, the mesh form."""
    HloSharding = _hlo_sharding()
    texts = _shardings()
    forms = {"iota": "<=[", "explicit": "devices=[2]0,1", "subgroups": "last_tile_dims=",
             "replicate": "last_tile_dim_replicate", "maximal": "maximal", "manual": "{manual",
             "tuple": "{{", "mesh": "{mesh["}
    for form, marker in forms.items():
        assert any(marker in t for t in texts), form
    checked = 0
    for text in texts:
        try:
            theirs = HloSharding.from_string(text)
        except Exception:       # noqa: BLE001 — a text this XLA's parser rejects
            continue
        _check(parse_sharding(text), theirs)
        checked += 1
    assert checked >= 90       # 95 distinct texts today


def _facts() -> dict:
    with open(os.path.join(SAMPLES, SPMD, "spmd_facts.json"), encoding="utf-8") as f:
        return json.load(f)


def _entry(stage: str):
    module = parse_hlo(read(sample_file(SPMD, f"*{stage}.txt")))
    params = sorted((i for i in module.entry.instructions if i.opcode == "parameter"),
                    key=lambda i: i.parameter_number)
    return module, params


def test_each_device_holds_the_slice_jax_says():
    """Per ENTRY parameter and output of the sample: each device's slice, the per-device
    shape and bytes equal ``NamedSharding.devices_indices_map`` at generation time."""
    facts = _facts()
    module, params = _entry("before_optimizations")
    meshes = sdy_meshes(module)
    root = module.entry.root
    outputs = sharding_of(root, meshes).elements
    pairs = [(sharding_of(p, meshes), p.shape, f) for p, f in zip(params,
                                                                  facts["entry_parameters"])]
    pairs += [(s, shape, f) for s, shape, f in zip(outputs, root.shape.tuple_shapes,
                                                    facts["entry_outputs"])]
    assert len(pairs) == 11
    for sharding, shape, fact in pairs:
        assert sharding.raw.replace(" ", "") == fact["hlo_sharding"].replace(" ", "")
        slices = device_slices(sharding, tuple(shape.dimensions), facts["num_devices"])
        assert {str(d): [list(s) for s in part] for d, part in slices.items()} == {
            d: [[a if a is not None else 0, b if b is not None else n]
                for (a, b), n in zip(part, fact["shape"])]
            for d, part in fact["device_slices"].items()}, fact["hlo_sharding"]
        one = next(iter(fact["device_slices"].values()))
        want = [(b if b is not None else n) - (a or 0) for (a, b), n in zip(one, fact["shape"])]
        assert list(per_device_shape(sharding, tuple(shape.dimensions))) == want
        assert per_device_bytes(sharding, shape) == 4 * max(1, _prod(want))


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def test_shardy_attribute_names_the_mesh_axes_of_the_partition_spec():
    """``xla.sdy.sharding`` over ``xla.sdy.meshes``: the same tiles as XLA's parse of the
    instruction's ``sharding=``, and the axes of the PartitionSpec the program wrote."""
    HloSharding = _hlo_sharding()
    module, params = _entry("before_optimizations")
    meshes = sdy_meshes(module)
    assert {k: (m.axes, m.devices) for k, m in meshes.items()} == {
        "mesh": ((("data", 4), ("model", 2)), tuple(range(8)))}
    facts = _facts()
    for p, fact in zip(params, facts["entry_parameters"]):
        named = sdy_sharding(p.frontend_attributes["xla.sdy.sharding"], meshes)
        xla = HloSharding.from_string(p.attributes["sharding"])
        _check(named, xla)
        spec = fact["spec"] + [None] * (len(fact["shape"]) - len(fact["spec"]))
        assert mesh_axes(named) == [[a] if a else [] for a in spec] or named.kind == \
            "replicated"


def test_mesh_form_with_device_ids_and_sub_axes():
    """The mesh form's device order (``device_ids``) and sub-axes, as XLA converts them."""
    HloSharding = _hlo_sharding()
    for text in ("{mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(2,1,0)), "
                 "[{'axis_0':(2)2}]}",
                 "{mesh['axis_0'=2,'axis_1'=4], device_ids=([4,2]T(1,0)), [{'axis_0'}, {}]}",
                 "{mesh['x'=2,'y'=4], [{'y', 'x'}]}"):
        _check(parse_sharding(text), HloSharding.from_string(text))
    mesh = parse_mesh("'a'=2,'b'=2", "[2,2]T(1,0)")
    assert mesh.devices == (0, 2, 1, 3)
    assert on_mesh(mesh, ()).kind == "replicated"


@pytest.mark.parametrize("text", ["devices=[2]0,1", "{devices=[2,2]0,1,2}", "{nonsense}"])
def test_a_malformed_sharding_is_refused_with_what_was_expected(text):
    with pytest.raises(ValueError, match="expected|tile assignment|unknown sharding"):
        parse_sharding(text)


def test_shardings_command_lists_entry_shardings_as_xla_and_jax_say():
    proc = run("shardings", os.path.join(SAMPLES, SPMD), "--json")
    assert proc.returncode == 0, proc.stderr
    [module] = json.loads(proc.stdout)["modules"]
    facts = _facts()
    assert module["devices"] == 8
    for rows, expected in ((module["parameters"], facts["entry_parameters"]),
                           (module["outputs"], facts["entry_outputs"])):
        assert len(rows) == len(expected)
        for row, fact in zip(rows, expected):
            assert row["sharding"].replace(" ", "") == fact["hlo_sharding"].replace(" ", "")
            one = next(iter(fact["device_slices"].values()))
            assert row["per_device_shape"] == [
                (b if b is not None else n) - (a or 0) for (a, b), n in zip(one, fact["shape"])]
    spec_axes = [[[a] if a else [] for a in f["spec"] + [None] * (len(f["shape"]) -
                                                                   len(f["spec"]))]
                 for f in facts["entry_parameters"]]
    assert [r["mesh_axes"] for r in module["parameters"]] == [
        axes if any(axes) else [] for axes in spec_axes]


@pytest.mark.parametrize("command,stage,old,new,expected", [
    ("shardings", "before_optimizations", "sharding={devices=[4,2]<=[8]}",
     "sharding={devices=[4,2]<=[7]}", "tile assignment of 7 devices"),
    ("shardings", "before_optimizations", "sharding={devices=[4,2]<=[8]}",
     "sharding={devices=[4,2,2]<=[16]}", "has 3 dimensions"),
    ("collectives", "cpu_after_optimizations", "replica_groups=mesh['axis_0'=4,'axis_1'=2] "
     "{'axis_1'}", "replica_groups=mesh['axis_0'=4,'axis_1'=2] {'axis_9'}", "axis_9"),
])
def test_a_damaged_sharding_is_named_with_its_file_and_instruction(tmp_path, command, stage,
                                                                   old, new, expected):
    """The sample with one sharding or group damaged: the command fails naming the file,
    the instruction and what was expected, without a traceback."""
    folder = tmp_path / "spmd"
    shutil.copytree(os.path.join(SAMPLES, SPMD), folder,
                    ignore=shutil.ignore_patterns("trace", "shardy"))
    [path] = list(folder.glob(f"*.{stage}.txt"))
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    proc = run(command, str(folder))
    assert proc.returncode == 1
    assert path.name in proc.stderr and expected in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["spmd_train", "tpu_v5e", "tpu_v6e", "gpu_h100", "llama"])
def test_per_device_shapes_are_the_shapes_xla_partitioned_to(name):
    """Each ENTRY parameter's per-device shape (read from its sharding before
    optimizations) is the shape XLA gave that parameter after partitioning, in XLA's own
    parse of the after-optimizations text. The Llama3-8B file is the partitioner's output
    itself (its ENTRY is ``main.66_spmd``): its shapes are one device's, its shardings say
    how they tile the whole."""
    hlo = _xla_parser()
    if name == "llama":
        folder = after = peer_file("0003_xla2026_hlo_llama3_8b")
    else:
        folder = os.path.join(SAMPLES, name)
    proc = run("shardings", folder, "--json")
    assert proc.returncode == 0, proc.stderr
    [module] = [m for m in json.loads(proc.stdout)["modules"] if m["devices"] > 1]
    if name != "llama":
        [after] = glob.glob(os.path.join(folder, f"module_{module['id']}.*"
                                                 "after_optimizations.txt"))
    entry = list(hlo.hlo_module_from_text(read(after)).computations())[-1]  # post order
    shapes = {}
    for inst in entry.instructions():
        m = re.match(r"%?[\w.\-]+ = \w+\[([\d,]*)\]\S* parameter\((\d+)\)", inst.to_string())
        if m:
            shapes[int(m.group(2))] = [int(d) for d in m.group(1).split(",") if d]
    assert len(shapes) == len(module["parameters"])
    for i, p in enumerate(module["parameters"]):
        assert p["per_device_shape"] == shapes[i], (p["name"], p["sharding"])
    assert module["partitioned"] == (name == "llama")
    if name == "llama":      # the MLP weights split 4 ways: 4096 x 32 layers x 14336 whole
        assert "f32[4096,32,14336]" in {p["shape"] for p in module["parameters"]}
