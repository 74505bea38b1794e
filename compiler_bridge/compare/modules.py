"""The modules of two compiles, paired, counted and diffed: two dumps (two flag sets, two
JAX/XLA versions, two commits) or two compiles of one jit function in one dump (a
recompilation: other shapes).

* :func:`pair_modules` pairs the modules of two dumps: by name first, then (names that
  differ, or a name compiled several times) by structure. Module ids shift between runs
  and versions, so ids never pair anything. Structure is the module's ENTRY signature
  (parameter and result shapes without layout) and its opcode histogram; two modules of
  one program compiled with other flags have the same signature and similar histograms.
* :func:`recompilations` lists the modules of one dump that share a name (jax compiled
  one function again, for other shapes).
* :func:`compare_modules` counts both sides (instructions, fusions, computations, opcode
  histogram) and diffs them with :func:`diff_modules` (``by_source``: two compiles are
  many passes apart; ``across``: names pair only where they name the same kind of
  value), so ``added - removed`` is the change in instruction count.

Plain data, no measurement: memory and measured times are added by ``dumps``
(:func:`compare_dumps`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..dumps import AFTER, BEFORE, Dump, DumpModule
from ..hlo import HloModule, HloParseError
from ..passes import ModuleDiff, diff_modules

# a module pairs by structure only this similar (0..1); below, it stays unpaired
MIN_SIMILARITY = 0.5


# --------------------------------------------------------------------------- structure

@dataclass(frozen=True)
class Fingerprint:
    """What a module computes, for pairing: its ENTRY signature and opcode histogram."""

    module_id: str
    name: str
    parameters: tuple[str, ...]        # ENTRY parameter shapes, without layout
    result: str                        # ENTRY root shape, without layout
    opcodes: tuple[tuple[str, int], ...]
    instructions: int

    @property
    def signature(self) -> str:
        return f"({', '.join(self.parameters)}) -> {self.result}"


def fingerprint(module_id: str, module: HloModule, name: str = "") -> Fingerprint:
    """``name``: the module's name in the dump's file names (default: the HLO's own)."""
    entry = module.entry
    params = sorted((i for i in entry.instructions if i.opcode == "parameter"),
                    key=lambda i: i.args_text.strip().zfill(8))
    counts = Counter(i.opcode for i in module.instructions())
    return Fingerprint(module_id, name or module.name, tuple(i.shape.without_layout() for i in params),
                       entry.root.shape.without_layout() if entry.root is not None else "",
                       tuple(sorted(counts.items())), sum(counts.values()))


def similarity(x: Fingerprint, y: Fingerprint) -> float:
    """0..1: half the ENTRY signature (1 when equal, else the share of parameter shapes
    in common), half the opcode histograms' overlap (sum of minima / sum of maxima)."""
    if x.parameters == y.parameters and x.result == y.result:
        sig = 1.0
    else:
        a, b = Counter(x.parameters), Counter(y.parameters)
        union = sum((a | b).values())
        sig = sum((a & b).values()) / union if union else 0.0
    ha, hb = Counter(dict(x.opcodes)), Counter(dict(y.opcodes))
    top = sum((ha | hb).values())
    hist = sum((ha & hb).values()) / top if top else 1.0
    return 0.5 * sig + 0.5 * hist


def module_text(dump: Dump, module: DumpModule) -> str:
    """The file compared for a module: after optimizations, else before, else its last
    per-pass snapshot (XLA:GPU compiles some fusions again as modules of their own, named
    after them, with per-pass files alone: they pair, or are listed unpaired, like any)."""
    f = module.first(AFTER) or module.first(BEFORE) or (module.passes[-1] if module.passes
                                                         else None)
    if f is None:
        raise KeyError(f"{dump.name}: module {module.label} has no HLO text")
    return f.path


def _fingerprints(dump: Dump) -> dict[str, Fingerprint]:
    def compute(d: Dump) -> dict[str, Fingerprint]:
        out = {}
        for m in d.modules:
            if m.first(AFTER) is None and m.first(BEFORE) is None and not m.passes:
                continue
            try:
                out[m.id] = fingerprint(m.id, d.parse(module_text(d, m)), m.name)
            except HloParseError:
                continue           # reported in dump.errors; the rest still pairs
        return out
    return dump.derived("compare:fingerprints", compute)


# --------------------------------------------------------------------------- pairing

@dataclass(frozen=True)
class ModulePair:
    a: str                 # module id in dump A
    b: str                 # module id in dump B
    name_a: str
    name_b: str
    how: str               # 'name' | 'name+structure' | 'structure' | 'chosen'
    similarity: float

    @property
    def name(self) -> str:
        return self.name_a if self.name_a == self.name_b else f"{self.name_a} ↔ {self.name_b}"


@dataclass(frozen=True)
class Pairing:
    pairs: tuple[ModulePair, ...]
    only_a: tuple[str, ...]        # module ids of A that pair with nothing
    only_b: tuple[str, ...]

    def of_a(self, module_id: str) -> ModulePair | None:
        return next((p for p in self.pairs if p.a == module_id), None)

    def of_b(self, module_id: str) -> ModulePair | None:
        return next((p for p in self.pairs if p.b == module_id), None)


def _greedy(fa: list[Fingerprint], fb: list[Fingerprint], how: str, floor: float
            ) -> tuple[list[ModulePair], list[Fingerprint], list[Fingerprint]]:
    """Pair the most similar first (ties: file order); pairs below ``floor`` are not made."""
    scored = sorted(((similarity(x, y), i, j) for i, x in enumerate(fa)
                     for j, y in enumerate(fb)), key=lambda t: (-t[0], t[1], t[2]))
    used_a: set[int] = set()
    used_b: set[int] = set()
    out = []
    for s, i, j in scored:
        if s < floor or i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        out.append(ModulePair(fa[i].module_id, fb[j].module_id, fa[i].name, fb[j].name,
                              how, round(s, 4)))
    return (out, [x for i, x in enumerate(fa) if i not in used_a],
            [y for j, y in enumerate(fb) if j not in used_b])


def pair_modules(a: Dump, b: Dump) -> Pairing:
    """Pair the modules of two dumps: a name found once on each side pairs; a name found
    several times (recompilations) pairs within the name by structure; what is left pairs
    by structure alone when at least ``MIN_SIMILARITY`` alike."""
    fa, fb = _fingerprints(a), _fingerprints(b)
    by_name_a: dict[str, list[Fingerprint]] = {}
    by_name_b: dict[str, list[Fingerprint]] = {}
    for f in fa.values():
        by_name_a.setdefault(f.name, []).append(f)
    for f in fb.values():
        by_name_b.setdefault(f.name, []).append(f)
    pairs: list[ModulePair] = []
    rest_a: list[Fingerprint] = []
    rest_b: list[Fingerprint] = []
    for name, xs in by_name_a.items():
        ys = by_name_b.get(name, [])
        if len(xs) == 1 and len(ys) == 1:
            pairs.append(ModulePair(xs[0].module_id, ys[0].module_id, name, name, "name",
                                    round(similarity(xs[0], ys[0]), 4)))
        elif ys:
            made, left_a, left_b = _greedy(xs, ys, "name+structure", 0.0)
            pairs += made
            rest_a += left_a
            rest_b += left_b
        else:
            rest_a += xs
    for name, ys in by_name_b.items():
        if name not in by_name_a:
            rest_b += ys
    made, left_a, left_b = _greedy(rest_a, rest_b, "structure", MIN_SIMILARITY)
    pairs += made
    order_a = {m.id: k for k, m in enumerate(a.modules)}
    pairs.sort(key=lambda p: order_a.get(p.a, 0))
    return Pairing(tuple(pairs), tuple(sorted(f.module_id for f in left_a)),
                   tuple(sorted(f.module_id for f in left_b)))


def _has_text(m: DumpModule) -> bool:
    return m.first(AFTER) is not None or m.first(BEFORE) is not None


def chosen_pair(a: Dump, b: Dump, module_a: str, module_b: str) -> ModulePair:
    """The pair a user named (``--module-a/--module-b``, or two modules of one dump)."""
    ma, mb = a.module(module_a), b.module(module_b)
    fa, fb = _fingerprints(a).get(ma.id), _fingerprints(b).get(mb.id)
    s = similarity(fa, fb) if fa is not None and fb is not None else 0.0
    return ModulePair(ma.id, mb.id, ma.name, mb.name, "chosen", round(s, 4))


@dataclass(frozen=True)
class Recompilation:
    """One jit function compiled more than once in a dump (same name, other shapes)."""

    name: str
    modules: tuple[str, ...]           # module ids, in dump order
    signatures: tuple[str, ...]        # each one's ENTRY signature
    parameters: tuple[tuple[str, ...], ...] = ()   # each one's ENTRY parameter shapes

    def differences(self) -> tuple[str, ...]:
        """Per module, only the ENTRY parameters whose shapes differ between the compiles
        ('#19 f32[32,64], #20 s32[32]'): what made jax compile again."""
        if not self.parameters or len({len(p) for p in self.parameters}) != 1:
            return self.signatures
        differ = [i for i in range(len(self.parameters[0]))
                  if len({p[i] for p in self.parameters}) > 1]
        return tuple(", ".join(f"#{i} {p[i]}" for i in differ) or "the same parameters"
                     for p in self.parameters)


def recompilations(dump: Dump) -> list[Recompilation]:
    fps = _fingerprints(dump)
    groups: dict[str, list[DumpModule]] = {}
    for m in dump.modules:
        if _has_text(m):
            groups.setdefault(m.name, []).append(m)
    out = []
    for name, mods in groups.items():
        # a recompilation is the function for other shapes: of modules with the same
        # parameters (jax's eager helpers, compiled per dtype) the first stands for all
        distinct: dict[tuple[str, ...] | str, DumpModule] = {}
        for m in mods:
            distinct.setdefault(fps[m.id].parameters if m.id in fps else m.id, m)
        mods = list(distinct.values())
        if len(mods) > 1:
            out.append(Recompilation(name, tuple(m.id for m in mods),
                                     tuple(fps[m.id].signature if m.id in fps else "?"
                                           for m in mods),
                                     tuple(fps[m.id].parameters if m.id in fps else ()
                                           for m in mods)))
    return out


# --------------------------------------------------------------------------- counts and diff

@dataclass(frozen=True)
class Counts:
    instructions: int
    fusions: int
    computations: int
    entry_instructions: int
    opcodes: dict[str, int]

    @classmethod
    def of(cls, module: HloModule) -> Counts:
        s = module.stats()
        return cls(s["instructions"], s["fusions"], s["computations"],
                   s["entry_instructions"], dict(s["opcodes"]))


@dataclass
class ModuleComparison:
    """One pair of modules: counts side by side and the structural diff."""

    pair: ModulePair
    file_a: str
    file_b: str
    counts_a: Counts
    counts_b: Counts
    diff: ModuleDiff
    extra: dict = field(default_factory=dict)    # memory / measured times (the caller's)

    @property
    def opcode_delta(self) -> dict[str, tuple[int, int]]:
        """opcode -> (count on A, count on B), only those that differ, biggest change first."""
        a, b = self.counts_a.opcodes, self.counts_b.opcodes
        rows = {k: (a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b)
                if a.get(k, 0) != b.get(k, 0)}
        return dict(sorted(rows.items(), key=lambda kv: (-abs(kv[1][1] - kv[1][0]), kv[0])))

    @property
    def identical(self) -> bool:
        return self.diff.is_empty


def compare_modules(a: Dump, b: Dump, pair: ModulePair) -> ModuleComparison:
    """Count and diff one pair (after optimizations where both have it). Raises
    HloParseError when either side does not parse."""
    ma, mb = a.module(pair.a), b.module(pair.b)
    fa = module_text(a, ma)
    fb = module_text(b, mb)
    if (ma.first(AFTER) is None) != (mb.first(AFTER) is None):   # compare like with like
        fa = (ma.first(BEFORE) or ma.first(AFTER)).path      # type: ignore[union-attr]
        fb = (mb.first(BEFORE) or mb.first(AFTER)).path      # type: ignore[union-attr]
    xa, xb = a.parse(fa), b.parse(fb)
    return ModuleComparison(pair, fa, fb, Counts.of(xa), Counts.of(xb),
                            diff_modules(xa, xb, by_source=True, across=True))
