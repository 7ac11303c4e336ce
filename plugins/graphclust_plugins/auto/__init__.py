"""The ``auto`` bundle: the default preset, a rule table over the data's profile.

Rule presets
------------
``auto``
    Decides the concrete spec from n, d, k, the column scales and diagnostics of a
    bounded sample (choosing among the spectral, manifold, MST and mixture families) by
    an ordered table of rules (:data:`graphclust_plugins.auto.rule_auto.AUTO_RULES`; the
    rules in words: ``graphclust describe auto``, argued in ``docs/auto.rst``).
"""

from graphclust import hookimpl


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.auto.rule_auto import DESCRIPTION, REGISTRATION_SUMMARY, auto_rule

    registry.rules.add("auto", auto_rule, summary=REGISTRATION_SUMMARY,
                       description=DESCRIPTION)
