"""Names and opcodes of HLO text (shared by the parser, printer and decoders)."""

from __future__ import annotations

import re

# Instruction and computation names as XLA's lexer reads them.
NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_.\-]*"
NAME_RE = re.compile(NAME_PATTERN)

# Every opcode jaxlib 0.10.2's parser knows (HloOpcode), spelled as in HLO text.
OPCODES = frozenset("""
abs acos acosh add add-dependency after-all all-gather all-gather-done all-gather-start
all-reduce all-reduce-done all-reduce-start all-to-all and asin asinh async-done async-start
async-update atan2 atanh batch-norm-grad batch-norm-inference batch-norm-training bitcast
bitcast-convert broadcast call cbrt ceil cholesky clamp collective-broadcast
collective-permute collective-permute-done collective-permute-start compare complex
concatenate conditional constant convert convolution copy copy-done copy-start cosine cosh
count-leading-zeros custom-call divide domain dot dynamic-reshape dynamic-slice
dynamic-update-slice erf exponential exponential-minus-one fft floor fusion gather
get-dimension-size get-tuple-element imag infeed iota is-finite log log-plus-one logistic map
maximum minimum mulhi multiply negate not opt-barrier or outfeed pad parameter partition-id
popcnt power ragged-all-to-all ragged-dot real recv recv-done reduce reduce-precision
reduce-scatter reduce-window remainder replica-id reshape reverse rng rng-bit-generator
rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scaled-dot scan scatter
select select-and-scatter send send-done set-dimension-size shift-left
shift-right-arithmetic shift-right-logical sign sine sinh slice sort sqrt stochastic-convert
subtract tan tanh topk transpose triangular-solve tuple while xor
""".split())

# Opcodes whose parentheses hold something other than operands.
NON_OPERAND_ARGS = frozenset({"constant", "parameter"})


def async_wrapped(opcode: str) -> tuple[str, str] | None:
    """``call-start`` -> ('async-start', 'call'): XLA's shorthand for async wrappers."""
    for suffix, kind in (("-start", "async-start"), ("-update", "async-update"),
                         ("-done", "async-done")):
        if opcode.endswith(suffix):
            base = opcode[: -len(suffix)]
            if base in OPCODES:
                return kind, base
    return None


# primitive type names: not names (XLA appends "_")
RESERVED_NAMES = frozenset("""
pred s1 s2 s4 s8 s16 s32 s64 u1 u2 u4 u8 u16 u32 u64 f16 bf16 f32 f64 c64 c128 f4e2m1fn
f8e3m4 f8e4m3 f8e4m3fn f8e4m3b11fnuz f8e4m3fnuz f8e5m2 f8e5m2fnuz f8e8m0fnu token opaque
""".split())
_PLAIN_NAME = re.compile(r"(?!__(?!xla_))[A-Za-z_][A-Za-z0-9_.\-]*")
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_.\-]")


def sanitize_name(name: str) -> str:
    """XLA's NameUniquer::GetSanitizedName: the name XLA actually gives ``name``."""
    if not name:
        return name
    out = name
    if not (out[0].isascii() and (out[0].isalpha() or out[0] == "_")):
        out = "_" + out[1:]
    if _BAD_CHARS.search(out, 1):
        out = out[0] + _BAD_CHARS.sub("_", out[1:])
    if out in RESERVED_NAMES:
        out += "_"
    if out.startswith("__") and not out.startswith("__xla_"):
        out = "a" + out[1:]
    return out


class NameUniquer:
    """XLA's NameUniquer: a module's instruction names are made unique as XLA's parser
    does (``arg.1`` seen again becomes ``arg.0``, then ``arg.5``...)."""

    def __init__(self) -> None:
        self._used: dict[str, set[int]] = {}
        self._next: dict[str, int] = {}

    def unique(self, name: str) -> str:
        if name in RESERVED_NAMES or _PLAIN_NAME.fullmatch(name) is None:
            name = sanitize_name(name)
        root, dot, tail = name.rpartition(".")
        digits = tail[1:] if tail[:1] in ("+", "-") else tail
        if root and digits.isdigit() and digits.isascii() and len(digits) < 19:
            suffix = int(tail)
            has_suffix = True
        else:
            root = name
            suffix = 0
            has_suffix = False
        used = self._used.get(root)
        if used is None:
            self._used[root] = {suffix}
        elif suffix in used:
            nxt = self._next.get(root, 0)
            while nxt in used:
                nxt += 1
            suffix = nxt
            self._next[root] = nxt + 1
            used.add(suffix)
            return f"{root}.{suffix}" if suffix else (f"{root}.0" if has_suffix else root)
        else:
            used.add(suffix)
        if not has_suffix or tail == str(suffix):
            return name
        return f"{root}.{suffix}" if suffix else f"{root}.0"
