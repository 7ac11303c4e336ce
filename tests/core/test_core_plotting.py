"""plot_report draws a real figure (Agg) with the panels it promises."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib", reason="the plot extra is not installed")
matplotlib.use("Agg")

from graphclust import GraphClustering  # noqa: E402
from graphclust.plotting import embedding_2d, plot_report  # noqa: E402


@pytest.fixture(scope="module")
def data():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X[:600], y[:600]


def test_report_png_with_labels(data, tmp_path):
    X, y = data
    model = GraphClustering("anchor-spectral", n_clusters=10, random_state=0,
                            anchors={"n_anchors": 100}).fit(X)
    fig = plot_report(model, X, y)
    path = tmp_path / "report.png"
    fig.savefig(path)
    blob = path.read_bytes()
    assert blob[:8] == b"\x89PNG\r\n\x1a\n" and len(blob) > 20_000
    titles = [ax.get_title() for ax in fig.axes]
    assert any(t.startswith("10 clusters") for t in titles)
    from graphclust_plugins.common.metric_acc import clustering_accuracy

    acc = clustering_accuracy(model.labels_, y)
    assert any(f"ACC {acc:.3f}" in t for t in titles)  # the panel's score is the real one
    scatter = fig.axes[0]
    assert len(scatter.collections) == 2  # points and anchors
    assert scatter.collections[0].get_offsets().shape == (600, 2)


def test_report_without_labels_and_without_anchors(data):
    X, _ = data
    model = GraphClustering("ncut", n_clusters=10, random_state=0).fit(X)
    fig = plot_report(model, X)
    assert len(fig.axes[0].collections) == 1  # no anchors to mark
    assert "no true labels" in fig.axes[3].get_title()


def test_subsampled_scatter_counts_every_point(data):
    X, y = data
    model = GraphClustering("ncut", n_clusters=10, random_state=0).fit(X)
    fig = plot_report(model, X, y, max_points=100)
    assert fig.axes[0].collections[0].get_offsets().shape == (100, 2)
    sizes = fig.axes[1].patches
    assert sum(p.get_height() for p in sizes) == 600


def test_anchor_positions_are_weighted_means_of_their_points(data):
    X, _ = data
    model = GraphClustering("anchor-spectral", n_clusters=10, random_state=0,
                            anchors={"n_anchors": 50}).fit(X)
    pts, anc, _ = embedding_2d(model, X)
    Z = model.graph_.Z.toarray()
    j = int(np.argmax(Z.sum(0)))
    used = Z.sum(0) > 0
    expected = Z[:, j] @ pts / Z[:, j].sum()
    np.testing.assert_allclose(anc[int(np.flatnonzero(used).tolist().index(j))], expected)


def test_wrong_rows_are_refused(data):
    X, _ = data
    model = GraphClustering("ncut", n_clusters=10, random_state=0).fit(X)
    with pytest.raises(ValueError, match="pass the training data"):
        plot_report(model, X[:10])


def test_report_of_an_ensemble(data):
    X, y = data
    spec = {"ensemble": {"members": [{"preset": "anchor-spectral", "count": 2,
                                      "anchors": {"n_anchors": 40}}],
                         "consensus": {"name": "tcut"}}}
    model = GraphClustering(spec, n_clusters=10, random_state=0).fit(X)
    fig = plot_report(model, X)
    assert "data, principal axes" in fig.axes[0].get_title()
    assert "ensemble of 2 members" in fig.axes[3].texts[0].get_text()


def test_cli_writes_the_report(tmp_path, capsys):
    from graphclust.cli import main

    out = tmp_path / "r" / "report.png"
    code = main(["run", "--preset", "anchor-spectral", "--dataset", "digits", "--quiet",
                 "--set", "anchors.n_anchors=100", "--plot", str(out)])
    assert code == 0 and "report written to" in capsys.readouterr().out
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


def test_cli_refuses_an_unknown_picture_format_before_fitting(tmp_path, capsys):
    from graphclust.cli import main

    code = main(["run", "--preset", "ncut", "--dataset", "digits", "--plot",
                 str(tmp_path / "report.bmp")])
    err = capsys.readouterr().err
    assert code == 2 and ".png, .pdf, .svg" in err and "[graphclust]" not in err
