"""TensorFlow graph dumps (``TF_DUMP_GRAPH_PREFIX``): ``GraphDef`` and ``FunctionDef`` files,
text or binary, read with TF's own proto definitions (the compat copies that the
``tensorboard`` package ships) and turned into plain dataclasses. TensorFlow itself is never
imported.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from google.protobuf import text_format
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet
from tensorboard.compat.proto import function_pb2, graph_pb2, types_pb2

from compiler_bridge.tf import protoc

GRAPH = "graph"
FUNCTION = "function"

CLUSTER_ATTR = "_XlaCluster"
MUST_COMPILE_ATTR = "_XlaMustCompile"
# mark_for_compilation_annotated renames every node 'cluster_N/<name>' or 'unclustered/<name>'
_ANNOTATED = re.compile(r"^(cluster_\d+|unclustered)/")
# ops that hold state: drawn as variables / resources
RESOURCE_OPS = frozenset({"VarHandleOp", "VariableV2", "Variable", "ReadVariableOp",
                          "AssignVariableOp", "AssignSubVariableOp", "AssignAddVariableOp",
                          "ResourceGather", "ResourceApplyGradientDescent"})


class GraphReadError(ValueError):
    """A graph file that is not a GraphDef / FunctionDef; the message names the file (and
    the line, for text)."""


def base_name(name: str) -> str:
    """A node name without mark_for_compilation_annotated's 'cluster_N/' or
    'unclustered/' prefix."""
    return _ANNOTATED.sub("", name, count=1)


@dataclass(frozen=True, slots=True)
class TfNode:
    name: str
    op: str
    inputs: tuple[str, ...] = ()      # producer node names of data inputs
    controls: tuple[str, ...] = ()    # producer node names of control ('^') inputs
    device: str = ""
    attrs: tuple[tuple[str, str], ...] = ()   # (key, value shown as short text)
    cluster: str | None = None        # _XlaCluster, or the annotated 'cluster_N/' prefix
    must_compile: bool = False        # _XlaMustCompile (jit_compile=True)
    function: str | None = None       # the function a call node calls

    @property
    def base_name(self) -> str:
        """The name without mark_for_compilation_annotated's 'cluster_N/' prefix."""
        return base_name(self.name)

    @property
    def is_resource(self) -> bool:
        return self.op in RESOURCE_OPS or any(
            k in ("dtype", "T") and v == "DT_RESOURCE" for k, v in self.attrs)


@dataclass(frozen=True, slots=True)
class TfFunction:
    """A function of a graph's library (or a FunctionDef file)."""

    name: str
    nodes: int
    must_compile: bool
    node_names: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()        # the functions its nodes call


@dataclass(slots=True)
class TfGraph:
    file: str                          # path inside the dump
    kind: str                          # GRAPH or FUNCTION
    nodes: list[TfNode]
    functions: list[TfFunction] = field(default_factory=list)
    name: str = ""                     # a FunctionDef's signature name

    def clusters(self) -> dict[str, list[TfNode]]:
        """Cluster name -> its nodes, in file order, clusters by number."""
        out: dict[str, list[TfNode]] = {}
        for n in self.nodes:
            if n.cluster is not None:
                out.setdefault(n.cluster, []).append(n)
        return dict(sorted(out.items(), key=lambda kv: _cluster_number(kv[0])))

    def node(self, name: str) -> TfNode | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None


def _cluster_number(name: str) -> tuple[int, str]:
    m = re.search(r"(\d+)$", name)
    return (int(m.group(1)) if m else -1, name)


# --------------------------------------------------------------------------- values

