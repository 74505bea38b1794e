# Two commands set up everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum < requirements.txt | cut -d' ' -f1)
DUMP ?= sample_dumps/transformer
PORT ?= 8501

.PHONY: setup run test lint samples samples-spmd samples-backends scale traced bench ship-model clean

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(PY) -m ui.serve --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false -- --dump $(DUMP)

# XLA's GPU and TPU compilers in their own venv (~1.8 GB; 40 s here with pip's cache):
# the tests compile for TPU and GPU targets with it (tests/test_cross_compile.py)
BACKENDS := .venv-backends/.requirements
$(BACKENDS): sample_dumps/requirements-backends.txt $(STAMP)
	$(PY) sample_dumps/make_backend_samples.py --venv
	touch $@

# lint and types first: they take seconds and name the line; the tests' temp folders in a
# fresh folder of their own, removed after (pytest's cleanup of earlier runs' folders
# recurses once per level: a stale deep one failed CI, stop 35); ~9 min on 2 cores
test: $(STAMP) $(BACKENDS)
	$(PY) -m ruff check .
	$(PY) -m mypy
	d=$$(mktemp -d /tmp/hlolens-test-XXXXXX) && \
	$(PY) -m pytest -n 2 --dist loadfile --basetemp=$$d/t; rc=$$?; rm -rf $$d; exit $$rc

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

samples: $(STAMP)
	$(PY) sample_dumps/make_samples.py
	$(PY) sample_dumps/make_tf_samples.py     # TF graphs + XLA files (own .venv-tf)

samples-spmd: $(STAMP)   # the 8-device data + model parallel train step alone
	$(PY) sample_dumps/make_samples.py spmd_train

# GPU (H100) and TPU (v5e, v6e) compiles without the hardware (own .venv-backends, ~1.8 GB)
samples-backends: $(STAMP)
	$(PY) sample_dumps/make_backend_samples.py

# bench/ runs as modules from the checkout's root (`python -m bench.<job>.<script>`): no install
scale: $(STAMP)
	$(PY) -m bench.corpus.make_scale

# the traced corpus (cached: a rerun continues); e.g. TRACED_ARGS="--chunk 1/4 --budget-min 20"
traced: $(STAMP)
	$(PY) -m bench.corpus.make_traced_programs $(TRACED_ARGS)

# Each benchmark writes its section of BENCHMARKS.md with the command that produced it.
bench: $(STAMP) scale
	$(PY) -m bench.speed.parse_bench
	$(PY) -m bench.speed.view_bench
	$(PY) -m bench.speed.pass_bench
	$(PY) -m bench.accuracy.runtime_bench
	$(PY) -m bench.speed.memory_bench
	$(PY) -m bench.speed.compare_bench
	$(PY) -m bench.speed.tf_bench

# the default cost model (compiler_bridge/perf/models/default-cpu): the kind the runtime benchmark
# found better, trained on the whole traced corpus; e.g. SHIP_ARGS="--seeds 3 --profile shipped"
ship-model: $(STAMP)
	$(PY) -m bench.accuracy.ship_model $(SHIP_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis test-artifacts
