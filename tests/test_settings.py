"""One settings object: every ``HLOLENS_*`` variable is read in one place, and the README's
table of settings is the one :data:`compiler_bridge.config.ENVIRONMENT` describes."""

from __future__ import annotations

import ast
import os

import pytest

from compiler_bridge import Settings, SettingsError, Store, StoreError, settings
from compiler_bridge.config import ENVIRONMENT, settings_table
from conftest import ROOT


def test_the_readme_table_is_the_settings_table():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert settings_table() in readme


def test_every_variable_the_code_names_is_in_the_table():
    """A variable read anywhere in the product is one the table (and so the README) names."""
    named = {s.variable for s in ENVIRONMENT}
    for package in ("compiler_bridge", "viz", "ui", "hlolens"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, package)):
            for fn in files:
                if not fn.endswith(".py"):
                    continue
                text = open(os.path.join(dirpath, fn), encoding="utf-8").read()
                for node in ast.walk(ast.parse(text)):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                            and node.value.startswith("HLOLENS_") and node.value != "HLOLENS_" \
                            and node.value.rstrip("_").isupper() and " " not in node.value:
                        assert node.value in named, (fn, node.value)


def test_only_the_settings_module_reads_the_environment_or_argv():
    """Nine modules read nine variables before (issue 29): now one does."""
    readers = []
    for package in ("compiler_bridge", "viz", "ui"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, package)):
            for fn in files:
                path = os.path.join(dirpath, fn)
                if not fn.endswith(".py"):
                    continue
                tree = ast.parse(open(path, encoding="utf-8").read())
                for node in ast.walk(tree):
                    # os.environ.get(...) / os.environ[...] reads; dict(os.environ) copies for a
                    # child process are not reads of a setting
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr in ("get", "getenv") \
                            and "environ" in ast.unparse(node.func.value) + node.func.attr:
                        readers.append(os.path.relpath(path, ROOT))
                    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in (
                            "os.environ", "sys.argv"):
                        readers.append(os.path.relpath(path, ROOT))
    # (profile_runner and compile_child are child processes' scripts: the argv they read is
    # what their parent passed, no setting; ui.serve hands its argv to Streamlit's CLI unread)
    assert set(readers) <= {os.path.join("compiler_bridge", "config", "__init__.py"),
                            os.path.join("compiler_bridge", "perf", "profile_runner.py"),
                            os.path.join("compiler_bridge", "targets", "compile_child.py"),
                            os.path.join("ui", "serve.py")}, \
        readers


def test_defaults_and_the_forms_each_variable_takes():
    assert Settings.read({}) == Settings()
    s = Settings.read({"HLOLENS_DATA": "s3://b/x", "HLOLENS_LIST_ALL": "Yes",
                       "HLOLENS_STORE_QUOTA": "500M", "HLOLENS_MAX_RATIO": "50",
                       "HLOLENS_MAX_TRACE_BYTES": "1048576", "HLOLENS_CACHE": "/c",
                       "HLOLENS_GRAPHVIZ": "wasm", "HLOLENS_DUMP": "/d",
                       "HLOLENS_STORE_FILES": "200_000", "HLOLENS_MAX_FILES": "9,000"},
                      ["--compare", "/b", "--server.port", "1"])
    assert s == Settings(data="s3://b/x", list_all=True, store_quota=500 << 20, max_ratio=50.0,
                         max_trace_bytes=1 << 20, cache_dir="/c", graphviz="wasm", dump="/d",
                         compare="/b", store_files=200_000, max_files=9_000)
    assert s.calibrated_profile == os.path.join("/c", "device.json")
    # the command line wins over the environment, as `streamlit run app.py -- --dump X` does
    assert Settings.read({"HLOLENS_DUMP": "/env"}, ["--dump", "/argv"]).dump == "/argv"
    assert Settings.read({"HLOLENS_STORE_QUOTA": "2TB"}).store_quota == 2 << 40


@pytest.mark.parametrize("variable,value", [("HLOLENS_STORE_QUOTA", "lots"),
                                            ("HLOLENS_MAX_RATIO", "x"),
                                            ("HLOLENS_MAX_TRACE_BYTES", "1e"),
                                            ("HLOLENS_STORE_FILES", "many"),
                                            ("HLOLENS_MAX_FILES", "-1"),
                                            ("HLOLENS_MAX_TRACE_EVENTS", "-5")])
def test_a_malformed_value_names_its_variable(variable, value):
    with pytest.raises(SettingsError) as e:
        Settings.read({variable: value})
    assert str(e.value).startswith(f"{variable}={value!r}: expected")


def test_the_process_settings_follow_its_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "a"))
    assert settings().data == str(tmp_path / "a")
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "b"))
    assert settings().data == str(tmp_path / "b")
    assert Store().location == str(tmp_path / "b")
    monkeypatch.setenv("HLOLENS_STORE_QUOTA", "lots")
    with pytest.raises(StoreError) as e:
        Store()
    assert "HLOLENS_STORE_QUOTA='lots'" in str(e.value)
