"""Shared fixtures.

``data_dir`` gives the benchmark data folder (``GRAPHCLUST_DATA`` or ``../shared/data``)
and skips the test with a clear reason when it is absent (a user's clone). Tests
marked ``slow`` are deselected unless ``--run-slow`` is given (the README's command is
the quick tier; ``.ci/run`` adds the slow tier).
"""

from __future__ import annotations

import numpy as np
import pytest

from graphclust import InputError
from graphclust.data import find_data_dir, load_dataset


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="run long reproduction tests")


def pytest_collection_modifyitems(config, items):
    """Without ``--run-slow``, tests marked ``slow`` are deselected (not merely skipped), so
    the quick tier never selects them and ``--collect-only`` shows what it runs."""
    if config.getoption("--run-slow"):
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]


@pytest.fixture(scope="session")
def data_dir():
    try:
        folder = find_data_dir()
    except InputError as exc:  # GRAPHCLUST_DATA names no folder
        pytest.skip(f"benchmark data folder not found: {exc}")
    if folder is None:
        pytest.skip("benchmark data folder not found: set GRAPHCLUST_DATA or place ../shared/data")
    return folder


@pytest.fixture(scope="session")
def load(data_dir):
    """``load(name) -> (X, y)`` from the data folder (cached per session)."""
    cache = {}

    def _load(name):
        if name not in cache:
            cache[name] = load_dataset(name, data_dir)
        return cache[name]

    return _load


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def blobs():
    """Three well-separated Gaussian blobs: (X, y), 150 x 5."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=150, centers=3, n_features=5, cluster_std=0.6, random_state=0)
    return X, y
