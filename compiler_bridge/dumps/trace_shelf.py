"""Traces uploaded for a stored dump under one link, kept beside the dump so that the link
shows them to anyone who has it.

A stored dump is content-addressed and never changes, so a profiler trace recorded apart
from it (``perfetto_trace.json.gz``, ``<host>.trace.json.gz``, ``<host>.xplane.pb``) is
kept next to it in the same data location, under the link (share id) it was uploaded
under, like saved views and comments (``notes``): the same bytes uploaded by two people
are one dump with two links, and a trace added under one is not listed, read or named
(``?trace=<id>``) under the other::

    traces/<dump hash>/<share id>/<trace id>.bin     the bytes as uploaded
    traces/<dump hash>/<share id>/<trace id>.json    written last: name, size, sha256, when

``<trace id>`` is the first 16 hex digits of the bytes' sha256, so the same trace
uploaded twice under a link is kept once and the link can name it. Traces that came
inside the dump are files of the dump, shown under every link. Traces shelved before
traces were kept per link lie in ``traces/<dump hash>/`` itself: they stay listed and
readable under every link to the dump, as they were when shelved. Every byte written
counts against the store's quota (``Store.room``). Works on local and fsspec stores
alike. Checking that a trace fits the dump is the caller's job
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
    def _folders(self, share_id: str) -> tuple[str, str]:
        """The link's own folder, and the dump's (where traces shelved before traces were
        kept per link lie)."""
        h = self.store.resolve(share_id)          # StoreError for an unknown share id
        if self.store.remote:
            dump = "/".join([self.store.base.rstrip("/"), "traces", h])
        else:
            dump = os.path.join(self.store.base, "traces", h)
        return self._join(dump, share_id), dump

    def _find(self, share_id: str, tid: str) -> tuple[str, StoredTrace]:
        """The folder of the link's trace ``tid`` and its record (its own before a
        shared one of the same bytes)."""
        for folder in self._folders(share_id):
            try:
                return folder, self._record(folder, tid)
            except (OSError, ValueError, KeyError):
                continue
        raise StoreError(f"trace {tid} is not stored with this dump")

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
        folder = self._folders(share_id)[0]
        sha = hashlib.sha256(data).hexdigest()    # the id is its head: hash once
        tid = sha[:16]
        try:
            return self._record(folder, tid)      # the same bytes again
        except (OSError, ValueError, KeyError):
            pass
        record = StoredTrace(tid, _clean_name(name), len(data), sha, time.time())
        meta = json.dumps(record.to_json()).encode()
        with self.store.room(record.name, len(data) + len(meta)):
            self._write(self._join(folder, tid + ".bin"), data)
            self._write(self._join(folder, tid + ".json"), meta)
        return record

    def list(self, share_id: str) -> list[StoredTrace]:
        """The traces uploaded under this link (and those shelved for every link before
        traces were kept per link), newest first."""
        out: dict[str, StoredTrace] = {}
        for folder in self._folders(share_id):
            for n in self._names(folder):
                tid = n[:-5]
                if n.endswith(".json") and is_trace_id(tid) and tid not in out:
                    try:
                        out[tid] = self._record(folder, tid)
                    except (OSError, ValueError, KeyError):
                        continue
        return sorted(out.values(), key=lambda t: -t.uploaded_at)

    def get(self, share_id: str, tid: str) -> StoredTrace:
        if not is_trace_id(tid):
            raise StoreError(f"{tid!r} is not a trace id")
        return self._find(share_id, tid)[1]

    def read(self, share_id: str, tid: str) -> bytes:
        self.get(share_id, tid)
        folder, _ = self._find(share_id, tid)
        try:
            return self._read(self._join(folder, tid + ".bin"))
        except OSError as e:
            raise StoreError(f"trace {tid} cannot be read ({e})") from None

    def remove(self, share_id: str, tid: str) -> None:
        """Remove the link's trace (a trace shelved for every link: for every link)."""
        self.get(share_id, tid)
        folder, _ = self._find(share_id, tid)
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
