"""Weaviate's filtered search through the emulator, which evaluates the gRPC ``Filters`` the
client sends (typed values, tokenized Equal, NotEqual as the complement, IsNull with
``indexNullState``): 200 seeded random portable filters return exactly numpy's rows and
top-k, and what Weaviate cannot express is refused by operator before any search is sent."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("weaviate")

from indexcheck.cli.app import cli  # noqa: E402
from indexcheck.errors import FilterError  # noqa: E402
from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter  # noqa: E402
from indexcheck.stores import open_store  # noqa: E402
from tests.builders import weaviate as builder  # noqa: E402
from tests.emulators.weaviate_emulator import WeaviateEmulator  # noqa: E402
from tests.stores.seeded_filters import filter_metadata, random_filter  # noqa: E402

N, D, K = 200, 8, 5


def data() -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
    vecs = np.random.default_rng(2).standard_normal((N, D)).astype(np.float32)
    return [str(uuid.UUID(int=i + 1)) for i in range(N)], vecs, filter_metadata(N)


@pytest.fixture(scope="module")
def store() -> Iterator[Any]:
    ids, vecs, metas = data()
    with WeaviateEmulator() as emu:
        builder.collection(emu, "Docs", ids, vecs, metas, field_text=("lang", "topic"),
                           null_state=True)  # fmt: skip
        with open_store(builder.spec(emu, "Docs")) as s:
            yield s, emu


def test_200_seeded_filters_return_numpys_rows_and_top_k(store: Any) -> None:
    s, emu = store
    ids, vecs, metas = data()
    rng = random.Random(5)
    queries = np.random.default_rng(9).standard_normal((10, D)).astype(np.float32)
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    nonempty = 0
    for n in range(200):
        flt = random_filter(rng)
        mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["weaviate"])
        q = queries[n % 10]
        cos = unit @ (q / np.linalg.norm(q))
        rows = [i for i in np.argsort(-cos, kind="stable") if mask[i]]
        want = [ids[i] for i in rows[:K]]
        D_, I = s.query(q[None], K, filter=flt)
        got = [i for i in I[0] if i is not None]
        assert got == want, flt
        np.testing.assert_allclose(D_[0, : len(want)], 1 - cos[rows[:K]], rtol=1e-5, atol=1e-5)
        nonempty += bool(want)
        # the emulator's own reading of the Filters sent agrees with indexcheck's truth
        sent = emu.requests[-1].body.filters
        coll = emu.collections["Docs"]
        assert mask.tolist() == [emu._match(coll, sent, u, coll.objects[u]) for u in ids], flt
    assert nonempty > 150


def test_a_missing_property_is_kept_by_not_equal(store: Any) -> None:
    s, _ = store
    ids, _, metas = data()
    _, I = s.query(np.ones((1, D), np.float32), N, filter={"lang": {"$ne": "en"}})
    got = {i for i in I[0] if i is not None}
    assert got == {ids[i] for i, m in enumerate(metas) if m.get("lang") != "en"}
    assert any("lang" not in metas[ids.index(i)] for i in got)


def test_numbers_are_sent_as_the_propertys_type(store: Any) -> None:
    s, emu = store
    s.query(np.ones((1, D), np.float32), K, filter={"year": 2010})
    sent = emu.requests[-1].body.filters
    assert sent.WhichOneof("test_value") == "value_number" and sent.value_number == 2010.0


@pytest.mark.parametrize(
    ("flt", "op"),
    [
        ({"meta.lang": "en"}, "'$eq' on 'meta.lang'"),
        ({"nosuch": "en"}, "'$eq' on 'nosuch'"),
        ({"year": "2010"}, "'$eq' on 'year'"),
    ],
)
def test_what_weaviate_cannot_express_is_refused_by_operator(
    store: Any, flt: dict[str, Any], op: str
) -> None:
    s, emu = store
    before = len(emu.requests)
    with pytest.raises(FilterError, match=re.escape(op)) as err:
        s.query(np.ones((1, D), np.float32), K, filter=flt)
    assert err.value.exit_code == 2
    assert not [r for r in emu.requests[before:] if r.path == "Search"]  # refused before a search


def test_word_tokenized_text_and_unindexed_null_state_are_refused() -> None:
    """LangChain's collections: auto-schema text is tokenized 'word', and null state is not
    indexed, so $eq on text and $exists have no exact Weaviate spelling there."""
    texts = ["alpha beta", "alpha", "Alpha"]
    with WeaviateEmulator() as emu:
        vecs = np.eye(3, 4, dtype=np.float32)
        ids = builder.collection(emu, "Docs", [str(uuid.UUID(int=i + 1)) for i in range(3)],
                                 vecs, [{"topic": t} for t in texts])  # fmt: skip
        with open_store(builder.spec(emu, "Docs")) as s:
            for flt, op in (({"topic": "alpha"}, "'$eq' on 'topic'"),
                            ({"topic": {"$exists": True}}, "'$exists' on 'topic'")):  # fmt: skip
                with pytest.raises(FilterError, match=re.escape(op)):
                    s.query(vecs[:1], 3, filter=flt)
            args = ["compare-ann", "--store", builder.spec(emu, "Docs"), "--queries", "2"]
            r = CliRunner().invoke(cli, [*args, "--filter", '{"topic": "alpha"}'])
            assert r.exit_code == 2 and "'$eq' on 'topic'" in r.output, r.output
        # what the refusal guards against: Weaviate's own Equal on that property
        from weaviate.classes.query import Filter

        with builder.client(emu) as c:
            got = c.collections.use("Docs").query.fetch_objects(
                filters=Filter.by_property("topic").equal("alpha")
            )
        assert sorted(str(o.uuid) for o in got.objects) == sorted(ids)  # all three match
