"""Opening a dump: the welcome page, the sidebar's upload, stored dumps and ``--dump``, and
the list of files that could not be read. A dump is opened once per content identity
(``Dump.key``): the store's content hash, or for a ``--dump`` folder that cannot be stored,
its ``path_key`` (path and a fingerprint of its files).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.delta_generator import DeltaGenerator

from compiler_bridge import Dump, DumpError, path_key, settings
from compiler_bridge.dumps import (AFTER, BEFORE, BUFFER_ASSIGNMENT, BUFFER_ASSIGNMENT_VALUES,
                                   LIVE_RANGE, MEMORY_USAGE_REPORT, DumpModule, StoreError,
                                   StoredDump)
from compiler_bridge.hlo import (
    EXPECTED,
    HLO_TEXT,
    MLIR_TEXT,
    HloParseError,
    compile_dump_for_cpu,
    module_name,
    sniff,
)
from viz import navigation as N
from viz import panels as P

from . import upload_spool, visitor
from .component import preload
from .data import cli_stored, dump_at, store, upload_cap
from .kit import Navigator, code, describe, go, go_pick, md
from .model import Opened


# --------------------------------------------------------------------------- page

def style() -> None:
    st.markdown("""<style>
      /* below the 3.75rem header: a message at the top is not half under it */
      .block-container { padding-top: 4rem; padding-bottom: 2rem; }
      .hl-legend { display: flex; flex-wrap: wrap; gap: .35rem .9rem; font-size: .8rem;
                   color: #495057; margin: .25rem 0 .5rem 0; }
      .hl-legend span.sw { display: inline-block; width: .9rem; height: .9rem;
                   border-radius: 3px; vertical-align: -2px; margin-right: .3rem; }
      .hl-crumbs button p { font-size: .9rem; }
      /* operand/user chips wrap instead of scrolling out of sight */
      [class*="st-key-refs-"] [data-testid="stButtonGroup"] > div { flex-wrap: wrap;
                   overflow: visible; row-gap: .35rem; }
    </style>""", unsafe_allow_html=True)
    with st.sidebar:
        preload()                  # the components' code, fetched with the first elements


def welcome(nav: Navigator | None = None) -> None:
    st.title("HLO Lens")
    st.markdown(
        "See what XLA did to your program. Open a dump folder written with "
        "`XLA_FLAGS=--xla_dump_to=DIR` from the sidebar (a `.zip` or `.tar.gz` of it, its "
        "files, or the folder itself), or start the app on one:\n\n"
        "```\nstreamlit run app.py -- --dump DIR\n```")
    st.markdown("One module opens too: an HLO text file (`compiled.as_text()` saved to "
                "disk), StableHLO (`jax.jit(f).lower(x).as_text()`) or an HLO proto "
                "(`*.hlo.pb`), uploaded, given with `--dump FILE`, or pasted here.")
    if nav is not None:
        paste_box(nav, "paste-main")


# --------------------------------------------------------------------------- dumps

ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")


def open_dump_section(nav: Navigator) -> Opened | None:
    """Sidebar: the open dump, and upload widgets with progress. Returns the dump to show.

    Every dump is opened from the store and named in the URL by its share id, the
    one given with ``--dump`` too (added at the first page load, once per content), so
    a link opens the same dump for anyone on this server, after restarts as well.
    """
    sb = st.sidebar
    sb.markdown("## HLO Lens")
    visitor.account_box()
    info = sb.container()
    opener = sb.container()
    cli = settings().dump
    has_dump = bool(nav.state.dump or cli)
    upload_error = st.session_state.get("upload-error")
    if upload_error:
        st.error(upload_error)
    try:
        return _resolve(nav, info, cli)
    finally:                 # drawn after the --dump folder is in the store (Stored tab)
        gen = st.session_state.get("upload-gen", 0)
        # filled only when open (on_change="rerun"): collapsed over a dump, its uploaders,
        # text area and tabs would cost every page's first draw (issue 32, item 16)
        box = opener.expander("Open a dump", expanded=not has_dump,
                              key=f"open-a-dump:{gen}:{has_dump}", on_change="rerun")
        if box.open:
            with box:
                _upload_widgets(nav)      # a new upload moves the URL to it


def _resolve(nav: Navigator, info, cli: str) -> Opened | None:
    key = nav.state.dump
    cli_share = ""
    try:
        if cli:
            try:
                if not os.path.exists(cli):
                    raise DumpError(f"{cli}: no such file or folder")
                cli_key = path_key(cli)
            except DumpError:
                if not key:
                    raise
                cli_key = ""                    # the --dump path is gone; the link works
            stored: StoredDump | str = ""
            if cli_key:
                stored = cli_stored(cli, cli_key, store().location)
                if isinstance(stored, StoredDump) and not _in_store(stored.share_id):
                    cli_stored.clear()             # removed meanwhile (store remove)
                    stored = cli_stored(cli, cli_key, store().location)
            if isinstance(stored, StoredDump):
                cli_share = stored.share_id
                if not key:                     # the URL names the dump from the start
                    nav.go(nav.state.with_(dump=cli_share))
                    key = cli_share
            elif not key and cli_key:           # not storable: open it where it is
                opened = Opened(dump_at(cli, cli_key), "", os.path.basename(cli.rstrip("/")),
                                cli)
                info.caption("Links to this dump work only while this server runs with "
                             f"--dump: it could not be added to the store ({md(stored)}).")
                return _opened(info, opened, cli, "")
        if not key:
            return None
        try:
            entry = store().get(key)
        except StoreError as e:
            _dump_gone(nav, e)
            return None
        lost = store().lost(key)
        if lost:                        # open what is left, and say what is not
            st.warning(f"**Files of this dump are lost.** {md(store().lost_message(key, lost))}"
                       ". Until then the app shows what is left.")
        folder = store().folder(key, whole=False)
        # what is left is other content: not the index cached for the whole dump
        content = entry.hash + ("-lost-" + hashlib.blake2b("\n".join(lost).encode(),
                                                            digest_size=6).hexdigest()
                                if lost else "")
        opened = Opened(dump_at(folder, content), key, entry.name, folder, key)
    except (KeyError, DumpError, OSError) as e:
        st.error(f"Cannot open the dump: {code(describe(e))}")
        return None
    visitor.remember(key)                    # in this visitor's Stored list from now on
    return _opened(info, opened, cli, cli_share)


def _in_store(share_id: str) -> bool:
    try:
        store().resolve(share_id)
        return True
    except StoreError:
        return False


def _opened(info, opened: Opened, cli: str, cli_share: str) -> Opened:
    d = opened.dump
    info.markdown(f"**{md(opened.name)}** · {len(d.modules)} module"
                  f"{'s' if len(d.modules) != 1 else ''} · {len(d.files)} files")
    note = st.session_state.get("upload-note")
    if note and opened.key and opened.key != cli_share:
        info.caption(f"✓ {md(note)}")
    if cli and cli_share and opened.key != cli_share:
        info.button(f"Back to {md(os.path.basename(cli.rstrip('/')))}", type="tertiary",
                    on_click=go, args=(N.choose_dump, cli_share))
    return opened


def _dump_gone(nav: Navigator, e: StoreError) -> None:
    """A link to a dump this store does not have: say so, offer the dumps it has."""
    st.error(f"**This link's dump is not here.** {md(str(e))}. Ask whoever sent it to "
             "upload the dump again, or open one of the dumps below.")
    dump_list(nav, where=st, limit=12, prefix="gone")


def dump_list(nav: Navigator, where=None, limit: int = 50, prefix: str = "stored") -> None:
    """The stored dumps this visitor may see (``visitor.dumps``), newest first, each a
    button that opens it."""
    where = where or st
    try:
        dumps = visitor.dumps()
    except (DumpError, OSError) as e:
        where.caption(f"The store cannot be read: {md(describe(e))}")
        return
    everyone = visitor.list_all()
    if not dumps:
        where.caption("The store is empty: upload a dump." if everyone else
                      "No dumps of yours yet: upload one, or open a link to one.")
        return
    where.markdown(f"**Dumps in this store** ({len(dumps)})" if everyone else
                   f"**Your dumps** ({len(dumps)})",
                   help=None if everyone else "The dumps this browser uploaded or opened. "
                   "Others' dumps open by their links; a team server lists all with "
                   "HLOLENS_LIST_ALL=1.")

    def label(d: StoredDump) -> str:
        main = d.modules[0]["name"] if len(d.modules) == 1 else f"{len(d.modules)} modules"
        return (f"{d.name} · {main} · {P.human_bytes(d.size)} · "
                f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(d.uploaded_at))}")
    for d in dumps[:limit]:
        where.button(md(label(d)), key=f"{prefix}:{d.share_id}", type="tertiary",
                     on_click=go, args=(N.choose_dump, d.share_id),
                     disabled=d.share_id == nav.state.dump)
    if len(dumps) > limit:                      # the rest: a searchable list
        older = {d.share_id: label(d) for d in dumps[limit:]}
        key = f"{prefix}-older"
        where.selectbox(f"{len(older)} older dumps", list(older), index=None, key=key,
                        format_func=older.get, placeholder="Find an older dump…",
                        on_change=go_pick, args=(N.choose_dump, key))


def _upload_widgets(nav: Navigator) -> None:
    gen = st.session_state.setdefault("upload-gen", 0)   # a new key empties the uploaders
    cap = P.human_bytes(upload_cap())
    files_tab, folder_tab, stored_tab, paste_tab = st.tabs(
        ["Files", "Folder", "Stored", "Paste"])
    with files_tab:
        files = st.file_uploader(
            "A .zip / .tar.gz of a dump folder, or its files", accept_multiple_files=True,
            key=f"upload-files:{gen}",
            help=f"What XLA_FLAGS=--xla_dump_to=DIR wrote, or one module's file (.hlo, "
                 f".mlir, .hlo.pb); up to {cap} in all")
    with paste_tab:
        paste_box(nav, "paste-side")
    with folder_tab:
        folder = st.file_uploader("A dump folder", accept_multiple_files="directory",
                                  key=f"upload-folder:{gen}", help=f"Up to {cap} in all")
    with stored_tab:
        dump_list(nav, limit=10)
    got = files or folder
    if got:
        _process_upload(nav, got)
        st.session_state["upload-gen"] = gen + 1
        st.rerun()


def _process_upload(nav: Navigator, files) -> None:
    """Save an upload in the store (once per content) and show it, with progress."""
    label = files[0].name if len(files) == 1 else _folder_label(files)
    st.session_state.pop("upload-error", None)
    st.session_state.pop("upload-note", None)
    with st.status(f"Opening {md(label)}…", expanded=True) as status:
        try:
            size = sum(upload_spool.size(f) for f in files)
            cap = upload_cap()
            if size > cap:
                raise StoreError(f"{P.human_bytes(size)} is over this server's upload cap of "
                                 f"{P.human_bytes(cap)} (server.maxUploadSize)")
            bar = st.progress(0.0, text="Reading the upload")
            stored = _store_upload(bar, files, label, size)
            bar.progress(0.7, text="Indexing the dump")
            dump = dump_at(store().folder(stored.share_id), stored.hash)
            main = dump.main
            f = (main.after_optimizations or main.before_optimizations) \
                if main is not None else None
            if main is not None and f is not None:
                bar.progress(0.9, text=f"Parsing {main.name}")
                dump.try_parse(f.path)
        except (DumpError, OSError, ValueError) as e:   # StoreError is a DumpError
            status.update(label=f"Could not open {md(label)}", state="error", expanded=False)
            message = describe(e)
            if message.startswith(label + ": "):
                message = message[len(label) + 2:]
            st.session_state["upload-error"] = f"Could not open {code(label)}: {code(message)}"
            return
        n = len(dump.modules)
        note = f"Opened {label}: {n} module{'s' if n != 1 else ''}"
        status.update(label=md(note), state="complete", expanded=False)
    st.session_state["upload-note"] = note
    nav.go(N.choose_dump(nav.state, stored.share_id))


# uploads stored at once: each unpacks to disk and hashes; more at once only share the
# disk and the CPUs (two 1.88 GB zips at once took the server to 6.5 GB, issue 33, item 4)
STORING = threading.BoundedSemaphore(1)
WAIT_SECONDS = 600


def _store_upload(bar, files, label: str, size: int) -> StoredDump:
    """Store the uploaded files through the staging folder, 1 MiB at a time (never a second
    whole copy in memory), one upload at a time; then drop Streamlit's copy of them."""
    try:
        if not STORING.acquire(blocking=False):
            bar.progress(0.1, text="Another upload is being stored: waiting for it")
            if not STORING.acquire(timeout=WAIT_SECONDS):
                raise StoreError(f"{label}: the server is busy storing other uploads; try "
                                 "again in a few minutes")
        try:
            bar.progress(0.3, text=f"Saving {P.human_bytes(size)} in the store")
            sources = [upload_spool.source(f) for f in files]
            try:
                if len(files) == 1 and files[0].name.lower().endswith(ARCHIVES):
                    return store().add_upload(sources[0], files[0].name, label,
                                              uploader=visitor.account(), holds=visitor.mine())
                return store().add_files([(f.name, s) for f, s in zip(files, sources)], label,
                                         uploader=visitor.account(), holds=visitor.mine())
            finally:
                for s in sources:
                    s.close()
        finally:
            STORING.release()
    finally:
        _release(files)


def _release(files) -> None:
    """Free the memory an upload holds once it is stored (or refused): Streamlit keeps each
    uploaded file's bytes for its session until the browser deletes it, and the uploader
    is emptied by a new key, which deletes nothing (a 1.88 GB zip kept 2.16 GB after the
    browser closed, issue 33, item 4)."""
    ctx = get_script_run_ctx()
    # MemoryUploadedFileManager's (the manager Streamlit's server runs); not in its protocol
    remove = getattr(ctx.uploaded_file_mgr, "remove_file", None) if ctx is not None else None
    for f in files:
        if remove is not None and ctx is not None:
            remove(ctx.session_id, f.file_id)
        if ctx is not None:
            upload_spool.discard(ctx.session_id, f.file_id)
        f.close()                          # its buffer: the bytes Streamlit handed out


def _folder_label(files) -> str:
    tops = {f.name.replace("\\", "/").split("/", 1)[0] for f in files}
    if len(tops) == 1 and all("/" in f.name for f in files):
        return f"{tops.pop()}/"
    return f"{len(files)} files"


# a module's memory files: a broken companion of the buffer assignment costs only itself
# (ModuleMemory.missing), a broken buffer assignment only the module's memory view; the
# Memory tab says which file and why, and neither becomes a page-wide error on every
# module's page (issue 32, item 6)
_COMPANIONS = (BUFFER_ASSIGNMENT, BUFFER_ASSIGNMENT_VALUES, LIVE_RANGE, MEMORY_USAGE_REPORT)


def dump_errors(opened: Opened, module_id: str | None = None) -> None:
    """Files of the dump that could not be read or parsed (the rest stays usable): those of
    no module and those of the module on screen (``module_id``). Another module's broken
    file is said on that module's page and in the module picker ("cannot be read"), so the
    banner neither grows as modules are visited nor names a file the page does not use."""
    kinds = {f.path: f.kind for f in opened.dump.files}
    owner = {f.path: m.id for m in opened.dump.modules for f in m.files}
    errors = [e for e in opened.dump.errors if kinds.get(e.file) not in _COMPANIONS
              and owner.get(e.file) in (None, module_id)]
    if not errors:
        return
    lines = [f"- {code(e.text.splitlines()[0])}" for e in errors[:12]]
    if len(errors) > 12:
        lines.append(f"- … and {len(errors) - 12} more")
    st.error(f"{len(errors)} file{'s' if len(errors) > 1 else ''} of this dump could not "
             "be read:\n" + "\n".join(lines))




# --------------------------------------------------------------------------- pasted text

def paste_box(nav: Navigator, key: str) -> None:
    """A text area for HLO text or StableHLO: stored like an upload, so its link works."""
    gen = st.session_state.setdefault("upload-gen", 0)
    text = st.text_area("Paste HLO text or StableHLO", key=f"{key}:{gen}", height=160,
                        placeholder="HloModule jit_f, entry_computation_layout=…\n\n"
                                    "ENTRY main { … }")
    # never disabled: a paste is committed when the button takes the focus, so a button
    # enabled only after that would swallow the first click
    if st.button("Open the pasted module", key=f"{key}-open:{gen}"):
        _process_paste(nav, text or "")
        st.session_state["upload-gen"] = gen + 1
        st.rerun()


def _safe_name(name: str) -> str:
    return re.sub(r"[^\w.\-]+", "_", name).strip("._")[:80] or "module"


def _process_paste(nav: Navigator, text: str) -> None:
    st.session_state.pop("upload-error", None)
    st.session_state.pop("upload-note", None)
    if not text.strip():
        st.session_state["upload-error"] = "Paste an HLO module (or StableHLO) first."
        return
    data = text.strip().encode("utf-8") + b"\n"
    kind = sniff(data)
    if kind not in (HLO_TEXT, MLIR_TEXT):
        st.session_state["upload-error"] = (f"The pasted text is not an HLO module: "
                                            f"{md(EXPECTED)}.")
        return
    name = module_name(data, kind) or "module"
    file = _safe_name(name) + (".mlir" if kind == MLIR_TEXT else ".hlo")
    try:
        stored = store().add_files([(file, data)], f"pasted {name}", uploader=visitor.account(),
                                   holds=visitor.mine())
    except (DumpError, OSError) as e:
        st.session_state["upload-error"] = f"Could not open the pasted text: {code(describe(e))}"
        return
    st.session_state["upload-note"] = f"Opened the pasted module {name}"
    nav.go(N.choose_dump(nav.state, stored.share_id))


# --------------------------------------------------------------------------- StableHLO

# what the app compiles for: '' is this machine's CPU (in this process), the others as
# `python -m compiler_bridge compile --target` names them
COMPILE_TARGETS = {"": "XLA:CPU", "h100": "XLA:GPU, NVIDIA H100", "v5e:2x2": "XLA:TPU, v5e 2x2",
                   "v6e:2x2": "XLA:TPU, v6e 2x2", "v5p:2x2x1": "XLA:TPU, v5p 2x2x1"}


def stablehlo_actions(nav: Navigator, opened: Opened, module: DumpModule) -> None:
    """Sidebar: compile the module for a target. A module read from StableHLO alone (an
    uploaded or pasted .mlir) gets *Compile with XLA:CPU* (adds the after-optimizations
    stage) and a target picker; a dump's module with its StableHLO (``module.mlir``) gets
    the picker in an expander. A GPU or TPU compile is stored as a new dump, opened
    against this machine's CPU compile (the dump itself when it is one) in the comparison."""
    before = module.first(BEFORE)
    from_mlir = before is not None and before.source == MLIR_TEXT
    loose = from_mlir and module.first(AFTER) is None
    source = before if loose else module.stablehlo
    if source is None:
        return
    where: DeltaGenerator
    if loose:
        where = st.sidebar.container()
    else:
        expander = st.sidebar.expander("Compile for a target…", key="compile-for",
                                       on_change="rerun")
        if not expander.open:                # filled only when open, like *Open a dump*
            return
        where = expander
    with where:
        target = st.selectbox("Target", list(COMPILE_TARGETS) if loose
                              else list(COMPILE_TARGETS)[1:], key="compile-target",
                              format_func=lambda k: COMPILE_TARGETS[k],
                              help="XLA compiles for a GPU or TPU here, without one "
                                   "(jax's compile-only devices; .venv-backends)")
        box = st.container()
        label = "Compile with XLA:CPU" if not target else f"Compile for {target}"
        if st.button(label, key="compile-mlir",
                     help="Adds the after-optimizations stage, as XLA:CPU on this machine "
                          "compiles it (through jax)" if not target else
                          "A new dump: XLA's compile for this target, compared with the "
                          "CPU's"):
            if target:
                _compile_for_target(nav, box, opened, module, source.path, target, loose)
            elif before is not None:
                _compile_here(nav, box, opened, before.path)
        if loose:
            st.caption("No after-optimizations stage: *Compile* compiles it here, for this "
                       "machine's CPU or, without the hardware, a GPU or TPU.")


def _compile_here(nav: Navigator, box, opened: Opened, path: str) -> None:
    """XLA:CPU's compile with its dump flags: the stored dump has XLA's own files (its
    ``module.mlir``, a snapshot after each pass, buffer assignment, live ranges)."""
    dump = opened.dump
    data = dump.read_bytes(path)
    with st.spinner("Compiling with XLA:CPU…"):
        try:
            made = compile_dump_for_cpu(data, path, every_pass=len(data) <= EVERY_PASS_UP_TO)
        except HloParseError as e:
            box.error(f"XLA:CPU could not compile it: {code(str(e))}")
            return
    _add_derived(nav, box, f"{opened.name} (compiled for this machine's CPU)",
                 compiled_dump(dump, path, made))


def _compile_for_target(nav: Navigator, box, opened: Opened, module: DumpModule, path: str,
                        target: str, loose: bool) -> None:
    """Compile in another process into a new dump, store it (and, for a module that was
    never compiled, this machine's CPU compile as its baseline) and open it compared."""
    import tempfile

    from compiler_bridge import CompileError, compile_module
    with tempfile.TemporaryDirectory(prefix="hlolens-compile-") as tmp:
        src = os.path.join(tmp, "module.mlir")
        with open(src, "wb") as f:
            f.write(opened.dump.read_bytes(path))
        st.session_state.pop("upload-error", None)
        refused = ""
        try:
            with st.spinner(f"Compiling for {COMPILE_TARGETS[target]}…"):
                out = compile_module(src, target, os.path.join(tmp, "target")).out
                cpu = compile_module(src, "cpu", os.path.join(tmp, "cpu")).out if loose else ""
        except (CompileError, ValueError) as e:
            if not isinstance(e, CompileError) or not e.out:
                box.error(f"Could not compile it: {md(str(e))}")
                return
            # XLA refused (out of memory, say) after dumping what it did: that is shown
            refused, out, cpu = str(e), e.out, ""
        try:
            holds = visitor.mine()
            base = store().add_path(cpu, f"{module.name} (compiled for this machine's CPU)",
                                    uploader=visitor.account(), holds=holds).share_id \
                if cpu else opened.key
            stored = store().add_path(out, f"{module.name} (compiled for {target})",
                                      uploader=visitor.account(), holds=holds)
        except (DumpError, OSError) as e:
            box.error(f"Could not store it: {code(describe(e))}")
            return
    if refused:
        st.session_state["upload-error"] = (f"XLA could not compile it: {md(refused)}. Shown: "
                                            "what XLA dumped before it stopped.")
    st.session_state["upload-note"] = f"Opened {module.name} compiled for {target}"
    nav.go(N.choose_base(N.choose_dump(nav.state, stored.share_id), base))
    st.rerun()


# StableHLO up to this size is compiled with a snapshot after every pass (the transformer's
# 55 KB of StableHLO made 4 MB of snapshots); a bigger one gets before and after only
EVERY_PASS_UP_TO = 256 << 10


def compiled_dump(dump: Dump, mlir: str, made: dict[str, bytes]) -> list[tuple[str, bytes]]:
    """The files of a dump as JAX writes one: XLA's dump of the compile (``made``, its
    module folder holds the StableHLO it compiled as ``module.mlir``) and the dump's other
    files; the loose ``mlir`` goes in that folder where XLA did not write it."""
    prefix = next((p[:-len(".before_optimizations.txt")] for p in sorted(made)
                   if p.endswith(".before_optimizations.txt") and "/" not in p), "")
    files = [(f.path, dump.read_bytes(f.path)) for f in dump.files if f.path != mlir]
    if prefix and f"{prefix}/module.mlir" not in made:
        files.append((f"{prefix}/module.mlir", dump.read_bytes(mlir)))
    return files + sorted(made.items())


def _add_derived(nav: Navigator, box, name: str, files: list[tuple[str, bytes]]) -> None:
    try:
        stored = store().add_files(files, name, uploader=visitor.account(),
                                   holds=visitor.mine())
    except (DumpError, OSError) as e:
        box.error(f"Could not store it: {code(describe(e))}")
        return
    st.session_state["upload-note"] = f"Opened {name}"
    nav.go(N.choose_dump(nav.state, stored.share_id))
    st.rerun()
