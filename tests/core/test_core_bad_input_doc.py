"""docs/bad-input.rst is generated here: each row is run, and what the user sees is
taken from the run, so the page cannot drift from the code.

A changed outcome fails this test with the difference; regenerate the page with
``GRAPHCLUST_WRITE_DOCS=1 python -m pytest tests/core/test_core_bad_input_doc.py``.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust import GraphClustering, compose
from graphclust.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "bad-input.rst"
#: The ``[dask]`` extra (dask, distributed, pandas, zarr, pyarrow): the rows that need it are
#: left out of the quick check without it, and the page, which shows them, is not compared.
def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


DASK_EXTRA = all(_installed(name) for name in ("dask", "distributed", "pandas", "zarr",
                                               "pyarrow"))
NO_DASK_REASON = "needs the [dask] extra: pip install 'graphclust[dask]'"
BLOBS, BLOBS_Y = make_blobs(90, centers=3, n_features=4, random_state=0)


def fit(spec="ncut", X=BLOBS, k=3, **kw) -> Callable[[], object]:
    return lambda: GraphClustering(spec, n_clusters=k, random_state=0, **kw).fit(X)


def cli(*argv) -> Callable[[], object]:
    def run():
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(list(argv))
            except SystemExit as exc:  # argparse: usage, then the error line
                code = exc.code
        lines = err.getvalue().strip().splitlines()
        if code and lines and lines[0].startswith("usage:"):
            lines = lines[-1:]  # argparse: the usage lines, then the error
        if code:
            return f"exit {code}: " + " ".join(lines)
        return " | ".join([f"exit {code}", *(line for line in lines
                                             if line.startswith("note:"))])

    return run


SPARSE = __import__("scipy.sparse", fromlist=["csr_array"]).csr_array(
    np.where(np.abs(BLOBS) > 4, np.abs(BLOBS), 0.0))


def sparse_wide(width: int = 10**9):
    """``SPARSE`` with its 4 columns spread over ``width`` (issue 46 C1)."""
    import scipy.sparse as sp

    A = sp.coo_array(SPARSE)
    return sp.csr_array((A.data, (A.row, A.col * (width // 4))), shape=(A.shape[0], width))


def sparse_with_nan():
    X = SPARSE.copy()
    X.data[5] = np.nan
    return X


def with_densify_limit(value: str, action):
    old = os.environ.get("GRAPHCLUST_DENSIFY_LIMIT")
    os.environ["GRAPHCLUST_DENSIFY_LIMIT"] = value
    try:
        return action()
    finally:
        if old is None:
            del os.environ["GRAPHCLUST_DENSIFY_LIMIT"]
        else:
            os.environ["GRAPHCLUST_DENSIFY_LIMIT"] = old


def given_solver():
    dcd = gc.get_registry().solvers.get("dcd")
    model = GraphClustering("ncut", n_clusters=3, random_state=0)
    model.set_params(solver=dcd(), rounding={"name": "argmax"})
    model.fit(BLOBS)
    return f"runs with the given part: {model.pipeline_!r}"


def knn_rule():
    from graphclust.numerics.knn_size import resolve_knn_method

    method, rule = resolve_knn_method(630_000, 784, "auto")
    return f"method {method!r}: {rule}"


# -- issue 30: numerics, Dask input, ensemble bounds, seeds (one block, kept together) --
def offset_labels():
    plain = GraphClustering("ncut", n_clusters=3, random_state=0).fit(BLOBS).labels_
    moved = GraphClustering("ncut", n_clusters=3, random_state=0).fit(BLOBS + 1e9).labels_
    return f"labels identical to those without the offset: {bool(np.array_equal(plain, moved))}"


def needs_dask(action: Callable[[], object]) -> Callable[[], object]:
    """``action``, marked as a row that needs the ``[dask]`` extra."""
    action.needs_dask = True
    return action


def scaled(factor: float, spec="ncut", k=3):
    """A fit of ``BLOBS * factor``, said as whether its labels are those of ``BLOBS``."""
    def run():
        plain = GraphClustering(spec, n_clusters=k, random_state=0).fit(BLOBS).labels_
        moved = GraphClustering(spec, n_clusters=k, random_state=0).fit(BLOBS * factor)
        same = bool(np.array_equal(plain, moved.labels_))
        return f"labels identical to those of the unscaled data: {same}"
    return run


def on_dask(X, spec="uspec", rows=(40, 50), **kw):
    """A fit of ``X`` (an array, or a callable that builds a Dask collection when the row
    runs, so that nothing of Dask is imported while the cases are listed)."""
    @needs_dask
    def run():
        import dask.array as da

        nonlocal X
        X = X() if callable(X) else X
        model = GraphClustering(spec, n_clusters=3, random_state=0, **kw)
        Xd = da.from_array(X, chunks=(rows, X.shape[1])) if isinstance(X, np.ndarray) else X
        labels = model.fit(Xd).labels_
        return f"{labels.shape[0]} labels in row chunks {labels.chunks[0]}"
    return run


def dask_frame(n_parts=3):
    import dask.dataframe as dd
    import pandas as pd

    return dd.from_pandas(pd.DataFrame(BLOBS, columns=list("abcd")), npartitions=n_parts)


@needs_dask
def reordered_predict():
    df = dask_frame()
    GraphClustering("uspec", n_clusters=3, random_state=0).fit(df).predict(df[list("dcba")])


@needs_dask
def labels_after_close():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster):
        import dask.array as da

        model = GraphClustering("uspec", n_clusters=3, random_state=0).fit(
            da.from_array(BLOBS, chunks=45))
    return model.labels_


def after_close(spec, read):
    """``read(model)`` for a model fitted on a dask array under a LocalCluster, once the
    cluster is closed."""
    @needs_dask
    def run():
        import dask.array as da
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                          dashboard_address=":0") as cluster, Client(cluster):
            model = GraphClustering(spec, n_clusters=3, random_state=0).fit(
                da.from_array(BLOBS, chunks=45))
        return read(model)
    return run


def seed_beyond_31_bits():
    def anchors(seed):
        model = GraphClustering("anchor-spectral", n_clusters=3, random_state=seed,
                                anchors={"name": "random", "n_anchors": 10})
        return model.fit(BLOBS).anchors_.points

    same = np.array_equal(anchors(2**31 + 5), anchors(5))
    return f"anchors identical to those of random_state=5: {same}"


@needs_dask
def futures_cancelled_mid_fit():
    """What Dask raises when the client closes while the fit runs (a cancelled future,
    ``reason: unknown``), raised where the chunked pipeline runs."""
    import concurrent.futures

    import dask.array as da

    import graphclust._dask._run as run

    def cancelled(*args, **kwargs):
        raise concurrent.futures.CancelledError("reason: unknown")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run, "fit_chunked", cancelled)
        GraphClustering("uspec", n_clusters=3).fit(da.from_array(BLOBS, chunks=45))


def ensemble(member):
    return lambda: compose({"ensemble": {"members": [member], "consensus": "tcut"}})


ISSUE_30_CASES: list[tuple[str, Callable[[], object]]] = [
    ("``X + 1e9`` (a constant offset)", offset_labels),
    ("dask array scaled by 1e-300", on_dask(BLOBS * 1e-300)),
    ("dask array scaled by 1e200", on_dask(BLOBS * 1e200)),
    ("complex ``X``", fit(X=BLOBS + 1j)),
    ("a dask Series", on_dask(lambda: dask_frame()["a"])),
    ("``predict`` on a dask DataFrame with its columns reordered", reordered_predict),
    ("``n_clusters=5`` on 3 distinct rows", fit("anchor-spectral", X=np.repeat(BLOBS[:3], 30, 0),
                                                 k=5, anchors={"n_anchors": 3})),
    ("dask array with an empty and a one-row chunk", on_dask(BLOBS, "ongr-k", (44, 0, 1, 45))),
    ("``labels_`` after the Dask client closed", labels_after_close),
    ("``members_[0].labels`` of an ensemble after the Dask client closed",
     after_close({"ensemble": {"members": [{"preset": "uspec", "count": 2}],
                               "consensus": "tcut"}}, lambda m: m.members_[0].labels)),
    ("``embedding_`` kept on the workers (``ongr-k``) after the Dask client closed",
     after_close("ongr-k", lambda m: m.embedding_)),
    ("ensemble (two U-SPEC members) on a dask array with an empty chunk",
     on_dask(BLOBS, {"ensemble": {"members": [{"preset": "uspec", "count": 2}],
                                  "consensus": "tcut"}}, (44, 0, 1, 45))),
    ("client closed during ``fit`` (Dask cancels the fit's futures)",
     futures_cancelled_mid_fit),
    ("``random_state=2**31 + 5``", seed_beyond_31_bits),
    ("``random_state=2**32``",
     lambda: GraphClustering("ncut", n_clusters=3, random_state=2**32).fit(BLOBS)),
    ("ensemble member ``{ preset = 'uspec', count = 10**9 }``",
     ensemble({"preset": "uspec", "count": 10**9})),
    ("ensemble member ``{}``", ensemble({})),
]


def estimated(spec: str | dict, X, same: slice | None = None) -> Callable[[], str]:
    """Fit without ``n_clusters``; say the ``k`` found, the cluster sizes and (``same``)
    how many labels the rows of ``same`` received."""
    def run() -> str:
        labels = np.asarray(GraphClustering(spec, random_state=0).fit(X).labels_)
        sizes = ", ".join(str(c) for c in sorted(np.bincount(labels), reverse=True))
        text = f"k = {np.unique(labels).size}, cluster sizes {sizes}"
        if same is not None:
            text += f"; the identical rows got {np.unique(labels[same]).size} label(s)"
        return text

    return run


#: the ``uspec`` preset's pipeline with one start (the preset runs three: 3 x the time)
USPEC_ONE_START = {
    "anchors": {"name": "hybrid", "n_anchors": 1000, "candidate_factor": 10},
    "graph": {"name": "knr-bipartite", "n_neighbors": 5, "search": "approx", "candidates": 10},
    "solver": {"name": "tcut"},
    "rounding": {"name": "kmeans", "n_init": 10, "max_iter": 100, "normalize_rows": True,
                 "init": "k-means++"}}
_S4_BLOBS = np.abs(make_blobs(300, 20, centers=3, random_state=0)[0])

#: issue 46, the statistical hostile cases S1-S5 (one block)
ISSUE_46_STATISTICAL_CASES = [
    ("``uspec``'s pipeline (one start), no ``n_clusters``, one 2-D Gaussian (2 000 rows)",
     estimated(USPEC_ONE_START, np.random.default_rng(0).normal(size=(2000, 2)))),
    ("``uspec``'s pipeline (one start), no ``n_clusters``, three 2-D blobs (2 000 rows)",
     estimated(USPEC_ONE_START, make_blobs(2000, 2, centers=3, random_state=0)[0])),
    ("one column uniform on [0, 1] (1 000 rows), no ``n_clusters``",
     estimated("auto", np.random.default_rng(0).uniform(size=(1000, 1)))),
    ("498 identical rows and 2 distinct rows, no ``n_clusters``",
     estimated("ncut", np.vstack([np.zeros((498, 2)), [[1.0, 1.0], [2.0, 2.0]]]),
               slice(0, 498))),
    ("sparse ``X``: 300 all-zero rows and 300 rows of three blobs, no ``n_clusters``",
     estimated("ncut", __import__("scipy.sparse", fromlist=["csr_array"]).csr_array(
         np.vstack([np.zeros((300, 20)), _S4_BLOBS])), slice(0, 300))),
    ("``--dataset`` a CSV separated by ``;`` with decimal commas",
     cli("run", "--preset", "ncut", "--dataset", "semi.csv")),
]


def _planted_graph():
    """90 nodes in 3 groups of 30: dense inside, sparse between (symmetric, no loop)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    block = np.repeat(np.arange(3), 30)
    P = np.where(block[:, None] == block[None, :], 0.4, 0.02)
    upper = np.triu(rng.random(P.shape) < P, 1).astype(float)
    return sp.csr_array(upper + upper.T)


