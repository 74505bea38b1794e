"""Shardings on the device mesh: every form XLA and Shardy write, read into one model that
answers which device holds which tile, and each device's shape and bytes.

The forms (XLA's ``HloSharding::ToString`` and Shardy's attributes):

- ``{replicated}``, ``{manual}``, ``{unknown}``, ``{maximal device=3}``;
- tiled, the tile assignment explicit ``{devices=[2,2]0,2,1,3}`` or iota
  ``{devices=[2,1,4]<=[4,2]T(1,0)}``, with trailing subgroup dimensions
  ``last_tile_dim_replicate`` or ``last_tile_dims={manual, replicated}``;
- tuples ``{{...}, {...}}``, one sharding per leaf of a tuple shape;
- the mesh form of newer XLA ``{mesh['x'=2,'y'=4], device_ids=([4,2]T(1,0)), [{'x'}, {}],
  unreduced={'y'}}`` (axis lists per dimension, sub-axes ``'x':(2)2``);
- Shardy's ``xla.sdy.sharding="#sdy.sharding<@mesh, [{"data"}, {}]>"`` frontend attribute
  (``#sdy.sharding_per_value<[...]>`` for several results) over the module's
  ``xla.sdy.meshes={mesh = #sdy.mesh<["data"=4, "model"=2]>}``.

A tiled sharding's tile assignment is an array of devices of shape ``tile_dims`` followed by
the subgroup sizes: the device at index ``(i0, ..., ik, s...)`` holds tile ``(i0, ..., ik)``.
The mesh forms are turned into the same array (the mesh's devices transposed so that the axes
splitting dimension 0 come first, then dimension 1's, ..., the axes splitting nothing last),
which is what XLA's ``v3_to_v2_sharding`` does. Tiles are XLA's: ``ceil(dim / tiles)``
elements each, the last ones short (or empty) when the dimension does not divide.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass, field

from ..hlo import HloInstruction, HloModule, Shape, iota_tile_assignment

SUBGROUP_KINDS = ("replicated", "manual", "unreduced", "unknown")


@dataclass(frozen=True, slots=True)
class Mesh:
    """A named device mesh: its axes (name, size) major to minor and the devices laid out on
    it row-major (``device_ids``; the iota 0..N-1 when the text names none)."""

    axes: tuple[tuple[str, int], ...]
    devices: tuple[int, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(size for _, size in self.axes)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.axes)

    def __str__(self) -> str:
        return "[" + ", ".join(f"{n}={s}" for n, s in self.axes) + "]"


@dataclass(frozen=True, slots=True)
class AxisRef:
    """One mesh axis, or a sub-axis of one: ``'x':(pre)size`` is the part of axis ``x`` of
    ``size`` devices after (more minor than) a part of ``pre`` devices."""

    name: str
    pre: int = 1
    size: int = 0          # 0: the whole axis

    def __str__(self) -> str:
        return self.name if not self.size else f"{self.name}:({self.pre}){self.size}"


@dataclass(frozen=True, slots=True)
class TensorSharding:
    """One tensor's (or a tuple's) sharding.

    ``kind``: ``replicated``, ``maximal``, ``manual``, ``unknown``, ``tiled``, ``tuple``.
    For ``tiled``: ``tile_dims`` (tiles along each dimension), ``subgroups`` (the trailing
    tile-assignment dimensions, e.g. ``('replicated', 4)``) and ``devices`` (the tile
    assignment flattened row-major). ``mesh`` and ``dim_axes`` (the mesh axes splitting each
    dimension) when the text names them (mesh form, Shardy)."""

    kind: str
    raw: str = ""
    tile_dims: tuple[int, ...] = ()
    subgroups: tuple[tuple[str, int], ...] = ()
    devices: tuple[int, ...] = ()
    device: int | None = None                      # maximal
    elements: tuple["TensorSharding", ...] = ()    # tuple
    mesh: Mesh | None = None
    dim_axes: tuple[tuple[AxisRef, ...], ...] = ()
    unreduced: tuple[AxisRef, ...] = field(default=())

    @property
    def is_tiled(self) -> bool:
        return self.kind == "tiled" and any(t > 1 for t in self.tile_dims)

    @property
    def num_tiles(self) -> int:
        return math.prod(self.tile_dims) if self.kind == "tiled" else 1

    def label(self) -> str:
        """A short name for a legend: ``replicated``, ``[4,2]``, ``[2,1] x2 replicated``,
        ``[data, model]`` when the mesh axes are known, ``device 0``."""
        if self.kind == "maximal":
            return f"device {self.device}"
        if self.kind == "tuple":
            return "(" + ", ".join(e.label() for e in self.elements) + ")"
        if self.kind != "tiled":
            return self.kind
        if self.dim_axes:
            parts = [",".join(str(a) for a in axes) or "-" for axes in self.dim_axes]
            text = "[" + ", ".join(parts) + "]"
        else:
            text = "[" + ",".join(str(t) for t in self.tile_dims) + "]"
        for kind, size in self.subgroups:
            if size > 1:
                text += f" x{size} {kind}"
        return text


# ---------------------------------------------------------------- HLO ``sharding=`` text

def parse_sharding(raw: str) -> TensorSharding:
    """A ``sharding={...}`` value (braces included) in any of XLA's forms."""
    text = raw.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"expected a sharding in braces, got {text[:60]!r}")
    body = text[1:-1].strip()
    if body.startswith("{") or body == "":
        return TensorSharding("tuple", text, elements=tuple(
            parse_sharding(part) for part in _top_level_braces(body)))
    if body.startswith("mesh"):
        return _mesh_sharding(body, text)
    word = re.match(r"[a-z_]+", body)
    head = word.group() if word else ""
    if head == "maximal":
        m = re.search(r"device=(-?\d+)", body)
        return TensorSharding("maximal", text, device=int(m.group(1)) if m else None)
    if head == "devices":
        return _tiled(body, text)
    if head in ("replicated", "manual", "unknown", "unreduced"):
        return TensorSharding(head, text)
    raise ValueError(f"unknown sharding form {text[:60]!r}")


