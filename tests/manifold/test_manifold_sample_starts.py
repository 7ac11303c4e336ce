"""``on-sample`` with several solver starts: the kept start is the most modular partition
of the sample's graph, recomputed here part by part from the same seed streams."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust
from graphclust import Context, resolve_part

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")

SAMPLE_GRAPH = {"name": "fuzzy-knn", "n_neighbors": 10, "method": "exact"}
SOLVER = {"name": "umap-layout", "n_components": 4, "min_dist": 0.0, "n_epochs": 30,
          "init": "random"}
DENSITY = {"name": "density", "min_cluster_size": 20}


def spec(n_starts, S=300):
    return {"anchors": {"name": "sample", "n_anchors": S},
            "graph": {"name": "sample-knn", "n_neighbors": 10, "method": "exact"},
            "adapter": {"name": "on-sample", "graph": SAMPLE_GRAPH, "rounding": DENSITY,
                        "n_starts": n_starts},
            "solver": SOLVER, "rounding": {"name": "argmax"}}


@pytest.fixture(scope="module")
def data():
    # overlapping blobs: random starts of a short layout do not all cut them alike
    X, _ = make_blobs(600, 5, centers=6, cluster_std=2.5, random_state=11)
    return X


def reference(est, k, n_starts, seed):
    """Each start by hand: the solver on the sample's graph from the solver stage's
    context (start 0) or its child ``start{r}``, the density cut to ``k``, modularity on
    the sample's graph; the first highest wins."""
    U = np.asarray(est.anchors_.points)
    g = resolve_part(SAMPLE_GRAPH, "graph").build(U, None, Context(seed))
    ctx = Context(seed)
    out = []
    for r in range(n_starts):
        sctx = ctx if r == 0 else ctx.child(f"start{r}")
        sol = resolve_part(SOLVER, "solver").solve(g, U, k, sctx)
        labels = np.asarray(resolve_part(DENSITY, "rounding").round(sol, k, Context(seed)))
        out.append((graphclust.modularity(g, labels), labels))
    best = int(np.argmax([q for q, _ in out]))
    return [q for q, _ in out], best, out[best][1]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_most_modular_start_is_kept(data, seed):
    est = graphclust.GraphClustering(spec(3), n_clusters=6, random_state=seed).fit(data)
    adapter = est.pipeline_.adapter
    scores, best, labels = reference(est, 6, 3, seed)
    np.testing.assert_allclose(adapter.start_modularity_, scores, rtol=1e-12)
    assert adapter.start_ == best
    np.testing.assert_array_equal(adapter.sample_labels_, labels)
    assert est.solution_.info["start"] == best


@pytest.mark.slow  # twelve short layouts: 3 s
def test_the_kept_rounding_is_the_kept_starts_own(data):
    """The rounding kept (its confidence, noise and layers) was fitted on the kept start's
    layout, also when a later start ran after it (it had been the last start's: a
    brute-force search of the sample and the confidence of another layout)."""
    kept = []
    for seed in range(4):
        est = graphclust.GraphClustering(spec(3), n_clusters=6, random_state=seed).fit(data)
        adapter = est.pipeline_.adapter
        E = np.asarray(est.solution_.anchor_embedding)
        np.testing.assert_array_equal(np.asarray(adapter.rounding_.anchors_, E.dtype), E)
        kept.append(adapter.start_)
    assert min(kept) < 2  # some seed kept a start that was not the last


def test_start_zero_is_the_one_start_fit(data):
    one = graphclust.GraphClustering(spec(1), n_clusters=6, random_state=4).fit(data)
    three = graphclust.GraphClustering(spec(3), n_clusters=6, random_state=4).fit(data)
    U = np.asarray(one.anchors_.points)
    g = resolve_part(SAMPLE_GRAPH, "graph").build(U, None, Context(4))
    q_one = graphclust.modularity(g, one.pipeline_.adapter.sample_labels_)
    assert three.pipeline_.adapter.start_modularity_[0] == pytest.approx(q_one, rel=1e-12)
    assert max(three.pipeline_.adapter.start_modularity_) >= q_one
    assert not hasattr(one.pipeline_.adapter, "start_modularity_")
    assert "start" not in one.solution_.info


def test_starts_give_different_layouts_and_the_choice_is_deterministic(data):
    a = graphclust.GraphClustering(spec(4), n_clusters=6, random_state=2).fit(data)
    b = graphclust.GraphClustering(spec(4), n_clusters=6, random_state=2).fit(data)
    scores = a.pipeline_.adapter.start_modularity_
    assert len(set(np.round(scores, 12))) > 1  # the starts are not copies of each other
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.pipeline_.adapter.start_ == int(np.argmax(scores))


def test_k_estimated_per_start(data):
    est = graphclust.GraphClustering(spec(3), random_state=0).fit(data)
    adapter = est.pipeline_.adapter
    assert len(adapter.start_modularity_) == 3
    assert est.n_clusters_ == len(np.unique(adapter.sample_labels_))
    assert est.k_selection_.k == est.n_clusters_


@pytest.mark.parametrize("bad", [0, 101])
def test_n_starts_is_bounded_before_any_work(bad):
    with pytest.raises(graphclust.SpecError, match="n_starts"):
        graphclust.compose(spec(bad))
