"""A ``--xla_dump_to`` folder (or a .zip / .tar.gz of one): its files, grouped by module.

Opening a dump reads file names and sizes only; HLO text is parsed when asked for and
cached. A file that cannot be read or parsed is reported in ``Dump.errors`` and never
hides the rest of the dump.

``Dump.key`` is the dump's content identity, what caches of anything computed from it
are keyed by: the store's content hash when the dump came from the store, else
:func:`path_key` (its path and a fingerprint of its files' names, sizes and times).
"""

from __future__ import annotations

import builtins
import hashlib
import io
import os
import posixpath
import re
import shutil
import stat
import tempfile
import threading
import weakref
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable, TypeVar

from . import archive, loose
from .program import names_its_function, proto_names_its_function
from .errors import DumpError
from ..hlo import HloParseError
from ..hlo import HloModule
from ..hlo import parse_hlo_bytes
from ..hlo import EXPECTED, HLO_PROTO_BINARY, MLIR_TEXT, sniff, to_hlo_text
from ..targets import split_compile_id

__all__ = ["DUMP_EXPECTED", "Dump", "DumpError", "DumpFile", "DumpModule", "PassInfo",
           "classify", "open_dump", "path_key", "require_modules"]

# what a dump holds, said when it holds none of it (refused uploads, an empty TF page)
DUMP_EXPECTED = ("expected files named module_NNNN.<name>.*, as --xla_dump_to writes, TF "
                 "graph dumps (*.pbtxt, *.pb) from TF_DUMP_GRAPH_PREFIX, or "
                 + EXPECTED.removeprefix("expected "))

T = TypeVar("T")


# File kinds, one name each, as the UI shows them.
BEFORE = "before_optimizations"
AFTER = "after_optimizations"
# XLA:TPU's <base>after_optimizations_before_buffer_assignment.txt: the module after its
# last HLO pass, before buffer assignment (which may still set backend configs); a step
# between the last pass file and after_optimizations
BEFORE_BUFFER_ASSIGNMENT = "before_buffer_assignment"
# XLA:TPU's module after code generation (``after_codegen.txt``): the after-optimizations
# module with each kernel's window_config and estimated cycles; a stage after AFTER
AFTER_CODEGEN = "after_codegen"
PASS = "pass"
BUFFER_ASSIGNMENT = "buffer_assignment"
BUFFER_ASSIGNMENT_VALUES = "buffer_assignment_values"
LIVE_RANGE = "live_range"
MEMORY_USAGE_REPORT = "memory_usage_report"
DEBUG_OPTIONS = "debug_options"
LLVM_IR_NO_OPT = "llvm_ir_no_opt"
LLVM_IR_WITH_OPT = "llvm_ir_with_opt"
OBJECT_FILE = "object_file"
PTX = "ptx"
THUNK_SEQUENCE = "thunk_sequence"
AUTOTUNE_RESULTS = "autotune_results"
GPU_TARGET_CONFIG = "gpu_target_config"
DOT = "dot"
HTML = "html"
FUSION_VISUALIZATION = "fusion_visualization"
MLIR = "mlir"
COMPILE_OPTIONS = "compile_options"
TOPOLOGY = "topology"
HLO_PROTO = "hlo_proto"
TRACE = "trace"
XPLANE = "xplane"
UNKNOWN = "unknown"
# --- TF graph dumps (TF_DUMP_GRAPH_PREFIX): GraphDef / FunctionDef files, read by
# compiler_bridge.tf; this module only names them
TF_GRAPH = "tf_graph"
_TF_GRAPH_SUFFIXES = (".pbtxt", ".pb")
# ---

HLO_TEXT_KINDS = (BEFORE, AFTER, PASS, AFTER_CODEGEN)
# The stage of a module's StableHLO (its module.mlir: what JAX handed XLA), converted to HLO
# by jaxlib when opened. It precedes before_optimizations; a stage, not a file kind (the
# file stays MLIR).
STABLEHLO = "stablehlo"

_MODULE = re.compile(r"(?:(\d+)\.)?module_(\d+)\.(.+)")
_AFTER = re.compile(
    r"(?:(.+)_)?after_optimizations"
    r"(-buffer-assignment-values|-buffer-assignment|-live-range|-memory-usage-report)?\.txt")
_AFTER_KINDS = {None: AFTER, "-buffer-assignment": BUFFER_ASSIGNMENT,
                "-buffer-assignment-values": BUFFER_ASSIGNMENT_VALUES,
                "-live-range": LIVE_RANGE, "-memory-usage-report": MEMORY_USAGE_REPORT}
