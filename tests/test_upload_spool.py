"""Uploads spooled to disk as they arrive (issue 33, item 4): Streamlit's own upload route,
wrapped as ``python -m ui.serve`` wraps it, driven over HTTP in process (Starlette's test
client); a real dump zip goes through it."""

from __future__ import annotations

import io
import os
import zipfile

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit import config
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFile
from streamlit.web.server.starlette import starlette_app, starlette_routes

from tests.support.samples import sample
from ui import upload_spool

SESSION, FILE_ID = "session-1", "file-1"


class _Runtime:
    def is_active_session(self, session_id: str) -> bool:
        return session_id == SESSION


def _zip_of(folder: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel in _files(folder):
            z.write(os.path.join(folder, rel), f"dump/{rel}")
    return buf.getvalue()


def _files(folder: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, n), folder)
                  for d, _, names in os.walk(folder) for n in names)


@pytest.fixture
def server(monkeypatch, tmp_path):
    """Streamlit's upload routes as its server builds them, after ``install``; XSRF off
    unless a test turns it on. Returns (client, the file manager)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(upload_spool, "_folder", None)
    monkeypatch.setattr(upload_spool, "_spooled", {})
    monkeypatch.setattr(starlette_app, "create_upload_routes",
                        starlette_routes.create_upload_routes)
    upload_spool.install()
    config.set_option("server.enableXsrfProtection", False)
    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    routes = starlette_app.create_upload_routes(_Runtime(), mgr, None)
    yield TestClient(Starlette(routes=routes)), mgr
    config.set_option("server.enableXsrfProtection", True)


def _put(client, data: bytes, name: str = "dump.zip", session: str = SESSION):
    return client.put(f"/_stcore/upload_file/{session}/{FILE_ID}",
                      files={"file": (name, data, "application/zip")})


def test_an_uploaded_zip_is_on_disk_and_streamlit_holds_a_token(server):
    client, mgr = server
    data = _zip_of(sample("transformer"))
    r = _put(client, data)
    assert r.status_code == 204, r.text
    [rec] = mgr.get_files(SESSION, [FILE_ID])
    # Streamlit's record: the token, not the 100s of KB (before: the whole file, issue 33)
    assert len(rec.data) < 100 and rec.data.startswith(upload_spool.MAGIC)
    assert rec.name == "dump.zip"
    f = UploadedFile(rec, None)  # type: ignore[arg-type]
    assert upload_spool.size(f) == len(data)
    src = upload_spool.source(f)
    try:
        assert src.read() == data
    finally:
        src.close()
    # the page stores it, then drops it: Streamlit's remove removes the spool file too
    [path] = [s.path for s in upload_spool._spooled.values()]
    mgr.remove_file(SESSION, FILE_ID)
    assert not os.path.exists(path) and upload_spool.spooled_count() == 0


def test_a_spooled_upload_is_stored_as_the_dump(server, tmp_path):
    from compiler_bridge.dumps import Store
    client, mgr = server
    assert _put(client, _zip_of(sample("cond_switch"))).status_code == 204
    f = UploadedFile(mgr.get_files(SESSION, [FILE_ID])[0], None)  # type: ignore[arg-type]
    src = upload_spool.source(f)
    try:
        stored = Store(str(tmp_path / "store")).add_upload(src, f.name, "dump.zip")
    finally:
        src.close()
    assert _files(os.path.join(str(tmp_path / "store"), "dumps", stored.hash)) == \
        _files(sample("cond_switch"))


def test_a_session_that_ends_leaves_no_spool_file(server):
    client, mgr = server
    assert _put(client, b"x" * 300_000, name="a.txt").status_code == 204
    [path] = [s.path for s in upload_spool._spooled.values()]
    assert os.path.getsize(path) == 300_000
    mgr.remove_session_files(SESSION)
    assert not os.path.exists(path)


def test_a_file_that_looks_like_a_token_is_read_as_its_bytes(server):
    """Only the server knows a token: an upload of bytes shaped like one is just bytes."""
    client, mgr = server
    fake = upload_spool.MAGIC + b"0" * 48
    assert _put(client, fake, name="fake.bin").status_code == 204
    f = UploadedFile(mgr.get_files(SESSION, [FILE_ID])[0], None)  # type: ignore[arg-type]
    real = [s for s in upload_spool._spooled.values()]
    assert len(real) == 1 and upload_spool.read(f) == fake


def test_refused_uploads_write_nothing(server, tmp_path):
    """XSRF, a dead session, a body over the cap: refused before (or while) the body is
    read, nothing kept on disk."""
    client, mgr = server
    assert _put(client, b"abc", session="nobody").status_code == 400
    config.set_option("server.enableXsrfProtection", True)
    assert _put(client, b"abc").status_code == 403
    config.set_option("server.enableXsrfProtection", False)
    config.set_option("server.maxUploadSize", 1)           # MB
    try:
        assert _put(client, b"y" * (3 * 1024 * 1024)).status_code == 413
    finally:
        config.set_option("server.maxUploadSize", 2048)
    assert upload_spool.spooled_count() == 0 and mgr.get_files(SESSION, [FILE_ID]) == []
    spools = [d for d in os.listdir(tmp_path) if d.startswith("hlolens-uploads-")]
    assert all(os.listdir(tmp_path / d) == [] for d in spools)