def _attr_text(value) -> str:
    """An AttrValue as one short line."""
    which = value.WhichOneof("value")
    if which is None:
        return ""
    if which == "s":
        return value.s.decode("utf-8", "replace")
    if which == "type":
        return _dtype_name(value.type)
    if which == "shape":
        if value.shape.unknown_rank:
            return "<unknown rank>"
        return "[" + ",".join(str(d.size) for d in value.shape.dim) + "]"
    if which == "func":
        return value.func.name
    if which == "tensor":
        t = value.tensor
        dims = "[" + ",".join(str(d.size) for d in t.tensor_shape.dim) + "]"
        return f"tensor {_dtype_name(t.dtype)}{dims}"
    if which == "list":
        lst = value.list
        for kind in ("s", "i", "f", "b", "type", "shape", "func"):
            items = list(getattr(lst, kind))
            if items:
                if kind == "s":
                    shown = [x.decode("utf-8", "replace") for x in items]
                elif kind == "type":
                    shown = [_dtype_name(x) for x in items]
                elif kind == "func":
                    shown = [x.name for x in items]
                elif kind == "shape":
                    shown = ["[" + ",".join(str(d.size) for d in x.dim) + "]" for x in items]
                else:
                    shown = [str(x) for x in items]
                text = ", ".join(shown[:8]) + (", ..." if len(shown) > 8 else "")
                return f"[{text}]"
        return "[]"
    return str(getattr(value, which))


def _dtype_name(code: int) -> str:
    try:
        return types_pb2.DataType.Name(code)
    except ValueError:
        return str(code)


def _producer(ref: str) -> str:
    """'node:1' / 'node:output:0' / '^node' -> 'node'."""
    return ref.lstrip("^").split(":", 1)[0]


def _node(nd) -> TfNode:
    data: list[str] = []
    controls: list[str] = []
    for ref in nd.input:
        (controls if ref.startswith("^") else data).append(_producer(ref))
    attrs = []
    cluster = None
    must = False
    function = None
    for key in sorted(nd.attr):
        value = nd.attr[key]
        if key == "_class":        # colocation lists: long and rarely useful
            continue
        text = _attr_text(value)
        attrs.append((key, text))
        if key == CLUSTER_ATTR:
            cluster = text
        elif key == MUST_COMPILE_ATTR:
            must = bool(value.b)
        elif key == "f" and value.WhichOneof("value") == "func":
            function = value.func.name
    if cluster is None:
        m = _ANNOTATED.match(nd.name)
        if m and m.group(1) != "unclustered":
            cluster = m.group(1)
    return TfNode(nd.name, nd.op, tuple(data), tuple(controls), nd.device, tuple(attrs),
                  cluster, must, function)


def _function(fd) -> TfFunction:
    must = MUST_COMPILE_ATTR in fd.attr and bool(fd.attr[MUST_COMPILE_ATTR].b)
    calls = tuple(nd.attr["f"].func.name for nd in fd.node_def
                  if "f" in nd.attr and nd.attr["f"].WhichOneof("value") == "func")
    return TfFunction(fd.signature.name, len(fd.node_def), must,
                      tuple(nd.name for nd in fd.node_def), calls)


# --------------------------------------------------------------------------- reading

_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_FIRST_FIELD = re.compile(rb"^\s*([A-Za-z_][A-Za-z0-9_]*)", re.M)


def is_text(data: bytes) -> bool:
    """Text format, as TF_DUMP_GRAPH_PREFIX writes by default (binary: TF_DUMP_GRAPH_FMT=BIN)."""
    head = data[:4096]
    if _CONTROL.search(head):     # binary protos start with tag and length bytes
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        # a multi-byte character cut at 4096 is still text
        try:
            head[:-4].decode("utf-8")
        except UnicodeDecodeError:
            return False
    return True


def _looks_like_function(data: bytes, path: str) -> bool:
    m = _FIRST_FIELD.search(data[:4096])
    if m is not None and is_text(data):
        return m.group(1).decode() in ("signature", "node_def", "ret", "control_ret",
                                        "arg_attr", "attr", "resource_arg_unique_id")
    return "fdef" in path.rsplit("/", 1)[-1]


def _unknown(msg: Message) -> int:
    try:
        return len(UnknownFieldSet(msg))
    except Exception:       # noqa: BLE001 - an implementation without the accessor: trust it
        return 0


def _check_binary(msg: Message, nodes, path: str, what: str) -> None:
    """A binary proto of another type often decodes without error: its fields land as
    unknown fields, or as nodes without a name or op. Say so instead of showing junk."""
    if _unknown(msg) or any(_unknown(n) or not n.name or not n.op for n in nodes):
        raise GraphReadError(f"{path}: not a binary {what} (its fields are not a "
                             f"{what}'s; expected a TF graph dump)")


