"""Labels do not depend on the thread count (issue 30).

The same fit runs in two fresh interpreters, one with ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` set to 1 and one with 2 (the libraries
read them when they load, so only a new process sees them), and the labels must be
equal, element for element. Before :func:`graphclust.numerics.fixed_threads` wrapped the
global-small steps, ``uspec`` on the digits gave ARI 0.847 between the two (scikit-learn's
k-means adds per-thread partial sums in the order threads finish).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from graphclust.numerics import fixed_threads
from threadpoolctl import threadpool_info

_FIT = """
import json, sys
import numpy as np
from sklearn.datasets import load_digits
import graphclust
from threadpoolctl import threadpool_info
X = load_digits().data
out = {"threads": sorted({p["num_threads"] for p in threadpool_info()})}
for spec in sys.argv[1:]:
    model = graphclust.GraphClustering(spec, n_clusters=10, random_state=0).fit(X)
    out[spec] = np.asarray(model.labels_).tolist()
print(json.dumps(out))
"""


def _labels_with_threads(threads: int, specs) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    proc = subprocess.run([sys.executable, "-c", _FIT, *specs], capture_output=True, check=False,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _assert_same_labels(specs):
    one, two = _labels_with_threads(1, specs), _labels_with_threads(2, specs)
    assert one["threads"] == [1] and two["threads"] == [2]  # the variables took effect
    for spec in specs:
        a, b = np.asarray(one[spec]), np.asarray(two[spec])
        assert a.shape == (1797,)
        assert np.array_equal(a, b), (spec, int((a != b).sum()))


@pytest.mark.slow
def test_labels_equal_on_one_and_two_threads_every_family():
    _assert_same_labels(["uspec", "auto", "anchor-spectral", "ulge", "oulge", "manifold", "genie", "ongr-k", "ongr-r", "bkhk-dcd",
                         "dlc", "ncut", "ncer-anchor", "dcd", "usenc"])


def test_fixed_threads_limits_and_restores():
    before = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    with fixed_threads():
        assert {p["num_threads"] for p in threadpool_info()} == {1}
    assert {p["filepath"]: p["num_threads"] for p in threadpool_info()} == before
