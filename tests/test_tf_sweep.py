"""TF dumps unlike the first samples (found by the TF sweep): graph files cut to nothing, graphs
that TF clustered beside the largest one, folders with only some of TF's output. Expected
values come from TF's own output: the samples' logs and graph files."""

from __future__ import annotations

import shutil

import pytest

from compiler_bridge import open_dump
from compiler_bridge.tf import tf_index

from conftest import sample


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
