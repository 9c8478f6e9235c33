"""One story per misalignment bug when a LlamaIndex indexer made the index, as a user
builds it: ``VectorStoreIndex`` with LlamaIndex's defaults over its ``SimpleVectorStore``
(nodes inserted 2,048 at a time, embedded in calls of 10), each bug living where users
meet it in a ``BaseEmbedding`` (tests/builders/misaligned_llamaindex.py). Same corpus and
same first lines as the LangChain replays (misalignment_story.py)."""

from __future__ import annotations

import pytest

from tests.builders import misaligned_llamaindex as li
from tests.builders.misaligned_index import BUGS, embedding_identity, manpage_corpus
from tests.commands.check_index.misalignment_story import check_replay, chunks_file

pytest.importorskip("llama_index.core")


@pytest.fixture(scope="module")
def built(tmp_path_factory):  # type: ignore[no-untyped-def]
    c = manpage_corpus()
    root = tmp_path_factory.mktemp("li-kinds")
    chunks = chunks_file(root, c.ids, c.texts)
    return c, embedding_identity(c.texts), chunks, {bug: li.build(root, c, bug) for bug in BUGS}


@pytest.mark.parametrize("mode", ["--all", "--sample"])
@pytest.mark.parametrize("bug", BUGS)
def test_one_story_per_bug_through_llamaindex(bug, mode, built, tmp_path) -> None:  # type: ignore[no-untyped-def]
    check_replay(bug, mode, built, tmp_path, li.EMBED_BATCH, li.INSERT_BATCH)
