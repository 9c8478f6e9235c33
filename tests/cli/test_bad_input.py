"""The bad-input matrix (issue 12): one row per class of hostile input or flaky service.

Each row runs the CLI (CliRunner, in process) with a canary API key in the environment and
asserts: the exit code; exactly one line on stderr; no traceback; not the catch-all
("could not finish: <ExceptionType>"); the user's files unchanged (sha256 of every file and
folder before and after); the canary nowhere in stdout, stderr or any file the run wrote
(cache, JSON, reports). Rows owned by other branches are strict xfails naming the branch.
"""

# ruff: noqa: E501  (the matrix reads best one row per line)
from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.embedders.cache import CachedEmbedder, EmbeddingCache
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HASH32, HashEmbedder, positional_cache_bug
from tests.util import CATCH_ALL, tree_digest

CANARY = "canary-7d1f0c2e9b-secret"
EMB = ["--embedder", "py:indexcheck.testing:HASH32"]


@dataclass
class World:
    """Files of one row: ``data`` is the user's (must not change), ``out`` is for outputs."""

    data: Path
    out: Path
    env: dict[str, str] = field(default_factory=dict)

    def chunks(self, name: str, rows: list[dict[str, object]]) -> str:
        path = self.data / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return str(path)

    def raw(self, name: str, data: bytes) -> str:
        path = self.data / name
        path.write_bytes(data)
        return str(path)

    @property
    def good(self) -> str:
        return f"faiss:{self.data / 'good'}"

    @property
    def good_chunks(self) -> str:
        return str(self.data / "chunks.jsonl")


def _world(tmp: Path) -> World:
    data, out = tmp / "data", tmp / "out"
    data.mkdir()
    out.mkdir()
    ids = [f"c{i}" for i in range(40)]
    texts = [f"Fact {i} about subject {i % 7}." for i in range(40)]
    (data / "chunks.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    write_faiss_folder(data / "good", ids, HASH32.embed(texts))
    return World(data=data, out=out)


Setup = Callable[[World], list[str]]


def _check(w: World, *args: str) -> list[str]:
    return ["check-index", "--store", w.good, *EMB, "--sample", "10", *args]


def _all(w: World) -> list[str]:
    return ["check-index", "--store", w.good, *EMB, "--all"]


def _parquet(w: World, name: str, text: list[object]) -> str:
    import pandas as pd

    path = w.data / name
    pd.DataFrame({"id": [f"c{i}" for i in range(len(text))], "text": text}).to_parquet(path)
    return str(path)


def _ids_json(w: World, entries: list[object]) -> str:
    folder = w.data / "idsjson"
    write_faiss_folder(folder, [f"c{i}" for i in range(len(entries))], HASH32.embed(["x"] * 3))
    (folder / "ids.json").write_text(json.dumps(entries))
    return f"faiss:{folder}"


def _langchain_wrong_shape(w: World) -> str:
    folder = w.data / "lc"
    write_faiss_folder(folder, ["a", "b"], HASH32.embed(["a", "b"]))
    (folder / "ids.json").unlink()
    (folder / "index.pkl").write_bytes(pickle.dumps({"not": "a tuple"}))
    return f"faiss:{folder}"


def _cache_other_dim(w: World) -> str:
    path = w.data / "cache.sqlite"
    other = HashEmbedder(8)
    other.model_id = HASH32.model_id
    cached = CachedEmbedder(other, EmbeddingCache(path))
    cached.embed(["a"])
    assert cached.cache is not None
    cached.cache.close()
    return str(path)


def _hnsw(w: World) -> str:
    import faiss

    folder = w.data / "hnsw"
    folder.mkdir()
    index = faiss.IndexHNSWFlat(32, 8, faiss.METRIC_INNER_PRODUCT)
    index.add(HASH32.embed([f"t{i}" for i in range(20)]))
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "ids.json").write_text(
        json.dumps([{"id": f"t{i}", "text": f"t{i}"} for i in range(20)])
    )
    return f"faiss:{folder}?efSearch=-5"


def _config(w: World, text: str) -> list[str]:
    path = w.data / "indexcheck.toml"
    path.write_text(text)
    return ["--config", str(path)]


