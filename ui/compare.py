"""Comparing two compiles: the dump shown against a baseline dump (two flag sets, two
JAX/XLA versions, two commits), or two compiles of one function in one dump.

The URL says it all: ``base`` (the baseline dump's share id; the dump itself for a
recompilation) and ``base_module`` ('' = the partner pairing finds), beside the usual
view of the dump shown. ``streamlit run app.py -- --dump A --compare B`` opens B compared
with baseline A (as ``python -m compiler_bridge compare A B`` reads them).

Parts: ``sidebar`` (pick a baseline: a stored or uploaded dump, or a recompilation),
``resolve`` (the comparison of the module on screen, cached by both dumps' content),
``panel`` above the graph, ``detail_tabs`` (counts, flags, memory, measured kernels; the
diff as tables; the text diff) and ``inspector`` (the selected node on the baseline's
side). The graph colours come from the same diff (registered with
``data.register_diff``), drawn by ``viz.graph_for`` like a pass step's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import streamlit as st

from compiler_bridge import CannotCompare, Dump, DumpError, PairReport, path_key, settings
from compiler_bridge.dumps import AFTER, StoreError, StoredDump
from compiler_bridge.compare import FlagsDiff, ModulePair, Pairing, dump_versions, recompilations
from compiler_bridge.passes import ModuleDiff, text_diff
from viz import ViewState
from viz import compare as CV
from viz import navigation as N
from viz import stepper as SV

from . import visitor
from .actions import on_diff_row, select_and_show
from .data import (baseline_at, baseline_history, baseline_stored, flags, pair_report,
                   pairing, register_diff, store)
from .kit import (
    Navigator,
    code,
    controlled,
    describe,
    diff_table,
    go,
    go_widget,
    md,
    selected_row,
)
from .model import Inspected, Opened, Picked, Shown

NO_BASE = ""


# --------------------------------------------------------------------------- data

@dataclass
class Comparing:
    """The comparison on screen: the baseline dump and module, and the report."""

    base: Dump
    base_name: str
    pairing: Pairing
    pair: ModulePair
    report: PairReport
    flags: FlagsDiff
    same_dump: bool          # two compiles of one dump
    dump: Dump               # the dump shown

    @property
    def diff(self) -> ModuleDiff:
        return self.report.comparison.diff


def apply_cli(nav: Navigator, opened: Opened) -> None:
    """``--dump A --compare B``: at the first page of a session that opened on the bare
    dump (not a link to a view), show B with A as the baseline."""
    path = settings().compare
    if not path or st.session_state.get("compare-cli-done"):
        return
    if nav.state != ViewState(dump=opened.key):     # a link: it opens what it says
        st.session_state["compare-cli-done"] = True
        return
    st.session_state["compare-cli-done"] = True
    if not opened.key:
        st.warning("--compare needs the --dump folder in the store; it could not be added.")
        return
    try:
        stored = baseline_stored(path, path_key(path), store().location)
    except DumpError as e:
        st.error(f"Cannot open the dump to compare with: {code(describe(e))}")
        return
    if isinstance(stored, str):
        st.error(f"Cannot open the dump to compare with: {code(stored)}")
        return
    nav.go(ViewState(dump=stored.share_id, base=opened.key))
    st.rerun()


def base_dump(opened: Opened, key: str) -> tuple[Dump, str]:
    """The baseline dump named by the URL (the dump shown for a recompilation); raises
    StoreError when the store does not have it."""
    if key == opened.key:
        return opened.dump, opened.name
    entry = store().get(key)
    return baseline_at(store().folder(key), entry.hash), entry.name


def resolve(nav: Navigator, opened: Opened, picked: Picked | None) -> Comparing | None:
    """The comparison of the module on screen with its baseline partner (None without a
    ``base`` in the URL, or with a message when it cannot be made)."""
    state = nav.state
    if not state.base or picked is None:
        return None
    try:
        base, base_name = base_dump(opened, state.base)
    except (StoreError, DumpError, OSError, KeyError) as e:
        st.error(f"**The baseline dump of this comparison is not here.** {md(describe(e))}")
        st.button("Stop comparing", on_click=go, args=(N.choose_base, NO_BASE),
                  key="compare-stop-gone")
        return None
    same = base is opened.dump
    paired = pairing(base, opened.dump)
    module = picked.dump_module
    partner = state.base_module
    if partner:
        try:
            partner = base.module(partner).id
        except KeyError as e:   # the baseline by its name, not the store's folder (a hash)
            said = describe(e).removeprefix(f"{base.name}: ")
            st.warning(md(f"Baseline {base_name}: {said}; pairing module {module.label} "
                          "by name and structure instead."))
            partner = ""
    asked = partner             # '' = the partner pairing finds (and its reason)
    if not partner:
        found = paired.of_b(module.id)
        if found is None or (same and found.a == module.id):
            partner = asked = _fallback_partner(base, module.id, same)
        else:
            partner = found.a
    if not partner:
        st.warning(f"Module {md(module.label)} pairs with no module of {md(base_name)}: "
                   "pick one under *Baseline module* above the graph.")
        _baseline_picker(nav, base, "", module.id, same, paired)
        return None
    try:
        report = pair_report(base, asked, opened.dump, module.id)
    except Exception as e:          # a side that does not parse, a module not there
        said = str(e) if isinstance(e, CannotCompare) else describe(e)
        # each dump by its name, not the store's folder (a 64-digit content hash)
        said = said.replace(f"{base.name}: ", f"{base_name}: ").replace(
            f"{opened.dump.name}: ", f"{opened.name}: ")
        st.error(f"Cannot compare with {md(base_name)}: {code(said)}")
        return None
    cmp = Comparing(base, base_name, paired, report.pair, report,
                    flags(base, partner, opened.dump, module.id), same, opened.dump)
    register_diff(opened.dump, report.comparison.file_b, state, report.comparison.diff)
    return cmp


def report_notes(cmp: Comparing | None) -> list[str]:
    """What the HTML report says of the comparison on screen (nothing without one): the
    baseline, the summary line, the flags that differ."""
    if cmp is None:
        return []
    out = [f"Compared with baseline {cmp.base_name}, module {cmp.pair.a}: "
           f"{CV.summary(cmp.report)}"]
    if not cmp.flags.is_empty:
        flags = [f"--{k} {a} → {b}" for k, a, b in cmp.flags.changed]
        flags += [f"only the baseline {f}" for f in cmp.flags.only_a]
        flags += [f"only this dump {f}" for f in cmp.flags.only_b]
        out.append("Flags: " + "; ".join(flags))
    return out


def _fallback_partner(base: Dump, module_id: str, same: bool) -> str:
    """For a recompilation: another compile of the same name; else nothing."""
    if not same:
        return ""
    for r in recompilations(base):
        if module_id in r.modules:
            return next(m for m in r.modules if m != module_id)
    return ""


# --------------------------------------------------------------------------- sidebar

def sidebar(nav: Navigator, opened: Opened, picked: Picked | None = None) -> None:
    """Sidebar: compare the dump shown with a stored (or uploaded) dump, or two compiles of
    the function shown (``picked``'s module) for other shapes."""
    state = nav.state
    # filled only when open (on_change="rerun"): a page's first draw costs every element
    box = st.sidebar.expander("Compare with…", expanded=bool(state.base), key="compare-with",
                              on_change="rerun")
    if not box.open:
        return
    with box:
        try:
            dumps = visitor.dumps()            # this visitor's own, never another's
        except (DumpError, OSError) as e:
            st.caption(f"The store cannot be read: {md(describe(e))}")
            dumps = []
        options = [NO_BASE] + [d.share_id for d in dumps if d.share_id != opened.key]
        names = {d.share_id: f"{d.name} · {time_label(d)}" for d in dumps}
        if opened.key:
            options.insert(1, opened.key)
            names[opened.key] = f"{opened.name} (this dump: another module)"
        if state.base and state.base not in options:
            options.append(state.base)
        controlled("compare-base", state.base)
        st.selectbox("Baseline dump", options, key="compare-base",
                     format_func=lambda k: "nothing (no comparison)" if not k
                     else names.get(k, k),
                     on_change=go_widget, args=(N.choose_base, "compare-base"),
                     help="The dump shown is compared with this one: instructions added, "
                          "removed and changed, counts, flags, memory, measured times. "
                          "Upload a dump above to compare with it.")
        shown = picked.dump_module.name if picked is not None else None
        for r in recompilations(opened.dump):
            if r.name != shown:         # another function's compiles: not this one's
                continue
            st.caption(f"{md(r.name)} was compiled {len(r.modules)} times, for other "
                       "shapes: " + "; ".join(f"{code(m)} {md(d)}" for m, d in
                                              zip(r.modules, r.differences())))
            a, b = r.modules[0], r.modules[1]
            st.button(f"Compare {md(a)} → {md(b)}", key=f"recompiled:{r.name}", type="tertiary",
                      on_click=go, args=(N.compare_recompilation, a, b),
                      disabled=not opened.key)


def time_label(d: StoredDump) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(d.uploaded_at))


