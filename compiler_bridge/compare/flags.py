"""The XLA flags two dumps were made with, and which differ.

:func:`dump_flags` reads a dump's flags from the files that say: ``debug_options`` (what
``XLA_FLAGS`` set, per module) and the ``debug_options`` block of
``compile_options.textproto`` (every flag, defaults too) where present. :func:`flags_diff`
compares two dumps' flags; ``xla_dump_*`` flags (where and what to dump, not how to
compile) are left out of the diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..dumps import Dump, DumpModule

DEBUG_OPTIONS = "debug_options"
COMPILE_OPTIONS = "compile_options"
_IGNORED_FLAG = re.compile(r"^xla_dump_")
_FIELD = re.compile(r"^\s*([A-Za-z_][\w]*|\d+)\s*:\s*(.*?)\s*$")


# a field's value: a quoted string (escapes allowed) or a bare word, number or enum
_VALUE = re.compile(r'"(?:[^"\\]|\\.)*"|[^"\s]+')


def parse_textproto_fields(text: str, block: str = "",
                           problems: list[tuple[int, str]] | None = None) -> dict[str, str]:
    """``name: value`` lines of a text proto: top level, or inside ``block { ... }``
    (nested anywhere). Repeated fields are joined with ', '; sub-messages are skipped.
    A line that is no field (a file cut inside a string, bytes that are not text) is left
    out, and with ``problems`` noted there as (line number, line)."""
    out: dict[str, str] = {}
    depth = 0
    inside = 0 if not block else -1     # depth at which the wanted fields live
    for number, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.endswith("{"):
            depth += 1
            if block and inside < 0 and s[:-1].strip().rstrip(":").strip() == block:
                inside = depth
            continue
        if s == "}":
            if depth == inside and block:
                inside = -2             # done: the first such block only
            depth -= 1
            continue
        m = _FIELD.match(s)
        if m is None or not _VALUE.fullmatch(m.group(2)):
            if problems is not None:
                problems.append((number, s))
            continue
        # a field the writer's proto did not know is printed by number ('493: 1'): no flag
        if depth == inside and not m.group(1).isdigit():
            name, value = m.group(1), m.group(2)
            out[name] = f"{out[name]}, {value}" if name in out else value
    return out


@dataclass(frozen=True)
class DumpFlags:
    """The XLA flags one dump was made with, from the files that say."""

    flags: dict[str, str]              # flag (without --) -> value as the file writes it
    sources: tuple[str, ...]           # the files read
    problems: tuple[str, ...] = ()     # 'FILE:LINE: ...' for the first line each file
                                       # could not read (left out of ``flags``)

    def as_xla_flags(self) -> list[str]:
        """``--name=value`` for each flag, as ``XLA_FLAGS`` would set it."""
        return [f"--{k}={_plain(v)}" for k, v in sorted(self.flags.items())]


_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_QUOTED_LIST = re.compile(r'"(?:[^"\\]|\\.)*"(?:, "(?:[^"\\]|\\.)*")*')


def _plain(value: str) -> str:
    """A value as XLA_FLAGS sets it: a string unquoted; a repeated string field (one
    line per value in the file, joined with ', ' here) as XLA's comma-separated list
    (``xla_disable_hlo_passes: "algsimp"`` and ``"cse"`` -> ``algsimp,cse``)."""
    if _QUOTED_LIST.fullmatch(value):
        return ",".join(m.group(1) for m in _QUOTED.finditer(value))
    return value


def _module_files(dump: Dump, module: DumpModule | None, kind: str) -> list[str]:
    if module is not None:
        mods = [module]
    else:      # the user's program first: JAX's eager helpers do not get its jit options
        main = dump.main
        mods = ([main] if main is not None else []) + [m for m in dump.modules if m is not main]
    return [f.path for m in mods for f in m.files if f.kind == kind]


def dump_flags(dump: Dump, module: DumpModule | None = None) -> tuple[DumpFlags, DumpFlags]:
    """(flags set away from their default per ``debug_options``, every flag per
    ``compile_options.textproto``) for one module (default: the user's program,
    ``Dump.main``, else the first module that has the file). Either is empty where the
    dump lacks the file."""
    explicit: dict[str, str] = {}
    src: list[str] = []
    problems: list[str] = []
    for path in _module_files(dump, module, DEBUG_OPTIONS)[:1]:
        explicit = _read_fields(dump, path, "", problems)
        src.append(path)
    full: dict[str, str] = {}
    fsrc: list[str] = []
    fproblems: list[str] = []
    for path in _module_files(dump, module, COMPILE_OPTIONS)[:1]:
        full = _read_fields(dump, path, "debug_options", fproblems)
        fsrc.append(path)
    return (DumpFlags(explicit, tuple(src), tuple(problems)),
            DumpFlags(full, tuple(fsrc), tuple(fproblems)))


def _read_fields(dump: Dump, path: str, block: str, problems: list[str]) -> dict[str, str]:
    bad: list[tuple[int, str]] = []
    fields = parse_textproto_fields(dump.read_text(path), block, bad)
    if bad:
        number, line = bad[0]
        more = f" (and {len(bad) - 1} more lines)" if len(bad) > 1 else ""
        problems.append(f"{path}:{number}: expected a text-proto field 'name: value' with "
                        f"a whole value, found {line[:60]!r}{more}; left out of the flags")
    return fields


@dataclass(frozen=True)
class FlagsDiff:
    only_a: tuple[str, ...]                    # '--name=value' set on A only
    only_b: tuple[str, ...]
    changed: tuple[tuple[str, str, str], ...]  # (flag, value on A, value on B)
    sources: tuple[str, ...] = ()              # which files were compared
    known_a: bool = True       # A has a file that says its flags (else nothing is compared)
    known_b: bool = True
    problems_a: tuple[str, ...] = ()           # lines of A's files left out (DumpFlags)
    problems_b: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.only_a or self.only_b or self.changed)

    def to_json(self) -> dict:
        return {"only_a": list(self.only_a), "only_b": list(self.only_b),
                "changed": [list(c) for c in self.changed]}


def flags_diff(a: Dump, b: Dump, module_a: DumpModule | None = None,
               module_b: DumpModule | None = None) -> FlagsDiff:
    """The XLA flags that differ. Both sides' ``debug_options`` (flags set away from
    default) are compared; where both have ``compile_options.textproto`` (every flag),
    a flag set on one side only and at its default on the other is 'changed' with the
    other side's value, not 'only'. A side without either file says nothing: the diff is
    empty, with ``known_a``/``known_b`` saying which side is silent."""
    ea, fa = dump_flags(a, module_a)
    eb, fb = dump_flags(b, module_b)
    known_a, known_b = bool(ea.sources or fa.sources), bool(eb.sources or fb.sources)
    problems_a, problems_b = ea.problems + fa.problems, eb.problems + fb.problems
    if not (known_a and known_b):       # a side that does not say: nothing to compare
        return FlagsDiff((), (), (), ea.sources + fa.sources + eb.sources + fb.sources,
                         known_a, known_b, problems_a, problems_b)
    xa = {k: v for k, v in ea.flags.items() if not _IGNORED_FLAG.match(k)}
    xb = {k: v for k, v in eb.flags.items() if not _IGNORED_FLAG.match(k)}
    ca = {k: v for k, v in fa.flags.items() if not _IGNORED_FLAG.match(k)}
    cb = {k: v for k, v in fb.flags.items() if not _IGNORED_FLAG.match(k)}
    only_a, only_b, changed = [], [], []
    for k in sorted(set(xa) | set(xb) | (set(ca) & set(cb))):
        u = xa.get(k, ca.get(k))
        v = xb.get(k, cb.get(k))
        if u == v:
            continue
        if u is None:
            only_b.append(f"--{k}={_plain(v or '')}")
        elif v is None:
            only_a.append(f"--{k}={_plain(u)}")
        else:
            changed.append((k, _plain(u), _plain(v)))
    return FlagsDiff(tuple(only_a), tuple(only_b), tuple(changed),
                     ea.sources + fa.sources + eb.sources + fb.sources,
                     problems_a=problems_a, problems_b=problems_b)
