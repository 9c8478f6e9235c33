"""The emulator itself, through the official SDK: the filter operators indexcheck does not
send (Glob, IGlob, NotGlob, Not), null semantics, its limits and its error replies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("turbopuffer")

import turbopuffer  # noqa: E402

from tests.builders import turbopuffer as builder  # noqa: E402
from tests.emulators.turbopuffer_emulator import TurbopufferEmulator  # noqa: E402

KEY = "tpuf_emulator_key"
NAMES = ["src/app.tsx", "src/lib.js", "vendor/x.js", "README.md", "Docs/Guide.MD"]


@pytest.fixture(scope="module")
def ns() -> Iterator[Any]:
    with TurbopufferEmulator(api_key=KEY, exact=True) as emu:
        metas = [{"path": p} | ({"owner": "ann"} if i % 2 else {}) for i, p in enumerate(NAMES)]
        builder.upsert(emu, "files", [f"f{i}" for i in range(5)], np.eye(5, 4, dtype=np.float32),
                       metas)  # fmt: skip
        client = turbopuffer.Turbopuffer(api_key=KEY, base_url=emu.base_url, max_retries=0)
        yield client.namespace("files")
        client.close()


def ids(ns: Any, flt: Any) -> set[str]:
    return {str(r.id) for r in ns.query(rank_by=("id", "asc"), top_k=100, filters=flt).rows}


@pytest.mark.parametrize(
    ("flt", "want"),
    [
        (("path", "Glob", "src/**"), {"f0", "f1"}),
        (("path", "Glob", "**.js"), {"f1", "f2"}),
        (("path", "NotGlob", "**.js"), {"f0", "f3", "f4"}),
        (("path", "IGlob", "*.md"), {"f3", "f4"}),
        (("path", "Glob", "*.md"), {"f3"}),  # case-sensitive: Guide.MD is not
        (("owner", "Eq", None), {"f0", "f2", "f4"}),
        (("owner", "NotEq", None), {"f1", "f3"}),
        (("owner", "NotEq", "ann"), {"f0", "f2", "f4"}),  # the inverse of Eq: missing matches
        (("Not", ("owner", "In", ["ann"])), {"f0", "f2", "f4"}),
        (("Or", [("id", "Eq", "f0"), ("path", "Gte", "src/lib.js")]), {"f0", "f1", "f2"}),
    ],
)
def test_filter_semantics(ns: Any, flt: Any, want: set[str]) -> None:
    assert ids(ns, flt) == want


def test_limits_and_error_replies(ns: Any) -> None:
    with pytest.raises(turbopuffer.BadRequestError, match="type string"):
        ids(ns, ("path", "Eq", 3))  # values must have the attribute's type
    with pytest.raises(turbopuffer.BadRequestError, match="top_k"):
        ns.query(rank_by=("id", "asc"), top_k=10_001)
    with pytest.raises(turbopuffer.BadRequestError, match="dimension"):
        ns.query(rank_by=("vector", "ANN", [1.0, 0.0]), top_k=1)
    row = ns.query(rank_by=("vector", "kNN", [0.0, 1.0, 0.0, 0.0]), top_k=1).rows[0]
    assert str(row.id) == "f1" and getattr(row, "$dist") == pytest.approx(0.0)
