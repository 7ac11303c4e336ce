"""The layout start's own numerics (``_curve``) against umap-learn's, which they replace
on the pca and random starts so that a first run does not import umap (issue 48)."""

import numpy as np
import pytest

from graphclust_plugins.manifold._curve import fit_ab, scaled_start


@pytest.mark.parametrize("spread, min_dist", [(1.0, 0.0), (1.0, 0.1), (2.0, 0.5), (0.5, 0.2)])
def test_fit_ab_is_umap_learns_fit(spread, min_dist):
    umap_ = pytest.importorskip("umap.umap_")
    a, b = fit_ab(spread, min_dist)
    ref = umap_.find_ab_params(spread, min_dist)
    np.testing.assert_allclose((a, b), ref, rtol=1e-10)


def test_fit_ab_fits_the_offset_exponential():
    """Slow obvious reference: the fitted curve is close to its target everywhere."""
    a, b = fit_ab(1.0, 0.1)
    x = np.linspace(0, 3, 300)
    target = np.where(x < 0.1, 1.0, np.exp(-(x - 0.1)))
    assert np.max(np.abs(1 / (1 + a * x ** (2 * b)) - target)) < 0.1


def test_scaled_start_is_umap_learns_and_draws_the_same_numbers():
    umap_ = pytest.importorskip("umap.umap_")
    coords = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)
    r1, r2 = np.random.RandomState(4), np.random.RandomState(4)
    got = scaled_start(coords, r1)
    ref = umap_.noisy_scale_coords(coords, r2, max_coord=10, noise=0.0001)
    np.testing.assert_array_equal(got, ref)
    assert got.dtype == np.float32 and r1.randint(1 << 30) == r2.randint(1 << 30)
    assert np.abs(got).max() == pytest.approx(10.0, abs=1e-3)


def test_the_layout_solver_module_does_not_import_umap():
    import subprocess
    import sys

    code = ("import sys, graphclust_plugins.manifold.solver_umap_layout; "
            "print('umap' in sys.modules, 'pynndescent' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]
