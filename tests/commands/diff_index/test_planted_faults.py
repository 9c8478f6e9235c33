"""diff-index: each planted fault between an old and a new index is found; a rebuild passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.diff_index import DiffIndexSettings, DiffStatus, diff_index
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder, MemoryStore, positional_cache_bug

ROOT = Path(__file__).resolve().parents[3]


def kb(n: int = 120) -> tuple[list[str], list[str], np.ndarray]:
    ids = [f"note{i // 30}#sec-{i:03d}" for i in range(n)]
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(n)]
    return ids, texts, HashEmbedder(32).embed(texts)


def rows_by_id(r) -> dict[str | None, object]:
    return {c.id if c.id is not None else c.old_id: c for c in r.chunks}


def test_identical_rebuild_passes() -> None:
    ids, texts, vecs = kb()
    r = diff_index(
        DiffIndexSettings(), MemoryStore(ids, vecs, texts), MemoryStore(ids, vecs.copy(), texts)
    )
    assert r.ok, r.findings
    assert r.counts == {"unchanged": 120}
    assert r.chunks == [] and r.compared == 120
    assert r.min_cosine is not None and r.min_cosine > 0.9999


def test_renumbered_and_reordered_ids_still_pair() -> None:
    ids, texts, vecs = kb()
    perm = np.random.default_rng(3).permutation(len(ids))
    new_ids = [f"v42-{k}" for k in range(len(ids))]
    new = MemoryStore(new_ids, vecs[perm], [texts[p] for p in perm])
    r = diff_index(DiffIndexSettings(), MemoryStore(ids, vecs, texts), new)
    assert r.ok and r.counts == {"unchanged": 120}


def test_a_positional_shift_is_found_with_the_chunk_whose_vector_it_holds() -> None:
    ids, texts, vecs = kb()
    texts[33] = texts[4]
    vecs = HashEmbedder(32).embed(texts)
    old = MemoryStore(ids, vecs, texts)
    new = MemoryStore(ids, positional_cache_bug(texts, vecs), texts)
    r = diff_index(DiffIndexSettings(), old, new)
    assert not r.ok
    by = rows_by_id(r)
    assert by[ids[34]].status == DiffStatus.SHIFT
    # 34 got the vector computed at 33, whose text repeats 4's: it names that text's chunk
    assert by[ids[34]].holds_vector_of == ids[4]
    assert by[ids[35]].holds_vector_of == ids[34]
    assert by[ids[100]].holds_vector_of == ids[99]
    assert r.counts["shift"] == 120 - 34
    assert all(ids[i] not in by for i in range(33))
    (dup,) = [f for f in r.findings if f.kind == "duplicate_text"]
    assert dup.severity == "warning" and dup.chunk_ids == [ids[33]]


def test_a_model_change_is_model_change_not_shift() -> None:
    ids, texts, vecs = kb()
    other = HashEmbedder(32, model="other").embed(texts)
    r = diff_index(
        DiffIndexSettings(), MemoryStore(ids, vecs, texts), MemoryStore(ids, other, texts)
    )
    assert not r.ok and r.counts == {"model_change": 120}
    # a random rotation of the same vectors is another model too
    q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((32, 32)))
    rot = (vecs @ q).astype(np.float32)
    r = diff_index(DiffIndexSettings(), MemoryStore(ids, vecs, texts), MemoryStore(ids, rot, texts))
    assert r.counts == {"model_change": 120}
    (f,) = [f for f in r.findings if f.severity == "error"]
    assert f.kind == "model_change"


def test_each_other_status_is_planted_and_found() -> None:
    ids, texts, vecs = kb()
    n_ids, n_texts, n_vecs = list(ids), list(texts), [v.copy() for v in vecs]
    n_vecs[5] = HashEmbedder(32, model="edit").embed(["x"])[0]  # vector_changed
    n_vecs[6] = np.zeros(32, dtype=np.float32)  # zero_vector
    n_vecs[7] = np.full(32, np.nan, dtype=np.float32)  # non_finite
    n_vecs[8] = np.ones(16, dtype=np.float32)  # dimension_mismatch
    n_vecs[9] = None  # missing_vector
    n_texts[10] = "A brand new text for an old id."  # changed
    n_vecs[10] = HashEmbedder(32).embed([n_texts[10]])[0]
    del n_ids[11], n_texts[11], n_vecs[11]  # removed
    n_ids.append("note9#added")  # added
    n_texts.append("Section 999. Something new.")
    n_vecs.append(HashEmbedder(32).embed([n_texts[-1]])[0])
    r = diff_index(
        DiffIndexSettings(), MemoryStore(ids, vecs, texts), MemoryStore(n_ids, n_vecs, n_texts)
    )
    by = rows_by_id(r)
    assert by[ids[5]].status == "vector_changed" and by[ids[5]].cosine < 0.999
    assert by[ids[6]].status == "zero_vector"
    assert by[ids[7]].status == "non_finite"
    assert by[ids[8]].status == "dimension_mismatch"
    assert by[ids[9]].status == "missing_vector"
    assert by[ids[10]].status == "changed" and by[ids[10]].old_id == ids[10]
    assert by[ids[11]].status == "removed" and by[ids[11]].id is None
    assert by["note9#added"].status == "added" and by["note9#added"].old_id is None
    assert r.counts["unchanged"] == 120 - 7
    kinds = {f.kind: f.severity for f in r.findings}
    assert kinds == {
        "vector_changed": "error",
        "zero_vector": "error",
        "non_finite": "error",
        "dimension_mismatch": "error",
        "missing_vector": "error",
        "changed": "info",
        "removed": "info",
        "added": "info",
    }
    assert not r.ok


def test_chunks_files_give_texts_orphans_and_missing_chunks() -> None:
    ids, texts, vecs = kb()
    old = MemoryStore(ids, vecs)  # no stored texts
    new = MemoryStore(ids[:-1] + ["stray"], np.vstack([vecs[:-1], vecs[-1:]]))
    chunks = corpus_from_pairs(ids, texts)
    r = diff_index(DiffIndexSettings(chunks_old=chunks, chunks_new=chunks), old, new)
    by = rows_by_id(r)
    assert by["stray"].status == "orphan_vector"
    assert by[ids[-1]].status == "missing_vector"
    assert r.counts["unchanged"] == 119 and not r.ok


def test_a_store_without_texts_and_no_chunks_is_exit_2() -> None:
    from indexcheck.errors import DataFileError

    ids, _, vecs = kb()
    with pytest.raises(DataFileError, match="--chunks-old"):
        diff_index(DiffIndexSettings(), MemoryStore(ids, vecs), MemoryStore(ids, vecs))


def test_new_texts_are_sampled_and_checked_with_the_embedder() -> None:
    ids, texts, vecs = kb()
    n_ids = ids + [f"new{k}" for k in range(20)]
    n_texts = texts + [f"Added fact {k}." for k in range(20)]
    good = HashEmbedder(32).embed(n_texts[120:])
    good[3] = good[4]  # one added text holds another added text's vector
    new = MemoryStore(n_ids, np.vstack([vecs, good]), n_texts)
    r = diff_index(
        DiffIndexSettings(sample_new=None),
        MemoryStore(ids, vecs, texts),
        new,
        embedder=HashEmbedder(32),
    )
    assert r.new_texts is not None and r.new_texts["checked"] == 20
    by = rows_by_id(r)
    assert by["new3"].checked == "shift" and by["new3"].holds_vector_of == "new4"
    assert by["new5"].checked == "ok" and by["new5"].cosine > 0.999
    assert not r.ok
    r = diff_index(
        DiffIndexSettings(sample_new=5),
        MemoryStore(ids, vecs, texts),
        new,
        embedder=HashEmbedder(32),
    )
    assert r.new_texts is not None and r.new_texts["checked"] == 5


# --- the fixture KB, through the CLI -------------------------------------------------------


@pytest.fixture
def kb_folders(tmp_path: Path) -> dict[str, Path]:
    """The project's fixture chunks, embedded with the hash embedder, as FAISS folders: the
    old index, an identical rebuild with renumbered ids, and a rebuild with the positional bug."""
    from indexcheck.inputs.corpus import load_chunks

    corpus = load_chunks(ROOT / "fixtures" / "chunks.jsonl")
    texts = list(corpus.texts)
    texts[40] = texts[12]  # one repeated text triggers the positional bug
    vecs = HashEmbedder(64).embed(texts)
    write_faiss_folder(tmp_path / "old", corpus.ids, vecs, texts)
    renumbered = [f"v2:{k}" for k in range(len(texts))]
    write_faiss_folder(tmp_path / "same", renumbered, vecs, texts)
    write_faiss_folder(tmp_path / "buggy", corpus.ids, positional_cache_bug(texts, vecs), texts)
    return {"old": tmp_path / "old", "same": tmp_path / "same", "buggy": tmp_path / "buggy"}


def test_cli_rebuild_passes_and_shift_fails(kb_folders: dict[str, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "diff.json"
    args = ["diff-index", "--old", f"faiss:{kb_folders['old']}", "--json", str(out)]
    res = runner.invoke(cli, [*args, "--new", f"faiss:{kb_folders['same']}"])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["ok"] is True and set(data["counts"]) == {"unchanged", "duplicate_text"}
    assert data["manifest"]["command"] == "diff-index"
    res = runner.invoke(cli, [*args, "--new", f"faiss:{kb_folders['buggy']}"])
    assert res.exit_code == 1, res.output
    data = json.loads(out.read_text())
    rows = [c for c in data["chunks"] if c["status"] == "shift"]
    assert rows and all(
        set(c) >= {"id", "old_id", "status", "cosine", "holds_vector_of"} for c in rows
    )
    assert "FAIL" in res.output and "shift" in res.output


def test_cli_bad_input_is_exit_2(kb_folders: dict[str, Path]) -> None:
    runner = CliRunner()
    res = runner.invoke(
        cli, ["diff-index", "--old", f"faiss:{kb_folders['old']}", "--new", "nosuch:x"]
    )
    assert res.exit_code == 2
    res = runner.invoke(
        cli,
        [
            "diff-index",
            "--old",
            f"faiss:{kb_folders['old']}",
            "--new",
            f"faiss:{kb_folders['same']}",
            "--sample-new",
            "5",
        ],
    )
    assert res.exit_code == 2 and "--embedder" in res.output


def test_bad_numbers_are_refused_before_any_work() -> None:
    from indexcheck.errors import InputError

    ids, texts, vecs = kb(10)
    store = MemoryStore(ids, vecs, texts)
    with pytest.raises(InputError, match="min_cosine must be a finite number"):
        diff_index(DiffIndexSettings(min_cosine=float("nan")), store, store)
    with pytest.raises(InputError, match="memory-limit"):
        diff_index(DiffIndexSettings(memory_limit="1GB'; DROP TABLE x; --"), store, store)
    assert store.requests["iter"] == 0


def test_cli_prints_ids_as_data_not_markup(tmp_path: Path) -> None:
    ids, texts, vecs = kb(20)
    write_faiss_folder(tmp_path / "old", ids, vecs, texts)
    new_ids = list(ids)
    new_ids[3] = "[bold red]x[/bold red]"
    texts2 = list(texts)
    texts2[3] = "changed text"
    write_faiss_folder(tmp_path / "new", new_ids, HashEmbedder(32).embed(texts2), texts2)
    res = CliRunner().invoke(
        cli,
        ["diff-index", "--old", f"faiss:{tmp_path / 'old'}", "--new", f"faiss:{tmp_path / 'new'}"],
    )
    assert res.exit_code == 0, res.output
    assert "[bold red]x[/bold red]" in res.output


# --- memory bound -----------------------------------------------------------------------------

_RSS_CHILD = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    sys.path.insert(0, {root!r})
    from indexcheck.commands.diff_index import DiffIndexSettings, diff_index
    from indexcheck.stores.base import StoreInfo, VectorBatch

    class Synthetic:
        spec = "synthetic"
        has_exact = False
        def __init__(self, n, d, salt):
            self.n, self.d, self.salt = n, d, salt
        def info(self):
            return StoreInfo("synthetic", self.n, self.d, "cosine", "cos", True, False)
        def iter_vectors(self, batch=1000):
            for s in range(0, self.n, batch):
                k = np.arange(s, min(self.n, s + batch))
                v = np.random.default_rng(s).standard_normal((len(k), self.d), dtype=np.float32)
                yield VectorBatch([f"c{{i}}" for i in k], v, np.full(len(k), self.d, np.int32),
                                  [f"text {{i}}" for i in k])

    n = int(sys.argv[1])
    r = diff_index(DiffIndexSettings(), Synthetic(n, 128, 0), Synthetic(n, 128, 0))
    assert r.ok and r.counts == {{"unchanged": n}}, r.counts
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


def _peak_rss_kb(n: int, tmp_path: Path) -> int:
    script = tmp_path / "child.py"
    script.write_text(_RSS_CHILD.format(root=str(ROOT)))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, str(script), str(n)], capture_output=True, text=True, env=env, check=True
    )
    return int(out.stdout.strip().splitlines()[-1])


def test_peak_memory_does_not_grow_with_the_vectors(tmp_path: Path) -> None:
    small, large = _peak_rss_kb(20_000, tmp_path), _peak_rss_kb(200_000, tmp_path)
    # 200k x 128 float32 is 100 MB per side; the spill keeps the resident set near flat
    assert large < small * 1.5, (small, large)
    assert large - small < 60_000, (small, large)


# --- sections: one render path for the terminal, Markdown and HTML ---------------------------


def _faulty_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A positional shift after a repeated text, plus an added chunk whose id and text are
    markup."""
    ids = [f"c{i}" for i in range(30)]
    texts = [f"Fact number {i} about [b]things[/b]." for i in range(30)]
    texts[10] = texts[3]
    vecs = HashEmbedder(32).embed(texts)
    write_faiss_folder(tmp_path / "old", ids, vecs, texts)
    added = ["<script>x</script> | `a`"]
    new_vecs = np.vstack([positional_cache_bug(texts, vecs), HashEmbedder(32).embed(added)])
    write_faiss_folder(tmp_path / "new", [*ids, "[red]n1[/red]<b>"], new_vecs, [*texts, *added])
    return tmp_path / "old", tmp_path / "new"


