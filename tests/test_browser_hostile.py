"""Hostile input against a running server, in Chromium (issue 17): while a visitor sends a
catastrophic regex, a 1 MB op_name or a link with markdown in it, the server's health
endpoint keeps answering (one visitor must not freeze it for all), the page says what
happened, and nothing is fetched from outside.
"""

from __future__ import annotations

import glob
import os
import shutil
import time
import urllib.parse
import zipfile

import pytest
from conftest import missing
from hostile_inputs import PAYLOAD, deep_op_name_dump

from tests.support.browser import CHROMIUM, GRAPH_DRAWN, HealthProbe
from tests.support.fixtures import app_server
from tests.support.pages import open_uploaded, shot, wait_idle

pytestmark = [pytest.mark.browser]

# A frozen server answers nothing until the hostile work ends (the probe counts that as
# 5 s); a busy one answers late. On CI's two loaded cores a health answer took 1.2 s while a
# page drew, so the line sits between the two, not at the 1 s a quiet machine gives.
FROZEN_S = 3.0
if not os.path.exists(CHROMIUM):
    missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it",
            module_level=True)


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    with app_server(tmp_path_factory.mktemp("hlolens-data")) as url:
        probe = HealthProbe(url)
        yield url, probe
        probe.stop()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.outside = []
    page.on("request", lambda r: page.outside.append(r.url) if not r.url.startswith(
        ("http://127.0.0.1", "data:", "blob:", "about:")) else None)
    yield page
    ctx.close()


def zipped(folder: str, tmp_path) -> str:
    out = tmp_path / (os.path.basename(folder)[:40] + ".zip")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for root, _, files in os.walk(folder):
            for fn in files:
                full = os.path.join(root, fn)
                z.write(full, os.path.join("dump", os.path.relpath(full, folder)))
    return str(out)


def test_a_catastrophic_regex_does_not_freeze_the_server(probed, page, tmp_path,
                                                          artifacts_dir):
    url, probe = probed
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(__file__)), "sample_dumps",
                                 "transformer"), tmp_path / "transformer")
    open_uploaded(page, url, zipped(str(tmp_path / "transformer"), tmp_path))
    probe.reset()
    page.get_by_text("regex", exact=True).click()
    wait_idle(page)
    box = page.get_by_placeholder("name, opcode, op_name, shape or source")
    box.fill(r"(\w+\W?)+#")
    box.press("Enter")
    # no text of the transformer's has a '#', so nothing can match: the page says so, and
    # RE2 (linear in the text) searched it all within its budget
    assert "#" not in "".join(open(p).read() for p in glob.glob(
        str(tmp_path / "transformer" / "*after_optimizations.txt")))
    page.get_by_text("No instruction matches", exact=False).first.wait_for()
    wait_idle(page)
    assert page.get_by_text("Search stopped", exact=False).count() == 0
    shot(page, artifacts_dir, "hostile-regex.png")
    time.sleep(1)
    assert probe.asked >= 3
    assert probe.worst < FROZEN_S, f"health answered in {probe.worst:.2f} s"


def test_a_megabyte_op_name_draws_and_the_server_keeps_answering(probed, page, tmp_path,
                                                                  artifacts_dir):
    url, probe = probed
    folder = deep_op_name_dump(str(tmp_path))
    probe.reset()
    open_uploaded(page, url, zipped(folder, tmp_path))
    page.wait_for_function(GRAPH_DRAWN)
    shot(page, artifacts_dir, "hostile-deep-op-name.png")
    assert probe.asked >= 3
    assert probe.worst < FROZEN_S, f"health answered in {probe.worst:.2f} s"


def test_a_link_with_markdown_fetches_nothing_and_draws_no_link(probed, page, tmp_path,
                                                                artifacts_dir):
    url, probe = probed
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(__file__)), "sample_dumps",
                                 "cond_switch"), tmp_path / "cond_switch")
    got = open_uploaded(page, url, zipped(str(tmp_path / "cond_switch"), tmp_path))
    probe.reset()
    query = urllib.parse.urlencode({"dump": got["dump"], "focus": PAYLOAD,
                                    "selected": PAYLOAD, "computation": PAYLOAD})
    page.goto(f"{url}?{query}")
    page.wait_for_function(GRAPH_DRAWN)
    wait_idle(page)
    shot(page, artifacts_dir, "hostile-markdown-link.png")
    # no link at all to the payload's address: neither its markdown links nor GitHub
    # markdown's links made of a bare http://… in the text
    links = page.evaluate("""() => [...document.querySelectorAll('a[href*="evil"]:not([href^="#"])')]
        .map(a => a.outerHTML + ' IN ' + a.parentElement.outerHTML.slice(0, 300))""")
    assert not links, "\n".join(links)
    assert page.locator("a", has_text="evil").count() == 0
    assert page.locator('img[src*="evil.example"]').count() == 0
    assert not [u for u in page.outside if "evil.example" in u]
    assert probe.worst < FROZEN_S, f"health answered in {probe.worst:.2f} s"