_TILED = re.compile(r"devices=\[([\d,\s]*)\]\s*(?:<=\s*\[([\d,\s]+)\]\s*(?:T\(([\d,\s]+)\))?|"
                    r"([\d,\s]+))")


def _devices(dims: list[int], reshape: str | None, transpose: str | None,
             listed: str) -> list[int]:
    """The devices of a tile assignment over ``dims``: the iota form (``<=[reshape]`` and
    its ``T(transpose)``) when ``reshape`` is given, else the ``listed`` ids."""
    if reshape is not None:
        return iota_tile_assignment(dims, _ints(reshape), _ints(transpose) if transpose else None)
    return _ints(listed)


def _tiled(body: str, raw: str) -> TensorSharding:
    m = _TILED.match(body)
    if not m:
        raise ValueError(f"expected devices=[dims] and a tile assignment, got {body[:60]!r}")
    dims = _ints(m.group(1))
    devices = _devices(dims, m.group(2), m.group(3), m.group(4))
    if len(devices) != math.prod(dims):
        raise ValueError(f"tile assignment of {len(devices)} devices for tiles {dims} in "
                         f"{raw[:60]!r}")
    rest = body[m.end():]
    kinds: list[str] = []
    if "last_tile_dim_replicate" in rest:
        kinds = ["replicated"]
    else:
        lt = re.search(r"last_tile_dims=\{([^}]*)\}", rest)
        if lt:
            kinds = [k.strip() for k in lt.group(1).split(",") if k.strip()]
    n_data = len(dims) - len(kinds)
    subgroups = tuple((k, dims[n_data + i]) for i, k in enumerate(kinds))
    return TensorSharding("tiled", raw, tuple(dims[:n_data]), subgroups, tuple(devices))


