"""Secrets never reach stdout, stderr, --json or --report, and deterministic failures are not
retried: a canary key with each kind of stray whitespace (trailing space, CR, LF, tab,
leading space) and with an embedded control character, for the Mistral embedder, the Mistral
judge, the OpenAI judge and the Upstash store, through the loopback emulators and the real
SDKs, run as a real process (real stderr, real exit code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from indexcheck.errors import AuthError, InputError
from indexcheck.safety import redact, secrets
from indexcheck.stores.files.store import write_vectors_file
from tests.builders.upstash import build as build_upstash
from tests.emulators import chat
from tests.emulators.mistral_emulator import MistralEmulator, expected_vector
from tests.emulators.upstash_emulator import UpstashEmulator

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "fixtures" / "judge" / "answers.jsonl"
CANARY = "sk-canary-7f3e9b21d4c6a805"
#: every kind of stray whitespace a paste leaves around a key
STRAY = {
    "trailing_space": CANARY + " ",
    "cr": CANARY + "\r",
    "lf": CANARY + "\n",
    "crlf": CANARY + "\r\n",
    "tab": CANARY + "\t",
    "leading": "  " + CANARY,
}
#: a control character inside the key: no stripping makes it right
EMBEDDED = CANARY[:9] + "\x01" + CANARY[9:]
TEXTS = ["Vaccinate puppies at eight weeks.", "Cats need taurine in their diet."]
SUPPORTED = {
    "claims": [
        {
            "claim": "Teens can borrow up to 20 items.",
            "verdict": "SUPPORTED",
            "evidence_span": "Teen cards can borrow up to 20 items",
            "rationale": "r",
        }
    ]
}


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str
    files: str  # every output file's text, concatenated

    @property
    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]

    def leaks(self, secret: str) -> bool:
        core = secret.strip()
        return any(core in t for t in (self.stdout, self.stderr, self.files))


def cli(args: list[str], env: dict[str, str], out: Path) -> Ran:
    """Run ``indexcheck ARGS`` as a process; collect stdout, stderr and every file in ``out``."""
    full = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MISTRAL_", "OPENAI_", "UPSTASH_", "INDEXCHECK_"))
    }
    full.update(env, PYTHONPATH=str(ROOT), INDEXCHECK_QUIET="1")
    full.setdefault("INDEXCHECK_CACHE_DIR", str(out / "cache"))
    r = subprocess.run(
        [sys.executable, "-c", "from indexcheck.cli.app import main; main()", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )
    texts = [
        p.read_bytes().decode("utf-8", "replace") for p in sorted(out.rglob("*")) if p.is_file()
    ]
    return Ran(r.returncode, r.stdout, r.stderr, "\n".join(texts))


@pytest.fixture
def mistral() -> Iterator[MistralEmulator]:
    with MistralEmulator(api_key=CANARY) as emu:
        emu.chat.default = chat.valid(SUPPORTED)
        yield emu


def one_answer(folder: Path) -> Path:
    row = json.loads(ANSWERS.read_text().splitlines()[1])
    row["answer"] = "Teens can borrow up to 20 items."
    path = folder / "one.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def chunks_file(folder: Path) -> Path:
    path = folder / "chunks.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"c{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS))
    )
    return path


def embedder_case(tmp: Path, emu: MistralEmulator) -> tuple[list[str], dict[str, str], Path]:
    inputs, out = tmp / "in", tmp / "out"
    inputs.mkdir()
    out.mkdir()
    vectors = np.stack([expected_vector(t) for t in TEXTS])
    write_vectors_file(inputs / "v.parquet", ["c0", "c1"], vectors, TEXTS)
    args = ["check-index", "--store", f"parquet:{inputs / 'v.parquet'}",
            "--chunks", str(chunks_file(inputs)), "--embedder", "mistral", "--all",
            "--json", str(out / "r.json"), "--report", str(out / "report")]  # fmt: skip
    return args, {"MISTRAL_SERVER_URL": emu.url}, out


def judge_case(
    tmp: Path, emu: MistralEmulator, kind: str
) -> tuple[list[str], dict[str, str], Path]:
    inputs, out = tmp / "in", tmp / "out"
    inputs.mkdir()
    out.mkdir()
    spec = "mistral:mistral-small-latest" if kind == "mistral" else f"openai:{emu.url}/v1?model=m"
    args = ["judge", "--answers", str(one_answer(inputs)), "--judge", spec,
            "--json", str(out / "r.json"), "--report", str(out / "report")]  # fmt: skip
    return args, {"MISTRAL_SERVER_URL": emu.url}, out


# -- stray whitespace: stripped with a warning naming the variable, never the value ---------
CASES = ["mistral-embedder", "mistral-judge", "openai-judge"]
VARIABLE = {
    "mistral-embedder": "MISTRAL_API_KEY",
    "mistral-judge": "MISTRAL_API_KEY",
    "openai-judge": "OPENAI_API_KEY",
}


def hosted_case(
    case: str, tmp: Path, emu: MistralEmulator
) -> tuple[list[str], dict[str, str], Path]:
    if case == "mistral-embedder":
        return embedder_case(tmp, emu)
    return judge_case(tmp, emu, case.split("-")[0])


@pytest.mark.parametrize("stray", list(STRAY))
@pytest.mark.parametrize("case", CASES)
def test_stray_whitespace_is_stripped_with_a_warning(
    case: str, stray: str, mistral: MistralEmulator, tmp_path: Path
) -> None:
    args, env, out = hosted_case(case, tmp_path, mistral)
    env[VARIABLE[case]] = STRAY[stray]
    r = cli(args, env, out)
    assert r.code == 0, r.stderr
    warnings = [line for line in r.lines if line.startswith("warning:")]
    assert len(warnings) == 1, r.stderr
    assert VARIABLE[case] in warnings[0] and "whitespace" in warnings[0]
    assert not r.leaks(CANARY) and "Traceback" not in r.stderr
    assert mistral.requests and all(
        q["headers"]["authorization"] == f"Bearer {CANARY}" for q in mistral.requests
    )
    assert json.loads((out / "r.json").read_text())["ok"] is True


@pytest.mark.parametrize("case", CASES)
def test_embedded_control_character_is_exit_2_before_any_request(
    case: str, mistral: MistralEmulator, tmp_path: Path
) -> None:
    args, env, out = hosted_case(case, tmp_path, mistral)
    env[VARIABLE[case]] = EMBEDDED
    r = cli(args, env, out)
    assert r.code == 2, r.stderr
    assert len(r.lines) == 1 and r.lines[0].startswith("error: "), r.stderr
    assert VARIABLE[case] in r.lines[0] and "control character" in r.lines[0]
    assert not r.leaks(CANARY[:9]) and not r.leaks(CANARY[9:])
    assert mistral.requests == []
    failed = json.loads((out / "r.json").read_text())  # the failed result, never a success
    assert failed["ok"] is False and VARIABLE[case] in failed["error"]


# -- the Upstash store ---------------------------------------------------------------------
@pytest.fixture
def upstash() -> Iterator[UpstashEmulator]:
    with UpstashEmulator(token=CANARY, exact=True) as emu:
        yield emu


def upstash_case(tmp: Path, emu: UpstashEmulator) -> tuple[list[str], dict[str, str], Path]:
    from indexcheck.testing import HASH32

    inputs, out = tmp / "in", tmp / "out"
    inputs.mkdir()
    out.mkdir()
    saved = os.environ.get("UPSTASH_VECTOR_REST_TOKEN")
    spec = build_upstash(tmp, ["c0", "c1"], HASH32.embed(TEXTS), TEXTS, emulator=emu)
    if saved is None:
        os.environ.pop("UPSTASH_VECTOR_REST_TOKEN", None)
    emu.requests.clear()
    args = ["check-index", "--store", spec, "--chunks", str(chunks_file(inputs)),
            "--embedder", "py:indexcheck.testing:HASH32", "--all",
            "--json", str(out / "r.json"), "--report", str(out / "report")]  # fmt: skip
    return args, {}, out


@pytest.mark.parametrize("stray", list(STRAY))
def test_upstash_token_with_stray_whitespace(
    stray: str, upstash: UpstashEmulator, tmp_path: Path
) -> None:
    args, env, out = upstash_case(tmp_path, upstash)
    env["UPSTASH_VECTOR_REST_TOKEN"] = STRAY[stray]
    r = cli(args, env, out)
    assert r.code == 0, r.stderr
    warnings = [line for line in r.lines if line.startswith("warning:")]
    assert len(warnings) == 1 and "UPSTASH_VECTOR_REST_TOKEN" in warnings[0], r.stderr
    assert not r.leaks(CANARY) and "Traceback" not in r.stderr
    assert upstash.requests


def test_upstash_token_with_a_control_character(upstash: UpstashEmulator, tmp_path: Path) -> None:
    args, env, out = upstash_case(tmp_path, upstash)
    env["UPSTASH_VECTOR_REST_TOKEN"] = EMBEDDED
    r = cli(args, env, out)
    assert r.code == 2 and len(r.lines) == 1, r.stderr
    assert "UPSTASH_VECTOR_REST_TOKEN" in r.lines[0] and "control character" in r.lines[0]
    assert not r.leaks(CANARY[:9]) and not r.leaks(CANARY[9:])
    assert upstash.requests == []


# -- deterministic failures are not retried ------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_client_error_is_one_line_and_sent_once(
    case: str, mistral: MistralEmulator, tmp_path: Path
) -> None:
    args, env, out = hosted_case(case, tmp_path, mistral)
    env[VARIABLE[case]] = CANARY
    mistral.fail(400, times=None)
    r = cli(args, env, out)
    assert r.code in (2, 3) and len(r.lines) == 1, r.stderr
    assert "HTTP 400" in r.lines[0] and not r.leaks(CANARY)
    assert len(mistral.requests) == 1  # the emulator's log: one request, no retry


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
@pytest.mark.parametrize("case", CASES)
def test_client_errors_are_sent_once(case: str, status: int, mistral: MistralEmulator) -> None:
    """Through the real SDKs, in process: every 4xx that states the request is wrong reaches
    the emulator once, with no backoff sleep."""
    from indexcheck.embedders.mistral.embedder import MistralEmbedder
    from indexcheck.errors import IndexcheckError
    from indexcheck.judges.base import JudgeRequest
    from indexcheck.judges.mistral.judge import MistralJudge
    from indexcheck.judges.openai.judge import OpenAIJudge

    sleeps: list[float] = []
    mistral.fail(status, times=None)
    request = JudgeRequest("q", "c", "a", ({"role": "user", "content": "x"},))
    with pytest.raises(IndexcheckError) as info:
        if case == "mistral-embedder":
            MistralEmbedder(api_key=CANARY, server_url=mistral.url, sleep=sleeps.append).embed(
                ["one text"]
            )
        elif case == "mistral-judge":
            MistralJudge("m", api_key=CANARY, server_url=mistral.url, sleep=sleeps.append).ask(
                request
            )
        else:
            OpenAIJudge(f"{mistral.url}/v1", "m", api_key=CANARY, sleep=sleeps.append).ask(request)
    assert f"HTTP {status}" in str(info.value) and CANARY not in str(info.value)
    assert len(mistral.requests) == 1 and sleeps == []


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_upstash_client_errors_are_sent_once(
    status: int, upstash: UpstashEmulator, tmp_path: Path
) -> None:
    args, env, out = upstash_case(tmp_path, upstash)
    env["UPSTASH_VECTOR_REST_TOKEN"] = CANARY
    upstash.fail_next(50, status=status)
    r = cli(args, env, out)
    assert r.code in (2, 3) and len(r.lines) == 1, r.stderr
    assert not r.leaks(CANARY)
    assert len(upstash.requests) == 1


def test_malformed_header_from_the_library_is_not_retried(mistral: MistralEmulator) -> None:
    """A key handed to the library directly skips the environment check; the HTTP client's
    LocalProtocolError (a header it refuses to send) is final: one attempt, no sleep, and
    the message holds no key."""
    from indexcheck.embedders.mistral.embedder import MistralEmbedder
    from indexcheck.judges.base import JudgeRequest
    from indexcheck.judges.mistral.judge import MistralJudge
    from indexcheck.judges.openai.judge import OpenAIJudge

    sleeps: list[float] = []
    bad = CANARY + "\n"
    request = JudgeRequest("q", "c", "a", ({"role": "user", "content": "x"},))
    url, log = mistral.url, sleeps.append
    makers = {
        "embedder": lambda: MistralEmbedder(api_key=bad, server_url=url, sleep=log),
        "mistral": lambda: MistralJudge("m", api_key=bad, server_url=url, sleep=log),
        "openai": lambda: OpenAIJudge(f"{url}/v1", "m", api_key=bad, sleep=log),
    }
    for name, make in makers.items():
        thing = make()
        with pytest.raises(InputError) as info:
            if name == "embedder":
                thing.embed(["one text"])  # type: ignore[attr-defined]
            else:
                thing.ask(request)  # type: ignore[attr-defined]
        assert CANARY not in str(info.value) and info.value.__cause__ is None, name
        assert "malformed" in str(info.value)
        assert thing.stats.requests == 1 and thing.stats.retries == 0, name
    assert sleeps == []


def test_a_transient_error_caused_by_a_malformed_request_is_final() -> None:
    """A provider that files a LocalProtocolError as transient is still not retried."""
    import httpx

    from indexcheck.errors import TransientError
    from indexcheck.judges.base import BaseJudge, JudgeRequest

    class Confused(BaseJudge):
        model_id = "confused"

        def _complete(self, request: JudgeRequest) -> tuple[str, int]:
            try:
                raise httpx.LocalProtocolError(f"Illegal header value b'Bearer {CANARY} '")
            except httpx.LocalProtocolError as exc:
                raise TransientError("connection failed") from exc

    judge = Confused(sleep=lambda s: None)
    with pytest.raises(InputError) as info:
        judge.ask(JudgeRequest("q", "c", "a"))
    assert judge.stats.requests == 1 and CANARY not in str(info.value)


# -- one redactor, whatever raised it ------------------------------------------------------
def test_unmapped_library_error_and_log_lines_are_scrubbed(tmp_path: Path) -> None:
    """A py: embedder hook that logs and raises text holding a secret the environment
    holds: the catch-all line and the log line show *** instead."""
    hook = tmp_path / "leaky_hook.py"
    hook.write_text(
        "import logging, os\n"
        "def embed(texts):\n"
        "    key = os.environ['OPENAI_API_KEY']\n"
        "    logging.getLogger('some.sdk').warning('retrying with key %s', key)\n"
        "    raise RuntimeError(f'Illegal header value Bearer {key}')\n"
    )
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    env = {"OPENAI_API_KEY": CANARY, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    args = ["embed", "--chunks", str(chunks_file(inputs)), "--embedder", "py:leaky_hook:embed",
            "--out", str(out / "v.parquet")]  # fmt: skip
    full = dict(os.environ, **env, INDEXCHECK_QUIET="1")
    r = subprocess.run(
        [sys.executable, "-c", "from indexcheck.cli.app import main; main()", *args],
        env=full, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 3, r.stderr
    assert CANARY not in r.stderr + r.stdout
    assert "***" in r.stderr and "Illegal header value" in r.stderr
    full["INDEXCHECK_DEBUG"] = "1"  # the traceback is scrubbed too
    r = subprocess.run(
        [sys.executable, "-c", "from indexcheck.cli.app import main; main()", *args],
        env=full, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" in r.stderr and CANARY not in r.stderr


def test_scrub_knows_every_form_of_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok/with space+plus")
    monkeypatch.setenv("PWD", "/home/user")  # the shell's folder is no secret
    redact.remember('p@ss"w\\rd')
    text = (
        "a tok/with space+plus b tok%2Fwith%20space%2Bplus c 'p@ss\\\"w\\\\rd' "
        'd "p@ss\\"w\\\\rd" e /home/user'
    )
    out = redact.scrub(text)
    assert "tok" not in out and "p@ss" not in out and "/home/user" in out
    data = redact.scrub_data({"k": ["x tok/with space+plus", 3, None, {'p@ss"w\\rd': 1.5}]})
    assert data == {"k": ["x ***", 3, None, {"***": 1.5}]}


def test_env_secret_checks_at_the_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setenv("X_TEST_API_KEY", "  abcdef123456\r\n")
    with secrets.warnings_to(seen.append):
        assert secrets.env_secret("X_TEST_API_KEY") == "abcdef123456"
        assert secrets.env_secret("X_TEST_API_KEY") == "abcdef123456"
    assert len(seen) == 1 and "X_TEST_API_KEY" in seen[0] and "abcdef" not in seen[0]
    assert redact.scrub("key abcdef123456") == "key ***"
    for bad in ("abc\x08def", "abc\u200bdef", "abc\x1bdef", "abc\x7fdef"):
        monkeypatch.setenv("X_TEST_API_KEY", bad)
        with pytest.raises(
            InputError, match="X_TEST_API_KEY holds an? (control|invisible)"
        ) as info:
            secrets.env_secret("X_TEST_API_KEY")
        assert "abc" not in str(info.value)
    monkeypatch.setenv("X_TEST_API_KEY", "clé-non-ascii")
    with pytest.raises(InputError, match="non-ASCII"):
        secrets.env_secret("X_TEST_API_KEY")
    monkeypatch.delenv("X_TEST_API_KEY")
    assert secrets.env_secret("X_TEST_API_KEY") == ""
    monkeypatch.setenv("X_TEST_API_KEY", " \t ")
    assert secrets.env_secret("X_TEST_API_KEY") == ""


def test_auth_error_is_not_retried_and_names_no_key(mistral: MistralEmulator) -> None:
    from indexcheck.embedders.mistral.embedder import MistralEmbedder

    sleeps: list[float] = []
    embedder = MistralEmbedder(
        api_key="wrong-key-123456", server_url=mistral.url, sleep=sleeps.append
    )
    with pytest.raises(AuthError) as info:
        embedder.embed(["x"])
    assert "wrong-key" not in str(info.value) and sleeps == [] and len(mistral.requests) == 1


def test_a_secret_echoed_by_a_judge_never_reaches_json_or_reports(
    mistral: MistralEmulator, tmp_path: Path
) -> None:
    """A judge reply that quotes the key (kept as ``raw_reply`` of an unparseable answer) is
    scrubbed from --json, judge.md and judge.html."""
    mistral.chat.default = chat.text(f"I cannot comply, your key is {CANARY}")
    args, env, out = judge_case(tmp_path, mistral, "mistral")
    env["MISTRAL_API_KEY"] = CANARY
    r = cli([*args, "--allow-unjudged"], env, out)
    assert r.code in (0, 1), r.stderr
    data = json.loads((out / "r.json").read_text())
    assert "your key is ***" in json.dumps(data)
    assert (out / "report" / "judge.md").exists() and (out / "report" / "judge.html").exists()
    assert not r.leaks(CANARY)


def test_scrubbed_json_never_breaks_a_literal(monkeypatch: pytest.MonkeyPatch) -> None:
    redact.remember("true-secret-value")
    data = {
        "flag": True,
        "msg": 'he said "true-secret-value"',
        "path": Path("/x/true-secret-value"),
    }
    text = redact.scrubbed_json(data, default=str)
    assert json.loads(text) == {"flag": True, "msg": 'he said "***"', "path": "/x/***"}
    assert redact.scrubbed_json({"clean": 1}) == '{"clean": 1}'


def test_the_terminal_summary_shows_no_secret(mistral: MistralEmulator, tmp_path: Path) -> None:
    """A chunk whose id holds the key (pasted into a document) is flagged as a fault: the
    summary on stdout names it with the key scrubbed."""
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    ids = ["c0", f"doc-{CANARY}"]
    vectors = np.stack([expected_vector(TEXTS[0]), expected_vector(TEXTS[0])])  # c1 is wrong
    write_vectors_file(inputs / "v.parquet", ids, vectors, TEXTS)
    chunks = inputs / "chunks.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, TEXTS, strict=True))
    )
    args = ["check-index", "--store", f"parquet:{inputs / 'v.parquet'}", "--chunks", str(chunks),
            "--embedder", "mistral", "--all", "--json", str(out / "r.json")]  # fmt: skip
    r = cli(args, {"MISTRAL_SERVER_URL": mistral.url, "MISTRAL_API_KEY": CANARY}, out)
    assert r.code == 1, r.stderr
    assert "doc-***" in r.stdout and "doc-***" in r.files
    assert not r.leaks(CANARY)


@pytest.mark.parametrize(
    "variable,spec",
    [
        ("QDRANT_API_KEY", "qdrant:http://127.0.0.1:{port}?collection=docs"),
        ("MILVUS_TOKEN", "milvus:http://127.0.0.1:{port}?collection=docs"),
    ],
)
def test_store_tokens_are_checked_before_connecting(
    variable: str, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A control character in a store's token is exit 2 before any connection is tried
    (nothing listens on the port: reaching it would be a different error)."""
    pytest.importorskip("qdrant_client" if variable == "QDRANT_API_KEY" else "pymilvus")
    from indexcheck.stores import open_store
    from tests.util import free_port

    monkeypatch.setenv(variable, EMBEDDED)
    with pytest.raises(InputError, match=f"{variable} holds a control character") as info:
        open_store(spec.format(port=free_port()))
    assert CANARY[:9] not in str(info.value)


