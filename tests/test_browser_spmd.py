"""A sharded program in a real browser (Playwright driving Debian's Chromium, headless):
the spmd_train sample's graph carries sharding badges, the Communication tab lists its 19
collectives, a click on a row selects the collective and the inspector draws its groups on
the mesh. Screenshots go to test-artifacts/."""

from __future__ import annotations

import pytest

from tests.support.pages import open_uploaded, shot, visible_text, wait_idle, wait_param
from tests.support.samples import sample_zip

pytestmark = [pytest.mark.browser]

BADGES = """() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .some(h => h.shadowRoot && [...h.shadowRoot.querySelectorAll('svg g.node text')]
      .some(t => t.textContent.startsWith('⇄ ')))"""


@pytest.fixture(scope="module")
def spmd_zip(tmp_path_factory) -> str:
    return sample_zip(tmp_path_factory, "spmd_train")


def test_communication_tab_and_the_mesh_in_the_inspector(server, new_page, spmd_zip,
                                                         artifacts_dir):
    page = new_page()
    open_uploaded(page, server, spmd_zip)
    page.wait_for_function(BADGES, timeout=60_000)      # ⇄ lines on the collectives
    page.get_by_role("tab", name="Communication").click()
    visible_text(page, "collectives (0 async)").wait_for(timeout=60_000)
    wait_idle(page)
    table = page.locator('[class*="st-key-comm"] [data-testid="stDataFrame"]').first
    table.scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-spmd-1-communication.png")
    for attempt in range(3):       # a loaded machine may still be drawing the table
        box = table.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)     # row 0's selection cell
        try:
            wait_param(page, "selected", "collective-permute", timeout=10)
            break
        except AssertionError:
            if attempt == 2:
                raise
    wait_idle(page)
    visible_text(page, "On the mesh").wait_for(timeout=30_000)
    visible_text(page, "rows: data · columns: model").wait_for(timeout=30_000)  # the mesh
    visible_text(page, "On the mesh").scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-spmd-2-mesh.png")
