"""The framework-built indexes opened by their specs, through the CLI and the library.

Each layout's ``Built.spec`` opens with the store that the second round wired: LangChain
FAISS under any ``index_name``, ``llamaindex:`` persist folders, LangChain's shared
``langchain_pg_embedding`` table by ``&collection=``, the newer ``PGVectorStore`` table by
its own column names, and LlamaIndex's postgres, Chroma, Elasticsearch and OpenSearch rows
with the text LlamaIndex embedded. For each: a correct build passes, a positional-cache
shift is one finding per stretch (or per chain where the rows have no build order) naming
the right repeat, a foreign model is ``model_mismatch``.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.embedders import open_embedder
from indexcheck.stores import StoreOptions, open_store
from tests.builders.framework_corpus import framework_corpus

EMB = ["--embedder", "minilm"]
LAYOUTS = [
    ("langchain", "faiss"),
    ("langchain", "chroma"),
    ("langchain", "pgvector"),
    ("langchain", "pgvectorstore"),
    ("llamaindex", "simple"),
    ("llamaindex", "faiss"),
    ("llamaindex", "chroma"),
    ("llamaindex", "pgvector"),
    ("langchain", "elasticsearch"),
    ("langchain", "opensearch"),
    ("llamaindex", "elasticsearch"),
    ("llamaindex", "opensearch"),
]
#: layouts whose rows come back in build order (pgvector only with &order=)
ORDERED = {("langchain", "faiss"), ("llamaindex", "simple"), ("llamaindex", "faiss"),
           ("llamaindex", "pgvector")}  # fmt: skip


def cli_check(spec: str, *extra: str) -> tuple[int, dict]:
    r = CliRunner().invoke(
        cli, ["check-index", "--store", spec, "--trust-pickle", *EMB, "--json", "-", *extra]
    )
    assert r.exit_code in (0, 1), (r.exit_code, r.stderr)
    return r.exit_code, json.loads(r.stdout)


def library_check(spec: str):
    store = open_store(spec, StoreOptions(trust_pickle=True))
    try:
        return check_index(CheckIndexSettings(sample=None), store, open_embedder("minilm"))
    finally:
        store.close()


@pytest.mark.parametrize(("framework", "layout"), LAYOUTS)
def test_correct_index_passes(framework_index, framework: str, layout: str) -> None:
    built = framework_index(framework, layout, "correct")
    result = library_check(built.spec)
    assert result.ok, [f.message for f in result.findings]
    assert result.checked == len(framework_corpus().ids)


def corpus_id(built, store_id: str) -> str:
    """The chunk id of a stored id (PGVectorStore keys rows by uuid5 of the chunk id)."""
    chunk_of = {u: c for c, u in built.details.get("uuid_of", {}).items()}
    return chunk_of.get(store_id, store_id)


@pytest.mark.parametrize(("framework", "layout"), LAYOUTS)
def test_foreign_model_is_model_mismatch(framework_index, framework: str, layout: str) -> None:
    built = framework_index(framework, layout, "foreign")
    result = library_check(built.spec)
    kinds = {f.kind for f in result.findings if f.severity == "error"}
    assert kinds == {"model_mismatch"}, [f.message for f in result.findings]


@pytest.mark.parametrize(("framework", "layout"), LAYOUTS)
def test_positional_cache_shift_names_each_repeat(
    framework_index, framework: str, layout: str
) -> None:
    c = framework_corpus()
    repeats = sorted(c.repeat_of)  # corpus positions 14 and 31: +1 from the first, +2 after
    built = framework_index(framework, layout, "shifted")
    result = library_check(built.spec)
    shifts = [f for f in result.findings if f.kind == "shift"]
    assert shifts and all(f.severity == "error" for f in shifts)
    if (framework, layout) in ORDERED:
        # issue 17: one root finding (the de-duplicated vectors handed out by position);
        # its stretches, in build order, are each blamed on their own repeat
        (root,) = shifts
        assert root.details["model"] == "dedup_by_position"
        assert root.details["preceding_duplicate"]["id"] == c.ids[repeats[0]]
        stretches = root.details["stretches"]
        assert [s["offset"] for s in stretches] == [1, 2]
        assert [s["trigger_id"] for s in stretches] == [c.ids[r] for r in repeats]
        assert root.details["order"] in ("store order", "&order=id")
    else:
        # no build order: one finding per holds_vector_of chain, breaking at the repeats
        assert all(f.details["order"] == "holds_vector_of chains" for f in shifts)
        named = {
            i
            for f in shifts
            for side in ("repeated_text_before", "repeated_text_after")
            if f.details[side]
            for i in f.details[side]["ids"]
        }
        named = {corpus_id(built, i) for i in named}
        for r in repeats:
            assert c.ids[r] in named
        assert len(shifts) <= 3


def test_langchain_faiss_index_name_through_the_cli(framework_index) -> None:
    built = framework_index("langchain", "faiss", "correct")
    code, out = cli_check(built.spec, "--all")
    assert code == 0 and out["checked"] == len(built.ids)
    r = CliRunner().invoke(cli, ["check-index", "--store", built.spec, *EMB])
    assert r.exit_code == 2 and "--trust-pickle" in r.stderr and "docs.pkl" in r.stderr
    wrong = CliRunner().invoke(
        cli, ["check-index", "--store", f"faiss:{built.path}?index_name=nope", *EMB]
    )
    assert wrong.exit_code == 2 and "?index_name=docs" in wrong.stderr


def test_llamaindex_spec_through_the_cli(framework_index) -> None:
    built = framework_index("llamaindex", "simple", "correct")
    code, out = cli_check(built.spec, "--all")
    assert code == 0 and out["checked"] == len(built.ids)
    # the nodes' bare texts: the metadata header is missing, with the advice to use a template
    code, out = cli_check(built.spec + "?text=stored", "--all")
    assert code == 1
    (f,) = [f for f in out["findings"] if f["severity"] == "error"]
    assert f["kind"] == "embedded_text_differs"
    assert "--embed-template" in f["message"] and "different --embedder" in f["message"]
    assert out["counts"] == {"embedded_text_differs": len(built.ids)}


def test_llamaindex_bare_texts_sampled_are_embedded_text_differs(framework_index) -> None:
    built = framework_index("llamaindex", "faiss", "correct")
    code, out = cli_check(built.spec + "?text=stored", "--sample", "30")
    assert code == 1
    assert {f["kind"] for f in out["findings"] if f["severity"] == "error"} == {
        "embedded_text_differs"
    }


def test_pgvector_collection_through_the_cli(framework_index) -> None:
    built = framework_index("langchain", "pgvector", "correct")
    code, out = cli_check(built.spec, "--all")
    assert code == 0 and out["checked"] == len(built.ids)
    # the whole shared table would mix in the other collection: without &collection= it
    # is refused, naming both (tests/frameworks/test_pg_shared.py)
    whole = built.spec.split("&collection=")[0]
    mixed = CliRunner().invoke(cli, ["check-index", "--store", whole, *EMB])
    assert mixed.exit_code == 2 and built.details["other_collection"] in mixed.stderr
    bad = CliRunner().invoke(cli, ["check-index", "--store", whole + "&collection=nope", *EMB])
    assert bad.exit_code == 2 and built.details["collection"] in bad.stderr
    typo = CliRunner().invoke(cli, ["check-index", "--store", whole + "&colection=x", *EMB])
    assert typo.exit_code == 2 and "did you mean collection" in typo.stderr


def test_pgvector_uuid_ids_give_chains_not_scattered_offsets(framework_index) -> None:
    built = framework_index("langchain", "pgvector-uuid", "shifted")
    store = open_store(built.spec)
    try:
        assert store.ordered is False
        result = check_index(CheckIndexSettings(sample=None), store, open_embedder("minilm"))
    finally:
        store.close()
    shifts = [f for f in result.findings if f.kind == "shift"]
    assert 1 <= len(shifts) <= 3
    assert all(f.details["order"] == "holds_vector_of chains" for f in shifts)


def test_instruction_prefix_in_the_embedder_spec(tmp_path) -> None:
    """An E5-style index (LangChain FAISS, every text sent as "passage: " + text): bare
    texts give embedded_text_differs; the prefix in the embedder spec passes."""
    pytest.importorskip("langchain_community")
    import numpy as np
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    from indexcheck.embedders import cached_embedder, for_queries
    from tests.builders.framework_corpus import embed_correct

    class Passage(Embeddings):
        def embed_documents(self, texts):
            return embed_correct([f"passage: {t}" for t in texts]).tolist()

        def embed_query(self, text):
            return embed_correct([f"query: {text}"])[0].tolist()

    c = framework_corpus()
    FAISS.from_texts(c.texts, Passage(), ids=c.ids).save_local(str(tmp_path), index_name="e5")
    spec = f"faiss:{tmp_path}?index_name=e5"
    code, out = cli_check(spec, "--all")
    assert code == 1
    assert [f["kind"] for f in out["findings"] if f["severity"] == "error"] == [
        "embedded_text_differs"
    ]
    r = CliRunner().invoke(
        cli,
        ["check-index", "--store", spec, "--trust-pickle", "--all", "--json", "-",
         "--embedder", "minilm?prefix=passage:%20&query_prefix=query:%20"],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    # questions go through the query prefix, behind the same cache
    emb = cached_embedder("minilm?prefix=passage:%20&query_prefix=query:%20", None)
    got = for_queries(emb).embed(["how do I close an account?"])
    want = embed_correct(["query: how do I close an account?"])
    assert float(np.dot(got[0], want[0])) > 0.9999
    bad = CliRunner().invoke(
        cli, ["check-index", "--store", spec, "--trust-pickle", "--embedder", "minilm?prefx=a"]
    )
    assert bad.exit_code == 2 and "did you mean prefix" in bad.stderr


@pytest.mark.parametrize("layout", ["simple", "faiss"])
def test_llamaindex_bare_texts_pass_with_embed_template(framework_index, layout: str) -> None:
    """The nodes' bare texts with LlamaIndex's default template pass, sampled and --all,
    from the store's own texts and metadata; a bad template is exit 2 before any work."""
    built = framework_index("llamaindex", layout, "correct")
    bare = built.spec + "?text=stored"
    tmpl = ["--embed-template", "{metadata}\\n\\n{text}"]
    for how in (["--all"], ["--sample", "20"]):
        code, out = cli_check(bare, *how, *tmpl)
        assert code == 0, out["findings"]
    r = CliRunner().invoke(
        cli, ["check-index", "--store", bare, *EMB, "--embed-template", "{metadata.__class__}"]
    )
    assert r.exit_code == 2 and "Traceback" not in r.stderr