_CODEGEN = re.compile(r"(?:(.+)_)?after_codegen\.txt")
_BEFORE_BA = re.compile(r"(?:(.+)_)?after_optimizations_before_buffer_assignment\.txt")
_PASS = re.compile(r"(\d+)\.(.+?)\.after_(.+?)(?:\.before_(.+))?\.txt")
# a snapshot from inside a pass (XLA's DumpHloModuleDuringPassIfEnabled): SSSS.<pass>.<step>,
# the step free text (libtpu's tpu-tiling-rewriter.before_tiling_rewriter)
_DURING_PASS = re.compile(r"(\d{4,})\.([^.]+)\.([^.]+)\.txt")
_NAMED_PASS = re.compile(r"(.+?)\.\d{4,}\.[^.]+\.after_")
_FUSION_VIS = re.compile(r"(.*)\.module_(\d+)\.(.+)\._fusion\.html")


@dataclass(frozen=True, slots=True)
class PassInfo:
    """What a per-pass file name says: ``SSSS.<pipeline>.after_<pass>.before_<next>.txt``."""

    sequence: int
    pipeline: str
    after: str        # the pass that ran ('pipeline-start' opens a pipeline)
    before: str       # the next pass, '' when the name has no before_ part


def _pass_info(rest: str) -> PassInfo | None:
    """What a per-pass file's name after ``<base>`` says (None: not a per-pass file):
    ``SSSS.<pipeline>.after_<pass>.before_<next>.txt`` between passes, or
    ``SSSS.<pass>.<step>.txt`` from inside one (the step as its ``after``)."""
    p = _PASS.fullmatch(rest)
    if p:
        return PassInfo(int(p.group(1)), p.group(2), p.group(3), p.group(4) or "")
    p = _DURING_PASS.fullmatch(rest)
    if p:
        return PassInfo(int(p.group(1)), p.group(2), p.group(3), "")
    return None


@dataclass(frozen=True, slots=True)
class DumpFile:
    path: str                   # posix path inside the dump
    size: int
    kind: str
    module_id: str | None = None
    module_name: str | None = None
    platform: str = ""          # 'cpu', 'sm_8.0_gpu', ... for after_optimizations files
    pass_info: PassInfo | None = None
    kernel: str | None = None   # per-kernel files (.ll, .o, .ptx)
    source: str = ""            # a stage read from MLIR or a proto ('mlir', 'hlo_proto'):
                                # parse converts it to HLO text first (loose.py); a
                                # module's .mlir files are 'mlir' too
    stamp: str = ""             # --xla_dump_include_timestamp's prefix ('' when none)

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


@dataclass(slots=True)
class DumpModule:
    """Every file of one compiled module (one ``module_NNNN.<name>``). ``name`` is the
    program's; ``compile_id`` what XLA:TPU's file names add to it (``cl_933746096`` of
    ``module_0000.jit_f.cl_933746096.*``; '' elsewhere)."""

    id: str
    name: str
    files: list[DumpFile] = field(default_factory=list)
    compile_id: str = ""

    def of_kind(self, kind: str) -> list[DumpFile]:
        return [f for f in self.files if f.kind == kind]

    def first(self, kind: str) -> DumpFile | None:
        for f in self.files:
            if f.kind == kind:
                return f
        return None

    @property
    def before_optimizations(self) -> DumpFile | None:
        return self.first(BEFORE)

    @property
    def after_optimizations(self) -> DumpFile | None:
        return self.first(AFTER)

    @property
    def stablehlo(self) -> DumpFile | None:
        """The module's StableHLO: ``module.mlir`` in its ``module_NNNN.<name>/`` folder (or
        ``<base>module.mlir`` beside its files); other .mlir files (emitters' MLIR) are not
        StableHLO."""
        for f in self.of_kind(MLIR):
            if f.name == "module.mlir" or f.name.endswith(".module.mlir"):
                return f
        return None

    @property
    def passes(self) -> list[DumpFile]:
        """Per-pass snapshots in sequence order."""
        return sorted(self.of_kind(PASS),
                      key=lambda f: f.pass_info.sequence if f.pass_info is not None else -1)

    @property
    def kernels(self) -> dict[str, list[DumpFile]]:
        out: dict[str, list[DumpFile]] = {}
        for f in self.files:
            if f.kernel:
                out.setdefault(f.kernel, []).append(f)
        return out

    def file_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.files:
            counts[f.kind] = counts.get(f.kind, 0) + 1
        return dict(sorted(counts.items()))

    @property
    def label(self) -> str:
        return f"{self.id} {self.name}"

    @property
    def number(self) -> int:
        """XLA's module id as a number (what a trace's program id is): ``id`` is
        ``0004.jit_f`` where two runs wrote module_0004 into one folder, ``0004@<stamp>``
        where they did with ``--xla_dump_include_timestamp`` (ARCHITECTURE §9.1)."""
        return int(re.split(r"[.@]", self.id, maxsplit=1)[0])


