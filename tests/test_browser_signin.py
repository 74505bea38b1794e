"""Optional sign-in on a team server (issue 17, item 7), end to end in Chromium: Streamlit's
built-in OpenID Connect login (``st.login``) against a real OIDC provider on loopback
(oidc-provider-mock), configured through a secrets file as a deployment would.

Alice uploads a dump and saves a view; Bob, signed in too, opens her link: he sees her
view without a Delete, comments, and may delete his own comment; Alice, the uploader,
may delete Bob's comment. Names come from the accounts, not from what was typed.
"""

from __future__ import annotations

import os
import secrets
import time
import urllib.parse

import pytest
from conftest import missing

from compiler_bridge.dumps import Store
from tests.support.browser import CHROMIUM, GRAPH_DRAWN, free_port, launch
from tests.support.fixtures import app_server
from tests.support.pages import upload, wait_idle, wait_param
from tests.support.samples import sample_zip

pytestmark = [pytest.mark.browser]
if not os.path.exists(CHROMIUM):
    missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it",
            module_level=True)

USERS = {"alice": "alice@example.com", "bob": "bob@example.com"}


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    from oidc_provider_mock import User, run_server_in_thread
    home = tmp_path_factory.mktemp("signin")
    users = [User(sub=sub, claims={"email": email, "name": sub.title()})
             for sub, email in USERS.items()]
    with run_server_in_thread(user_claims=users) as provider:
        port = free_port()
        secrets_toml = home / "secrets.toml"
        secrets_toml.write_text(
            "[auth]\n"
            f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
            f'cookie_secret = "{secrets.token_hex(16)}"\n'
            'client_id = "hlolens"\n'
            'client_secret = "hlolens-secret"\n'
            f'server_metadata_url = "http://localhost:{provider.server_port}'
            '/.well-known/openid-configuration"\n')
        data = home / "data"
        data.mkdir()
        with app_server(data, port=port, options=("--secrets.files", str(secrets_toml))) as url:
            yield url, str(data)


def sign_in(browser, url: str, sub: str):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    page.get_by_role("button", name="Sign in").click()
    page.locator('input[name="sub"]').first.fill(sub)
    page.get_by_role("button", name="Authorize").click()
    # (the address is shown as text: a word joiner before its '@' keeps it from a link)
    page.get_by_text(f"Signed in as {sub}").wait_for()
    return page


def until(fn, timeout: float = 20):
    """``fn()`` once it is truthy: the server writes after the page shows it."""
    deadline = time.time() + timeout
    while not (got := fn()) and time.time() < deadline:
        time.sleep(0.1)
    return got


def sidebar_delete_buttons(page) -> int:
    box = page.locator('section[data-testid="stSidebar"]')
    return box.get_by_role("button", name="Delete").count()


def test_accounts_name_notes_and_only_authors_or_the_uploader_delete(team_server, tmp_path_factory,
                                                                    artifacts_dir):
    from playwright.sync_api import sync_playwright
    url, data = team_server
    with sync_playwright() as pw:
        browser = launch(pw)
        alice = sign_in(browser, url, "alice")
        upload(alice, sample_zip(tmp_path_factory, "cond_switch"))
        alice.wait_for_function(GRAPH_DRAWN, timeout=60_000)
        share_id = wait_param(alice, "dump")["dump"]
        wait_idle(alice)
        store = Store(data)
        assert store.uploader(share_id) == USERS["alice"]
        alice.get_by_role("button", name="Save view").click()
        alice.get_by_label("Name", exact=True).fill("alice's view")
        alice.get_by_role("button", name="Save", exact=True).click()
        alice.get_by_text("Saved views (1)").wait_for()
        (view,) = until(lambda: store.views(share_id))
        assert view.author == USERS["alice"] and view.account == USERS["alice"]

        bob = sign_in(browser, url, "bob")
        bob.goto(f"{url}?{urllib.parse.urlencode({'dump': share_id, 'selected': 'cond.6.clone'})}")
        bob.wait_for_function(GRAPH_DRAWN, timeout=60_000)
        bob.get_by_text("Signed in as bob").wait_for()
        wait_idle(bob)
        bob.get_by_text("Saved views (1)").wait_for()
        assert sidebar_delete_buttons(bob) == 0          # not his view, not his dump
        bob.get_by_text("Comments (0)").click()
        bob.get_by_label("Add a comment").fill("bob was here")
        bob.get_by_role("button", name="Comment").click()
        # the posted comment (under load the text box may still hold the same words)
        bob.locator("p", has_text="bob was here").wait_for()
        wait_idle(bob)
        (comment,) = until(lambda: store.comments(share_id))
        assert comment.author == USERS["bob"] and comment.account == USERS["bob"]
        main = bob.locator('[data-testid="stMain"]')
        main.get_by_role("button", name="Delete").first.wait_for()     # his own comment
        assert main.get_by_role("button", name="Delete").count() == 1
        bob.screenshot(path=os.path.join(artifacts_dir, "signin-bob.png"))

        alice.goto(f"{url}?{urllib.parse.urlencode({'dump': share_id, 'selected': 'cond.6.clone'})}")
        alice.locator("p", has_text="bob was here").wait_for()
        wait_idle(alice)
        main = alice.locator('[data-testid="stMain"]')
        main.get_by_role("button", name="Delete").first.wait_for()
        assert sidebar_delete_buttons(alice) == 1        # her view
        main.get_by_role("button", name="Delete").click()  # the uploader: bob's comment
        alice.locator('[data-testid="stPopoverBody"]').get_by_role("button", name="Delete") \
            .click()
        alice.get_by_text("Deleted a comment").wait_for()
        assert until(lambda: not store.comments(share_id))
        alice.screenshot(path=os.path.join(artifacts_dir, "signin-alice.png"))
        browser.close()
