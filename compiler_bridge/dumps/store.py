"""The dump store: every uploaded dump saved once, content-addressed, shareable by link.

Layout of the data directory (a local folder, or any fsspec URL for team deployments
where app replicas share storage)::

    dumps/<hash>/...           the dump's files as uploaded
    manifests/<hash>.json      written last: a dump exists iff its manifest does
    shares/<share id>.json     one write-once file per link id handed out: {"hash": ...,
                               "uploader": ...}
    notes/<uid>.json           saved views and comments of one link (``notes``;
                               ``<uid>.deleted``: deleted)
    traces/<hash>/<share id>/  traces uploaded under one link to the dump (``trace_shelf``)
    tmp/                       staging for uploads in progress (local stores)
    hlolens.sqlite             metadata, share ids, saved views, comments (local stores)

``<hash>`` is sha256 over the dump's sorted (path, sha256(content)) pairs, so the same
dump uploaded twice is stored once. Links carry a random share id mapped to the hash
(the hash alone would let anyone who knows a dump's content guess its link). The files
are deduplicated, the capability is not: the ``add_*`` methods are told which links the
caller holds (``holds``), and one who holds none to a dump already stored gets a link of
their own, with its own saved views and comments (the command line, which passes no
``holds``, gets the dump's first link: the same folder again prints the same link).

The files are the truth; ``hlolens.sqlite`` is an index rebuilt from them (``sync``):
every link id ever printed has its own file, written before it is printed, so replicas
adding one dump at once each keep theirs, and a rebuilt index loses no link, saved view
or comment. For an fsspec URL the SQLite file lives in a local cache, so every replica
lists the same dumps.
"""

from __future__ import annotations

import builtins
import dataclasses
import fcntl
import hashlib
import io
import json
import logging
import os
import posixpath
import secrets
import shutil
import sqlite3
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Collection, Iterable, Iterator
from urllib.parse import quote

from . import archive, usage
from .content import content_entries, dump_hash, dump_hash_of, sha256_file
from .dump import DUMP_EXPECTED, TF_GRAPH, Dump, open_dump, walk_folder
from .errors import DumpError, StoreError
from .notes import Notes
from ..config import SettingsError, settings

DEFAULT_LOCATION = ".hlolens-data"
MAX_UPLOAD_BYTES = archive.DEFAULT_MAX_BYTES
_STALE_TMP_SECONDS = 3600
_OWNER = ".owner"                 # in an upload's staging folder: locked while it runs
_RECHECK_SECONDS = 5.0
_log = logging.getLogger(__name__)


def _share_id() -> str:
    """A new share id: 16 URL-safe characters that never start with '-' (a command line
    would take ``store verify -Qs…`` for an option)."""
    while True:
        sid = secrets.token_urlsafe(12)
        if not sid.startswith("-"):
            return sid


def _owner(path: str) -> str:
    """Whose a staging folder is: 'running' (its upload holds the owner file's lock),
    'abandoned' (the lock can be taken: the upload's process is gone) or '' (no owner
    file: the age rule decides)."""
    try:
        with open(os.path.join(path, _OWNER)) as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return "running"
            fcntl.flock(f, fcntl.LOCK_UN)
            return "abandoned"
    except OSError:
        return ""


@dataclass(frozen=True)
class StoredDump:
    share_id: str
    hash: str
    name: str
    uploaded_at: float
    size: int
    files: int
    modules: list[dict] = field(default_factory=list)   # [{"id", "name"}]
    damage: list[str] = field(default_factory=list)     # files lost since (Store.damage)

    def to_json(self) -> dict:
        return {"share_id": self.share_id, "hash": self.hash, "name": self.name,
                "uploaded_at": self.uploaded_at, "size": self.size, "files": self.files,
                "modules": self.modules, "damage": self.damage}


_DUMP_COLUMNS = "hash, name, uploaded_at, size, files, modules, disk, inodes"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS dumps (
    hash TEXT PRIMARY KEY, name TEXT NOT NULL, uploaded_at REAL NOT NULL,
    size INTEGER NOT NULL, files INTEGER NOT NULL, modules TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shares (
    share_id TEXT PRIMARY KEY, hash TEXT NOT NULL, created_at REAL NOT NULL, uploader TEXT,
    name TEXT);
CREATE TABLE IF NOT EXISTS views (
    id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL, name TEXT NOT NULL,
    note TEXT NOT NULL, query TEXT NOT NULL, author TEXT NOT NULL, created_at REAL NOT NULL,
    uid TEXT UNIQUE);
CREATE TABLE IF NOT EXISTS comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL, module TEXT NOT NULL,
    node TEXT NOT NULL, author TEXT NOT NULL, text TEXT NOT NULL, created_at REAL NOT NULL,
    uid TEXT UNIQUE);
CREATE INDEX IF NOT EXISTS shares_hash ON shares(hash);
CREATE INDEX IF NOT EXISTS views_hash ON views(hash);
CREATE INDEX IF NOT EXISTS comments_hash ON comments(hash, module);
CREATE TABLE IF NOT EXISTS archives (
    sha TEXT PRIMARY KEY, hash TEXT NOT NULL);
