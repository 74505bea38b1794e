"""The first page of a dump in a fresh browser (issue 32, item 16): the code of every widget
the page draws was asked for by the page itself (``ui.index_page``'s preloads, from its first
byte), none fetched by Streamlit's code once the script's elements arrived, and the graph is
drawn.

Screenshot: test-artifacts/browser-page-open.png.
"""

from __future__ import annotations

import os
import re

import pytest
from conftest import missing, sample

from tests.support.browser import CHROMIUM, GRAPH_DRAWN, IDLE
from tests.support.fixtures import app_server
from tests.support.pages import shot
from ui import index_page

pytestmark = [pytest.mark.browser]
if not os.path.exists(CHROMIUM):
    missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it",
            module_level=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with app_server(tmp_path_factory.mktemp("hlolens-page-open"),
                    env={"HLOLENS_DUMP": sample("transformer")}) as url:
        yield url


def test_a_first_page_fetches_no_widget_code_after_it_started(served, new_page, artifacts_dir):
    page = new_page()
    page.goto(served)
    page.wait_for_function(GRAPH_DRAWN, timeout=120_000)
    page.wait_for_function(IDLE, timeout=60_000)
    shot(page, artifacts_dir, "browser-page-open.png")
    with open(os.path.join(index_page.static_dir(), "index.html"), encoding="utf-8") as f:
        entry = re.search(r'<script type="module" crossorigin src="\./(static/js/[^"]+)"',
                          f.read())
    assert entry is not None
    fetched = page.evaluate("""() => performance.getEntriesByType('resource').map(e =>
        [new URL(e.name).pathname, e.initiatorType])""")
    code = [path for path, _ in fetched if path.startswith("/static/js/")]
    by_script = [path for path, kind in fetched
                 if path.startswith("/static/js/") and kind == "script"]
    # the widgets' code is there (the component's, the select box's), none of it imported
    # late: only Streamlit's entry is asked for by a script tag
    assert len(code) > 100
    assert any("/BidiComponent." in p for p in code) and any("/Selectbox." in p for p in code)
    assert by_script == ["/" + entry.group(1)], by_script
