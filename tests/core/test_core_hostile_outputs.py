"""Hostile output paths (issue 30), drawn by
:func:`graphclust.testing.strategies.output_plans`: ``--output`` and ``--plot`` among the
input, the spec, existing files and folders, a read-only folder, a path under a file, a
symbolic link to the input, new names, and each other.

Property of ``graphclust run``: either it refuses with exit 2 and an ``error:`` line and
the tree is exactly as before (refused before any work: nothing written, no temporary
left), or it exits 0 having written exactly the declared outputs (``--output``, the JSON
report beside a ``.zarr``/``.parquet`` output, ``--plot``) and no other path that existed
before changed. The run is the command line's own (reading, the report, the picture,
the writes); its model is one real fit of the tree's 16 points, made once and reused, so
an example costs tens of milliseconds; the quick tier draws a few dozen, ``--run-slow``
10 000 (a picture is drawn in a few per cent of them).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings

from graphclust import GraphClustering
from graphclust.cli import main
from graphclust.testing.strategies import OutputPlan, file_digests, output_plans

X = np.vstack([np.random.default_rng(0).normal(size=(8, 2)),
               np.random.default_rng(1).normal(size=(8, 2)) + 6.0])
QUICK = settings(max_examples=12, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

pytest.importorskip("zarr", reason="needs the [dask] extra")
pytest.importorskip("pyarrow", reason="needs the [dask] extra")


def _declared(plan: OutputPlan) -> set[str]:
    """The paths (relative, normalised) the run says it writes."""
    out = set()
    if plan.output is not None:
        out.add(plan.output)
        if Path(plan.output).suffix.lower() in (".zarr", ".parquet"):
            out.add(str(Path(plan.output).with_suffix(".json")))
        from graphclust.io import confidence_path

        second = confidence_path(plan.output)  # a format without columns: a second array
        if second is not None:
            out.add(str(second))
    if plan.plot is not None:
        out.add(plan.plot)
    return out


def _inside(rel: str, outputs: set[str]) -> bool:
    """Whether ``rel`` is an output, lies inside one (a zarr store), or is a folder made
    to hold one (``new/sub`` for ``new/sub/l.npy``)."""
    return any(rel == o or rel.startswith(o + os.sep) or o.startswith(rel + os.sep)
               for o in outputs)


@functools.cache
def _fitted():
    """One real fit of the tree's data and spec, reused by every example (the property is
    about the files, not the clustering; a fit per example would triple the cost)."""
    from graphclust import GraphClustering
    from graphclust.testing.strategies import OutputPlan as Plan

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GraphClustering(json.loads(Plan.SPEC), n_clusters=2, random_state=0).fit(X)


def _reuse_fit(self, X_, y=None, **kwargs):
    fitted = _fitted()
    assert np.array_equal(np.asarray(X_), X)  # the run read the tree's data
    self.__dict__.update({k: v for k, v in fitted.__dict__.items()
                          if k not in self.get_params()})
    return self


def check_outputs(plan: OutputPlan) -> int:
    """Run ``graphclust run`` with ``plan``'s outputs in a fresh tree; check the property;
    return the exit status."""
    _fitted()  # made before fit is replaced
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "a" / "b" / "t"  # paths may climb up to three levels
        root.mkdir(parents=True)
        plan.build(root, X)
        before = file_digests(tmp)
        err = io.StringIO()
        cwd = os.getcwd()
        os.chdir(root)
        try:
            with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mp.setattr(GraphClustering, "fit", _reuse_fit)
                try:
                    code = main(["run", "--spec", "spec.json", "--dataset", "data.npy",
                                 "--n-clusters", "2", "--quiet", *plan.argv()])
                except SystemExit as exc:
                    code = exc.code
        finally:
            os.chdir(cwd)
            (root / "ro").chmod(0o755)
        after = file_digests(tmp)
        assert code in (0, 2), (plan, code, err.getvalue())
        if code == 2:
            assert "error:" in err.getvalue() and "Traceback" not in err.getvalue(), plan
            assert after == before, (plan, err.getvalue(), set(after) ^ set(before))
            return code
        outputs = {os.path.normpath(os.path.join("a", "b", "t", rel))
                   for rel in _declared(plan)}
        for rel in outputs:
            assert rel in after, (plan, rel, sorted(after))
        changed = {rel for rel in before if after.get(rel) != before[rel]}
        assert all(_inside(rel, outputs) for rel in changed), (plan, changed)
        new = set(after) - set(before)
        assert all(_inside(rel, outputs) for rel in new), (plan, new)
        temporaries = [rel for rel in new for out in outputs
                       if Path(rel).name.startswith(f".{Path(out).name}.")]
        assert not temporaries, (plan, temporaries)
    return code


@QUICK
@given(output_plans())
# found by the slow run: 'sub/..' in an output path made a folder 'sub' on the way
@example(OutputPlan(None, "sub/../data.npy.png"))
@example(OutputPlan("new/../x/../l.npy", None))
# found by the slow run: the picture inside the labels file (written first as 'sub')
@example(OutputPlan("sub", "sub/data.npy.png"))
def test_any_output_paths_refused_before_work_or_written_exactly(plan):
    check_outputs(plan)


@pytest.mark.slow
@SLOW
@given(output_plans())
def test_any_output_paths_refused_before_work_or_written_exactly_slow(plan):
    check_outputs(plan)
