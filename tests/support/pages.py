"""What the browser tests do on a page of the app (Playwright): read the URL's parameters,
wait for Streamlit to settle, find a node or a text, upload and open a dump, pick a stage,
take a screenshot."""

from __future__ import annotations

import os
import time
import urllib.parse

from tests.support.browser import GRAPH_DRAWN, IDLE

def href(page) -> str:
    return page.evaluate("location.href")


def params(page) -> dict[str, str]:
    q = urllib.parse.urlparse(href(page)).query
    return {k: v[-1] for k, v in urllib.parse.parse_qs(q).items()}


def wait_param(page, key: str, value: str | None = None, timeout: float = 20) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = params(page)
        if key in got and (value is None or got[key] == value):
            return got
        time.sleep(0.05)
    raise AssertionError(f"URL never had {key}={value}: {href(page)}")


def wait_idle(page) -> None:
    """Until Streamlit finished the current run."""
    page.wait_for_function(
        IDLE, timeout=30_000)


VISIBLE_NODES = """() => {
  const host = [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .find(h => h.shadowRoot && h.shadowRoot.querySelector('.hl-stage svg'));
  if (!host) return [];
  const stage = host.shadowRoot.querySelector('.hl-stage').getBoundingClientRect();
  const mini = host.shadowRoot.querySelector('.hl-mini:not([hidden])');
  const m = mini ? mini.getBoundingClientRect() : null;      // the minimap covers its corner
  return [...host.shadowRoot.querySelectorAll('g.node')].filter(g => {
    const r = g.getBoundingClientRect();
    return r.left >= stage.left && r.right <= stage.right && r.top >= stage.top
      && r.bottom <= stage.bottom && r.width > 8 && !(m && r.right > m.left
      && r.left < m.right && r.bottom > m.top && r.top < m.bottom);
  }).map(g => g.id);
}"""


def visible_nodes(page) -> list[str]:
    """Ids of the graph's nodes drawn whole inside the graph's frame."""
    return page.evaluate(VISIBLE_NODES)


def visible_text(page, text: str):
    return page.get_by_text(text).filter(visible=True).first


def svg_node(page, element_id: str):
    return page.locator(f'[id="{element_id}"]')


def show_whole(page) -> None:
    """The graph's "fit" button: the whole graph in the frame, as before a click on a node
    the default view (a readable part of a big graph) may not show."""
    page.get_by_title("Fit the whole graph").click()
    page.wait_for_function("""() => [...document.querySelectorAll(
        '[data-testid=stBidiComponentIsolated]')].some(h => h.shadowRoot &&
        h.shadowRoot.querySelector('.hl-stage svg') && h.shadowRoot.querySelector('.hl-mini').hidden)""")


def open_sidebar_expander(page, label: str) -> None:
    """Open the sidebar's expander ``label`` unless it is open (a click on an open one
    would close it); those that fill only when opened draw their widgets after a run."""
    box = page.locator('section[data-testid="stSidebar"] [data-testid="stExpander"]').filter(
        has=page.locator("summary", has_text=label)).first
    box.wait_for()
    if box.locator("details").get_attribute("open") is None:
        box.locator("summary").click()


def upload(page, path: str) -> None:
    sidebar = page.locator('section[data-testid="stSidebar"]')
    open_sidebar_expander(page, "Open a dump")
    sidebar.locator('input[type="file"]').first.set_input_files(path)


def open_uploaded(page, server: str, path: str, timeout: float = 60_000) -> dict[str, str]:
    """Open the app, upload ``path``, wait (``timeout`` ms) for the graph and a settled run:
    the URL's parameters (the dump's share id among them)."""
    page.goto(server)
    page.get_by_text("See what XLA did to your program").wait_for()
    upload(page, path)
    page.wait_for_function(GRAPH_DRAWN, timeout=timeout)
    params = wait_param(page, "dump")
    wait_idle(page)
    return params


def shot(page, artifacts_dir: str, name: str) -> None:
    page.screenshot(path=os.path.join(artifacts_dir, name))


def button(page, key: str):
    """The button of a keyed st.button (Streamlit also renders a hidden copy)."""
    return page.locator(f".st-key-{key} button").filter(visible=True).first


_ONLY_MATCHES = """t => { const o = [...document.querySelectorAll('[role="option"]')];
    return o.length > 0 && o.every(e => e.textContent.toLowerCase().includes(t)); }"""


def pick_stage(page, typed: str, option: str) -> None:
    """Choose a stage in the sidebar's stage picker by typing part of its label. A rerun
    that lands while the keys arrive re-renders the picker and drops what was typed (seen
    on loaded 2-core runs): the picker is opened and typed into again, up to 3 times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    seen = []
    for _ in range(3):
        page.locator(".st-key-pick-stage").click()
        page.keyboard.type(typed)
        # the list filters as keys arrive: click only once it holds nothing but matches, or
        # a re-render can move another option under the pointer
        try:
            page.wait_for_function(_ONLY_MATCHES, arg=typed.lower(), timeout=10_000)
        except PlaywrightTimeout:
            seen.append(page.evaluate(
                "() => [...document.querySelectorAll('[role=\"option\"]')]"
                ".map(e => e.textContent)"))
            page.keyboard.press("Escape")
            wait_idle(page)
            continue
        page.get_by_role("option").filter(has_text=option).first.click()
        return
    raise AssertionError(f"the stage picker never listed only {typed!r}; options seen: {seen}")


def select_value(page, key: str) -> str:
    """What a keyed selectbox shows (its text, or its search input's value). A combobox's
    value is set just after it is drawn, and a redrawn one keeps a stale copy until the new
    one is in: the live copy is read, once it shows something (up to 10 s)."""
    read = f"""() => [...document.querySelectorAll('.st-key-{key}[data-stale=false]')]
        .map(b => b.innerText + ' ' + [...b.querySelectorAll('input')].map(i => i.value)
        .join(' ')).join(' ')"""
    try:
        page.wait_for_function(f"() => ({read})().trim().length > 0", timeout=10_000)
    except Exception:              # nothing shown: the caller's assertion says so
        pass
    return page.evaluate(read)


def stage_value(page) -> str:
    return select_value(page, "pick-stage")
