"""``auto``'s rule 7: the manifold family (UMAP layout and density tree) for dense
high-dimensional data with many points per cluster (docs/auto.rst, rule 7)."""

from __future__ import annotations

from graphclust import DataProfile, Rule
from graphclust_plugins.auto import _rules_base as base

__all__ = ["MANIFOLD_CLUSTER_DIVISOR", "MANIFOLD_EPOCHS", "MANIFOLD_MIN_SAMPLES",
           "MANIFOLD_MULTISTART_MAX_N", "MANIFOLD_MULTISTART_STARTS", "MANIFOLD_NEGATIVES", "MANIFOLD_PER_CLUSTER",
           "MANIFOLD_SAMPLE", "MANIFOLD_SAMPLE_DIVISOR", "MANIFOLD_SAMPLE_MAX",
           "MANIFOLD_SAMPLED_NEGATIVES", "MANIFOLD_SAMPLED_STARTS",
           "MANIFOLD_SEARCH_COMPONENTS", "RULE_MANIFOLD", "manifold_sample_size",
           "manifold_spec"]

#: Rule 7: fewest points per cluster asked for the manifold family.
MANIFOLD_PER_CLUSTER = 500
#: Rule 7: rows of the sample the manifold family is fitted on (the ``manifold`` preset's
#: S; beyond it rows are placed through their sample neighbours, docs/dask.rst).
MANIFOLD_SAMPLE = 100_000
#: Rule 7 above ``MANIFOLD_SAMPLE_DIVISOR · MANIFOLD_SAMPLE`` rows: the sample is
#: ``n // MANIFOLD_SAMPLE_DIVISOR`` rows, at most MANIFOLD_SAMPLE_MAX
#: (:func:`manifold_sample_size`).
#: The layout is where accuracy is made, the placement where it is lost (MNIST-extend,
#: seed 0: sample rows ACC .9615, placed rows .9415), and a sample row costs about 14
#: placed rows: a sample that is a fixed share of the rows keeps the placed share, and so
#: the accuracy it costs, the same at every ``n``, and the fit linear in ``n`` like a
#: peer that lays out every row (EVoC); a third keeps the fit near 0.6x EVoC's CPU time
#: (docs/auto.rst, rule 7). The bound keeps the sample's global step (one process: its
#: ``S x d`` rows, graph, layout and tree) at three times MANIFOLD_SAMPLE.
MANIFOLD_SAMPLE_DIVISOR = 3
MANIFOLD_SAMPLE_MAX = 3 * MANIFOLD_SAMPLE
#: Rule 7: epochs of the layout, started from the features' principal components.
MANIFOLD_EPOCHS = 60
#: Rule 7 up to MANIFOLD_SAMPLE rows (the layout of every row): negative samples per edge
#: sample. A layout's cost is about proportional to ``1 +`` this; 2 instead of umap-learn's
#: 5 halves it, with the same ARI on the rule's image sets (docs/auto.rst, rule 7).
MANIFOLD_NEGATIVES = 2
#: Rule 7 above MANIFOLD_SAMPLE rows (the layout fitted on a sample, a fixed cost beside
#: the placement of all n rows): negative samples per edge sample (umap-learn's default;
#: more repulsion pulls a lump of two classes apart) and one start. A layout costs about
#: ``1 +`` the negatives: 5 x 1 is 6/63 of issue 27's 20 x 3, which on the sample's graph
#: of 64 principal components bought no accuracy; at 2 the first start of two samples
#: in four lumped (MNIST-extend; docs/auto.rst, rule 7).
MANIFOLD_SAMPLED_NEGATIVES = 5
MANIFOLD_SAMPLED_STARTS = 1
#: Rule 7 up to MANIFOLD_SAMPLE rows with ``d > 2 ·`` this: NN-descent searches the
#: rows' leading principal components and the candidates it finds are measured on the
#: features (``fuzzy-knn``'s ``distances="features"``): the search's distances cost
#: ``d / MANIFOLD_SEARCH_COMPONENTS`` times less (docs/auto.rst, rule 7).
MANIFOLD_SEARCH_COMPONENTS = 64
#: Rule 7 at or below this many rows: the layout from MANIFOLD_MULTISTART_STARTS starts,
#: where three layouts cost seconds (one start merged two MNIST-test digits on 4 of
#: 10 seeds, three starts on none; docs/auto.rst, rule 7).
MANIFOLD_MULTISTART_MAX_N = 30_000
MANIFOLD_MULTISTART_STARTS = 3
#: Rule 7: HDBSCAN's min_samples (core-distance neighbours) of the density tree — the
#: graph's 15 neighbours; the part's default (min_cluster_size = n/50) costs n²/50 memory.
MANIFOLD_MIN_SAMPLES = 15
#: Rule 7 with k given: the density tree's smallest cluster is the sample's rows over
#: ``MANIFOLD_CLUSTER_DIVISOR · k`` (half an average cluster) — the resolution at which
#: the estimate without k counts its leaves (``n // k_max``), with ``k_max = 2k``.
MANIFOLD_CLUSTER_DIVISOR = 2


