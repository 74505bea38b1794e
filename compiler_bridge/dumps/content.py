"""A dump's content identity: the sha256 of its sorted (path, sha256 of the file) pairs, so
the same dump uploaded twice is stored once (``Store``), whatever its folder or archive."""

from __future__ import annotations

import hashlib
import os

from .dump import walk_folder


def dump_hash(folder: str) -> tuple[str, int, int]:
    """(content hash, total bytes, file count) of a folder's files."""
    return dump_hash_of(content_entries(folder))


def dump_hash_of(entries: list[tuple[str, str, int]]) -> tuple[str, int, int]:
    top = hashlib.sha256()
    for rel, digest, _ in entries:
        top.update(rel.encode() + b"\0" + digest.encode() + b"\n")
    return top.hexdigest(), sum(e[2] for e in entries), len(entries)


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def content_entries(folder: str) -> list[tuple[str, str, int]]:
    """(relative path, sha256, size) of a folder's files, sorted (links followed, as the
    dump opened from the folder lists them)."""
    return sorted((rel, sha256_file(os.path.join(folder, rel)), size)
                  for rel, size, _ in walk_folder(folder))
