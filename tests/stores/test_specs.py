"""Strict store specs: unknown keys and bad values are refused (exit 2) before any work.

One case per store family at least, plus the did-you-mean, the value ranges, the CLI's
one-line error, spec rewriting for --sweep, and the scheme (not the file name) picking
the file reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.errors import EXIT_INPUT, SpecError
from indexcheck.stores import BACKENDS, StoreSpec, open_store, store_class, sweep_spec, with_params
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.stores.params import Float, Int


@pytest.fixture()
def faiss_dir(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    write_faiss_folder(
        tmp_path / "ix", [f"c{i}" for i in range(40)], rng.random((40, 8)), index_factory="HNSW8"
    )
    return tmp_path / "ix"


def refused(spec: str) -> str:
    with pytest.raises(SpecError) as info:
        open_store(spec)
    assert info.value.exit_code == EXIT_INPUT
    return str(info.value)


def test_faiss_unknown_key_gets_a_did_you_mean(faiss_dir: Path) -> None:
    msg = refused(f"faiss:{faiss_dir}?efsearch=4")
    assert msg == (
        "unknown option 'efsearch' for faiss; did you mean efSearch? known: efSearch, nprobe, "
        "index_name"
    )
    assert open_store(f"faiss:{faiss_dir}?efSearch=4").info().details["efSearch"] == 4


@pytest.mark.parametrize("value", ["-5", "0", "four", "1.5", ""])
def test_faiss_out_of_range_values_are_refused(faiss_dir: Path, value: str) -> None:
    msg = refused(f"faiss:{faiss_dir}?efSearch={value}")
    assert "?efSearch= must be an integer >= 1" in msg and f"got '{value}'" in msg


def test_the_check_runs_before_the_folder_is_read(tmp_path: Path) -> None:
    assert "unknown option 'nprob'" in refused(f"faiss:{tmp_path / 'missing'}?nprob=2")


def test_chroma_unknown_key_is_refused_before_anything_is_opened(tmp_path: Path) -> None:
    msg = refused(f"chroma:{tmp_path / 'nowhere'}?collection=docs&colection=x")
    assert "unknown option 'colection' for chroma; did you mean collection?" in msg
    assert "known: collection, tenant, database" in msg


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("parquet:v.parquet?metirc=ip", "did you mean metric?"),
        ("parquet:v.parquet?metric=dot", "?metric= must be one of cosine, ip, l2, got 'dot'"),
        ("jsonl:v.jsonl?vectors=emb", "did you mean vector?"),
        ("upstash:https://x.upstash.io?token=abc", "tokens go in UPSTASH_VECTOR_REST_TOKEN"),
        ("upstash:https://x.upstash.io?retries=1000", "?retries= must be an integer in [0, 100]"),
        ("upstash:https://x.upstash.io?timeout=nan", "?timeout= must be a number"),
        ("pgvector:postgresql://u@h/db?tabel=t", "did you mean table?"),
        ("pgvector:postgresql://u@h/db?table=t&ef_search=-5", "?ef_search= must be an integer"),
        ("qdrant:http://127.0.0.1:1?collection=c&text=body", "did you mean text_field?"),
        ("milvus:http://127.0.0.1:1?collection=c&id_field=k", "known: collection, vector, id,"),
        ("lancedb:./db?table=t&nprobe=4", "did you mean nprobes?"),
        ("lancedb:./db?table=t&metric=manhattan", "?metric= must be one of"),
    ],
)
def test_every_store_family_refuses_unknown_keys_and_bad_values(spec: str, expected: str) -> None:
    msg = refused(spec)
    assert expected in msg, msg
    assert "\n" not in msg


def test_libpq_options_still_pass_through_pgvector() -> None:
    cls = store_class("pgvector")
    got = cls.check_params({"table": "t", "sslmode": "require", "connect_timeout": "3"})
    assert got["sslmode"] == "require"


def test_cli_prints_one_line_and_exits_2(faiss_dir: Path) -> None:
    from indexcheck.cli.app import cli

    r = CliRunner().invoke(cli, ["probe-scale", "--store", f"faiss:{faiss_dir}?efsearch=4"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "did you mean efSearch?" in r.stderr


def test_jsonl_scheme_reads_jsonl_whatever_the_file_is_called(tmp_path: Path) -> None:
    path = tmp_path / "vectors.json"
    rows = [{"id": f"c{i}", "vector": [float(i), 1.0, 0.0]} for i in range(5)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    store = open_store(f"jsonl:{path}")
    assert store.info().count == 5 and store.spec == f"jsonl:{path}"
    assert store.fetch(["c3"]).vectors[0].tolist() == [3.0, 1.0, 0.0]
    with pytest.raises(Exception, match="as Parquet"):
        open_store(f"parquet:{path}")


def test_sweep_rewrites_only_declared_parameters(faiss_dir: Path) -> None:
    spec = f"faiss:{faiss_dir}?nprobe=2"
    assert sweep_spec(spec, "efSearch", 64) == f"faiss:{faiss_dir}?nprobe=2&efSearch=64"
    assert with_params(spec, nprobe=None) == f"faiss:{faiss_dir}"
    with pytest.raises(SpecError, match="faiss accepts: efSearch, nprobe"):
        sweep_spec(spec, "ef", 4)
    with pytest.raises(SpecError, match="only faiss, lancedb, pgvector and redis"):
        sweep_spec("chroma:./db?collection=c", "ef", 4)
    assert StoreSpec.parse(sweep_spec(spec, "efSearch", 8)).params["efSearch"] == "8"


def test_every_sweepable_parameter_is_a_declared_integer() -> None:
    for scheme in BACKENDS:
        cls = store_class(scheme)
        for key in cls.sweepable:
            assert isinstance(cls.params[key], Int | Float), (scheme, key)


def test_no_store_class_has_a_write_method() -> None:
    words = ("add", "upsert", "insert", "delete", "write", "update", "put", "drop", "create")
    for scheme in BACKENDS:
        cls = store_class(scheme)
        public = {n for c in cls.__mro__ if c is not object for n in vars(c) if n[0] != "_"}
        bad = sorted(n for n in public if any(n.startswith(w) for w in words))
        assert not bad, (scheme, bad)
