"""A team's store on an S3 bucket (issue 17, "Team scale"): app replicas and ``store add``
processes share one bucket through a real S3 protocol server on loopback (moto's
standalone server; the store speaks to it through fsspec and s3fs, as it would to AWS).

Each process gets its own HOME, so its own local index and file cache: a replica.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import zipfile

import pytest
import s3fs
from conftest import ROOT, missing, sample
from moto import server as moto_server

from compiler_bridge.dumps import Store, StoreError
from tests.support.browser import (
    CHROMIUM,
    GRAPH_DRAWN,
    free_port,
    launch,
    start_app,
    stop_app,
)


@pytest.fixture(scope="module")
def bucket():
    """An S3 endpoint on loopback with one bucket; yields the environment a replica needs."""
    import boto3
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    env = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": endpoint,
           "FSSPEC_S3_ENDPOINT_URL": endpoint}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)              # s3fs in this process reads these too
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="lens")
    yield env
    server.stop()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def url(name: str) -> str:
    return f"s3://lens/{name}-{time.time_ns()}"


def replica_env(bucket_env: dict, location: str, home: str) -> dict:
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, **bucket_env, HLOLENS_DATA=location, HOME=home,
               PYTHONPATH=ROOT)
    env.pop("HLOLENS_DUMP", None)
    return env


def test_concurrent_adds_from_four_replicas_keep_every_printed_link(bucket, tmp_path):
    """4 ``store add`` of one folder at once, each its own replica: every id printed
    opens, on a replica that starts later from the bucket alone."""
    location = url("concurrent")
    procs = [subprocess.Popen(
        [sys.executable, "-m", "compiler_bridge", "store", "add", sample("scan_while")],
        env=replica_env(bucket, location, str(tmp_path / f"home{i}")), cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    printed = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        printed.append(out.split()[0])
    fresh = Store(location, cache_dir=str(tmp_path / "fresh"))
    for share_id in printed:
        assert fresh.open(share_id).main.name == "jit_step"
    assert len(fresh.list()) == 1                   # one dump, stored once


def test_a_replica_killed_mid_upload_leaves_the_bucket_consistent(bucket, tmp_path):
    """SIGKILL while the dump's files are being put: no half dump is listed or opened,
    and the same dump added again lands whole."""
    location = url("killed")
    big = tmp_path / "big_dump"
    shutil.copytree(sample("transformer"), big)
    for i in range(300):                            # many objects: a long put to kill
        (big / f"module_0000.jit_train_step.extra_{i:03d}.txt").write_bytes(os.urandom(2048))
    proc = subprocess.Popen(
        [sys.executable, "-m", "compiler_bridge", "store", "add", str(big)],
        env=replica_env(bucket, location, str(tmp_path / "home_killed")), cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    fs = s3fs.S3FileSystem()
    prefix = location[len("s3://"):] + "/dumps"
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        try:
            if fs.find(prefix):
                break                                # the put has begun
        except FileNotFoundError:
            pass
        fs.invalidate_cache()
        time.sleep(0.02)
    assert proc.poll() is None, "the upload finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    fs.invalidate_cache()
    assert fs.find(prefix), "the kill came before any file was put"
    after = Store(location, cache_dir=str(tmp_path / "after"))
    assert after.list() == []                       # nothing half-stored is listed
    again = after.add_path(str(big))
    dump = Store(location, cache_dir=str(tmp_path / "later")).open(again.share_id)
    assert dump.main.name == "jit_train_step" and len(dump.files) == again.files


def test_a_rebuilt_replica_index_keeps_views_comments_and_deletions(bucket, tmp_path):
    location = url("notes")
    a = Store(location, cache_dir=str(tmp_path / "a"))
    d = a.add_path(sample("cond_switch"))
    a.save_view(d.share_id, "kept", {"module": "0000"})
    gone = a.save_view(d.share_id, "gone", {"module": "0000"})
    a.add_comment(d.share_id, "0000", "conditional", "look here")
    a.delete_view(d.share_id, gone.id)
    b = Store(location, cache_dir=str(tmp_path / "b"))
    assert [v.name for v in b.views(d.share_id)] == ["kept"]
    assert [c.text for c in b.comments(d.share_id)] == ["look here"]
    b.remove(d.share_id)
    with pytest.raises(StoreError, match="not in this HLO Lens store"):
        Store(location, cache_dir=str(tmp_path / "c")).open(d.share_id)


@pytest.mark.browser
def test_an_upload_on_one_app_replica_opens_by_link_on_another(bucket, tmp_path):
    if not os.path.exists(CHROMIUM):
        missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it")
    from playwright.sync_api import sync_playwright

    from tests.support.pages import open_uploaded, shot
    location = url("replicas")
    zipped = tmp_path / "cond_switch.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        for fn in sorted(os.listdir(sample("cond_switch"))):
            full = os.path.join(sample("cond_switch"), fn)
            if os.path.isfile(full):
                z.write(full, f"cond_switch/{fn}")
    apps = []
    logs = []
    try:
        for name in ("a", "b"):
            log = open(tmp_path / f"replica_{name}.log", "wb")  # noqa: SIM115
            logs.append(log)
            apps.append(start_app(replica_env(bucket, location, str(tmp_path / f"home_{name}")),
                                  log, timeout=60))
        (_, url_a), (_, url_b) = apps
        artifacts = os.path.join(ROOT, "test-artifacts")
        os.makedirs(artifacts, exist_ok=True)
        with sync_playwright() as pw:
            browser = launch(pw)       # a fresh profile each launch
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                got = open_uploaded(page, url_a, str(zipped))
                query = urllib.parse.urlencode(got)
                other = browser.new_page(viewport={"width": 1400, "height": 900})
                other.goto(f"{url_b}?{query}")
                other.wait_for_function(GRAPH_DRAWN, timeout=60_000)
                other.get_by_text("jit_route", exact=False).filter(visible=True).first.wait_for()
                assert "not in this HLO Lens store" not in other.content()
                shot(other, artifacts, "s3-replica-b-opens-link-from-a.png")
            finally:
                browser.close()
    finally:
        for proc, _ in apps:
            stop_app(proc)
        for log in logs:
            log.close()