def _markup_ids(w: World) -> str:
    ids = ["[/]", "[bold red]x[/bold red]", "[link=http://evil.example]y[/link]", "\x1b]0;pwn\x07"]
    ids += [f"c{i}" for i in range(12)]
    texts = [f"Fact {i}." for i in range(len(ids))]
    texts[1] = texts[0]  # a repeated text: the positional bug shifts every later vector
    w.chunks("markup.jsonl", [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)])
    fresh = HASH32.embed(texts)
    write_faiss_folder(w.data / "markup", ids, positional_cache_bug(texts, fresh))
    return f"faiss:{w.data / 'markup'}"


def _mistral(w: World, emu_setup: Callable[[object], None]) -> list[str]:
    pytest.importorskip("mistralai.client")
    from tests.emulators.mistral_emulator import MistralEmulator

    emu = MistralEmulator(api_key=CANARY).__enter__()
    w.env["MISTRAL_SERVER_URL"] = emu.url
    emu_setup(emu)
    w.env["_EMULATOR"] = ""  # marks the row; the server is a daemon thread of this test
    return [
        "embed",
        "--chunks",
        w.good_chunks,
        "--embedder",
        "mistral",
        "--cache",
        str(w.out / "cache.sqlite"),
        "--out",
        str(w.out / "vectors.parquet"),
    ]


def _hung(emu: object) -> None:
    emu.delay_s = 3.0  # type: ignore[attr-defined]


def _always_429(emu: object) -> None:
    emu.fail(429, times=None)  # type: ignore[attr-defined]


