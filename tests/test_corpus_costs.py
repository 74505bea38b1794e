"""Issue 15, point 6 on the traced corpus: programs of ``bench/corpus/make_traced_programs.py``
(Flax, Equinox, Optax, plain JAX; scan, while, cond, FFT, LAPACK custom calls, bf16)
compiled here, in this process, and our module totals compared with XLA's own
``compiled.cost_analysis()`` of the same compile. ``bench/accuracy/cost_check.py`` does the same over
every traced program's saved ``cost_analysis.json``."""

from __future__ import annotations

import json

import pytest

from conftest import needs

from compiler_bridge import parse_hlo
from compiler_bridge.perf import xla_cost_totals

needs("flax", "equinox", "optax", module_level=True)

# one small program per kind of family: what each brings to the HLO
CASES = [
    "resnet_xs_bf16_train",      # Flax Linen: convolutions (strided, backward), BatchNorm, bf16
    "unet_xs_f32_train",         # Linen: max-pool (variadic reduce-window), transposed conv
    "vit_xs_f32_train",          # Flax NNX: attention, LayerNorm, AdamW
    "gpt_scan_xs_bf16_train",    # Equinox: layers under lax.scan (a while loop), bf16
    "moe_xs_f32_train",          # top-k, cumsum, gathers and scatter-adds
    "fno_xs_f32_train",          # FFT
    "newton_xs_f32",             # LAPACK LU and triangular solves (custom calls), fori_loop
    "hmc_xs_f32",                # gradient inside a fori_loop, lax.cond
    "switch_net_xs_f32_train",   # lax.switch and lax.cond in a training step
    "optax_update_adafactor_s_f32_train",   # Optax Adafactor: factored moments
    "gpt_scan_xs_f32_train@nofusionemitters",   # a configuration: small calls around loops
]


@pytest.fixture(scope="module")
def corpus():
    from bench.corpus import traced_programs
    return traced_programs


@pytest.mark.parametrize("name", CASES)
def test_module_totals_of_corpus_programs_equal_xla_cost_analysis(corpus, name):
    compiled, _, _ = corpus.compile_program(name)
    xla = corpus.cost_analysis_of(compiled)
    ours = xla_cost_totals(parse_hlo(compiled.as_text()))
    for key, got in (("flops", ours.flops), ("transcendentals", ours.transcendentals),
                     ("bytes accessed", ours.bytes)):
        want = xla.get(key, 0.0)
        assert abs(got - want) <= 0.01 * max(abs(want), 1.0), (name, key, got, want)


def test_every_corpus_program_records_its_family(corpus):
    """The benchmark holds out whole families: each program names its own, and a
    configuration variant its base program and configuration."""
    progs = corpus.PROGRAMS
    families = {p.family for p in progs.values()}
    assert len(families) >= 30 and len([n for n in progs if "@" not in n]) >= 300
    for name, p in progs.items():
        if "@" in name:
            base, config = name.split("@")
            assert p.base == base and p.config == config and config in corpus.CONFIGS
            assert p.family == progs[base].family
        assert p.mode in ("train", "infer") and p.dtype in ("float32", "bfloat16")
    json.dumps({n: p._asdict() for n, p in progs.items()})   # program.json can hold it