GRAPH = _planted_graph()


def on_graph(A=GRAPH, k=3, spec="auto", **kw) -> Callable[[], object]:
    """``GraphClustering(spec, graph="precomputed").fit(A)`` (``A`` built when the row
    runs)."""
    def run():
        G = A() if callable(A) else A
        return GraphClustering(spec, n_clusters=k, random_state=0, graph="precomputed",
                               **kw).fit(G)
    return run


def graph_with(value: float):
    def build():
        B = GRAPH.copy()
        B.data[0] = value
        return B
    return build


def graph_cleaned(what: str, build):
    """A fit on ``build()``: how many entries the rule ``what`` dropped, and whether the
    labels are those of the clean graph."""
    def run():
        model = on_graph(build)()
        same = bool(np.array_equal(model.labels_, on_graph()().labels_))
        return (f"{model.graph_.info[f'dropped_{what}']} {what.replace('_', '-')} dropped; "
                f"labels identical to those of the graph without them: {same}")
    return run


def _with_zeros():
    import scipy.sparse as sp

    Z = sp.coo_array(GRAPH)
    return sp.csr_array((np.r_[Z.data, [0.0, 0.0]], (np.r_[Z.row, [0, 1]], np.r_[Z.col, [89, 88]])),
                        shape=GRAPH.shape)


