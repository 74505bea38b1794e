"""Opening single artefacts in a real browser (issue 18): a single .hlo file and a .mlir
file dropped on the upload widget, a dump's own module.mlir picked as its StableHLO stage,
HLO text pasted on the welcome page (its link opened in a fresh browser), and the link
``hlolens.show`` prints.

Screenshots go to test-artifacts/browser-open-*.png.
"""

from __future__ import annotations

import glob
import os
import urllib.parse

import pytest
from conftest import PEER, ROOT, missing

from tests.support.browser import CHROMIUM, GRAPH_DRAWN, IDLE
from tests.support.fixtures import app_server
from tests.support.pages import open_sidebar_expander, shot

pytestmark = [pytest.mark.browser]
if not os.path.exists(CHROMIUM):
    missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it",
            module_level=True)


# a file dropped the way a browser delivers it: a DataTransfer on a drop event
DROP = """([dropzone, name, text]) => {
  const dt = new DataTransfer();
  dt.items.add(new File([text], name, {type: 'text/plain'}));
  for (const kind of ['dragenter', 'dragover', 'drop']) {
    dropzone.dispatchEvent(new DragEvent(kind, {bubbles: true, cancelable: true,
                                                dataTransfer: dt}));
  }
}"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("hlolens-open-data")
    with app_server(data) as url:
        yield url, str(data)


@pytest.fixture
def new_page(browser):
    contexts = []

    def make():
        ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        return page
    yield make
    for ctx in contexts:
        ctx.close()


def wait_idle(page) -> None:
    page.wait_for_function(
        IDLE, timeout=60_000)


def drop(page, name: str, text: str) -> None:
    sidebar = page.locator('section[data-testid="stSidebar"]')
    open_sidebar_expander(page, "Open a dump")
    zone = sidebar.locator('[data-testid="stFileUploaderDropzone"]').first
    zone.evaluate(DROP.replace("([dropzone, name, text])", "(dropzone, [name, text])"),
                  [name, text])


def params(page) -> dict[str, str]:
    q = urllib.parse.urlparse(page.url).query
    return {k: v[-1] for k, v in urllib.parse.parse_qs(q).items()}


def header(page) -> str:
    return page.locator("h3").first.inner_text()


def _peer(prefix: str) -> str:
    hits = sorted(glob.glob(os.path.join(PEER, prefix + "*.hlo")))
    if not hits:
        missing(f"the peer corpus ({PEER}) is not available")
    return hits[0]


def test_drop_a_single_hlo_file(served, new_page, artifacts_dir):
    url, _ = served
    path = _peer("0004_")
    page = new_page()
    page.goto(url)
    page.get_by_text("See what XLA did to your program").wait_for()
    drop(page, os.path.basename(path), open(path, encoding="utf-8").read())
    page.wait_for_function(GRAPH_DRAWN, timeout=90_000)
    wait_idle(page)
    assert "dump=" in page.url
    from compiler_bridge import parse_hlo
    name = parse_hlo(open(path, encoding="utf-8").read(), path).name
    assert name in header(page) and "after optimizations" in header(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, artifacts_dir, "browser-open-1-dropped-hlo.png")


def test_drop_a_mlir_file_and_compile_it_for_cpu(served, new_page, artifacts_dir):
    url, _ = served
    path = os.path.join(ROOT, "sample_dumps", "scan_while", "module_0000.jit_step",
                        "module.mlir")
    page = new_page()
    page.goto(url)
    page.get_by_text("See what XLA did to your program").wait_for()
    drop(page, "module.mlir", open(path, encoding="utf-8").read())
    page.wait_for_function(GRAPH_DRAWN, timeout=90_000)
    wait_idle(page)
    assert "jit_step" in header(page) and "before optimizations (StableHLO converted by jaxlib)" \
        in header(page)
    shot(page, artifacts_dir, "browser-open-2-dropped-mlir.png")
    first = params(page)["dump"]
    page.get_by_role("button", name="Compile with XLA:CPU").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('h3')].some(h => "
        "h.innerText.includes('after optimizations'))", timeout=120_000)
    page.wait_for_function(GRAPH_DRAWN, timeout=90_000)
    wait_idle(page)
    assert params(page)["dump"] != first           # a new stored dump: its own link
    assert "jit_step" in header(page) and "after optimizations" in header(page)
    # the module picker shows the compiled module's count, not the StableHLO's
    from compiler_bridge import parse_hlo
    from compiler_bridge.hlo import compile_for_cpu
    from tests.support.pages import select_value
    n = len(list(parse_hlo(compile_for_cpu(open(path, "rb").read())).instructions()))
    try:
        page.wait_for_function(f"""() => [...document.querySelectorAll(
            '.st-key-pick-module[data-stale=false] input')].some(i =>
            i.value.includes('{n:,} instr'))""", timeout=20_000)
    except Exception:                   # the assertion says what it shows
        pass
    assert f"{n:,} instructions" in select_value(page, "pick-module")
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, artifacts_dir, "browser-open-3-compiled-for-cpu.png")


DRAWN_IDS = """() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .flatMap(h => h.shadowRoot ? [...h.shadowRoot.querySelectorAll('svg g.node')] : [])
    .map(g => g.id)"""


def test_pick_the_stablehlo_stage_of_a_dump(served, new_page, artifacts_dir):
    """A per-pass dump with module.mlir: its StableHLO is the first stage of the picker;
    picked, the graph drawn is jaxlib's conversion of it (names XLA's passes renamed)."""
    from compiler_bridge import open_dump
    from compiler_bridge.dumps import STABLEHLO, Store
    from tests.support.pages import pick_stage
    from viz import ViewState, graph_for
    url, data = served
    path = os.path.join(ROOT, "sample_dumps", "mlp_train")
    d = open_dump(path)
    stable = {i.name for i in d.stage(d.main, STABLEHLO).instructions()}
    stored = Store(data).add_path(path)
    page = new_page()
    page.goto(f"{url}?dump={stored.share_id}")
    page.wait_for_function(GRAPH_DRAWN, timeout=90_000)
    wait_idle(page)
    assert "after optimizations" in header(page)
    pick_stage(page, "stablehlo", "StableHLO (as HLO)")
    page.wait_for_function("() => location.search.includes('stage=stablehlo')",
                           timeout=60_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('h3')].some(h => "
        "h.innerText.includes('StableHLO (as HLO)'))", timeout=60_000)
    expected = sorted(graph_for(d, ViewState(stage=STABLEHLO)).nodes)   # nodes and boxes
    # the graph is swapped in after the header: wait until every node drawn is the stage's
    page.wait_for_function(
        f"""(ids) => {{ const d = ({DRAWN_IDS})();
                      return d.length > 0 && d.every(i => ids.includes(i)); }}""",
        arg=expected, timeout=90_000)
    wait_idle(page)
    drawn = set(page.evaluate(DRAWN_IDS))
    assert drawn <= set(expected)
    assert not drawn <= set(graph_for(d, ViewState()).nodes)  # not the stage it left
    names = {i[5:] for i in drawn if i.startswith("node:")}
    assert names and names <= stable, names - stable
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("module.mlir").first.is_visible()
    page.locator(".hl-root").first.scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-open-7-dump-stablehlo-stage.png")


def test_paste_text_and_open_its_link_in_a_fresh_browser(served, new_page, browser,
                                                         artifacts_dir):
    url, _ = served
    path = _peer("0002_")
    text = open(path, encoding="utf-8").read()
    page = new_page()
    page.goto(url)
    sidebar = page.locator('section[data-testid="stSidebar"]')
    sidebar.get_by_role("tab", name="Paste").click()
    sidebar.get_by_label("Paste HLO text or StableHLO").wait_for()
    shot(page, artifacts_dir, "browser-open-4b-sidebar-paste-tab.png")
    area = page.locator("[data-testid=stMain]").get_by_label("Paste HLO text or StableHLO")
    area.fill(text)                      # then straight to the button, as a person does
    shot(page, artifacts_dir, "browser-open-4a-paste-box.png")
    page.locator("[data-testid=stMain]").get_by_role("button", name="Open the pasted module").click()
    page.wait_for_function(GRAPH_DRAWN, timeout=90_000)
    wait_idle(page)
    link = page.url
    assert "dump=" in link
    from compiler_bridge import parse_hlo
    name = parse_hlo(text, path).name
    assert name in header(page)
    shot(page, artifacts_dir, "browser-open-4-pasted.png")
    fresh = browser.new_context(viewport={"width": 1600, "height": 1100})
    try:
        other = fresh.new_page()
        other.goto(link)
        other.wait_for_function(GRAPH_DRAWN, timeout=90_000)
        wait_idle(other)
        assert name in header(other)
        shot(other, artifacts_dir, "browser-open-5-pasted-link-fresh-browser.png")
    finally:
        fresh.close()


def test_the_link_hlolens_show_prints_opens_the_program(served, new_page, artifacts_dir,
                                                        capsys):
    import jax
    import jax.numpy as jnp

    import hlolens
    url, data = served

    def mlp(w, x):
        return jax.nn.gelu(x @ w).mean()
    shown = hlolens.show(jax.jit(mlp).lower(jnp.ones((32, 32)), jnp.ones((8, 32))),
                         data=data, start=False)
    assert shown.url in capsys.readouterr().out
    page = new_page()
    page.goto(url + "?" + shown.url.split("?", 1)[1])
    page.wait_for_function(GRAPH_DRAWN, timeout=90_000)
    wait_idle(page)
    assert "jit_mlp" in header(page)
    shot(page, artifacts_dir, "browser-open-6-hlolens-show.png")
