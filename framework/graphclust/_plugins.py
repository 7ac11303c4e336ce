"""The facade that owns the pluggy plugin manager.

Nothing else in graphclust calls ``pm.hook.*``. Discovery loads entry points of the
``graphclust`` group one by one: a plugin that fails to import, misspells a hook, or
raises while registering is recorded (distribution, entry point, error), a warning
is issued, and every other plugin keeps working.

Environment variables
---------------------
GRAPHCLUST_STRICT_PLUGINS
    ``1`` makes any plugin failure raise :class:`graphclust.PluginError` (for plugin
    authors and CI).
GRAPHCLUST_DISABLE_PLUGINS
    Comma-separated plugin (entry-point) names not to load, e.g. ``dlc,stderr-progress``.
"""

from __future__ import annotations

import importlib.metadata as md
import threading
import traceback
import warnings
from typing import Any

import pluggy

from graphclust import hookspecs
from graphclust.environ import read_env
from graphclust._errors import PluginError, PluginWarning
from graphclust._progress import ProgressEvent
from graphclust._registry import PluginRecord, Provider, Registry
from graphclust._reporter import StderrProgressReporter

__all__ = ["PluginManager", "get_plugin_manager", "get_registry", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "graphclust"
STRICT_ENV = "GRAPHCLUST_STRICT_PLUGINS"
DISABLE_ENV = "GRAPHCLUST_DISABLE_PLUGINS"


class PluginManager:
    """Discovers plugins and builds the :class:`Registry`.

    Parameters
    ----------
    strict : bool, optional
        Raise on any plugin failure (default: from ``GRAPHCLUST_STRICT_PLUGINS``).
    blocked : set of str, optional
        Plugin names not to load (default: from ``GRAPHCLUST_DISABLE_PLUGINS``).
    entry_points : iterable of EntryPoint, optional
        Use these instead of the installed ones (tests).
    """

    def __init__(self, *, strict: bool | None = None, blocked: set[str] | None = None,
                 entry_points=None):
        self.strict = read_env(STRICT_ENV) if strict is None else strict
        self.blocked = set(read_env(DISABLE_ENV)) if blocked is None else set(blocked)
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._providers: dict[str, Provider] = {}
        self.records: list[PluginRecord] = []
        self._entry_points = entry_points
        self.registry = Registry()
        self._loaded = False

    # -- discovery -----------------------------------------------------------------
    def _fail(self, record: PluginRecord, exc: BaseException) -> None:
        self.records.append(record)
        msg = (f"graphclust plugin {record.name!r} ({record.entry_point}) failed and is "
               f"disabled: {record.error}")
        if self.strict:
            raise PluginError(msg) from exc
        warnings.warn(msg, PluginWarning, stacklevel=3)

    def register(self, plugin: Any, name: str, *, distribution: str = "", version: str = "",
                 entry_point: str = "") -> bool:
        """Register one plugin object; on failure record it and return ``False``."""
        if name in self.blocked:
            self.records.append(PluginRecord(name, distribution, version, entry_point, "blocked"))
            return False
        try:
            self._pm.register(plugin, name=name)
            self._pm.check_pending()
        except Exception as exc:  # a misspelt hook name or a duplicate plugin
            if self._pm.is_registered(plugin):
                self._pm.unregister(plugin)
            self._fail(PluginRecord(name, distribution, version, entry_point, "failed",
                                    f"{type(exc).__name__}: {exc}"), exc)
            return False
        self._providers[name] = Provider(name, distribution, version)
        self.records.append(PluginRecord(name, distribution, version, entry_point, "loaded"))
        return True

    def load(self) -> "PluginManager":
        """Load every entry point, then the built-in reporter, then build the registry."""
        if self._loaded:
            return self
        eps = (self._entry_points if self._entry_points is not None
               else md.entry_points(group=ENTRY_POINT_GROUP))
        # Built-in bundles first (distribution "graphclust"), then the others by name: a
        # third-party package can never take a built-in name, and a clash between two
        # third-party packages is decided the same way every time.
        for ep in sorted(eps, key=_load_order):
            dist = getattr(ep, "dist", None)
            dist_name = getattr(dist, "name", "") or ""
            version = getattr(dist, "version", "") or ""
            if ep.name in self.blocked:
                self.records.append(PluginRecord(ep.name, dist_name, version, ep.value, "blocked"))
                continue
            try:
                plugin = ep.load()
            except Exception as exc:
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                self._fail(PluginRecord(ep.name, dist_name, version, ep.value, "failed", tb), exc)
                continue
            self.register(plugin, ep.name, distribution=dist_name, version=version,
                          entry_point=ep.value)
        self.register(StderrProgressReporter(), "stderr-progress", distribution="graphclust",
                      entry_point="graphclust._reporter:StderrProgressReporter")
        self._build_registry()
        self._loaded = True
        return self

    def _clash(self, plugin_name: str, clashes: list[str]):
        def handler(what: str, msg: str) -> None:
            clashes.append(what)
            full = (f"graphclust plugin {plugin_name!r}: {msg}; the first registration "
                    "stands, the plugin's other parts and presets keep working")
            if self.strict:
                raise PluginError(full)
            warnings.warn(full, PluginWarning, stacklevel=4)

        return handler

    def _build_registry(self) -> None:
        hook = "graphclust_register_components"
        # Load order (built-ins first, then by name), so a collision is decided the same
        # way every time: the first registration stands and the later one is reported.
        loaded = [r.name for r in self.records if r.status == "loaded"]
        for name in loaded:
            plugin = self._pm.get_plugin(name)
            if plugin is None:
                continue
            if not self._pm.get_hookcallers(plugin) or not any(
                    impl.plugin is plugin for impl in getattr(self._pm.hook, hook).get_hookimpls()):
                continue
            others = [p for p in self._pm.get_plugins() if p is not plugin]
            caller = self._pm.subset_hook_caller(hook, remove_plugins=others)
            snap = self.registry.snapshot()
            self.registry.bind(self._providers.get(name, Provider(name)))
            clashes: list[str] = []
            self.registry.clash_handler = self._clash(name, clashes)
            try:
                caller(registry=self.registry)
                if clashes:
                    i = next(i for i, r in enumerate(self.records) if r.name == name)
                    self.records[i] = attrs_evolve(self.records[i], clashes=tuple(clashes))
            except Exception as exc:
                self.registry.restore(snap)
                self._pm.unregister(plugin)
                rec = next(r for r in self.records if r.name == name)
                self.records.remove(rec)
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                self._fail(attrs_evolve(rec, status="failed", error=f"in {hook}: {tb}"), exc)
            finally:
                self.registry.clash_handler = None
        self.registry.bind(Provider("<direct>"))
        self.registry.plugins = self.records

    # -- hooks used by the rest of graphclust -----------------------------------------
    def report_progress(self, event: ProgressEvent) -> None:
        self._pm.hook.graphclust_report_progress(event=event)

    def has_progress_reporters(self) -> bool:
        return bool(self._pm.hook.graphclust_report_progress.get_hookimpls())


def _load_order(ep) -> tuple[bool, str]:
    dist = getattr(ep, "dist", None)
    return (getattr(dist, "name", "") != "graphclust", ep.name)


def attrs_evolve(record: PluginRecord, **changes) -> PluginRecord:
    import attrs

    return attrs.evolve(record, **changes)


_lock = threading.Lock()
_manager: PluginManager | None = None


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager (loaded on first use)."""
    global _manager
    with _lock:
        if _manager is None:
            _manager = PluginManager().load()
        return _manager


def get_registry() -> Registry:
    """The process-wide :class:`Registry` of every installed plugin's parts and presets."""
    return get_plugin_manager().registry
