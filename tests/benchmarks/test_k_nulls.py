"""benchmarks.k_nulls: the structureless draws it calibrates the no-structure tests on."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import k_nulls


@pytest.mark.parametrize("kind", k_nulls.REFERENCE_KINDS)
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


def test_the_t3_draws_are_heavy_tailed():
    X = k_nulls.draw("t3", 20_000, 1, np.random.default_rng(0))
    z = (X - X.mean()) / X.std()
    assert (z ** 4).mean() > 6  # a Gaussian's kurtosis is 3


@pytest.mark.slow
def test_a_few_reference_draws_in_two_and_three_dimensions_pass_no_null_test(capsys):
    assert k_nulls.main(["--kind", "reference", "--draws", "3", "--dims", "2-3"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 3 + 2 and out[-1].startswith("d 2-8: 3 draws")
    assert " 0 pass the null test" in out[-1]