def _isolated(k):
    import scipy.sparse as sp

    return sp.block_diag([GRAPH, sp.csr_array((3, 3))]).tocsr()


#: issue 47: a graph as the input (one block)
GRAPH_CASES = [
    ("``graph='precomputed'``: a directed graph (``A`` not symmetric)",
     on_graph(lambda: __import__("scipy.sparse", fromlist=["triu"]).triu(GRAPH, 1).tocsr())),
    ("``graph='precomputed'``: self-loops",
     graph_cleaned("self_loops", lambda: GRAPH + 2.0 * __import__(
         "scipy.sparse", fromlist=["eye_array"]).eye_array(90))),
    ("``graph='precomputed'``: stored zero weights", graph_cleaned("zeros", _with_zeros)),
    ("``graph='precomputed'``: 3 isolated nodes, ``n_clusters=3``",
     on_graph(lambda: _isolated(3))),
    ("``graph='precomputed'``: 3 components, ``n_clusters=2``", on_graph(
        lambda: __import__("scipy.sparse", fromlist=["block_diag"]).block_diag(
            [GRAPH[:30][:, :30], GRAPH[30:60][:, 30:60], GRAPH[60:][:, 60:]]).tocsr(), k=2)),
    ("``graph='precomputed'``: a negative weight", on_graph(graph_with(-1.0))),
    ("``graph='precomputed'``: a NaN weight", on_graph(graph_with(np.nan))),
    ("``graph='precomputed'``: an infinite weight", on_graph(graph_with(np.inf))),
    ("``graph='precomputed'``: a 90 x 50 matrix", on_graph(GRAPH[:, :50])),
    ("``graph='precomputed'``: 0 nodes", on_graph(np.zeros((0, 0)))),
    ("``graph='precomputed'``: 5 nodes, no edge", on_graph(np.zeros((5, 5)), k=2)),
    ("``graph='precomputed'``: ``y`` of another length than the nodes",
     lambda: GraphClustering(graph="precomputed", n_clusters=3).fit(GRAPH, np.zeros(10))),
    ("``graph='precomputed'`` with the ``ulge`` preset (its solver reads ``X``)",
     on_graph(GRAPH, spec="ulge")),
    ("``graph='precomputed'``, ``anchors='kmeans'``", on_graph(GRAPH, anchors="kmeans")),
    ("``predict`` after ``graph='precomputed'``: new nodes' rows with 50 columns for 90 "
     "fitted nodes", lambda: on_graph()().predict(GRAPH[:5, :50])),
    ("``predict`` after ``graph='precomputed'``: a negative edge weight of a new node",
     lambda: on_graph()().predict(-GRAPH[:5])),
    ("``--graph edges.csv --dataset iris``",
     cli("run", "--graph", "graphs/edges.csv", "--dataset", "iris")),
    ("``--graph`` an edge list without ``source``/``target`` columns",
     cli("run", "--graph", "graphs/nohead.csv")),
    ("``--graph`` an edge list with a negative weight", cli("run", "--graph", "graphs/negw.csv")),
    ("``--graph edges.csv --output l.npy``",
     cli("run", "--graph", "graphs/edges.csv", "--output", "l.npy")),
]


