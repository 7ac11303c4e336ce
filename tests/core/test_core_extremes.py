"""Computational extremes of issue 46: wide sparse data (C1), LIBSVM indices implying
billions of columns (C2) and data scaled from 1e-300 to 1e300 (C4), drawn by the testing
kit's :func:`~graphclust.testing.strategies.wide_sparse`,
:func:`~graphclust.testing.strategies.libsvm_lines` and
:func:`~graphclust.testing.strategies.scale_exponents`.

Properties: dropping the empty columns of a wide sparse ``X`` keeps every distance,
inner product and norm, for the training rows and for new rows mapped by the fitted
:class:`~graphclust.numerics.ColumnMap`; a fit's memory follows the stored values, not
the width; a LIBSVM file of any index range runs through ``graphclust run`` in bounded
memory; scaling the data by ``10**e`` changes no label.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust.numerics import drop_empty_columns, magnitude_unit, same_partition
from graphclust.testing.strategies import libsvm_lines, scale_exponents, wide_sparse

QUICK = settings(max_examples=25, deadline=None, derandomize=True,
                 suppress_health_check=list(HealthCheck))
FEW = settings(max_examples=4, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])


def _rows(A) -> list[dict[int, float]]:
    A = sp.coo_array(A)
    out: list[dict[int, float]] = [{} for _ in range(A.shape[0])]
    for i, j, v in zip(A.row.tolist(), A.col.tolist(), A.data.tolist()):
        out[i][j] = out[i].get(j, 0.0) + v
    return out


def _gram(A, B):
    """Inner products of the rows of two sparse matrices, by the slow obvious sum over the
    columns both rows hold (nothing of the width is allocated)."""
    ra, rb = _rows(A), _rows(B)
    return np.array([[sum(v * b.get(j, 0.0) for j, v in a.items()) for b in rb] for a in ra])


@QUICK
@given(wide_sparse(), wide_sparse())
def test_dropping_empty_columns_keeps_every_inner_product(train, new):
    X = train.matrix()
    Xc, cmap = drop_empty_columns(X)
    if cmap is None:  # d <= nnz: left as it is
        assert X.shape[1] <= X.nnz and Xc.shape == X.shape
        return
    assert Xc.shape == (X.shape[0], cmap.n_columns) and cmap.n_columns <= X.nnz + 1
    assert np.allclose(_gram(Xc, Xc), _gram(X, X), rtol=1e-12, atol=0)
    # new rows of the same width: inner products with the training rows and norms kept
    rows = sp.csr_array((new.matrix().tocoo().data,
                         (new.matrix().tocoo().row, new.matrix().tocoo().col % X.shape[1])),
                        shape=(new.shape[0], X.shape[1]))
    mapped = cmap.apply(rows)
    assert np.allclose(_gram(mapped, Xc), _gram(rows, X), rtol=1e-9, atol=1e-300)
    assert np.allclose(np.diag(_gram(mapped, mapped)), np.diag(_gram(rows, rows)),
                       rtol=1e-12, atol=0)
    if X.shape[1] <= 64:  # dense new rows map to the same
        assert np.allclose(cmap.apply(rows.toarray()), mapped.toarray(), rtol=1e-12)


@pytest.mark.parametrize("n", [90, pytest.param(600, marks=pytest.mark.slow)])
def test_a_fit_on_a_billion_columns_follows_the_stored_values(n):
    """C1 in small: rows of three topics spread over 10**9 columns; an anchor pipeline
    fits in a few MB (its dense anchors alone would be 30 x 10**9 floats), finds the
    partition of the same values on a matrix of only the used columns, and predict of
    the training rows gives their labels."""
    rng = np.random.default_rng(0)
    d, per = 10**9, 6
    topics = rng.choice(d, size=(3, 40), replace=False)
    y = np.repeat(np.arange(3), n // 3)
    cols = np.stack([rng.choice(topics[c], per, replace=False) for c in y])
    X = sp.csr_array((rng.uniform(1, 2, n * per), (np.repeat(np.arange(n), per),
                                                   cols.ravel())), shape=(n, d))
    spec = {"anchors": {"name": "hybrid", "n_anchors": 30},
            "graph": {"name": "knr-bipartite", "n_neighbors": 5},
            "solver": {"name": "tcut"}, "rounding": {"name": "kmeans"}}
    tracemalloc.start()
    model = gc.GraphClustering(spec, n_clusters=3, random_state=0).fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2**20, f"{peak / 2**20:.0f} MB traced"
    # reference: the same values on a narrow matrix of the used columns only, in order
    used = np.unique(X.indices)
    Xn = sp.csr_array((X.data, np.searchsorted(used, X.indices), X.indptr),
                      shape=(n, used.size))
    ref = gc.GraphClustering(spec, n_clusters=3, random_state=0).fit(Xn)
    assert same_partition(model.labels_, ref.labels_)
    assert np.array_equal(model.predict(X), model.labels_)


@FEW
@given(lines=__import__("hypothesis").strategies.lists(libsvm_lines(), min_size=2,
                                                      max_size=6))
def test_a_libsvm_file_of_any_index_range_runs_in_bounded_memory(lines, tmp_path, capsys):
    """C2 through ``graphclust run``: exit 0 with every row labelled, or exit 2 with one
    line of graphclust's error; never an allocation of the index range."""
    from graphclust.cli import main

    path = tmp_path / "wide.svm"
    path.write_text("\n".join(["1 2000000000:1.0"] + [ln.text() for ln in lines]) + "\n")
    out = tmp_path / "labels.npy"
    out.unlink(missing_ok=True)
    tracemalloc.start()
    code = main(["run", "--dataset", str(path), "--n-clusters", "1", "--output", str(out)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MB traced"
    if code == 0:
        assert np.load(out).shape == (len(lines) + 1,)
    else:
        assert code == 2 and err.startswith("error: ") and "Traceback" not in err


def test_the_libsvm_reproducer_through_the_command_line(tmp_path, capsys):
    """The one-line file of the issue: one row, one feature, one cluster."""
    from graphclust.cli import main

    path = tmp_path / "one.svm"
    path.write_text("1 2000000000:1.0\n")
    tracemalloc.start()
    code = main(["run", "--dataset", str(path)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 0, capsys.readouterr().err
    assert "cluster sizes: 1" in capsys.readouterr().out
    assert peak < 100 * 2**20


def _blobs(n=150):
    return make_blobs(n, 3, centers=3, cluster_std=0.6, random_state=0)[0]


@pytest.mark.parametrize("e", [-300, -200, -160, 154, 200, 300])
def test_magnitude_unit_is_a_power_of_two_bringing_the_data_into_range(e):
    X = _blobs() * 10.0 ** e
    u = magnitude_unit(X)
    assert np.frexp(u)[0] == 0.5  # a power of two: the rescale is exact
    assert 0.5 <= np.abs(X * u).max() < 1.0
    assert np.array_equal((X * u) / u, X)
    assert magnitude_unit(_blobs()) == 1.0  # ordinary data are left alone


PRESETS = [None, "uspec", "genie", "ulge", "ncut"]  # None: auto (no spec)

QUICK_PRESETS = ["ncut"]  # under a second for two exponents


def _labels(preset, X):
    args = () if preset is None else (preset,)
    model = gc.GraphClustering(*args, n_clusters=3, random_state=0).fit(X)
    return model, model.labels_


_REFERENCE: dict = {}


def _check_scaled(preset, e):
    """``X · 10**e`` gives the labels of ``X`` (and predict on scaled new rows agrees,
    where the preset predicts)."""
    X = _blobs()
    if preset not in _REFERENCE:
        _REFERENCE[preset] = _labels(preset, X)[1]
    model, got = _labels(preset, X * 10.0 ** e)
    assert same_partition(got, _REFERENCE[preset]), e  # the same clusters, maybe renamed
    if hasattr(model, "predict"):
        assert np.array_equal(model.predict(X[:20] * 10.0 ** e), got[:20])


@pytest.mark.parametrize("preset", QUICK_PRESETS)
@settings(max_examples=2, deadline=None, derandomize=True)
@given(e=scale_exponents())
def test_scaled_data_give_the_labels_of_the_unscaled(preset, e):
    """C4: ``X · 10**e`` for e in [-300, 300] gives the labels of ``X``; the overflow
    (1e154) and underflow (1e-154) of squared distances are not reached."""
    _check_scaled(preset, e)


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=12, deadline=None)
@given(e=scale_exponents())
def test_scaled_data_give_the_labels_of_the_unscaled_every_preset(preset, e):
    """The same for auto, uspec and ulge too, more exponents (the ends always)."""
    _check_scaled(preset, e)
