"""One retry loop for stores, embedders and judges (issue 19): :meth:`RetryPolicy.run`
honours the policy's retries, a cause no retry can fix, Retry-After and the ``max_wait``
budget; a judge gives up within its max wait, and ``indexcheck judge`` and ``questions
generate`` honour ``--timeout`` and ``--max-wait`` against a loopback server that stalls."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import (
    AuthError,
    BackendUnavailableError,
    InputError,
    RateLimitError,
    TransientError,
)
from indexcheck.remote.retry import RetryPolicy
from tests.emulators.mistral_emulator import MistralEmulator

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-retry-test-71b4"


@dataclass
class Stats:
    requests: int = 0
    seconds: float = 0.0
    retries: int = 0


class Failing:
    """A call that raises the given errors in turn, then returns ``"done"``."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def gave_up(err: TransientError, attempts: int, waited: float) -> Exception:
    return BackendUnavailableError(f"gave up after {attempts} retries and {waited:.1f} s: {err}")


def run(policy: RetryPolicy, call: Failing, **kw: object) -> tuple[str, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("gave_up", gave_up)
    out = policy.run(call, who="svc", sleep=sleeps.append, rng=random.Random(0), **kw)  # type: ignore[arg-type]
    return out, sleeps


def test_transient_failures_are_retried_and_counted() -> None:
    stats, retried = Stats(), []
    call = Failing(TransientError("HTTP 503"), TransientError("HTTP 502"))
    out, sleeps = run(RetryPolicy(), call, stats=stats, on_retry=lambda: retried.append(1))
    assert out == "done" and call.calls == 3 and len(sleeps) == 2 and len(retried) == 2
    assert (stats.requests, stats.retries) == (3, 2) and stats.seconds >= 0


def test_retries_stop_at_the_policy_and_chain_as_asked() -> None:
    call = Failing(*[TransientError("HTTP 503")] * 10)
    with pytest.raises(BackendUnavailableError, match="after 3 retries") as info:
        run(RetryPolicy(max_retries=3), call)
    assert call.calls == 4 and isinstance(info.value.__cause__, TransientError)
    call = Failing(*[TransientError("HTTP 503")] * 10)
    with pytest.raises(BackendUnavailableError) as info:
        run(RetryPolicy(max_retries=0), call, chain=False)
    assert call.calls == 1 and info.value.__cause__ is None and info.value.__suppress_context__


class _Refused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status


def _transient_from(cause: BaseException) -> TransientError:
    try:
        raise TransientError("mapped as transient") from cause
    except TransientError as err:
        return err


@pytest.mark.parametrize(
    ("cause", "error"),
    [(_Refused(404), BackendUnavailableError), (_Refused(401), AuthError)],
)
def test_what_cannot_succeed_is_raised_at_once(cause: Exception, error: type) -> None:
    call = Failing(_transient_from(cause))
    with pytest.raises(error, match="no retry can fix"):
        run(RetryPolicy(), call)
    assert call.calls == 1


def test_a_malformed_request_is_bad_input_at_once() -> None:
    class LocalProtocolError(Exception):
        pass

    call = Failing(_transient_from(LocalProtocolError("Illegal header value b'sk-\\n'")))
    with pytest.raises(InputError, match="malformed") as info:
        run(RetryPolicy(), call)
    assert call.calls == 1 and "sk-" not in str(info.value)


def test_retry_after_sets_the_delay_capped_by_max_delay() -> None:
    seen: list[TransientError] = []
    call = Failing(
        TransientError("HTTP 429", rate_limited=True, retry_after=3.0),
        TransientError("HTTP 429", rate_limited=True, retry_after=99.0),
    )
    _, sleeps = run(RetryPolicy(max_delay=20.0), call, on_transient=seen.append)
    assert sleeps == [3.0, 20.0] and [e.retry_after for e in seen] == [3.0, 99.0]


def test_the_budget_stops_before_crossing_max_wait() -> None:
    call = Failing(*[TransientError("HTTP 503", retry_after=1.0)] * 50)
    with pytest.raises(BackendUnavailableError, match="after 3 retries"):
        run(RetryPolicy(max_retries=50, max_wait=3.5), call)
    assert call.calls == 4


def test_what_is_not_transient_passes_through_untouched() -> None:
    call = Failing(KeyError("not ours"))
    with pytest.raises(KeyError):
        run(RetryPolicy(), call)
    assert call.calls == 1


# -- judges against a loopback server ---------------------------------------------------------
@pytest.fixture
def emu(monkeypatch: pytest.MonkeyPatch) -> Iterator[MistralEmulator]:
    with MistralEmulator(api_key=KEY) as server:
        monkeypatch.setenv("MISTRAL_API_KEY", KEY)
        monkeypatch.setenv("MISTRAL_SERVER_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("INDEXCHECK_QUIET", "1")
        yield server


def _judge(kind: str, emu: MistralEmulator, retry: RetryPolicy) -> object:
    if kind == "mistral":
        from indexcheck.judges.mistral.judge import MistralJudge

        return MistralJudge("m", retry=retry)
    from indexcheck.judges.openai.judge import OpenAIJudge

    return OpenAIJudge(f"{emu.url}/v1", "m", retry=retry)


@pytest.mark.parametrize("kind", ["mistral", "openai"])
def test_a_judge_gives_up_within_its_max_wait(kind: str, emu: MistralEmulator) -> None:
    from indexcheck.judges.base import JudgeRequest

    pytest.importorskip("mistralai" if kind == "mistral" else "openai")
    emu.fail(503, times=None, retry_after=1)  # a server that says "come back in 1 s", forever
    judge = _judge(kind, emu, RetryPolicy(max_wait=2.0))
    request = JudgeRequest("q", "c", "a", ({"role": "user", "content": "a"},))
    t0 = time.monotonic()
    with pytest.raises(BackendUnavailableError) as info:
        judge.ask(request)  # type: ignore[attr-defined]
    elapsed = time.monotonic() - t0
    assert elapsed < 2.0 + 1.5, f"ran {elapsed:.1f} s past a max wait of 2 s"
    assert "--max-wait 2 s" in str(info.value) and KEY not in str(info.value)


@pytest.mark.parametrize("kind", ["mistral", "openai"])
def test_a_rate_limited_judge_names_its_budget(kind: str, emu: MistralEmulator) -> None:
    from indexcheck.judges.base import JudgeRequest

    pytest.importorskip("mistralai" if kind == "mistral" else "openai")
    emu.fail(429, times=None, retry_after=0.5)
    judge = _judge(kind, emu, RetryPolicy(max_wait=1.0))
    request = JudgeRequest("q", "c", "a", ({"role": "user", "content": "a"},))
    with pytest.raises(RateLimitError, match=r"still rate limited \(429\).*--max-wait 1 s"):
        judge.ask(request)  # type: ignore[attr-defined]


# -- the CLI: --timeout and --max-wait reach the judge and the question generator -------------
STALL_S = 10.0  # the server sits on each request this long
TIMEOUT, MAX_WAIT = 0.5, 1.5


def _one_answer(tmp_path: Path) -> Path:
    row = json.loads((ROOT / "fixtures" / "judge" / "answers.jsonl").read_text().splitlines()[1])
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def _stalled_run(emu: MistralEmulator, args: list[str]) -> tuple[int, str, float]:
    """Run the CLI against a server that stalls; the seconds from its first request to the
    end of the run (reading the chunks and embedding them come before, and do not count)."""
    emu.delay_s = STALL_S
    first: list[float] = []
    handle = emu.handle

    def timed(*a: Any) -> Any:
        first.append(time.monotonic())
        return handle(*a)

    emu.handle = timed  # type: ignore[method-assign]
    waits = ["--timeout", f"{TIMEOUT:g}", "--max-wait", f"{MAX_WAIT:g}"]
    r = CliRunner().invoke(cli, [*args, *waits])
    end = time.monotonic()
    assert first, r.output
    return r.exit_code, r.stderr, end - first[0]


@pytest.mark.parametrize("judge", ["mistral:m", "openai"])
def test_judge_honours_timeout_and_max_wait(
    judge: str, emu: MistralEmulator, tmp_path: Path
) -> None:
    spec = f"openai:{emu.url}/v1?model=m" if judge == "openai" else judge
    code, err, elapsed = _stalled_run(
        emu, ["judge", "--answers", str(_one_answer(tmp_path)), "--judge", spec]
    )
    assert code == 3, err
    assert elapsed < MAX_WAIT + TIMEOUT + 2.0, f"ran {elapsed:.1f} s for --max-wait {MAX_WAIT}"
    assert f"--max-wait {MAX_WAIT:g} s" in err and "Traceback" not in err


def test_questions_generate_honours_timeout_and_max_wait(
    emu: MistralEmulator, tmp_path: Path
) -> None:
    args = ["questions", "generate", "--chunks", str(ROOT / "fixtures" / "chunks.jsonl")]
    args += ["--n", "1", "--oos", "0", "--generator", "mistral:m"]
    args += ["--out", str(tmp_path / "q.jsonl")]
    code, err, elapsed = _stalled_run(emu, args)
    assert code == 3, err
    assert elapsed < MAX_WAIT + TIMEOUT + 2.0, f"ran {elapsed:.1f} s for --max-wait {MAX_WAIT}"
    assert f"--max-wait {MAX_WAIT:g} s" in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["mistral", "openai"])
def test_a_judge_reads_its_limits_from_the_environment(
    kind: str, emu: MistralEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mistralai" if kind == "mistral" else "openai")
    monkeypatch.delenv("INDEXCHECK_TIMEOUT", raising=False)
    monkeypatch.delenv("INDEXCHECK_MAX_WAIT", raising=False)
    judge = _judge(kind, emu, None)  # type: ignore[arg-type]
    assert (judge.timeout_s, judge.retry.max_wait) == (120.0, 240.0)  # type: ignore[attr-defined]
    monkeypatch.setenv("INDEXCHECK_TIMEOUT", "7")
    monkeypatch.setenv("INDEXCHECK_MAX_WAIT", "30")
    judge = _judge(kind, emu, None)  # type: ignore[arg-type]
    assert (judge.timeout_s, judge.retry.max_wait) == (7.0, 30.0)  # type: ignore[attr-defined]


def test_hooks_come_as_one_value_or_one_by_one() -> None:
    from indexcheck.remote.retry import RetryHooks

    stats, sleeps = Stats(), []
    hooks = RetryHooks(sleep=sleeps.append, rng=random.Random(0), stats=stats)
    call = Failing(TransientError("HTTP 503"))
    assert RetryPolicy().run(call, who="svc", hooks=hooks) == "done"
    assert stats.requests == 2 and stats.retries == 1 and len(sleeps) == 1
    with pytest.raises(TypeError):
        RetryPolicy().run(call, who="svc", naps=sleeps.append)  # type: ignore[call-arg]
