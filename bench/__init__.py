"""Benchmarks and the inputs they make, by job: ``corpus`` (generated inputs), ``speed`` (how
fast), ``accuracy`` (how right the runtime models are). Run from the checkout's root as
modules, e.g. ``python -m bench.speed.parse_bench``; the browser harness they share with the
tests is ``tests.support.browser``."""
