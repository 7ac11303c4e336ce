"""One clear report: the progress stages are the stages of ``timings_``, on one clock, and
the command line says ``k`` once."""

from __future__ import annotations

import pytest
from graphclust import GraphClustering, _plan
from graphclust._progress import Progress
from graphclust.cli import main


@pytest.fixture(scope="module")
def blobs150():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(n_samples=150, centers=4, n_features=5, random_state=0)
    return X


def _fit_recorded(monkeypatch, spec, X, **kwargs):
    """A verbose fit whose progress events are recorded instead of drawn; returns the
    model and the close events, in order."""
    events = []
    monkeypatch.setattr(_plan, "_reporter",
                        lambda verbose: Progress(events.append if verbose else None))
    model = GraphClustering(spec, random_state=0, verbose=True, **kwargs).fit(X)
    return model, [e for e in events if e.kind == "close"]


@pytest.mark.parametrize("spec, k, expected", [
    ("anchor-spectral", 4, ["anchors", "graph", "solver", "rounding", "confidence"]),
    # no k: ncut takes auto's k, found first (docs/choosing-k.rst, "Presets without k")
    ("ncut", None, ["k", "graph", "solver", "rounding", "confidence"]),
    # its own eigengap, where the graph is built
    ({"graph": {"name": "knn"}, "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"},
      "k_from": "parts"}, None, ["graph", "k", "solver", "rounding", "confidence"]),
    ({"scale": "standard", "graph": {"name": "knn"}, "solver": {"name": "spectral"},
      "rounding": {"name": "kmeans"}}, 4, ["scale", "graph", "solver", "rounding", "confidence"]),
    ({"anchors": {"name": "kmeans", "n_anchors": 40}, "graph": {"name": "gaussian-anchor"},
      "adapter": "anchor-level", "solver": {"name": "spectral"},
      "rounding": {"name": "kmeans"}}, 4,
     ["anchors", "graph", "adapter", "solver", "lift", "rounding", "confidence"]),
    pytest.param("manifold", None,
                 ["anchors", "graph", "adapter", "solver", "k", "lift", "rounding", "confidence"],
                 marks=pytest.mark.slow),  # the layout takes 8 s: an adapter that estimates k
    ({"ensemble": {"members": ["ncut", "anchor-spectral"], "consensus": "tcut"}}, 4,
     ["members", "consensus", "confidence"]),
])
def test_progress_stages_are_the_timings_stages_on_one_clock(monkeypatch, blobs150, spec, k,
                                                            expected):
    """Each stage is closed once, under the name ``timings_`` records it, and the seconds
    its close reports are the seconds recorded (no stage's time inside another's)."""
    model, closes = _fit_recorded(monkeypatch, spec, blobs150, n_clusters=k)
    names = [e.stage for e in closes]
    if "members" not in expected:  # the members' own stages are inside the members stage
        assert names == expected
    else:
        assert names[-3:] == expected and "members" not in names[:-3]
    timed = [s for s in model.timings_ if s != "total"]
    assert timed == expected
    closes = {e.stage: e for e in closes}  # in an ensemble, its own two stages
    for stage in expected:
        assert model.timings_[stage] == closes[stage].elapsed, stage
    assert model.timings_["total"] == pytest.approx(sum(model.timings_[s] for s in timed))


@pytest.mark.slow  # 2 s: loading the layout's compiled kernels
def test_the_layout_reports_its_epochs_as_the_total():
    """``umap-layout`` (seconds on real data) announces its epochs and reaches them."""
    from sklearn.datasets import make_blobs

    from graphclust import Context, resolve_part

    X, _ = make_blobs(n_samples=120, centers=3, n_features=4, random_state=0)
    graph = resolve_part({"name": "fuzzy-knn", "n_neighbors": 10}, "graph").build(
        X, None, Context(seed=0))
    events = []
    ctx = Context(seed=0, progress=Progress(events.append).for_stage("solver", "umap-layout"))
    layout = resolve_part({"name": "umap-layout", "n_epochs": 7, "init": "random"}, "solver")
    solution = layout.solve(graph, X, 3, ctx)
    starts = [e for e in events if e.kind == "start"]
    steps = [(e.step, e.total) for e in events if e.kind == "step"]
    assert [e.total for e in starts] == [7] and steps == [(i, 7) for i in range(1, 8)]
    assert solution.n_iter == 7 and events[-1].kind == "end"


def test_fuzzy_knn_reports_its_three_steps():
    """The sample's graph inside an adapter's stage (seconds on MNIST) has a total too."""
    from sklearn.datasets import make_blobs

    from graphclust import Context, resolve_part

    X, _ = make_blobs(n_samples=120, centers=3, n_features=4, random_state=0)
    events = []
    ctx = Context(seed=0, progress=Progress(events.append).for_stage("graph", "fuzzy-knn"))
    resolve_part({"name": "fuzzy-knn", "n_neighbors": 10}, "graph").build(X, None, ctx)
    steps = [(e.step, e.total) for e in events if e.kind == "step"]
    assert events[0].kind == "start" and events[0].total == 3
    assert steps == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("extra", [[], ["--n-clusters", "3"]])
def test_the_command_line_says_k_once(capsys, extra):
    """An estimated k is said once (the note on stderr), a given one once (the report),
    progress lines included."""
    code = main(["run", "--preset", "ncut", "--dataset", "iris", *extra])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 0 and text.count("k = ") == 1, text
    assert ("k = 3 (given by --n-clusters)" in out.out) == bool(extra)
    assert ("note: k = " in out.err) != bool(extra)
    assert "[graphclust] solver:spectral done in" in out.err  # progress was on


def test_the_timings_line_says_it_sums_the_starts(capsys):
    """With several starts every start's stages are reported; the timings are their sums
    and the report says so."""
    code = main(["run", "--preset", "ncut", "--dataset", "iris", "--n-clusters", "3",
                 "--set", "starts=2"])
    out = capsys.readouterr()
    heads = [ln.split(" done in")[0] for ln in out.err.splitlines() if " done in " in ln]
    assert code == 0 and heads.count("[graphclust] solver:spectral") == 2
    assert "timings (summed over the 2 starts): graph " in out.out