# ---------------------------------------------------------------- the mesh forms

_AXIS = re.compile(r"['\"]([^'\"]+)['\"]\s*(?::\s*\((\d+)\)\s*(\d+))?")


def axis_refs(text: str) -> tuple[AxisRef, ...]:
    return tuple(AxisRef(m.group(1), int(m.group(2) or 1), int(m.group(3) or 0))
                 for m in _AXIS.finditer(text))


def parse_mesh(axes_text: str, device_ids: str | None = None) -> Mesh:
    """``'x'=2,'y'=4`` (or ``"x"=2, "y"=4``) and optional device ids: an iota
    ``[4,2]T(1,0)`` / ``[8]``, or a list ``0,2,1,3``."""
    axes = tuple((m.group(1), int(m.group(2)))
                 for m in re.finditer(r"['\"]([^'\"]+)['\"]\s*=\s*(\d+)", axes_text))
    total = math.prod(size for _, size in axes)
    devices = list(range(total))
    if device_ids:
        ids = device_ids.strip()
        iota = re.fullmatch(r"\[([\d,\s]+)\]\s*(?:T\(([\d,\s]+)\))?", ids)
        devices = _devices([total], iota.group(1), iota.group(2), "") if iota \
            else _ints(ids)
    if len(devices) != total:
        raise ValueError(f"mesh {axes_text!r} of {total} devices names {len(devices)}")
    return Mesh(axes, tuple(devices))


_MESH_FORM = re.compile(r"mesh\[([^\]]*)\]\s*,?\s*"
                        r"(?:device_ids=\((\[[^\]]*\](?:T\([^)]*\))?)\)\s*,?\s*)?")


def _mesh_sharding(body: str, raw: str) -> TensorSharding:
    m = _MESH_FORM.match(body)
    if not m:
        raise ValueError(f"expected mesh[...] in {raw[:60]!r}")
    mesh = parse_mesh(m.group(1), m.group(2))
    rest = body[m.end():]
    dims_m = re.match(r"\[(.*?)\]\s*(?:,|$)", rest + ",") if rest.startswith("[") else None
    dim_axes = tuple(axis_refs(g) for g in re.findall(r"\{([^{}]*)\}", dims_m.group(1))) \
        if dims_m else ()
    unreduced = _named_set(rest, "unreduced")
    replicated = _named_set(rest, "replicated")
    return on_mesh(mesh, dim_axes, unreduced, raw, replicated)


def _named_set(text: str, key: str) -> tuple[AxisRef, ...]:
    m = re.search(key + r"=\{([^{}]*)\}", text)
    return axis_refs(m.group(1)) if m else ()


