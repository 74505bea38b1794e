"""Regenerate the GPU and TPU sample dumps in sample_dumps/ by compiling without the hardware.

Run from anywhere (normally via ``make samples-backends``):

    .venv/bin/python sample_dumps/make_backend_samples.py             # all targets
    .venv/bin/python sample_dumps/make_backend_samples.py tpu_v5e     # just some

XLA's GPU and TPU compilers live in a virtualenv of their own, ``.venv-backends``
(created here from ``sample_dumps/requirements-backends.txt`` when missing or when the
requirements changed): jax/jaxlib 0.10.2, libtpu and the CUDA 12 plugin without NVIDIA
wheels. Each target runs this script again in that venv (``--child``), in its own process
(XLA reads ``XLA_FLAGS`` once per process), with ``JAX_PLATFORMS=cpu`` and
``XLA_FLAGS=--xla_dump_to=sample_dumps/<target>``. The child asks JAX for the target's
topology (``jax.experimental.topologies.get_topology_desc``: a TPU topology by name, or an
H100 from ``compiler_bridge/targets/specs/h100_sxm.txtpb``, XLA's published device spec), builds the programs of
``programs/backend_programs.py`` on its devices and compiles each with
``jax.jit(...).lower(<ShapeDtypeStructs with shardings>).compile()``: XLA:GPU or XLA:TPU
compiles, nothing runs.

Beside the dump the child writes ``xla_facts.json``: per module what XLA itself says of the
compile (``cost_analysis()``, ``memory_analysis()``, or the error of a compile that failed),
with the target, its device kind and device count, and the versions. These are the
expected values of the tests; none comes from HLO Lens.

Afterwards each folder is pruned to what a reader needs (the HLO text before and after
optimizations, after codegen on TPU, buffer assignment, live ranges, memory-usage report,
thunk sequence, autotune results, a few PTX kernels, the module's MLIR and topology; the
GPU target config and the TPU compilation environment once per folder, as they are the same
for every module of a target; the SPMD partitioner's output of multi-device modules): LLVM
IR, flag files, compile options, copies of the after-optimizations text and the
buffer-assignment values go.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VENV = REPO / ".venv-backends"
VENV_PYTHON = VENV / "bin" / "python"
REQUIREMENTS = HERE / "requirements-backends.txt"
H100_CONFIG = REPO / "compiler_bridge" / "targets" / "specs" / "h100_sxm.txtpb"
FACTS = "xla_facts.json"
BUDGET = 3_000_000   # bytes, all backend samples together
MAX_PTX = 3          # PTX files kept per module (the first kernels, by XLA's numbering)
MAX_MLIR = 20_000    # bytes: a larger module.mlir is dropped


@dataclass(frozen=True)
class Target:
    name: str                 # sample folder under sample_dumps/
    platform: str             # "cuda" or "tpu"
    topology: str             # TPU topology name, or the GPU "slices x hosts x devices"
    programs: tuple[str, ...]  # keys of backend_programs.PROGRAMS, compiled in this order
    description: str


TRAINING = ("transformer", "convnet", "sharded")
TARGETS = [
    Target("gpu_h100", "cuda", "1x1x4", TRAINING,
           "4 H100 SXM GPUs (one host): transformer and conv net on one, the sharded MLP "
           "on all four"),
    Target("tpu_v5e", "tpu", "v5e:2x2", TRAINING,
           "TPU v5e 2x2 (4 chips): transformer and conv net on one chip, the sharded MLP "
           "on all four"),
    Target("tpu_v6e", "tpu", "v6e:2x2", TRAINING, "TPU v6e (Trillium) 2x2, the same programs"),
    Target("tpu_v5e_oom", "tpu", "v5e:2x2", ("oom",),
           "the conv net train step at batch 8192 of 224x224 images on one v5e chip: "
           "RESOURCE_EXHAUSTED"),
]

# module_NNNN.<name>[.cl_NNN].<rest> (TPU module names carry libtpu's .cl_<number>)
MODULE_RE = re.compile(r"^(module_\d+\.[^.]+(?:\.cl_\d+)?)(?:\.(.+))?$")
KEEP = re.compile(
    r"^(before_optimizations\.txt|(?:sm_[\d.]+a?_gpu_)?after_optimizations\.txt|"
    r"after_codegen\.txt|after_spmd_partitioner\.txt|"
    r"(?:sm_[\d.]+a?_gpu_)?after_optimizations-(?:buffer-assignment|live-range|"
    r"memory-usage-report)\.txt|thunk_sequence\.txt|autotune_results\.pbtxt|"
    r"gpu_target_config\.pbtxt|tpu_comp_env\.txt|debug_options|\d+\.ptx)$")
KEEP_IN_FOLDER = ("module.mlir", "topology.textproto")
# kept for the first module of a folder only, when the others' are the same text
ONCE = re.compile(r"^(tpu_comp_env\.txt|gpu_target_config\.pbtxt)$")


# ---- parent: venv, children, pruning -----------------------------------------------------

def ensure_venv() -> None:
    """Create .venv-backends, or reinstall it when the requirements changed."""
    stamp = VENV / ".requirements"
    wanted = REQUIREMENTS.read_text()
    if VENV_PYTHON.exists() and stamp.exists() and stamp.read_text() == wanted:
        return
    print(f"creating {VENV.relative_to(REPO)} from {REQUIREMENTS.relative_to(REPO)}", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run([str(VENV_PYTHON), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)],
                   check=True)
    stamp.write_text(wanted)


def run(target: Target, folder: Path) -> None:
    rel = f"sample_dumps/{target.name}"   # relative: debug_options shows this path
    # one LLVM module at a time: in parallel, the PTX files' numbers change from run to run
    flags = f"--xla_dump_to={rel}" + (" --xla_gpu_force_compilation_parallelism=1"
                                      if target.platform == "cuda" else "")
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=flags,
               TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0")
    cmd = [str(VENV_PYTHON), "sample_dumps/make_backend_samples.py", "--child", target.name]
    print(f"[{target.name}] {target.platform} {target.topology}: {', '.join(target.programs)}",
          flush=True)
    folder.mkdir(parents=True)
    proc = subprocess.run(cmd, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    for line in proc.stdout.splitlines():
        print(f"[{target.name}]   {line}")
    if proc.returncode != 0:
        raise SystemExit(f"[{target.name}] child failed ({proc.returncode}):\n"
                         + proc.stderr[-3000:])


def prune(folder: Path) -> int:
    """Delete what a reader does not need; return the number of entries deleted."""
    facts = json.loads((folder / FACTS).read_text())
    one_device = {m["files"] for m in facts["modules"] if m["devices"] == 1}
    doomed: list[Path] = []
    ptx: dict[str, list[Path]] = {}
    once: dict[str, list[Path]] = {}
    for p in sorted(folder.iterdir()):
        m = MODULE_RE.match(p.name)
        if m is None:
            continue                                  # xla_facts.json
        module, rest = m.group(1), m.group(2) or ""
        if p.is_dir():
            doomed += [q for q in p.iterdir() if q.name not in KEEP_IN_FOLDER
                       or (q.name == "module.mlir" and q.stat().st_size > MAX_MLIR)]
        elif not KEEP.match(rest) or (rest == "after_spmd_partitioner.txt"
                                      and module in one_device):
            doomed.append(p)        # (on one device the partitioner's output is its input)
        elif p.suffix == ".ptx":
            ptx.setdefault(module, []).append(p)
        elif ONCE.match(rest):
            once.setdefault(rest, []).append(p)
    for files in ptx.values():
        nonempty = sorted((p for p in files if p.stat().st_size),
                          key=lambda p: int(p.name.rsplit(".", 2)[-2]))
        doomed += [p for p in files if p not in nonempty[:MAX_PTX]]
    for first, *others in once.values():
        doomed += [p for p in others if p.read_bytes() == first.read_bytes()]
    for p in doomed:
        p.unlink()
    return len(doomed)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(next(t for t in TARGETS if t.name == argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="target names (default: all)")
    parser.add_argument("--venv", action="store_true",
                        help="only create (or update) .venv-backends, compile nothing")
    args = parser.parse_args(argv)
    if args.venv:
        ensure_venv()
        return 0
    by_name = {t.name: t for t in TARGETS}
    unknown = [n for n in args.targets if n not in by_name]
    if unknown:
        parser.error(f"unknown targets {unknown}; known: {list(by_name)}")
    ensure_venv()
    for target in [by_name[n] for n in args.targets] if args.targets else TARGETS:
        folder = HERE / target.name
        if folder.exists():
            shutil.rmtree(folder)
        run(target, folder)
        removed = prune(folder)
        print(f"[{target.name}] removed {removed} files; kept {folder_bytes(folder):,} bytes")
    total = sum(folder_bytes(HERE / t.name) for t in TARGETS if (HERE / t.name).exists())
    print(f"backend samples: {total:,} bytes (budget {BUDGET:,})")
    return 1 if total > BUDGET else 0


# ---- child (in .venv-backends): compile and record what XLA says --------------------------

def topology_devices(target: Target) -> list:
    from jax.experimental import topologies
    if target.platform == "tpu":
        topo = topologies.get_topology_desc(platform="tpu", topology_name=target.topology)
    else:
        topo = topologies.get_topology_desc(platform="cuda", topology_name="",
                                            target_config=H100_CONFIG.read_text(),
                                            topology=target.topology)
    return list(topo.devices)


def cost_facts(compiled) -> dict[str, float] | None:
    cost = compiled.cost_analysis()          # None on GPU (compiled without a GPU)
    return None if cost is None else {k: float(v) for k, v in sorted(cost.items())}


def memory_facts(compiled) -> dict[str, int]:
    stats = compiled.memory_analysis()
    return {k: getattr(stats, k) for k in sorted(dir(stats))
            if k.endswith("_in_bytes") and isinstance(getattr(stats, k), int)}


def new_module(folder: Path, before: set[str]) -> str:
    """The ``module_NNNN.<name>[.cl_N]`` prefix of the one module dumped since ``before``."""
    prefixes = {m.group(1) for n in set(os.listdir(folder)) - before
                if (m := MODULE_RE.match(n))}
    if len(prefixes) != 1:
        raise SystemExit(f"expected one new module in {folder}, found {sorted(prefixes)}")
    return prefixes.pop()


def child(target: Target) -> None:
    import importlib.metadata

    import jax
    sys.path.insert(0, str(HERE / "programs"))
    from backend_programs import PROGRAMS

    folder = REPO / "sample_dumps" / target.name
    devices = topology_devices(target)
    modules = []
    for key in target.programs:
        fn, args, options = PROGRAMS[key](devices)
        before = set(os.listdir(folder))
        fact: dict = {"program": key,
                      "devices": len(jax.tree.leaves(args)[0].sharding.device_set)}
        try:
            compiled = jax.jit(fn, **options).lower(*args).compile()
        except Exception as e:   # noqa: BLE001 - a failed compile is a fact to keep
            fact["error"] = str(e)
            print(f"{key}: compile failed: {str(e).splitlines()[0][:160]}")
        else:
            fact["cost_analysis"] = cost_facts(compiled)
            fact["memory_analysis"] = memory_facts(compiled)
            print(f"{key}: flops {(fact['cost_analysis'] or {}).get('flops')}, "
                  f"memory {fact['memory_analysis']}")
        prefix = new_module(folder, before)
        fact = {"module": prefix.split(".")[1], "files": prefix, **fact}
        modules.append(fact)
    plugin = "libtpu" if target.platform == "tpu" else "jax-cuda12-plugin"
    facts = {
        "made_by": "sample_dumps/make_backend_samples.py",
        "description": target.description,
        "platform": target.platform,
        "topology": target.topology,
        "device_kind": devices[0].device_kind,
        "num_devices": len(devices),
        "versions": {p: importlib.metadata.version(p) for p in ("jax", "jaxlib", plugin)},
        "modules": modules,
    }
    (folder / FACTS).write_text(json.dumps(facts, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
