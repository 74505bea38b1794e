"""What an upload takes: copied to disk in bounded chunks, counted on disk by blocks and
inodes, and held to the store's quotas (issue 33, items 4 and 6)."""

from __future__ import annotations

import os
from typing import IO

from .errors import StoreError


def copy_capped(src: IO[bytes], target: str, left: int, name: str, *,
                cap: int | None = None) -> int:
    """Copy a file object to a new file 1 MiB at a time, at most ``left`` bytes (the upload
    cap, ``cap`` when part of it is spent); the bytes copied."""
    cap = left if cap is None else cap
    copied = 0
    with open(target, "xb") as out:
        while chunk := src.read(1 << 20):
            copied += len(chunk)
            if copied > left:
                raise StoreError(f"{name}: over the {cap:,}-byte upload cap")
            out.write(chunk)
    return copied


def disk_usage(folder: str) -> tuple[int, int]:
    """(bytes, inodes) a folder takes on disk: each file and folder by the blocks it holds
    (``st_blocks``; its size rounded up to the file system's block where there is none), and
    one inode each. The bytes of the files alone let a 695 KB tar of 100k members take
    394 MB of disk while the quota counted 121 KB (issue 33, item 6)."""
    block = os.statvfs(folder).f_frsize or 4096
    used, inodes = 0, 0
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            st = os.lstat(os.path.join(root, name))
            blocks = getattr(st, "st_blocks", None)
            used += blocks * 512 if blocks is not None else -(-st.st_size // block) * block
            inodes += 1
    return used, inodes


def within_quota(name: str, used: tuple[int, int], dump: tuple[int, int], quota_bytes: int,
                 quota_files: int, what: str = "dump") -> None:
    """StoreError unless a ``what`` (a dump, a trace) taking ``dump`` (bytes on disk,
    inodes) fits beside what the
    store ``used``: both quotas, on what the dump takes on disk (empty files hold no block,
    an inode each)."""
    (used_bytes, used_files), (disk, inodes) = used, dump
    how = "Remove dumps no longer needed (python -m compiler_bridge store remove ID), or raise "
    if used_bytes + disk > quota_bytes:
        raise StoreError(
            f"{name}: the store is full ({used_bytes:,} of its {quota_bytes:,}-byte quota "
            f"used; this {what} has {disk:,} bytes on disk). {how}HLOLENS_STORE_QUOTA")
    if used_files + inodes > quota_files:
        raise StoreError(
            f"{name}: the store is full ({used_files:,} of its {quota_files:,} files and "
            f"folders used; this {what} has {inodes:,}). {how}HLOLENS_STORE_FILES")
