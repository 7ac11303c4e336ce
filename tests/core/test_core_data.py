"""Data loaders for every supported format, and input validation."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from graphclust import InputError, check_input
from graphclust.data import load_dataset, load_file, mnist_extend


def test_npz_mat_csv_libsvm_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((20, 3))
    y = np.repeat([3, 7], 10)
    np.savez(tmp_path / "a.npz", X=X, y=y)
    scipy.io.savemat(tmp_path / "b.mat", {"fea": X, "gnd": y[:, None]})
    np.savetxt(tmp_path / "c.csv", np.column_stack([X, y]), delimiter=",",
               header="f1,f2,f3,label", comments="")
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, y, str(tmp_path / "d.svm"))
    for name in ("a.npz", "b.mat", "c.csv", "d.svm"):
        Xl, yl = load_file(tmp_path / name)
        Xl = Xl.toarray() if sp.issparse(Xl) else Xl
        np.testing.assert_allclose(Xl, X, atol=1e-6)
        np.testing.assert_array_equal(yl, np.repeat([0, 1], 10))
    np.savetxt(tmp_path / "nolabel.csv", X, delimiter=",")
    Xl, yl = load_file(tmp_path / "nolabel.csv")
    assert yl is None and Xl.shape == (20, 3)


def test_dataset_lookup(tmp_path, monkeypatch):
    X, y = load_dataset("digits")
    assert X.shape == (1797, 64) and y.max() == 9
    np.savez(tmp_path / "mine.npz", X=np.ones((4, 2)), y=np.arange(4))
    monkeypatch.setenv("GRAPHCLUST_DATA", str(tmp_path))
    assert load_dataset("mine")[0].shape == (4, 2)
    with pytest.raises(InputError, match="Available: .*digits.*mine"):
        load_dataset("yours")
    with pytest.raises(InputError, match="no X found"):
        np.savez(tmp_path / "nox.npz", Z=np.ones(2))
        load_file(tmp_path / "nox.npz")


def test_data_folder_usps(load):
    X, y = load("usps")
    assert X.shape == (9298, 256) and np.unique(y).size == 10


def test_mnist_extend_shifts():
    X = np.arange(2 * 784).reshape(2, 784) % 251
    y = np.array([4, 5])
    E, ye = mnist_extend(X, y)
    assert E.shape == (18, 784) and list(ye[:4]) == [4, 5, 4, 5]
    np.testing.assert_array_equal(E[:2], X)
    img, down = X[0].reshape(28, 28), E[2].reshape(28, 28)
    np.testing.assert_array_equal(down[1:], img[:-1])  # first shift: one pixel down
    assert np.all(down[0] == 0)
    # the 8 shifted copies are all distinct and differ from the original
    copies = {E[2 * s].tobytes() for s in range(9)}
    assert len(copies) == 9
    assert mnist_extend(X, y, n=5)[0].shape == (5, 784)
    with pytest.raises(InputError):
        mnist_extend(X, y, n=19)


@pytest.mark.parametrize("bad, match", [
    ([[1, 2], [3]], "cannot be read|2-D|numeric"),
    (np.array([["a", "b"]]), "numeric"),
    (np.ones((3, 2, 2)), "2-D"),
    (np.ones((0, 2)), "empty"),
    (np.array([[1.0, np.nan]]), "NaN"),
])
def test_check_input_errors(bad, match):
    with pytest.raises(InputError, match=match):
        check_input(bad)


def test_check_input_keeps_float32_and_sparse_rows():
    assert check_input(np.ones((3, 2), np.float32)).dtype == np.float32
    assert check_input(np.ones((3, 2), np.int64)).dtype == np.float64
    assert isinstance(check_input(sp.csr_array(np.eye(3))), sp.csr_array)  # never densified
    with pytest.raises(InputError, match="fewer than n_clusters"):
        check_input(np.ones((3, 2)), 4)