def classify(path: str, size: int = 0,
             module_names: dict[str, str | tuple[str, ...]] | None = None) -> DumpFile:
    """Kind and module of one file, from its path alone. ``module_names``: id -> the name
    (or the names, when runs written into one folder reused the id) its files end."""
    base = posixpath.basename(path)
    parent = posixpath.basename(posixpath.dirname(path))
    if base.endswith(".xplane.pb"):
        return DumpFile(path, size, XPLANE)
    if base == "perfetto_trace.json.gz" or base.endswith(".trace.json.gz") \
            or base.endswith(".trace.json"):
        return DumpFile(path, size, TRACE)
    # files inside a module_NNNN.<name>/ subfolder (module.mlir, compile_options...)
    mp = _MODULE.fullmatch(parent)
    if mp and not _MODULE.fullmatch(base):
        mid, mname = mp.group(2), mp.group(3)
        if _in_shardy(path):
            mname = _shardy_module(mid, mname, module_names)
        kind = {"module.mlir": MLIR, "compile_options.textproto": COMPILE_OPTIONS,
                "topology.textproto": TOPOLOGY}.get(base)
        if kind is None:
            kind = MLIR if base.endswith(".mlir") else UNKNOWN
        return DumpFile(path, size, kind, mid, mname, source=MLIR_TEXT if kind == MLIR else "")
    fv = _FUSION_VIS.fullmatch(base)
    if fv:
        return DumpFile(path, size, FUSION_VISUALIZATION, fv.group(2), fv.group(3),
                        kernel=fv.group(1))
    m = _MODULE.fullmatch(base)
    if not m:
        if base.endswith(_TF_GRAPH_SUFFIXES):       # TF graph dumps
            return DumpFile(path, size, TF_GRAPH)
        return DumpFile(path, size, UNKNOWN)
    mid, rest = m.group(2), m.group(3)
    known = (module_names or {}).get(mid) or ()
    for name in sorted((known,) if isinstance(known, str) else known, key=len, reverse=True):
        if rest.startswith(name + "."):
            mname, rest = name, rest[len(name) + 1:]
            break
        if rest == name:
            return DumpFile(path, size, UNKNOWN, mid, name)
    else:
        mname, _, rest = rest.partition(".")
    f = _classify_rest(path, size, mid, mname, rest)
    return replace(f, stamp=m.group(1)) if m.group(1) else f


def _classify_rest(path: str, size: int, mid: str, mname: str, rest: str) -> DumpFile:
    if rest == "before_optimizations.txt":
        return DumpFile(path, size, BEFORE, mid, mname)
    a = _AFTER.fullmatch(rest)
    if a:
        return DumpFile(path, size, _AFTER_KINDS[a.group(2)], mid, mname, platform=a.group(1) or "")
    b = _BEFORE_BA.fullmatch(rest)
    if b:
        return DumpFile(path, size, BEFORE_BUFFER_ASSIGNMENT, mid, mname,
                        platform=b.group(1) or "")
    c = _CODEGEN.fullmatch(rest)
    if c:
        return DumpFile(path, size, AFTER_CODEGEN, mid, mname, platform=c.group(1) or "")
    info = _pass_info(rest)
    if info is not None:
        return DumpFile(path, size, PASS, mid, mname, pass_info=info)
    if rest == "debug_options":
        return DumpFile(path, size, DEBUG_OPTIONS, mid, mname)
    for suffix, kind in ((".ir-no-opt.ll", LLVM_IR_NO_OPT), (".ir-with-opt.ll", LLVM_IR_WITH_OPT)):
        if rest.endswith(suffix):
            return DumpFile(path, size, kind, mid, mname, kernel=rest[: -len(suffix)])
        if rest == suffix[1:]:
            return DumpFile(path, size, kind, mid, mname)
    if rest.startswith("obj-file.") and rest.endswith(".o"):
        return DumpFile(path, size, OBJECT_FILE, mid, mname, kernel=rest[9:-2])
    if rest.endswith(".o"):
        return DumpFile(path, size, OBJECT_FILE, mid, mname, kernel=rest[:-2] or None)
    if rest == "ptx" or rest.endswith(".ptx"):
        return DumpFile(path, size, PTX, mid, mname, kernel=rest[:-4] or None)
    if rest.startswith("thunk_sequence"):
        return DumpFile(path, size, THUNK_SEQUENCE, mid, mname)
    if rest.startswith("autotune_results"):
        return DumpFile(path, size, AUTOTUNE_RESULTS, mid, mname)
    if rest.startswith("gpu_target_config"):
        return DumpFile(path, size, GPU_TARGET_CONFIG, mid, mname)
    if rest.endswith(".dot"):
        return DumpFile(path, size, DOT, mid, mname)
    if rest.endswith(".html"):
        return DumpFile(path, size, HTML, mid, mname)
    if rest.endswith(".mlir"):
        return DumpFile(path, size, MLIR, mid, mname, source=MLIR_TEXT)
    if rest.endswith(".pb") or rest.endswith(".pbtxt"):
        return DumpFile(path, size, HLO_PROTO, mid, mname)
    return DumpFile(path, size, UNKNOWN, mid, mname)


