"""One plugin manager for everything that plugs in: stores, embedders, judges, commands.

indexcheck uses pluggy (as simonw/llm does). A plugin is a module or object with ``@hookimpl``
functions, found through the entry point group ``indexcheck`` (docs/plugins.md)::

    @hookimpl
    def register_stores(register):
        register("foo", "indexcheck_foo.store:FooStore")   # a class, a function or "module:attr"

The built-in stores, embedders, judges and commands register through the same hooks
(:mod:`indexcheck.plugins.defaults`, ``cli/app.py`` for commands). A ``"module:attr"`` target
is imported only when its scheme is opened, so ``import indexcheck`` stays light; the older
groups ``indexcheck.stores`` and ``indexcheck.embedders`` still register. Two plugins giving
one scheme different targets are refused when it is opened, never resolved by load order.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any

import pluggy

from ..errors import SpecError
from ..safety.textsafe import visible
from .hookspecs import PROJECT, Register, Specs, hookimpl, hookspec

#: entry point groups of earlier versions: group -> registry kind
LEGACY_GROUPS = {"indexcheck.stores": "stores", "indexcheck.embedders": "embedders"}


@dataclass
class Registry:
    """scheme -> target for one kind (stores, embedders or judges), with who registered it."""

    kind: str
    targets: dict[str, Any] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)
    clashes: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, target: Any, owner: str) -> None:
        scheme = name.lower()
        if scheme in self.targets and not _same(self.targets[scheme], target):
            self.clashes.setdefault(scheme, [self.owners[scheme]]).append(owner)
            return
        self.targets.setdefault(scheme, target)
        self.owners.setdefault(scheme, owner)

    def names(self) -> list[str]:
        return sorted(self.targets)

    def load(self, scheme: str) -> Any:
        """The registered target of ``scheme`` (imported if given as a path); None if
        unknown; SpecError for a clash or a plugin that cannot be imported."""
        key = scheme.lower()
        if key in self.clashes:
            owners = " and ".join(self.clashes[key])
            raise SpecError(
                f"two plugins register the {self.kind[:-1]} '{visible(scheme)}' ({owners}); "
                "uninstall one of them"
            )
        target = self.targets.get(key)
        if not isinstance(target, str):
            return target
        module, _, attr = target.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise SpecError(
                f"the {self.kind[:-1]} plugin for '{visible(scheme)}' ({target}) cannot be "
                f"imported ({exc}); reinstall the package that provides it"
            ) from None


def _same(a: Any, b: Any) -> bool:
    return bool(a is b or a == b)


def _owner(plugin: Any) -> str:
    return str(getattr(plugin, "__name__", None) or type(plugin).__name__)


@cache
def manager() -> pluggy.PluginManager:
    """The process's plugin manager: the built-ins, then every installed plugin."""
    from . import defaults as default_plugins

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(Specs)
    pm.register(default_plugins, name="indexcheck.plugins.defaults")
    pm.load_setuptools_entrypoints(PROJECT)
    return pm


def _collect(kind: str) -> Registry:
    registry = Registry(kind)
    pm = manager()
    hook = getattr(pm.hook, f"register_{kind}")
    for impl in hook.get_hookimpls():
        owner = pm.get_name(impl.plugin) or _owner(impl.plugin)
        impl.function(register=lambda name, target, _o=owner: registry.add(name, target, _o))
    for group, legacy_kind in LEGACY_GROUPS.items():
        if legacy_kind == kind:
            for ep in entry_points(group=group):
                registry.add(ep.name, ep.value, ep.dist.name if ep.dist else ep.value)
    return registry


def registry(kind: str) -> Registry:
    """The registry of ``kind`` ("stores", "embedders", "judges"), built on every call so
    that a plugin put on sys.path after start-up is found (a few microseconds)."""
    if kind not in ("stores", "embedders", "judges"):
        raise ValueError(kind)
    return _collect(kind)


def register_commands(cli: Any) -> None:
    """Let every plugin (the built-in commands included) add its click commands."""
    manager().hook.register_commands(cli=cli)


def reset() -> None:
    """Forget the manager (tests that install a plugin mid-process)."""
    manager.cache_clear()


__all__ = [
    "Register",
    "Registry",
    "Specs",
    "hookimpl",
    "hookspec",
    "manager",
    "register_commands",
    "registry",
]
