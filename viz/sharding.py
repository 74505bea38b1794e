"""Sharded programs drawn: a badge per sharding on the graph (its mesh axes, a border colour
per distinct sharding, a ⇄ line on each collective), the picture of the mesh with which
device holds which tile (or which group a collective's device is in), and the rows of the
Communication view (collectives, by source line, overlap). Pure builders: models in, plain
descriptions out."""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler_bridge.hlo import HloInstruction, HloModule, parse_shape
from compiler_bridge.spmd import (Link, Mesh, TensorSharding, by_source, collective_rows,
                                  device_slices, global_dims, is_partitioned, num_partitions,
                                  overlap, per_device_bytes, per_device_shape, sdy_meshes,
                                  sharding_of, tile_of_device)

from .panels import human_bytes

# one colour per distinct sharding of a module (borders and mesh cells)
PALETTE = ("#1c7ed6", "#e8590c", "#2f9e44", "#ae3ec9", "#f08c00", "#0c8599", "#c2255c",
           "#5c940d", "#6741d9", "#868e96")


def _shardings(module: HloModule, hint: Mesh | None = None) -> dict[str, TensorSharding]:
    """Each sharded instruction's sharding, its axes named on the module's mesh (or on
    ``hint``, the mesh before optimizations, when the module names none)."""
    def compute(m: HloModule) -> dict[str, TensorSharding]:
        meshes = sdy_meshes(m) or ({"mesh": hint} if hint is not None else {})
        out = {}
        for inst in m.instructions():
            if "sharding" in inst.attributes:
                try:
                    s = sharding_of(inst, meshes)
                except ValueError:
                    continue
                if s is not None:
                    out[inst.name] = s
        return out
    return module.derived(f"viz.sharding.shardings:{hint}", compute)


def sharding_decorations(module: HloModule, hint: Mesh | None = None
                         ) -> dict[str, dict[str, str]]:
    """Graph decorations of a partitioned module (``num_partitions`` > 1): a ``⊞`` line
    with each sharded instruction's mesh axes per dimension and a border colour per
    distinct sharding, a ``⇄`` line on each collective (kind, group size, bytes sent).
    Empty for a module on one device. ``hint``: the mesh before optimizations, to name the
    axes of a later stage's shardings."""
    if num_partitions(module) <= 1:
        return {}
    out: dict[str, dict[str, str]] = {}
    colours: dict[str, str] = {}
    for name, s in _shardings(module, hint).items():
        label = s.label()
        colour = colours.setdefault(label, PALETTE[len(colours) % len(PALETTE)])
        out[name] = {"label": f"⊞ {label}", "color": colour, "penwidth": "2",
                     "tooltip": f"sharding {s.raw}"}
    for r in collective_rows(module):
        line = f"⇄ {r['kind']} n={r['group_size']}, sends {human_bytes(r['sent_bytes'])}"
        cur = out.setdefault(r["name"], {})
        cur["label"] = f"{cur['label']}\n{line}" if "label" in cur else line
    return out


@dataclass
class MeshCell:
    device: int
    text: str          # 'tile (1, 0)' or 'group 2'
    colour: str


@dataclass
class ShardingCard:
    """What the inspector shows of one instruction's sharding or collective."""

    title: str
    lines: list[str] = field(default_factory=list)
    axes: tuple[str, ...] = ()                 # the grid's row / column axes
    grid: list[list[MeshCell]] = field(default_factory=list)


def _mesh_of(module: HloModule, s: TensorSharding | None, devices: int,
             hint: Mesh | None) -> Mesh:
    """The mesh to draw on: the sharding's own, the module's (Shardy's), ``hint`` (the
    mesh of the module before optimizations, whose text still names it), else one row."""
    if s is not None and s.mesh is not None:
        return s.mesh
    meshes = sdy_meshes(module)
    if len(meshes) == 1:
        return next(iter(meshes.values()))
    if hint is not None and len(hint.devices) == devices:
        return hint
    return Mesh((("devices", devices),), tuple(range(devices)))


def mesh_hint(module: HloModule) -> Mesh | None:
    """The one mesh a module's text declares (Shardy's ``xla.sdy.meshes``), if one."""
    meshes = sdy_meshes(module)
    return next(iter(meshes.values())) if len(meshes) == 1 else None


def _grid(mesh: Mesh, cell) -> tuple[tuple[str, ...], list[list[MeshCell]]]:
    """The mesh as rows (its first axis) and columns (the rest, flattened)."""
    rows = mesh.shape[0] if len(mesh.shape) > 1 else 1
    cols = len(mesh.devices) // rows
    grid = [[cell(mesh.devices[r * cols + c]) for c in range(cols)] for r in range(rows)]
    names = mesh.names
    return (names[0], " × ".join(names[1:])) if len(names) > 1 else ("", names[0]), grid


