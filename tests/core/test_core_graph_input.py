"""A graph as the input: ``GraphClustering(graph="precomputed").fit(A)`` (docs/graphs.rst).

The reference for every solver that runs on a graph is the older path that already took a
given graph, ``graph=A`` beside a dummy ``X``: the new path must give the same labels
without any ``X``. Malformed graphs each have a test here and a row in docs/bad-input.rst.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust import (DirectedGraphWarning, DisconnectedGraphWarning, GraphClustering,
                        IncompatiblePartsError, InputError)
from graphclust._ongraph import (GraphProfile, graph_default_spec, graph_k_max, graph_matrix,
                                 parts_on_graph)


def planted(n_blocks=3, size=40, p_in=0.4, p_out=0.02, seed=0, weighted=False):
    """A symmetric planted-partition graph (dense draw: small n only) and its blocks."""
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(n_blocks), size)
    P = np.where(block[:, None] == block[None, :], p_in, p_out)
    upper = np.triu(rng.random(P.shape) < P, 1).astype(float)
    if weighted:
        upper *= rng.uniform(0.5, 2.0, upper.shape)
    return sp.csr_array(upper + upper.T), block


A3, BLOCKS = planted()
N = A3.shape[0]


def fit_graph(A, k=3, spec="auto", **kw):
    return GraphClustering(spec, n_clusters=k, random_state=0, graph="precomputed",
                           **kw).fit(A)


# -- the default spec and k --------------------------------------------------------------
def test_auto_on_a_graph_estimates_k_and_finds_the_blocks():
    model = GraphClustering(graph="precomputed", random_state=0).fit(A3)
    assert model.n_clusters_ == 3 and model.k_selection_.method == "modularity"
    assert adjusted_rand_score(BLOCKS, model.labels_) == 1.0
    profile = GraphProfile(graph_matrix(A3)[0], None, graph_k_max(A3))
    assert model.resolved_spec_["summary"] == graph_default_spec(profile)["summary"]
    assert model.resolved_spec_["summary"].startswith("graph auto rule 2")
    assert model.n_features_in_ == N and model.nodes_ is None


def test_a_graph_searches_up_to_sqrt_entries_communities_unless_k_max_is_given():
    # 25 cliques of 8: more communities than the feature default's k_max = 20
    A = sp.block_diag([np.ones((8, 8)) - np.eye(8)] * 25, format="csr")
    A = A + sp.diags(np.ones(199), 1, format="csr") * 0.01  # one weak chain: connected
    A = sp.csr_array((A + A.T) / 2)
    assert graph_k_max(A) == int(np.ceil(np.sqrt(A.nnz))) > 25
    model = GraphClustering(graph="precomputed", random_state=0).fit(A)
    assert model.n_clusters_ == 25
    assert adjusted_rand_score(np.repeat(np.arange(25), 8), model.labels_) == 1.0
    capped = GraphClustering(graph="precomputed", random_state=0, k_max=10)
    with pytest.warns(gc.KRangeWarning):
        capped.fit(A)
    assert capped.n_clusters_ == 10


def test_auto_on_a_graph_equals_its_fixed_spec_on_the_old_given_graph_path():
    """``graph_default_spec`` is what auto runs: the same labels as that spec given the
    graph beside a dummy X (the path that existed before)."""
    profile = GraphProfile(graph_matrix(A3)[0], 3, graph_k_max(A3))
    spec = {k: v for k, v in graph_default_spec(profile).items() if k != "summary"}
    X = np.arange(N, dtype=float)[:, None]  # distinct rows: nothing merged
    old = GraphClustering(spec, n_clusters=3, random_state=0, graph=A3).fit(X)
    new = fit_graph(A3)
    np.testing.assert_array_equal(new.labels_, old.labels_)


def _rounding_for(solver_cls) -> str:
    return "kmeans" if gc.SolutionField.EMBEDDING in solver_cls.provides else "argmax"


ON_GRAPH = parts_on_graph()["solver"]
QUICK = [s for s in ON_GRAPH if s != "umap-layout"]  # umap's layout: seconds (slow tier)


@pytest.mark.parametrize("solver", [*QUICK, *[pytest.param(s, marks=pytest.mark.slow)
                                              for s in ON_GRAPH if s not in QUICK]])
def test_every_solver_that_runs_on_a_graph_equals_the_given_graph_path(solver):
    cls = gc.get_registry().solvers.get(solver)
    spec = {"solver": {"name": solver}, "rounding": {"name": _rounding_for(cls)}}
    X = np.arange(N, dtype=float)[:, None]
    old = GraphClustering(spec, n_clusters=3, random_state=0, graph=A3).fit(X)
    new = fit_graph(A3, spec=spec)
    np.testing.assert_array_equal(new.labels_, old.labels_)
    assert new.labels_.shape == (N,)


def test_dense_sparse_and_list_inputs_give_the_same_labels():
    ref = fit_graph(A3).labels_
    np.testing.assert_array_equal(fit_graph(A3.toarray()).labels_, ref)
    np.testing.assert_array_equal(fit_graph(sp.coo_matrix(A3)).labels_, ref)
    np.testing.assert_array_equal(fit_graph(A3.toarray().tolist()).labels_, ref)


def test_a_pandas_adjacency_frame_is_read_as_its_matrix():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(A3.toarray())
    np.testing.assert_array_equal(fit_graph(frame).labels_, fit_graph(A3).labels_)


def test_weights_are_used():
    """A weighted graph whose weights alone carry the blocks: the edges are uniform
    between and within blocks, the weights are not."""
    rng = np.random.default_rng(3)
    block = np.repeat(np.arange(2), 30)
    upper = np.triu(rng.random((60, 60)) < 0.5, 1).astype(float)
    upper *= np.where(block[:, None] == block[None, :], 1.0, 0.01)
    A = sp.csr_array(upper + upper.T)
    assert adjusted_rand_score(block, fit_graph(A, k=2).labels_) == 1.0
    unweighted = A.copy()
    unweighted.data[:] = 1.0
    assert adjusted_rand_score(block, fit_graph(unweighted, k=2).labels_) < 0.5


# -- networkx and igraph -----------------------------------------------------------------
def test_networkx_graph_with_string_nodes():
    nx = pytest.importorskip("networkx")
    names = [f"n{i}" for i in range(N)]
    order = np.random.default_rng(1).permutation(N)
    G = nx.Graph()
    G.add_nodes_from(names[i] for i in order)  # insertion order: a permutation
    rows, cols = A3.nonzero()
    G.add_weighted_edges_from((names[i], names[j], A3[i, j]) for i, j in zip(rows, cols)
                              if i < j)
    model = fit_graph(G)
    assert model.nodes_ == [names[i] for i in order]
    ref = fit_graph(A3[order][:, order]).labels_  # the matrix in the graph's node order
    np.testing.assert_array_equal(model.labels_, ref)


def test_networkx_directed_graph_is_symmetrised_with_a_warning():
    nx = pytest.importorskip("networkx")
    rows, cols = sp.triu(A3, 1).nonzero()
    D = nx.DiGraph()
    D.add_nodes_from(range(N))
    D.add_edges_from(zip(rows.tolist(), cols.tolist()))  # each edge one way
    with pytest.warns(DirectedGraphWarning, match=f"{rows.size} node pair"):
        model = fit_graph(D)
    # (A + A.T) / 2 is A / 2: the normalised cut does not depend on the scale
    np.testing.assert_array_equal(model.labels_, fit_graph(A3 * 0.5).labels_)


def test_igraph_graph_with_names_and_weights():
    ig = pytest.importorskip("igraph")
    rows, cols = sp.triu(A3, 1).nonzero()
    H = ig.Graph(n=N, edges=list(zip(rows.tolist(), cols.tolist())))
    H.vs["name"] = [f"v{i}" for i in range(N)]
    H.es["weight"] = [2.0] * len(rows)
    model = fit_graph(H)
    assert model.nodes_ == [f"v{i}" for i in range(N)]
    np.testing.assert_array_equal(model.labels_, fit_graph(A3 * 2.0).labels_)


# -- malformed graphs: handled ------------------------------------------------------------
def test_directed_matrix_is_symmetrised_with_one_warning_counting_pairs():
    D = sp.triu(A3, 1).tocsr()
    D = D + 0.5 * sp.tril(A3, -1).tocsr()  # both directions, different weights
    n_pairs = sp.triu(A3, 1).nnz
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model = fit_graph(D)
    directed = [w for w in rec if issubclass(w.category, DirectedGraphWarning)]
    assert len(directed) == 1 and f"{n_pairs} node pair(s)" in str(directed[0].message)
    np.testing.assert_array_equal(model.labels_, fit_graph((D + D.T) / 2).labels_)
    assert model.graph_.info["asymmetric"] == n_pairs


def test_rounding_asymmetry_is_averaged_silently():
    D = A3.copy()
    D.data = D.data * (1 + 1e-14 * np.random.default_rng(0).random(D.nnz))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DirectedGraphWarning)
        fit_graph(D)


def test_self_loops_are_dropped():
    with_loops = (A3 + 5.0 * sp.eye_array(N)).tocsr()
    model = fit_graph(with_loops)
    assert model.graph_.info["dropped_self_loops"] == N
    assert model.graph_.adjacency.diagonal().sum() == 0
    np.testing.assert_array_equal(model.labels_, fit_graph(A3).labels_)


def test_explicit_zero_weights_are_dropped():
    rows, cols = np.nonzero(A3.toarray() == 0)
    pick = np.random.default_rng(0).choice(rows.size, 200, replace=False)
    Z = sp.coo_array(A3)
    data = np.r_[Z.data, np.zeros(200)]
    Z = sp.csr_array((data, (np.r_[Z.row, rows[pick]], np.r_[Z.col, cols[pick]])),
                     shape=A3.shape)
    assert Z.nnz == A3.nnz + 200
    model = fit_graph(Z)
    assert model.graph_.info["dropped_zeros"] == 200
    assert model.graph_.adjacency.nnz == A3.nnz
    np.testing.assert_array_equal(model.labels_, fit_graph(A3).labels_)


def test_isolated_nodes_warn_and_get_labels():
    B = sp.block_diag([A3, sp.csr_array((3, 3))]).tocsr()
    with pytest.warns(DisconnectedGraphWarning, match="3 isolated"):
        model = fit_graph(B)
    assert model.labels_.shape == (N + 3,)
    assert adjusted_rand_score(BLOCKS, model.labels_[:N]) == 1.0


def test_components_as_many_as_clusters_are_the_clusters_without_warning():
    parts = [planted(1, 30, seed=s)[0] for s in range(3)]
    B = sp.block_diag(parts).tocsr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DisconnectedGraphWarning)
        model = fit_graph(B)
    assert adjusted_rand_score(np.repeat(np.arange(3), 30), model.labels_) == 1.0


def test_nothing_n_squared_in_the_cleaning():
    """The cleaned matrix of a sparse graph has the graph's entries, never n x n."""
    n = 50_000
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, n, 200_000), rng.integers(0, n, 200_000)
    A = sp.coo_array((np.ones(rows.size), (rows, cols)), shape=(n, n)).tocsr()
    with pytest.warns(DirectedGraphWarning):  # random pairs: one direction each
        S, nodes, counts = graph_matrix(A)
    assert sp.issparse(S) and S.nnz <= 2 * A.nnz and nodes is None
    assert (S != S.T).nnz == 0 and S.diagonal().sum() == 0