def test_upstash_malformed_header_is_not_retried(upstash: UpstashEmulator) -> None:
    """A token handed to the store directly with a CR/LF: one attempt, no sleep, no token."""
    from indexcheck.remote.retry import RetryPolicy
    from indexcheck.stores.upstash.store import UpstashStore

    url = upstash.add_index("raw", 4)
    sleeps: list[float] = []
    store = UpstashStore(
        url, CANARY + "\r\n", retry=RetryPolicy(max_retries=4), sleep=sleeps.append
    )
    with pytest.raises(InputError, match="malformed") as info:
        store.info()
    assert CANARY not in str(info.value) and store.requests == 1 and sleeps == []
    assert upstash.requests == []  # the HTTP client refused to send it


@pytest.mark.parametrize("status,kind", [(401, AuthError), (404, Exception), (422, Exception)])
def test_a_transient_error_with_a_final_status_is_not_retried(status: int, kind: type) -> None:
    """A provider that files a 4xx as transient: the base loop sends it once."""
    from indexcheck.errors import IndexcheckError, TransientError
    from indexcheck.judges.base import BaseJudge, JudgeRequest

    class Refused(Exception):
        status_code = status

    class Confused(BaseJudge):
        model_id = "confused"

        def _complete(self, request: JudgeRequest) -> tuple[str, int]:
            raise TransientError("retry me") from Refused()

    judge = Confused(sleep=lambda s: None)
    with pytest.raises(IndexcheckError) as info:
        judge.ask(JudgeRequest("q", "c", "a"))
    assert isinstance(info.value, kind) and f"HTTP {status}" in str(info.value)
    assert judge.stats.requests == 1 and judge.stats.retries == 0


