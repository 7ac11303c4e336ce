"""Every environment variable graphclust reads goes through one parser
(:mod:`graphclust.environ`, issue 46 C3): a valid value is read as documented, an invalid
one is refused with graphclust's :class:`~graphclust.InputError` naming the variable, the
value and what it must be — never a bare ``OverflowError`` (``GRAPHCLUST_DENSIFY_LIMIT=inf``)
and never silently replaced by the default. Values drawn by
:func:`graphclust.testing.strategies.env_values`, written apart from the parser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings

import graphclust as gc
from graphclust.environ import VARIABLES, read_env
from graphclust.testing.strategies import ENV_NAMES, env_values

QUICK = settings(max_examples=25, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])
ROOT = Path(__file__).resolve().parents[2]


def _framework_sources():
    for top in ("framework", "plugins"):
        yield from (ROOT / top).rglob("*.py")


def test_every_variable_read_is_declared_and_in_the_strategies():
    """The variables named in the framework and the bundles are exactly the declared ones,
    and the only ``os.environ``/``getenv`` read of a ``GRAPHCLUST_`` name is the parser's."""
    named = set()
    for path in _framework_sources():
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r"GRAPHCLUST_[A-Z_]+[A-Z]", text))
        if path.name != "environ.py":
            assert not re.search(r"(environ\.get|getenv)\(\s*[\"']GRAPHCLUST_", text), path
    assert named == set(VARIABLES) == set(ENV_NAMES)


@pytest.mark.parametrize("name", ENV_NAMES)
@QUICK
@given(data=__import__("hypothesis").strategies.data())
def test_an_invalid_value_is_refused_naming_variable_value_and_rule(name, data, monkeypatch):
    value = data.draw(env_values(name, valid=False))
    monkeypatch.setenv(name, value)
    with pytest.raises(gc.InputError) as err:
        read_env(name)
    msg = str(err.value)
    assert name in msg and repr(value) in msg and VARIABLES[name].must_be in msg


@pytest.mark.parametrize("name", ENV_NAMES)
@QUICK
@given(data=__import__("hypothesis").strategies.data())
def test_a_valid_value_is_read(name, data, monkeypatch):
    value = data.draw(env_values(name, valid=True))
    monkeypatch.setenv(name, value)
    got = read_env(name)
    text = value.strip()
    if name == "GRAPHCLUST_DENSIFY_LIMIT":  # the number written, exactly
        mant, _, exp = text.partition("e")
        assert got == int(mant) * 10 ** int(exp or 0)
    elif name == "GRAPHCLUST_STRICT_PLUGINS":
        assert got is (text.lower() in ("1", "true", "yes", "on"))
    elif name == "GRAPHCLUST_DISABLE_PLUGINS":
        assert got == {s for s in text.split(",") if s}
    elif name == "GRAPHCLUST_PROGRESS":
        assert got == text.lower()
    else:
        assert got.is_dir()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_unset_or_blank_is_the_default(name, monkeypatch):
    monkeypatch.delenv(name, raising=False)
    unset = read_env(name)
    monkeypatch.setenv(name, "  ")
    assert read_env(name) == unset == VARIABLES[name].default


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "-1", "abc"])
def test_densify_limit_refused_where_it_is_used(value, monkeypatch):
    """The reproducer: a sparse fit that densifies reads the limit and gets the refusal,
    not an ``OverflowError``; nothing is fitted."""
    monkeypatch.setenv("GRAPHCLUST_DENSIFY_LIMIT", value)
    X = sp.random(40, 5, density=0.5, random_state=0, format="csr")
    model = gc.GraphClustering("ulge", n_clusters=2)  # BKHK anchors need dense rows
    with pytest.raises(gc.InputError, match=f"GRAPHCLUST_DENSIFY_LIMIT={value!r}"):
        model.fit(X)
    assert not hasattr(model, "labels_")


def test_plugin_and_progress_variables_refused_where_they_are_used(monkeypatch):
    from graphclust._plugins import PluginManager
    from graphclust._reporter import StderrProgressReporter

    monkeypatch.setenv("GRAPHCLUST_STRICT_PLUGINS", "2")
    with pytest.raises(gc.InputError, match="GRAPHCLUST_STRICT_PLUGINS='2'"):
        PluginManager(entry_points=[])
    monkeypatch.delenv("GRAPHCLUST_STRICT_PLUGINS")
    monkeypatch.setenv("GRAPHCLUST_DISABLE_PLUGINS", "dlc;ncer")
    with pytest.raises(gc.InputError, match="GRAPHCLUST_DISABLE_PLUGINS='dlc;ncer'"):
        PluginManager(entry_points=[])
    monkeypatch.setenv("GRAPHCLUST_PROGRESS", "bars")
    with pytest.raises(gc.InputError, match="GRAPHCLUST_PROGRESS='bars'"):
        StderrProgressReporter()


def test_the_command_line_reports_a_bad_value_and_exits_2(tmp_path, monkeypatch, capsys):
    """Through ``graphclust run``: exit 2 and one line naming the variable (the reader of
    the data folder refuses it before anything is read)."""
    from graphclust.cli import main

    monkeypatch.setenv("GRAPHCLUST_DATA", str(tmp_path / "missing"))
    assert main(["run", "--dataset", "nosuch", "--n-clusters", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: environment variable GRAPHCLUST_DATA=")
    assert err.count("\n") == 1 and "Traceback" not in err