# --------------------------------------------------------------------------- panel

def panel(nav: Navigator, opened: Opened, cmp: Comparing) -> None:
    """Above the graph: what is compared with what, the baseline module, only what
    changed, swap sides, stop; the one-line summary and the flags that differ."""
    state = nav.state
    r = cmp.report
    st.markdown(f"**Comparing** {md(opened.name)} · module {code(cmp.pair.b)} "
                f"**with baseline** {md(cmp.base_name)} · module {code(cmp.pair.a)}"
                + (" (two compiles in this dump)" if cmp.same_dump else ""))
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        _baseline_picker(nav, cmp.base, cmp.pair.a, cmp.pair.b, cmp.same_dump, cmp.pairing)
        controlled("compare-only", state.changed_only)
        st.toggle("Only what changed", key="compare-only", on_change=go_widget,
                  args=(N.set_changed_only, "compare-only"),
                  help="Draw only the instructions added or changed since the baseline, "
                       "those next to removed ones, and their neighbours")
        st.button("⇄ Swap sides", key="compare-swap", on_click=go,
                  args=(N.swap_sides, cmp.pair.a),
                  help="Show the baseline, compared with this dump")
        st.button("Stop comparing", key="compare-stop", on_click=go,
                  args=(N.choose_base, NO_BASE))
    st.caption(md(CV.summary(r)))
    if not cmp.flags.is_empty:
        items = [f"{code('--' + k)} {code(a)} → {code(b)}" for k, a, b in cmp.flags.changed]
        items += [f"only baseline {code(f)}" for f in cmp.flags.only_a]
        items += [f"only this dump {code(f)}" for f in cmp.flags.only_b]
        st.caption("Flags: " + " · ".join(items[:6])
                   + (f" · … {len(items) - 6} more (Comparison tab)" if len(items) > 6 else ""))
    if state.stage != AFTER:
        st.caption("The comparison is of the after-optimizations modules: the graph is "
                   "coloured at that stage only.")