# -- malformed graphs: refused ------------------------------------------------------------
@pytest.mark.parametrize("bad, match", [
    (A3[:, :50], "square n x n"),
    (np.ones(5), "square n x n"),
    (sp.csr_array((0, 0)), "empty"),
    (sp.csr_array((6, 6)), "no edge"),
    (sp.eye_array(6).tocsr(), "no edge"),  # only self-loops
    (np.array([["a", "b"], ["b", "a"]]), "numbers"),
    (None, "got None"),
    ("edges.csv", "got str"),
])
def test_refused_shapes_and_types(bad, match):
    with pytest.raises(InputError, match=match):
        fit_graph(bad)


@pytest.mark.parametrize("value, match", [(-1.0, "negative"), (np.nan, "NaN or infinite"),
                                          (np.inf, "NaN or infinite")])
def test_refused_weights(value, match):
    B = A3.copy()
    B.data[3] = value
    with pytest.raises(InputError, match=match):
        fit_graph(B)


def test_node_count_mismatches_are_refused():
    with pytest.raises(InputError, match=f"one label per sample: the graph has {N} nodes"):
        GraphClustering(graph="precomputed", n_clusters=3).fit(A3, np.zeros(N - 1))
    with pytest.raises(InputError, match="the graph has 4 nodes, fewer than n_clusters=5"):
        fit_graph(A3[:4][:, :4] + sp.eye_array(4, k=1) + sp.eye_array(4, k=-1), k=5)
    # the older path: a given graph beside X of another length
    with pytest.raises(InputError, match="rows"):
        GraphClustering("ncut", n_clusters=3, graph=A3).fit(np.zeros((N - 1, 2)))


