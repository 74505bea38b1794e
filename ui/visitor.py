"""Who sees which dumps, and who may delete what. Links are the capability: every list
and picker of stored dumps a visitor sees (``dumps``) holds the dumps they uploaded or
opened (remembered in their browser, a cookie of share ids), each under their own link,
not every dump on the server; ``HLOLENS_LIST_ALL=1`` lists all of them, for a trusted team.
Uploads say which links the visitor holds (``mine``): the same bytes another visitor
uploaded are stored once, but the second visitor gets a link of their own.

Sign-in is optional: with an ``[auth]`` section in Streamlit's secrets (OpenID Connect,
``st.login``), the sidebar offers it, uploads, saved views and comments record the
account, and only their author or the dump's uploader may delete a view or a comment.
Without it, names are typed freely and anyone may delete (after a second click).
"""

from __future__ import annotations

import hashlib
import re

import streamlit as st

from compiler_bridge import settings
from compiler_bridge.dumps import StoredDump

from .component import remember_cookie
from .data import store
from .kit import md

COOKIE = "hlolens-mine"
_STATE = "hlolens-mine"
_MAX = 200                   # newest ids kept: a cookie holds 4 KB
_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def list_all() -> bool:
    """The server lists every stored dump to everyone (a trusted team's setting)."""
    return settings().list_all


def mine() -> list[str]:
    """Share ids of the dumps this browser uploaded or opened, oldest first."""
    ids = st.session_state.get(_STATE)
    if ids is None:
        try:
            raw = st.context.cookies.get(COOKIE) or ""
        except Exception:                  # no browser (scripts, AppTest): none yet
            raw = ""
        ids = [i for i in raw.split(".") if _ID.fullmatch(i)][-_MAX:]
        st.session_state[_STATE] = ids
    return ids


def dumps() -> list[StoredDump]:
    """The stored dumps this visitor may see, newest first, each under the visitor's own
    link (never another visitor's): those they uploaded or opened; under
    ``HLOLENS_LIST_ALL=1`` every dump, under their own link where they hold one, else its
    first. Raises what the store raises (DumpError, OSError)."""
    own = store().held(mine())
    if not list_all():
        return own
    theirs = {d.hash: d for d in reversed(own)}      # their newest link to each dump
    return [theirs.get(d.hash, d) for d in store().list()]


def remember(share_id: str) -> None:
    """Add a dump this visitor opened to their list (and their browser's cookie)."""
    ids = mine()
    if not share_id or share_id in ids:
        return
    ids.append(share_id)
    del ids[:-_MAX]
    # a component key may not hold '__' (a share id may): the id's hash names it
    tag = hashlib.blake2b(share_id.encode(), digest_size=6).hexdigest()
    remember_cookie(COOKIE, list(ids), key=f"remember-{len(ids)}-{tag}")


def sign_in_offered() -> bool:
    """The server has sign-in configured (an ``[auth]`` section in its secrets)."""
    try:
        return "auth" in st.secrets
    except Exception:                      # no secrets file at all
        return False


def account() -> str:
    """The signed-in account (its e-mail, else name or subject); '' when not signed in
    or when the server has no sign-in."""
    if not sign_in_offered():
        return ""
    try:
        if not st.user.is_logged_in:
            return ""
        return str(st.user.get("email") or st.user.get("name") or st.user.get("sub") or "")
    except Exception:                      # no browser session (scripts)
        return ""


def deleter() -> str | None:
    """Who asks to delete, for ``Store.delete_*(by=...)``: None where anyone may (no
    sign-in on this server), else the account ('' when not signed in: nobody's)."""
    return account() if sign_in_offered() else None


def account_box() -> None:
    """Sidebar: sign in or out, where the server offers it."""
    if not sign_in_offered():
        return
    who = account()
    if who:
        st.sidebar.caption(f"Signed in as **{md(who)}**")
        st.sidebar.button("Sign out", key="sign-out", type="tertiary", on_click=st.logout)
    else:
        st.sidebar.button("Sign in", key="sign-in", type="tertiary", on_click=st.login,
                          help="Sign in to have your uploads, views and comments carry your "
                          "name, and to delete them.")