def _baseline_picker(nav: Navigator, base: Dump, current: str, module: str, same: bool,
                     pairing: Pairing) -> None:
    ids = [m.id for m in base.modules if m.first(AFTER) is not None
           or m.before_optimizations is not None]
    if same:
        ids = [i for i in ids if i != module] or ids
    paired = {p.a: p for p in pairing.pairs}
    labels = {m.id: f"baseline {m.label}" + (" (its pair)" if m.id in paired and
                                             paired[m.id].b == module else "")
              for m in base.modules}
    value = current if current in ids else None
    controlled("compare-base-module", value)
    st.selectbox("Baseline module", ids, key="compare-base-module", index=None,
                 format_func=lambda i: labels.get(i, i), placeholder="Baseline module…",
                 on_change=go_widget, args=(_set_base_module, "compare-base-module"),
                 label_visibility="collapsed", width=320)


def _set_base_module(state: ViewState, module: str) -> ViewState:
    return state.with_(base_module=module, viewport="")


# --------------------------------------------------------------------------- tabs

def detail_tabs(nav: Navigator, opened: Opened, shown: Shown, cmp: Comparing
                ) -> list[tuple[str, Callable[[], None]]]:
    return [("Comparison", lambda: _overview(cmp, opened, shown)),
            ("Changes", lambda: _changes_tab(nav, opened, shown, cmp)),
            ("Text diff", lambda: _text_tab(nav, shown, cmp))]


def _on_kernel(key: str, rows: list[dict], opened: Opened, shown: Shown) -> None:
    row = selected_row(key, len(rows))
    if row is None:
        return
    name = str(rows[row].get("this dump", ""))
    if name and name != "(none)" and shown.module.find(name) is not None:
        go(select_and_show, opened, shown, name)
    elif rows[row].get("baseline kernel") not in (None, "(none)"):
        removed = str(rows[row]["baseline kernel"])       # only in the baseline: its ghost
        go(lambda s: (s.with_(selected=removed), ""))


