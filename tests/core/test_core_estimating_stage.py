"""The public question "which part estimates k?" (:meth:`graphclust.Pipeline.estimating_stage`,
:meth:`graphclust.Ensemble.estimating_stage`): the one dispatch of the k selection, asked
through public names (the no-k benchmark lists its presets by it)."""

from __future__ import annotations

import copy

import graphclust
import pytest
from graphclust._kselect import estimating_stage


@pytest.mark.parametrize("spec", [
    "ncut", "manifold", "uspec",
    {"graph": {"name": "fuzzy-knn"}, "solver": {"name": "umap-layout"},
     "rounding": {"name": "density"}},
    {"graph": {"name": "knn"}, "solver": {"name": "spectral"},
     "rounding": {"name": "density"}},
])
def test_pipeline_method_is_the_dispatch(spec):
    pipe = graphclust.compose(spec)
    assert isinstance(pipe, graphclust.Pipeline)
    assert pipe.estimating_stage() == estimating_stage(pipe)
    assert pipe.estimating_stage() is not None


def test_pipeline_without_an_able_part_says_none():
    pipe = graphclust.compose("ncut")
    stage, part = pipe.estimating_stage()
    assert stage == "graph"
    mute = copy.copy(part)
    mute.estimates_k = None  # the graph no longer declares it: nothing else can
    pipe.graph = mute
    assert pipe.estimating_stage() is None


def test_ensemble_estimates_through_its_consensus():
    ens = graphclust.compose("usenc")
    assert isinstance(ens, graphclust.Ensemble)
    stage, part = ens.estimating_stage()
    assert (stage, part) == ("consensus", ens.consensus)
    ens.consensus = copy.copy(ens.consensus)
    ens.consensus.estimates_k = None
    assert ens.estimating_stage() is None