three_blobs = np.vstack([np.zeros((10, 2)) + np.arange(10)[:, None] * 1e-3 + 100.0 * i
                         for i in range(3)])

#: (input, action) in the order of the page
CASES: list[tuple[str, Callable[[], object]]] = [
    ("``X`` with a NaN", fit(X=np.where(np.eye(90, 4) > 0, np.nan, BLOBS))),
    ("``X`` one-dimensional", fit(X=BLOBS[:, 0])),
    ("``X`` of strings", fit(X=np.array([["a", "b"]] * 5))),
    ("``X`` with 0 rows", fit(X=np.zeros((0, 4)))),
    ("fewer points than ``n_clusters``", fit(X=BLOBS[:2])),
    ("``y`` of the wrong length", lambda: GraphClustering(
        "ncut", n_clusters=3, random_state=0).fit(BLOBS, np.zeros(10))),
    ("all rows identical", fit(X=np.ones((40, 4)))),
    ("values scaled by 1e-300", scaled(1e-300)),
    ("values scaled by 1e200", scaled(1e200)),
    ("values scaled by 1e200, ``n_clusters=1``", scaled(1e200, k=1)),
    *ISSUE_30_CASES,
    ("``dcd`` on 3 points, ``n_clusters=2``", fit("dcd", X=BLOBS[:3], k=2)),
    ("ellipsoid rounding with one anchor", fit("ncer-anchor", X=np.abs(BLOBS[:30]),
                                               anchors={"n_anchors": 1})),
    ("graph with 3 components, ``n_clusters=2``",
     fit(X=three_blobs, k=2, graph={"n_neighbors": 3})),
    ("graph with 3 components, ``n_clusters=3``",
     fit(X=three_blobs, k=3, graph={"n_neighbors": 3})),
    ("exact kNN graph, n = 630 000, d = 784 (``method='auto'``)", knn_rule),
    ("unknown preset ``nctu``", fit("nctu")),
    ("misspelt parameter", fit(graph={"n_neighbours": 5})),
    ("parameter of the wrong type", fit(graph={"n_neighbors": "ten"})),
    ("part named by import path", lambda: compose({
        "graph": {"name": "os.system"}, "solver": {"name": "spectral"},
        "rounding": {"name": "kmeans"}})),
    ("``_target_`` key", lambda: compose({
        "_target_": "os.system", "graph": {"name": "knn"}, "solver": {"name": "spectral"},
        "rounding": {"name": "kmeans"}})),
    ("anchor-level adapter, no graph section", lambda: compose({
        "adapter": "anchor-level", "solver": {"name": "ulge"},
        "rounding": {"name": "kmeans"}})),
    ("solver that needs an anchor graph after a kNN graph", lambda: compose({
        "graph": {"name": "knn"}, "solver": {"name": "ulge"}, "rounding": {"name": "kmeans"}})),
    ("TOML that does not parse", lambda: compose("graph = {name = ")),
    ("``set_params(solver=<part instance>)``", given_solver),
    ("``set_params(nosuch=1)``", lambda: GraphClustering("ncut").set_params(nosuch=1)),
    ("precomputed graph with NaN", fit(graph=np.full((90, 90), np.nan))),
    ("precomputed graph given as a 1-D array", fit(graph=np.ones(90))),
    ("``--set graph.n_neighbors`` (no ``=``)",
     cli("run", "--preset", "ncut", "--dataset", "iris", "--set", "graph.n_neighbors")),
    ("``--set graph=3 --set graph.k=1``",
     cli("run", "--preset", "ncut", "--dataset", "iris", "--set", "graph=3",
         "--set", "graph.k=1")),
    ("``--set graph..k=1``", cli("run", "--preset", "ncut", "--dataset", "iris",
                                  "--set", "graph..k=1")),
    ("``--dataset`` a CSV file with ragged rows", cli(
        "run", "--preset", "ncut", "--dataset", "ragged.csv", "--n-clusters", "2")),
    ("``--n-clusters 0``", cli("run", "--preset", "ncut", "--dataset", "iris",
                               "--n-clusters", "0")),
    # the command line and the user's files (issue 30): checked before any work
    ("``--output X.npy`` equal to ``--dataset X.npy``",
     cli("run", "--dataset", "X.npy", "--n-clusters", "3", "--output", "X.npy")),
    ("``--spec run.json --output run.zarr`` (the report ``run.json`` is the spec)",
     cli("run", "--spec", "run.json", "--dataset", "X.npy", "--output", "run.zarr")),
    ("``--output l.parquet`` beside a ``l.json`` that is not a report",
     cli("run", "--dataset", "X.npy", "--output", "l.parquet")),
    ("``--output X.zarr`` equal to ``--dataset X.zarr`` (a zarr store)",
     cli("run", "--dataset", "X.zarr", "--n-clusters", "3", "--output", "X.zarr")),
    ("``--output keep.npy``, ``keep.npy`` an existing folder",
     cli("run", "--dataset", "X.npy", "--output", "keep.npy")),
    ("``--output r.png --plot r.png``",
     cli("run", "--dataset", "X.npy", "--output", "r.png", "--plot", "r.png")),
    ("``--output`` in a folder that is a file",
     cli("run", "--dataset", "X.npy", "--output", "ragged.csv/l.npy")),
    ("``--connect-timeout -1``", cli("run", "--dataset", "iris", "--connect-timeout", "-1")),
    ("``--chunk-mb nan``", cli("run", "--dataset", "iris", "--chunk-mb", "nan")),
    ("``--chunk-mb 8`` on an in-memory run", cli("run", "--dataset", "X.npy",
                                                 "--chunk-mb", "8")),
    ("``--scheduler ''``", cli("run", "--dataset", "iris", "--scheduler", "")),
    ("``--spec ''`` (or ``--output ''``)", cli("run", "--dataset", "iris", "--spec", "")),
    # data files and their labels (issue 29)
    ("CSV with header ``x,y`` (two float columns)",
     cli("run", "--preset", "ncut", "--dataset", "xy.csv", "--n-clusters", "2", "--quiet")),
    ("CSV with header ``a,b,label`` (integer labels)",
     cli("run", "--preset", "ncut", "--dataset", "lab.csv", "--quiet")),
    ("``--labels y`` on that ``x,y`` CSV", cli("run", "--dataset", "xy.csv", "--labels", "y")),
    ("``--labels id``, a column of distinct integers",
     cli("run", "--dataset", "ids.csv", "--labels", "id")),
    ("CSV label column with a missing value", cli("run", "--dataset", "miss.csv")),
    ("``.npz`` whose ``y`` has a NaN", cli("run", "--dataset", "nany.npz")),
    ("parquet label column ``y`` with a null", cli("run", "--dataset", "nully.parquet")),
    ("parquet feature column of pandas' nullable ``Int64`` with a null",
     cli("run", "--dataset", "int64.parquet", "--n-clusters", "3")),
    ("parquet of an ``int64`` and a ``bool`` column",
     cli("run", "--preset", "uspec", "--dataset", "intbool.parquet", "--n-clusters", "2",
         "--quiet")),
    ("one-column CSV with an empty line (a missing value)",
     cli("run", "--dataset", "blank.csv", "--n-clusters", "2")),
    ("``.npz`` whose ``X`` has no column", cli("run", "--dataset", "nocol.npz")),
    ("empty CSV file", cli("run", "--dataset", "empty.csv")),
    ("CSV with a header and no rows", cli("run", "--dataset", "head.csv")),
    ("``.npy`` file, no labels, no ``--n-clusters``",
     cli("run", "--preset", "ncut", "--dataset", "X.npy", "--quiet")),
    ("``--dataset digitz``", cli("run", "--dataset", "digitz", "--data-dir", ".")),
    # sparse input (issue 29 item 3)
    ("sparse ``X`` (CSR) for ``ulge``, whose parts need dense rows",
     fit("ulge", X=SPARSE, k=3)),
    ("the same above the densify limit (``GRAPHCLUST_DENSIFY_LIMIT=1000``)",
     lambda: with_densify_limit("1000", fit("ulge", X=SPARSE, k=3))),
    ("sparse ``X`` with a NaN stored", fit("uspec", X=sparse_with_nan())),
    ("``--dataset m.npz`` written by ``scipy.sparse.save_npz``, ``--labels y``",
     cli("run", "--dataset", "m.npz", "--labels", "y")),
    ("LIBSVM file whose labels are real values",
     cli("run", "--preset", "anchor-spectral", "--dataset", "reg.svm", "--n-clusters", "3",
         "--quiet")),
    ("LIBSVM file that does not parse", cli("run", "--dataset", "bad.svm")),
    *ISSUE_46_STATISTICAL_CASES,
    *GRAPH_CASES,
    # computational extremes (issue 46 C1-C4)
    ("sparse ``X`` of 90 x 10**9 for ``uspec`` (fitted on its non-empty columns)",
     fit("uspec", X=sparse_wide(), k=3)),
    ("LIBSVM file of one line ``1 2000000000:1.0``",
     cli("run", "--dataset", "wide/one.svm", "--quiet")),
    ("``GRAPHCLUST_DENSIFY_LIMIT=inf`` (also ``1e400``, ``nan``, ``-1``, ``abc``)",
     lambda: with_densify_limit("inf", fit("ulge", X=SPARSE, k=3))),
    ("``X * 1e200`` with no spec (auto; fitted in power-of-two units)",
     scaled(1e200, spec="auto")),
]


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip()


