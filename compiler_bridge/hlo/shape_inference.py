"""Result shapes XLA infers when HLO text leaves them out (``t = tuple(a, b)``).

XLA's parser accepts an instruction without a shape for the opcodes in ``INFERABLE``
and computes it with its shape inference; the rules here give the same shape text
(layout included) for the opcodes real files use that way, checked against jaxlib:

* element-wise ops keep the first operand's layout (``select``: the predicate's when it
  is an array, ``clamp``: the operand's); a scalar mixed with an array gives the
  array's dimensions with the default layout;
* ``transpose`` permutes dimensions and layout; ``dot``, ``convolution``, ``reduce``,
  ``concatenate``, ``pad`` and ``broadcast`` give the default layout;
* ``while`` takes its operand's shape, ``call`` and ``conditional`` their computation's
  root shape.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from . import attributes as A
from .shapes import ELEMENT_BITS, Shape, array_shape, tuple_shape

# XLA's CanInferShape: opcodes whose result shape may be left out of the text.
INFERABLE = frozenset("""
abs acos acosh asin asinh add add-dependency after-all atan2 atanh batch-norm-grad
batch-norm-inference batch-norm-training broadcast call ceil cholesky clamp
count-leading-zeros compare complex concatenate conditional convolution copy cosine cosh
opt-barrier divide domain dot erf exponential exponential-minus-one fft floor gather
get-dimension-size set-dimension-size get-tuple-element imag is-finite log log-plus-one
logistic and not or xor map maximum minimum multiply negate pad partition-id popcnt power
ragged-dot real reduce remainder replica-id reverse round-nearest-afz round-nearest-even
rsqrt scan scaled-dot scatter select shift-left shift-right-arithmetic shift-right-logical
sign sine sinh sqrt cbrt reduce-window select-and-scatter sort subtract tan tanh transpose
triangular-solve tuple while topk
""".split())

UNARY = frozenset("""
abs acos acosh asin asinh atanh ceil cbrt copy cosine cosh count-leading-zeros domain erf
exponential exponential-minus-one floor imag is-finite log log-plus-one logistic negate not
opt-barrier popcnt real round-nearest-afz round-nearest-even rsqrt sign sine sinh sqrt tan
tanh
""".split())

BINARY = frozenset("""
add and atan2 complex compare divide maximum minimum multiply or power remainder
shift-left shift-right-arithmetic shift-right-logical subtract xor
""".split())


class InferenceError(ValueError):
    """The shape cannot be inferred (bad operands or attributes)."""


RootShape = Callable[[str], Shape]

_COMPLEX_PART = {"c64": "f32", "c128": "f64"}
_COMPLEX_OF = {"f32": "c64", "f64": "c128"}
# (overflow exponent, significand bits) of the floating-point types
_FLOAT_PROPS = {
    "f64": (1024, 53), "f32": (128, 24), "bf16": (128, 8), "f16": (16, 11),
    "f8e5m2": (16, 3), "f8e5m2fnuz": (16, 3), "f8e4m3": (8, 4), "f8e4m3fn": (9, 4),
    "f8e4m3fnuz": (8, 4), "f8e4m3b11fnuz": (5, 4), "f8e3m4": (4, 5), "f8e8m0fnu": (128, 1),
    "f4e2m1fn": (3, 2),
}


def _array(shape: Shape, what: str) -> Shape:
    if not shape.is_array:
        raise InferenceError(f"expected an array {what}, got {shape.text}")
    return shape


def _with_type(shape: Shape, etype: str) -> Shape:
    if shape.element_type == etype:
        return shape
    return array_shape(etype, shape.dimensions, shape.dynamic, shape.layout)


def _type_key(etype: str) -> tuple:
    part = _COMPLEX_PART.get(etype, etype)
    exp, sig = _FLOAT_PROPS.get(part, (-1, -1))
    return (etype in _COMPLEX_PART, exp, sig, ELEMENT_BITS.get(part, 0), part.startswith("s"))


def higher_precision(a: str, b: str) -> str:
    """XLA's HigherPrecisionElementType."""
    if a == b:
        return a
    return a if _type_key(a) >= _type_key(b) else b


def _ints(attrs: dict[str, str], key: str, required: bool = True) -> tuple[int, ...]:
    raw = attrs.get(key)
    if raw is None:
        if required:
            raise InferenceError(f"attribute '{key}' is needed to infer the shape")
        return ()
    try:
        return A.int_list(raw)
    except ValueError:
        raise InferenceError(f"bad value for '{key}': {raw[:40]}") from None


def _int(attrs: dict[str, str], key: str) -> int:
    raw = attrs.get(key)
    if raw is None:
        raise InferenceError(f"attribute '{key}' is needed to infer the shape")
    try:
        return int(raw.strip())
    except ValueError:
        raise InferenceError(f"bad value for '{key}': {raw[:40]}") from None