_PROTO_TYPE = re.compile(r"^Error parsing message(?: with type '[^']*')?:?\s*")


def _read_by_protoc(data: bytes, msg: Message) -> bool:
    """A large text file through protoc (4-6x faster); False where it is not read so."""
    fast = protoc.encode_text(data, msg) if len(data) >= protoc.MIN_BYTES else None
    if fast is None:
        return False
    try:
        msg.ParseFromString(fast)
    except (DecodeError, RuntimeError, ValueError):
        msg.Clear()
        return False
    return True


def _message(data: bytes, path: str) -> tuple[Message, bool]:
    """The file's proto (GraphDef or FunctionDef) and whether it is a FunctionDef."""
    function = _looks_like_function(data, path)
    what = "FunctionDef" if function else "GraphDef"
    if not data.strip():
        # TF writes at least 'versions { producer: N }' (a FunctionDef, its signature):
        # an empty file is a dump cut short, not an empty graph
        raise GraphReadError(f"{path}: empty file ({len(data)} bytes): expected a TF "
                             f"{what} dump; the write was cut short")
    msg: Message = function_pb2.FunctionDef() if function else graph_pb2.GraphDef()
    if is_text(data):
        try:
            if not _read_by_protoc(data, msg):
                text_format.Parse(data.decode("utf-8", "replace"), msg)
        except text_format.ParseError as e:
            line, col = e.GetLine(), e.GetColumn()
            detail = str(e)
            detail = re.sub(r"^\d+:\d+ : ", "", detail)
            where = f"{path}:{line}:{col}" if line else path
            raise GraphReadError(f"{where}: not a text {what}: {detail}") from None
    else:
        try:
            msg.ParseFromString(data)
        except (DecodeError, RuntimeError, ValueError) as e:
            # protobuf names its internal message ('tensorboard.GraphDef'): not the user's
            detail = _PROTO_TYPE.sub("", str(e)) or "bad data"
            raise GraphReadError(f"{path}: not a binary {what} ({detail}): expected a "
                                 f"binary TF {what}; the file is cut short or another "
                                 "kind of file") from None
    return msg, function


def node_texts(data: bytes, path: str, names: Collection[str] | None = None
               ) -> dict[str, str]:
    """Node name -> the node's text (a ``NodeDef`` in text format, as TF writes it), for
    the nodes ``names`` (default: all) of a GraphDef or FunctionDef file."""
    msg, function = _message(data, path)
    nodes = msg.node_def if function else msg.node
    wanted = None if names is None else set(names)
    return {n.name: text_format.MessageToString(n) for n in nodes
            if wanted is None or n.name in wanted}


def read_graph(data: bytes, path: str) -> TfGraph:
    """A GraphDef or FunctionDef file, text or binary. Raises GraphReadError naming the
    file (and line and column, for text) when it is neither."""
    msg, function = _message(data, path)
    what = "FunctionDef" if function else "GraphDef"
    if function:
        assert isinstance(msg, function_pb2.FunctionDef)
        if not is_text(data):
            _check_binary(msg, msg.node_def, path, what)
        return TfGraph(path, FUNCTION, [_node(n) for n in msg.node_def],
                       [], msg.signature.name)
    assert isinstance(msg, graph_pb2.GraphDef)
    if not is_text(data):
        _check_binary(msg, msg.node, path, what)
        if not msg.node and not msg.library.function:
            raise GraphReadError(f"{path}: not a binary GraphDef (no nodes, no functions)")
    if not msg.HasField("versions"):
        # TF writes 'versions' last (fields go in number order): a file cut between two
        # nodes still parses, as a graph missing the rest of its nodes
        raise GraphReadError(f"{path}: the GraphDef ends early, after {len(msg.node)} nodes "
                             "and without the 'versions' TF writes last: a dump cut short")
    return TfGraph(path, GRAPH, [_node(n) for n in msg.node],
                   [_function(f) for f in msg.library.function])
