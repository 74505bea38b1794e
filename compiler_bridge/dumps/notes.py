"""Saved views and comments of the store's links (``Store`` inherits them from ``Notes``).

A note belongs to the link it was written under (the share id: the capability), not to
the dump's content: the same bytes uploaded by two people are stored once, but each gets
a link of their own, and a view saved under one is not listed under the other. Each note
is one file, ``notes/<uid>.json`` (``<uid>.deleted``: its tombstone), holding the dump's
hash and the share id; the index's ``views`` and ``comments`` tables are rebuilt from them.

Notes written before notes recorded their link carry the hash alone: they are listed under
every link to that dump, as they were, and may be deleted only under a link handed out
before they were written (the links that shared them then).
"""

from __future__ import annotations

import builtins
import fcntl
import json
import os
import secrets
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Iterator

from .errors import StoreError


@dataclass(frozen=True)
class SavedView:
    id: int
    share_id: str         # the link it is listed under
    name: str
    note: str
    query: dict
    author: str
    created_at: float
    account: str = ""     # the signed-in account that saved it ('' when anonymous)
    link: str = ""        # the link it was saved under ('' when saved before links were kept)


@dataclass(frozen=True)
class Comment:
    id: int
    share_id: str         # the link it is listed under
    module: str
    node: str
    author: str
    text: str
    created_at: float
    account: str = ""     # the signed-in account that wrote it ('' when anonymous)
    link: str = ""        # the link it was written under ('' when written before links were kept)


