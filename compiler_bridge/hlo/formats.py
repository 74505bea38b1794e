"""The other forms an HLO module comes in, turned into HLO text by XLA's own code (jaxlib):
StableHLO/MLIR (``module.mlir`` of a dump, ``jax.jit(f).lower(x).as_text()``) and HLO
protos (``--xla_dump_hlo_as_proto``: ``*.hlo.pb``, an ``HloProto`` or ``HloModuleProto``,
binary or in protobuf's text format).

Proto text is read with XLA's own message definitions: jaxlib ships no Python modules for
them, but its library holds them as serialized ``FileDescriptorProto``s (as every C++
protobuf library does); they are loaded into a descriptor pool and protobuf's own text
parser reads the file.

jax/jaxlib are imported only when a conversion runs: reading HLO text never needs them.
"""

from __future__ import annotations

import importlib
import posixpath
import re
from typing import Any

from .errors import HloParseError
from .wire import varint

# what a file holds, by its content (``sniff``)
HLO_TEXT = "hlo"
MLIR_TEXT = "mlir"
HLO_PROTO_BINARY = "hlo_proto"
HLO_PROTO_TEXT = "hlo_proto_text"

EXPECTED = ("expected one HLO module: HLO text (starting with 'HloModule'), StableHLO/MLIR "
            "('module @…', as jax.jit(f).lower(x).as_text() prints it) or an HloProto / "
            "HloModuleProto (--xla_dump_hlo_as_proto, *.hlo.pb; binary or text)")