def on_mesh(mesh: Mesh, dim_axes: tuple[tuple[AxisRef, ...], ...],
            unreduced: tuple[AxisRef, ...] = (), raw: str = "",
            replicated: tuple[AxisRef, ...] = ()) -> TensorSharding:
    """The tile assignment of a sharding given as mesh axes per dimension: the mesh's
    devices, its axes cut into the sub-axes named, transposed so that each dimension's axes
    come in order, then the unreduced ones, then the rest (replicated)."""
    del replicated      # an explicitly replicated axis is one that splits nothing
    factors = _factors(mesh, [a for axes in dim_axes for a in axes] + list(unreduced))
    shape = [size for _, _, size in factors]
    index = {(name, lo): i for i, (name, lo, _) in enumerate(factors)}

    def positions(ref: AxisRef) -> list[int]:
        axis = dict(mesh.axes)[ref.name]
        size = ref.size or axis
        out, lo = [], ref.pre
        while lo < ref.pre * size:
            i = index[(ref.name, lo)]
            out.append(i)
            lo *= factors[i][2]
        return out

    order: list[int] = []
    tile_dims = []
    for axes in dim_axes:
        n = 1
        for ref in axes:
            order += positions(ref)
            n *= ref.size or dict(mesh.axes)[ref.name]
        tile_dims.append(n)
    red = [i for ref in unreduced for i in positions(ref)]
    rest = [i for i in range(len(factors)) if i not in order and i not in red]
    perm = order + red + rest
    devices = _transpose(list(mesh.devices), shape, perm)
    subgroups = []
    if red:
        subgroups.append(("unreduced", math.prod(shape[i] for i in red)))
    if rest and math.prod(shape[i] for i in rest) > 1:
        subgroups.append(("replicated", math.prod(shape[i] for i in rest)))
    if not dim_axes and not subgroups:
        return TensorSharding("replicated", raw, mesh=mesh)
    if all(t == 1 for t in tile_dims):
        # nothing split: every device holds the whole tensor (partial sums when unreduced)
        return TensorSharding("unreduced" if red else "replicated", raw, mesh=mesh,
                              dim_axes=dim_axes, unreduced=unreduced)
    return TensorSharding("tiled", raw, tuple(tile_dims), tuple(subgroups), tuple(devices),
                          mesh=mesh, dim_axes=dim_axes, unreduced=unreduced)


