"""The typed registry handed to plugins, and the records it keeps."""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

import attrs

from graphclust._errors import Problem, ProblemKind, UnknownPartError
from graphclust._parts import PART_KINDS, Part

__all__ = ["Registry", "Catalog", "PartRecord", "PresetRecord", "PluginRecord", "Provider",
           "RuleCatalog", "NAME_PATTERN"]

#: What a registered name must match: lower case, digits, dashes and underscores.
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

T = TypeVar("T")


@attrs.frozen
class Provider:
    """Who registered something: the plugin (bundle) name and its distribution."""

    bundle: str
    distribution: str = ""
    version: str = ""

    def __str__(self) -> str:
        dist = f" ({self.distribution} {self.version})" if self.distribution else ""
        return f"{self.bundle}{dist}"


@attrs.frozen
class PartRecord:
    """A registered part class and where it came from."""

    kind: str
    name: str
    cls: type[Part]
    provider: Provider

    @property
    def summary(self) -> str:
        return self.cls.summary()

    @property
    def distribution(self) -> str:
        """The installed distribution that registered it (empty when added directly)."""
        return self.provider.distribution


@attrs.frozen
class PresetRecord:
    """A named pipeline spec contributed by a bundle."""

    name: str
    spec: dict
    summary: str
    provider: Provider
    paper: str = ""


@attrs.frozen
class PluginRecord:
    """One discovered plugin: loaded, blocked or broken."""

    name: str
    distribution: str = ""
    version: str = ""
    entry_point: str = ""
    status: str = "loaded"  # "loaded" | "blocked" | "failed"
    error: str = ""
    #: names this plugin tried to register that were already taken (it keeps the rest)
    clashes: tuple[str, ...] = ()