def _count(operands: Sequence[Shape], n: int, opcode: str) -> None:
    if len(operands) != n:
        raise InferenceError(f"{opcode} expects {n} operands, got {len(operands)}")


def _unary(opcode: str, x: Shape) -> Shape:
    _array(x, "operand")
    if opcode in ("abs", "real", "imag"):
        return _with_type(x, _COMPLEX_PART.get(x.element_type, x.element_type))
    if opcode == "is-finite":
        return _with_type(x, "pred")
    return x


def _binary(opcode: str, a: Shape, b: Shape) -> Shape:
    _array(a, "lhs")
    _array(b, "rhs")
    etype = a.element_type
    if opcode == "compare":
        etype = "pred"
    elif opcode == "complex":
        if a.element_type not in _COMPLEX_OF:
            raise InferenceError(f"complex expects f32 or f64 operands, got {a.element_type}")
        etype = _COMPLEX_OF[a.element_type]
    if a.rank == b.rank:
        if a.dimensions != b.dimensions and not (any(a.dynamic) or any(b.dynamic)):
            # degenerate (size 1) dimensions broadcast; the result has the default layout
            broadcast: list[int] = []
            for x, y in zip(a.dimensions, b.dimensions):
                if x != y and x != 1 and y != 1:
                    raise InferenceError(f"operand shapes differ: {a.text} and {b.text}")
                broadcast.append(max(x, y) if x != y else x)
            return array_shape(etype, tuple(broadcast))
        dynamic = tuple(x or y for x, y in zip(a.dynamic, b.dynamic))
        dims = tuple(max(x, y) if dx or dy else x
                     for x, y, dx, dy in zip(a.dimensions, b.dimensions, a.dynamic, b.dynamic))
        if dynamic == a.dynamic and dims == a.dimensions:
            return _with_type(a, etype)
        return array_shape(etype, dims, dynamic, a.layout)
    if a.rank and b.rank:
        raise InferenceError(f"operand ranks differ: {a.text} and {b.text}")
    big = a if a.rank else b
    return array_shape(etype, big.dimensions, big.dynamic)


def _transpose(x: Shape, perm: tuple[int, ...]) -> Shape:
    _array(x, "operand")
    if sorted(perm) != list(range(x.rank)):
        raise InferenceError(f"dimensions {list(perm)} are not a permutation of {x.rank} dims")
    dims = tuple(x.dimensions[p] for p in perm)
    dynamic = tuple(x.dynamic[p] for p in perm)
    layout = None
    if x.layout is not None:
        inverse = [0] * len(perm)
        for j, p in enumerate(perm):
            inverse[p] = j
        layout = replace(x.layout, minor_to_major=tuple(inverse[d] for d in
                                                        x.layout.minor_to_major))
    return array_shape(x.element_type, dims, dynamic, layout)


def _dot(a: Shape, b: Shape, attrs: dict[str, str]) -> Shape:
    _array(a, "lhs")
    _array(b, "rhs")
    lc, rc = _ints(attrs, "lhs_contracting_dims", False), _ints(attrs, "rhs_contracting_dims", False)
    lb, rb = _ints(attrs, "lhs_batch_dims", False), _ints(attrs, "rhs_batch_dims", False)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise InferenceError("dot dimension numbers do not pair up")
    for d in lc + lb:
        if not 0 <= d < a.rank:
            raise InferenceError(f"lhs dimension {d} out of range")
    for d in rc + rb:
        if not 0 <= d < b.rank:
            raise InferenceError(f"rhs dimension {d} out of range")
    dims: list[int] = []
    dyn: list[bool] = []
    for d in lb:
        dims.append(a.dimensions[d])
        dyn.append(a.dynamic[d])
    for d in range(a.rank):
        if d not in lb and d not in lc:
            dims.append(a.dimensions[d])
            dyn.append(a.dynamic[d])
    for d in range(b.rank):
        if d not in rb and d not in rc:
            dims.append(b.dimensions[d])
            dyn.append(b.dynamic[d])
    return array_shape(higher_precision(a.element_type, b.element_type), tuple(dims),
                       tuple(dyn))