_LEAD = re.compile(rb"(?:\s+|//[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)
_HLO_NAME = re.compile(r"HloModule\s+([^\s,]+)")
_MLIR_NAME = re.compile(r"^module\s+@(\"(?:[^\"\\]|\\.)*\"|[\w$.\-]+)", re.M)
_MLIR_LEAD = re.compile(rb"(?:\s+|//[^\n]*(?:\n|$)|#[\w$.\-]+\s*=[^\n]*(?:\n|$))*")
_MLIR_BYTECODE = b"ML\xefR"
_TEXT_PROTO = re.compile(rb"(?:hlo_module\s*\{|name:\s*\"|computations\s*\{)")
_JAXLIB_WHERE = re.compile(r"(?:-|<unknown>|[^:\s]+):(\d+):(\d+):\s*error:\s*(.*)")


def sniff(data: bytes, name: str = "") -> str:
    """What ``data`` holds: HLO_TEXT, MLIR_TEXT, HLO_PROTO_BINARY, or '' (none of them).
    Looks at the first bytes only; a proto is told by its name (``.pb``) or by being a
    length-delimited first field that is not text."""
    head = data[:4096]
    if head.startswith(_MLIR_BYTECODE):
        return MLIR_TEXT
    rest = head[_LEAD.match(head).end():]     # type: ignore[union-attr]
    if rest.startswith(b"HloModule"):
        return HLO_TEXT
    mlir_rest = head[_MLIR_LEAD.match(head).end():]     # type: ignore[union-attr]
    if re.match(rb"(module\b|func\.func\b)", mlir_rest):
        return MLIR_TEXT
    if head[:1] == b"\x0a" and (name.endswith((".pb", ".proto", ".hlo_proto"))
                                or not _is_text(head)):
        return HLO_PROTO_BINARY
    if is_text_proto(head):
        return HLO_PROTO_TEXT
    return ""


def _is_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start > len(head) - 4        # cut inside a character at the end
    return b"\0" not in head


def is_text_proto(data: bytes) -> bool:
    """A text-format HloProto/HloModuleProto (``hlo_module {`` / ``name: "..."``)."""
    rest = data[:4096]
    rest = rest[_LEAD.match(rest).end():]     # type: ignore[union-attr]
    return bool(_TEXT_PROTO.match(rest))


def module_name(data: bytes, kind: str) -> str:
    """The module's name as its text says it ('' when it does not)."""
    text = data[:8192].decode("utf-8", "replace")
    if kind == HLO_TEXT:
        m = _HLO_NAME.search(text)
        return m.group(1) if m else ""
    if kind == MLIR_TEXT:
        m = _MLIR_NAME.search(text)
        return m.group(1).strip('"') if m else ""
    return ""


def not_a_module(source: str, data: bytes) -> HloParseError:
    """The one message for a file that is none of the forms read here."""
    return HloParseError(EXPECTED, source=source, line=1)


def to_hlo_text(data: bytes, kind: str, source: str = "") -> bytes:
    """HLO text of a module in one of the forms ``sniff`` names; HloParseError otherwise."""
    if kind == HLO_TEXT:
        return data
    if kind == MLIR_TEXT:
        return mlir_to_hlo_text(data, source).encode()
    if kind == HLO_PROTO_BINARY:
        return proto_to_hlo_text(data, source).encode()
    if kind == HLO_PROTO_TEXT:
        return text_proto_to_hlo_text(data, source).encode()
    raise not_a_module(source, data)


def _jaxlib_hlo() -> Any:
    """jaxlib's HLO bindings (XLA's HloModule, XlaComputation, print options)."""
    return importlib.import_module("jaxlib._hlo")


def _print(hlo_module: Any) -> str:
    """HLO text as XLA's dumps print it: metadata (the source lines) kept."""
    _hlo = _jaxlib_hlo()
    options = _hlo.HloPrintOptions()
    options.print_metadata = True
    return hlo_module.to_string(options)


def _jaxlib_error(e: Exception, source: str, data: bytes) -> HloParseError:
    """jaxlib's message, at the line it names (MLIR diagnostics say ``-:LINE:COL: error``)."""
    message = str(e).strip()
    for prefix in ("UNKNOWN: ", "INVALID_ARGUMENT: ", "FAILED_PRECONDITION: "):
        message = message.removeprefix(prefix)
    for line in message.splitlines():
        m = _JAXLIB_WHERE.match(line.strip())
        if m and m.group(1) != "0":
            n, col = int(m.group(1)), int(m.group(2))
            lines = data.decode("utf-8", "replace").splitlines()
            text = lines[n - 1] if 0 < n <= len(lines) else ""
            return HloParseError(f"jaxlib: {m.group(3)}", source=source, line=n, column=col,
                                 text=text)
    first = message.splitlines()[0] if message else type(e).__name__
    return HloParseError(f"jaxlib: {first}", source=source)


def mlir_to_hlo_text(data: bytes | str, source: str = "") -> str:
    """StableHLO/MLIR (text or bytecode) -> HLO text, by jaxlib's
    ``mlir_module_to_xla_computation``; MLIR locations become metadata (source lines)."""
    raw = data.encode() if isinstance(data, str) else data
    from jax._src.lib import xla_client
    try:
        computation = xla_client._xla.mlir.mlir_module_to_xla_computation(
            raw, use_tuple_args=False, return_tuple=False)
        text = _print(computation.get_hlo_module())
    except Exception as e:       # jaxlib raises its own runtime errors
        raise _jaxlib_error(e, source, raw) from None
    # text without locations (as_text() without debug info): jaxlib gives each op its line
    # in the text, in a file it names '-'; that file is ``source``
    name = posixpath.basename(source)
    if name and not raw.startswith(_MLIR_BYTECODE) and not set('"\\') & set(name):
        text = text.replace('source_file="-"', f'source_file="{name}"')
    return text


def _hlo_module_field(data: bytes) -> bytes | None:
    """``HloProto.hlo_module`` (field 1, a message), read by protobuf's wire decoder;
    None when the bytes are not an HloProto with that field."""
    from google.protobuf import empty_pb2, unknown_fields
    from google.protobuf.message import DecodeError
    holder = empty_pb2.Empty()
    try:
        holder.ParseFromString(data)
    except DecodeError:
        return None
    for field in unknown_fields.UnknownFieldSet(holder):
        if field.field_number == 1 and field.wire_type == 2:
            return bytes(field.data)
    return None


def proto_to_hlo_text(data: bytes, source: str = "") -> str:
    """A binary HloProto (what ``--xla_dump_hlo_as_proto`` writes) or HloModuleProto ->
    HLO text, through XLA's own proto reader in jaxlib (``XlaComputation``)."""
    _hlo = _jaxlib_hlo()
    first: Exception | None = None
    module = _hlo_module_field(data)
    for candidate in ([module] if module else []) + [data]:
        try:
            return _print(_hlo.XlaComputation(candidate).get_hlo_module())
        except Exception as e:       # not this message type: try the next reading
            first = first or e
    raise HloParseError(f"not a readable HloProto or HloModuleProto (jaxlib: "
                        f"{str(first).strip().splitlines()[0] if first else 'no data'})",
                        source=source)


def _compile_for_cpu(raw: bytes, source: str, options: Any) -> Any:
    """The executable XLA:CPU compiles from StableHLO/MLIR through jax (one device)."""
    import jax.extend
    from jax._src.lib import xla_client
    try:
        backend = jax.extend.backend.get_backend("cpu")
        return backend.compile_and_load(
            raw.decode("utf-8") if not raw.startswith(_MLIR_BYTECODE) else raw,
            xla_client.DeviceList(tuple(backend.devices()[:1])), options)
    except Exception as e:
        raise _jaxlib_error(e, source, raw) from None


def compile_for_cpu(data: bytes | str, source: str = "") -> str:
    """The after-optimizations HLO of a StableHLO/MLIR module, compiled by XLA:CPU through
    jax on this machine (one device)."""
    from jax._src.lib import xla_client
    raw = data.encode() if isinstance(data, str) else data
    executable = _compile_for_cpu(raw, source, xla_client.CompileOptions())
    try:
        return _print(executable.hlo_modules()[0])
    except Exception as e:
        raise _jaxlib_error(e, source, raw) from None


def compile_dump_for_cpu(data: bytes | str, source: str = "", *, every_pass: bool = True
                         ) -> dict[str, bytes]:
    """What XLA:CPU writes while it compiles a StableHLO/MLIR module here with
    ``--xla_dump_to``, ``--xla_dump_hlo_as_text`` and, with ``every_pass``,
    ``--xla_dump_hlo_pass_re=.*``: the module's HLO before and after optimizations (and
    after each pass that changed it), its buffer assignment, live ranges, memory-usage
    report and kernels' LLVM IR — a dump like one a user makes, so nothing in it asks for
    a flag. Object files are left out. {path in the dump: bytes}."""
    import os
    import tempfile

    from jax._src.lib import xla_client
    raw = data.encode() if isinstance(data, str) else data
    options = xla_client.CompileOptions()
    debug = options.executable_build_options.debug_options
    with tempfile.TemporaryDirectory(prefix="hlolens-compile-") as out:
        debug.xla_dump_to = out
        debug.xla_dump_hlo_as_text = True
        if every_pass:
            debug.xla_dump_hlo_pass_re = ".*"
        _compile_for_cpu(raw, source, options)
        files = {}
        for root, _, names in os.walk(out):
            for name in names:
                if not name.endswith(".o"):
                    full = os.path.join(root, name)
                    with open(full, "rb") as f:
                        files[os.path.relpath(full, out).replace(os.sep, "/")] = f.read()
    return files


# --------------------------------------------------------------------------- proto text

_DESCRIPTOR_FIELDS = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 9: 2, 10: 0, 11: 0,
                      12: 2, 14: 0}          # FileDescriptorProto: field -> wire type
