"""Pure builders for the explorer's panels: module summary, inspector, search, breadcrumb.

Each function takes model objects (and, for kernels, names and texts the app has read)
and returns a plain description the page places on screen. Nothing here reads files or
touches Streamlit, so every panel can be tested and reused by the CLI and exports.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import re2

from compiler_bridge import DumpModule, HloComputation, HloInstruction, HloModule
from compiler_bridge.hlo import layout_change
from compiler_bridge.dumps import LLVM_IR_NO_OPT, LLVM_IR_WITH_OPT, PTX, DumpFile
from compiler_bridge.hlo import backend_config_text

from . import categories as C


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


# --------------------------------------------------------------------------- modules

@dataclass(frozen=True)
class ModuleChoice:
    """One entry of the module picker."""

    id: str
    name: str
    label: str
    is_main: bool
    instructions: int | None = None   # None: not parsed (error or no HLO text)
    fusions: int | None = None
    error: str = ""


def module_choices(modules: Iterable[DumpModule], main_id: str | None,
                   stats: Mapping[str, Mapping | None],
                   errors: Mapping[str, str] | None = None) -> list[ModuleChoice]:
    """The picker's entries: the main program first, then by id, with counts.

    ``stats`` maps a module id to ``HloModule.stats()`` of the stage shown (or None),
    ``errors`` a module id to why it could not be read.
    """
    errors = errors or {}
    out = []
    for m in modules:
        s = stats.get(m.id)
        n = s.get("instructions") if s else None
        f = s.get("fusions") if s else None
        if n is not None:
            counts = f"{n:,} instructions, {f:,} fusions"
        elif m.id in errors:
            counts = "cannot be read"
        else:
            counts = "no HLO text"
        mark = "★ " if m.id == main_id else ""
        out.append(ModuleChoice(m.id, m.name, f"{mark}{m.name} · {m.id} — {counts}",
                                m.id == main_id, n, f, errors.get(m.id, "")))
    out.sort(key=lambda c: (not c.is_main, int(c.id) if c.id.isdigit() else 0, c.id))
    return out


@dataclass
class ModuleSummary:
    name: str
    computations: int
    instructions: int
    entry_instructions: int
    fusions: int
    fusion_kinds: dict[str, int]
    parameters: int
    parameter_bytes: int
    output_shape: str
    output_bytes: int
    layout_changes: int
    opcodes: dict[str, int]          # most frequent first
    attributes: dict[str, str]       # header attributes worth showing

    def metrics(self) -> list[tuple[str, str]]:
        kinds = ", ".join(f"{k} {v}" for k, v in self.fusion_kinds.items())
        return [
            ("Instructions", f"{self.instructions:,}"),
            ("ENTRY instructions", f"{self.entry_instructions:,}"),
            ("Computations", f"{self.computations:,}"),
            ("Fusions", f"{self.fusions:,}" + (f" ({kinds})" if kinds else "")),
            ("Parameters", f"{self.parameters} · {human_bytes(self.parameter_bytes)}"),
            ("Output", human_bytes(self.output_bytes)),
            ("Layout changes", f"{self.layout_changes:,}"),
        ]


_HEADER_KEYS = ("is_scheduled", "num_partitions", "replica_count", "entry_computation_layout",
                "input_output_alias", "buffer_donor", "allow_spmd_sharding_propagation_to_output")


def module_summary(module: HloModule) -> ModuleSummary:
    opcodes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    changes = 0
    for inst in module.instructions():
        opcodes[inst.opcode] += 1
        if inst.opcode == "fusion":
            kinds[inst.fusion_kind or "?"] += 1
        elif inst.opcode in ("copy", "transpose", "bitcast") and layout_change(inst) is not None:
            changes += 1
    entry = module.entry
    params = entry.parameters if entry is not None else []
    root = entry.root if entry is not None else None
    return ModuleSummary(
        name=module.name,
        computations=len(module.computations),
        instructions=sum(opcodes.values()),
        entry_instructions=len(entry.instructions) if entry is not None else 0,
        fusions=opcodes.get("fusion", 0),
        fusion_kinds=dict(kinds.most_common()),
        parameters=len(params),
        parameter_bytes=sum(p.shape.byte_size for p in params),
        output_shape=str(root.shape) if root is not None else "",
        output_bytes=root.shape.byte_size if root is not None else 0,
        layout_changes=changes,
        opcodes=dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))),
        attributes={k: module.attributes[k] for k in _HEADER_KEYS if k in module.attributes},
    )


def opcode_histogram(summary: ModuleSummary, top: int = 30):
    """A plotly bar chart of opcode counts, coloured by category (the graph's colours)."""
    import plotly.graph_objects as go

    items = list(summary.opcodes.items())
    shown, rest = items[:top], items[top:]
    if rest:
        shown.append((f"{len(rest)} other opcodes", sum(n for _, n in rest)))
    shown.reverse()   # largest at the top of a horizontal chart
    cats = [C.category(op) if not op.endswith("opcodes") else C.OTHER for op, _ in shown]
    fig = go.Figure(go.Bar(
        x=[n for _, n in shown], y=[op for op, _ in shown], orientation="h",
        marker={"color": [C.COLORS[c] for c in cats],
                "line": {"color": [C.BORDERS[c] for c in cats], "width": 1}},
        customdata=cats, hovertemplate="%{y}: %{x} (%{customdata})<extra></extra>"))
    fig.update_layout(
        height=max(220, 22 * len(shown) + 60), margin={"l": 10, "r": 10, "t": 30, "b": 10},
        title={"text": f"Opcodes in {summary.name} ({summary.instructions:,} instructions)",
               "font": {"size": 13}},
        xaxis={"title": None}, yaxis={"title": None, "automargin": True},
        plot_bgcolor="rgba(0,0,0,0)", showlegend=False)
    return fig


# --------------------------------------------------------------------------- computations

def call_role(inst: HloInstruction, computation: str) -> str:
    """How ``inst`` uses ``computation``: 'body', 'condition', 'branch 1', 'to_apply'..."""
    if inst.opcode == "fusion":
        return "fused computation"
    if inst.opcode == "while":
        if inst.body == computation:
            return "body"
        if inst.condition == computation:
            return "condition"
    if inst.opcode == "conditional":
        branches = inst.branch_computations
        if computation in branches:
            if "true_computation" in inst.attributes or "false_computation" in inst.attributes:
                true = inst.attribute("true_computation") or ""
                return "true branch" if true.lstrip("%") == computation else "false branch"
            return f"branch {branches.index(computation)}"
    if inst.to_apply == computation:
        return "to_apply"
    return "calls"


def called_computations(inst: HloInstruction) -> list[tuple[str, str]]:
    """(role, computation) for every computation the instruction calls, in written order."""
    return [(call_role(inst, name), name) for name in dict.fromkeys(inst.called_names)]


@dataclass(frozen=True)
class Crumb:
    computation: str
    label: str
    via: str = ""          # the calling instruction, '' for the ENTRY


def breadcrumb(module: HloModule, computation: str | None) -> list[Crumb]:
    """The call path ENTRY › ... › computation (through the first caller of each)."""
    entry = module.entry
    comp = module.get_computation(computation) if computation else entry
    if comp is None or entry is None:
        return [Crumb(entry.name, f"ENTRY {entry.name}")] if entry is not None else []
    callers = module.callers()
    chain: list[Crumb] = []
    seen: set[str] = set()
    cur: HloComputation | None = comp
    while cur is not None and cur.name != entry.name and cur.name not in seen:
        seen.add(cur.name)
        users = callers.get(cur.name) or []
        if not users:
            chain.append(Crumb(cur.name, cur.name))
            break
        inst = users[0]
        chain.append(Crumb(cur.name, f"{inst.name} › {call_role(inst, cur.name)}", inst.name))
        cur = inst.computation
    chain.append(Crumb(entry.name, f"ENTRY {entry.name}"))
    chain.reverse()
    return chain


@dataclass(frozen=True)
class ComputationChoice:
    name: str
    label: str
    is_fusion: bool


def computation_choices(module: HloModule, include_fused: bool = False) -> list[ComputationChoice]:
    """ENTRY first, then called computations (while bodies, branches, reducers...) in file
    order; fused computations only when asked (they open in place inside the graph)."""
    callers = module.callers()
    out = []
    entry = module.entry
    if entry is not None:
        out.append(ComputationChoice(entry.name, f"ENTRY {entry.name} ({len(entry):,})", False))
    for comp in module.computations:
        if comp is entry or (comp.is_fusion and not include_fused):
            continue
        users = callers.get(comp.name) or []
        role = f"{call_role(users[0], comp.name)} of {users[0].name}" if users else "not called"
        more = f" +{len(users) - 1}" if len(users) > 1 else ""
        out.append(ComputationChoice(comp.name, f"{comp.name} — {role}{more} ({len(comp):,})",
                                     comp.is_fusion))
    return out


@dataclass(frozen=True)
class Location:
    """Where an instruction is drawn: the computation to show and the fusions to open."""

    computation: str
    expand: tuple[str, ...] = ()     # fusion group ids, outermost first
    anchor: str = ""                 # the instruction in ``computation`` standing for it


def locate(module: HloModule, name: str) -> Location | None:
    """An instruction inside fused computations is shown in the computation that calls
    the outermost fusion, with each enclosing fusion opened."""
    inst = module.find(name)
    if inst is None or inst.computation is None:
        return None
    callers = module.callers()
    comp = inst.computation
    expand: list[str] = []
    anchor = inst.name
    seen: set[str] = set()
    while comp.is_fusion and comp.name not in seen:
        seen.add(comp.name)
        users = [u for u in callers.get(comp.name, []) if u.opcode == "fusion"]
        if not users or users[0].computation is None:
            break
        expand.append("fusion:" + users[0].name)
        anchor = users[0].name
        comp = users[0].computation
    expand.reverse()
    return Location(comp.name, tuple(expand), anchor)


# --------------------------------------------------------------------------- inspector

@dataclass(frozen=True)
class Ref:
    """An operand or user as the inspector lists it."""

    name: str
    opcode: str
    shape: str


@dataclass(frozen=True)
class ShapePart:
    shape: str
    layout: str
    bytes: int


@dataclass
class Inspector:
    name: str
    opcode: str
    computation: str
    text: str                          # the full HLO line
    shape: str
    parts: list[ShapePart]             # one per array leaf (one for an array shape)
    bytes: int
    operands: list[Ref]
    users: list[Ref]
    op_name: str
    source: str                        # 'file:line:col (function)' or ''
    source_stack: list[str]            # callers, innermost first
    backend_config: str                # pretty JSON or text, '' when absent
    attributes: list[tuple[str, str]]  # other attributes, verbatim
    called: list[tuple[str, str]]      # (role, computation)
    fusion_kind: str = ""
    fused_computation: str = ""
    fused_lines: list[str] = field(default_factory=list)
    fused_ops: int = 0                 # C.fused_ops: what the node's label counts
    layout_change: str = ""
    is_root: bool = False
    file_line: int = 0
    in_fusion: str = ""                # the fusion whose fused computation holds it

    @property
    def is_fusion(self) -> bool:
        return self.opcode == "fusion"


_SHOWN_ELSEWHERE = {"metadata", "backend_config", "calls", "to_apply", "body", "condition",
                    "branch_computations", "true_computation", "false_computation"}


def _ref(inst: HloInstruction) -> Ref:
    return Ref(inst.name, inst.opcode, str(inst.shape))


def inspect(module: HloModule, name: str) -> Inspector | None:
    """Everything the inspector shows for one instruction (None if the module lacks it)."""
    inst = module.find(name)
    if inst is None:
        return None
    shape = inst.shape
    leaves = shape.leaves() if shape.is_tuple else [shape]
    parts = [ShapePart(str(s), str(s.layout) if s.layout is not None else "", s.byte_size)
             for s in leaves]
    loc = module.source_location(inst)
    try:
        config = backend_config_text(inst.backend_config)
    except ValueError as e:   # a value the bridge cannot decode is shown verbatim
        config = f"{inst.attribute('backend_config', '')}\n(not decoded: {e})"
    try:
        attrs = [(k, v) for k, v in inst.attributes.items() if k not in _SHOWN_ELSEWHERE]
    except ValueError:
        attrs = [("attributes", inst.attributes_text)]
    out = Inspector(
        name=inst.name, opcode=inst.opcode,
        computation=inst.computation.name if inst.computation is not None else "",
        text=inst.text, shape=str(shape), parts=parts, bytes=shape.byte_size,
        operands=[_ref(o) for o in inst.operands], users=[_ref(u) for u in inst.users],
        op_name=_op_name(inst),
        source=str(loc) if loc is not None else "",
        source_stack=[str(c) for c in loc.callers] if loc is not None else [],
        backend_config=config, attributes=attrs, called=called_computations(inst),
        is_root=inst.is_root, file_line=inst.line)
    if inst.opcode == "fusion":
        out.fusion_kind = inst.fusion_kind or ""
        fused = module.get_computation(inst.called_names[0]) if inst.called_names else None
        if fused is not None:
            out.fused_computation = fused.name
            out.fused_lines = [i.text for i in fused.instructions]
            out.fused_ops = C.fused_ops(fused.instructions)
    comp = inst.computation
    if comp is not None and comp.is_fusion:
        users = [u for u in module.callers().get(comp.name, []) if u.opcode == "fusion"]
        out.in_fusion = users[0].name if users else ""
    out.layout_change = C.layout_change_reason(inst, module)
    return out


# characters of the HLO line a card shipped with the graph carries; the selected node's
# card, sent by the server, carries up to SELECTED_CARD_TEXT: a constant printed in full
# (--xla_dump_large_constants) is megabytes on one line, which the page would send on
# every rerun and the browser lay out in one block
CARD_TEXT = 600
SELECTED_CARD_TEXT = 100_000


def card(module: HloModule, inst: HloInstruction, text_limit: int | None = None
         ) -> dict[str, object]:
    """The inspector's header for one instruction as plain JSON (the browser draws it the
    moment a node is clicked): name, opcode, where it is, its HLO line, shape, bytes,
    layouts, op_name, source line and a layout change."""
    shape = inst.shape
    leaves = shape.leaves() if shape.is_tuple else [shape]
    layouts = [str(s.layout) for s in leaves if s.layout is not None]
    loc = _safe(lambda: module.source_location(inst), None)
    text = inst.text
    if text_limit is not None and len(text) > text_limit:
        text = text[: text_limit - 1] + "…"
    elif len(text) > SELECTED_CARD_TEXT:
        text = (text[:SELECTED_CARD_TEXT] + f"… ({len(text) - SELECTED_CARD_TEXT:,} more "
                f"characters: the whole instruction is line {inst.line} of the file)")
    nbytes = shape.byte_size
    out: dict[str, object] = {
        "name": inst.name, "opcode": inst.opcode,
        "computation": inst.computation.name if inst.computation is not None else "",
        "line": inst.line, "text": text, "shape": str(shape),
        "bytes": human_bytes(nbytes) + (f" ({nbytes:,})" if nbytes >= 1024 else ""),
        "layouts": layouts[:8], "more_layouts": len(layouts) > 8,
        "op_name": _op_name(inst), "source": str(loc) if loc is not None else ""}
    if inst.opcode == "fusion" and inst.fusion_kind:
        out["kind"] = inst.fusion_kind
    if inst.is_root:
        out["root"] = True
    reason = C.layout_change_reason(inst, module)
    if reason:
        out["layout_change"] = reason
    return out


def cards(module: HloModule, names: Iterable[str]) -> dict[str, dict[str, object]]:
    """Cards of the instructions drawn in a view (their HLO lines clipped to CARD_TEXT)."""
    out = {}
    for name in names:
        inst = module.find(name)
        if inst is not None:
            out[name] = card(module, inst, CARD_TEXT)
    return out


def _op_name(inst: HloInstruction) -> str:
    try:
        return inst.op_name
    except ValueError:
        return ""


def _source_location(module: HloModule, inst: HloInstruction):
    try:
        return module.source_location(inst)
    except ValueError:
        return None


def _safe(fn, default):
    try:
        return fn()
    except ValueError:
        return default


# --------------------------------------------------------------------------- search

@dataclass(frozen=True)
class Hit:
    name: str
    opcode: str
    shape: str
    op_name: str
    computation: str
    field: str          # which field matched: 'name', 'opcode', 'op_name', 'shape', 'source'


@dataclass
class SearchResult:
    query: str
    hits: list[Hit]
    total: int
    error: str = ""
    stopped: str = ""   # why the search stopped before the end (its time budget): the hits
    #                     are those found until then


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.case_sensitive = False
_RE2_OPTIONS.never_capture = True
_RE2_OPTIONS.log_errors = False           # the message goes to the user, not to stderr
_RE2_OPTIONS.max_mem = 8 << 20            # a pattern that compiles bigger is refused
# seconds of work a regex search may take: RE2 is linear in the text, but a pattern such as
# [s/0-9].{1000}[s/0-9].{1000}[s/0-9]{1000}# costs thousands of steps per character, and a
# catastrophic search burned 113-176 s of CPU per tab (issue 33)
SEARCH_BUDGET = 2.0
_FIELDS = ("name", "opcode", "op_name", "shape", "source")
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_search_worker.py")


def search(module: HloModule, query: str, *, regex: bool = False,
           limit: int = 500, budget: float | None = None) -> SearchResult:
    r"""Instructions whose name, opcode, op_name, shape or source location (file:line and
    function) matches, case-insensitive.

    Exact name and opcode matches come first, then file order. A bad regular
    expression is reported in ``error``, never raised. Patterns run on RE2, whose time is
    linear in the text: Python's ``re`` backtracks, and one pattern such as ``(\w+\W?)+#``
    held the interpreter (and every visitor's page) for minutes. RE2 has no
    backreferences or lookaround; such a pattern is reported as unsupported. A regex search
    runs in a child process stopped after ``budget`` seconds (default ``SEARCH_BUDGET``;
    ``stopped`` says so; the hits
    are those found by then): one RE2 call cannot be interrupted.
    """
    query = query.strip()
    if not query:
        return SearchResult(query, [], 0)
    texts = [(inst, _op_name(inst), str(inst.shape)) for inst in module.instructions()]
    if regex:
        try:
            re2.compile(query, _RE2_OPTIONS)
        except re2.error as e:
            why = e.args[0] if e.args else e
            why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
            return SearchResult(query, [], 0, f"bad regular expression (RE2 syntax): {why}")
        matched, stopped = _regex_matches(module, query, texts,
                                          SEARCH_BUDGET if budget is None else budget)
    else:
        needle = query.lower()
        matched, stopped = {}, ""
        for idx, (inst, op_name, shape) in enumerate(texts):
            for field, text in enumerate((inst.name, inst.opcode, op_name, shape)):
                if text and needle in text.lower():
                    matched[idx] = _FIELDS[field]
                    break
            else:
                loc = _source_location(module, inst)
                if loc is not None and needle in str(loc).lower():
                    matched[idx] = "source"
    exact = query.lower().lstrip("%")
    ranked: list[tuple[int, int, Hit]] = []
    for idx, which in matched.items():
        inst, op_name, shape = texts[idx]
        rank = 0 if inst.name.lower() == exact else 1 if inst.opcode == exact else 2
        comp = inst.computation.name if inst.computation is not None else ""
        ranked.append((rank, idx, Hit(inst.name, inst.opcode, shape, op_name, comp, which)))
    ranked.sort(key=lambda t: (t[0], t[1]))
    return SearchResult(query, [h for _, _, h in ranked[:limit]], len(ranked),
                        stopped=stopped)


def _regex_matches(module: HloModule, query: str, texts: list, budget: float
                   ) -> tuple[dict[int, str], str]:
    """{instruction index: field matched} from the worker process, and why it stopped
    early ('' when it searched them all)."""
    job = json.dumps({"pattern": query, "max_mem": _RE2_OPTIONS.max_mem, "texts": [
        [inst.name, inst.opcode, op_name, shape,
         str(loc) if (loc := _source_location(module, inst)) is not None else ""]
        for inst, op_name, shape in texts]})
    proc = subprocess.Popen([sys.executable, _WORKER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    killed = False
    try:
        out, _ = proc.communicate(job.encode(), timeout=budget)
    except subprocess.TimeoutExpired:
        proc.kill()
        killed = True
        out, _ = proc.communicate()
    matched: dict[int, str] = {}
    done = 0
    for line in out.decode().splitlines():
        if line.startswith("@"):
            done = int(line[1:])
        elif line:
            idx, field = line.split()
            matched[int(idx)] = _FIELDS[int(field)]
            done = max(done, int(idx) + 1)
    if done >= len(texts):
        return matched, ""
    if not killed:
        return matched, (f"the search failed after {done:,} of {len(texts):,} instructions "
                         f"(its process ended with status {proc.returncode})")
    return matched, (f"the search stopped after its {budget:g} s budget, {done:,} of "
                     f"{len(texts):,} instructions searched: this pattern costs too much on "
                     "this module's text (a long repeat such as .{1000}); a simpler one "
                     "searches it all")


# --------------------------------------------------------------------------- kernels

def kernel_names(inst_name: str) -> list[str]:
    """The names XLA gives a kernel compiled for an instruction, most specific first.

    CPU: ``<fusion>_kernel_module`` (``broadcast_add_fusion.1_kernel_module``) and
    ``__compute_module_<op>``; GPU: the instruction name with '.' and '-' as '_'.
    """
    mangled = re.sub(r"[.\-]", "_", inst_name)
    names = [f"{inst_name}_kernel_module", f"__compute_module_{inst_name}", inst_name,
             f"{mangled}_kernel_module", mangled]
    return list(dict.fromkeys(names))


_KERNEL_KINDS = (LLVM_IR_WITH_OPT, PTX, LLVM_IR_NO_OPT)


def kernel_files(module: DumpModule, inst_name: str) -> list[DumpFile]:
    """The dump's per-kernel files for an instruction: optimized LLVM IR, PTX, then
    unoptimized IR (empty when XLA wrote none for it)."""
    by_kernel = module.kernels
    out: list[DumpFile] = []
    for kernel in kernel_names(inst_name):
        for f in by_kernel.get(kernel, []):
            if f.kind in _KERNEL_KINDS and f not in out:
                out.append(f)
    out.sort(key=lambda f: _KERNEL_KINDS.index(f.kind))
    return out


def shared_kernel_files(module: DumpModule) -> list[DumpFile]:
    """Files that hold several kernels (``part_00`` IR, a whole-module ``.ptx``)."""
    taken = set()
    for f in module.files:
        if f.kind in _KERNEL_KINDS and f.kernel and (
                f.kernel.endswith("_kernel_module") or f.kernel.startswith("__compute_module_")):
            taken.add(f.path)
    return sorted((f for f in module.files if f.kind in (LLVM_IR_WITH_OPT, PTX)
                   and f.path not in taken),
                  key=lambda f: _KERNEL_KINDS.index(f.kind))


def extract_function(text: str, name: str, language: str) -> str | None:
    """One function of an LLVM IR module (``define ... @name(``) or a PTX ``.entry``."""
    candidates = [name, re.sub(r"[.\-]", "_", name)]
    for cand in dict.fromkeys(candidates):
        if language == "ptx":
            m = re.search(r"^[^\n]*\.entry\s+" + re.escape(cand) + r"\s*\(", text, re.MULTILINE)
        else:
            m = re.search(r"^define [^\n]*@(?:" + re.escape(cand) + r"|\"" + re.escape(cand)
                          + r"\")\(", text, re.MULTILINE)
        if m is None:
            continue
        if language == "ptx":
            start = text.find("{", m.end())
            if start < 0:
                return text[m.start():]
            depth, i = 0, start
            while i < len(text):
                if text[i] == "{":
                    depth += 1
                elif text[i] == "}":
                    depth -= 1
                    if depth == 0:
                        return text[m.start(): i + 1]
                i += 1
            return text[m.start():]
        end = re.compile(r"^}\s*$", re.MULTILINE).search(text, m.end())
        return text[m.start(): end.end() if end else len(text)]
    return None


def file_language(f: DumpFile) -> str:
    return "ptx" if f.kind == PTX else "llvm"
