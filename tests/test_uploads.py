"""Uploads against the server's memory and disk (issue 33, items 4 and 6): an upload reaches
the store through a file, never as a second copy in memory; what a dump takes on disk is
counted by blocks and inodes, and a dump of many tiny files is refused by the limit it is
over."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from compiler_bridge.dumps import Store, StoreError

from conftest import sample


def tar_with_tiny_members(folder: str, n: int, size: int) -> bytes:
    """A real sample dump, packed with ``n`` extra members of ``size`` bytes each (what the
    attack packed: 100k members in a 695 KB tar)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname="dump")
        body = b"x" * size
        for i in range(n):
            info = tarfile.TarInfo(f"dump/pad/{i:06d}")
            info.size = size
            tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def staged(data: str) -> list[str]:
    return [e for e in os.listdir(os.path.join(data, "tmp"))]


def test_tiny_files_count_by_the_blocks_they_take(tmp_path, monkeypatch):
    """2,000 one-byte members: 2 KB of bytes, 8 MB of disk (one 4 KB block each). The quota
    counted the bytes, so the dump went in under a 1 MB quota; it counts the blocks."""
    data = str(tmp_path / "data")
    blob = tar_with_tiny_members(sample("cond_switch"), 2000, 1)
    monkeypatch.setenv("HLOLENS_STORE_QUOTA", "1M")
    with pytest.raises(StoreError) as e:
        Store(data).add_archive(blob, "tiny.tar.gz")
    assert str(e.value).startswith("tiny.tar.gz: the store is full")
    assert "HLOLENS_STORE_QUOTA" in str(e.value) and "on disk" in str(e.value)
    assert Store(data).list() == [] and os.listdir(os.path.join(data, "dumps")) == []
    # under a quota that holds it, what it takes on disk is what the store counts
    monkeypatch.setenv("HLOLENS_STORE_QUOTA", "1G")
    store = Store(data)
    stored = store.add_archive(blob, "tiny.tar.gz")
    disk, inodes = store.used()
    assert stored.size < 1 << 20 and disk >= 2000 * 512         # blocks, not bytes
    assert inodes >= 2000 + stored.files - 2000
    folder = os.path.join(data, "dumps", stored.hash)
    real = sum(os.lstat(os.path.join(r, n)).st_blocks * 512
               for r, ds, fs in os.walk(folder) for n in ds + fs)
    assert disk == real


def test_empty_files_count_as_inodes(tmp_path, monkeypatch):
    """Empty members hold no block: the store's file quota (HLOLENS_STORE_FILES) counts
    them."""
    data = str(tmp_path / "data")
    blob = tar_with_tiny_members(sample("cond_switch"), 1000, 0)
    monkeypatch.setenv("HLOLENS_STORE_FILES", "500")
    with pytest.raises(StoreError) as e:
        Store(data).add_archive(blob, "empty.tar.gz")
    assert "HLOLENS_STORE_FILES" in str(e.value) and "500" in str(e.value)
    assert Store(data).list() == []
    monkeypatch.setenv("HLOLENS_STORE_FILES", "5000")
    assert Store(data).add_archive(blob, "empty.tar.gz").files > 1000


def test_an_archive_of_too_many_files_stops_unpacking(tmp_path, monkeypatch):
    """HLOLENS_MAX_FILES: the most files one dump may hold, counted while a tar unpacks
    (its count is known only then), before the store writes the next one."""
    data = str(tmp_path / "data")
    monkeypatch.setenv("HLOLENS_MAX_FILES", "300")
    store = Store(data)
    for blob, name in ((tar_with_tiny_members(sample("cond_switch"), 1000, 0), "many.tar.gz"),):
        with pytest.raises(StoreError) as e:
            store.add_archive(blob, name)
        assert str(e.value).startswith(f"{name}: holds more than 300 files (HLOLENS_MAX_FILES")
    files = [(f"pad/{i}", b"") for i in range(301)]
    with pytest.raises(StoreError, match="HLOLENS_MAX_FILES"):
        store.add_files(files, "many files")
    assert store.list() == [] and staged(data) == []


def test_an_upload_reaches_the_store_as_a_file_and_its_memory_is_released(
        tmp_path, tmp_path_factory, monkeypatch):
    """The page handed the store ``getvalue()`` (a whole copy in memory) and kept Streamlit's
    copy for the session after storing it. Now the archive is unpacked from a file in the
    staging folder, and the uploaded file is removed from Streamlit's manager."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.testing.v1 import AppTest

    from compiler_bridge.dumps import archive
    from tests.support.apptest import APP, query, uploader
    from tests.support.samples import sample_zip

    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    unpacked, removed = [], []
    real_extract, real_remove = archive.extract, MemoryUploadedFileManager.remove_file
    monkeypatch.setattr(archive, "extract", lambda src, *a, **k: (
        unpacked.append((src, os.path.getsize(src) if isinstance(src, str) else None)),
        real_extract(src, *a, **k))[1])
    monkeypatch.setattr(MemoryUploadedFileManager, "remove_file", lambda self, sid, fid: (
        removed.append(fid), real_remove(self, sid, fid))[1])
    with open(sample_zip(tmp_path_factory, "cond_switch"), "rb") as f:
        data = f.read()
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    widget = uploader(at, "upload-files")
    widget.upload("cond_switch.zip", data).run()
    assert not at.exception and not at.error
    assert query(at).get("dump")                              # stored and opened
    (src, size), = unpacked
    assert isinstance(src, str) and size == len(data)       # a file, not the bytes
    assert len(removed) == 1                                  # Streamlit's copy dropped


def test_a_second_upload_at_once_waits_for_the_first(tmp_path, tmp_path_factory, monkeypatch):
    """One upload is stored at a time (each unpacks to disk and hashes); one that waits past
    the limit is told the server is busy, and its memory is released all the same."""
    from streamlit.testing.v1 import AppTest

    from tests.support.apptest import APP, query, uploader
    from tests.support.samples import sample_zip
    from ui import opening

    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    monkeypatch.setattr(opening, "WAIT_SECONDS", 0.5)
    with open(sample_zip(tmp_path_factory, "cond_switch"), "rb") as f:
        data = f.read()
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert opening.STORING.acquire(timeout=5)          # another upload is being stored
    try:
        uploader(at, "upload-files").upload("cond_switch.zip", data).run()
    finally:
        opening.STORING.release()
    assert not at.exception
    assert any("busy storing other uploads" in e.value for e in at.error)
    assert "dump" not in query(at)
    uploader(at, "upload-files").upload("cond_switch.zip", data).run()
    assert not at.exception and query(at).get("dump")