def _overview(cmp: Comparing, opened: Opened, shown: Shown) -> None:
    r = cmp.report
    c = r.comparison
    st.markdown(f"**{md(cmp.base_name)}** {code(c.pair.a)} → **this dump** {code(c.pair.b)} "
                f"· paired by {md(CV.HOW.get(c.pair.how, c.pair.how))} "
                f"(similarity {c.pair.similarity:.2f})  \n{md(CV.summary(r))}")
    left, right = st.columns(2)
    with left:
        st.markdown("**Counts**")
        st.dataframe(CV.count_rows(c), hide_index=True)
        st.markdown("**Opcodes that differ**")
        rows = CV.opcode_rows(c)
        if rows:
            st.dataframe(rows, hide_index=True, height=min(38 + 35 * len(rows), 360))
        else:
            st.caption("The same opcode histogram.")
    with right:
        va, vb = dump_versions(cmp.base), dump_versions(cmp.dump)
        st.markdown("**Versions**")
        if va or vb:
            keys = [k for k in ("jax_version", "jaxlib_version") if k in va or k in vb]
            st.dataframe([{"": k.replace("_version", ""), "baseline": va.get(k, "?"),
                           "this dump": vb.get(k, "?")} for k in keys], hide_index=True)
        else:
            st.caption("Neither dump says which JAX/XLA made it (a profiler trace's xplane "
                       "records the versions).")
        st.markdown("**Flags**")
        flag_rows = CV.flag_rows(cmp.flags)
        if flag_rows:
            st.dataframe(flag_rows, hide_index=True)
        elif cmp.flags.known_a and cmp.flags.known_b:
            st.caption("The same XLA flags (debug_options, compile_options; xla_dump_* "
                       "left out).")
        else:
            silent = [w for w, k in (("the baseline", cmp.flags.known_a),
                                     ("this dump", cmp.flags.known_b)) if not k]
            st.caption(f"{' and '.join(silent).capitalize()} does not say which XLA flags "
                       "it was made with (no debug_options or compile_options.textproto), "
                       "so flags are not compared.")
        for who, problems in (("baseline", cmp.flags.problems_a),
                              ("this dump", cmp.flags.problems_b)):
            for p in problems:        # a flags file cut short: which line was left out
                st.caption(f"⚠ {who}: {md(p)}")
        st.markdown("**Memory**")
        mem = CV.memory_rows(r)
        if mem:
            st.dataframe(mem, hide_index=True)
        else:
            st.caption("No memory totals for these modules.")
        for side, why in zip(("the baseline", "this dump"), r.memory_missing):
            if why:      # a '?' column: say why
                st.caption(f"{side.capitalize()} has no memory totals: {md(why)}")
        st.markdown("**Measured time**")
        if r.step_us is None:
            st.caption("Step times need a profiler trace in both dumps (its jitted calls, "
                       "or per-op events for the kernels).")
        elif r.step_basis == "calls":
            st.caption(f"median step {r.step_us[0]:,.1f} → {r.step_us[1]:,.1f} µs "
                       f"({r.slower_pct() or 0:+.1f}%): the whole jitted call on each side "
                       "(dispatch included), as a trace without per-op events allows; no "
                       "kernel times to pair")
        else:
            st.caption(f"median step {r.step_us[0]:,.1f} → {r.step_us[1]:,.1f} µs "
                       f"({r.slower_pct() or 0:+.1f}%); kernels paired through the diff, "
                       "biggest change first")
            rows = CV.kernel_rows(r)
            key = f"compare-kernels:{c.pair.a}:{c.pair.b}"
            # a kernel of one side only has no µs on the other: '–', not 'None'
            st.dataframe(rows, hide_index=True, height=300, key=key, placeholder="–",
                         on_select=partial(_on_kernel, key, rows, opened, shown),
                         selection_mode="single-row")
            st.caption("Click a row to select that kernel in the graph.")


def _changes_tab(nav: Navigator, opened: Opened, shown: Shown, cmp: Comparing) -> None:
    st.markdown(md(SV.diff_summary(cmp.diff)))
    rows = diff_table(_tables(cmp.report), "compare-table",
                      f"compare-rows:{cmp.pair.a}:{cmp.pair.b}",
                      partial(on_diff_row, opened=opened, shown=shown), prefer="fusions")
    if rows is None:
        st.caption("No instruction was added, removed or changed.")
        return
    st.caption("Click a row to select that instruction in the graph (a removed one is "
               "explained in the inspector).")


def _tables(report: PairReport) -> dict[str, list[dict]]:
    return SV.diff_tables(report.comparison.diff)