_xla_messages: dict[str, Any] = {}


def _embedded_descriptor(lib: Any, name: str) -> bytes | None:
    """The serialized FileDescriptorProto of ``name`` inside a C++ protobuf library: it
    starts with its name (field 1) and package (field 2) and ends where a field that a
    FileDescriptorProto cannot hold (or a second name: the next file's) begins."""
    raw = name.encode()
    m = re.search(re.escape(b"\x0a" + bytes([len(raw)]) + raw + b"\x12"), lib)
    if m is None:
        return None
    pos, named = m.start(), False
    while pos < len(lib):
        try:
            tag, nxt = varint(lib, pos)
            field, wire = tag >> 3, tag & 7
            if _DESCRIPTOR_FIELDS.get(field) != wire or (field == 1 and named):
                break
            named = named or field == 1
            if wire == 0:
                _, nxt = varint(lib, nxt)
            else:
                size, nxt = varint(lib, nxt)
                nxt += size
        except ValueError:       # the library ends within a field
            break
        pos = nxt
    return bytes(lib[m.start():pos])


def xla_message(full_name: str) -> Any:
    """The Python class of one of XLA's proto messages (e.g. ``xla.HloProto``), built from
    the definitions compiled into jaxlib (read once)."""
    if full_name in _xla_messages:
        return _xla_messages[full_name]
    import mmap
    import os

    # the well-known files XLA's import, loaded into the default pool
    from google.protobuf import any_pb2, duration_pb2, timestamp_pb2, wrappers_pb2  # noqa: F401
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    import jaxlib
    folder = os.path.dirname(jaxlib.__file__)
    libs = [os.path.join(folder, f) for f in sorted(os.listdir(folder))
            if f.endswith(".so") and "common" in f] + \
        [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".so")]
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    for path in dict.fromkeys(libs):
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as lib:
            if lib.find(b"xla/service/hlo.proto") < 0:
                continue

            def add(name: str) -> None:
                if name in added:
                    return
                added.add(name)
                proto = descriptor_pb2.FileDescriptorProto()
                if name.startswith("google/protobuf/"):
                    descriptor_pool.Default().FindFileByName(name).CopyToProto(proto)
                else:
                    data = _embedded_descriptor(lib, name)
                    if data is None:
                        raise KeyError(name)
                    proto.ParseFromString(data)
                for dep in proto.dependency:
                    add(dep)
                pool.Add(proto)
            add("xla/service/hlo.proto")
            break
    for message in ("xla.HloProto", "xla.HloModuleProto"):
        _xla_messages[message] = message_factory.GetMessageClass(
            pool.FindMessageTypeByName(message))
    return _xla_messages[full_name]