def _conv(lhs: Shape, rhs: Shape, attrs: dict[str, str]) -> Shape:
    _array(lhs, "lhs")
    _array(rhs, "rhs")
    raw = attrs.get("dim_labels")
    if raw is None:
        raise InferenceError("attribute 'dim_labels' is needed to infer the shape")
    try:
        labels = A.dim_labels(raw)
        win = A.window(attrs["window"]) if "window" in attrs else None
    except (ValueError, KeyError) as e:
        raise InferenceError(f"bad convolution attributes: {e}") from None
    if len(labels.lhs) != lhs.rank or len(labels.rhs) != rhs.rank:
        raise InferenceError("dim_labels do not match the operand ranks")
    spatial = [c for c in labels.output if c not in "bf?"]
    n = len(spatial)
    size = win.size if win is not None else ()
    if len(size) != n:
        raise InferenceError(f"window has {len(size)} dimensions, expected {n}")
    bgc = int(attrs.get("batch_group_count", "1"))
    out_sizes: dict[str, int] = {}
    out_sizes["b"] = lhs.dimensions[labels.lhs.index("b")] // max(bgc, 1)
    out_sizes["f"] = rhs.dimensions[labels.rhs.index("o")]
    for i in range(n):
        c = str(i)
        in_size = lhs.dimensions[labels.lhs.index(c)]
        out_sizes[c] = _windowed(in_size, i, win)
    dims = tuple(out_sizes[c] if c != "?" else 1 for c in labels.output)
    return array_shape(higher_precision(lhs.element_type, rhs.element_type), dims)


def _windowed(size: int, i: int, win) -> int:
    base = (size - 1) * win.lhs_dilate[i] + 1 if size > 0 else 0
    padded = base + win.pad_low[i] + win.pad_high[i]
    w = (win.size[i] - 1) * win.rhs_dilate[i] + 1
    return 0 if padded < w else (padded - w) // win.stride[i] + 1


def _reduce_window(operands: Sequence[Shape], attrs: dict[str, str]) -> Shape:
    if not operands or len(operands) % 2:
        raise InferenceError("reduce-window expects inputs and as many init values")
    k = len(operands) // 2
    try:
        win = A.window(attrs["window"]) if "window" in attrs else None
    except (ValueError, KeyError) as e:
        raise InferenceError(f"bad window: {e}") from None
    outs = []
    for x, init in zip(operands[:k], operands[k:]):
        _array(x, "operand")
        n = len(win.size) if win is not None else 0
        if n != x.rank:
            raise InferenceError(f"window has {n} dimensions, the operand {x.rank}")
        dims = tuple(_windowed(d, i, win) for i, d in enumerate(x.dimensions))
        outs.append(array_shape(init.element_type, dims))
    return outs[0] if k == 1 else tuple_shape(tuple(outs))


def _gather(operand: Shape, indices: Shape, attrs: dict[str, str]) -> Shape:
    _array(operand, "operand")
    _array(indices, "start indices")
    offset_dims = _ints(attrs, "offset_dims")
    collapsed = set(_ints(attrs, "collapsed_slice_dims"))
    batching = set(_ints(attrs, "operand_batching_dims", False))
    sizes = _ints(attrs, "slice_sizes")
    ivd = _int(attrs, "index_vector_dim")
    if len(sizes) != operand.rank:
        raise InferenceError("slice_sizes does not match the operand rank")
    batch = [d for i, d in enumerate(indices.dimensions) if i != ivd]
    offsets = [s for i, s in enumerate(sizes) if i not in collapsed and i not in batching]
    rank = len(batch) + len(offsets)
    if len(offsets) != len(offset_dims):
        raise InferenceError("offset_dims does not match the slice sizes")
    dims = []
    oi = bi = 0
    for d in range(rank):
        if d in offset_dims:
            dims.append(offsets[oi])
            oi += 1
        else:
            dims.append(batch[bi])
            bi += 1
    return array_shape(operand.element_type, tuple(dims))


def _root(root_shape: RootShape | None, called: Sequence[str], what: str) -> Shape:
    if not called or root_shape is None:
        raise InferenceError(f"{what} needs its computation to infer the shape")
    return root_shape(called[0])


