"""The benchmark scripts under benchmarks/, loaded as modules for their smoke tests."""
import pytest
from benchmark_scripts import load_benchmark


@pytest.fixture(scope="module")
def bench(request):
    """The script the test module names in ``BENCHMARK`` (``benchmarks/<BENCHMARK>.py``)."""
    return load_benchmark(request.module.BENCHMARK)
