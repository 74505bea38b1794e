"""Regenerate the TensorFlow sample dumps in sample_dumps/ from real TF2 programs.

Run from anywhere (normally via ``make samples``, after ``make_samples.py``):

    .venv/bin/python sample_dumps/make_tf_samples.py                  # all TF samples
    .venv/bin/python sample_dumps/make_tf_samples.py tf_autocluster   # just some

TensorFlow lives in a virtualenv of its own, ``.venv-tf`` (created here when missing:
``python3.11 -m venv .venv-tf && .venv-tf/bin/pip install tensorflow-cpu==2.21.0``); it is
used only while making samples: the app never imports TensorFlow.

Each sample runs one ``sample_dumps/programs/tf_*.py`` in its own process with
``TF_DUMP_GRAPH_PREFIX`` and ``XLA_FLAGS=--xla_dump_to`` both pointing at
``sample_dumps/<sample>/`` (graphs and XLA files in one folder), the sample's
``TF_XLA_FLAGS`` (auto-clustering or not, always ``--tf_xla_clustering_debug``) and
``TF_CPP_VMODULE`` set so that stderr (kept as ``<sample>/tf_log.txt``) has the
``Found uncompilable node`` reasons, the ``Clustering info`` summary and the
``Dumped Graph to`` lines (``tf_binary``: binary GraphDefs, ``TF_DUMP_GRAPH_FMT=BIN``, and no
log, as a user who did not ask for one has). Afterwards object files (``*.o``), LLVM IR and XLA files other
than the HLO text are deleted, and so are the XLA modules of TF's own eager helpers
(anything not a cluster or a jit function), to keep the samples small.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VENV = REPO / ".venv-tf"
TF_PYTHON = VENV / "bin" / "python"
TF_REQUIREMENT = "tensorflow-cpu==2.21.0"
BUDGET = 1_700_000   # bytes, all TF samples together (sample_dumps/ all told: 9 MB)

AUTO_JIT = "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_clustering_debug"
VMODULE = ("mark_for_compilation_pass=3,compilability_check_util=3,"
           "encapsulate_subgraphs_pass=1,build_xla_ops_pass=1")
# the XLA files kept: HLO text before and after optimizations
KEEP_XLA = re.compile(r"^module_\d+\.(.+)\.(before_optimizations|cpu_after_optimizations|"
                      r"after_optimizations)\.txt$")
# with Sample.memory: the files XLA's memory readers need as well
KEEP_MEMORY = re.compile(r"^module_\d+\.(.+)\.cpu_after_optimizations"
                         r"-(buffer-assignment|memory-usage-report)\.txt$")
# XLA modules of TF's clusters and jit functions (others are eager helpers)
OURS = re.compile(r"^(cluster_\d+|a_inference_.*)")


@dataclass(frozen=True)
class Sample:
    name: str
    program: str
    tf_xla_flags: str
    description: str
    binary: bool = False     # TF_DUMP_GRAPH_FMT=BIN: binary GraphDefs (*.pb)
    log: bool = True         # keep stderr (with TF_CPP_VMODULE) as tf_log.txt
    trace: bool = False      # the program writes a profiler trace to <sample>/trace
    graphs: str = ""         # a regex: only the graph dumps it matches are kept ('' all;
                             # tf_keras: two small rounds, the step graph's, the big string one)
    memory: bool = False     # keep the XLA modules' buffer assignment and memory-usage report


SAMPLES = [
    Sample("tf_autocluster", "tf_autocluster.py", AUTO_JIT,
           "MLP train step, auto-clustered (tf_xla_auto_jit=2 on CPU), profiler trace",
           trace=True),
    Sample("tf_uncompilable", "tf_uncompilable.py", AUTO_JIT,
           "auto-clustering cut by string ops and the remapper's _FusedMatMul"),
    Sample("tf_jit", "tf_jit.py", "--tf_xla_clustering_debug",
           "tf.function(jit_compile=True), called directly and from a tf.function"),
    Sample("tf_binary", "tf_uncompilable.py", AUTO_JIT,
           "tf_uncompilable's program with binary graph dumps and no log",
           binary=True, log=False),
    Sample("tf_keras", "tf_keras.py", AUTO_JIT,
           "Keras model.fit auto-clustered: many rounds, remapper fusions, memory reports",
           graphs=r"^mark_for_compilation(_1|_23|_29)?\.pbtxt$", memory=True),
    Sample("tf_two_steps", "tf_two_steps.py", AUTO_JIT,
           "a training and an evaluation step, each auto-clustered: clusters in two graphs",
           graphs=r"^mark_for_compilation(_\d+)?\.pbtxt$"),
    Sample("tf_jit_in_cluster", "tf_jit_in_cluster.py", AUTO_JIT,
           "a jit_compile function called in an auto-clustered step: its call in the cluster",
           graphs=r"^mark_for_compilation(_\d+)?\.pbtxt$"),
    Sample("tf_data", "tf_data.py", AUTO_JIT,
           "a training step fed by a tf.data map that XLA clusters too: the map's graph "
           "has more clustered nodes than the step's",
           # encapsulate_subgraphs_before_4: the dataset's graph, whose library holds the
           # map's function (dumped with encapsulate_subgraphs_pass's VLOG on)
           graphs=r"^(mark_for_compilation(_\d+)?|encapsulate_subgraphs_before_4)\.pbtxt$"),
    Sample("tf_no_debug", "tf_uncompilable.py", AUTO_JIT.replace(" --tf_xla_clustering_debug", ""),
           "tf_uncompilable's program without --tf_xla_clustering_debug: no "
           "mark_for_compilation dumps, the clusters only in encapsulate_subgraphs_before",
           graphs=r"^encapsulate_subgraphs_before(_\d+)?\.pbtxt$"),
]


def ensure_venv() -> None:
    if TF_PYTHON.exists():
        return
    print(f"creating {VENV.relative_to(REPO)} with {TF_REQUIREMENT}", flush=True)
    subprocess.run(["python3.11", "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(TF_PYTHON), "-m", "pip", "install", "-q", TF_REQUIREMENT], check=True)


def run(sample: Sample, folder: Path) -> None:
    rel = f"sample_dumps/{sample.name}"     # relative: the log's paths show this
    env = dict(os.environ)
    env.update({
        "TF_XLA_FLAGS": sample.tf_xla_flags,
        "TF_DUMP_GRAPH_PREFIX": rel,
        "XLA_FLAGS": f"--xla_dump_to={rel} --xla_dump_hlo_as_text",
        "TF_CPP_VMODULE": VMODULE if sample.log else "",
        "TF_CPP_MIN_LOG_LEVEL": "0" if sample.log else "1",
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONHASHSEED": "0",
    })
    if sample.binary:
        env["TF_DUMP_GRAPH_FMT"] = "BIN"
    folder.mkdir(parents=True)
    cmd = [str(TF_PYTHON), f"sample_dumps/programs/{sample.program}"]
    if sample.trace:
        cmd.append(f"{rel}/trace")
    print(f"[{sample.name}] TF_XLA_FLAGS={sample.tf_xla_flags!r} $ {' '.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if sample.log:
        (folder / "tf_log.txt").write_text(proc.stderr, encoding="utf-8")
    print(f"[{sample.name}]   {proc.stdout.strip()}")
    if proc.returncode != 0:
        raise SystemExit(f"[{sample.name}] program failed ({proc.returncode}):\n"
                         + proc.stderr[-3000:])


def prune(sample: Sample, folder: Path) -> None:
    removed = 0
    for p in sorted(folder.iterdir()):
        if p.name.startswith("module_"):
            m = KEEP_XLA.match(p.name) or (KEEP_MEMORY.match(p.name) if sample.memory
                                           else None)
            if p.is_dir() or m is None or not OURS.match(m.group(1)):
                shutil.rmtree(p) if p.is_dir() else p.unlink()
                removed += 1
        elif sample.graphs and p.suffix in (".pbtxt", ".pb") \
                and not re.match(sample.graphs, p.name):
            p.unlink()      # graph dumps the sample does not need (samples stay small)
            removed += 1
    print(f"[{sample.name}] removed {removed} files (helpers, .o, .ll, protos, graphs)")


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", nargs="*", help="sample names (default: all)")
    args = parser.parse_args(argv)
    by_name = {s.name: s for s in SAMPLES}
    unknown = [n for n in args.samples if n not in by_name]
    if unknown:
        parser.error(f"unknown samples {unknown}; known: {list(by_name)}")
    ensure_venv()
    total = 0
    for sample in [by_name[n] for n in args.samples] if args.samples else SAMPLES:
        folder = HERE / sample.name
        if folder.exists():
            shutil.rmtree(folder)
        run(sample, folder)
        prune(sample, folder)
        size = folder_bytes(folder)
        total += size
        graphs = sum(1 for p in folder.iterdir() if p.suffix in (".pbtxt", ".pb"))
        print(f"[{sample.name}] {graphs} graph files, {size:,} bytes")
    print(f"TF samples: {total:,} bytes (budget {BUDGET:,})")
    return 1 if total > BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
