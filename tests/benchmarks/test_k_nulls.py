"""benchmarks.k_nulls: the structureless draws it calibrates the no-structure tests on."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import k_nulls


@pytest.mark.parametrize("kind", k_nulls.KINDS)
def test_draws_have_the_asked_shape_and_support(kind):
    X = k_nulls.draw(kind, 500, 9, np.random.default_rng(0))
    assert X.shape == (500, 9) and np.isfinite(X).all()
    if kind == "cube":
        assert np.abs(X).max() <= 1.0
    if kind == "ball":
        assert np.linalg.norm(X, axis=1).max() <= 1.0 + 1e-12


@pytest.mark.slow
def test_the_share_of_a_few_draws_stays_below_rule_11s(capsys):
    from graphclust_plugins.auto.rule_auto import CURVED_STRUCTURE_SHARE

    assert k_nulls.main(["--kind", "share", "--draws", "4"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert float(last.rsplit(" ", 1)[1]) < CURVED_STRUCTURE_SHARE
