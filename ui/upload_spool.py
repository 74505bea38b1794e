"""Uploads written to disk as they arrive, never held whole in the server's memory.

Streamlit's upload route reads each uploaded file whole into memory and keeps it there for
the widget (a 1.88 GB zip took the server to 3.95 GB, two at once to 6.5 GB; issue 33,
item 4). :func:`install` (run by ``ui.serve``, the launcher ``make run`` uses, before the
server starts) wraps that route: the request body streams through a multipart parser into a
file of a spool folder, 64 KiB at a time, and Streamlit's own handler then records a small
reference (a random token) in place of the bytes. :func:`source` and :func:`size` give the
pages the file back; :func:`discard` deletes it once stored. The spool folder is under the
system's temp folder (``TMPDIR``), one per server process, removed at exit.

Under plain ``streamlit run app.py`` (and AppTest) nothing is installed: uploads are the
bytes Streamlit holds, and the same functions read them."""

from __future__ import annotations

import atexit
import io
import logging
import os
import secrets
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import IO, Any

log = logging.getLogger(__name__)

# what Streamlit holds in place of a spooled file's bytes: this prefix and a token only the
# server knows (a file whose bytes merely look like it is read as its bytes)
MAGIC = b"hlolens-spooled-upload:"
_TOKEN_BYTES = 24


@dataclass(frozen=True)
class Spooled:
    path: str
    session_id: str
    file_id: str


_lock = threading.Lock()
_spooled: dict[bytes, Spooled] = {}
_folder: str | None = None


def _spool_folder() -> str:
    global _folder
    with _lock:
        if _folder is None:
            _folder = tempfile.mkdtemp(prefix="hlolens-uploads-")
            atexit.register(shutil.rmtree, _folder, True)
        return _folder


def _spooled_of(f: Any) -> Spooled | None:
    """The spooled file an uploaded file stands for, or None (bytes held in memory)."""
    if not _spooled or getattr(f, "size", 0) != len(MAGIC) + 2 * _TOKEN_BYTES:
        return None
    data = f.getvalue()
    if not data.startswith(MAGIC):
        return None
    with _lock:
        return _spooled.get(data[len(MAGIC):])


def source(f: Any) -> IO[bytes]:
    """What to read an uploaded file from: its spool file (the caller closes it) or the
    uploaded file itself, rewound."""
    spooled = _spooled_of(f)
    if spooled is not None:
        return open(spooled.path, "rb")
    f.seek(0)
    return f


def size(f: Any) -> int:
    """An uploaded file's size in bytes."""
    spooled = _spooled_of(f)
    return os.path.getsize(spooled.path) if spooled is not None else int(f.size)


def read(f: Any) -> bytes:
    """An uploaded file's bytes (for small files such as traces that are read whole)."""
    src = source(f)
    try:
        return src.read()
    finally:
        if src is not f:
            src.close()


def discard(session_id: str, file_id: str | None = None) -> None:
    """Delete the spool files of one upload (``file_id``) or of a whole session."""
    with _lock:
        gone = [t for t, s in _spooled.items()
                if s.session_id == session_id and file_id in (None, s.file_id)]
        paths = [_spooled.pop(t).path for t in gone]
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def spooled_count() -> int:
    """How many uploads are on disk waiting for their page (for tests and logs)."""
    with _lock:
        return len(_spooled)


def install() -> None:
    """Wrap Streamlit's upload route before its server starts (idempotent)."""
    from streamlit.web.server.starlette import starlette_app

    make = starlette_app.create_upload_routes
    if getattr(make, "hlolens_spool", False):
        return

    def create_upload_routes(runtime: Any, upload_mgr: Any, base_url: str | None) -> list:
        routes = make(runtime, upload_mgr, base_url)
        _free_spools_with(upload_mgr)
        return [_spooling(r, runtime) if "PUT" in (getattr(r, "methods", None) or ()) else r
                for r in routes]

    create_upload_routes.hlolens_spool = True  # type: ignore[attr-defined]
    starlette_app.create_upload_routes = create_upload_routes


def _free_spools_with(upload_mgr: Any) -> None:
    """A spool file goes when Streamlit drops the upload (the widget is cleared, the
    session ends), as its bytes would."""
    remove_file, remove_session = upload_mgr.remove_file, upload_mgr.remove_session_files

    def remove_file_too(session_id: str, file_id: str) -> None:
        remove_file(session_id, file_id)
        discard(session_id, file_id)

    def remove_session_too(session_id: str) -> None:
        remove_session(session_id)
        discard(session_id)

    upload_mgr.remove_file = remove_file_too
    upload_mgr.remove_session_files = remove_session_too