def manifold_sample_size(n: int) -> int:
    """Rows rule 7 fits the manifold family on: all ``n`` up to MANIFOLD_SAMPLE, then
    MANIFOLD_SAMPLE up to ``MANIFOLD_SAMPLE_DIVISOR`` times that, then
    ``n // MANIFOLD_SAMPLE_DIVISOR``, at most MANIFOLD_SAMPLE_MAX."""
    n = int(n)
    share = min(n // MANIFOLD_SAMPLE_DIVISOR, MANIFOLD_SAMPLE_MAX)
    return min(n, max(MANIFOLD_SAMPLE, share))


def _search_components(p: DataProfile) -> dict:
    """With ``d > 2 · MANIFOLD_SEARCH_COMPONENTS``, searches run on the leading principal
    components (the candidates measured on the features)."""
    if p.d > 2 * MANIFOLD_SEARCH_COMPONENTS:
        return {"pca_components": MANIFOLD_SEARCH_COMPONENTS}
    return {}


def _neighbour_graph(p: DataProfile) -> dict:
    """The sample's fuzzy 15-NN graph: graphclust's NN-descent (seeded; the same lists on
    any thread count; above the sample the lists of ``sample-knn``'s own NN-descent of the
    same sample rows), so that no extra changes the graph. With ``d > 2 ·
    MANIFOLD_SEARCH_COMPONENTS`` the search runs on the leading principal components and
    the candidates are measured and re-sorted on the features (a search *and* distances
    on 50 components merged two MNIST digits; docs/auto.rst, rule 7)."""
    graph = {"name": "fuzzy-knn", "n_neighbors": 15, "method": "approx"}
    comps = _search_components(p)
    if comps:
        graph.update(comps, distances="features")
    return graph


def _placement(p: DataProfile) -> dict:
    """``sample-knn``: above MANIFOLD_SAMPLE rows every other row walks graphclust's
    NN-descent graph of the sample (on the components of :func:`_search_components`,
    candidates measured on the features; the same neighbours on any thread count)."""
    graph = {"name": "sample-knn", "n_neighbors": 15}
    if p.n > MANIFOLD_SAMPLE:
        graph.update(method="descent", **_search_components(p))
    return graph


def _density_tree(p: DataProfile) -> dict:
    """The density tree of the layout: core distances on MANIFOLD_MIN_SAMPLES neighbours;
    without k the leaves of the tree at ``n // k_max`` (docs/choosing-k.rst), with k the
    tree at half an average cluster (docs/auto.rst, rule 7)."""
    density = {"name": "density", "min_samples": MANIFOLD_MIN_SAMPLES, "estimate": "leaf"}
    k = base.asked_k(p)
    if k is not None:
        density["min_cluster_size"] = int(max(
            15, manifold_sample_size(p.n) // (MANIFOLD_CLUSTER_DIVISOR * k)))
    return density


def manifold_spec(p: DataProfile, ctx=None) -> dict:
    """Rule 7: the sample-aware pipeline of the ``manifold`` preset, the same spec with
    and without ``k`` (the ``on-sample`` adapter then estimates it on the sample), in
    memory and on Dask alike. The graph, layout and density tree are fitted on
    :func:`manifold_sample_size` rows drawn by global row index, every other row
    labelled by the membership-weighted vote of its 15 nearest sample rows
    (row-local). The layout starts from the features' principal components. Above MANIFOLD_SAMPLE rows it draws
    MANIFOLD_SAMPLED_NEGATIVES negative samples per edge sample from
    MANIFOLD_SAMPLED_STARTS start; at or below
    MANIFOLD_MULTISTART_MAX_N rows it runs from MANIFOLD_MULTISTART_STARTS starts (the most
    modular kept), where a layout costs about a second (docs/auto.rst, rule 7, for the
    measured effect of each)."""
    sampled = p.n > MANIFOLD_SAMPLE
    starts = (MANIFOLD_SAMPLED_STARTS if sampled  # the sample's layout: a fixed cost
              else MANIFOLD_MULTISTART_STARTS if p.n <= MANIFOLD_MULTISTART_MAX_N  # cheap
              else 1)
    solver = {"name": "umap-layout", "n_components": 10, "min_dist": 0.0, "init": "pca",
              "n_epochs": MANIFOLD_EPOCHS,
              "negative_sample_rate": (MANIFOLD_SAMPLED_NEGATIVES if sampled
                                       else MANIFOLD_NEGATIVES)}
    return {"anchors": {"name": "sample", "n_anchors": manifold_sample_size(p.n)},
            "graph": _placement(p),
            "adapter": {"name": "on-sample", "graph": _neighbour_graph(p),
                        "rounding": _density_tree(p),
                        **({"n_starts": starts} if starts > 1 else {})},
            "solver": solver,
            "rounding": {"name": "argmax"}}


def _fits(p: DataProfile) -> bool:
    """Dense rows (fewer than ``SPARSE_ZEROS`` zeros, whatever the container),
    ``d > HIGH_DIM``, with at least MANIFOLD_PER_CLUSTER points per asked
    cluster (any ``n``, in memory or chunked; with ``k`` given or estimated)."""
    return not (p.d <= base.HIGH_DIM or base.sparse_rows(p)
                or base.per_cluster(p) < MANIFOLD_PER_CLUSTER)


def _applies(p: DataProfile, ctx) -> str | None:
    if not _fits(p):
        return None
    spec = manifold_spec(p)
    where = ("chunked input, " if p.chunked else "") + (
        f"fitted on a sample of {manifold_sample_size(p.n)} rows, the others placed by their "
        "15 nearest sample rows" if p.n > MANIFOLD_SAMPLE else "fitted on all rows")
    comps = spec["adapter"]["graph"].get("pca_components")
    search = "NN-descent" + (f" on {comps} principal components, distances on the "
                             "features" if comps else "")
    starts = spec["adapter"].get("n_starts", 1)
    negatives = spec["solver"].get("negative_sample_rate")
    layout = (f"{spec['solver']['n_epochs']} epochs"
              + (f", {negatives} negative samples" if negatives else "")
              + (f", the most modular of {starts} starts" if starts > 1 else ""))
    return (f"d = {p.d} > {base.HIGH_DIM}, dense, n/k = {base.per_cluster(p):.0f} >= "
            f"{MANIFOLD_PER_CLUSTER} points per cluster: UMAP+HDBSCAN (fuzzy 15-NN graph "
            f"by {search}, 10-d layout from a PCA start ({layout}), "
            f"density tree cut to k; {where})")


RULE_MANIFOLD = Rule(
    7, f"dense d > {base.HIGH_DIM} with >= {MANIFOLD_PER_CLUSTER} points per cluster (or no "
    "k): UMAP+HDBSCAN, the manifold family",
    _applies, manifold_spec,
    details=f"fuzzy 15-NN graph (NN-descent; with d > {2 * MANIFOLD_SEARCH_COMPONENTS}, on "
            f"the {MANIFOLD_SEARCH_COMPONENTS} leading principal\ncomponents, the distances on "
            f"the features), 10-d UMAP layout ({MANIFOLD_EPOCHS} epochs, "
            f"{MANIFOLD_NEGATIVES} negative\nsamples per edge, from the features' principal "
            f"components), HDBSCAN condensed tree\n({MANIFOLD_MIN_SAMPLES} core neighbours) cut "
            "to exactly k clusters, every point labelled. Fitted on a\nsample of "
            f"{MANIFOLD_SAMPLE} rows, n // {MANIFOLD_SAMPLE_DIVISOR} above "
            f"{MANIFOLD_SAMPLE_DIVISOR * MANIFOLD_SAMPLE} rows (at most {MANIFOLD_SAMPLE_MAX}; "
            "the others placed by their\n15 nearest sample rows, found "
            "by a walk of the sample's NN-descent graph), "
            "also on Dask; without k the density tree of the sample's layout estimates it.\n"
            f"Above {MANIFOLD_SAMPLE} rows the sample's layout draws "
            f"{MANIFOLD_SAMPLED_NEGATIVES} negative samples per edge (one start);\nat or "
            f"below {MANIFOLD_MULTISTART_MAX_N} rows it runs from {MANIFOLD_MULTISTART_STARTS} "
            "starts, keeping the most modular on the graph\n(a layout costs about a second).")
