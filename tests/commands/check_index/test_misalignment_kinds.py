"""One story per misalignment bug, whatever the bug (issue 36).

Each bug users meet is replayed by a LangChain indexer over ``IndexcheckEmbeddings``
(tests/builders/misaligned_index.py) on a man-page corpus of 2,000+ chunks with boilerplate
repeats, repeats of repeats and long sections whose first 256 words are equal (one
embedding under a model that reads 256 tokens). check-index must tell each as ONE root
finding whose first sentence names the kind, where it starts and the fix
(tests/commands/check_index/misalignment_story.py says what exactly).
"""

from __future__ import annotations

import pytest

from tests.builders.misaligned_index import (
    BATCH,
    BUGS,
    CACHE_HITS_FIRST,
    CACHE_WARM,
    PERMUTED,
    build,
    embedding_identity,
    manpage_corpus,
)
from tests.commands.check_index.misalignment_story import (
    assert_one_story,
    check_replay,
    chunks_file,
    headline,
    run_check,
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):  # type: ignore[no-untyped-def]
    c = manpage_corpus()
    assert len(c.ids) >= 2000
    assert sum(len(t.split()) > 256 for t in c.texts) >= 50  # long sections, one embedding
    root = tmp_path_factory.mktemp("kinds")
    chunks = chunks_file(root, c.ids, c.texts)
    specs = {bug: build(root, c, bug, batch=BATCH.get(bug, 64)) for bug in BUGS}
    return c, embedding_identity(c.texts), chunks, specs


@pytest.mark.parametrize("mode", ["--all", "--sample"])
@pytest.mark.parametrize("bug", BUGS)
def test_one_story_per_bug(bug, mode, built, tmp_path) -> None:  # type: ignore[no-untyped-def]
    check_replay(bug, mode, built, tmp_path, BATCH.get(bug, 64))


def test_a_warm_cache_returning_its_hits_first_is_named_from_every_chunk(built, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A cache an earlier run filled returns hits that are no repeats of this build: the
    kind is read from the order of the holders inside each batch, which --all sees whole;
    a sample cannot tell it from a permutation and names the cache among the causes."""
    c, same, chunks, _ = built
    spec, source = build(tmp_path, c, CACHE_WARM, batch=BATCH[CACHE_WARM])
    output, data = run_check(spec, chunks, tmp_path, "--all")
    assert_one_story(CACHE_HITS_FIRST, "--all", c.ids, same, source, output, data,
                     BATCH[CACHE_WARM], exact=False)  # fmt: skip
    _, data = run_check(spec, chunks, tmp_path, "--sample", "300")
    (f,) = [f for f in data["findings"] if f["kind"] == "shift"]
    assert f["details"]["model"] == PERMUTED
    assert "a cache returned its hits before its misses" in headline(f["message"])