_SEEN: dict[int, str] = {}


def outcome(action: Callable[[], object]) -> str:
    """What the user sees: the exception (type and message), the graphclust warnings,
    or the returned text; "result, no warning" for a quiet success. Each case runs once
    per session (both tests read it)."""
    if id(action) not in _SEEN:
        _SEEN[id(action)] = _outcome(action)
    return _SEEN[id(action)]


def _outcome(action: Callable[[], object]) -> str:
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            value = action()
        except Exception as exc:  # the page shows exactly what was raised
            return f"{type(exc).__name__}: {_one_line(exc)}"
    seen = [f"{w.category.__name__}: {_one_line(w.message)}" for w in rec
            if issubclass(w.category, gc.GraphClustWarning)]
    if isinstance(value, str):
        seen.insert(0, _one_line(value))
    return " | ".join(seen) or "result, no warning"


def render() -> str:
    head = """\
.. This page is generated by tests/core/test_core_bad_input_doc.py; do not edit.

Bad input: what you see
=======================

Each row was run by the test suite; the right column is what it printed or raised.
Errors subclass ``ValueError`` (:class:`~graphclust.SpecError` with the path of the
problem, :class:`~graphclust.InputError` for data); warnings subclass
:class:`~graphclust.GraphClustWarning` and come once per fit and cause. The command line
prints errors as one ``error:`` message on stderr and exits with status 2.

.. list-table::
   :header-rows: 1
   :widths: 30 70

   * - input
     - what you see
"""
    rows = []
    for label, action in CASES:
        text = outcome(action).replace("`", "'").replace("*", r"\*").replace("|", r"\|")
        text = text.replace(" \\| ", " | ")
        text = re.sub(r"(?<=\w)_(?!\w)", r"\\_", text)  # labels_ is no reST reference
        rows.append(f"   * - {label}\n     - {text}\n")
    return head + "".join(rows)


