"""Shared set-up of the picture tests: every test starts without open figures."""
import matplotlib.pyplot as plt
import pytest


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")