def sharding_card(module: HloModule, inst: HloInstruction, hint: Mesh | None = None
                  ) -> ShardingCard | None:
    """The selected instruction on the mesh: for a sharded one, which device holds which
    tile (its slice, per-device shape and bytes); for a collective, its device groups (a
    collective-permute: where each device sends). ``hint``: the mesh to draw on when the
    module does not name one."""
    devices = num_partitions(module)
    if devices <= 1:
        return None
    rows = {r["name"]: r for r in collective_rows(module)}
    s = _shardings(module, hint).get(inst.name)
    if inst.name in rows:
        r = rows[inst.name]
        mesh = _mesh_of(module, s, devices, hint)
        group_of = {d: i for i, g in enumerate(r["groups"]) for d in g}
        card = ShardingCard(f"{r['kind']} on {devices} devices", [
            f"{'async (done: ' + str(r['done']) + ')' if r['async'] else 'synchronous'}, "
            f"{len(r['groups'])} groups of {r['group_size']}",
            f"result {r['result_shape']} = {human_bytes(r['result_bytes'])} per device; "
            f"sends {human_bytes(r['sent_bytes'])} (README's formula)"])
        if r["kind"] == "collective-permute":      # pairs: each device's target
            target = {p[0]: p[1] for p in r["groups"]}
            card.lines[0] = f"{len(r['groups'])} source → target pairs"
            card.axes, card.grid = _grid(mesh, lambda d: MeshCell(
                d, (f"→ device {target[d]}" if target[d] != d else "keeps its own")
                if d in target else "sends nothing",
                PALETTE[target[d] % len(PALETTE)] if d in target and target[d] != d
                else "#adb5bd"))
            return card
        card.axes, card.grid = _grid(mesh, lambda d: MeshCell(
            d, f"group {group_of[d]}" if d in group_of else "—",
            PALETTE[group_of[d] % len(PALETTE)] if d in group_of else "#dee2e6"))
        return card
    if s is None or s.kind == "tuple" or not inst.shape.is_array:
        return None
    dims = tuple(inst.shape.dimensions)
    if is_partitioned(module):     # its shapes are one device's: the whole from the tiles
        dims = global_dims(s, dims)
    whole = parse_shape(f"{inst.shape.element_type}[{','.join(map(str, dims))}]")
    tiles = tile_of_device(s, devices)
    try:
        slices = device_slices(s, dims, devices)
        shape = per_device_shape(s, dims)
    except ValueError:
        return None
    mesh = _mesh_of(module, s, devices, hint)
    order = sorted(set(tiles.values()))
    card = ShardingCard(f"sharding {s.label()}", [
        f"`{s.raw}`",
        f"per device: {inst.shape.element_type}[{','.join(map(str, shape))}] = "
        f"{human_bytes(per_device_bytes(s, whole))} of {whole.without_layout()} = "
        f"{human_bytes(whole.byte_size)}"])

    def cell(d: int) -> MeshCell:
        if d not in tiles:
            return MeshCell(d, "—", "#dee2e6")
        part = ", ".join(f"{a}:{b}" for a, b in slices.get(d, ()))
        return MeshCell(d, f"tile {tiles[d]} [{part}]",
                        PALETTE[order.index(tiles[d]) % len(PALETTE)])
    card.axes, card.grid = _grid(mesh, cell)
    return card


def communication(module: HloModule, before: HloModule | None, link: Link) -> dict:
    """The Communication view's rows: the collectives (with causes when ``before``, the
    partitioner's input, is given), the same grouped by source line, and the overlap with
    the exposed time estimate over ``link``."""
    rows = collective_rows(module, before)
    over = overlap(module, rows, link)
    table = []
    for r, o in zip(rows, over):
        cause = r["cause"] or {}
        table.append({
            "collective": r["name"], "kind": r["kind"], "async": r["async"],
            "group size": r["group_size"], "groups": len(r["groups"]),
            "result": human_bytes(r["result_bytes"]), "sent": human_bytes(r["sent_bytes"]),
            "sent bytes": r["sent_bytes"],
            "source": r["source"], "op_name": r["op_name"],
            "cause": cause.get("instruction", ""),
            "producer sharding": cause.get("producer_sharding", ""),
            "consumer sharding": cause.get("consumer_sharding", ""),
            "compute between": len(o["compute_between"]),
            "compute between start and done": ", ".join(o["compute_between"][:6]) + (
                f" … (+{len(o['compute_between']) - 6})" if len(o["compute_between"]) > 6
                else ""),
            "estimate (µs)": round(o["estimated_s"] * 1e6, 3),
            "exposed (µs)": round(o["exposed_s"] * 1e6, 3)})
    grouped = [{"source": g["source"], "collectives": g["count"],
                "kinds": ", ".join(f"{n} {k}" for k, n in sorted(g["kinds"].items())),
                "sent": human_bytes(g["sent_bytes"]), "sent bytes": g["sent_bytes"]}
               for g in by_source(rows)]
    exposed = sum(o["exposed_s"] for o in over)
    return {"rows": table, "by_source": grouped, "link": link,
            "total_sent": sum(r["sent_bytes"] for r in rows),
            "estimated_s": sum(o["estimated_s"] for o in over), "exposed_s": exposed,
            "async": sum(r["async"] for r in rows)}