def _row_id(cur: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just made."""
    if cur.lastrowid is None:
        raise StoreError("the database did not say which row it added")
    return cur.lastrowid


# a note is listed under the link it was written under, and one from before links were kept
# under every link of its dump
_LISTED = "hash=? AND (share_id=? OR share_id='')"


class Notes(ABC):
    """Saved views and comments, per link. The plumbing is the store's."""

    remote: bool
    base: str
    _notes_rlock: threading.RLock

    @abstractmethod
    def resolve(self, share_id: str) -> str: ...

    @abstractmethod
    def _db(self, *, recover: bool = True) -> AbstractContextManager[sqlite3.Connection]: ...

    @abstractmethod
    def _names(self, folder: str) -> builtins.list[str]: ...

    @abstractmethod
    def _read_json(self, *parts: str) -> dict: ...

    @abstractmethod
    def _write_json(self, record: dict, *parts: str, once: bool = False) -> bool: ...

    @abstractmethod
    def _read_manifest(self, h: str) -> dict: ...

    # ------------------------------------------------------------------ views
    def save_view(self, share_id: str, name: str, query: dict, *, note: str = "",
                  author: str = "", account: str = "") -> SavedView:
        h = self.resolve(share_id)
        if not name.strip():
            raise StoreError("a saved view needs a name")
        now = time.time()
        uid = secrets.token_hex(12)
        with self._db() as db:
            cur = db.execute("INSERT INTO views (hash, share_id, name, note, query, author, "
                             "created_at, uid, account) VALUES (?,?,?,?,?,?,?,?,?)",
                             (h, share_id, name.strip()[:200], note[:2000], json.dumps(query),
                              author[:100], now, uid, account))
            vid = _row_id(cur)
        self._write_json({"kind": "view", "hash": h, "share_id": share_id,
                          "name": name.strip()[:200], "note": note[:2000], "query": query,
                          "author": author[:100], "created_at": now, "account": account},
                         "notes", uid + ".json")
        return SavedView(vid, share_id, name.strip()[:200], note[:2000], dict(query),
                         author[:100], now, account, share_id)

    def views(self, share_id: str) -> builtins.list[SavedView]:
        h = self.resolve(share_id)
        if self.remote:
            self._sync_notes()                       # another replica's new notes
        with self._db() as db:
            rows = db.execute("SELECT id, name, note, query, author, created_at, account, "
                              f"share_id FROM views WHERE {_LISTED} ORDER BY created_at",
                              (h, share_id)).fetchall()
        return [SavedView(r[0], share_id, r[1], r[2], json.loads(r[3]), r[4], r[5], r[6], r[7])
                for r in rows]

    def delete_view(self, share_id: str, view_id: int, *, by: str | None = None) -> None:
        """Delete one of this link's saved views, for every replica. ``by``: the signed-in
        account asking (a server with sign-in), which must have saved it or made the link;
        None: no sign-in on this server, anyone holding the link may."""
        self._delete("views", "saved view", share_id, view_id, by)

    # ------------------------------------------------------------------ comments
    def add_comment(self, share_id: str, module: str, node: str, text: str,
                    author: str = "", account: str = "") -> Comment:
        h = self.resolve(share_id)
        if not text.strip():
            raise StoreError("an empty comment")
        now = time.time()
        uid = secrets.token_hex(12)
        with self._db() as db:
            cur = db.execute("INSERT INTO comments (hash, share_id, module, node, author, text, "
                             "created_at, uid, account) VALUES (?,?,?,?,?,?,?,?,?)",
                             (h, share_id, module, node, author[:100], text.strip()[:5000],
                              now, uid, account))
            cid = _row_id(cur)
        self._write_json({"kind": "comment", "hash": h, "share_id": share_id, "module": module,
                          "node": node, "author": author[:100], "text": text.strip()[:5000],
                          "created_at": now, "account": account}, "notes", uid + ".json")
        return Comment(cid, share_id, module, node, author[:100], text.strip()[:5000], now,
                       account, share_id)

    def comments(self, share_id: str, module: str | None = None) -> builtins.list[Comment]:
        h = self.resolve(share_id)
        if self.remote:
            self._sync_notes()
        sql = ("SELECT id, module, node, author, text, created_at, account, share_id "
               f"FROM comments WHERE {_LISTED}")
        args: tuple = (h, share_id)
        if module is not None:
            sql += " AND module=?"
            args += (module,)
        with self._db() as db:
            rows = db.execute(sql + " ORDER BY created_at", args).fetchall()
        return [Comment(r[0], share_id, r[1], r[2], r[3], r[4], r[5], r[6], r[7]) for r in rows]

    def delete_comment(self, share_id: str, comment_id: int, *, by: str | None = None) -> None:
        """Delete one of this link's comments, for every replica (``by``: as for views)."""
        self._delete("comments", "comment", share_id, comment_id, by)

    # ------------------------------------------------------------------ who may delete
    def uploader(self, share_id: str) -> str:
        """The signed-in account that made this link ('' when anonymous): who uploaded
        the dump, or uploaded the same bytes again and got a link of their own. Links
        handed out before links recorded it: the dump's first uploader, for the links its
        manifest lists."""
        with self._db() as db:
            row = db.execute("SELECT hash, uploader FROM shares WHERE share_id=?",
                             (share_id,)).fetchone()
        if row is None:
            return ""
        if row[1] is not None:
            return str(row[1])
        try:
            manifest = self._read_manifest(row[0])
        except (OSError, ValueError):
            return ""
        return str(manifest.get("uploader", "")) \
            if share_id in manifest.get("share_ids", []) else ""

    def may_delete(self, share_id: str, note: SavedView | Comment, by: str | None) -> bool:
        """Whether ``by`` may delete ``note`` under the link ``share_id``: a note of this link
        (see the module's docstring for notes from before links were kept), and ``by`` None
        (no sign-in), or its author, or who made the link."""
        return self._of_link(share_id, note.link, note.created_at) and (
            by is None or bool(by) and (by == note.account or by == self.uploader(share_id)))

    def _of_link(self, share_id: str, link: str, created_at: float) -> bool:
        if link:
            return link == share_id
        with self._db() as db:
            row = db.execute("SELECT created_at FROM shares WHERE share_id=?",
                             (share_id,)).fetchone()
        return row is not None and row[0] <= created_at

    def _delete(self, table: str, what: str, share_id: str, row_id: int,
                by: str | None) -> None:
        h = self.resolve(share_id)
        with self._db() as db:
            row = db.execute(f"SELECT uid, account, share_id, created_at FROM {table} "
                             f"WHERE id=? AND {_LISTED}", (int(row_id), h, share_id)).fetchone()
        if row is None:
            raise StoreError(f"no {what} {row_id} on dump {share_id} (deleted already?)")
        if not self._of_link(share_id, row[2], row[3]):
            raise StoreError(f"this {what} was written under another link to this dump; "
                             "only that link may delete it")
        if not (by is None or bool(by) and (by == row[1] or by == self.uploader(share_id))):
            raise StoreError(f"only who wrote this {what}, or uploaded the dump, may "
                             "delete it (signed in)")
        with self._notes_lock():
            # the tombstone first: other replicas and a rebuilt index drop the row, and
            # a sync that sees the note file sees its tombstone too
            self._write_json({}, "notes", row[0] + ".deleted")
            with self._db() as db:
                db.execute(f"DELETE FROM {table} WHERE id=?", (int(row_id),))

    # ------------------------------------------------------------------ the index
    @contextmanager
    def _notes_lock(self) -> Iterator[None]:
        """Deleting a note and taking notes into the index exclude each other: a sync that
        listed the note files before a deletion landed took the deleted note back in."""
        with self._notes_rlock:
            if self.remote:
                yield
                return
            with open(os.path.join(self.base, "notes.lock"), "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(f, fcntl.LOCK_UN)

    def _sync_notes(self) -> None:
        with self._notes_lock():
            self._sync_notes_locked()

    def _sync_notes_locked(self) -> None:
        names = self._names("notes")
        if not names:
            return
        deleted = {n[:-len(".deleted")] for n in names if n.endswith(".deleted")}
        with self._db() as db:
            for uid in deleted:
                db.execute("DELETE FROM views WHERE uid=?", (uid,))
                db.execute("DELETE FROM comments WHERE uid=?", (uid,))
            known = {r[0] for r in db.execute("SELECT uid FROM views UNION SELECT uid FROM comments")}
            for n in names:
                uid = n[:-5]
                if not n.endswith(".json") or uid in known or uid in deleted:
                    continue
                try:
                    rec = self._read_json("notes", n)
                except (OSError, ValueError):
                    continue
                # a note from before links were kept: '' (listed under every link)
                link = str(rec.get("share_id") or "")
                if rec.get("kind") == "view":
                    db.execute("INSERT OR IGNORE INTO views (hash, share_id, name, note, query, "
                               "author, created_at, uid, account) VALUES (?,?,?,?,?,?,?,?,?)",
                               (rec["hash"], link, rec["name"], rec["note"],
                                json.dumps(rec["query"]), rec["author"], rec["created_at"], uid,
                                rec.get("account", "")))
                elif rec.get("kind") == "comment":
                    db.execute("INSERT OR IGNORE INTO comments (hash, share_id, module, node, "
                               "author, text, created_at, uid, account) "
                               "VALUES (?,?,?,?,?,?,?,?,?)",
                               (rec["hash"], link, rec["module"], rec["node"], rec["author"],
                                rec["text"], rec["created_at"], uid, rec.get("account", "")))
