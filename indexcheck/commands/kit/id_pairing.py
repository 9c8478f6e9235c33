"""Ids that do not match: refuse, before any embedding, a check whose ids name nothing.

Two refusals, both :class:`~indexcheck.errors.InputError` (exit 2) with one line:

- :func:`refuse_foreign_chunk_ids` (check-index with ``--chunks``): the chunk ids and the
  store's barely overlap, but the store's texts pair with the chunks by content hash
  (:func:`~indexcheck.commands.diff_index.hash_join.content_key`, as diff-index pairs). The
  index was built under other ids (LangChain's default uuid4, for one); every chunk would be
  a ``missing_vector`` and the advice "index them" would be wrong.
- :func:`refuse_absent_expected_ids` (diagnose, sweep-threshold): in-scope questions none of
  whose expected ids is in the store. Every one would be ``NOT_RETRIEVED`` with no warning.

Both first ask the store for a few ids (one fetch); the store is read in full only when
that probe finds most ids absent.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import InputError
from ...inputs.corpus import Corpus
from ...inputs.questions import Question
from ...inputs.text_keys import content_key
from ...safety.textsafe import visible
from ...stores.base import VectorStore

PROBE = 64  # chunk ids fetched to see whether the ids overlap at all
SCAN_BATCH = 4096


def _blocks(chunks: Any) -> Iterator[tuple[list[str], list[str]]]:
    """(ids, texts) blocks of a Corpus or of a ChunkSource (``blocks(size)``)."""
    if isinstance(chunks, Corpus):
        yield list(chunks.ids), list(chunks.texts)
    else:
        for ids, texts in chunks.blocks(SCAN_BATCH):
            yield list(ids), list(texts)


def _spread(ids: Sequence[str], n: int) -> list[str]:
    """Up to ``n`` ids spread evenly over ``ids`` (first and last included)."""
    if len(ids) <= n:
        return list(dict.fromkeys(ids))
    step = (len(ids) - 1) / (n - 1)
    return list(dict.fromkeys(ids[round(i * step)] for i in range(n)))


def _found(store: VectorStore, ids: Sequence[str]) -> set[str]:
    """The ids of ``ids`` the store holds a row for (one fetch per store batch)."""
    if not ids:
        return set()
    got = store.fetch(list(ids))
    return {cid for cid, ok in zip(got.ids, got.found, strict=True) if ok}


#: the spec key that names a store's id field, by preference (Qdrant calls it id_field)
ID_KEYS = ("id", "id_field")


def id_field_advice(store: Any) -> str:
    """', or name the store's id field in the spec (&id_field=FIELD)' in the key this
    store accepts, '' for a store whose ids cannot be renamed in its spec."""
    params = getattr(type(store), "params", None) or {}
    key = next((k for k in ID_KEYS if k in params), None)
    if key is None:
        return ""
    sep = "&" if "?" in str(getattr(store, "spec", "")) else "?"
    return f", or name the store's id field in the spec ({sep}{key}=FIELD)"


def _key(text: str) -> int:
    hi, lo = content_key(text)
    return (hi << 64) | lo


def refuse_foreign_chunk_ids(store: VectorStore, chunks: Any, source: str = "--chunks") -> None:
    """Raise InputError when the chunk ids barely overlap the store's ids (fewer than half
    of the chunks found by id) while most of the rest pair with a stored text by content
    hash. ``chunks`` is a Corpus or a ChunkSource; ``source`` names it in the message.
    A store without texts is refused when almost no id is shared (:func:`_refuse_unpairable`);
    ids that overlap pass silently."""
    first = next(_blocks(chunks), ([], []))[0]
    probe = _spread(first, PROBE)
    if not probe or 2 * len(_found(store, probe)) >= len(probe):
        return
    store_ids: set[str] = set()
    keys: set[int] = set()
    for batch in store.iter_vectors(SCAN_BATCH):
        store_ids.update(batch.ids)
        if batch.texts is not None:
            keys.update(_key(t) for t in batch.texts if t is not None)
    n = by_id = by_text = 0
    example = ""
    for ids, texts in _blocks(chunks):
        for cid, text in zip(ids, texts, strict=True):
            n += 1
            example = example or cid
            if cid in store_ids:
                by_id += 1
            elif keys and _key(text) in keys:
                by_text += 1
    if not keys:
        _refuse_unpairable(store_ids, n, by_id, example, source, id_field_advice(store))
        return
    if by_text == 0 or 2 * by_id >= n or 2 * by_text < n - by_id:
        return
    raise InputError(
        f"the ids do not match: the store holds {len(store_ids):,} ids and {source} "
        f"{n:,} chunk ids, {by_id:,} of them shared, but {by_text:,} chunks pair with a "
        "stored text by content hash (the index was built under other ids, e.g. "
        "LangChain's default uuid4); drop --chunks to check the store's own texts, or "
        "pass --id-column naming the column that holds the store's ids" + id_field_advice(store)
    )


def _refuse_unpairable(
    store_ids: set[str], n: int, by_id: int, example: str, source: str, advice: str
) -> None:
    """A store with no texts whose ids share almost none (under 10%) of the chunks' while it
    holds at least half as many vectors: an id scheme mismatch, not an index missing its
    vectors. Calling every chunk missing ("index them") and every vector an orphan ("delete
    them") would be wrong advice, and there is no text to pair them by."""
    if not store_ids or 10 * by_id >= n or 2 * len(store_ids) < n:
        return
    stored = min(store_ids)
    raise InputError(
        f"the ids do not match: the store holds {len(store_ids):,} vectors and {source} "
        f"{n:,} chunks, only {by_id:,} ids shared (e.g. chunk id {visible(example)!r}, "
        f"stored id {visible(stored)!r}), and the store keeps no texts to pair them by "
        "content; pass --id-column naming the column of the chunks that holds the ids the "
        "index was built with" + advice
    )


def refuse_absent_expected_ids(
    store: VectorStore,
    questions: Sequence[Question],
    corpus: Corpus | None = None,
    source: str = "the question set",
) -> None:
    """Raise InputError when in-scope questions have no expected id in the store: naming
    how many and one example. With a ``corpus``, expected ids that are chunks of it but
    absent from the store are the store's fault (``missing_vector``, labelled MISALIGNED)
    unless they are at least half the in-scope questions (ids from another scheme)."""
    ins = [q for q in questions if q.in_scope and q.expected]
    wanted = list(dict.fromkeys(e for q in ins for e in q.expected))
    if not wanted:
        return
    held = _found(store, wanted)
    lost = [q for q in ins if not any(e in held for e in q.expected)]
    if not lost:
        return
    known = set(corpus.ids) if corpus is not None else set()
    unknown = [q for q in lost if not any(e in known for e in q.expected)]
    few = 2 * len(lost) < len(ins)
    if few and not unknown:
        return  # chunks the index lost: diagnose labels them MISALIGNED (missing_vector)
    named = unknown if few else lost  # a few unknown ids, or most of the set
    example = named[0]
    absent = {e for q in named for e in q.expected if e not in held}
    where = " nor in the chunks" if few and corpus is not None else ""
    raise InputError(
        f"{len(named)} of {len(ins)} in-scope questions in {source} expect only chunk ids "
        f"that are not in the store{where} ({len(absent):,} of {len(wanted):,} expected ids "
        f"absent; e.g. question '{example.id}' expects '{example.expected[0]}'); give the "
        "store's ids in 'expected' (check-index --chunks says whether the store uses other "
        "ids)"
    )


__all__ = ["refuse_absent_expected_ids", "refuse_foreign_chunk_ids"]