def test_sections_give_the_report_and_the_terminal_summary(tmp_path: Path) -> None:
    from indexcheck.api import sections
    from indexcheck.output.registry import kind_of, sections_of

    old, new = _faulty_pair(tmp_path)
    r = diff_index(DiffIndexSettings(), _open(old), _open(new))
    secs = sections(r)
    report = [s for s in secs if s.report]
    terminal = [s for s in secs if s.terminal]
    assert report[0].title.startswith("diff-index") and report[0].verdict == "FAIL"
    assert report[-1].title == "diff-index: manifest"
    assert len(terminal) == 1 and terminal[0].verdict == "FAIL"
    last = terminal[0].blocks[-1]
    # the failing count first: "11/30" read as 11 failures when it meant 11 kept their vector
    assert last.badge == "FAIL" and "19 of 30 texts in both indexes moved (11 kept)" in last.text
    # a --json file (no manifest command) is still recognised as diff-index
    payload = r.to_dict()
    payload.pop("manifest")
    assert kind_of(payload) == "diff-index"
    assert sections_of(payload)[0].title == report[0].title


def test_cli_report_is_written_through_the_shared_path_with_data_escaped(
    tmp_path: Path,
) -> None:
    old, new = _faulty_pair(tmp_path)
    out = tmp_path / "diff.json"
    res = CliRunner().invoke(
        cli,
        ["diff-index", "--old", f"faiss:{old}", "--new", f"faiss:{new}"]
        + ["--report", str(tmp_path / "rep"), "--json", str(out)],
    )
    assert res.exit_code == 1, res.output
    md = (tmp_path / "rep" / "diff-index.md").read_text()
    pages = [str(tmp_path / "rep" / f"diff-index.{ext}") for ext in ("html", "md")]
    assert json.loads(out.read_text())["report"] == pages
    assert "## diff-index: the new index against the old one — FAIL" in md
    assert "| c11 | c11 | shift |" in md and "diff-index: manifest" in md
    # ids are data, never markup
    assert "n1[/red]<b>" not in md and "| \\[red\\]n1\\[/red\\]\\<b\\> |" in md
    # the terminal keeps its content: faults table, findings, one verdict line
    assert "chunks that are not unchanged" in res.output
    assert "[red]n1[/red]<b>" in res.output
    assert "error shift: 19 chunk(s)" in res.output
    assert "warning duplicate_text" in res.output
    verdicts = [line for line in res.output.splitlines() if line.startswith("FAIL ")]
    assert len(verdicts) == 1 and "moved (11 kept) under cosine 0.999" in verdicts[0]
    assert "1 new texts not re-embedded (add --embedder)" in res.output.replace("\n", " ")


