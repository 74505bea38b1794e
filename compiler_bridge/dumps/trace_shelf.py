"""Traces uploaded for a stored dump, kept beside it so that a link shows them to anyone.

A stored dump is content-addressed and never changes, so a profiler trace recorded apart
from it (``perfetto_trace.json.gz``, ``<host>.trace.json.gz``, ``<host>.xplane.pb``) is
kept next to it in the same data location::

    traces/<dump hash>/<trace id>.bin     the bytes as uploaded
    traces/<dump hash>/<trace id>.json    written last: name, size, sha256, when

``<trace id>`` is the first 16 hex digits of the bytes' sha256, so the same trace
uploaded twice is kept once and a link can name it (``?trace=<id>``). Traces hang on the
dump's hash, not on one share id, like saved views and comments. Works on local and
fsspec stores alike. Checking that a trace fits the dump is the caller's job
(:func:`compiler_bridge.perf.measure`); the shelf only keeps bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass

from .errors import StoreError
from .store import Store

_ID = re.compile(r"^[0-9a-f]{16}$")
MAX_NAME = 200


@dataclass(frozen=True)
class StoredTrace:
    id: str
    name: str             # the uploaded file's name (its suffix tells the format)
    size: int
    sha256: str
    uploaded_at: float

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "size": self.size, "sha256": self.sha256,
                "uploaded_at": self.uploaded_at}


def trace_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]   # TraceShelf.add takes the same head


def is_trace_id(text: str) -> bool:
    return bool(_ID.match(text or ""))


def _clean_name(name: str) -> str:
    base = os.path.basename((name or "").replace("\\", "/")).strip()
    base = "".join(ch for ch in base if ch.isprintable())
    return base[:MAX_NAME] or "trace"


class TraceShelf:
    """The uploaded traces of a store's dumps."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # ------------------------------------------------------------------ paths
    def _folder(self, share_id: str) -> str:
        h = self.store.resolve(share_id)          # StoreError for an unknown share id
        if self.store.remote:
            return "/".join([self.store.base.rstrip("/"), "traces", h])
        return os.path.join(self.store.base, "traces", h)

    def _join(self, folder: str, name: str) -> str:
        return f"{folder}/{name}" if self.store.remote else os.path.join(folder, name)

    def _write(self, path: str, data: bytes) -> None:
        if self.store.remote:
            self.store.fs.pipe_file(path, data)
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{secrets.token_hex(4)}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    def _read(self, path: str) -> bytes:
        if self.store.remote:
            return self.store.fs.cat_file(path)
        with open(path, "rb") as f:
            return f.read()

    def _names(self, folder: str) -> list[str]:
        try:
            if self.store.remote:
                return [p.rsplit("/", 1)[-1] for p in self.store.fs.ls(folder, detail=False)]
            return os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return []

    # ------------------------------------------------------------------ API
    def add(self, share_id: str, name: str, data: bytes) -> StoredTrace:
        """Keep a trace's bytes beside the dump (once per content); returns its record."""
        if not data:
            raise StoreError(f"{_clean_name(name)}: the file is empty")
        if len(data) > self.store.max_upload_bytes:
            raise StoreError(f"{_clean_name(name)}: over the {self.store.max_upload_bytes:,}"
                             "-byte upload cap")
        folder = self._folder(share_id)
        sha = hashlib.sha256(data).hexdigest()    # the id is its head: hash once
        tid = sha[:16]
        try:
            return self._record(folder, tid)      # the same bytes again
        except (OSError, ValueError, KeyError):
            pass
        record = StoredTrace(tid, _clean_name(name), len(data), sha, time.time())
        self._write(self._join(folder, tid + ".bin"), data)
        self._write(self._join(folder, tid + ".json"), json.dumps(record.to_json()).encode())
        return record

    def list(self, share_id: str) -> list[StoredTrace]:
        """The dump's uploaded traces, newest first."""
        folder = self._folder(share_id)
        out = []
        for n in self._names(folder):
            if n.endswith(".json") and is_trace_id(n[:-5]):
                try:
                    out.append(self._record(folder, n[:-5]))
                except (OSError, ValueError, KeyError):
                    continue
        return sorted(out, key=lambda t: -t.uploaded_at)

    def get(self, share_id: str, tid: str) -> StoredTrace:
        if not is_trace_id(tid):
            raise StoreError(f"{tid!r} is not a trace id")
        try:
            return self._record(self._folder(share_id), tid)
        except (OSError, ValueError, KeyError):
            raise StoreError(f"trace {tid} is not stored with this dump") from None

    def read(self, share_id: str, tid: str) -> bytes:
        self.get(share_id, tid)
        try:
            return self._read(self._join(self._folder(share_id), tid + ".bin"))
        except OSError as e:
            raise StoreError(f"trace {tid} cannot be read ({e})") from None

    def remove(self, share_id: str, tid: str) -> None:
        self.get(share_id, tid)
        folder = self._folder(share_id)
        for suffix in (".json", ".bin"):          # the record first: gone means gone
            path = self._join(folder, tid + suffix)
            try:
                if self.store.remote:
                    self.store.fs.rm(path)
                else:
                    os.remove(path)
            except FileNotFoundError:
                pass

    def _record(self, folder: str, tid: str) -> StoredTrace:
        m = json.loads(self._read(self._join(folder, tid + ".json")))
        return StoredTrace(tid, str(m["name"]), int(m["size"]), str(m["sha256"]),
                           float(m["uploaded_at"]))
