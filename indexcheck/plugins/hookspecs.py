"""The plugin hooks (pluggy markers and specs), apart from the manager so that the built-in
plugins and third-party ones import only this. See :mod:`indexcheck.plugins`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT = "indexcheck"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Register = Callable[[str, Any], None]


class Specs:
    """The hooks a plugin may implement; each gets a ``register(name, target)`` callable."""

    @hookspec
    def register_stores(self, register: Register) -> None:
        """Register store schemes: ``register("dict", DictStore)``; the target is a BaseStore
        subclass, a function ``open(spec, options)``, or its ``"module:attr"`` path."""

    @hookspec
    def register_embedders(self, register: Register) -> None:
        """Register embedder schemes: ``register("foo", open_foo)``, ``open_foo(rest)``
        returning an Embedder (``rest`` is what follows ``foo:``)."""

    @hookspec
    def register_judges(self, register: Register) -> None:
        """Register judge schemes: ``register("foo", open_foo)``, ``open_foo(rest)``
        returning a Judge."""

    @hookspec
    def register_commands(self, cli: Any) -> None:
        """Add click commands to the ``indexcheck`` group: ``cli.add_command(cmd)``."""


__all__ = ["PROJECT", "Register", "Specs", "hookimpl", "hookspec"]