def _factors(mesh: Mesh, refs: list[AxisRef]) -> list[tuple[str, int, int]]:
    """The mesh's axes cut at every sub-axis boundary ``refs`` name, major to minor:
    ``(axis, pre, size)`` per factor (``pre``: the product of the factors before it in the
    same axis)."""
    cuts: dict[str, set[int]] = {name: {1, size} for name, size in mesh.axes}
    for ref in refs:
        if ref.name not in cuts:
            raise ValueError(f"axis {ref.name!r} is not in mesh {mesh}")
        if ref.size:
            cuts[ref.name] |= {ref.pre, ref.pre * ref.size}
    out = []
    for name, _ in mesh.axes:
        bounds = sorted(cuts[name])
        for lo, hi in zip(bounds, bounds[1:]):
            out.append((name, lo, hi // lo))
    return out


def _transpose(flat: list[int], shape: list[int], perm: list[int]) -> list[int]:
    """``flat`` (row-major over ``shape``) transposed by ``perm``, flattened again."""
    return [flat[i] for i in iota_tile_assignment([len(flat)], shape, perm)] \
        if perm != list(range(len(shape))) else list(flat)


# ---------------------------------------------------------------- Shardy's attributes

def sdy_meshes(module: HloModule) -> dict[str, Mesh]:
    """The meshes Shardy declared in the module's ``xla.sdy.meshes`` frontend attribute."""
    text = module.attributes.get("frontend_attributes", "")
    out = {}
    for m in re.finditer(r"(\w+)\s*=\s*#sdy\.mesh<\[([^\]]*)\](?:\s*,\s*device_ids=\[([^\]]*)\])?",
                         text.replace('\\"', '"')):
        out[m.group(1)] = parse_mesh(m.group(2), m.group(3))
    return out


def sdy_sharding(attr: str, meshes: dict[str, Mesh]) -> TensorSharding:
    """Shardy's ``#sdy.sharding<@mesh, [{"x"}, {}]>`` (or ``#sdy.sharding_per_value<[...]>``,
    a tuple) over ``meshes``."""
    text = attr.replace('\\"', '"').strip()
    per_value = text.startswith("#sdy.sharding_per_value")
    items = re.findall(r"<@(\w+)\s*,\s*\[((?:[^\[\]]|\[[^\]]*\])*)\]([^<>]*)>", text)
    if not items:
        raise ValueError(f"expected #sdy.sharding<@mesh, [...]>, got {text[:60]!r}")
    out = []
    for mesh_name, dims, tail in items:
        if mesh_name not in meshes:
            raise ValueError(f"mesh @{mesh_name} is not declared in xla.sdy.meshes")
        dim_axes = tuple(axis_refs(g) for g in re.findall(r"\{([^{}]*)\}", dims))
        out.append(on_mesh(meshes[mesh_name], dim_axes, _named_set(tail, "unreduced"), text,
                           _named_set(tail, "replicated")))
    if per_value and len(out) != 1:
        return TensorSharding("tuple", text, elements=tuple(out))
    return out[0]


def sharding_of(inst: HloInstruction, meshes: dict[str, Mesh] | None = None
                ) -> TensorSharding | None:
    """An instruction's sharding: its ``sharding=`` attribute, with the mesh axes of its
    Shardy attribute (or the mesh form) when there is one; None when it has neither."""
    raw = inst.attributes.get("sharding")
    sdy = inst.frontend_attributes.get("xla.sdy.sharding")
    if sdy is None and inst.opcode == "custom-call" and \
            inst.custom_call_target == "xla.sdy.LocalToGlobalShape":
        # a shard_map's result: the sharding its out_specs give it (no sharding= of its own)
        sdy = inst.frontend_attributes.get("xla.sdy.out_shardings")
    named = None
    if sdy and meshes:
        try:
            named = sdy_sharding(sdy, meshes)
        except ValueError:
            named = None
    if raw is None:
        return named
    hlo = parse_sharding(raw)
    if named is not None and named.kind == hlo.kind == "tiled" and \
            named.tile_dims == hlo.tile_dims:
        return _with_axes(hlo, named)
    if meshes and len(meshes) == 1:
        return name_axes(hlo, next(iter(meshes.values())))
    return hlo


def _with_axes(hlo: TensorSharding, named: TensorSharding) -> TensorSharding:
    return TensorSharding(hlo.kind, hlo.raw, hlo.tile_dims, hlo.subgroups, hlo.devices,
                          mesh=named.mesh, dim_axes=named.dim_axes, unreduced=named.unreduced)


@functools.lru_cache(maxsize=4096)     # a module repeats a few shardings many times
def name_axes(sharding: TensorSharding, mesh: Mesh) -> TensorSharding:
    """A tiled sharding without axis names (``{devices=[4,2]<=[8]}``) named on ``mesh``:
    the assignment of whole mesh axes to its dimensions that puts every device on the same
    tile (a tuple: each element); unchanged when no assignment does."""
    if sharding.kind == "tuple":
        return TensorSharding("tuple", sharding.raw, elements=tuple(
            name_axes(e, mesh) for e in sharding.elements))
    if sharding.kind != "tiled" or sharding.dim_axes or len(mesh.axes) > 4 or \
            len(sharding.devices) != len(mesh.devices):      # (> 4 axes: too many orders)
        return sharding
    want = tile_of_device(sharding, len(mesh.devices))
    for order in itertools.permutations(mesh.names):
        for cuts in itertools.product(range(len(sharding.tile_dims) + 1),
                                      repeat=len(order)):
            dims: list[list[AxisRef]] = [[] for _ in sharding.tile_dims]
            for name, dim in zip(order, cuts):
                if dim < len(dims):
                    dims[dim].append(AxisRef(name))
            sizes = dict(mesh.axes)
            if any(math.prod(sizes[a.name] for a in d) != t
                   for d, t in zip(dims, sharding.tile_dims)):
                continue
            named = on_mesh(mesh, tuple(tuple(d) for d in dims))
            if named.kind == "tiled" and tile_of_device(named, len(mesh.devices)) == want:
                return _with_axes(sharding, named)
    return sharding


# ---------------------------------------------------------------- tiles and devices

def tile_of_device(sharding: TensorSharding, num_devices: int) -> dict[int, tuple[int, ...]]:
    """Which tile each device holds: device -> tile index (one per dimension). Every device
    holds the whole tensor (tile ``(0, ...)``) when the sharding is not tiled; a maximal
    sharding puts it on its one device."""
    rank = len(sharding.tile_dims)
    if sharding.kind == "maximal":
        return {sharding.device: ()} if sharding.device is not None else {}
    if sharding.kind != "tiled":
        return {d: (0,) * rank for d in range(num_devices)}
    per_tile = math.prod(size for _, size in sharding.subgroups)
    out = {}
    for flat, device in enumerate(sharding.devices):
        tile = flat // per_tile
        idx = []
        for t in reversed(sharding.tile_dims):
            idx.append(tile % t)
            tile //= t
        out[device] = tuple(reversed(idx))
    return out


def device_slices(sharding: TensorSharding, dims: tuple[int, ...], num_devices: int
                  ) -> dict[int, tuple[tuple[int, int], ...]]:
    """Each device's part of a tensor of ``dims``: ``(start, stop)`` per dimension."""
    tiles = tile_of_device(sharding, num_devices)
    tile_dims = sharding.tile_dims if sharding.kind == "tiled" else (1,) * len(dims)
    if len(tile_dims) != len(dims):
        raise ValueError(f"sharding {sharding.raw} has {len(tile_dims)} dimensions, the shape "
                         f"{len(dims)}")
    out = {}
    for device, tile in sorted(tiles.items()):
        tile = tile or (0,) * len(dims)
        part = []
        for d, t, i in zip(dims, tile_dims, tile):
            size = -(-d // t)
            start = min(i * size, d)
            part.append((start, min(start + size, d)))
        out[device] = tuple(part)
    return out


def per_device_shape(sharding: TensorSharding, dims: tuple[int, ...]) -> tuple[int, ...]:
    """The shape one device holds: XLA pads a tile to ``ceil(dim / tiles)``."""
    if sharding.kind != "tiled":
        return tuple(dims)
    if len(sharding.tile_dims) != len(dims):
        raise ValueError(f"sharding {sharding.raw} has {len(sharding.tile_dims)} dimensions, "
                         f"the shape {len(dims)}")
    return tuple(-(-d // t) for d, t in zip(dims, sharding.tile_dims))


def per_device_bytes(sharding: TensorSharding, shape: Shape) -> int:
    """Bytes one device holds of ``shape`` (a tuple: the sum over its leaves)."""
    if shape.is_tuple:
        leaves = shape.tuple_shapes
        parts = sharding.elements if sharding.kind == "tuple" else (sharding,) * len(leaves)
        return sum(per_device_bytes(s, leaf) for s, leaf in zip(parts, leaves))
    if not shape.is_array or not shape.element_count:
        return shape.byte_size
    return shape.byte_size * math.prod(per_device_shape(sharding, shape.dimensions)) \
        // shape.element_count


def mesh_axes(sharding: TensorSharding) -> list[list[str]]:
    """The mesh axes splitting each dimension (``[['data'], []]``); for a tiled sharding
    without names, ``'xN'`` for a dimension split N ways."""
    if sharding.dim_axes:
        return [[str(a) for a in axes] for axes in sharding.dim_axes]
    if sharding.kind == "tiled":
        return [[f"x{t}"] if t > 1 else [] for t in sharding.tile_dims]
    return []


def _top_level_braces(body: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                out.append(body[start:i + 1])
    return out


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.replace(" ", "").split(",") if x]


def is_partitioned(module: HloModule) -> bool:
    """Whether ``module`` is the SPMD partitioner's output — its shapes are one device's,
    its shardings say how they tile the whole: XLA renames the partitioned ENTRY
    ``<name>_spmd``."""
    return module.entry.name.endswith("_spmd")


def global_dims(sharding: TensorSharding, dims: tuple[int, ...]) -> tuple[int, ...]:
    """The whole tensor's dimensions from one device's (a partitioned module's shapes):
    each times its tiles (XLA's padding included)."""
    if sharding.kind != "tiled" or len(sharding.tile_dims) != len(dims):
        return tuple(dims)
    return tuple(d * t for d, t in zip(dims, sharding.tile_dims))
