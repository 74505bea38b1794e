"""What the tests and the benchmarks share: the headless-Chromium harness (``browser``), the
page helpers of the browser tests (``pages``), the sample dumps (``samples``) and the
browser tests' fixtures (``fixtures``, a pytest plugin named in ``tests/conftest.py``).

Imported as ``tests.support.<module>``: pytest puts the repository root on the path
(``pythonpath`` in pyproject.toml) and the benchmarks run from it (``python -m bench...``)."""
