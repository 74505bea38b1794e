"""The browser tests' fixtures (a pytest plugin, named in ``tests/conftest.py``): an app
server on a temporary store watched by a health probe (``server``), a Chromium per module
(``browser``) and its pages (``new_page``), whose timings the tests add to ``TIMINGS``."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

import pytest

from tests.support.browser import HealthProbe, chromium, start_app, stop_app
from tests.support.samples import ROOT

TIMINGS: dict[str, float] = {}


@contextmanager
def app_server(data, *, env: dict | None = None, port: int | None = None,
               options: tuple[str, ...] = (), keep_log: str = ""):
    """An app server (``streamlit run app.py``) on the store folder ``data``, started
    without --dump; yields its URL and stops it after. A server that does not start
    fails the test with the end of its log."""
    full = dict(os.environ, HLOLENS_DATA=str(data))
    full.pop("HLOLENS_DUMP", None)
    full.update(env or {})
    log_path = os.path.join(str(data), "server.log")
    log = open(log_path, "wb")  # noqa: SIM115 - open while the server runs
    try:
        proc, url = start_app(full, log, timeout=60, port=port, options=options)
    except RuntimeError as e:
        log.close()
        pytest.fail(f"{e}:\n" + open(log_path, encoding="utf-8", errors="replace").read()[-3000:])
    try:
        yield url
    finally:
        stop_app(proc)
        log.close()
        if keep_log and os.environ.get("HLOLENS_KEEP_LOG"):
            import shutil
            shutil.copy(log_path, os.path.join(ROOT, "test-artifacts", keep_log))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with app_server(tmp_path_factory.mktemp("hlolens-data"), keep_log="server.log") as url:
        probe = HealthProbe(url)            # one visitor never freezes it for the others
        yield url
        probe.stop()
    with open(os.path.join(ROOT, "test-artifacts", "health.json"), "w") as f:
        json.dump({"asked": probe.asked, "worst_s": round(probe.worst, 3)}, f)


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def new_page(browser, artifacts_dir):
    contexts = []

    def make():
        ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(30_000)
        outside = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(
            ("http://127.0.0.1", "data:", "blob:", "about:")) else None)
        page.outside_requests = outside
        received = [0]

        def on_ws(ws):
            ws.on("framereceived", lambda payload: received.__setitem__(
                0, received[0] + len(payload)))
        page.on("websocket", on_ws)
        page.ws_bytes = received
        return page

    yield make
    for ctx in contexts:
        ctx.close()
    with open(os.path.join(artifacts_dir, "browser-timings.json"), "w") as f:
        json.dump(TIMINGS, f, indent=2)
