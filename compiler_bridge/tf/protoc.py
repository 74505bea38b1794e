"""Large protobuf text files read by protoc, the protobuf project's own C++ parser.

Python's ``text_format`` reads about 1.5 MB/s: a 15 MB step graph took 10 s, a TF run's
dumps of it (a file per pass) minutes. ``protoc --encode`` (shipped by ``grpcio-tools``)
turns the same text into the binary message some 10x faster, and protobuf reads that in
milliseconds. It runs as a child process (it reads stdin), given the message's schema as
a descriptor set written from the ``_pb2`` module, so no ``.proto`` file is needed. Any
failure returns None: the caller parses with ``text_format``, whose error names the line
and column."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import Message

__all__ = ["MIN_BYTES", "encode_text"]

MIN_BYTES = 512 * 1024      # below, starting protoc costs more than text_format's parse
_TIMEOUT_S = 600.0

_lock = threading.Lock()
_schemas: dict[str, str] = {}       # file descriptor name -> its descriptor set's path


def _descriptor_set(fd: FileDescriptor) -> str:
    """A file holding the FileDescriptorSet of ``fd`` and its imports, written once."""
    with _lock:
        if fd.name in _schemas and os.path.exists(_schemas[fd.name]):
            return _schemas[fd.name]
        out, seen = descriptor_pb2.FileDescriptorSet(), set()

        def add(f: FileDescriptor) -> None:
            if f.name in seen:
                return
            seen.add(f.name)
            for dep in f.dependencies:
                add(dep)
            f.CopyToProto(out.file.add())
        add(fd)
        handle, path = tempfile.mkstemp(prefix="hlolens-schema-", suffix=".desc")
        with os.fdopen(handle, "wb") as fh:
            fh.write(out.SerializeToString())
        _schemas[fd.name] = path
        return path


def encode_text(data: bytes, message: Message) -> bytes | None:
    """``data``, a text-format ``message``, as the binary message; None when protoc is
    missing or does not accept the text (the caller's parser then says why)."""
    desc = message.DESCRIPTOR
    try:
        schema = _descriptor_set(desc.file)
        p = subprocess.run([sys.executable, "-m", "grpc_tools.protoc",
                            f"--descriptor_set_in={schema}", f"--encode={desc.full_name}",
                            desc.file.name], input=data, capture_output=True,
                           timeout=_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout if p.returncode == 0 else None
