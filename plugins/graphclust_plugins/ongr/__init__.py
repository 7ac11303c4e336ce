"""The ``ongr``  bundle (skeleton; parts are added by the bundle's issue)."""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
