"""Test-only: what check-index must print for one replayed misalignment bug, whatever the
indexer and the store (shared by the LangChain, LlamaIndex and pgvector replays).

ONE root finding whose first sentence names the kind, where it starts and the fix; no
row names a holder the bug cannot have produced (among equal holders the kind's own
prediction wins, a positional cache never hands out a later vector); the counts agree
with the oracle; the terminal stays short.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.check_index.shift.kinds import batch_starts
from tests.builders.misaligned_index import (
    BATCH_MISPLACED,
    CACHE_HITS_FIRST,
    DROPPED,
    DUPLICATED,
    PERMUTED,
    SKIP_REPEAT,
)

EMBEDDER = "py:tests.builders.misaligned_index:WINDOW32"
TERMINAL_LINES = 60


def named(bug: str, batch: int) -> str:
    """What the first sentence of the root finding must say for ``bug``."""
    return {
        SKIP_REPEAT: "positional cache that skips repeats",
        DROPPED: "dropped item",
        DUPLICATED: "duplicated item",
        PERMUTED: f"permuted inside batches of {batch}",
        BATCH_MISPLACED: "misplaced batch",
        CACHE_HITS_FIRST: f"cache returned its hits before its misses inside each batch of {batch}",
    }[bug]


def chunks_file(root: Path, ids: list[str], texts: list[str]) -> Path:
    chunks = root / "chunks.jsonl"
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n"
                              for i, t in zip(ids, texts, strict=True)))  # fmt: skip
    return chunks


def run_check(spec: str, chunks: Path | None, tmp_path: Path, *extra: str) -> tuple[str, Any]:
    """(stdout, the JSON) of check-index, which must exit 1; ``chunks`` None: the store's."""
    out = tmp_path / "r.json"
    pickle = ["--trust-pickle"] if spec.startswith("faiss:") else []
    given = ["--chunks", str(chunks)] if chunks is not None else []
    r = CliRunner().invoke(cli, ["check-index", "--store", spec, *given, "--embedder",
                                 EMBEDDER, "--json", str(out), *pickle, *extra])  # fmt: skip
    assert r.exit_code == 1, r.output
    return r.stdout, json.loads(out.read_text())


def headline(message: str) -> str:
    return re.split(r"(?<=[a-z0-9)'])\. ", message, maxsplit=1)[0]


def assert_one_story(
    bug: str,
    mode: str,
    ids: list[str],
    same: np.ndarray,
    source: np.ndarray,
    output: str,
    data: Any,
    batch: int,
    outer: int | None = None,
    exact: bool = True,
) -> None:
    """``source`` int64 (n,): the oracle (whose fresh embedding each chunk holds, -1
    none); ``same`` the embedding identity; ``batch``/``outer`` the bug's batches;
    ``exact``: the kind predicts each holder (else any copy inside the batch will do)."""
    n = len(ids)
    pos = np.arange(n)
    has = source >= 0
    shifted = np.flatnonzero(has & (same[np.maximum(source, 0)] != same[pos]))
    start = int(shifted[0])
    shifts = [f for f in data["findings"] if f["kind"] == "shift"]
    assert len(shifts) == 1, [f["message"][:150] for f in shifts]
    (root,) = shifts
    d = root["details"]
    head = headline(root["message"])
    assert d["model"] == bug, head
    assert named(bug, batch) in head, head
    assert d["start_position"] == start, head
    assert f"position {start}" in head and "re-embed" in head, head
    if bug == CACHE_HITS_FIRST:  # the fix says what to change in the cache
        assert "by the texts' positions" in head, head
    # the first lines printed are the root finding's
    lines = output.splitlines()
    assert lines[0].startswith("error shift: ")
    assert named(bug, batch) in " ".join(" ".join(lines[:3]).split())
    assert len(lines) <= TERMINAL_LINES, len(lines)
    # every shifted row names a holder the bug produced: its own source when that reads
    # the same (among equal holders the model's prediction wins), never a later vector
    # for a positional cache
    rows = [x for x in data["chunks"] if x["status"] == "shift"]
    assert rows
    lo = batch_starts(n, batch, outer)
    for x in rows:
        p = x["position"]
        assert has[p] and same[source[p]] != same[p], x
        held = p + x["offset"]
        if bug == PERMUTED or not exact:  # which copy of a text in the batch is unknowable
            assert same[held] == same[source[p]] and lo[held] == lo[p], x
        else:
            assert held == source[p], (x, int(source[p]))
    if bug == SKIP_REPEAT:
        assert all(x["offset"] < 0 for x in rows)
        assert "positions after them" not in output.replace("\n", " ")
    if mode == "--all":
        assert d["chunks_affected"] == d["chunks_predicted"] == len(shifted)
        assert {ids[p] for p in shifted} == set(root["chunk_ids"])


def check_replay(
    bug: str,
    mode: str,
    built: tuple[Any, np.ndarray, Path, dict[str, tuple[str, np.ndarray]]],
    tmp_path: Path,
    batch: int,
    outer: int | None = None,
) -> None:
    """Run check-index (``mode`` "--all" or "--sample": 300 chunks) on ``bug``'s replay in
    ``built`` (corpus, identity, chunks file, bug -> (spec, oracle)) and assert its story."""
    corpus, same, chunks, specs = built
    spec, source = specs[bug]
    extra = ["--all"] if mode == "--all" else ["--sample", "300"]
    output, data = run_check(spec, chunks, tmp_path, *extra)
    assert_one_story(bug, mode, corpus.ids, same, source, output, data, batch, outer)
