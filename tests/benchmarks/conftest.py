"""The benchmark scripts under benchmarks/, loaded as modules for their smoke tests."""
import importlib.util

import pytest


@pytest.fixture(scope="module")
def bench(request, repo_root):
    """The script the test module names in ``BENCHMARK`` (``benchmarks/<BENCHMARK>.py``)."""
    name = request.module.BENCHMARK
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark",
                                                  repo_root / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