def test_a_dask_collection_other_than_edges_or_rows_is_refused():
    """A dask DataFrame of edges and a dask array of the rows of A are read
    (tests/chunked/test_dask_graph_input.py); a Bag is no graph."""
    db = pytest.importorskip("dask.bag")
    with pytest.raises(InputError, match="a dask DataFrame of edges .* got a dask.bag"):
        fit_graph(db.from_sequence([(0, 1), (1, 2)]))


# -- parts that need features: refused before any work ----------------------------------
def _expected_graph_parts():
    reg = gc.get_registry()
    solvers = [r.name for r in reg.parts("solver").records()
               if gc.GraphKind.AFFINITY in r.cls.accepts and not r.cls.needs_features]
    return solvers, [r.name for r in reg.parts("rounding").records()]


@pytest.mark.parametrize("kw, section", [
    ({"spec": "ulge"}, "solver"),            # reads X
    ({"spec": "uspec"}, "solver"),           # needs an anchor graph
    ({"spec": "genie"}, "adapter"),
    ({"anchors": "kmeans"}, "anchors"),
    ({"overrides": {"scale": "standard"}}, "scale"),
    ({"spec": {"ensemble": {"members": ["ncut"], "consensus": "tcut"}}}, "ensemble"),
])
def test_parts_that_need_features_are_refused_before_the_graph_is_read(kw, section):
    """The graph given is not even a graph: the refusal comes before it is looked at."""
    with pytest.raises(IncompatiblePartsError) as info:
        GraphClustering(graph="precomputed", n_clusters=3, **kw).fit("not a graph")
    msg = str(info.value)
    assert f"- {section}:" in msg
    solvers, roundings = _expected_graph_parts()
    assert solvers and all(s in msg for s in solvers) and all(r in msg for r in roundings)


