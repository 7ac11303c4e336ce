"""Plugin discovery: entry points loaded one by one, failures isolated and reported."""

import importlib.metadata as md
import sys
import textwrap

import numpy as np
import pytest

import graphclust as gc
from graphclust import PluginError, PluginManager

GOOD_PLUGIN = '''
from typing import ClassVar
import numpy as np
import graphclust as gc

@gc.part
class EchoSolver(gc.Solver):
    """Echo solver of a third-party package."""
    name: ClassVar[str] = "{prefix}echo"
    provides: ClassVar[frozenset] = frozenset({{"soft"}})
    def solve(self, graph, X, n_clusters, ctx):
        return gc.Solution(soft=np.ones((graph.n, n_clusters)))

@gc.hookimpl
def graphclust_register_components(registry):
    registry.solvers.add(EchoSolver)
    registry.presets.add("{prefix}echo-preset", {{"graph": {{"name": "knn"}},
                         "solver": {{"name": "{prefix}echo"}}, "rounding": {{"name": "argmax"}}}})
'''


def make_dist(tmp_path, dist_name, module, body, version="1.2.3"):
    """A real installed distribution: a module plus a .dist-info folder on sys.path."""
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(body))
    info = tmp_path / f"{dist_name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[graphclust]\n{module} = {module}\n")
    return md.Distribution.at(info)


def eps_of(dist):
    return [ep for ep in dist.entry_points if ep.group == "graphclust"]


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in list(sys.modules):
        if name.startswith("gcfix_"):
            del sys.modules[name]


def test_real_installed_fixture_package_is_discovered(on_path):
    make_dist(on_path, "gcfix-good", "gcfix_good", GOOD_PLUGIN.format(prefix="fix-"))
    # Discovery through importlib.metadata itself (no list handed in).
    pm = PluginManager(strict=True).load()
    rec = pm.registry.solvers.record("fix-echo")
    assert rec.provider.bundle == "gcfix_good"
    assert rec.provider.distribution == "gcfix-good" and rec.provider.version == "1.2.3"
    assert "fix-echo-preset" in pm.registry.presets
    # the built-in bundles are discovered the same way
    assert pm.registry.roundings.record("argmax").provider.distribution == "graphclust"
    assert rec.summary == "Echo solver of a third-party package."


def test_broken_import_is_isolated_and_reported(on_path):
    good = make_dist(on_path, "gcfix-a", "gcfix_a", GOOD_PLUGIN.format(prefix="a-"))
    bad = make_dist(on_path, "gcfix-broken", "gcfix_broken", "raise ImportError('no numpy 3')\n")
    pm = PluginManager(entry_points=eps_of(good) + eps_of(bad), strict=False)
    with pytest.warns(gc.GraphClustWarning, match="gcfix_broken.*no numpy 3"):
        pm.load()
    assert "a-echo" in pm.registry.solvers
    rec = next(r for r in pm.records if r.name == "gcfix_broken")
    assert rec.status == "failed" and "no numpy 3" in rec.error
    assert rec.distribution == "gcfix-broken" and rec.entry_point == "gcfix_broken"


def test_raising_hook_rolls_back_and_others_keep_working(on_path):
    body = GOOD_PLUGIN.format(prefix="r-").replace(
        'registry.presets.add(', 'raise RuntimeError("boom")\n    registry.presets.add(')
    bad = make_dist(on_path, "gcfix-raise", "gcfix_raise", body)
    good = make_dist(on_path, "gcfix-b", "gcfix_b", GOOD_PLUGIN.format(prefix="b-"))
    pm = PluginManager(entry_points=eps_of(bad) + eps_of(good), strict=False)
    with pytest.warns(gc.GraphClustWarning, match="boom"):
        pm.load()
    assert "r-echo" not in pm.registry.solvers  # partial registration rolled back
    assert "b-echo" in pm.registry.solvers
    assert next(r for r in pm.records if r.name == "gcfix_raise").status == "failed"