class _Refused(Exception):
    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


def _spooling(route: Any, runtime: Any) -> Any:
    """The PUT route, its body written to a spool file first; Streamlit's handler then
    gets a body holding the token in place of the file's bytes."""
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    original = route.endpoint

    async def put(request: Request) -> Any:
        try:
            _check_before_reading(request, runtime)
            body, headers = await _spool_body(request)
        except _Refused as e:
            return PlainTextResponse(e.detail, status_code=e.status)
        scope = dict(request.scope)
        scope["headers"] = headers
        sent = False

        async def receive() -> dict:
            nonlocal sent
            if sent:
                return {"type": "http.request", "body": b"", "more_body": False}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await original(Request(scope, receive))

    return Route(route.path, put, methods=["PUT"], name=route.name)


def _check_before_reading(request: Any, runtime: Any) -> None:
    """What Streamlit's handler checks before it reads a body, checked before this one
    writes anything to disk: the XSRF token, a live session, the size cap."""
    from streamlit import config
    from streamlit.web.server.starlette import starlette_routes as routes

    if routes.is_xsrf_enabled() and not routes.validate_xsrf_token(
            request.headers.get("X-Xsrftoken"), request.cookies.get(routes.XSRF_COOKIE_NAME)):
        raise _Refused(403, "XSRF token missing or invalid")
    if not runtime.is_active_session(request.path_params["session_id"]):
        raise _Refused(400, "Invalid session_id")
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > _cap(config):
        raise _Refused(413, "File too large")


def _cap(config: Any) -> int:
    # Streamlit's per-file cap and the framing margin it allows a multipart body
    return int(config.get_option("server.maxUploadSize")) * 1024 * 1024 + 1024 * 1024


async def _spool_body(request: Any) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """Stream the multipart body's one file into the spool; returns the body that stands
    for it (the file's part headers as sent, the token as its bytes) and the headers."""
    from python_multipart.multipart import MultipartParser, parse_options_header
    from streamlit import config

    kind, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise _Refused(400, "Expected a multipart/form-data body")
    cap = _cap(config)
    token = secrets.token_hex(_TOKEN_BYTES).encode()
    path = os.path.join(_spool_folder(), token.decode())
    parts: list[list[tuple[bytes, bytes]]] = []
    field, value = bytearray(), bytearray()
    out = open(path, "wb")

    def on_part_begin() -> None:
        parts.append([])

    def on_header_field(data: bytes, start: int, end: int) -> None:
        field.extend(data[start:end])

    def on_header_value(data: bytes, start: int, end: int) -> None:
        value.extend(data[start:end])

    def on_header_end() -> None:
        parts[-1].append((bytes(field), bytes(value)))
        field.clear()
        value.clear()

    def on_part_data(data: bytes, start: int, end: int) -> None:
        if len(parts) == 1:
            out.write(data[start:end])

    parser = MultipartParser(boundary, {
        "on_part_begin": on_part_begin, "on_header_field": on_header_field,
        "on_header_value": on_header_value, "on_header_end": on_header_end,
        "on_part_data": on_part_data})
    received = 0
    try:
        try:
            async for chunk in request.stream():
                received += len(chunk)
                if received > cap:
                    raise _Refused(413, "File too large")
                parser.write(chunk)
            parser.finalize()
        finally:
            out.close()
        if len(parts) != 1:
            raise _Refused(400, f"Expected 1 file, but got {len(parts)}")
    except _Refused:
        os.remove(path)
        raise
    except Exception as e:                      # a malformed body: the client's error
        os.remove(path)
        log.warning("upload refused: %s", e)
        raise _Refused(400, "Malformed multipart body") from None
    with _lock:
        _spooled[token] = Spooled(path, request.path_params["session_id"],
                                  request.path_params["file_id"])
    marker = MAGIC + token
    body = io.BytesIO()
    body.write(b"--" + boundary + b"\r\n")
    for name, val in parts[0]:
        body.write(name + b": " + val + b"\r\n")
    body.write(b"\r\n" + marker + b"\r\n--" + boundary + b"--\r\n")
    data = body.getvalue()
    headers = [(k, v) for k, v in request.scope["headers"] if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(data)).encode()))
    return data, headers
