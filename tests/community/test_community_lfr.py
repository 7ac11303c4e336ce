"""A small LFR graph (networkx's generator, 300 vertices): graph ``auto`` against Leiden
called directly and scikit-learn's precomputed spectral clustering, as the full benchmark
(``python -m benchmarks lfr``) does at 2 000 vertices; and the benchmark's table logic."""

from __future__ import annotations

import warnings

import igraph
import leidenalg
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import GraphClustering
from graphclust_plugins.community.graph_auto import graph_auto
from sklearn.cluster import SpectralClustering
from sklearn.metrics import normalized_mutual_info_score

pytest.importorskip("networkx", reason="LFR graphs need networkx (the [test] extra)")

from benchmarks.lfr import lfr_graph, table

SMALL = {"n": 300, "average_degree": 10, "max_degree": 30, "min_community": 20,
         "max_community": 60}


def fit(spec, A, k, k_max=None):
    X = np.arange(A.shape[0], dtype=np.float64)[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GraphClustering(spec, graph=A, n_clusters=k, k_max=k_max,
                               random_state=0).fit(X).labels_


@pytest.mark.slow  # ~2-3 s each (five Leiden starts, scikit-learn's ARPACK); the fast
# siblings: test_leiden_preset_matches_leiden_on_a_planted_partition_without_k and
# test_graph_auto_hits_a_given_k (test_community_spectral_auto.py)
@pytest.mark.parametrize("mu", [0.2, 0.4])
def test_graph_auto_against_leiden_and_sklearn_on_a_small_lfr_graph(mu):
    A, y = lfr_graph(mu, 1, **SMALL)
    k = int(np.unique(y).size)
    choice = graph_auto(A, None)
    auto = normalized_mutual_info_score(y, fit(choice.spec, A, None, choice.k_max))
    upper = sp.triu(A, k=1).tocoo()
    g = igraph.Graph(n=A.shape[0], edges=list(zip(upper.row.tolist(), upper.col.tolist())))
    ref = leidenalg.find_partition(g, leidenalg.ModularityVertexPartition, seed=0)
    assert auto >= normalized_mutual_info_score(y, ref.membership) - 0.02

    labels = fit(graph_auto(A, k).spec, A, k)
    assert np.unique(labels).size == k  # the given k is hit
    M = sp.csr_matrix(A)
    M.indices, M.indptr = M.indices.astype(np.int32), M.indptr.astype(np.int32)
    sk = SpectralClustering(k, affinity="precomputed", random_state=0).fit(M).labels_
    assert normalized_mutual_info_score(y, labels) >= normalized_mutual_info_score(y, sk) - 0.02


def test_table_says_when_a_target_is_missed():
    def rec(mu, method, nmi):
        return {"mu": mu, "seed": 0, "k": 5, "method": method, "nmi": nmi, "clusters": 5,
                "seconds": 1.0}

    met = [rec(0.1, "auto", 0.9), rec(0.1, "leiden", 0.9), rec(0.1, "auto-k", 0.95),
           rec(0.1, "sklearn-k", 0.9)]
    assert table(met)[1]
    behind = [rec(0.1, "auto", 0.85), *met[1:]]  # .05 below Leiden
    assert not table(behind)[1]
    tied = [*met[:2], rec(0.1, "auto-k", 0.9), met[3]]  # not above scikit-learn
    assert not table(tied)[1]


def test_lfr_is_a_subcommand_of_the_benchmarks_cli(capsys):
    from benchmarks import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main(["lfr", "--help"])
    assert exit_.value.code == 0
    assert "python -m benchmarks lfr" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["lfr", "--methods", "auto,nope"])  # an unknown method is refused