def test_a_solver_instance_that_reads_x_is_refused():
    @gc.part
    class ReadsX(gc.Solver):
        """Reads X."""

        name = "reads-x"
        accepts = frozenset({gc.GraphKind.AFFINITY})
        needs_features = True

        def solve(self, graph, X, n_clusters, ctx):  # pragma: no cover - never reached
            raise AssertionError("ran")

    with pytest.raises(IncompatiblePartsError, match="solver 'reads-x' reads the features"):
        fit_graph(A3, spec="ncut", solver=ReadsX())


def test_predict_takes_new_nodes_as_edge_rows():  # the rule: test_core_graph_predict.py
    model = fit_graph(A3)
    assert np.array_equal(model.predict(A3[[0, 50, 100]]), model.labels_[[0, 50, 100]])


def test_params_clone_and_resolved_spec():
    model = GraphClustering("ncut", graph="precomputed", n_clusters=3, random_state=0)
    params = model.get_params()
    assert params["graph"] == "precomputed"
    model.fit(A3)
    assert clone(model).get_params()["graph"] == "precomputed"
    spec = model.resolved_spec_
    assert spec["graph"] == {"name": "precomputed"}
    json.dumps(spec)  # a plain spec: no matrix in it
    again = GraphClustering(spec, graph="precomputed", random_state=0).fit(A3)
    np.testing.assert_array_equal(again.labels_, model.labels_)


def planted_sparse(n, blocks, deg_in, deg_out, seed=0):
    """A sparse planted partition drawn edge by edge (nothing n x n): each node draws
    ``deg_in`` neighbours in its block and ``deg_out`` anywhere; symmetrised."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, blocks, n)
    order, sizes = np.argsort(block, kind="stable"), np.bincount(block, minlength=blocks)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    b_rep = np.repeat(block, deg_in)
    inside = order[starts[b_rep] + (rng.random(b_rep.size) * sizes[b_rep]).astype(np.int64)]
    rows = np.r_[np.repeat(np.arange(n), deg_in), np.repeat(np.arange(n), deg_out)]
    cols = np.r_[inside, rng.integers(0, n, n * deg_out)]
    A = sp.coo_array((np.ones(rows.size), (rows, cols)), shape=(n, n)).tocsr()
    return (A + A.T).tocsr(), block


def test_sparse_planted_partition_quick():
    A, block = planted_sparse(600, 3, 8, 1)
    model = GraphClustering(graph="precomputed", random_state=0).fit(A)
    assert model.n_clusters_ == 3
    assert adjusted_rand_score(block, model.labels_) > 0.99


@pytest.mark.slow  # 60-120 s on the shared machine: 200 000 nodes, 3.6 M stored entries
def test_large_sparse_planted_partition_is_never_densified():
    import tracemalloc

    from sklearn.metrics import normalized_mutual_info_score

    n, blocks = 200_000, 10
    A, block = planted_sparse(n, blocks, 8, 1)
    csr_bytes = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
    tracemalloc.start()
    model = GraphClustering(graph="precomputed", n_clusters=blocks, random_state=0).fit(A)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert normalized_mutual_info_score(block, model.labels_) > 0.95
    # measured 6.8x the CSR bytes (382 of 56 MiB: the cleaned copy, the n x k embedding,
    # k-means);
    # n x n float64 would be 320 GB, over 100 x this bound
    assert peak < 40 * csr_bytes < n * n * 8 / 100


def test_a_disconnected_given_graph_warns_what_the_user_can_do():
    A = sp.block_diag([np.ones((5, 5)) - np.eye(5)] * 3, format="csr")
    with pytest.warns(gc.DisconnectedGraphWarning, match="used as given.*edges between them"):
        GraphClustering("graph-spectral", graph="precomputed", n_clusters=2,
                        random_state=0).fit(A)