def infer_shape(opcode: str, operands: Sequence[Shape], attrs: dict[str, str],
                called: Sequence[str] = (), root_shape: RootShape | None = None) -> Shape:
    """The result shape XLA gives ``opcode`` applied to ``operands``; raises InferenceError."""
    if opcode in UNARY:
        _count(operands, 1, opcode)
        return _unary(opcode, operands[0])
    if opcode in BINARY:
        _count(operands, 2, opcode)
        return _binary(opcode, operands[0], operands[1])
    if opcode == "select":
        _count(operands, 3, opcode)
        pred, on_true = operands[0], operands[1]
        _array(on_true, "on_true")
        if pred.rank:
            return _with_type(pred, on_true.element_type)
        return on_true
    if opcode == "clamp":
        _count(operands, 3, opcode)
        return _array(operands[1], "operand")
    if opcode == "tuple":
        return tuple_shape(tuple(operands))
    if opcode == "get-tuple-element":
        _count(operands, 1, opcode)
        index = _int(attrs, "index")
        t = operands[0]
        if t.element_type != "tuple" or not 0 <= index < len(t.tuple_shapes):
            raise InferenceError(f"index {index} is out of range for {t.text}")
        return t.tuple_shapes[index]
    if opcode == "after-all":
        return array_shape("token", ())
    if opcode in ("add-dependency", "reverse", "while"):
        if not operands:
            raise InferenceError(f"{opcode} needs an operand")
        return operands[0]
    if opcode in ("replica-id", "partition-id"):
        return array_shape("u32", ())
    if opcode == "get-dimension-size":
        return array_shape("s32", ())
    if opcode == "transpose":
        _count(operands, 1, opcode)
        return _transpose(operands[0], _ints(attrs, "dimensions"))
    if opcode == "dot":
        _count(operands, 2, opcode)
        return _dot(operands[0], operands[1], attrs)
    if opcode == "convolution":
        _count(operands, 2, opcode)
        return _conv(operands[0], operands[1], attrs)
    if opcode == "call":
        return _root(root_shape, called, opcode)
    if opcode == "conditional":
        return _root(root_shape, called, opcode)
    if opcode == "broadcast":
        _count(operands, 1, opcode)
        x = _array(operands[0], "operand")
        sizes = _ints(attrs, "dimensions", False)
        return array_shape(x.element_type, sizes + x.dimensions,
                           (False,) * len(sizes) + x.dynamic)
    if opcode == "concatenate":
        if not operands:
            raise InferenceError("concatenate needs operands")
        (dim,) = _ints(attrs, "dimensions") or (None,)
        first = _array(operands[0], "operand")
        if dim is None or not 0 <= dim < first.rank:
            raise InferenceError("bad concatenate dimension")
        dims = list(first.dimensions)
        dims[dim] = sum(_array(o, "operand").dimensions[dim] for o in operands)
        return array_shape(first.element_type, tuple(dims), first.dynamic)
    if opcode == "pad":
        _count(operands, 2, opcode)
        x = _array(operands[0], "operand")
        raw = attrs.get("padding", "")
        parts = raw.strip().split("x") if raw.strip() else []
        if len(parts) != x.rank:
            raise InferenceError("padding does not match the operand rank")
        dims = []
        for d, p in zip(x.dimensions, parts):
            try:
                lo, hi, *inner = (int(v) for v in p.split("_"))
            except ValueError:
                raise InferenceError(f"bad padding {raw[:40]}") from None
            interior = inner[0] if inner else 0
            dims.append(lo + hi + d + max(d - 1, 0) * interior)
        return array_shape(x.element_type, tuple(dims), x.dynamic)
    if opcode == "reduce":
        if not operands or len(operands) % 2:
            raise InferenceError("reduce expects inputs and as many init values")
        k = len(operands) // 2
        reduced = set(_ints(attrs, "dimensions"))
        outs = []
        for x, init in zip(operands[:k], operands[k:]):
            _array(x, "operand")
            keep = [d for d in range(x.rank) if d not in reduced]
            outs.append(array_shape(init.element_type, tuple(x.dimensions[d] for d in keep),
                                    tuple(x.dynamic[d] for d in keep)))
        return outs[0] if k == 1 else tuple_shape(tuple(outs))
    if opcode == "sort":
        if not operands:
            raise InferenceError("sort needs operands")
        return operands[0] if len(operands) == 1 else tuple_shape(tuple(operands))
    if opcode == "map":
        if not operands:
            raise InferenceError("map needs operands")
        x = _array(operands[0], "operand")
        root = _root(root_shape, called, opcode)
        return array_shape(root.element_type, x.dimensions, x.dynamic)
    if opcode == "reduce-window":
        return _reduce_window(operands, attrs)
    if opcode == "gather":
        _count(operands, 2, opcode)
        return _gather(operands[0], operands[1], attrs)
    if opcode in ("select-and-scatter", "cholesky"):
        if not operands:
            raise InferenceError(f"{opcode} needs operands")
        return operands[0]
    if opcode == "triangular-solve":
        _count(operands, 2, opcode)
        return operands[1]
    if opcode == "scatter":
        if not operands:
            raise InferenceError("scatter needs operands")
        k = (len(operands) - 1) // 2
        return operands[0] if k <= 1 else tuple_shape(tuple(operands[:k]))
    if opcode == "set-dimension-size":
        _count(operands, 2, opcode)
        x = _array(operands[0], "operand")
        (dim,) = _ints(attrs, "dimensions") or (None,)
        if dim is None or not 0 <= dim < x.rank:
            raise InferenceError("bad dimension")
        dyn = list(x.dynamic)
        dyn[dim] = True
        return array_shape(x.element_type, x.dimensions, tuple(dyn), x.layout)
    if opcode in INFERABLE:
        raise InferenceError(f"inferring the shape of '{opcode}' is not supported here; "
                             "write the result shape")
    raise InferenceError(f"cannot infer shape for opcode: {opcode}")


__all__ = ["INFERABLE", "InferenceError", "higher_precision", "infer_shape"]
