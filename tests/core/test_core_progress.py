"""Progress: one bar (terminal) or one line (logs) per stage, nothing when quiet."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from graphclust import Context, GraphClustering, compose
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
    assert heads == STAGES  # every stage once, in order, no duplicate start/done lines
    rounding = err[-1]
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
    monkeypatch.setenv("GRAPHCLUST_PROGRESS", "nonsense")
    assert StderrProgressReporter().mode == "auto"


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
    nearest_anchors(X, X[:50], 3, progress=prog)  # one block: nothing to report
    assert events == []
