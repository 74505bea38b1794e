"""``python -m compiler_bridge`` as the tests run it: a child process from the checkout's root,
on CPU, with its own cache folder when asked (no user-saved model or profile leaks in)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.samples import ROOT


def run(*args: str, tmp_env: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if tmp_env:
        env["HLOLENS_CACHE"] = tmp_env      # no user-saved model or profile leaks in
    env.setdefault("JAX_PLATFORMS", "cpu")
    return subprocess.run([sys.executable, "-m", "compiler_bridge", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
