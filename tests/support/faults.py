"""Faults the tests put a store through, faithful to what was measured on the real thing."""

from __future__ import annotations

import sqlite3


def disk_full(monkeypatch) -> None:
    """From now on SQLite's index cannot be written, as on a full disk. On a real full
    disk (a 3 MiB tmpfs filled with zeros) opening the index failed at ``PRAGMA
    journal_mode=WAL`` with 'disk I/O error': WAL mode needs a shared-memory file even to
    read, and it cannot grow. That statement fails here with that error; a connection that
    asks for nothing to be written (``immutable=1``) works, as it did on the full disk.
    (A read-only folder does not reproduce it for root, who may write anywhere.)"""

    class FullDisk(sqlite3.Connection):
        def execute(self, sql, *args):
            if sql.strip().upper().startswith("PRAGMA JOURNAL_MODE=WAL"):
                raise sqlite3.OperationalError("disk I/O error")
            return super().execute(sql, *args)

    real = sqlite3.connect

    def connect(database, *args, **kwargs):
        if kwargs.get("uri") and "immutable=1" in str(database):
            return real(database, *args, **kwargs)
        return real(database, *args, factory=FullDisk, **kwargs)
    monkeypatch.setattr(sqlite3, "connect", connect)
