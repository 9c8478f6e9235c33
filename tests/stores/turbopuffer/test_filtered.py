"""turbopuffer's filtered search through the emulator, which evaluates turbopuffer's
documented filter language itself (tests/emulators/turbopuffer_filter.py): 200 seeded random
portable filters return exactly numpy's rows and top-k, ANN under a filter returns k rows
whenever k rows match, and what turbopuffer cannot express is refused by operator before any
query is sent."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import FilterError
from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter, translate
from indexcheck.stores import open_store
from tests.emulators.turbopuffer_emulator import TurbopufferEmulator
from tests.emulators.turbopuffer_filter import matches

pytest.importorskip("turbopuffer")

from tests.builders import turbopuffer as builder  # noqa: E402  (needs the SDK)
from tests.stores.seeded_filters import D, K, N, random_filter, seeded_rows  # noqa: E402

KEY = "tpuf_filter_key"


@pytest.fixture(scope="module")
def store() -> Iterator[Any]:
    ids, vecs, metas = seeded_rows()
    mp = pytest.MonkeyPatch()
    mp.setenv("TURBOPUFFER_API_KEY", KEY)
    with TurbopufferEmulator(api_key=KEY, exact=True) as emu:
        builder.upsert(emu, "docs", ids, vecs, metas)
        with open_store(builder.spec(emu, "docs")) as s:
            yield s, emu
    mp.undo()


def test_200_seeded_filters_return_numpys_rows_and_top_k(store: Any) -> None:
    s, emu = store
    ids, vecs, metas = seeded_rows()
    types = emu.namespaces["docs"].types
    rng = random.Random(5)
    queries = np.random.default_rng(9).standard_normal((10, D)).astype(np.float32)
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    nonempty = 0
    for n in range(200):
        flt = random_filter(rng)
        mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["turbopuffer"])
        # the emulator's reading of turbopuffer's language agrees with indexcheck's truth
        native = translate(parse_filter(flt), "turbopuffer", types=types)
        assert mask.tolist() == [matches(native, m, types) for m in metas], flt
        q = queries[n % 10]
        dist = 1 - unit @ (q / np.linalg.norm(q))
        rows = [i for i in np.argsort(dist, kind="stable") if mask[i]]
        D_, I = s.query(q[None], K, filter=flt)
        assert [i for i in I[0] if i is not None] == [ids[i] for i in rows[:K]], flt
        np.testing.assert_allclose(D_[0, : len(rows[:K])], dist[rows[:K]], rtol=1e-5, atol=1e-5)
        if n % 20 == 0:  # every matching row, not only the top k
            _, every = s.query(q[None], N, filter=flt)
            assert {i for i in every[0] if i is not None} == {ids[i] for i in rows}, flt
        nonempty += bool(rows)
    assert nonempty > 150
    sent = [r.body["filters"] for r in emu.requests if r.path.endswith("/query")
            and (r.body or {}).get("filters") and r.body["rank_by"][0] == "vector"]  # fmt: skip
    assert len(sent) == 210


def test_a_missing_attribute_matches_not_eq_and_no_comparison(store: Any) -> None:
    s, _ = store
    ids, _, metas = seeded_rows()
    q = np.ones((1, D), np.float32)
    _, I = s.query(q, N, filter={"lang": {"$ne": "en"}})
    assert {i for i in I[0] if i is not None} == {
        ids[i] for i, m in enumerate(metas) if m.get("lang") != "en"
    }  # "de" rows and the rows without lang
    _, I = s.query(q, N, filter={"lang": {"$in": ["en", "de"]}})
    assert {i for i in I[0] if i is not None} == {
        ids[i] for i, m in enumerate(metas) if "lang" in m
    }


def test_ann_under_a_filter_returns_k_rows_whenever_k_match() -> None:
    """turbopuffer's filtering is recall-aware (one stage): the short-result rate is 0."""
    ids, vecs, metas = seeded_rows()
    with TurbopufferEmulator(api_key=KEY, m=4, ef=8) as emu:
        builder.upsert(emu, "docs", ids, vecs, metas)
        mp = pytest.MonkeyPatch()
        mp.setenv("TURBOPUFFER_API_KEY", KEY)
        rng = random.Random(8)
        short = 0
        with open_store(builder.spec(emu, "docs")) as s:
            for n in range(40):
                flt = random_filter(rng)
                want = int(evaluate(parse_filter(flt), metas,
                                    missing=ENGINE_MISSING["turbopuffer"]).sum())  # fmt: skip
                _, I = s.query(vecs[n : n + 1] + 0.1, 10, filter=flt)
                short += sum(i is not None for i in I[0]) < min(10, want)
        mp.undo()
    assert short == 0


@pytest.mark.parametrize(
    ("flt", "op"),
    [
        ({"meta.lang": "en"}, "'$eq' on 'meta.lang'"),
        ({"id": "r001"}, "'$eq' on 'id'"),
        ({"topic": 3}, "'$eq' on 'topic'"),
        ({"year": {"$in": ["2001"]}}, "'$in' on 'year'"),
    ],
)
def test_what_turbopuffer_cannot_express_is_refused_by_operator(
    store: Any, flt: dict[str, Any], op: str
) -> None:
    s, emu = store
    before = len([r for r in emu.requests if r.path.endswith("/query")])
    with pytest.raises(FilterError, match=re.escape(op)) as err:
        s.query(np.ones((1, D), np.float32), K, filter=flt)
    assert err.value.exit_code == 2
    assert len([r for r in emu.requests if r.path.endswith("/query")]) == before


def test_the_cli_exits_2_naming_the_operator(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _, emu = store
    monkeypatch.setenv("TURBOPUFFER_API_KEY", KEY)
    flt = json.dumps({"topic": {"$ne": 3}})  # every row matches; turbopuffer cannot say it
    args = ["compare-ann", "--store", builder.spec(emu, "docs"), "--queries", "4", "--filter", flt]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and "'$ne' on 'topic'" in r.output, r.output