def test_json_output_is_streamed_and_still_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--json writes its text a piece at a time (json.dumps of a 400,000-row result held
    about 560 MB more than the run itself), byte for byte what json.dumps wrote, and a
    secret in use is still scrubbed (the file is rewound and written scrubbed)."""
    import json

    from indexcheck.output.present import write_json
    from indexcheck.safety import redact

    secret = "sk-streamed-canary-0123456789"
    monkeypatch.setenv("MISTRAL_API_KEY", secret)
    payload = {"rows": [{"id": f"c{i}", "cos": i / 7} for i in range(50)], "note": "é"}
    # every --json result starts with its schema version
    want = json.dumps({"schema_version": 2, **payload}, indent=2, ensure_ascii=False) + "\n"
    from indexcheck.output import present as options

    def whole_text(*args: object, **kwargs: object) -> str:
        pytest.fail("the whole JSON text was built in memory")

    monkeypatch.setattr(redact, "scrubbed_json", whole_text)
    monkeypatch.setattr(options, "scrubbed_json", whole_text)
    out = tmp_path / "r.json"
    write_json(str(out), payload)
    assert out.read_text(encoding="utf-8") == want
    leaky = {**payload, "error": f"key {secret} refused"}
    write_json(str(out), leaky)
    text = out.read_text(encoding="utf-8")
    assert secret not in text and "***" in text
    assert json.loads(text)["error"] == "key *** refused"


def test_strings_inside_numpy_arrays_are_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret inside a numpy array (an array of ids) is scrubbed like one in a list: the
    walk used to pass arrays through, and the encoder's default turned them into lists
    after the scrub (found by review)."""
    from indexcheck.output.present import _jsonable
    from indexcheck.safety.redact import scrub_data, scrubbed_json

    secret = "sk-numpy-canary-0123456789"
    monkeypatch.setenv("MISTRAL_API_KEY", secret)
    data = {"ids": np.array([secret, "c1"]), "one": np.str_(secret), "n": np.float32(0.5)}
    assert secret not in json.dumps(scrub_data(data), default=_jsonable)
    assert secret not in scrubbed_json(data, default=_jsonable)
    assert json.loads(scrubbed_json(data, default=_jsonable))["n"] == 0.5