def _text_tab(nav: Navigator, shown: Shown, cmp: Comparing) -> None:
    d = cmp.diff
    counts: dict[str, int] = {}
    for ref in d.added:
        counts[ref.computation] = counts.get(ref.computation, 0) + 1
    for ref in d.removed:
        name = d.computation_map.get(ref.computation, ref.computation)
        counts[name] = counts.get(name, 0) + 1
    for ch in d.changed:
        counts[ch.new.computation] = counts.get(ch.new.computation, 0) + 1
    for name in d.computations_added + d.computations_removed:
        counts[name] = counts.get(name, 0) + 1
    comps = sorted(counts, key=lambda n: -counts[n])
    if not comps:
        st.caption("The text of every computation is the same (after pairing renamed "
                   "instructions).")
        return
    on_screen = nav.state.computation or (shown.module.entry.name if shown.module.entry
                                          else "")
    key = f"compare-text:{cmp.pair.a}:{cmp.pair.b}"
    if st.session_state.get(key) not in comps:
        st.session_state[key] = on_screen if on_screen in comps else comps[0]
    cols = st.columns([3, 1], vertical_alignment="bottom")
    cols[0].selectbox("Computation", comps, key=key,
                      format_func=lambda c: f"{c} ({counts[c]} changes)")
    context = cols[1].number_input("Context lines", 0, 50, 3, key="compare-text-context")
    chosen = st.session_state[key]
    back = {v: k for k, v in d.computation_map.items()}
    diffs = text_diff(d, context=int(context), computations={chosen, back.get(chosen, chosen)})
    st.html(SV.text_diff_html(diffs, old_title=f"baseline {cmp.base_name} · {cmp.pair.a}",
                             new_title=f"this dump · {cmp.pair.b}"))


# --------------------------------------------------------------------------- inspector

def inspector(nav: Navigator, shown: Shown, inspected: Inspected | None,
              cmp: Comparing | None) -> None:
    """In the inspector: the selected instruction on the baseline's side, what changed,
    or (a ghost) that this compile has no such instruction."""
    if cmp is None or inspected is None or not inspected.name or ":" in inspected.name:
        return
    d = cmp.diff
    name = inspected.name
    if shown.path != cmp.report.comparison.file_b:
        return
    with inspected.slot, st.expander(f"In the baseline ({md(cmp.base_name)} · {md(cmp.pair.a)})",
                                     expanded=True):
        if inspected.info is None:
            ref = d.removed_ref(name)
            if ref is not None:
                st.error(f"✕ Only in the baseline: this compile has no instruction "
                         f"computing it (it was in {code(ref.where)}).")
                old = d.old.find(name)
                if old is not None:
                    st.code(old.text, language=None, wrap_lines=True)
                _baseline_history(nav, cmp, name)
            return
        if d.is_added(name):
            st.success(md(CV.added_note(d, name)))
            copied = d.duplicates.get(name)
            if copied:
                st.caption(f"A copy of the baseline's {code(copied)}.")
            return
        other = d.new_to_old.get(name)
        if other is None:
            return
        change = d.change_of_new(name)
        if change is None:
            st.caption(f"The same in the baseline, as {code(other)}." if other != name
                       else "The same in the baseline.")
        else:
            st.warning(md(change.describe()))
        old = d.old.find(other.split("@")[0])
        if old is not None:
            st.code(old.text, language=None, wrap_lines=True)
        timed = next((k for k in cmp.report.kernels if k.name_b == name), None)
        if timed is not None and timed.us_a is not None and timed.us_b is not None:
            st.caption(f"measured median {timed.us_a:,.2f} → {timed.us_b:,.2f} µs")
        _baseline_history(nav, cmp, other.split("@")[0])


def _baseline_history(nav: Navigator, cmp: Comparing, name: str) -> None:
    """The per-node history on the baseline's side (its passes, when it has per-pass
    files); a step opens the baseline there, compared with this dump."""
    events, stages = baseline_history(cmp.base, cmp.pair.a, name)
    if not events:
        return
    st.caption(f"{len(events)} pass step{'s' if len(events) != 1 else ''} of the baseline "
               "changed it (click: show the baseline at that step):")
    for k, (e, stage) in enumerate(list(zip(events, stages))[:40]):
        target = e.name_after or e.name_before
        st.button(md(f"step {e.index} · {e.label} — {e.line}"[:220]),
                  key=f"base-hist:{name}:{k}", type="tertiary", on_click=go,
                  args=(_to_baseline_step, cmp.pair.a, stage, target))


def _to_baseline_step(state: ViewState, base_module: str, stage: str, name: str):
    new = N.swap_sides(state, base_module).with_(stage=stage, selected=name)
    return new, "node:" + name
