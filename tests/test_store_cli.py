"""`python -m compiler_bridge store add|list|remove` as scripts and admins use it."""

from __future__ import annotations

import json
import subprocess
import sys

from compiler_bridge.dumps import Store

from conftest import ROOT, sample


def run(*args: str, data: str, ok: bool = True, env_data: bool = False
        ) -> subprocess.CompletedProcess:
    import os
    env = dict(os.environ)
    env.pop("HLOLENS_DATA", None)
    cmd = [sys.executable, "-m", "compiler_bridge", "store"]
    if env_data:
        env["HLOLENS_DATA"] = data
    else:
        cmd += ["--data", data]
    p = subprocess.run(cmd + list(args), cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env=env)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def test_add_prints_the_share_id_the_app_opens(tmp_path):
    data = str(tmp_path / "data")
    p = run("add", sample("scan_while"), data=data)
    share_id = p.stdout.strip()
    assert len(share_id) >= 16 and "\n" not in share_id          # stdout: the id alone
    assert "scan_while" in p.stderr and f"?dump={share_id}" in p.stderr
    stored = Store(data).get(share_id)
    assert stored.name == "scan_while" and stored.modules[0]["name"] == "jit_step"


def test_adding_the_same_dump_again_gives_the_same_id(tmp_path):
    data = str(tmp_path / "data")
    first = run("add", sample("cond_switch"), data=data).stdout.strip()
    again = run("add", sample("cond_switch"), "--name", "other", data=data).stdout.strip()
    assert first == again
    assert len(json.loads(run("list", "--json", data=data).stdout)) == 1


def test_list_json_and_table(tmp_path):
    data = str(tmp_path / "data")
    a = run("add", sample("scan_while"), data=data).stdout.strip()
    b = run("add", sample("cond_switch"), data=data, env_data=True).stdout.strip()
    listed = json.loads(run("list", "--json", data=data, env_data=True).stdout)
    assert [d["share_id"] for d in listed] == [b, a]                # newest first
    assert set(listed[0]) >= {"share_id", "hash", "name", "uploaded_at", "size", "files",
                              "modules"}
    assert listed[0]["modules"] == [{"id": "0000", "name": "jit_route"}]
    table = run("list", data=data).stdout
    assert a in table and b in table and "cond_switch" in table and "share id" in table


def test_remove_deletes_dump_views_and_comments(tmp_path):
    data = str(tmp_path / "data")
    sid = run("add", sample("scan_while"), data=data).stdout.strip()
    store = Store(data)
    store.save_view(sid, "loop", {"dump": sid, "selected": "while.5"})
    store.add_comment(sid, "0000", "while.5", "slow", author="me")
    p = run("remove", sid, data=data)
    assert "removed scan_while" in p.stdout
    assert json.loads(run("list", "--json", data=data).stdout) == []
    assert "no dumps in" in run("list", data=data).stdout


def test_errors_are_one_line_not_a_traceback(tmp_path):
    data = str(tmp_path / "data")
    p = run("remove", "no-such-id", data=data, ok=False)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "not in this HLO Lens store" in p.stderr
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "readme.txt").write_text("not a dump")
    p = run("add", str(notes), data=data, ok=False)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "no XLA dump files" in p.stderr
    p = run("add", str(tmp_path / "missing"), data=data, ok=False)
    assert p.returncode == 1 and "no such file or folder" in p.stderr



def test_data_may_follow_the_command(tmp_path):
    """`store add DUMP --data DIR`, as the other options are written after the command,
    was a usage error ('unrecognized arguments: --data'): only `store --data DIR add`
    worked."""
    dump = sample("scan_while")
    data = str(tmp_path / "data")
    base = [sys.executable, "-m", "compiler_bridge", "store"]

    def store(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(base + list(args), cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
    p = store("add", str(dump), "--data", data)
    assert p.returncode == 0, p.stderr
    share_id = p.stdout.strip()
    assert Store(data).get(share_id).name == "scan_while"
    p = store("list", "--json", "--data", data)
    assert p.returncode == 0 and [d["share_id"] for d in json.loads(p.stdout)] == [share_id]
    assert store("verify", share_id, "--data", data).returncode == 0
    assert store("remove", share_id, "--data", data).returncode == 0
    assert json.loads(store("--data", data, "list", "--json").stdout) == []
