"""``hlolens.show`` from a script or notebook, and the ``hlolens`` entry point (issue 18).

The program is a real jitted function; what the app must show is what JAX itself says
about it (``compiled.as_text()``, ``memory_analysis()``, ``cost_analysis()``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import tomllib
import urllib.request

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from compiler_bridge import open_dump, parse_hlo, runtime_report
from compiler_bridge.dumps import AFTER, BEFORE, Store

APP = os.path.join(ROOT, "app.py")


def _program():
    import jax
    import jax.numpy as jnp

    def layer(w, x):
        return jax.nn.relu(x @ w).sum(axis=-1)
    w, x = jnp.ones((16, 16)), jnp.ones((4, 16))
    return jax.jit(layer), w, x


def test_show_of_a_lowered_program_stores_it_as_jax_compiled_it(tmp_path, capsys):
    import hlolens
    fn, w, x = _program()
    lowered = fn.lower(w, x)
    compiled = lowered.compile()
    shown = hlolens.show(lowered, data=str(tmp_path / "data"), start=False)
    assert shown.url.endswith(f"?dump={shown.share_id}")
    assert shown.url in capsys.readouterr().out
    d = Store(str(tmp_path / "data")).open(shown.share_id)
    (m,) = d.modules
    assert m.name == "jit_layer"
    ref = parse_hlo(compiled.as_text(), "jax")
    assert d.stage(m, AFTER).stats() == ref.stats()
    assert d.stage(m, BEFORE).stats()["instructions"] == \
        parse_hlo(lowered.as_text(dialect="hlo"), "jax").stats()["instructions"]
    assert m.first("mlir") is not None
    analysis = json.loads(d.read_text(next(f.path for f in m.files
                                           if f.path.endswith("hlolens-analysis.json"))))
    mem = compiled.memory_analysis()
    assert analysis["memory_analysis"]["temp_size_in_bytes"] == mem.temp_size_in_bytes
    assert analysis["cost_analysis"]["flops"] == compiled.cost_analysis()["flops"]


def test_show_of_a_function_and_its_arguments_with_a_profiled_run(tmp_path):
    import hlolens
    fn, w, x = _program()
    shown = hlolens.show(fn, w, x, data=str(tmp_path / "data"), start=False, profile=True)
    d = open_dump(shown.dump)
    assert [f.name for f in d.traces] == ["perfetto_trace.json.gz"]
    assert d.modules[0].name == "jit_layer"


def test_a_profiled_run_of_a_function_with_static_and_donated_arguments(tmp_path):
    """``show(f, x, 3, profile=True)`` of ``jit(f, static_argnums=1, donate_argnums=0)``:
    the Compiled takes no static argument and each run consumes the donated one, so the
    runs call the function on copies; the trace has every run and the user's array is
    still there."""
    import jax
    import jax.numpy as jnp
    import hlolens
    fn = jax.jit(lambda x, n: jnp.tanh(x) ** n, static_argnums=1, donate_argnums=0)
    x = jnp.ones((64, 64))
    shown = hlolens.show(fn, x, 3, data=str(tmp_path / "data"), start=False, profile=True)
    d = open_dump(shown.dump)
    assert [f.name for f in d.traces] == ["perfetto_trace.json.gz"]
    trace = runtime_report(d, fit_to_trace=False).to_json()["trace"]
    assert [m["runs"] for m in trace["modules"].values()] == [3]
    assert float(x.sum()) == 64 * 64          # not consumed by the runs


def test_show_of_a_compiled_program_has_its_after_stage(tmp_path):
    import hlolens
    fn, w, x = _program()
    compiled = fn.lower(w, x).compile()
    shown = hlolens.show(compiled, data=str(tmp_path / "data"), start=False)
    (m,) = open_dump(shown.dump).modules
    assert m.after_optimizations is not None and m.before_optimizations is None


def test_the_link_opens_that_program_in_the_app(tmp_path, monkeypatch):
    import hlolens
    fn, w, x = _program()
    shown = hlolens.show(fn.lower(w, x), data=str(tmp_path / "data"), start=False)
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["dump"] = shown.share_id
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="pick-module").options[0].startswith("★ jit_layer")


SCRIPT = textwrap.dedent("""
    import jax, jax.numpy as jnp, hlolens
    f = jax.jit(lambda x: jnp.sin(x) * 2)
    hlolens.show(f.lower(jnp.ones(8)), data={data!r})
    hlolens.show(f.lower(jnp.ones(16)), data={data!r})