def _closest(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def unknown_name_message(kind_label: str, name: str, names: list[str]) -> str:
    known = ", ".join(sorted(names)) or "(none registered)"
    return f"unknown {kind_label} {name!r}{_closest(name, names)} Registered: {known}"


class Catalog(Generic[T]):
    """Registered items of one kind, keyed by name."""

    def __init__(self, registry: "Registry", kind: str, label: str):
        self._registry = registry
        self.kind = kind
        self.label = label
        self._items: dict[str, Any] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def names(self) -> list[str]:
        return sorted(self._items)

    def records(self) -> list[Any]:
        return [self._items[k] for k in sorted(self._items)]

    def record(self, name: str):
        try:
            return self._items[name]
        except KeyError:
            kind = (ProblemKind.UNKNOWN_PRESET if self.kind in ("preset", "rule")
                    else ProblemKind.UNKNOWN_PART)
            raise UnknownPartError(
                Problem("", unknown_name_message(self.label, name, self.names()), kind),
                title=f"unknown {self.label}",
            ) from None

    def _insert(self, name: str, record) -> None:
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise ValueError(
                f"{self.label} name {name!r} is invalid: use lower-case letters, digits, '-' or '_'"
            )
        if name in self._items:
            old = self._items[name].provider
            msg = (f"{self.label} name collision: {name!r} is registered by {old} "
                   f"and again by {record.provider}")
            handler = self._registry.clash_handler
            if handler is None:
                raise ValueError(msg)
            handler(f"{self.label} {name!r}", msg)  # the first registration stands
            return
        self._items[name] = record


class PartCatalog(Catalog[PartRecord]):
    """Registered part classes of one kind."""

    def add(self, cls: type[Part], name: str | None = None) -> type[Part]:
        """Register a part class under ``name`` (default: ``cls.name``). Returns ``cls``."""
        base = PART_KINDS[self.kind]
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise TypeError(f"{self.label} {cls!r} must be a subclass of graphclust.{base.__name__}")
        name = name or cls.name
        self._insert(name, PartRecord(self.kind, name, cls, self._registry.provider))
        return cls

    def get(self, name: str) -> type[Part]:
        """The part class registered as ``name``; an unknown name lists the known ones."""
        return self.record(name).cls


class PresetCatalog(Catalog[PresetRecord]):
    """Registered presets (named declarative specs)."""

    def add(self, name: str, spec: dict, *, summary: str = "", paper: str = "") -> None:
        if not isinstance(spec, dict):
            raise TypeError(f"preset {name!r} must be a dict spec")
        rules = getattr(self._registry, "rules", None)
        if rules is not None and name in rules:
            msg = (f"preset name collision: {name!r} is registered (as a rule preset) by "
                   f"{rules.record(name).provider} and again by {self._registry.provider}")
            if self._registry.clash_handler is None:
                raise ValueError(msg)
            self._registry.clash_handler(f"preset {name!r}", msg)
            return
        self._insert(name, PresetRecord(name, spec, summary, self._registry.provider, paper))

    def add_toml(self, path: str | Path) -> None:
        """Register every preset of a TOML file: one table per preset.

        Each table holds a pipeline spec plus optional ``summary`` and ``paper`` keys::

            [ongr-k]
            summary = "ONGR with k-means anchors"
            paper = "Han, Xiong, Nie (IJCAI 2017)"
            anchors = { name = "kmeans", n_anchors = 1000 }
            ...
        """
        with open(path, "rb") as fh:
            tables = tomllib.load(fh)
        for name, table in tables.items():
            table = dict(table)
            summary = table.pop("summary", "")
            paper = table.pop("paper", "")
            self.add(name, table, summary=summary, paper=paper)

    def get(self, name: str) -> dict:
        return self.record(name).spec


class RuleCatalog(Catalog):
    """Registered rule presets: presets whose concrete spec a function of the data's
    :class:`~graphclust.DataProfile` decides at fit (see :mod:`graphclust._rules`).

    A rule preset shares the namespace of the plain presets: a name taken by either
    is a collision.
    """

    def add(self, name: str, rule, *, summary: str = "", description: str = "",
            paper: str = "") -> None:
        """Register ``rule(profile) -> spec dict`` as the preset ``name``.

        ``description`` says the rules in words (``graphclust describe NAME``).
        """
        from graphclust._rules import RulePresetRecord

        if not callable(rule):
            raise TypeError(f"rule preset {name!r} must be a callable profile -> spec dict")
        if name in self._registry.presets:
            self._clash(name)
            return
        self._insert(name, RulePresetRecord(name, rule, summary, description,
                                            self._registry.provider, paper))

    def _clash(self, name: str) -> None:
        old = self._registry.presets.record(name).provider
        msg = (f"preset name collision: {name!r} is registered by {old} and again (as a rule "
               f"preset) by {self._registry.provider}")
        if self._registry.clash_handler is None:
            raise ValueError(msg)
        self._registry.clash_handler(f"preset {name!r}", msg)

    def get(self, name: str):
        return self.record(name)


class Registry:
    """Everything plugins registered: one catalog per part kind, and the presets.

    Attributes
    ----------
    anchors, graphs, adapters, solvers, roundings, metrics, consensus : catalog of part classes
    presets : catalog of named specs
    rules : catalog of rule presets (a spec decided from the data's profile)
    plugins : list of PluginRecord
    """

    def __init__(self) -> None:
        self.provider = Provider("<direct>")
        self.anchors = PartCatalog(self, "anchors", "anchor selector")
        self.graphs = PartCatalog(self, "graph", "graph builder")
        self.adapters = PartCatalog(self, "adapter", "adapter")
        self.solvers = PartCatalog(self, "solver", "solver")
        self.roundings = PartCatalog(self, "rounding", "rounding")
        self.metrics = PartCatalog(self, "metric", "metric")
        self.consensus = PartCatalog(self, "consensus", "consensus")
        self.presets = PresetCatalog(self, "preset", "preset")
        self.rules = RuleCatalog(self, "rule", "rule preset")
        self.plugins: list[PluginRecord] = []
        #: Called as ``handler(what, message)`` when a name is registered twice; the
        #: first registration stands. ``None`` (direct use) raises ``ValueError``.
        self.clash_handler = None

    def parts(self, kind: str) -> PartCatalog:
        """The catalog for a part kind (``"anchors"``, ``"graph"``, ``"solver"``...)."""
        return {
            "anchors": self.anchors,
            "graph": self.graphs,
            "adapter": self.adapters,
            "solver": self.solvers,
            "rounding": self.roundings,
            "metric": self.metrics,
            "consensus": self.consensus,
        }[kind]

    def all_parts(self) -> list[PartRecord]:
        return [r for kind in PART_KINDS for r in self.parts(kind).records()]

    def bind(self, provider: Provider) -> "Registry":
        """Set the provider recorded for what is added next (used by the plugin manager)."""
        self.provider = provider
        return self

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Copy of the catalogs' contents (to roll back a plugin that failed midway)."""
        return {c.kind: dict(c._items) for c in self._catalogs()}

    def restore(self, snap: dict[str, dict[str, Any]]) -> None:
        for c in self._catalogs():
            c._items = dict(snap[c.kind])

    def _catalogs(self) -> list[Catalog]:
        return [self.anchors, self.graphs, self.adapters, self.solvers, self.roundings,
                self.metrics, self.consensus, self.presets, self.rules]

    def preset_names(self) -> list[str]:
        """Every preset name: the plain presets and the rule presets."""
        return sorted({*self.presets.names(), *self.rules.names()})