"""


def _extract(src: str | bytes, dest: str, max_bytes: int, name: str, max_files: int) -> int:
    """Unpack an archive into ``dest``; the number of files it held."""
    try:
        return len(archive.extract(src, dest, max_bytes=max_bytes, label=name,
                                   max_files=max_files))
    except archive.ArchiveError as e:
        raise StoreError(str(e)) from None


def _all_staged(folder: str, expected: int, name: str) -> None:
    """Every file of an upload reached its staging folder; else nothing is stored (a link
    to part of a dump looks whole to whoever opens it)."""
    found = sum(1 for _ in walk_folder(folder))
    if found != expected:
        raise StoreError(f"{name}: {found} of its {expected} files reached the store's "
                         "staging folder (was it removed while the upload ran?); nothing "
                         "was stored")


def _damaged(e: sqlite3.DatabaseError) -> bool:
    """The index file itself is bad (not SQLite, truncated, malformed), as opposed to a
    busy or locked database or a constraint (subclasses of DatabaseError)."""
    return type(e) is sqlite3.DatabaseError


def _no_room(e: sqlite3.OperationalError) -> bool:
    """SQLite could not write: a full disk (WAL's shared-memory file cannot grow: 'disk
    I/O error'; or 'database or disk is full') or a folder it may not write in."""
    text = str(e)
    return text in ("disk I/O error", "database or disk is full") or "readonly" in text


class Store(Notes):
    """Dumps, share ids, saved views and comments (``Notes``) under one data location."""

    def __init__(self, location: str | None = None, *, max_upload_bytes: int = MAX_UPLOAD_BYTES,
                 cache_dir: str | None = None, quota_bytes: int | None = None,
                 quota_files: int | None = None) -> None:
        try:
            given = settings()
        except SettingsError as e:
            raise StoreError(str(e)) from None
        location = location or given.data or DEFAULT_LOCATION
        self.location = location
        self.max_upload_bytes = max_upload_bytes
        self.quota_bytes = quota_bytes if quota_bytes is not None else given.store_quota
        self.quota_files = quota_files if quota_files is not None else given.store_files
        self.max_files = given.max_files
        self.remote = "://" in location and not location.startswith("file://")
        if self.remote:
            import fsspec
            self.fs, self.base = fsspec.core.url_to_fs(location)
            cache = cache_dir or os.path.join(
                given.cache_dir, hashlib.sha256(location.encode()).hexdigest()[:16])
            os.makedirs(cache, exist_ok=True)
            self.local_root = cache
            self.db_path = os.path.join(cache, "hlolens.sqlite")
        else:
            root = location[7:] if location.startswith("file://") else location
            self.fs = None
            self.base = os.path.abspath(root)
            self.local_root = self.base
            self.db_path = os.path.join(self.base, "hlolens.sqlite")
            for sub in ("dumps", "manifests", "tmp"):
                os.makedirs(os.path.join(self.base, sub), exist_ok=True)
            self._clean_tmp()
        self._lock = threading.Lock()
        self._notes_rlock = threading.RLock()
        self._owners: dict[str, IO[str]] = {}      # staging folder -> its locked owner file
        self._checked: dict[str, float] = {}       # dump hash -> when its files were whole
        self._hashed: dict[str, builtins.list[str]] = {}   # dump hash -> files hashed wrong
        self._read_only = ""        # why the index is read as it is on disk, when it is
        try:
            self._make_index()
        except sqlite3.DatabaseError as e:
            if not _damaged(e):
                raise
            self._set_index_aside(e)
            self._make_index()
        try:
            self.sync()
        except StoreError:
            if not self._read_only:
                raise
            _log.warning("the store's index %s could not take in what is new in its files "
                         "(%s); what it holds already can be read", self.db_path,
                         self._read_only)

    def _make_index(self) -> None:
        """The index's tables (made where missing), checked: a file that is not SQLite,
        or a truncated one, raises DatabaseError."""
        with self._db(recover=False) as db:
            db.executescript(_SCHEMA)
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"database disk image is malformed ({check})")
            # indexes made before accounts, before notes kept their link, before links
            # kept their uploader and name (NULL: not recorded), before dumps kept their
            # disk use
            for table, column in (("views", "account TEXT NOT NULL DEFAULT ''"),
                                  ("comments", "account TEXT NOT NULL DEFAULT ''"),
                                  ("views", "share_id TEXT NOT NULL DEFAULT ''"),
                                  ("comments", "share_id TEXT NOT NULL DEFAULT ''"),
                                  ("shares", "uploader TEXT"), ("shares", "name TEXT"),
                                  # what it takes on disk (NULL: stored before it was
                                  # counted; its size and files stand in)
                                  ("dumps", "disk INTEGER"), ("dumps", "inodes INTEGER")):
                cols = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
                if column.split()[0] not in cols:
                    try:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
                    except sqlite3.OperationalError as e:
                        # processes opening a new store at once: another one added it
                        if "duplicate column" not in str(e):
                            raise

    def _set_index_aside(self, e: sqlite3.DatabaseError) -> str:
        """Move a damaged index (and its journal files) aside, where it can be looked at;
        the files are the truth, and ``sync`` rebuilds the index from them."""
        aside = f"{self.db_path}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        for suffix in ("", "-wal", "-shm"):
            try:
                os.rename(self.db_path + suffix, aside + suffix)
            except FileNotFoundError:       # another process set it aside first
                pass
        _log.warning("the store's index %s was damaged (%s): set aside as %s and rebuilt "
                     "from the store's files", self.db_path, e, aside)
        return aside

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _db(self, *, recover: bool = True) -> Iterator[sqlite3.Connection]:
        """A connection to the index. One found damaged while the server runs is set aside
        and rebuilt from the files; the operation that met it fails with a StoreError
        saying so (the next one finds the index whole)."""
        con: sqlite3.Connection | None = None
        try:
            con = self._connect()
            yield con
            con.commit()
        except sqlite3.DatabaseError as e:
            if self._read_only and isinstance(e, sqlite3.OperationalError) and _no_room(e):
                raise StoreError("the store cannot be written now "
                                 f"({self._read_only}): nothing was saved") from None
            if not (recover and _damaged(e)):
                raise
            if con is not None:
                con.close()
            self._set_index_aside(e)
            self._make_index()
            self.sync()
            raise StoreError("the store's index was damaged; it was rebuilt from the store's "
                             "files: try again") from None
        finally:
            if con is not None:
                con.close()

    def _connect(self) -> sqlite3.Connection:
        """A connection to the index; on a full disk (or a folder it may not write in) one
        that reads the index as it is on disk: SQLite cannot make even a reader's WAL
        files there, and the stored dumps, views and comments must stay readable (issue
        33, item 10). Writes through it fail with a StoreError that says why."""
        con = sqlite3.connect(self.db_path, timeout=30)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            if self._read_only:
                _log.info("the store's index %s can be written again", self.db_path)
                self._read_only = ""
            return con
        except sqlite3.DatabaseError as e:
            con.close()
            if not (isinstance(e, sqlite3.OperationalError) and _no_room(e)):
                raise
            if not self._read_only:
                _log.warning("the store's index %s cannot be written (%s; is the disk "
                             "full?): it is read as it is on disk", self.db_path, e)
            self._read_only = f"SQLite: {e}; is the disk full?"
        # immutable: no WAL or lock files (a writer cannot write there either)
        return sqlite3.connect(f"file:{quote(self.db_path)}?immutable=1", uri=True, timeout=30)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One writer at a time: threads of this process (a lock), and processes on one
        local store (an exclusive lock on a file of it). Without the second, four
        ``store add`` of one folder at once each printed its own share id and the
        manifest kept one of them."""
        with self._lock:
            if self.remote:
                yield
                return
            with open(os.path.join(self.base, "commit.lock"), "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(f, fcntl.LOCK_UN)

    def _clean_tmp(self) -> None:
        tmp = os.path.join(self.base, "tmp")
        now = time.time()
        for entry in os.listdir(tmp):
            path = os.path.join(tmp, entry)
            try:
                # a locked folder is never removed, however old its time says it is: a
                # clock set back (or an mtime from elsewhere) truncated a running upload
                owner = _owner(path)
                if owner == "abandoned" or (
                        not owner and now - os.path.getmtime(path) > _STALE_TMP_SECONDS):
                    if os.path.isdir(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:                  # a half-written file of a crashed local write
                        os.remove(path)
            except OSError:
                pass
        # dump folders whose manifest was never written are leftovers of a crash
        dumps = os.path.join(self.base, "dumps")
        for h in os.listdir(dumps):
            if not os.path.exists(os.path.join(self.base, "manifests", h + ".json")):
                try:
                    if now - os.path.getmtime(os.path.join(dumps, h)) > _STALE_TMP_SECONDS:
                        shutil.rmtree(os.path.join(dumps, h), ignore_errors=True)
                except OSError:
                    pass

    def _path(self, *parts: str) -> str:
        return "/".join([self.base.rstrip("/"), *parts]) if self.remote else \
            os.path.join(self.base, *parts)

    def _names(self, folder: str) -> builtins.list[str]:
        """File names in one of the store's folders ([] when it does not exist yet)."""
        try:
            if self.remote:
                return [p.rsplit("/", 1)[-1] for p in self.fs.ls(self._path(folder),
                                                                  detail=False)]
            return os.listdir(self._path(folder))
        except FileNotFoundError:
            return []

    def _read_json(self, *parts: str) -> dict:
        path = self._path(*parts)
        if self.remote:
            return json.loads(self.fs.cat_file(path))
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def _write_json(self, record: dict, *parts: str, once: bool = False) -> bool:
        """Write one small file whole: one put on object stores, a rename locally, so
        a reader never sees half of it. ``once``: on an object store, a conditional
        create (If-None-Match) that leaves a file another replica wrote first alone;
        False then. (Local writers hold the store's file lock instead.)"""
        data = json.dumps(record, indent=1).encode()
        path = self._path(*parts)
        if self.remote:
            try:
                self.fs.pipe_file(path, data, mode="create" if once else "overwrite")
            except FileExistsError:
                return False
            except OSError as e:           # s3fs: 412 Precondition Failed
                if once and "recondition" in str(e):
                    return False
                raise
            return True
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = os.path.join(self.base, "tmp", f"{parts[-1]}.{secrets.token_hex(4)}")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return True

    def _manifest_hashes(self) -> set[str]:
        return {n[:-5] for n in self._names("manifests") if n.endswith(".json")}

    def _read_manifest(self, h: str) -> dict:
        return self._read_json("manifests", h + ".json")

    def _write_manifest(self, h: str, manifest: dict) -> None:
        # the first replica's manifest stays; a racing one's link id lives in shares/
        self._write_json(manifest, "manifests", h + ".json", once=True)

    def sync(self) -> None:
        """Make the metadata agree with the manifests (other replicas, crashes)."""
        hashes = self._manifest_hashes()
        with self._db() as db:
            known = {r[0] for r in db.execute("SELECT hash FROM dumps")}
            for h in hashes - known:
                try:
                    m = self._read_manifest(h)
                except (OSError, ValueError):
                    continue
                db.execute(f"INSERT OR IGNORE INTO dumps ({_DUMP_COLUMNS}) VALUES "
                           "(?,?,?,?,?,?,?,?)",
                           (h, m["name"], m["uploaded_at"], m["size"], m["files"],
                            json.dumps(m["modules"]), m.get("disk"), m.get("inodes")))
                for sid in m.get("share_ids", []):
                    db.execute("INSERT OR IGNORE INTO shares (share_id, hash, created_at) "
                               "VALUES (?,?,?)", (sid, h, m["uploaded_at"]))
            for h in known - hashes:
                db.execute("DELETE FROM dumps WHERE hash=?", (h,))
            # link ids handed out by other replicas (or before the index was rebuilt)
            shared = {r[0] for r in db.execute("SELECT share_id FROM shares")}
            for n in self._names("shares"):
                sid = n[:-5]
                if not n.endswith(".json") or sid in shared:
                    continue
                try:
                    rec = self._read_json("shares", n)
                except (OSError, ValueError):
                    continue
                db.execute("INSERT OR IGNORE INTO shares VALUES (?,?,?,?,?)",
                           (sid, rec["hash"], rec.get("created_at", 0.0), rec.get("uploader"),
                            rec.get("name")))
        self._sync_notes()

    def _hand_out(self, h: str, sid: str, now: float, uploader: str, name: str) -> None:
        """Record a new link id in its own file before anyone sees it: a racing replica
        may overwrite the manifest, never this. ``uploader`` and ``name``: who made the link
        and what they called the upload (the same bytes uploaded by two people: each
        sees their own name)."""
        self._write_json({"hash": h, "created_at": now, "uploader": uploader, "name": name},
                         "shares", sid + ".json", once=True)
        with self._db() as db:
            db.execute("INSERT OR IGNORE INTO shares VALUES (?,?,?,?,?)",
                       (sid, h, now, uploader, name))

    def _handed(self, h: str, holds: Collection[str] | None, uploader: str,
                name: str) -> StoredDump:
        """Dump ``h``, stored already, under the caller's link: with ``holds`` None (the
        command line, ``--dump``) its first link; else the first of the caller's links to
        it, or, where they hold none, a new link of their own (the same bytes uploaded by
        another visitor: whoever has the bytes gets no one else's link, views or
        comments)."""
        if holds is None:
            return self._stored(h)
        ids = builtins.list(dict.fromkeys(s for s in holds if s))
        if ids:
            with self._db() as db:
                row = db.execute("SELECT share_id FROM shares WHERE hash=? AND share_id IN "
                                 f"({','.join('?' * len(ids))}) ORDER BY created_at LIMIT 1",
                                 (h, *ids)).fetchone()
            if row is not None:
                return self._stored(h, row[0])
        sid = _share_id()
        self._hand_out(h, sid, time.time(), uploader, name)
        return self._stored(h, sid)

    # ------------------------------------------------------------------ adding
    def _staging(self) -> str:
        """A new folder for an upload being unpacked. In a local store it holds an owner
        file locked while the upload runs: the lock dies with a killed process, so the
        next store opened removes the folder at once (it waited an hour before)."""
        root = os.path.join(self.base, "tmp") if not self.remote else None
        path = tempfile.mkdtemp(prefix="upload-", dir=root)
        if root is not None:
            owner = open(os.path.join(path, _OWNER), "w")
            fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._owners[path] = owner
        return path

    def _unstage(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)
        owner = self._owners.pop(path, None)
        if owner is not None:
            owner.close()                  # releases the lock

    def add_path(self, path: str, name: str | None = None, *, uploader: str = "",
                 holds: Collection[str] | None = None) -> StoredDump:
        """Store a dump folder or archive from disk; returns it with its share id.
        ``holds``: the links the caller holds (see ``_handed``; None: the dump's first)."""
        name = name or os.path.basename(os.fspath(path).rstrip("/"))
        if not os.path.isdir(path):
            if os.path.getsize(path) > self.max_upload_bytes:
                raise StoreError(f"{name}: over the {self.max_upload_bytes:,}-byte upload cap")
            if archive.kind(path):
                return self._add_archive(path, sha256_file(path), name, uploader, holds)
        listed = walk_folder(path) if os.path.isdir(path) else []
        if os.path.isdir(path):
            size = sum(s for _, s, _ in listed)
            if size > self.max_upload_bytes:
                raise StoreError(f"{name}: {size:,} bytes is over the "
                                 f"{self.max_upload_bytes:,}-byte upload cap")
            if len(listed) > self.max_files:
                raise StoreError(str(archive.too_many(name, self.max_files)))
            # the same folder again (an app restarted with --dump): no copy, no staging
            h = dump_hash(path)[0]
            if h in self._manifest_hashes() and not self._needs_restore(h):
                self.sync()
                return self._handed(h, holds, uploader, name)
        staging = self._staging()
        try:
            files = os.path.join(staging, "files")
            if os.path.isdir(path):
                # the files a link points at, as the dump opened from the folder reads them
                for rel, _, _ in listed:
                    target = os.path.join(files, rel)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    shutil.copy2(os.path.join(path, rel), target)
                os.makedirs(files, exist_ok=True)
                _all_staged(files, len(listed), name)
            else:                           # one module's file (.hlo, .mlir, .hlo.pb): loose.py
                os.makedirs(files)
                shutil.copyfile(path, os.path.join(files, os.path.basename(path)))
            return self._commit(files, name, uploader, holds)
        finally:
            self._unstage(staging)

    def add_upload(self, src: IO[bytes], filename: str, name: str | None = None, *,
                   uploader: str = "", holds: Collection[str] | None = None) -> StoredDump:
        """Store one uploaded file (an archive, or one module's file), read from ``src`` in
        bounded chunks into the staging folder and stored from there as ``add_path`` stores
        it: the upload is never copied whole in memory (a 1.88 GB zip peaked at 3.95 GB,
        issue 33, item 4). ``filename``: its name as uploaded (only its last part is used)."""
        try:
            base = posixpath.basename(archive.member_path(filename)) or "upload"
        except archive.ArchiveError as e:
            raise StoreError(f"{name or filename}: {e}") from None
        staging = self._staging()
        try:
            target = os.path.join(staging, "upload", base)
            os.makedirs(os.path.dirname(target))
            usage.copy_capped(src, target, self.max_upload_bytes, name or base)
            return self.add_path(target, name or base, uploader=uploader, holds=holds)
        finally:
            self._unstage(staging)

    def add_archive(self, data: bytes, name: str, *, uploader: str = "",
                    holds: Collection[str] | None = None) -> StoredDump:
        """Store a .zip / .tar(.gz) given as bytes (``holds``: as for ``add_path``)."""
        if len(data) > self.max_upload_bytes:
            raise StoreError(f"{name}: over the {self.max_upload_bytes:,}-byte upload cap")
        return self._add_archive(data, hashlib.sha256(data).hexdigest(), name, uploader, holds)

    def _add_archive(self, src: str | bytes, sha: str, name: str, uploader: str,
                     holds: Collection[str] | None) -> StoredDump:
        """The same archive bytes again (a bug-report zip uploaded by a second teammate)
        are recognised by their sha256 before anything is unpacked; other archives of
        the same files are found by the content hash after unpacking."""
        known = self._archive_dump(sha, holds, uploader, name)
        if known is not None:
            return known
        staging = self._staging()
        try:
            files = os.path.join(staging, "files")
            _all_staged(files, _extract(src, files, self.max_upload_bytes, name,
                                        self.max_files), name)
            stored = self._commit(self._normalize_root(files), name, uploader, holds)
        finally:
            self._unstage(staging)
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO archives VALUES (?,?)", (sha, stored.hash))
        return stored

    def _archive_dump(self, sha: str, holds: Collection[str] | None, uploader: str,
                      name: str) -> StoredDump | None:
        """The stored dump an archive with these bytes unpacked to, if it is still here."""
        with self._db() as db:
            row = db.execute("SELECT hash FROM archives WHERE sha=?", (sha,)).fetchone()
        if row is None:
            return None
        if row[0] not in self._manifest_hashes():       # removed (maybe by a replica)
            with self._db() as db:
                db.execute("DELETE FROM archives WHERE hash=?", (row[0],))
            return None
        if self._needs_restore(row[0]):   # unpack it again: it restores the lost files
            return None
        try:
            return self._handed(row[0], holds, uploader, name)
        except StoreError:
            return None

    def add_files(self, files: Iterable[tuple[str, bytes | IO[bytes]]], name: str, *,
                  uploader: str = "", holds: Collection[str] | None = None) -> StoredDump:
        """Store a dump uploaded as many files (relative paths, e.g. from a folder upload;
        each file's bytes, or a file object read in bounded chunks; ``holds``: as for
        ``add_path``)."""
        staging = self._staging()
        try:
            root = os.path.join(staging, "files")
            os.makedirs(root)
            total = count = 0
            for rel, data in files:
                try:
                    path = archive.member_path(rel)
                except archive.ArchiveError as e:
                    raise StoreError(f"{name}: {e}") from None
                count += 1
                if count > self.max_files:
                    raise StoreError(str(archive.too_many(name, self.max_files)))
                target = os.path.join(root, *path.split("/"))
                try:
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    total += usage.copy_capped(io.BytesIO(data) if isinstance(data, bytes) else data,
                                          target, self.max_upload_bytes - total, name,
                                          cap=self.max_upload_bytes)
                except FileExistsError:
                    raise StoreError(f"{name}: {path} is uploaded twice (or is also a "
                                     "folder's name); expected one file per path") from None
                except OSError as e:           # the file's name, never the server's path
                    raise StoreError(f"{name}: {path}: {e.strerror}") from None
            return self._commit(self._normalize_root(root), name, uploader, holds)
        finally:
            self._unstage(staging)

    @staticmethod
    def _normalize_root(files: str) -> str:
        return archive.single_top_folder(files)

    def _commit(self, folder: str, name: str, uploader: str,
                holds: Collection[str] | None) -> StoredDump:
        try:
            dump = open_dump(folder)
        except DumpError as e:
            raise StoreError(f"{name}: {e}") from None
        if not dump.modules and not any(f.kind == TF_GRAPH for f in dump.files):
            raise StoreError(f"{name}: no XLA dump files found ({DUMP_EXPECTED})")
        entries = content_entries(folder)
        h, size, nfiles = dump_hash_of(entries)
        disk, inodes = usage.disk_usage(folder)
        modules = [{"id": m.id, "name": m.name} for m in dump.modules]
        with self._writing():
            if h in self._manifest_hashes():
                self.sync()
                if self._needs_restore(h):   # files lost or changed: these restore them
                    self._restore(folder, h)
                return self._handed(h, holds, uploader, name)
            self._within_quota(name, disk, inodes)
            now = time.time()
            sid = _share_id()
            if self.remote:
                self._put_files(folder, self._path("dumps", h))
            else:
                self._claim(folder, os.path.join(self.base, "dumps", h))
            self._hand_out(h, sid, now, uploader, name)
            manifest = {"name": name, "uploaded_at": now, "size": size, "files": nfiles,
                        "modules": modules, "share_ids": [sid],
                        "index": {rel: [n, digest] for rel, digest, n in entries},
                        "uploader": uploader, "disk": disk, "inodes": inodes}
            self._write_manifest(h, manifest)
            with self._db() as db:
                db.execute(f"INSERT OR REPLACE INTO dumps ({_DUMP_COLUMNS}) VALUES "
                           "(?,?,?,?,?,?,?,?)",
                           (h, name, now, size, nfiles, json.dumps(modules), disk, inodes))
        return self._stored(h, sid)

    def used(self) -> tuple[int, int]:
        """(bytes on disk, inodes) the stored dumps and the traces uploaded beside them take
        (``trace_shelf``: its bytes and records)."""
        with self._db() as db:
            row = db.execute("SELECT COALESCE(SUM(COALESCE(disk, size)), 0), "
                             "COALESCE(SUM(COALESCE(inodes, files)), 0) FROM dumps").fetchone()
        traces = self._traces_usage()
        return int(row[0]) + traces[0], int(row[1]) + traces[1]

    def used_bytes(self) -> int:
        return self.used()[0]

    def _traces_usage(self) -> tuple[int, int]:
        folder = self._path("traces")
        if self.remote:
            try:
                return int(self.fs.du(folder, total=True)), len(self.fs.find(folder))
            except FileNotFoundError:
                return 0, 0
        return usage.disk_usage(folder) if os.path.isdir(folder) else (0, 0)

    @contextmanager
    def room(self, name: str, size: int, what: str = "trace") -> Iterator[None]:
        """Hold the store's write lock while ``size`` more bytes (in one or two files) are
        written, or refuse them (StoreError naming the quota) when the store has no room
        for them. A 58 MB trace went into a full store while dumps were held to the quota
        (issue 33)."""
        with self._writing():
            self._within_quota(name, size, 2, what)
            yield

    def _within_quota(self, name: str, disk: int, inodes: int, what: str = "dump") -> None:
        self.sync()
        usage.within_quota(name, self.used(), (disk, inodes), self.quota_bytes,
                           self.quota_files, what)

    def _restore(self, folder: str, h: str) -> None:
        if self.remote:
            self._put_files(folder, self._path("dumps", h))
            shutil.rmtree(os.path.join(self.local_root, "dumps", h), ignore_errors=True)
        else:
            # restored files are as uploaded: their times say so, or every recheck would
            # hash them as written since (damage's ``touched``)
            stored_at = float(self._read_manifest(h).get("uploaded_at") or 0.0)
            for rel, _, _ in walk_folder(folder):
                os.utime(os.path.join(folder, rel), (stored_at, stored_at))
            self._claim(folder, os.path.join(self.base, "dumps", h))
        self._checked.pop(h, None)
        self._hashed.pop(h, None)

    # ------------------------------------------------------------------ integrity
    def damage(self, h: str, *, hashes: bool = False,
               touched: bool = False) -> builtins.list[str]:
        """What is wrong with a stored dump's files, against its manifest: files missing
        or of another size (a stat each; ``hashes``: also read and hash every file;
        ``touched``: hash the files written after the dump was stored, which is how an
        edit of the same size shows). [] when whole, or when the manifest predates the
        index. Relative names only."""
        try:
            manifest = self._read_manifest(h)
        except (OSError, ValueError):
            return ["its manifest cannot be read"]
        index = manifest.get("index")
        stored_at = float(manifest.get("uploaded_at") or 0.0)
        if not index:
            return []
        root = self._path("dumps", h)
        found: dict[str, int] = {}
        later: set[str] = set()
        if self.remote:
            try:
                found = {p[len(root) + 1:]: int(info.get("size") or 0)
                         for p, info in self.fs.find(root, detail=True).items()}
            except FileNotFoundError:
                pass
        else:
            for rel in index:
                try:
                    st = os.stat(os.path.join(root, *rel.split("/")))
                except OSError:
                    continue
                found[rel] = st.st_size
                if st.st_mtime > stored_at:    # stored files keep their times from before
                    later.add(rel)
        problems = []
        for rel, (size, digest) in sorted(index.items()):
            if rel not in found:
                problems.append(f"{rel} is missing")
            elif found[rel] != size:
                problems.append(f"{rel} has {found[rel]:,} bytes, not {size:,}")
            elif (hashes or (touched and rel in later)) and not self.remote and \
                    sha256_file(os.path.join(root, *rel.split("/"))) != digest:
                problems.append(f"{rel} has other content than was uploaded")
        return problems

    def lost(self, share_id: str) -> builtins.list[str]:
        """``damage`` of a stored dump by size, and by hash for the files written since it
        was stored (an edit of the same size), rechecked at most every few seconds per dump
        while it is whole: a page rerun on every click should not stat every file. The
        first call for a dump also hashes all its files on a thread (once per process), for
        an edit that kept the file's time; what that finds is reported by the calls after
        it, and hashed again at each recheck (a file put right is no longer named)."""
        h = self.resolve(share_id)
        if h not in self._hashed and not self.remote:
            self._hashed[h] = []
            threading.Thread(target=self._hash_later, args=(h,), daemon=True,
                             name=f"hlolens-verify-{h[:8]}").start()
        now = time.monotonic()
        if now - self._checked.get(h, -1e9) < _RECHECK_SECONDS:
            return self._changed_messages(h)
        # the thread's findings hashed again (a file put right is no longer named); read
        # once, as the thread may still be writing them
        hashed = self._hashed.get(h) or []
        if hashed:
            hashed = self._hashed[h] = self._still_changed(h, hashed)
        problems = self.damage(h, touched=True)
        problems += [p for p in self._changed_messages(h, hashed) if p not in problems]
        if problems:
            self._checked.pop(h, None)
        else:
            self._checked[h] = now
        return problems

    def _needs_restore(self, h: str) -> bool:
        """A dump uploaded again whose stored files are not what was uploaded: missing,
        resized, written since, or hashed wrong by this process."""
        return bool(self.damage(h, touched=True) or self._hashed.get(h))

    def _changed_messages(self, h: str,
                          rels: builtins.list[str] | None = None) -> builtins.list[str]:
        rels = self._hashed.get(h, []) if rels is None else rels
        return [f"{rel} has other content than was uploaded" for rel in rels]

    def _still_changed(self, h: str, rels: builtins.list[str]) -> builtins.list[str]:
        """Of files once hashed wrong, those that still are."""
        try:
            index = self._read_manifest(h).get("index") or {}
        except (OSError, ValueError):
            return rels
        out = []
        for rel in rels:
            try:
                wrong = sha256_file(os.path.join(self.base, "dumps", h, *rel.split("/"))) != \
                    index.get(rel, [0, ""])[1]
            except OSError:
                wrong = False                  # missing: damage() names it
            if wrong:
                out.append(rel)
        return out

    def _hash_later(self, h: str) -> None:
        suffix = " has other content than was uploaded"
        try:
            self._hashed[h] = [p[:-len(suffix)] for p in self.damage(h, hashes=True)
                               if p.endswith(suffix)]
        except OSError:
            pass

    def lost_message(self, share_id: str, problems: builtins.list[str]) -> str:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more"
                                           if len(problems) > 5 else "")
        return (f"{self.get(share_id).name}: {len(problems)} of its files changed in the "
                f"store since it was uploaded ({shown}). Upload the same dump again to "
                "restore it: its links stay the same")

    def _put_files(self, folder: str, target: str) -> None:
        """Put each file at its own key. (``fs.put(folder, target, recursive=True)``
        nests the folder inside ``target`` when a killed upload of the same dump left
        part of it there: the dump then opened with its files one folder down.)"""
        local, remote = [], []
        for root, _, files in os.walk(folder):
            for fn in files:
                full = os.path.join(root, fn)
                local.append(full)
                remote.append(target + "/" + os.path.relpath(full, folder).replace(os.sep, "/"))
        self.fs.put(local, remote)

    def _claim(self, folder: str, final: str) -> None:
        """Move the staged files to their final place with one atomic rename."""
        try:
            os.rename(folder, final)
        except OSError:
            # a folder without a manifest: left by a crashed or concurrent upload of
            # the same content; move it aside atomically and take its place
            aside = os.path.join(self.base, "tmp", f"stale-{secrets.token_hex(6)}")
            try:
                os.rename(final, aside)
            except OSError:
                pass
            os.rename(folder, final)
            shutil.rmtree(aside, ignore_errors=True)

    # ------------------------------------------------------------------ reading
    def _stored(self, h: str, share_id: str = "") -> StoredDump:
        """Dump ``h`` under the link ``share_id`` (its first link when not given), named and
        dated as that link's upload was (the dump's name for links from before links kept
        it): the same bytes uploaded by two people show each their own."""
        with self._db() as db:
            row = db.execute("SELECT hash, name, uploaded_at, size, files, modules FROM dumps "
                             "WHERE hash=?", (h,)).fetchone()
            sid = db.execute("SELECT share_id, name, created_at FROM shares WHERE share_id=?",
                             (share_id,)).fetchone() if share_id else db.execute(
                "SELECT share_id, name, created_at FROM shares WHERE hash=? "
                "ORDER BY created_at LIMIT 1", (h,)).fetchone()
        if row is None or sid is None:
            raise StoreError(f"dump {h[:12]} is not in the store")
        return StoredDump(sid[0], row[0], sid[1] or row[1], sid[2] or row[2], row[3], row[4],
                          json.loads(row[5]))

    def list(self, *, damage: bool = False) -> list[StoredDump]:
        """The stored dumps, newest first. ``damage``: also say which local dumps lost
        files (a manifest read and a stat per file of every dump: ``store list`` asks, a
        page run does not; remote dumps say so when opened)."""
        self.sync()
        with self._db() as db:
            hashes = [r[0] for r in db.execute("SELECT hash FROM dumps ORDER BY uploaded_at DESC")]
        stored = [self._stored(h) for h in hashes]
        if not damage or self.remote:
            return stored
        return [dataclasses.replace(d, damage=self.damage(d.hash)) for d in stored]

    def held(self, share_ids: Collection[str]) -> builtins.list[StoredDump]:
        """The stored dumps these links open, each under its link, the newest link first
        (links whose dump is gone are left out): what a visitor who holds them may list."""
        self.sync()
        ids = builtins.list(dict.fromkeys(s for s in share_ids if s))
        if not ids:
            return []
        with self._db() as db:
            rows = db.execute("SELECT s.share_id, s.hash FROM shares s JOIN dumps d ON "
                              f"d.hash = s.hash WHERE s.share_id IN ({','.join('?' * len(ids))})"
                              " ORDER BY s.created_at DESC", ids).fetchall()
        return [self._stored(h, sid) for sid, h in rows]

    def resolve(self, share_id: str) -> str:
        """The content hash a share id points to; StoreError when it is gone."""
        with self._db() as db:
            row = db.execute("SELECT s.hash FROM shares s JOIN dumps d ON d.hash = s.hash "
                             "WHERE s.share_id=?", (share_id,)).fetchone()
        if row is None:
            self.sync()
            with self._db() as db:
                row = db.execute("SELECT s.hash FROM shares s JOIN dumps d ON d.hash = s.hash "
                                 "WHERE s.share_id=?", (share_id,)).fetchone()
        if row is None:
            raise StoreError(f"the dump for link id {share_id!r} is not in this HLO Lens store "
                             "(it was removed, or the link comes from another server)")
        return row[0]

    def get(self, share_id: str) -> StoredDump:
        return self._stored(self.resolve(share_id), share_id)

    def folder(self, share_id: str, *, whole: bool = True) -> str:
        """A local folder holding the dump's files (downloaded once for remote stores).
        ``whole``: StoreError, naming them, when files were lost from the store (the app
        opens what is left, and says what is lost)."""
        h = self.resolve(share_id)
        if whole:
            problems = self.lost(share_id)
            if problems:
                raise StoreError(self.lost_message(share_id, problems))
        if not self.remote:
            return os.path.join(self.base, "dumps", h)
        local = os.path.join(self.local_root, "dumps", h)
        if not os.path.exists(local):
            tmp = local + f".{secrets.token_hex(4)}"
            self.fs.get(self._path("dumps", h), tmp, recursive=True)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            os.replace(tmp, local)
        return local

    def open(self, share_id: str) -> Dump:
        """The stored dump, opened; its ``key`` is the content hash."""
        stored = self.get(share_id)
        dump = open_dump(self.folder(share_id), key=stored.hash)
        dump.name = stored.name
        return dump

    def remove(self, share_id: str) -> StoredDump:
        """Delete a dump, its share ids, views and comments."""
        stored = self.get(share_id)
        h = stored.hash
        with self._writing():
            if self.remote:
                self.fs.rm(self._path("manifests", h + ".json"))
                self.fs.rm(self._path("dumps", h), recursive=True)
                try:                     # traces uploaded beside it (trace_shelf)
                    self.fs.rm(self._path("traces", h), recursive=True)
                except FileNotFoundError:
                    pass
            else:
                os.remove(os.path.join(self.base, "manifests", h + ".json"))
                shutil.rmtree(os.path.join(self.base, "dumps", h), ignore_errors=True)
                shutil.rmtree(os.path.join(self.base, "traces", h), ignore_errors=True)
            with self._db() as db:
                sids = [r[0] for r in db.execute("SELECT share_id FROM shares WHERE hash=?",
                                                 (h,))]
                uids = [r[0] for r in db.execute("SELECT uid FROM views WHERE hash=? UNION "
                                                 "SELECT uid FROM comments WHERE hash=?",
                                                 (h, h))]
                for table in ("dumps", "shares", "views", "comments", "archives"):
                    db.execute(f"DELETE FROM {table} WHERE hash=?", (h,))
            for folder, names in (("shares", sids), ("notes", uids)):
                for n in names:
                    if n:
                        self._delete_file(folder, n + ".json")
        return stored

    def _delete_file(self, *parts: str) -> None:
        try:
            if self.remote:
                self.fs.rm(self._path(*parts))
            else:
                os.remove(self._path(*parts))
        except FileNotFoundError:
            pass