def test_embed_template_with_a_chunks_file_and_the_config_key(framework_index, tmp_path) -> None:
    """--chunks with a ``metadata`` column: the template reads it; the same key works from
    indexcheck.toml."""
    built = framework_index("llamaindex", "simple", "correct")
    c = framework_corpus()
    chunks = tmp_path / "chunks.jsonl"
    rows = [
        {"id": i, "text": t, "metadata": m}
        for i, t, m in zip(c.ids, c.texts, c.metadata, strict=True)
    ]
    chunks.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, out = cli_check(built.spec, "--chunks", str(chunks), "--all")
    assert code == 1  # the file's texts are bare: what LlamaIndex embedded differs
    assert "embedded_text_differs" in out["counts"]
    code, out = cli_check(
        built.spec, "--chunks", str(chunks), "--all", "--embed-template", "{metadata}\\n\\n{text}"
    )
    assert code == 0, out["findings"]
    cfg = tmp_path / "indexcheck.toml"
    cfg.write_text('[check-index]\nembed-template = "{metadata}\\n\\n{text}"\n')
    r = CliRunner().invoke(
        cli,
        ["--config", str(cfg), "check-index", "--store", built.spec, "--chunks", str(chunks),
         "--all", *EMB, "--json", "-"],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr


def test_framework_pg_tables_open_by_their_own_column_names(framework_index) -> None:
    """PGVectorStore (langchain_id, content, langchain_metadata) and LlamaIndex's table
    (node_id, text, metadata_ with _node_content) need only ?table=."""
    for framework, layout, extra in (
        ("langchain", "pgvectorstore", ""),
        ("llamaindex", "pgvector", "&order=id"),
    ):
        built = framework_index(framework, layout, "correct")
        base = built.spec.split("?", 1)[0]
        code, out = cli_check(f"{base}?table={built.details['table']}{extra}", "--all")
        assert code == 0, out["findings"]
        assert out["checked"] == len(built.ids)


@pytest.mark.parametrize(("framework", "layout"), [("langchain", "faiss"), ("langchain", "chroma")])
def test_sampled_check_reports_shifts_the_same_way(framework_index, framework, layout) -> None:
    """The sampled path (every chunk drawn) gives the streamed path's shift findings."""
    c = framework_corpus()
    built = framework_index(framework, layout, "shifted")
    code, out = cli_check(built.spec, "--sample", str(len(c.ids)))
    assert code == 1
    shifts = [f for f in out["findings"] if f["kind"] == "shift"]
    if layout == "faiss":
        (root,) = shifts  # issue 17: one root finding, the stretches in its details
        stretches = root["details"]["stretches"]
        assert [s["offset"] for s in stretches] == [1, 2]
        assert [s["trigger_id"] for s in stretches] == [c.ids[r] for r in sorted(c.repeat_of)]
        assert root["details"]["order"] == "store order"
    else:
        assert {f["details"]["order"] for f in shifts} == {"holds_vector_of chains"}
        assert 1 <= len(shifts) <= 3
        moved = [r for r in out["chunks"] if r["status"] == "shift"]
        assert moved and all(r["offset"] is None and r["holds_vector_of"] for r in moved)
