"""The hooks a graphclust plugin may implement.

A plugin is a module (or object) listed under the ``graphclust`` entry-point group::

    [project.entry-points.graphclust]
    mybundle = "my_package.plugin"

and implementing some of these hooks with :data:`graphclust.hookimpl`.
"""

from __future__ import annotations

import pluggy

PROJECT = "graphclust"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def graphclust_register_components(registry) -> None:
    """Contribute parts and presets.

    Called once per plugin with a :class:`graphclust.Registry` bound to that plugin,
    so every part it adds records the plugin's bundle name and distribution version::

        @hookimpl
        def graphclust_register_components(registry):
            registry.solvers.add(MySolver)
            registry.adapters.add(MyAdapter)   # one catalog per kind of graphclust.PART_KINDS
            registry.consensus.add(MyConsensus)  # an ensemble's consensus function
            registry.presets.add_toml(Path(__file__).parent / "presets" / "my.toml")
            registry.rules.add("my-auto", my_rule)  # a rule preset: profile -> spec dict

    A *rule preset* (``registry.rules``) is a preset whose concrete spec a function of
    the data's :class:`graphclust.DataProfile` decides at fit, as the built-in
    ``auto`` does.

    Raising here is caught: the plugin is recorded as broken and the others keep working
    (unless ``GRAPHCLUST_STRICT_PLUGINS=1``).
    """


@hookspec
def graphclust_report_progress(event) -> None:
    """Receive a :class:`graphclust.ProgressEvent` from a verbose run.

    Every implementation is called for every event; the built-in reporter writes one
    line to stderr per start/end event and throttled step lines.
    """