def test_misspelt_hook_fails_loudly(on_path):
    body = GOOD_PLUGIN.format(prefix="m-").replace("graphclust_register_components",
                                                   "graphclust_register_component")
    dist = make_dist(on_path, "gcfix-typo", "gcfix_typo", body)
    with pytest.warns(gc.GraphClustWarning, match="graphclust_register_component"):
        pm = PluginManager(entry_points=eps_of(dist), strict=False).load()
    assert next(r for r in pm.records if r.name == "gcfix_typo").status == "failed"
    with pytest.raises(PluginError, match="unknown hook"):
        PluginManager(entry_points=eps_of(dist), strict=True).load()


def test_strict_mode_raises_on_broken_import(on_path, monkeypatch):
    bad = make_dist(on_path, "gcfix-broken2", "gcfix_broken2", "1/0\n")
    monkeypatch.setenv("GRAPHCLUST_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="ZeroDivisionError"):
        PluginManager(entry_points=eps_of(bad)).load()


def test_strict_default_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("GRAPHCLUST_STRICT_PLUGINS", "1")
    assert PluginManager(entry_points=[]).strict
    monkeypatch.setenv("GRAPHCLUST_STRICT_PLUGINS", "0")
    assert not PluginManager(entry_points=[]).strict


def test_block_list(on_path, monkeypatch):
    dist = make_dist(on_path, "gcfix-c", "gcfix_c", GOOD_PLUGIN.format(prefix="c-"))
    monkeypatch.setenv("GRAPHCLUST_DISABLE_PLUGINS", "gcfix_c, other")
    pm = PluginManager(entry_points=eps_of(dist)).load()
    assert "c-echo" not in pm.registry.solvers
    assert next(r for r in pm.records if r.name == "gcfix_c").status == "blocked"


def test_name_collision_names_both_providers(on_path):
    a = make_dist(on_path, "gcfix-d", "gcfix_d", GOOD_PLUGIN.format(prefix="same-"))
    b = make_dist(on_path, "gcfix-e", "gcfix_e", GOOD_PLUGIN.format(prefix="same-"))
    with pytest.warns(gc.GraphClustWarning) as caught:
        pm = PluginManager(entry_points=eps_of(a) + eps_of(b), strict=False).load()
    msg = " ".join(str(w.message) for w in caught)
    assert "collision" in msg and "gcfix-d" in msg and "gcfix-e" in msg
    assert pm.registry.solvers.record("same-echo").provider.distribution == "gcfix-d"


def test_registry_rejects_bad_parts():
    reg = gc.Registry()
    with pytest.raises(TypeError, match="subclass of graphclust.Solver"):
        reg.solvers.add(object)
    with pytest.raises(ValueError, match="invalid"):
        reg.presets.add("Bad Name", {})


def test_builtin_registry_has_every_part_kind():
    reg = gc.get_registry()
    kinds = {r.kind for r in reg.all_parts()}
    assert kinds == set(gc._parts.PART_KINDS) == {"anchors", "graph", "adapter", "solver",
                                                   "rounding", "metric", "consensus"}
    bundles = {r.provider.bundle for r in reg.all_parts()}
    assert {"common"} <= bundles
    assert all(p.status == "loaded" for p in reg.plugins)


CLASH_PLUGIN = '''
from typing import ClassVar
import numpy as np
import graphclust as gc

@gc.part
class FakeSpectral(gc.Solver):
    """A third-party solver that wants a built-in name."""
    name: ClassVar[str] = "spectral"
    def solve(self, graph, X, n_clusters, ctx):
        raise AssertionError("the built-in spectral must win")

@gc.part
class OwnSolver(gc.Solver):
    """A solver with a name of its own."""
    name: ClassVar[str] = "{prefix}own"
    provides: ClassVar[frozenset] = frozenset({{"soft"}})
    def solve(self, graph, X, n_clusters, ctx):
        return gc.Solution(soft=np.ones((graph.n, n_clusters)))

@gc.hookimpl
def graphclust_register_components(registry):
    registry.solvers.add(FakeSpectral)
    registry.presets.add("ncut", {{"graph": {{"name": "knn"}}, "solver": {{"name": "spectral"}},
                                   "rounding": {{"name": "argmax"}}}})
    registry.solvers.add(OwnSolver)
'''


def test_third_party_cannot_take_a_builtin_name(on_path, capsys, monkeypatch):
    # "aaa_clash" sorts before "common": load order alone used to let it win
    make_dist(on_path, "gcfix-clash", "gcfix_aaa_clash", CLASH_PLUGIN.format(prefix="aaa-"))
    with pytest.warns(gc.PluginWarning) as caught:
        pm = PluginManager(strict=False).load()
    msgs = [str(w.message) for w in caught]
    assert any("'spectral'" in m and "graphclust" in m and "gcfix-clash" in m for m in msgs)
    assert any("'ncut'" in m for m in msgs)
    reg = pm.registry
    assert reg.solvers.record("spectral").provider.distribution == "graphclust"
    assert reg.presets.record("ncut").provider.bundle == "common"
    assert reg.solvers.record("aaa-own").provider.distribution == "gcfix-clash"
    rec = next(r for r in pm.records if r.name == "gcfix_aaa_clash")
    assert rec.status == "loaded" and set(rec.clashes) == {"solver 'spectral'", "preset 'ncut'"}
    assert all(r.status == "loaded" for r in pm.records if r.distribution == "graphclust")
    # the whole common bundle works: ncut fits with the built-in spectral solver
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(60, centers=3, random_state=0)
    pipe = gc.compose("ncut", registry=reg)
    assert np.unique(pipe.run(X, n_clusters=3).labels).size == 3
    # ... and `graphclust plugins` reports the clash, text and JSON
    monkeypatch.setattr("graphclust._plugins._manager", pm)
    from graphclust.cli import main
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "name clashes" in out and "solver 'spectral' of gcfix_aaa_clash" in out
    assert "already held by common (graphclust" in out
    assert main(["plugins", "--json"]) == 0
    data = __import__("json").loads(capsys.readouterr().out)
    plug = next(p for p in data["plugins"] if p["name"] == "gcfix_aaa_clash")
    assert sorted(plug["clashes"]) == ["preset 'ncut'", "solver 'spectral'"]


def test_two_third_party_packages_clashing(on_path):
    a = make_dist(on_path, "gcfix-f", "gcfix_f", CLASH_PLUGIN.format(prefix="f-")
                  .replace('"spectral"', '"shared-name"'))
    b = make_dist(on_path, "gcfix-g", "gcfix_g", CLASH_PLUGIN.format(prefix="g-")
                  .replace('"spectral"', '"shared-name"').replace('"ncut"', '"g-preset"'))
    with pytest.warns(gc.PluginWarning, match="shared-name.*gcfix-f.*gcfix-g"):
        pm = PluginManager(entry_points=eps_of(b) + eps_of(a), strict=False).load()
    reg = pm.registry
    assert reg.solvers.record("shared-name").provider.distribution == "gcfix-f"
    assert "f-own" in reg.solvers and "g-own" in reg.solvers and "g-preset" in reg.presets
    assert next(r for r in pm.records if r.name == "gcfix_g").clashes == ("solver 'shared-name'",)
    assert next(r for r in pm.records if r.name == "gcfix_f").clashes == ()


def test_clash_raises_in_strict_mode(on_path):
    a = make_dist(on_path, "gcfix-h", "gcfix_h", GOOD_PLUGIN.format(prefix="same2-"))
    b = make_dist(on_path, "gcfix-i", "gcfix_i", GOOD_PLUGIN.format(prefix="same2-"))
    with pytest.raises(PluginError, match="collision"):
        PluginManager(entry_points=eps_of(a) + eps_of(b), strict=True).load()