""")


def test_show_in_a_script_starts_the_app_once_and_prints_links_that_open(tmp_path):
    data = str(tmp_path / "data")
    script = tmp_path / "s.py"
    script.write_text(SCRIPT.format(data=data))
    # the checkout on the path as an installed hlolens would be
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT))
    with open(os.path.join(data, "app.json")) as f:
        app = json.load(f)
    try:
        assert p.returncode == 0, p.stderr
        links = re.findall(r"HLO Lens: (http://\S+)", p.stdout)
        assert len(links) == 2
        assert links[0].split("?")[0] == links[1].split("?")[0] == \
            f"http://localhost:{app['port']}/"             # one app for both
        with urllib.request.urlopen(links[0], timeout=30) as r:
            assert r.status == 200
        store = Store(data)
        names = {store.get(link.split("dump=")[1]).modules[0]["name"] for link in links}
        assert names == {"jit__lambda"}
    finally:
        os.killpg(app["pid"], signal.SIGTERM)       # the app show started, with its children


def test_the_entry_point_is_declared_and_runs():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    target = project["scripts"]["hlolens"]
    module, _, func = target.partition(":")
    p = subprocess.run([sys.executable, "-c", f"import sys; from {module} import {func}; "
                        f"sys.exit({func}(['serve', '--help']))"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "--dump" in p.stdout and "--port" in p.stdout


@pytest.mark.parametrize("bad", [42, "not a program"])
def test_show_says_what_it_takes(bad, tmp_path):
    import hlolens
    with pytest.raises(TypeError, match="Lowered, a Compiled, or a function"):
        hlolens.show(bad, data=str(tmp_path / "d"), start=False)


def test_a_profiled_run_without_arrays_to_run_on_says_so(tmp_path):
    """``show(lowered, profile=True)`` was shown without a trace, saying nothing; with a
    ShapeDtypeStruct for an array, JAX's 'not a valid JAX type' came from inside the
    profiled run, after the dump was written."""
    import jax
    import hlolens
    fn, w, x = _program()
    data = str(tmp_path / "data")
    with pytest.raises(TypeError, match=re.escape("profile=True) runs the program, which takes")):
        hlolens.show(fn.lower(w, x), data=data, start=False, profile=True)
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    with pytest.raises(TypeError, match=re.escape("give it arrays, not jax.ShapeDtypeStruct")):
        hlolens.show(fn, w, shape, data=data, start=False, profile=True)
    assert not os.path.exists(data)               # nothing stored


def test_a_profiled_run_of_a_program_without_arguments(tmp_path):
    """A function of no arguments was compiled and shown with no trace: the run needs
    none."""
    import jax.numpy as jnp
    import hlolens
    shown = hlolens.show(lambda: jnp.tanh(jnp.arange(64.0)).sum(), data=str(tmp_path / "d"),
                         start=False, profile=True)
    assert [f.name for f in open_dump(shown.dump).traces] == ["perfetto_trace.json.gz"]


def test_serve_of_a_dump_while_an_app_serves_the_store_links_to_that_dump(tmp_path, capsys):
    """``serve(data, dump=...)`` and ``hlolens serve --dump`` with the store's app already
    running returned (printed) the app's address alone: the dump was neither stored nor
    named, and the page opened without it. Now it is added to the store, and the link
    opens it."""
    import hlolens
    from hlolens.__main__ import main
    fn, w, x = _program()
    dump = hlolens.write_dump(fn, w, x, out=str(tmp_path / "dump"))
    data = str(tmp_path / "data")
    url = hlolens.serve(data)
    try:
        with open(os.path.join(data, "app.json")) as f:
            app = json.load(f)
        store = Store(data)
        assert hlolens.app_url(data) == hlolens.app_url(store) == url   # a path, as serve's
        link = hlolens.serve(data, dump=dump)
        assert link.startswith(url + "?dump=")
        assert store.get(link.split("dump=")[1]).modules[0]["name"] == "jit_layer"
        assert main(["serve", "--data", data, "--dump", dump]) == 0
        printed = capsys.readouterr().out
        assert link in printed, printed
        with urllib.request.urlopen(link, timeout=30) as r:
            assert r.status == 200
    finally:
        os.killpg(app["pid"], signal.SIGTERM)


def test_serve_of_a_missing_dump_says_so_before_starting(tmp_path):
    """``serve(dump=...)`` of a path that is not there started the app on no dump, and
    returned its address as if the dump were there."""
    import hlolens
    data = str(tmp_path / "data")
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "gone"))):
        hlolens.serve(data, dump=str(tmp_path / "gone"))
    assert not os.path.exists(os.path.join(data, "app.json"))
    assert hlolens.app_url(data) is None    # was AttributeError: 'str' has no 'local_root'


def test_a_show_that_fails_in_its_profiled_run_leaves_no_folder_behind(tmp_path, monkeypatch):
    """A Compiled of static arguments, given them again (``show(compiled, x, 3,
    profile=True)``): JAX refuses the run, after the dump was written into a temporary
    folder, which stayed there."""
    import tempfile

    import jax
    import jax.numpy as jnp
    import hlolens
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    os.makedirs(tmp_path / "tmp")
    scaled = jax.jit(lambda x, n: x * n, static_argnums=1)
    x = jnp.ones(4)
    with pytest.raises(TypeError, match="pytree"):
        hlolens.show(scaled.lower(x, 3).compile(), x, 3, data=str(tmp_path / "d"),
                     start=False, profile=True)
    assert os.listdir(tmp_path / "tmp") == []


def test_the_store_may_be_given_as_a_path_object(tmp_path):
    """``data=pathlib.Path(...)`` (what a notebook has at hand) was "TypeError: argument
    of type 'PosixPath' is not iterable" from inside the store, in show, serve and
    app_url alike."""
    import jax.numpy as jnp
    import hlolens
    data = tmp_path / "data"
    shown = hlolens.show(jnp.sin, jnp.ones(3), data=data, start=False)
    assert Store(str(data)).get(shown.share_id).modules[0]["name"] == "jit_sin"
    assert hlolens.app_url(data) is None


def test_show_without_starting_an_app_says_how_to_serve_its_link(tmp_path, capsys):
    """``start=False`` with no app serving the store printed a link to port 8501 as if it
    were served there (another store's app, or nothing); it now says so, and the command
    that serves this store at that link."""
    import jax.numpy as jnp
    import hlolens
    data = tmp_path / "data"
    shown = hlolens.show(jnp.sin, jnp.ones(3), data=str(data), start=False)
    printed = capsys.readouterr().out
    assert shown.url == f"http://localhost:8501/?dump={shown.share_id}"
    assert f"HLO Lens: {shown.url}" in printed
    assert f"no app serves this store yet: hlolens serve --data {data}" in printed, printed
    assert "hlolens serve --data" in shown._repr_html_()


def test_a_target_for_a_compiled_program_is_refused_before_it_runs(tmp_path):
    """``show(compiled, x, profile=True, target='h100')`` ran the profiled run first (the
    program's side effects happened four times), and only then said that a target needs
    the program before compilation."""
    import jax
    import jax.numpy as jnp
    import hlolens
    calls = []

    def f(x):
        jax.debug.callback(lambda: calls.append(1))
        return jnp.sin(x)
    x = jnp.ones(3)
    compiled = jax.jit(f).lower(x).compile()
    with pytest.raises(TypeError, match="needs the program before compilation"):
        hlolens.show(compiled, x, data=str(tmp_path / "d"), start=False, profile=True,
                     target="h100")
    assert calls == []