def _in_shardy(path: str) -> bool:
    """A file of Shardy's per-pass dump (``shardy/module_NNNN.<name>/NN.<step>.mlir``,
    its propagation's MLIR, with ``--xla_dump_hlo_pass_re``), not a module of its own."""
    return posixpath.basename(posixpath.dirname(posixpath.dirname(path))) == "shardy"


def _shardy_module(mid: str, mname: str,
                   module_names: dict[str, str | tuple[str, ...]] | None) -> str:
    """The module Shardy's folder belongs to: XLA:TPU's name adds '.cl_<N>' to the one
    Shardy's folder carries (module_0000.jit_f.cl_933746096 and shardy/module_0000.jit_f)."""
    known = (module_names or {}).get(mid) or ()
    names = (known,) if isinstance(known, str) else known
    return next((n for n in names if n == mname or n.startswith(mname + ".")), mname)


def _module_names(paths: list[str]) -> dict[str, str | tuple[str, ...]]:
    """Module id -> name, from files whose names end the name for sure; the names in
    order where runs written into one folder gave one id to several modules."""
    found: dict[str, list[str]] = {}
    folders: dict[str, str] = {}
    for path in paths:
        base = posixpath.basename(path)
        m = _MODULE.fullmatch(base)
        if m is None:
            m = _MODULE.fullmatch(posixpath.basename(posixpath.dirname(path)))
            if m and not _in_shardy(path):
                folders.setdefault(m.group(2), m.group(3))
            continue
        rest = m.group(3)
        for end in (".before_optimizations.txt", ".debug_options"):
            if rest.endswith(end) and rest[: -len(end)] not in found.setdefault(m.group(2), []):
                found[m.group(2)].append(rest[: -len(end)])
        # a module with per-pass files alone (XLA:GPU compiles a fusion again as a module
        # named after it: module_0002.fused_add.1.0000.<pipeline>.after_...): the name is
        # what precedes the first four-digit sequence of a pass file's name
        p = _NAMED_PASS.match(rest)
        if p:
            folders.setdefault(m.group(2), p.group(1))
    names: dict[str, str | tuple[str, ...]] = dict(folders)
    for mid, ns in found.items():
        names[mid] = ns[0] if len(ns) == 1 else tuple(ns)
    return names


class _Source:
    """Where the bytes of a dump live: a folder or a zip."""

    def list(self) -> list[tuple[str, int]]:
        raise NotImplementedError

    def read(self, path: str) -> bytes:
        raise NotImplementedError

    def identity(self) -> str:
        """:func:`path_key` of what was listed (call after ``list``)."""
        raise NotImplementedError

    def skipped(self) -> builtins.list[tuple[str, str]]:
        """(path, why) of what ``list`` found but could not list (a broken link)."""
        return []


def walk_folder(root: str, skipped: list[tuple[str, str]] | None = None
                ) -> list[tuple[str, int, int]]:
    """(posix path inside ``root``, size, mtime in ns) of every file. Links are followed:
    a folder the user points at may be assembled from links (a build system's outputs,
    ``ln -s`` of files from several runs), and its files are what they point at. A link to
    nothing, or to a folder it sits in (a cycle), is left out and, with ``skipped``, named
    there with why. (Only folders an operator names hold links: an archive with a link
    is refused, and the store keeps copies of the files a link points at.)"""
    out = []
    top = os.stat(root)
    stack: list[tuple[str, frozenset[tuple[int, int]]]] = [
        ("", frozenset([(top.st_dev, top.st_ino)]))]
    while stack:
        rel, above = stack.pop()
        with os.scandir(os.path.join(root, rel)) as it:
            for e in it:
                p = f"{rel}/{e.name}" if rel else e.name
                try:
                    st = e.stat()          # the target's, for a link
                except OSError as err:
                    if skipped is not None:
                        skipped.append((p, _broken_link(e.path, err)))
                    continue
                if stat.S_ISDIR(st.st_mode):
                    ident = (st.st_dev, st.st_ino)
                    if ident in above:
                        if skipped is not None:
                            skipped.append((p, "a link to a folder it is inside (a cycle); "
                                               "not followed"))
                        continue
                    try:                   # as deep as an archive's members may be
                        archive.too_deep(p + "/", "folder")
                    except archive.ArchiveError as err:
                        raise DumpError(f"{root}: {err}") from None
                    stack.append((p, above | {ident}))
                elif stat.S_ISREG(st.st_mode):
                    out.append((p, st.st_size, st.st_mtime_ns))
    return out


