"""What :mod:`indexcheck.api` opens from a spec, for the length of a ``with`` block: a store,
or a store and its embedder (behind a ``--cache`` file); and the opener of one index at each
value of a search parameter (compare-ann's sweep).

What is opened here from a spec is closed when the block ends, also when it raises; a store
or embedder the caller opened is passed through and left open (the rule of every public
function).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any, overload

from ..embedders import opened_embedder
from ..embedders.base import Embedder
from ..errors import InputError
from . import StoreOptions, open_store, sweep_spec
from .base import VectorStore


def _from_spec(spec: str, trust_pickle: bool, lookups: bool = True) -> VectorStore:
    """The store of ``spec`` (``lookups`` False: the caller never looks a chunk up by id,
    see :class:`StoreOptions`)."""
    return open_store(spec, StoreOptions(trust_pickle=trust_pickle, lookups=lookups))


@contextmanager
def opened_store(
    store: str | VectorStore, trust_pickle: bool = False, lookups: bool = True
) -> Iterator[VectorStore]:
    """``store`` opened from its spec (``faiss:./index``) and closed at the end, or as given
    (``lookups``: see :class:`StoreOptions`)."""
    if not isinstance(store, str):
        yield store
        return
    opened = _from_spec(store, trust_pickle, lookups)
    try:
        yield opened
    finally:
        opened.close()


@contextmanager
def opened_pair(
    a: str | VectorStore, b: str | VectorStore, trust_pickle: bool = False, lookups: bool = True
) -> Iterator[tuple[VectorStore, VectorStore]]:
    """:func:`opened_store` of two stores at once, on two threads (opening a file store
    reads the whole file for its fingerprint); the first one's error wins, and a store
    opened beside a failed one is closed."""
    from concurrent.futures import ThreadPoolExecutor

    def one(store: str | VectorStore) -> VectorStore:
        return store if not isinstance(store, str) else _from_spec(store, trust_pickle, lookups)

    with ExitStack() as stack:
        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(one, a), pool.submit(one, b)]
        failed: BaseException | None = None
        got: list[VectorStore] = []
        for given, future in zip((a, b), futures, strict=True):
            try:
                got.append(future.result())
            except BaseException as exc:  # noqa: BLE001 - re-raised below, the first one
                failed = failed or exc
                continue
            if isinstance(given, str):
                stack.callback(got[-1].close)
        if failed is not None:
            raise failed
        yield got[0], got[1]


#: typed for the caller: a spec, an embedder or None (the default) gives an Embedder
@overload
def opened(
    store: str | VectorStore | None, embedder: str | Embedder | None, *,
    trust_pickle: bool = False, cache: str | Path | None = None, lookups: bool = True,
) -> AbstractContextManager[tuple[Any, Embedder]]: ...  # fmt: skip
@overload
def opened(
    store: str | VectorStore | None, embedder: str | Embedder | bool | None = False, *,
    trust_pickle: bool = False, cache: str | Path | None = None, lookups: bool = True,
) -> AbstractContextManager[tuple[Any, Embedder | None]]: ...  # fmt: skip
def opened(
    store: str | VectorStore | None, embedder: str | Embedder | bool | None = False, *,
    trust_pickle: bool = False, cache: str | Path | None = None, lookups: bool = True,
) -> AbstractContextManager[tuple[Any, Any]]:  # fmt: skip
    """The store (None: none) and the embedder behind the ``cache`` file (a spec or an
    embedder; None: the default model; False: none), what was opened here closed when the
    block ends, also when it raises (``lookups``: see :class:`StoreOptions`)."""
    path = None if cache is None else Path(cache)
    return _opened(store, embedder, trust_pickle, path, lookups)


@contextmanager
def _opened(
    store: str | VectorStore | None,
    embedder: str | Embedder | bool | None,
    trust_pickle: bool,
    cache: Path | None,
    lookups: bool,
) -> Iterator[tuple[VectorStore | None, Embedder | None]]:
    with ExitStack() as stack:
        s = None
        if store is not None:
            s = stack.enter_context(opened_store(store, trust_pickle, lookups))
        e = None
        if not isinstance(embedder, bool):
            e = stack.enter_context(opened_embedder(embedder, cache))
        yield s, e


def swept_opener(
    store: str | VectorStore, sweep: tuple[str, Sequence[int]] | None, trust_pickle: bool = False
) -> Callable[[int], VectorStore] | None:
    """For ``sweep=(key, values)``, a function opening the ``store`` spec with its search
    parameter ``key`` set to a value (the caller closes each store); None without a sweep.
    Refuses (exit 2) an opened store (a sweep reopens it from its spec) and a ``key`` the
    store does not declare sweepable, here, before anything is opened."""
    if sweep is None:
        return None
    if not isinstance(store, str):
        raise InputError(
            f"a sweep reopens the store at each value: pass it as a spec string, not the "
            f"opened {store.spec}"
        )
    key, values = sweep
    for value in values[:1]:
        sweep_spec(store, key, value)
    options = StoreOptions(trust_pickle=trust_pickle)
    return lambda value: open_store(sweep_spec(store, key, value), options)


__all__ = ["opened", "opened_store", "swept_opener"]
