"""Safe reading of uploaded archives (.zip, .tar, .tar.gz/.tgz, .tar.xz, .tar.bz2).

Members must stay inside the target: absolute paths, '..', drive letters, links and device
files are refused, and so is an archive that unpacks to more than the size cap (counted
on the bytes actually written, since a zip can lie about its sizes). A refused archive
leaves nothing behind.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import shutil
import stat
import tarfile
import zipfile
from typing import IO, BinaryIO

from .errors import DumpError
from ..config import settings

DEFAULT_MAX_BYTES = 2 << 30     # 2 GiB unpacked, the app's default upload cap
# the most an archive may unpack to per byte it holds: XLA dumps pack 5-30x (text, many
# repeats); a 1 MB zip holding 1 GiB of zeros (1000x) was stored and took the server to
# 3.9 GB (issue 17). HLOLENS_MAX_RATIO sets it (settings().max_ratio, default 200).
RATIO_FLOOR = 16 << 20          # archives that unpack to less are not held to the ratio
# the most folders a file may sit in, inside an archive or a dump folder: XLA writes a flat
# folder (a zipped one is a level or two deep); a member 1,500 folders deep overflowed
# Python's stack in os.makedirs and showed a RecursionError (issue 33, item 10)
MAX_DEPTH = 64


class ArchiveError(DumpError):
    """An archive that is refused: unreadable, unsafe or too big. Says which and why."""


def member_path(name: str) -> str:
    """A member name as a safe relative posix path; raises ArchiveError otherwise."""
    raw = name
    name = name.replace("\\", "/")
    if "\0" in name:
        raise ArchiveError(f"member {raw!r} has a NUL byte in its name")
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        raise ArchiveError(f"member {raw!r} has an absolute path")
    norm = posixpath.normpath(name)
    if norm == ".." or norm.startswith("../"):
        raise ArchiveError(f"member {raw!r} points outside the archive (zip-slip)")
    too_deep(norm, "member")
    return norm


def too_deep(path: str, what: str) -> None:
    """Raise ArchiveError when ``path`` (posix, relative) is in more than MAX_DEPTH folders."""
    depth = path.count("/")
    if depth > MAX_DEPTH:
        shown = path if len(path) <= 80 else path[:60] + "…" + path[-19:]
        raise ArchiveError(f"{what} {shown!r} is {depth:,} folders deep; at most {MAX_DEPTH} "
                           "are read (a dump folder is flat)")


def kind(path_or_bytes: str | bytes) -> str:
    """'zip', 'tar' or '' for something that is not an archive we read."""
    if isinstance(path_or_bytes, bytes):
        head = path_or_bytes[:512]
        if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
            return "zip"
        try:
            with tarfile.open(fileobj=io.BytesIO(path_or_bytes), mode="r:*"):
                return "tar"
        except (tarfile.TarError, EOFError, OSError, ValueError):
            return ""
    if zipfile.is_zipfile(path_or_bytes):
        return "zip"
    try:
        return "tar" if tarfile.is_tarfile(path_or_bytes) else ""
    except (OSError, EOFError, tarfile.TarError, ValueError):
        return ""


def _open(src: str | bytes) -> BinaryIO | str:
    return io.BytesIO(src) if isinstance(src, bytes) else src


def zip_is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def too_many(label: str, limit: int) -> ArchiveError:
    return ArchiveError(f"{label}: holds more than {limit:,} files (HLOLENS_MAX_FILES, the most "
                        "one dump may hold); nothing was stored")


def check_zip(zf: zipfile.ZipFile, label: str, max_bytes: int,
              max_files: int | None = None) -> dict[str, zipfile.ZipInfo]:
    """Validate every member of an open zip; returns safe path -> ZipInfo for files."""
    out: dict[str, zipfile.ZipInfo] = {}
    total = packed = 0
    limit = settings().max_files if max_files is None else max_files
    for info in zf.infolist():
        try:
            path = member_path(info.filename)
        except ArchiveError as e:
            raise ArchiveError(f"{label}: {e}; nothing was extracted") from None
        if zip_is_link(info):
            raise ArchiveError(f"{label}: member {info.filename!r} is a symbolic link; "
                               "links are not accepted")
        if info.is_dir():
            continue
        if path in out:
            raise ArchiveError(f"{label}: member {info.filename!r} appears twice; "
                               "nothing was extracted")
        if len(out) >= limit:
            raise too_many(label, limit)
        total += info.file_size
        packed += info.compress_size
        if total > max_bytes:
            raise ArchiveError(f"{label}: unpacks to more than {max_bytes:,} bytes "
                               "(the upload size cap)")
        out[path] = info
    ratio = settings().max_ratio
    if total > RATIO_FLOOR and total > ratio * max(packed, 1):
        raise ArchiveError(f"{label}: unpacks to {total:,} bytes from {packed:,}, "
                           f"{total / max(packed, 1):,.0f} times its size (more than "
                           f"{ratio:,.0f}: HLOLENS_MAX_RATIO); nothing was extracted")
    return out


def extract(src: str | bytes, dest: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
            label: str = "archive", max_files: int | None = None) -> list[str]:
    """Unpack a zip or tar archive into the new folder ``dest``; returns the member paths.

    Raises ArchiveError (and removes ``dest``) for anything unsafe or over the caps: bytes
    and files (``max_files``, default ``settings().max_files``: a 695 KB tar of 100k empty
    members took 394 MB of disk, issue 33, item 6).
    """
    os.makedirs(dest, exist_ok=False)
    limit = settings().max_files if max_files is None else max_files
    try:
        k = kind(src)
        if k == "zip":
            return _extract_zip(src, dest, max_bytes, label, limit)
        if k == "tar":
            return _extract_tar(src, dest, max_bytes, label, limit)
        raise ArchiveError(f"{label}: not a .zip or .tar(.gz/.xz/.bz2) archive")
    except ArchiveError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError) as e:
        shutil.rmtree(dest, ignore_errors=True)
        raise ArchiveError(f"{label}: cannot read the archive ({e})") from None


class _Budget:
    """Bytes an archive may still unpack to: the upload cap and, for a tar (whose sizes
    are known only while reading), the compression-ratio cap."""

    def __init__(self, label: str, max_bytes: int, ratio_cap: int | None = None,
                 ratio: float = 0.0) -> None:
        self.label, self.left, self.max = label, max_bytes, max_bytes
        self.ratio_left, self.ratio = ratio_cap, ratio

    def copy(self, src: IO[bytes], target: str) -> None:
        with open(target, "xb") as out:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    return
                self.left -= len(chunk)
                if self.left < 0:
                    raise ArchiveError(f"{self.label}: unpacks to more than {self.max:,} bytes "
                                       "(the upload size cap)")
                if self.ratio_left is not None:
                    self.ratio_left -= len(chunk)
                    if self.ratio_left < 0:
                        raise ArchiveError(
                            f"{self.label}: unpacks to more than {self.ratio:,.0f} times its "
                            "size (HLOLENS_MAX_RATIO); nothing was extracted")
                out.write(chunk)


def _target(dest: str, path: str, label: str) -> str:
    target = os.path.join(dest, *path.split("/"))
    real_dest = os.path.realpath(dest)
    if not os.path.realpath(target).startswith(real_dest + os.sep):
        raise ArchiveError(f"{label}: member {path!r} points outside the archive")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    return target


def _extract_zip(src: str | bytes, dest: str, max_bytes: int, label: str,
                 max_files: int) -> list[str]:
    budget = _Budget(label, max_bytes)
    with zipfile.ZipFile(_open(src)) as zf:
        members = check_zip(zf, label, max_bytes, max_files)
        for path, info in members.items():
            with zf.open(info) as f:
                _copy_member(budget, f, dest, path, label)
    return list(members)


def _copy_member(budget: _Budget, src: IO[bytes], dest: str, path: str, label: str) -> None:
    """Unpack one member; a name the file system refuses (too long, ...) is said with the
    member's name, never the server's path."""
    try:
        budget.copy(src, _target(dest, path, label))
    except OSError as e:
        raise ArchiveError(f"{label}: member {path!r} cannot be unpacked here "
                           f"({e.strerror or type(e).__name__})") from None


def _extract_tar(src: str | bytes, dest: str, max_bytes: int, label: str,
                 max_files: int) -> list[str]:
    packed = len(src) if isinstance(src, bytes) else os.path.getsize(src)
    ratio = settings().max_ratio
    budget = _Budget(label, max_bytes, ratio_cap=max(RATIO_FLOOR, int(ratio * packed)),
                     ratio=ratio)
    paths = []
    fileobj = io.BytesIO(src) if isinstance(src, bytes) else None
    with tarfile.open(name=None if fileobj else src, fileobj=fileobj, mode="r:*") as tar:
        seen: set[str] = set()
        for m in tar:
            try:
                path = member_path(m.name)
            except ArchiveError as e:
                raise ArchiveError(f"{label}: {e}") from None
            if m.issym() or m.islnk():
                raise ArchiveError(f"{label}: member {m.name!r} is a link; links are not accepted")
            if m.isdir():
                continue
            if not m.isfile():
                raise ArchiveError(f"{label}: member {m.name!r} is not a regular file")
            if path in seen:               # the second copy would overwrite the first
                raise ArchiveError(f"{label}: member {m.name!r} appears twice")
            if len(seen) >= max_files:     # counted before it is written: a tar's count is
                raise too_many(label, max_files)   # known only while reading it
            seen.add(path)
            f = tar.extractfile(m)
            if f is None:
                continue
            _copy_member(budget, f, dest, path, label)
            paths.append(path)
    return paths


def single_top_folder(dest: str) -> str:
    """The folder that holds the dump: ``dest`` or its only subfolder (a zipped folder)."""
    entries = [e for e in os.listdir(dest) if not e.startswith("__MACOSX")]
    if len(entries) == 1 and os.path.isdir(os.path.join(dest, entries[0])):
        return os.path.join(dest, entries[0])
    return dest