# (row id, setup -> argv, exit code, what stderr must say, xfail reason or None)
ROWS: list[tuple[str, Setup, int, str, str | None]] = [
    # -- chunk files: a text must be a string; a null is a missing text, never "nan" -------
    ("text_object", lambda w: _check(w, "--chunks", w.chunks("c.jsonl", [{"id": "a", "text": {"k": 1}}])), 2, "c.jsonl line 1: column 'text' holds an object, not a string", None),
    ("text_number", lambda w: _check(w, "--chunks", w.chunks("c.jsonl", [{"id": "a", "text": 3.5}])), 2, "column 'text' holds a float", None),
    ("text_list", lambda w: _check(w, "--chunks", w.chunks("c.jsonl", [{"id": "a", "text": ["x"]}])), 2, "column 'text' holds a list", None),
    ("text_bool", lambda w: _check(w, "--chunks", w.chunks("c.jsonl", [{"id": "a", "text": True}])), 2, "column 'text' holds a boolean", None),
    ("text_null_json", lambda w: _check(w, "--chunks", w.chunks("c.jsonl", [{"id": "a", "text": None}])), 2, 'have no text (null or empty) at line 1', None),
    ("id_object", lambda w: _check(w, "--chunks", w.chunks("c.jsonl", [{"id": {"x": 1}, "text": "t"}])), 2, "column 'id' holds an object", None),
    ("parquet_null", lambda w: _check(w, "--chunks", _parquet(w, "c.parquet", ["a", None])), 2, 'have no text (null or empty) at row 2', None),
    ("parquet_struct", lambda w: _check(w, "--chunks", _parquet(w, "c.parquet", [{"k": 1}, {"k": 2}])), 2, "c.parquet row 1: column 'text' holds an object", None),
    ("parquet_bytes", lambda w: _check(w, "--chunks", _parquet(w, "c.parquet", [b"a", b"b"])), 2, "column 'text' holds a bytes", None),
    ("csv_empty_cell", lambda w: _check(w, "--chunks", w.raw("c.csv", b"id,text\na,x\nb,\n")), 2, 'have no text (null or empty) at line 3', None),
    # the streamed --all path reads the chunks file itself: the same rules, before any work
    ("all_text_object", lambda w: [*_all(w), "--chunks", w.chunks("c.jsonl", [{"id": "a", "text": {"k": 1}}])], 2, "c.jsonl line 1: column 'text' holds an object, not a string", None),
    ("all_text_null", lambda w: [*_all(w), "--chunks", w.chunks("c.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "text": None}])], 2, 'have no text (null or empty) at line 2', None),
    ("all_invalid_utf8", lambda w: [*_all(w), "--chunks", w.raw("c.jsonl", b'{"id":"a","text":"\xff\xfe"}\n')], 2, 'c.jsonl line 1 is not valid UTF-8', None),
    ("all_invalid_utf8_csv", lambda w: [*_all(w), "--chunks", w.raw("c.csv", b"id,text\na,caf\xe9\n")], 2, 'c.csv line 2 is not valid UTF-8', None),
    ("invalid_utf8_jsonl", lambda w: _check(w, "--chunks", w.raw("c.jsonl", b'{"id":"a","text":"\xff\xfe"}\n')), 2, 'c.jsonl line 1 is not valid UTF-8', None),
    ("lone_surrogate", lambda w: _check(w, "--chunks", w.raw("c.jsonl", b'{"id":"a","text":"\\ud800"}\n')), 2, "c.jsonl line 1: column 'text' holds a lone surrogate", None),
    ("invalid_utf8_csv", lambda w: _check(w, "--chunks", w.raw("c.csv", b"id,text\na,caf\xe9\n")), 2, 'c.csv line 2 is not valid UTF-8', None),
    ("questions_invalid_utf8", lambda w: ["sweep-threshold", "--store", w.good, *EMB, "--questions", w.raw("q.jsonl", b'{"id":"q","question":"\xff","in_scope":false}\n')], 2, 'q.jsonl line 1 is not valid UTF-8', None),
    ("questions_surrogate", lambda w: ["sweep-threshold", "--store", w.good, *EMB, "--questions", w.raw("q.jsonl", b'{"id":"q","question":"\\udc80","in_scope":false}\n')], 2, "q.jsonl line 1: column 'question' holds a lone surrogate", None),
    # -- store files beside the index ------------------------------------------------------
    ("ids_json_without_id", lambda w: ["check-index", "--store", _ids_json(w, [{"id": "a"}, {"text": "b"}, {"id": "c"}]), *EMB], 2, 'ids.json entry 1 has no "id"', None),
    ("ids_json_mixed_types", lambda w: ["check-index", "--store", _ids_json(w, [{"id": "a"}, "b", {"id": "c"}]), *EMB], 2, 'ids.json entry 1 mixes kinds', None),
    ("langchain_pickle_wrong_shape", lambda w: ["check-index", "--store", _langchain_wrong_shape(w), "--trust-pickle", *EMB], 2, 'is not a LangChain FAISS pickle', None),
    # -- option values -----------------------------------------------------------------------
    ("seed_negative", lambda w: _check(w, "--seed", "-1"), 2, "invalid value for '--seed': -1 is not in the range", None),
    ("sample_zero", lambda w: [*_check(w), "--sample", "0"], 2, "invalid value for '--sample': 0 is not in the range", None),
    ("spec_key_twice", lambda w: [*_check(w, "--chunks", w.good_chunks)[:2], w.good + "?efSearch=4&efSearch=64", *_check(w, "--chunks", w.good_chunks)[3:]], 2, "gives efSearch more than once; keep one value", None),
    # output paths are probed for real before any work (os.access says yes to root, even
    # under /proc); a disk that fills after the work is exit 3 naming the file
    ("report_under_proc", lambda w: [*_check(w, "--chunks", w.good_chunks), "--report", "/proc/indexcheck-no/r"], 2, "--report /proc/indexcheck-no/r cannot be written", None),
    ("json_under_proc", lambda w: [*_check(w, "--chunks", w.good_chunks), "--json", "/proc/indexcheck-no.json"], 2, "--json /proc/indexcheck-no.json cannot be written", None),
    ("rows_under_proc", lambda w: [*_all(w), "--chunks", w.good_chunks, "--rows", "/proc/indexcheck-no.parquet"], 2, "--rows /proc/indexcheck-no.parquet cannot be written", None),
    ("json_disk_full", lambda w: [*_check(w, "--chunks", w.good_chunks), "--json", "/dev/full"], 3, "could not write --json /dev/full", None),
    ("max_fault_rate_tiny", lambda w: [*_check(w, "--chunks", w.good_chunks), "--max-fault-rate", "1e-300"], 2, "invalid value for '--max-fault-rate'", None),
    # a misspelt embedder spec is refused at the edge, before the store is opened (here the
    # store does not even exist: its error must not be the one reported)
    ("embedder_key_typo_before_store", lambda w: ["check-index", "--store", "faiss:" + str(w.data / "nope"), "--embedder", "minilm?prefx=query:%20"], 2, "did you mean prefix", None),
    ("embedder_unknown_scheme", lambda w: ["check-index", "--store", "faiss:" + str(w.data / "nope"), "--embedder", "openia:gpt"], 2, "unknown embedder 'openia:gpt'", None),
    ("min_cosine_nan", lambda w: _check(w, "--min-cosine", "nan"), 2, "'nan' is not a finite number", None),
    ("min_cosine_inf", lambda w: _check(w, "--min-cosine", "inf"), 2, "'inf' is not a finite number", None),
    ("threshold_nan", lambda w: ["diagnose", "--store", w.good, *EMB, "--questions", w.raw("q.jsonl", b'{"id":"q","question":"x","in_scope":false}\n'), "--threshold", "nan"], 2, "'nan' is not a finite number", None),
    ("recall_nan", lambda w: ["sweep-threshold", "--store", w.good, *EMB, "--questions", w.raw("q.jsonl", b'{"id":"q","question":"x","in_scope":false}\n'), "--recall", "nan"], 2, "'nan' is not a finite number", None),
    ("timeout_nan", lambda w: _check(w, "--timeout", "nan"), 2, "'nan' is not a finite number", None),
    ("max_wait_negative", lambda w: _check(w, "--max-wait", "-3"), 2, "invalid value for '--max-wait'", None),
    ("no_such_option", lambda w: _check(w, "--foo"), 2, "error: no such option '--foo'; see indexcheck check-index --help", None),
    ("missing_store", lambda w: ["check-index", *EMB], 2, "missing option '--store'; see indexcheck check-index --help", None),
    ("no_such_command", lambda w: ["chek-index"], 2, "no such command 'chek-index'", None),
    # -- indexcheck.toml -----------------------------------------------------------------------
    ("config_defaults_scalar", lambda w: [*_config(w, "defaults = 5\n"), *_check(w)], 2, "'defaults' in", None),
    ("config_unknown_key", lambda w: [*_config(w, "[check-index]\nsamplee = 5\n"), *_check(w)], 2, "unknown key 'samplee' in [check-index] of", None),
    ("config_unknown_default", lambda w: [*_config(w, "[defaults]\nembeder = 'x'\n"), *_check(w)], 2, "unknown key 'embeder' in [defaults] of", None),
    ("config_wrong_type", lambda w: [*_config(w, "[check-index]\nsample = 'many'\n"), *_check(w)], 2, "'sample' in [check-index] of", None),
    ("config_nan", lambda w: [*_config(w, "[check-index]\nmin-cosine = nan\n"), *_check(w)], 2, 'nan is not a finite number', None),
    ("config_unknown_table", lambda w: [*_config(w, "[chek-index]\nsample = 5\n"), *_check(w)], 2, 'unknown table [chek-index]', None),
    ("config_not_toml", lambda w: [*_config(w, "[check-index\n"), *_check(w)], 2, 'cannot read', None),
    # -- the embedding cache ---------------------------------------------------------------------
    ("cache_not_sqlite", lambda w: _check(w, "--cache", w.raw("notes.txt", b"not a database\n" * 50)), 2, 'notes.txt is not an indexcheck cache (not a SQLite database)', None),
    ("cache_other_dimension", lambda w: _check(w, "--cache", _cache_other_dim(w)), 2, 'vectors of dimension 8, but the embedder gives 32', None),
    # -- user code and hosted services: could not finish (3), named, never the catch-all ---------
    ("py_hook_sys_exit_0", lambda w: ["check-index", "--store", w.good, "--embedder", "py:tests.hostile_hooks:exit_zero"], 3, 'py:tests.hostile_hooks:exit_zero embedder called sys.exit(0)', None),
    # an embedder that returns NaN is the embedder's fault: never "cosine 0, another model"
    ("embedder_returns_nan", lambda w: [*_check(w, "--chunks", w.good_chunks), "--embedder", "py:tests.hostile_hooks:nan_vectors"], 3, 'returned NaN, infinite or all-zero vectors', None),
    ("mistral_hung", lambda w: [*_mistral(w, _hung), "--timeout", "0.3", "--max-wait", "1"], 3, '(--max-wait 1 s)', None),
    ("mistral_429_exhausted", lambda w: [*_mistral(w, _always_429), "--max-wait", "1"], 3, 'still rate limited (429)', None),
    # -- parts owned by other branches -----------------------------------------------------------
    ("markup_ids", lambda w: ["check-index", "--store", _markup_ids(w), *EMB, "--chunks", str(w.data / "markup.jsonl"), "--all"], 1, '', None),
    ("json_to_a_folder", lambda w: _check(w, "--chunks", w.good_chunks, "--json", str(w.out)), 2, '--json', None),
    ("embed_out_exists_before_any_request", lambda w: ["embed", "--chunks", w.good_chunks, "--embedder", "py:tests.hostile_hooks:exit_zero", "--out", w.raw("exists.parquet", b"PAR1")], 2, 'exists', None),
    ("ef_search_negative", lambda w: ["check-index", "--store", _hnsw(w), *EMB, "--all"], 2, 'efSearch', None),
]  # fmt: skip


def _run(
    tmp: Path, setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str, World, dict[str, object]]:
    monkeypatch.delenv("INDEXCHECK_DEBUG", raising=False)
    monkeypatch.delenv("INDEXCHECK_TIMEOUT", raising=False)
    monkeypatch.delenv("INDEXCHECK_MAX_WAIT", raising=False)
    monkeypatch.chdir(tmp)
    w = _world(tmp)
    args = setup(w)
    before = tree_digest(w.data, dirs=True)
    env = {"MISTRAL_API_KEY": CANARY, "UPSTASH_VECTOR_REST_TOKEN": CANARY, "PGPASSWORD": CANARY}
    env |= {k: v for k, v in w.env.items() if not k.startswith("_")}
    r = CliRunner().invoke(cli, args, env=env)
    return r.exit_code, r.stdout, r.stderr, w, before


def _written(w: World) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(w.out.rglob("*")) if p.is_file())


@pytest.mark.parametrize(
    ("setup", "code", "says"),
    [
        pytest.param(
            setup,
            code,
            says,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [],
        )
        for name, setup, code, says, why in ROWS
    ],
)
def test_bad_input_row(
    setup: Setup, code: int, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exit_code, out, err, w, before = _run(tmp_path, setup, monkeypatch)
    lines = err.strip().splitlines()
    assert exit_code == code, err
    assert says in err
    if code != 1:
        assert len(lines) == 1, err
        assert lines[0].startswith("error: "), err
    else:  # hostile ids are shown as written, never as markup or terminal control
        assert "[/]" in out and "[bold red]x[/bold red]" in out and "[link=" in out
        assert "\x1b" not in out + err
    assert "Traceback" not in out + err
    assert CATCH_ALL not in err  # the catch-all (see test_the_rows_look_for_what_...)
    assert tree_digest(w.data, dirs=True) == before  # the user's files are untouched
    assert CANARY not in out + err
    assert CANARY.encode() not in _written(w)


def test_the_rows_look_for_what_the_catch_all_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row (here and in test_bad_input_commands.py) asserts that CATCH_ALL is absent
    from stderr; that assertion only means something if an unmapped exception really
    prints it. Plant one and watch the catch-all say so (exit 3, one line)."""
    import indexcheck.commands.check_index as command

    def bug(*args: object, **kwargs: object) -> object:
        raise RuntimeError("planted bug")

    monkeypatch.setattr(command, "read_chunks", bug)
    r = CliRunner().invoke(cli, ["check-index", "--store", "faiss:x", "--chunks", "c.jsonl"])
    assert r.exit_code == 3
    assert r.stderr.startswith(f"error: {CATCH_ALL}RuntimeError: planted bug")
    assert len(r.stderr.strip().splitlines()) == 1


def test_debug_keeps_the_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """INDEXCHECK_DEBUG=1 adds a traceback; exit 2 stays 2 and 3 stays 3."""
    w = _world(tmp_path)
    bad = w.chunks("c.jsonl", [{"id": "a", "text": None}])
    runner = CliRunner()
    r = runner.invoke(cli, _check(w, "--chunks", bad), env={"INDEXCHECK_DEBUG": "1"})
    assert r.exit_code == 2 and "Traceback" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: ")
    hook = ["check-index", "--store", w.good, "--embedder", "py:tests.hostile_hooks:exit_zero"]
    r = runner.invoke(cli, hook, env={"INDEXCHECK_DEBUG": "1"})
    assert r.exit_code == 3 and "Traceback" in r.stderr


def test_a_correct_run_still_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guards refuse bad input only: the clean world passes, options from a strict
    config and --timeout/--max-wait included."""
    w = _world(tmp_path)
    cfg = _config(
        w,
        f'[defaults]\nembedder = "py:indexcheck.testing:HASH32"\n[check-index]\nsample = 7\nmin-cosine = 0.99\nchunks = "{w.good_chunks}"\n',
    )
    r = CliRunner().invoke(
        cli,
        [
            *cfg,
            "check-index",
            "--store",
            w.good,
            "--timeout",
            "5",
            "--max-wait",
            "9",
            "--json",
            "-",
        ],
    )
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["checked"] == 7
    assert np.isfinite(json.loads(r.stdout).get("min_cosine", 0.99))
