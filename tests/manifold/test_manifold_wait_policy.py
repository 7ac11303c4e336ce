"""The manifold kernels' OpenMP threads wait passively unless the user chose otherwise
(``manifold._jit``'s module notes: on a shared machine a spinning thread takes the core
from the thread it waits for)."""

from __future__ import annotations

import importlib
import os

import graphclust_plugins.manifold._jit as jit


def test_the_wait_policy_is_passive_when_the_environment_sets_none(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    importlib.reload(jit)
    assert os.environ["OMP_WAIT_POLICY"] == jit.WAIT_POLICY == "PASSIVE"


def test_a_wait_policy_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    importlib.reload(jit)
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
