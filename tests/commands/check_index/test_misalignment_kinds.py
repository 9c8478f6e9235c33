"""One story per misalignment bug, whatever the bug (issue 36).

Each bug users meet is replayed by a LangChain indexer over ``IndexcheckEmbeddings``
(tests/builders/misaligned_index.py) on a man-page corpus of 2,000+ chunks with boilerplate
repeats, repeats of repeats and long sections whose first 256 words are equal (one
embedding under a model that reads 256 tokens). check-index must tell each as ONE root
finding whose first sentence names the kind, where it starts and the fix; no row or
message names a holder the bug cannot have produced; the counts agree; the terminal stays
short.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.builders.misaligned_index import (
    BATCH,
    BATCH_MISPLACED,
    BUGS,
    CACHE_HITS_FIRST,
    DROPPED,
    DUPLICATED,
    PERMUTED,
    SKIP_REPEAT,
    build,
    embedding_identity,
    manpage_corpus,
)

EMBEDDER = "py:tests.builders.misaligned_index:WINDOW32"
#: what the first sentence of the root finding must say, per kind
NAMED = {
    SKIP_REPEAT: "positional cache that skips repeats",
    DROPPED: "dropped item",
    DUPLICATED: "duplicated item",
    PERMUTED: "permuted inside batches of 16",
    BATCH_MISPLACED: "misplaced batch",
    CACHE_HITS_FIRST: "cache returned its hits before its misses inside each batch of 32",
}
TERMINAL_LINES = 60


@pytest.fixture(scope="module")
def corpus():  # type: ignore[no-untyped-def]
    c = manpage_corpus()
    assert len(c.ids) >= 2000
    same = embedding_identity(c.texts)
    assert sum(len(t.split()) > 256 for t in c.texts) >= 50  # long sections, one embedding
    return c, same


@pytest.fixture(scope="module")
def built(corpus, tmp_path_factory):  # type: ignore[no-untyped-def]
    c, _ = corpus
    root = tmp_path_factory.mktemp("kinds")
    chunks = root / "chunks.jsonl"
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n"
                              for i, t in zip(c.ids, c.texts, strict=True)))  # fmt: skip
    out = {}
    for bug in BUGS:
        spec, source = build(root, c, bug, batch=BATCH.get(bug, 64))
        out[bug] = (spec, source)
    return chunks, out


def _run(spec: str, chunks, tmp_path, *extra: str):  # type: ignore[no-untyped-def]
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["check-index", "--store", spec, "--chunks", str(chunks),
                                 "--embedder", EMBEDDER, "--trust-pickle", "--json", str(out),
                                 *extra])  # fmt: skip
    assert r.exit_code == 1, r.output
    return r.output, json.loads(out.read_text())


def _headline(message: str) -> str:
    return re.split(r"(?<=[a-z0-9)'])\. ", message, maxsplit=1)[0]


@pytest.mark.parametrize("mode", ["--all", "--sample"])
@pytest.mark.parametrize("bug", BUGS)
def test_one_story_per_bug(bug, mode, corpus, built, tmp_path) -> None:  # type: ignore[no-untyped-def]
    c, same = corpus
    chunks, specs = built
    spec, source = specs[bug]
    n = len(c.ids)
    pos = np.arange(n)
    has = source >= 0
    shifted = np.flatnonzero(has & (same[np.maximum(source, 0)] != same[pos]))
    start = int(shifted[0])
    extra = ["--all"] if mode == "--all" else ["--sample", "300"]
    output, data = _run(spec, chunks, tmp_path, *extra)
    shifts = [f for f in data["findings"] if f["kind"] == "shift"]
    assert len(shifts) == 1, [f["message"][:150] for f in shifts]
    (root,) = shifts
    d = root["details"]
    head = _headline(root["message"])
    assert d["model"] == bug, head
    assert NAMED[bug] in head, head
    assert d["start_position"] == start, head
    assert f"position {start}" in head and "re-embed" in head, head
    if bug == CACHE_HITS_FIRST:  # the fix says what to change in the cache
        assert "by the texts' positions" in head, head
    # the first lines printed are the root finding's
    lines = output.splitlines()
    assert lines[0].startswith("error shift: ")
    assert NAMED[bug] in " ".join(" ".join(lines[:3]).split())
    assert len(lines) <= TERMINAL_LINES, len(lines)
    # every shifted row names a holder the bug produced: its own source when that reads
    # the same (among equal holders the model's prediction wins), never a later vector
    # for a positional cache
    rows = [x for x in data["chunks"] if x["status"] == "shift"]
    assert rows
    for x in rows:
        p = x["position"]
        assert has[p] and same[source[p]] != same[p], x
        held = p + x["offset"]
        if bug == PERMUTED:  # which copy of a text in the batch is not knowable
            assert same[held] == same[source[p]] and held // 16 == p // 16, x
        else:
            assert held == source[p], (x, int(source[p]))
    if bug == SKIP_REPEAT:
        assert all(x["offset"] < 0 for x in rows)
        assert "positions after them" not in output.replace("\n", " ")
    if mode == "--all":
        assert d["chunks_affected"] == d["chunks_predicted"] == len(shifted)
        assert {c.ids[p] for p in shifted} == set(root["chunk_ids"])