def _dask_files(folder):
    """The zarr and parquet files of the command-line rows."""
    import pandas as pd
    import zarr

    zarr.open_array(str(folder / "X.zarr"), mode="w", shape=BLOBS.shape,
                    chunks=(45, 4), dtype="f8")[:] = BLOBS
    frame = pd.DataFrame(BLOBS[:, :2], columns=["a", "b"])
    frame.assign(y=pd.array([None if i == 3 else int(c) for i, c in enumerate(BLOBS_Y)],
                            dtype="Int64")).to_parquet(folder / "nully.parquet")
    frame.assign(c=pd.array([None if i == 7 else i % 5 for i in range(90)],
                            dtype="Int64")).to_parquet(folder / "int64.parquet")
    pd.DataFrame({"n": np.arange(90) % 7, "flag": np.arange(90) % 2 == 0}).to_parquet(
        folder / "intbool.parquet")


@pytest.fixture(autouse=True)
def ragged_csv(tmp_path, monkeypatch):
    """Cases run in a scratch folder holding ``ragged.csv`` (rows of 2 and 1 values) and
    the files of the command-line rows."""
    (tmp_path / "ragged.csv").write_text("1,2\n3\n")
    np.save(tmp_path / "X.npy", BLOBS)
    (tmp_path / "run.json").write_text('{"graph": {"name": "knn"}, "solver": {"name": '
                                       '"spectral"}, "rounding": {"name": "kmeans"}}')
    (tmp_path / "l.json").write_text('{"mine": 1}')
    (tmp_path / "keep.npy").mkdir()
    (tmp_path / "xy.csv").write_text("x,y\n" + "".join(
        f"{a:.3f},{b:.3f}\n" for a, b in BLOBS[:, :2]))
    (tmp_path / "lab.csv").write_text("a,b,label\n" + "".join(
        f"{a:.3f},{b:.3f},{c}\n" for (a, b), c in zip(BLOBS[:, :2], BLOBS_Y)))
    (tmp_path / "ids.csv").write_text("a,id\n" + "".join(f"{v:.3f},{i}\n"
                                                         for i, v in enumerate(BLOBS[:, 0])))
    (tmp_path / "miss.csv").write_text("a,b,label\n1,2,0\n3,4,\n5,6,1\n7,8,1\n")
    (tmp_path / "empty.csv").write_text("")
    np.savez(tmp_path / "nany.npz", X=BLOBS, y=np.where(np.arange(90) == 4, np.nan, BLOBS_Y))
    (tmp_path / "head.csv").write_text("a,b\n")
    (tmp_path / "blank.csv").write_text("a\n1.5\n\n2.5\n3.5\n")
    np.savez(tmp_path / "nocol.npz", X=np.zeros((5, 0)), y=np.arange(5))
    if DASK_EXTRA:
        _dask_files(tmp_path)
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file

    sp.save_npz(tmp_path / "m.npz", sp.csr_matrix(SPARSE))
    dump_svmlight_file(sp.csr_matrix(SPARSE), np.linspace(0.0, 1.0, 90), str(tmp_path / "reg.svm"))
    (tmp_path / "bad.svm").write_text("1 3:x\n0 1:2\n")
    (tmp_path / "semi.csv").write_text("x;y\n1,5;2,25\n3,0;4,75\n0,5;1,25\n")
    (tmp_path / "wide").mkdir()  # a sub-folder: not among the names '--dataset' lists
    (tmp_path / "wide" / "one.svm").write_text("1 2000000000:1.0\n")
    rows, cols = __import__("scipy.sparse", fromlist=["triu"]).triu(GRAPH, 1).nonzero()
    (tmp_path / "graphs").mkdir()  # graph files: not among the names '--dataset' lists
    (tmp_path / "graphs" / "edges.csv").write_text("source,target\n" + "".join(
        f"n{i},n{j}\n" for i, j in zip(rows, cols)))
    (tmp_path / "graphs" / "nohead.csv").write_text("a,b\nn1,n2\n")
    (tmp_path / "graphs" / "negw.csv").write_text("source,target,weight\nn1,n2,1\nn2,n3,-0.5\n")
    monkeypatch.chdir(tmp_path)


@pytest.mark.slow  # 6 s: every example of the page run
@pytest.mark.skipif(not DASK_EXTRA, reason=NO_DASK_REASON + " (the page shows its rows)")
def test_bad_input_page_matches_the_code():
    text = render()
    if os.environ.get("GRAPHCLUST_WRITE_DOCS") == "1" or not DOC.exists():
        DOC.write_text(text)
    current = DOC.read_text()
    diff = "".join(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                        "docs/bad-input.rst", "generated"))
    assert current == text, f"docs/bad-input.rst is out of date:\n{diff}"


def test_no_case_is_an_unexpected_exception():
    allowed = ("SpecError", "InputError", "UnknownPartError", "IncompatiblePartsError",
               "ClusterLostError")
    for label, action in CASES:
        if getattr(action, "needs_dask", False) and not DASK_EXTRA:
            continue  # a row of the [dask] extra; the dask tier runs it
        got = outcome(action)
        head = got.split(":", 1)[0]
        assert head in allowed or not got.split(":", 1)[0].endswith("Error"), (label, got)