def test_cli_engine_ray_needs_an_embedder_and_the_ray_extra(
    kb_folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["diff-index", "--old", f"faiss:{kb_folders['old']}", "--new"]
    args += [f"faiss:{kb_folders['same']}", "--engine", "ray"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "add --embedder" in res.output
    monkeypatch.setitem(sys.modules, "ray", None)
    res = CliRunner().invoke(cli, [*args, "--embedder", "py:indexcheck.testing:HASH32"])
    assert res.exit_code == 2 and "pip install 'indexcheck[ray]'" in res.output


def _open(path: Path):  # type: ignore[no-untyped-def]
    from indexcheck.stores import open_store

    return open_store(f"faiss:{path}")


# --- the new-text checks on Ray -----------------------------------------------------------------


def _with_new_texts(n_new: int = 600) -> tuple[MemoryStore, MemoryStore]:
    """An old index and a new one with ``n_new`` added texts: one holds another's vector,
    three are stale, the rest are right."""
    ids, texts, vecs = kb()
    added = [f"Added fact {k} about topic {k % 7}." for k in range(n_new)]
    good = HashEmbedder(32).embed(added)
    good[3] = good[4]
    for k in (10, 250, 599):
        good[k] = HashEmbedder(32).embed([added[k] + " (edited)"])[0]
    new = MemoryStore(
        ids + [f"new{k}" for k in range(n_new)], np.vstack([vecs, good]), texts + added
    )
    return MemoryStore(ids, vecs, texts), new


def test_new_text_checks_on_ray_equal_the_local_engine(ray_cluster, tmp_path: Path) -> None:
    from indexcheck.commands.diff_index import new_texts as diff_new_texts
    from indexcheck.embedders.cache import CachedEmbedder, EmbeddingCache
    from indexcheck.engines import LocalEngine, RayEngine

    old, new = _with_new_texts()
    local = diff_index(
        DiffIndexSettings(sample_new=None),
        old,
        new,
        embedder=HashEmbedder(32),
        engine=LocalEngine(),
    )
    engine = RayEngine()
    cached = CachedEmbedder(HashEmbedder(32), EmbeddingCache(tmp_path / "c.sqlite"))
    sent: list[int] = []
    real = engine.embed_blocks

    def counting(embedder, blocks):  # type: ignore[no-untyped-def]
        for vecs in real(embedder, blocks):
            sent.append(len(vecs))
            yield vecs

    engine.embed_blocks = counting  # type: ignore[method-assign]
    remote = diff_index(
        DiffIndexSettings(sample_new=None), old, new, embedder=cached, engine=engine
    )
    assert len(sent) == -(-600 // diff_new_texts.BLOCK) and sum(sent) == 600  # blocks on Ray
    key = [(c.id, c.old_id, c.status, c.checked, c.holds_vector_of) for c in local.chunks]
    assert [(c.id, c.old_id, c.status, c.checked, c.holds_vector_of) for c in remote.chunks] == key
    a = np.asarray([np.nan if c.cosine is None else c.cosine for c in remote.chunks])
    b = np.asarray([np.nan if c.cosine is None else c.cosine for c in local.chunks])
    assert np.allclose(a, b, atol=1e-6, equal_nan=True)
    assert remote.counts == local.counts and remote.new_texts == local.new_texts
    assert [f.kind for f in remote.findings] == [f.kind for f in local.findings]
    assert not remote.ok and {"shift", "stale_vector"} <= {f.kind for f in remote.findings}
    by = rows_by_id(remote)
    assert by["new3"].checked == "shift" and by["new3"].holds_vector_of == "new4"
    assert by["new10"].checked == "stale_vector" and by["new5"].checked == "ok"
    # the driver kept the cache: nothing is left to send to the cluster
    assert cached.split([f"Added fact {k} about topic {k % 7}." for k in range(600)])[1] == []