def _broken_link(path: str, err: OSError) -> str:
    try:
        return f"a link to {os.readlink(path)!r}, which does not exist; expected a file"
    except OSError:
        return f"cannot be read: {err.strerror or err}"


def _folder_key(root: str, entries: list[tuple[str, int, int]]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p, size, mtime in sorted(entries):
        h.update(f"{p}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
    return f"{os.path.abspath(root)}@{h.hexdigest()}"


def path_key(path: str | os.PathLike) -> str:
    """The identity of the dump at ``path``, without reading its files:
    ``<absolute path>@<fingerprint>``, where the fingerprint covers every file's name,
    size and modification time (a folder) or the archive's size and time. A file
    added, removed or rewritten changes it. ``open_dump(path).key`` is this value (when
    no content hash is given), so a cache can tell whether to open the path again.
    Raises DumpError when nothing is at ``path``."""
    path = os.fspath(path)
    try:
        if os.path.isdir(path):
            return _folder_key(path, walk_folder(path))
        st = os.stat(path)
    except OSError as e:
        raise DumpError(f"{path}: {e.strerror or e}") from None
    return f"{os.path.abspath(path)}@{st.st_size}:{st.st_mtime_ns}"


class _FolderSource(_Source):
    def __init__(self, root: str) -> None:
        self.root = root
        self._identity = ""
        self._skipped: builtins.list[tuple[str, str]] = []

    def list(self) -> list[tuple[str, int]]:
        self._skipped = []
        entries = walk_folder(self.root, self._skipped)
        self._identity = _folder_key(self.root, entries)
        return [(p, size) for p, size, _ in entries]

    def identity(self) -> str:
        return self._identity or path_key(self.root)

    def skipped(self) -> builtins.list[tuple[str, str]]:
        return builtins.list(self._skipped)

    def read(self, path: str) -> bytes:
        # the path as named, not resolved: a listed file may be a link to elsewhere
        full = os.path.normpath(os.path.join(self.root, path))
        if not full.startswith(os.path.normpath(self.root) + os.sep):
            raise DumpError(f"{path}: outside the dump")
        with open(full, "rb") as f:
            return f.read()


class _ZipSource(_Source):
    """A zip read in place: members are checked once, then read on demand."""

    def __init__(self, path: str, max_bytes: int) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path)
        self._lock = threading.Lock()
        self._names = archive.check_zip(self.zip, path, max_bytes)
        self._names = {n: i for n, i in self._names.items() if not n.startswith("__MACOSX/")}
        self._prefix = _common_root(list(self._names))

    def list(self) -> list[tuple[str, int]]:
        n = len(self._prefix)
        return [(name[n:], info.file_size) for name, info in self._names.items()]

    def read(self, path: str) -> bytes:
        with self._lock:
            return self.zip.read(self._names[self._prefix + path])

    def identity(self) -> str:
        return path_key(self.path)


def _common_root(names: list[str]) -> str:
    """'dump/' when every member sits in one top folder (a zipped dump folder)."""
    if not names:
        return ""
    firsts = {n.split("/", 1)[0] for n in names}
    if len(firsts) == 1 and all("/" in n for n in names):
        return firsts.pop() + "/"
    return ""


@dataclass(frozen=True, slots=True)
class FileError:
    file: str
    error: str

    def to_json(self) -> dict:
        return {"file": self.file, "error": self.error}

    @property
    def text(self) -> str:
        """The error with the file it is about, named once (a parse error names it already)."""
        return self.error if self.file in self.error else f"{self.file}: {self.error}"


# how many of the largest modules are read to pass over JAX's helpers: a small program
# after a few eager operations (a PRNG key, random numbers, an arange) is smaller than 5+
# of them; the reading stops at the first module that names its function or has no table
_MAIN_CANDIDATES = 16
_HEAD = 4 << 20   # bytes of a module read for its stack-frame table


def _modules(files: list[DumpFile]) -> list[DumpModule]:
    """The modules of a dump's files, by module id. Runs written into one folder reuse ids
    (each process counts from 0): modules that share an id are told apart by name, then by
    ``--xla_dump_include_timestamp``'s stamp, and each gets an id of its own:
    ``<id>.<name>`` where names differ, ``<id>@<stamp>`` where stamps do. A file with no
    stamp (``debug_options``, ``.ll``) belongs to the last compile of its module: the
    last run wrote it over."""
    stamps: dict[tuple[str, str], set[str]] = {}
    for f in files:
        if f.module_id is not None:
            stamps.setdefault((f.module_id, f.module_name or ""), set()).update(
                (f.stamp,) if f.stamp else ())
    groups: dict[tuple[str, str, str], list[DumpFile]] = {}
    for f in files:
        if f.module_id is not None:
            key = (f.module_id, f.module_name or "")
            groups.setdefault(key + (f.stamp or max(stamps[key], default=""),), []).append(f)
    names: dict[str, set[str]] = {}
    for mid, mname, _ in groups:
        names.setdefault(mid, set()).add(mname)
    out = []
    for (mid, mname, stamp), fs in sorted(groups.items(), key=lambda g: (int(g[0][0]), g[0])):
        uid = mid + (f".{mname}" if len(names[mid]) > 1 else "") \
            + (f"@{stamp}" if len(stamps[(mid, mname)]) > 1 else "")
        name, compile_id = split_compile_id(mname)
        out.append(DumpModule(uid, name, fs, compile_id=compile_id))
    return out


def _main_module(dump: "Dump") -> DumpModule | None:
    ranked: list[tuple[tuple[int, int], DumpModule]] = []
    for m in dump.modules:
        f = m.after_optimizations or m.before_optimizations
        if f is not None:   # prefer modules that were compiled
            ranked.append(((1, f.size // 4 if f.kind == BEFORE else f.size), m))
        elif m.stablehlo is not None:
            ranked.append(((0, m.stablehlo.size), m))
    ranked.sort(key=lambda r: r[0], reverse=True)   # stable: the first module of a tie
    for _, m in ranked[:_MAIN_CANDIDATES]:
        f = m.after_optimizations or m.before_optimizations
        if f is None or f.source not in ("", HLO_PROTO_BINARY):   # StableHLO: no table
            return m
        try:    # the table follows the header; a proto holds it in its module
            data = dump.read_bytes(f.path)
        except (OSError, KeyError, zipfile.BadZipFile, DumpError):
            return m
        named = proto_names_its_function(data, m.name) if f.source else \
            names_its_function(data[:_HEAD].decode("utf-8", "replace"), m.name)
        if named is not False:
            return m
    return ranked[0][1] if ranked else None


class Dump:
    """An opened dump: its files, modules and traces; parsed modules on demand.

    ``key``: the content identity given (the store's content hash), else the source's
    :func:`path_key` as listed when opened.
    """

    def __init__(self, source: _Source, name: str, cache_size: int = 24,
                 key: str | None = None) -> None:
        self.name = name
        self._source = source
        listing = sorted(source.list())
        self.key: str = key or source.identity()
        names = _module_names([p for p, _ in listing])
        self.files: list[DumpFile] = [classify(p, s, names) for p, s in listing]
        self.files = _other_forms(self.files, source)
        self._by_path = {f.path: f for f in self.files}
        self.modules: list[DumpModule] = _modules(self.files)
        self.traces = [f for f in self.files if f.kind in (TRACE, XPLANE)]
        self.errors: list[FileError] = [FileError(p, why) for p, why in source.skipped()]
        self._error_files: set[str] = {e.file for e in self.errors}
        self._cache: OrderedDict[str, HloModule] = OrderedDict()
        self._cache_size = cache_size
        self._derived: dict[str, Any] = {}   # what -> value (see derived)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<Dump {self.name}: {len(self.modules)} modules, {len(self.files)} files>"

    def derived(self, what: str, compute: Callable[["Dump"], T]) -> T:
        """``compute(self)`` once per dump: results derived from the dump (step diffs, ...)
        live as long as it does. Two threads may both compute a missing entry; one is
        kept and both get it."""
        try:
            return self._derived[what]
        except KeyError:
            value = compute(self)
            with self._lock:
                return self._derived.setdefault(what, value)

    # -- lookup
    def pick(self, key: str | None) -> DumpModule:
        """The module ``key`` names (as ``module``), or the main one when ``key`` is empty;
        KeyError, with a message, when there is no such module or none at all."""
        if key:
            return self.module(key)
        if self.main is None:
            raise KeyError(f"{self.name} has no modules")
        return self.main

    def module(self, key: str) -> DumpModule:
        """A module by id ('0006', '6') or name ('jit_train_step', or as its files spell
        it: 'jit_f.cl_933746096'); KeyError when no module, or several (a program compiled
        twice), have that name: the ids tell them apart."""
        named = []
        for m in self.modules:
            if m.id == key or (m.compile_id and key == f"{m.name}.{m.compile_id}"):
                return m
            if m.name == key:
                named.append(m)
        if len(named) > 1:      # the first of them would be a silent guess
            raise KeyError(f"{self.name}: {len(named)} modules are named {key!r}: "
                           + ", ".join(m.label for m in named) + "; give one's id")
        if named:
            return named[0]
        if key.isdigit():
            for m in self.modules:
                if m.number == int(key):
                    return m
        raise KeyError(f"{self.name}: no module {key!r}; modules are "
                       + ", ".join(m.label for m in self.modules[:20]))

    @property
    def main(self) -> DumpModule | None:
        """The user's program: the module with the largest after-optimizations text, passing
        over a helper JAX compiled beside it (:mod:`.program`); in a dump with no HLO text
        (``--xla_dump_hlo_as_html`` or ``_as_dot`` alone), the one with the largest StableHLO
        (``module.mlir``), which the app and CLI can draw."""
        return self.derived("main", _main_module)

    def file(self, path: str) -> DumpFile:
        return self._by_path[path]

    # -- reading
    def read_bytes(self, path: str) -> bytes:
        return self._source.read(path)

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8", "replace")

    def parse(self, path: str, data: bytes | None = None) -> HloModule:
        """The parsed HLO module in one text file (cached); raises HloParseError.
        ``data``: the file's bytes when the caller has read them already."""
        with self._lock:
            mod = self._cache.get(path)
            if mod is not None:
                self._cache.move_to_end(path)
                return mod
        f = self._by_path.get(path)
        try:
            if data is None:
                data = self.read_bytes(path)
            if f is not None and f.source:       # MLIR or a proto: XLA converts it
                data = to_hlo_text(data, f.source, path)
            mod = parse_hlo_bytes(data, path, id=f.module_id if f else None)
        except HloParseError as e:
            self.report(path, str(e))
            raise
        except (OSError, KeyError, zipfile.BadZipFile, DumpError) as e:
            self.report(path, f"cannot read: {e}")
            raise HloParseError(f"cannot read the file: {e}", source=path) from None
        with self._lock:
            self._cache[path] = mod
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return mod

    def try_parse(self, path: str) -> HloModule | None:
        try:
            return self.parse(path)
        except HloParseError:
            return None

    def report(self, path: str, error: str) -> None:
        with self._lock:
            if path not in self._error_files:
                self._error_files.add(path)
                self.errors.append(FileError(path, error))

    def stage(self, module: DumpModule | str, stage: str = AFTER) -> HloModule:
        """A module at ``before_optimizations``, ``after_optimizations``, ``after_codegen``,
        ``stablehlo`` (converted by jaxlib) or a pass file path."""
        mod = self.module(module) if isinstance(module, str) else module
        if stage in (BEFORE, AFTER, AFTER_CODEGEN, BEFORE_BUFFER_ASSIGNMENT, STABLEHLO):
            f = mod.stablehlo if stage == STABLEHLO else mod.first(stage)
            if f is None:
                raise KeyError(f"module {mod.label} has no {stage} file")
            return self.parse(f.path)
        return self.parse(stage)

    def repro_bundle(self, module: DumpModule | str, *, traces: bool = True) -> bytes:
        """A zip of one module's files (and the dump's traces): what a bug report needs."""
        mod = self.module(module) if isinstance(module, str) else module
        files = list(mod.files) + (list(self.traces) if traces else [])
        buf = io.BytesIO()
        top = f"{mod.id}.{mod.name}"
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for f in files:
                z.writestr(f"{top}/{f.path}", self.read_bytes(f.path))
        return buf.getvalue()

    # -- summaries
    def stats(self, parse: bool = True) -> dict:
        """The ``stats`` command's JSON for a dump."""
        modules = []
        for m in self.modules:
            stages: dict[str, dict | None] = {}
            for stage in (BEFORE, AFTER):
                f = m.first(stage)
                if f is None:
                    continue
                if parse:
                    mod = self.try_parse(f.path)
                    stages[stage] = mod.stats() if mod is not None else None
            modules.append({"id": m.id, "name": m.name, "compile_id": m.compile_id or None,
                            "files": m.file_counts(),
                            "passes": len(m.of_kind(PASS)), "stages": stages})
        main = self.main
        return {"modules": modules, "main": main.id if main else None,
                "errors": [e.to_json() for e in self.errors]}


def require_modules(dump: Dump, path: str) -> None:
    """DumpError naming ``path`` and what was expected when ``dump`` holds no XLA module
    (an empty folder, one of other files): every command of the CLI exits 1 on it."""
    if not dump.modules:
        raise DumpError(f"{path}: no XLA dump files found (expected files named "
                        "module_NNNN.<name>.*)")


def open_dump(path: str | os.PathLike, *, key: str | None = None,
              max_unpacked_bytes: int = archive.DEFAULT_MAX_BYTES) -> Dump:
    """Open a dump folder, a ``.zip`` or a ``.tar(.gz/.xz/.bz2)``/``.tgz`` of one.

    ``key``: the dump's content hash when the caller knows it (the store does); else
    ``Dump.key`` is :func:`path_key` of ``path``.

    Raises DumpError when the path is not a folder or a readable archive, and
    archive.ArchiveError (a DumpError) for an unsafe or oversized archive.
    """
    path = os.fspath(path)
    name = os.path.basename(path.rstrip("/")) or path
    if os.path.isdir(path):
        return Dump(_FolderSource(path), name, key=key)
    if not os.path.exists(path):
        raise DumpError(f"{path}: no such file or folder")
    kind = archive.kind(path)
    if not kind and _holds_a_module(path):
        return Dump(_FileSource(path), name, key=key)
    if kind == "zip":
        try:
            return Dump(_ZipSource(path, max_unpacked_bytes), name, key=key)
        except (zipfile.BadZipFile, OSError) as e:
            raise DumpError(f"{path}: not a readable zip archive ({e})") from None
    lower = path.lower()
    if kind == "tar" or lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
        key = key or path_key(path)      # the archive's identity, not the unpacked copy's
        dest = os.path.join(tempfile.mkdtemp(prefix="hlolens-dump-"), "d")
        archive.extract(path, dest, max_bytes=max_unpacked_bytes, label=path)
        dump = Dump(_FolderSource(archive.single_top_folder(dest)), name, key=key)
        # the unpacked copy lives as long as the Dump does
        weakref.finalize(dump, shutil.rmtree, os.path.dirname(dest), True)
        return dump
    raise DumpError(f"{path}: expected a dump folder, a .zip or a .tar.gz archive, or "
                    + EXPECTED.removeprefix("expected "))


# -- modules given as loose files (one .hlo, .mlir, .hlo.pb...): see loose.py

def _other_forms(files: list[DumpFile], source: _Source) -> list[DumpFile]:
    """Loose files holding modules when nothing is named as a dump's files; the protos of
    a proto-only dump as its stages. A dump with HLO text files is left as it was."""
    if not any(f.module_id is not None for f in files):
        return loose.index_loose(files, source.read, before=BEFORE, after=AFTER,
                                 unknown=UNKNOWN, also=(TF_GRAPH,))
    with_text = {f.module_id for f in files if f.kind in (BEFORE, AFTER)}
    if all(f.module_id in with_text for f in files if f.kind == HLO_PROTO):
        return files
    promoted = loose.protos_as_stages([_pass_proto(f) for f in files
                                       if f.module_id not in with_text],
                                      before=BEFORE, after=AFTER, proto=HLO_PROTO)
    by_path = {f.path: f for f in promoted}
    return [by_path.get(f.path, f) for f in files]


def _pass_proto(f: DumpFile) -> DumpFile:
    """A per-pass snapshot written as a proto (``--xla_dump_hlo_as_proto`` with
    ``--xla_dump_hlo_pass_re``: ``<base>SSSS.<pipeline>.after_<pass>.before_<next>.hlo.pb``):
    a pass step, read through jaxlib as the stages are."""
    rest = f.name.split(f"{f.module_name}.", 1)[-1]
    if f.kind != HLO_PROTO or not f.module_name or not rest.endswith(".hlo.pb"):
        return f
    info = _pass_info(rest[: -len(".hlo.pb")] + ".txt")
    if info is None:
        return f
    return replace(f, kind=PASS, source=HLO_PROTO_BINARY, pass_info=info)


def _holds_a_module(path: str) -> bool:
    with open(path, "rb") as f:
        return bool(sniff(f.read(4096), os.path.basename(path)))


class _FileSource(_Source):
    """One file that holds a module, opened as a dump of that file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.base = os.path.basename(path)

    def list(self) -> list[tuple[str, int]]:
        return [(self.base, os.path.getsize(self.path))]

    def read(self, path: str) -> bytes:
        if path != self.base:
            raise DumpError(f"{path}: not in this dump")
        with open(self.path, "rb") as f:
            return f.read()

    def identity(self) -> str:
        return path_key(self.path)
