"""Issue 12's library pieces: id-list validation, baseline guard, secrets in specs, bounded
waiting for hosted services, and the bounded tokenization of long texts."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import numpy as np
import pytest

from indexcheck.cli.option_types import FiniteFloat
from indexcheck.commands.ci.baseline_guard import baseline_differences, check_baseline
from indexcheck.embedders.base import RetryPolicy
from indexcheck.errors import BackendUnavailableError, DataFileError, InputError
from indexcheck.remote.waiting import current, set_override
from indexcheck.safety.secrets import scrub, spec_password, spec_password_warning
from indexcheck.stores.faiss.ids_files import langchain_rows, parse_ids_json

ROOT = Path(__file__).resolve().parents[2]
IDS = Path("ids.json")


# -- ids.json and the LangChain payload ---------------------------------------------------
def test_ids_json_plain_and_objects_parse() -> None:
    assert parse_ids_json(["a", 7], IDS) == (["a", "7"], None)
    assert parse_ids_json([{"id": "a", "text": "t"}, {"id": 2}], IDS) == (["a", "2"], ["t", None])


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"a": 1}, "must hold a JSON list"),
        ([{"id": "a"}, {"text": "b"}], 'entry 1 has no "id"'),
        ([{"id": "a"}, "b"], "entry 1 mixes kinds"),
        (["a", {"id": "b"}], "entry 1 mixes kinds"),
        ([{"id": ["x"]}], "entry 0: column 'id' holds a list"),
        ([{"id": "a", "text": 5}], '"text" must be a string or null'),
        ([None], "entry 0 has no id"),
    ],
)
def test_ids_json_bad_shapes_are_input_errors(raw: Any, says: str) -> None:
    with pytest.raises(DataFileError, match=None) as info:
        parse_ids_json(raw, IDS)
    assert says in str(info.value) and info.value.exit_code == 2


@pytest.mark.parametrize(
    "raw",
    [
        [{"id": "a"}, {"text": "b"}],
        [{"id": "a"}, "b"],
        [{"id": ["x"]}],
        [{"id": "a", "text": 5}],
        [{"id": ["x"], "text": 5}],  # both wrong: the id is named first, either way read
        [None],
    ],
)
def test_ids_json_streamed_refuses_as_the_whole_list_does(raw: Any, tmp_path: Path) -> None:
    from indexcheck.stores.faiss.json_list import iter_entries

    path = tmp_path / "ids.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(DataFileError) as whole:
        parse_ids_json(raw, path)
    with pytest.raises(DataFileError) as streamed:
        list(iter_entries(path))
    assert str(streamed.value) == str(whole.value)


@pytest.mark.parametrize("raw", [[[1]], [{"id": [1], "text": 5}]])
def test_a_bad_id_in_the_stores_id_file_is_not_told_to_pass_id_column(raw: Any) -> None:
    """--id-column names a column of --chunks; it cannot fix the id file saved with the index."""
    with pytest.raises(DataFileError) as info:
        parse_ids_json(raw, IDS)
    assert "--id-column" not in str(info.value)
    assert "fix that entry of the id file the index was saved with" in str(info.value)


def _state(obj: Any) -> dict[str, Any]:
    return obj if isinstance(obj, dict) else {}


def test_langchain_payload_shapes() -> None:
    docs = {"_dict": {"d1": {"page_content": "hello"}, "d2": {"page_content": 3}}}
    assert langchain_rows((docs, {0: "d1", 1: "d2"}), IDS, _state) == (
        ["d1", "d2"],
        ["hello", None],
    )
    for payload, says in [
        ({"not": "a tuple"}, "expected (docstore, index_to_docstore_id)"),
        ((docs, ["d1"]), "must map row numbers"),
        ((docs, {0: "d1", 2: "d2"}), "rows 0..n-1"),
        (({"_dict": []}, {0: "d1"}), "no document dictionary"),
    ]:
        with pytest.raises(DataFileError, match=None) as info:
            langchain_rows(payload, IDS, _state)
        assert says in str(info.value)


# -- baselines from another system -----------------------------------------------------------
def _baseline(spec: str, backend: str, model: str, metric: str = "ip") -> dict[str, Any]:
    store = {"spec": spec, "backend": backend, "metric": metric}
    return {"_path": "baseline.json", "manifest": {"store": store, "embedder": {"model_id": model}}}


def test_a_reindex_on_the_same_backend_and_embedder_is_comparable() -> None:
    """The baseline is taken on the previous index: another location is the normal case."""
    base = _baseline("pgvector:postgresql://u:old@db/x?table=t_v41", "pgvector", "minilm:a")
    assert check_baseline(base, "pgvector", "ip", "minilm:a") == []


@pytest.mark.parametrize(
    ("spec", "backend", "model", "says"),
    [
        ("faiss:/idx", "faiss", "minilm:a", "store metric 'ip' in the baseline, 'l2' now"),
        ("qdrant:/idx", "qdrant", "minilm:a", "store backend 'faiss'"),
        ("faiss:/idx", "faiss", "mistral:mistral-embed", "embedder 'minilm:a'"),
    ],
)
def test_baseline_from_another_system_is_refused_unless_allowed(
    spec: str, backend: str, model: str, says: str
) -> None:
    base = _baseline("faiss:/idx", "faiss", "minilm:a")
    metric = "l2" if "metric" in says else "ip"
    with pytest.raises(InputError) as info:
        check_baseline(base, backend, metric, model)
    assert says in str(info.value) and "--baseline-any-store" in str(info.value)
    notes = check_baseline(base, backend, metric, model, allow_any=True)
    assert len(notes) == 1 and says in notes[0]


def test_baseline_without_manifest_is_noted_not_refused() -> None:
    notes = check_baseline({"per_question": {}}, "faiss", "ip", "m")
    assert notes == baseline_differences({}, "faiss", "ip", "m") and "no manifest" in notes[0]


# -- a password inside a spec -----------------------------------------------------------------
def test_password_in_a_pgvector_spec_warns_without_showing_it() -> None:
    spec = "pgvector:postgresql://reader:s3cr%40t@db:5432/kb?table=chunks"
    assert spec_password(spec) == "s3cr@t"
    warning = spec_password_warning(spec)
    assert warning is not None and "PGPASSWORD" in warning and ".pgpass" in warning
    assert "s3cr" not in warning
    assert spec_password("pgvector:postgresql://db/kb?table=t&password=pw") == "pw"
    assert spec_password_warning("pgvector:postgresql://reader@db/kb?table=t") is None
    assert spec_password_warning("faiss:./index") is None
    assert scrub("failed for s3cr@t at db", ["s3cr@t", None]) == "failed for *** at db"


# -- option types ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1.5", "x", True])
def test_finite_float_refuses_nan_inf_and_out_of_range(value: Any) -> None:
    with pytest.raises(click.BadParameter):
        FiniteFloat(-1.0, 1.0).convert(value, None, None)


def test_finite_float_keeps_open_bounds() -> None:
    kind = FiniteFloat(0.0, None, min_open=True)
    assert kind.convert("0.5", None, None) == 0.5
    with pytest.raises(click.BadParameter):
        kind.convert("0", None, None)


def test_every_float_option_of_every_command_is_finite() -> None:
    from indexcheck.cli.app import cli

    floats = [
        (name, p.name)
        for name, cmd in cli.commands.items()
        for p in cmd.params
        if isinstance(p.type, click.FloatRange) or p.type is click.FLOAT
    ]
    assert floats == []


# -- bounded waiting ---------------------------------------------------------------------------
def test_waiting_from_env_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_TIMEOUT", "7")
    monkeypatch.setenv("INDEXCHECK_MAX_WAIT", "30")
    assert (current().timeout, current().max_wait) == (7.0, 30.0)
    set_override(timeout=2.0)
    try:
        assert (current().timeout, current().max_wait) == (2.0, 30.0)
    finally:
        set_override()
    monkeypatch.setenv("INDEXCHECK_TIMEOUT", "nan")
    with pytest.raises(InputError, match="INDEXCHECK_TIMEOUT"):
        current()


def test_retry_budget_stops_before_crossing_max_wait() -> None:
    policy = RetryPolicy(max_retries=100, base_delay=1.0, max_delay=1.0, max_wait=3.5)
    assert not policy.gives_up(0, 0.0, 1.0)
    assert policy.gives_up(3, 3.0, 1.0)
    assert policy.gives_up(100, 0.0, 0.0)
    assert not RetryPolicy(max_retries=100).gives_up(50, 1e9, 1e9)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


KEY = "canary-edges-1b2c"


def _mistral(emu: Any, **kw: Any) -> Any:
    from indexcheck.embedders.mistral.embedder import MistralEmbedder

    kw.setdefault("retry", RetryPolicy(max_retries=3))
    return MistralEmbedder(api_key=KEY, server_url=emu.url, **kw)


def test_truncated_200_from_mistral_is_retried() -> None:
    pytest.importorskip("mistralai.client")
    from tests.emulators.mistral_emulator import MistralEmulator, expected_vector

    with MistralEmulator(api_key=KEY) as emu:
        sleeps = Sleeps()
        emu.truncate(2)
        vectors = _mistral(emu, sleep=sleeps).embed(["one text", "two texts"])
        assert len(emu.requests) == 3 and len(sleeps) == 2
    np.testing.assert_allclose(vectors[0], expected_vector("one text"), atol=1e-6)


def test_mistral_gives_up_within_max_wait_and_names_real_options() -> None:
    pytest.importorskip("mistralai.client")
    from tests.emulators.mistral_emulator import MistralEmulator

    with MistralEmulator(api_key=KEY) as emu:
        emu.fail(503, times=None)
        sleeps = Sleeps()
        retry = RetryPolicy(max_retries=50, base_delay=2.0, max_delay=2.0, max_wait=5.0)
        with pytest.raises(BackendUnavailableError) as info:
            _mistral(emu, retry=retry, sleep=sleeps).embed(["x"])
    assert sum(sleeps) <= 5.0 and len(emu.requests) < 50
    message = str(info.value)
    assert "--max-wait 5 s" in message and "--batch-size" not in message and KEY not in message


def test_mistral_timeout_comes_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mistralai.client")
    from tests.emulators.mistral_emulator import MistralEmulator

    monkeypatch.setenv("INDEXCHECK_TIMEOUT", "0.2")
    monkeypatch.setenv("INDEXCHECK_MAX_WAIT", "0.5")
    with MistralEmulator(api_key=KEY) as emu:
        emu.delay_s = 2.0
        from indexcheck.embedders.mistral.embedder import MistralEmbedder

        embedder = MistralEmbedder(api_key=KEY, server_url=emu.url)
        assert embedder.timeout_s == 0.2 and embedder.retry.max_wait == 0.5
        with pytest.raises(BackendUnavailableError, match="--timeout 0.2 s"):
            embedder.embed(["x"])


# -- memory: tokenize only what the model reads ----------------------------------------------
_RSS_SCRIPT = """
import resource, sys
from indexcheck.embedders.minilm.model import MiniLMEmbedder
e = MiniLMEmbedder()
words = "vaccinate puppies at eight weeks, then yearly boosters. "
n = int(sys.argv[1])
text = (words * (n // len(words) + 1))[:n]
v = e.embed([text, words * 40])
# VmHWM: this process's own peak. ru_maxrss survives exec on Linux, so a child of a large
# pytest process would report the parent's peak; it is the fallback off Linux.
try:
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
    rss = int(hwm.split()[1]) // 1024
except OSError:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(rss, float(v[0] @ v[1]), len(e.truncated))
print(e.runtime, file=sys.stderr)
"""


def test_one_10mb_text_stays_under_500mb_rss() -> None:
    pytest.importorskip("tokenizers")
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(10_000_000)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    rss_mb, cosine, truncated = proc.stdout.split()
    assert int(rss_mb) < 500, proc.stderr
    # the long text and its 40-sentence prefix fill the same 256-token window
    assert math.isclose(float(cosine), 1.0, abs_tol=1e-5)
    assert int(truncated) == 2


def test_clipping_gives_the_same_tokens_as_tokenizing_everything() -> None:
    pytest.importorskip("tokenizers")
    from indexcheck.embedders.minilm.model import CLIP_CHARS, MiniLMEmbedder
    from indexcheck.inputs.corpus import text_hash

    e = MiniLMEmbedder()
    texts = [
        "a" * (CLIP_CHARS * 3),  # one giant word: [UNK]
        ("word " * CLIP_CHARS),
        (" " * (CLIP_CHARS * 2)) + "late words after much whitespace",
        "x." * CLIP_CHARS,
        "short text",
    ]
    for text in texts:
        assert e._encode(text).ids == e._tokenizer.encode(text).ids
    assert text_hash("short text") not in e.truncated
    assert text_hash("word " * CLIP_CHARS) in e.truncated


def test_cached_embedder_exposes_truncated_texts(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    from indexcheck.embedders.cache import CachedEmbedder, EmbeddingCache
    from indexcheck.embedders.minilm.model import MiniLMEmbedder
    from indexcheck.inputs.corpus import text_hash

    long = "many words here " * 200
    cached = CachedEmbedder(MiniLMEmbedder(), EmbeddingCache(tmp_path / "c.sqlite"))
    cached.embed([long, "short"])
    assert cached.truncated == {text_hash(long)}


def test_questions_refuse_non_string_question(tmp_path: Path) -> None:
    from indexcheck.inputs.questions import load_questions

    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q", "question": "x", "expected": [{"a": 1}]}) + "\n")
    with pytest.raises(DataFileError, match="q.jsonl line 1: column 'expected' holds an object"):
        load_questions(path)


def _upstash(monkeypatch: pytest.MonkeyPatch, emu: Any, params: str) -> str:
    from indexcheck.stores.upstash.store import TOKEN_ENV, URL_ENV
    from tests.builders.upstash import build

    monkeypatch.setenv(TOKEN_ENV, "canary-upstash-token")
    monkeypatch.delenv(URL_ENV, raising=False)
    vectors = np.random.default_rng(0).normal(size=(10, 8)).astype(np.float32)
    ids = [f"c{i}" for i in range(10)]
    return build(Path(), ids, vectors, ids, "cosine", emulator=emu, params=params)


def test_upstash_retries_stop_at_max_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("upstash_vector")
    import time

    from indexcheck.stores import open_store
    from tests.emulators.upstash_emulator import UpstashEmulator

    with UpstashEmulator(token="canary-upstash-token", exact=True) as emu:
        spec = _upstash(monkeypatch, emu, "retries=100&retry_interval=0.2&timeout=5")
        monkeypatch.setenv("INDEXCHECK_MAX_WAIT", "1")
        emu.fail_next(1000, 503)
        t0 = time.monotonic()
        with pytest.raises(BackendUnavailableError):
            open_store(spec).info()
        assert time.monotonic() - t0 < 3.0
        assert sum(r.command == "info" for r in emu.requests) < 10


def test_upstash_timeout_from_env_when_the_spec_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("upstash_vector")
    from indexcheck.stores import open_store
    from tests.emulators.upstash_emulator import UpstashEmulator

    with UpstashEmulator(token="canary-upstash-token", exact=True) as emu:
        spec = _upstash(monkeypatch, emu, "retries=0")
        monkeypatch.setenv("INDEXCHECK_TIMEOUT", "0.1")
        emu.delay = 0.5
        with pytest.raises(BackendUnavailableError, match="no reply within 0.1 s"):
            open_store(spec).info()
