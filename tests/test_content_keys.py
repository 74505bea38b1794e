"""Content keys: what caches of dumps, timelines and runtime reports are keyed by. A key
is the same for the same content and changes whenever the content does."""

from __future__ import annotations

import dataclasses
import os
import shutil

from compiler_bridge import open_dump, path_key
from compiler_bridge.dumps import Store
from compiler_bridge.passes import pass_timeline
from compiler_bridge.perf import device_profile, runtime_report, uploaded

from conftest import sample


def test_a_folder_key_is_its_path_key_and_follows_its_files(tmp_path):
    folder = str(tmp_path / "d")
    shutil.copytree(sample("scan_while"), folder)
    first = open_dump(folder).key
    assert first == path_key(folder) == open_dump(folder).key
    assert first.startswith(os.path.abspath(folder) + "@")
    full = next(p for p in sorted(os.path.join(folder, n) for n in os.listdir(folder))
                if os.path.isfile(p))
    st = os.stat(full)
    os.utime(full, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))   # rewritten
    second = path_key(folder)
    assert second != first and open_dump(folder).key == second
    with open(os.path.join(folder, "extra.txt"), "w") as f:                # a file added
        f.write("x")
    assert path_key(folder) not in (first, second)


def test_an_archive_key_follows_the_archive(tmp_path):
    base = shutil.make_archive(str(tmp_path / "d"), "zip", sample("scan_while"))
    assert open_dump(base).key == path_key(base)
    dump = open_dump(base, key="given")
    assert dump.key == "given"


def test_a_stored_dump_is_keyed_by_its_content_hash(tmp_path):
    store = Store(str(tmp_path / "data"))
    stored = store.add_path(sample("scan_while"))
    assert store.open(stored.share_id).key == stored.hash


def test_timeline_key_is_the_dump_key_and_module(tmp_path):
    d = open_dump(sample("mlp_train"))
    tl = pass_timeline(d, d.main)
    assert tl.key == f"{d.key}#{tl.module_id}"


def test_runtime_report_key_follows_its_inputs():
    d = open_dump(sample("mlp_train"))
    a = runtime_report(d, device="cpu", auto_model=False)
    assert a.key == runtime_report(open_dump(sample("mlp_train")), device="cpu",
                                   auto_model=False).key
    faster = dataclasses.replace(device_profile("cpu"), bandwidth=device_profile("cpu").bandwidth * 2)
    assert faster.name == device_profile("cpu").name
    assert runtime_report(d, device=faster, auto_model=False).key != a.key
    assert runtime_report(d, device="cpu", auto_model=False, stat="min").key != a.key
    trace = uploaded("t.json", b'{"traceEvents": []}')
    other = uploaded("t.json", b'{"traceEvents": [] }')
    assert trace.key != other.key
    assert runtime_report(d, traces=[trace], device="cpu", auto_model=False).key != a.key


def test_device_profile_key_covers_every_rate():
    cpu = device_profile("cpu")
    assert cpu.key == dataclasses.replace(cpu).key
    assert cpu.key != dataclasses.replace(cpu, launch_overhead_us=cpu.launch_overhead_us + 1).key