def text_proto_to_hlo_text(data: bytes, source: str = "") -> str:
    """An HloProto or HloModuleProto in protobuf's text format -> HLO text: parsed by
    protobuf's text parser with XLA's definitions, then read by jaxlib as a binary one."""
    from google.protobuf import text_format
    text = data.decode("utf-8", "replace")
    try:
        xla_message("xla.HloProto")           # XLA's definitions, loaded once
    except Exception as e:           # no definitions in this jaxlib
        raise HloParseError(f"a text-format HLO proto, and this jaxlib's XLA definitions "
                            f"cannot be read ({e}); dump HLO text (--xla_dump_hlo_as_text)",
                            source=source, line=1) from None
    messages = (("xla.HloProto", "hlo_module {" in text[:4096]),
                ("xla.HloModuleProto", True))
    first: text_format.ParseError | None = None
    for name, plausible in messages:
        if not plausible:
            continue
        message = xla_message(name)()
        try:
            text_format.Parse(text, message)
        except text_format.ParseError as e:
            first = first or e
            continue
        return proto_to_hlo_text(message.SerializeToString(), source)
    assert first is not None
    line = first.GetLine() if hasattr(first, "GetLine") else None
    raise HloParseError(f"not a text-format HloProto or HloModuleProto: {first}",
                        source=source, line=int(line) if line else 0)
