"""Large TF graph text files are read by protoc (``compiler_bridge.tf.protoc``): the
messages equal protobuf's Python ``text_format`` parse of the same files, TF's own dumps,
and a file protoc does not accept still gets text_format's error with its line."""

from __future__ import annotations

import glob
import os

import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import function_pb2, graph_pb2

from compiler_bridge.tf import GraphReadError, read_graph
from compiler_bridge.tf import graphdef as G
from compiler_bridge.tf import protoc
from conftest import ROOT


def _text_dumps() -> list[str]:
    """The two largest text graph dumps of each TF sample and its FunctionDefs (a child
    process each: all 157 files took 15 s)."""
    out = []
    for folder in sorted(glob.glob(os.path.join(ROOT, "sample_dumps", "tf_*"))):
        files = sorted(glob.glob(os.path.join(folder, "*.pbtxt")), key=os.path.getsize)
        out += files[-2:] + [p for p in files[:-2] if "fdef" in os.path.basename(p)]
    return out


def test_protoc_reads_the_text_graphs_tf_dumped_as_text_format_does():
    """Text GraphDefs and FunctionDefs of the TF samples (TF 2.21's dumps, the largest of
    each sample): protoc's binary decodes to the message text_format parses."""
    files = _text_dumps()
    assert len(files) >= 14
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        function = G._looks_like_function(data, path)
        want = function_pb2.FunctionDef() if function else graph_pb2.GraphDef()
        text_format.Parse(data.decode("utf-8"), want)
        got = type(want)()
        encoded = protoc.encode_text(data, got)
        assert encoded is not None, path
        got.ParseFromString(encoded)
        assert got == want, path


def _big_graph() -> bytes:
    from bench.corpus.make_tf_graph import build
    data = text_format.MessageToString(build(2000)).encode()
    assert len(data) >= protoc.MIN_BYTES
    return data


def test_a_large_graph_reads_the_same_through_protoc(monkeypatch):
    """A 2,000-node step graph (tf_autocluster's repeated, over MIN_BYTES) goes through
    protoc and reads as the same graph as through text_format."""
    data = _big_graph()
    calls = []
    real = protoc.encode_text
    monkeypatch.setattr(protoc, "encode_text", lambda d, m: calls.append(1) or real(d, m))
    fast = read_graph(data, "big.pbtxt")
    assert calls
    monkeypatch.setattr(protoc, "MIN_BYTES", len(data) + 1)
    slow = read_graph(data, "big.pbtxt")
    assert len(calls) == 1
    assert fast == slow and len(fast.nodes) > 1900


def test_a_large_file_protoc_refuses_says_its_line_as_before():
    """Cut inside a node: protoc refuses it, and the error is text_format's, with the
    line and column."""
    data = _big_graph()
    cut = data[: len(data) * 2 // 3]
    cut = cut[: cut.rindex(b"\n")] + b"\n  op: \n"
    assert protoc.encode_text(cut, graph_pb2.GraphDef()) is None
    with pytest.raises(GraphReadError, match=r"^big\.pbtxt:\d+:\d+: not a text GraphDef"):
        read_graph(cut, "big.pbtxt")


def test_without_protoc_the_graph_still_reads(monkeypatch):
    """protoc missing (grpc_tools not importable in the child): text_format reads it."""
    data = _big_graph()
    monkeypatch.setattr(protoc.sys, "executable", "/nonexistent/python")
    assert protoc.encode_text(data, graph_pb2.GraphDef()) is None
    assert len(read_graph(data, "big.pbtxt").nodes) > 1900
