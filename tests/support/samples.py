"""The committed sample dumps, for the tests: a sample's folder (a missing one fails the
test), and a sample zipped as a user uploads it."""

from __future__ import annotations

import glob
import os
import shutil
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = os.path.join(ROOT, "sample_dumps")
# a real traced dump with asynchronous dots (tests/fixtures/attn_async/README.md)
ASYNC = os.path.join(ROOT, "tests", "fixtures", "attn_async")


def sample(name: str) -> str:
    path = os.path.join(SAMPLES, name)
    if not os.path.isdir(path):
        pytest.fail(f"sample dump {name} is missing; run `make samples`")
    return path


def sample_zip(tmp_path_factory, name: str) -> str:
    """A sample dump zipped as a user would: one top folder named after it."""
    out = tmp_path_factory.mktemp("zips") / f"{name}.zip"
    src = sample(name)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for dirpath, _, files in os.walk(src):
            for fn in files:
                full = os.path.join(dirpath, fn)
                z.write(full, os.path.join(name, os.path.relpath(full, src)))
    return str(out)


def with_broken_session(folder, name: str = "scan_while") -> tuple[str, str]:
    """A copy of sample ``name`` in ``folder`` with a second profiling session whose files
    are its own session's cut in half: (the copy, the broken session's folder)."""
    out = os.path.join(str(folder), name)
    shutil.copytree(sample(name), out)
    good = os.path.dirname(glob.glob(os.path.join(out, "trace/plugins/profile/*/*.json.gz"))[0])
    bad = os.path.join(os.path.dirname(good), "2099_01_01_00_00_00")
    shutil.copytree(good, bad)
    for path in glob.glob(os.path.join(bad, "*")):
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)
    return out, bad
