"""Issue 11 item 2: on a table with no build order, sorted ids make one shift unreadable;
the chains of holds_vector_of do not need an order.

LangChain's PGVector with its default ids (uuid4) and the positional-cache bug: reading
rows sorted by id turns the two stretches into dozens of one-chunk runs with offsets all
over the place, while the chains are two, each naming its repeat, in build order.
"""

from __future__ import annotations

import numpy as np

from indexcheck.commands.check_index.shift.chains import shift_chains, stretches_of
from indexcheck.vectors import normalize_rows
from tests.builders.framework_corpus import embed_correct, framework_corpus


def rows(built):
    import psycopg

    with psycopg.connect(built.details["dsn"]) as conn:
        got = conn.execute(
            "SELECT e.id, e.embedding::text, e.document, e.cmetadata->>'chunk' "
            "FROM langchain_pg_embedding e JOIN langchain_pg_collection c "
            "ON e.collection_id = c.uuid WHERE c.name = %s",
            (built.details["collection"],),
        ).fetchall()
    ids = [r[0] for r in got]
    vecs = np.asarray([[float(x) for x in r[1].strip("[]").split(",")] for r in got])
    return ids, vecs.astype(np.float32), [r[2] for r in got], [r[3] for r in got]


def test_uuid_ids_sorted_scatter_the_shift_but_chains_do_not(framework_index) -> None:
    built = framework_index("langchain", "pgvector-uuid", "shifted")
    ids, vecs, texts, chunk = rows(built)
    assert len(ids) == len(framework_corpus().ids)
    stored = normalize_rows(vecs)
    fresh = embed_correct(texts)
    sims = stored @ fresh.T
    holds = {}
    for i, sid in enumerate(ids):
        if sims[i, i] < 0.999:
            match = np.flatnonzero(sims[i] >= 0.999)
            holds[sid] = ids[int(match[0])]
    by_text: dict[str, list[str]] = {}
    for sid, t in zip(ids, texts, strict=True):
        by_text.setdefault(t, []).append(sid)
    groups = [g for g in by_text.values() if len(g) > 1]

    # what sorting by id gives (the pgvector store's order today)
    pos_sorted = {sid: p for p, sid in enumerate(sorted(ids))}
    runs = stretches_of({pos_sorted[h]: pos_sorted[t] - pos_sorted[h] for h, t in holds.items()})
    print(f"sorted by uuid: {len(runs)} runs for {len(holds)} shifted chunks")
    assert len(runs) > 10  # unreadable: one shift, many "stretches"

    # the chains: one per repeat, each naming its repeat, in build order
    result = shift_chains(holds, groups)
    assert len(result.chains) == 2
    corpus = framework_corpus()
    build_pos = {sid: corpus.ids.index(c) for sid, c in zip(ids, chunk, strict=True)}
    repeat_pairs = sorted(
        tuple(sorted((corpus.ids[f], corpus.ids[r]))) for r, f in corpus.repeat_of.items()
    )
    chunk_of = dict(zip(ids, chunk, strict=True))
    named = sorted(tuple(sorted(chunk_of[i] for i in ch.before.ids)) for ch in result.chains)
    assert named == repeat_pairs
    for ch in result.chains:
        p = [build_pos[i] for i in ch.ids]
        assert p == sorted(p)
