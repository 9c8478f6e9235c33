"""The run timer and lifetime of what a command opens itself, closed with its context.

Most commands open nothing here: they pass specs to :mod:`indexcheck.api`, which opens and
closes them. The few that still open a store or an embedder themselves (embed, judge's
``--store`` fingerprint, sweep-threshold ``--observed``'s scale) use the same openers
(``open_store``, ``embedders.cached_embedder``), registered here and closed through
``ctx.call_on_close``, so they close when the command ends, also when it raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..corpus import Corpus, load_chunks
from ..embedders import cached_embedder
from ..embedders.base import Embedder
from ..manifest import Run
from ..secrets import spec_password_warning
from ..stores import StoreOptions, VectorStore, open_store

_KEY = "indexcheck.session"


class Session:
    """One command's run timer and the stores and embedders it opened."""

    def __init__(self, command: str) -> None:
        self.run = Run(command)
        self.stores: list[VectorStore] = []
        self.embedders: list[Embedder] = []

    def open_store(self, spec: str, trust_pickle: bool = False) -> VectorStore:
        warn_spec(spec)
        store = open_store(spec, StoreOptions(trust_pickle=trust_pickle))
        self.stores.append(store)
        return store

    def open_embedder(self, spec: str | None, cache_path: Path | None) -> Embedder:
        """The embedder behind a hash-keyed cache: each distinct text is embedded once."""
        embedder = cached_embedder(spec, cache_path)
        self.embedders.append(embedder)
        return embedder

    @property
    def store(self) -> VectorStore | None:
        """The first store opened (the one the manifest describes)."""
        return self.stores[0] if self.stores else None

    @property
    def embedder(self) -> Embedder | None:
        """The first embedder opened (the one the manifest describes)."""
        return self.embedders[0] if self.embedders else None

    def manifest(self, **extra: Any) -> dict[str, Any]:
        """The run's manifest for the first store and embedder opened (see manifest.Run)."""
        return self.run.manifest(self.store, self.embedder, **extra)

    def close(self) -> None:
        """Close everything opened, newest first; one failing close does not skip the rest."""
        errors: list[BaseException] = []
        for store in reversed(self.stores):
            try:
                store.close()
            except Exception as exc:  # a failing close must not hide the others
                errors.append(exc)
        for embedder in reversed(self.embedders):
            cache = getattr(embedder, "cache", None)
            try:
                if cache is not None:
                    cache.close()
            except Exception as exc:
                errors.append(exc)
        self.stores.clear()
        self.embedders.clear()
        if errors:
            raise errors[0]


def session(ctx: click.Context, command: str | None = None) -> Session:
    """The command's session, created on first use and closed when ``ctx`` closes."""
    found: Session | None = ctx.meta.get(_KEY)
    if found is None:
        found = Session(command or (ctx.info_name or "indexcheck"))
        ctx.meta[_KEY] = found
        ctx.call_on_close(found.close)
    return found


def warn_spec(spec: str | None) -> None:
    """Say on stderr when a store spec carries a password (the environment should)."""
    warning = spec_password_warning(spec) if spec else None
    if warning:
        click.echo(f"warning: {warning}", err=True)


def current_session(ctx: click.Context) -> Session | None:
    found: Session | None = ctx.meta.get(_KEY)
    return found


def open_corpus(path: Path | None, id_column: str, text_column: str) -> Corpus | None:
    return None if path is None else load_chunks(path, id_column, text_column)
