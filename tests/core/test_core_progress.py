"""Progress: one bar (terminal) or one line (logs) per stage, nothing when quiet."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from graphclust import Context, GraphClustering, InputError, compose
from graphclust._progress import Progress
from graphclust._reporter import StderrProgressReporter

STAGES = ["anchors:kmeans", "graph:gaussian-anchor", "solver:spectral", "rounding:kmeans"]


@pytest.fixture
def X():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(n_samples=300, centers=4, n_features=5, random_state=0)
    return X


def _run(X, reporter):
    pipe = compose("anchor-spectral")
    ctx = Context(seed=0, progress=Progress(reporter.graphclust_report_progress))
    return pipe.run(X, n_clusters=4, ctx=ctx)


def test_verbose_fit_writes_one_line_per_stage_to_a_log(X, capsys):
    GraphClustering("anchor-spectral", n_clusters=4, random_state=0, verbose=True).fit(X)
    err = capsys.readouterr().err.splitlines()
    heads = [re.match(r"\[graphclust\] (\S+) done in", line).group(1) for line in err]
    # every stage once, in order, no duplicate start/done lines; the estimator's own last
    # stage, the confidence of the labels, after the pipeline's
    assert heads == [*STAGES, "confidence:"]
    rounding = err[-2]
    assert "10/10 steps" in rounding and "steps/s" in rounding  # the restarts are counted


def test_quiet_fit_writes_nothing(X, capsys):
    GraphClustering("anchor-spectral", n_clusters=4, random_state=0).fit(X)
    assert capsys.readouterr().err == ""


def test_terminal_mode_draws_one_bar_per_stage_with_rate(X):
    buf = io.StringIO()
    _run(X, StderrProgressReporter(stream=buf, mode="bar"))
    lines = buf.getvalue().split("\n")
    assert lines[-1] == ""  # each closed bar ends its line
    finals = [line.split("\r")[-1] for line in lines[:-1]]
    assert [f.split(":")[0] + ":" + f.split(":")[1] for f in finals] == STAGES
    rounding = finals[-1]
    assert "10/10" in rounding and "100%" in rounding and "step/s" in rounding


def test_auto_mode_follows_the_stream(X):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, log = Tty(), io.StringIO()
    _run(X, StderrProgressReporter(stream=tty))
    _run(X, StderrProgressReporter(stream=log))
    assert "\r" in tty.getvalue() and "%|" in tty.getvalue()
    assert "\r" not in log.getvalue() and log.getvalue().count("\n") == len(STAGES)


def test_mode_from_environment(monkeypatch):
    monkeypatch.setenv("GRAPHCLUST_PROGRESS", "bar")
    assert StderrProgressReporter().mode == "bar"
    monkeypatch.setenv("GRAPHCLUST_PROGRESS", "Lines")
    assert StderrProgressReporter().mode == "lines"
    monkeypatch.setenv("GRAPHCLUST_PROGRESS", "nonsense")  # refused, not read as "auto"
    with pytest.raises(InputError, match="GRAPHCLUST_PROGRESS='nonsense'.*auto, bar, lines"):
        StderrProgressReporter()


def test_a_part_phase_resets_the_stage_total_without_a_new_bar():
    events = []
    prog = Progress(events.append).for_stage("solver", "x")
    prog.open()
    for phase in range(2):
        prog.start(3, f"phase {phase}")
        for i in range(3):
            prog.step(i + 1, 3)
        prog.end()
    prog.close("done")
    kinds = [e.kind for e in events]
    assert kinds.count("open") == 1 and kinds.count("close") == 1
    buf = io.StringIO()
    rep = StderrProgressReporter(stream=buf, mode="bar")
    for e in events:
        rep.graphclust_report_progress(e)
    assert buf.getvalue().count("\n") == 1
    assert np.all([e.elapsed >= 0 for e in events])


def test_graph_blocks_are_reported_as_steps():
    """A blocked nearest-anchor search reports one step per row block."""
    from graphclust.numerics import nearest_anchors

    events = []
    prog = Progress(events.append).for_stage("graph", "x")
    X = np.random.default_rng(0).normal(size=(1000, 4))
    idx, _ = nearest_anchors(X, X[:50], 3, block_size=300, progress=prog)
    steps = [(e.step, e.total) for e in events if e.kind == "step"]
    assert steps == [(1, 4), (2, 4), (3, 4), (4, 4)]
    ref, _ = nearest_anchors(X, X[:50], 3)
    np.testing.assert_array_equal(idx, ref)
    events.clear()
    nearest_anchors(X, X[:50], 3, progress=prog)  # one block: still a total, 1/1
    assert [(e.kind, e.step, e.total) for e in events] == [("start", 0, 1), ("step", 1, 1)]


def _stage_events(spec, X, k):
    events = []
    compose(spec).run(X, n_clusters=k, ctx=Context(seed=0, progress=Progress(events.append)))
    stages = {}
    for e in events:
        stages.setdefault(f"{e.stage}:{e.part}", []).append(e)
    return stages


def _assert_counted(stage_events, name):
    """The stage announces a total and its steps reach it (the bar ends at 100 %)."""
    starts = [e for e in stage_events if e.kind == "start"]
    steps = [e for e in stage_events if e.kind == "step"]
    assert starts and all(e.total for e in starts), f"{name}: no start with a total"
    assert steps, f"{name}: no steps"
    assert steps[-1].step == steps[-1].total, f"{name}: ends at {steps[-1].step}/{steps[-1].total}"
    assert all(e.step <= e.total for e in steps), name


@pytest.mark.parametrize("spec, stages", [
    ({"graph": {"name": "knn"}, "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}},
     ["graph:knn", "solver:spectral"]),  # n = 900: the ARPACK path
    ({"anchors": {"name": "hybrid", "n_anchors": 40}, "graph": {"name": "knr-bipartite"},
      "solver": {"name": "tcut"}, "rounding": {"name": "kmeans"}},
     ["anchors:hybrid", "graph:knr-bipartite"]),
    ({"anchors": {"name": "bkhk", "n_anchors": 32}, "graph": {"name": "gaussian-anchor"},
      "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}},
     ["anchors:bkhk", "graph:gaussian-anchor", "solver:spectral"]),
    ({"anchors": {"name": "bkhk", "n_anchors": 32}, "graph": {"name": "adaptive-anchor"},
      "solver": {"name": "ulge"}, "rounding": {"name": "kmeans"}},
     ["anchors:bkhk", "graph:adaptive-anchor", "solver:ulge"]),  # the README's spec
])
def test_long_stages_report_a_total_and_reach_it(spec, stages):
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(n_samples=900, centers=4, n_features=5, random_state=0)
    got = _stage_events(spec, X, 4)
    for name in stages:
        _assert_counted(got[name], name)


def test_arpack_restarts_are_estimated_and_closed_at_the_last_one():
    """ARPACK steps are restarts against a guessed total, raised when reached; the solve
    ends with the restart it converged at as the total. The eigenpairs are unchanged."""
    import scipy.sparse as sp
    from graphclust.numerics import leading_eigenvectors

    A = sp.random(1200, 1200, density=0.01, random_state=1)
    A = sp.csr_array(A + A.T)
    events = []
    prog = Progress(events.append).for_stage("solver", "x")
    vals, vecs = leading_eigenvectors(A, 8, rng=np.random.default_rng(3), progress=prog)
    ref_vals, ref_vecs = leading_eigenvectors(A, 8, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(vals, ref_vals)
    np.testing.assert_array_equal(vecs, ref_vecs)
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and events[0].total > 0 and kinds[-1] == "end"
    steps = [e for e in events if e.kind == "step"]
    assert steps[-1].step == steps[-1].total
    assert [e.step for e in steps] == sorted(e.step for e in steps)
    assert all(e.step < e.total for e in steps[:-2])  # a raised guess stays ahead


def test_an_early_converging_solver_closes_at_its_last_step(X):
    """ONGR stops at a label-change tolerance long before max_iter; its bar ends there
    (n/n), in the line log too, instead of n/100."""
    spec = {"anchors": {"name": "kmeans", "n_anchors": 30}, "graph": {"name": "ongr-anchor"},
            "solver": {"name": "ongr", "max_iter": 100}, "rounding": {"name": "argmax"}}
    solver = _stage_events(spec, X, 4)["solver:ongr"]
    start = next(e for e in solver if e.kind == "start")
    steps = [e for e in solver if e.kind == "step"]
    assert start.total == 100 and steps[-1].step < 100  # converged early
    assert steps[-1].step == steps[-1].total
    assert steps[-2].total == 100 and steps[-1].step == steps[-2].step  # closed, not advanced
    buf = io.StringIO()
    rep = StderrProgressReporter(stream=buf, mode="lines")
    for e in solver:
        rep.graphclust_report_progress(e)
    last = steps[-1].step
    assert f"{last}/{last} steps" in buf.getvalue()
