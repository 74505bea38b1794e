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


class NameUniquer:
    """XLA's NameUniquer: a module's instruction names are made unique as XLA's parser
    does (``arg.1`` seen again becomes ``arg.0``, then ``arg.5``...)."""

    def __init__(self) -> None:
        self._used: dict[str, set[int]] = {}
        self._next: dict[str, int] = {}

    def unique(self, name: str) -> str:
        root = name
        suffix = 0
        has_suffix = False
        dot = name.rfind(".")
        if 0 < dot < len(name) - 1:
            tail = name[dot + 1:]
            t = tail[1:] if tail[0] in "+-" else tail
            if t.isdigit() and len(t) < 19:
                suffix = int(tail)
                has_suffix = True
                root = name[:dot]
        used = self._used.setdefault(root, set())
        if suffix in used:
            nxt = self._next.get(root, 0)
            while nxt in used:
                nxt += 1
            suffix = nxt
            self._next[root] = nxt + 1
        used.add(suffix)
        if suffix == 0:
            return f"{root}.0" if has_suffix else root
        return f"{root}.{suffix}"
