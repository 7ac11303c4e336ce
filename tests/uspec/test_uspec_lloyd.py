"""The representatives' Lloyd k-means (issue 48): a plain numpy reference, the thread
count, and centres no candidate chose."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from graphclust_plugins.uspec._lloyd import initial_centres, lloyd_representatives


def _reference(C, p, max_iter, seed):
    """Lloyd's algorithm written out: exact float64 distances from the differences, the
    nearest centre with ties to the lower index, means of the members."""
    centres = C[initial_centres(C.shape[0], p, seed)].astype(np.float64)
    labels = None
    for it in range(1, max_iter + 1):
        d = ((C[:, None, :].astype(np.float64) - centres[None, :, :]) ** 2).sum(-1)
        new = d.argmin(1)
        if labels is not None and np.array_equal(new, labels):
            return centres, it
        labels = new
        for j in range(p):
            if (labels == j).any():
                centres[j] = C[labels == j].astype(np.float64).mean(0)
    return centres, max_iter


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lloyd_is_the_plain_algorithm(dtype, seed):
    rng = np.random.default_rng(seed)
    C = np.vstack([rng.normal(c, 1.0, size=(60, 4)) for c in (0, 5, 10)]).astype(dtype)
    want, want_iter = _reference(C, 12, 30, seed)
    got, n_iter, inertia = lloyd_representatives(C, 12, 30, seed)
    assert got.dtype == dtype and n_iter == want_iter
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert inertia > 0


def test_lloyd_centres_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(5)
    C = rng.random((3000, 50), dtype=np.float32)
    with threadpool_limits(limits=1):
        one = lloyd_representatives(C, 200, 5, 7)
    with threadpool_limits(limits=2):
        two = lloyd_representatives(C, 200, 5, 7)
    np.testing.assert_array_equal(one[0], two[0])
    assert one[1:] == two[1:]


def test_a_centre_no_candidate_chose_keeps_its_value():
    # five copies of one point and one other: the three initial centres include two
    # equal ones; the tie goes to the lower index, so one copy centre is left empty
    C = np.array([[0.0, 0.0]] * 5 + [[3.0, 4.0]])
    init = C[initial_centres(6, 3, 4)]  # two copies and the other point
    got, _, _ = lloyd_representatives(C, 3, 10, 4)
    assert (init == [0.0, 0.0]).all(1).sum() == 2  # the case this test is about
    np.testing.assert_array_equal(np.sort(got, axis=0), np.sort(init, axis=0))


def test_the_start_is_scikit_learns_random_draw():
    from sklearn.cluster import KMeans

    C = np.random.default_rng(3).random((300, 4))
    km = KMeans(15, init="random", n_init=1, max_iter=1, tol=0.0, random_state=11).fit(C)
    got, _, _ = lloyd_representatives(C, 15, 1, 11)  # one assignment, one update
    np.testing.assert_allclose(got, km.cluster_centers_, rtol=1e-12, atol=1e-12)


def test_p_out_of_range_is_refused():
    with pytest.raises(ValueError, match="p must be in"):
        lloyd_representatives(np.zeros((3, 2)), 4, 10, 0)
