"""The SDK error tables (indexcheck/remote/translate.py): how a row matches, which row wins,
and how the base applies a table (a store that declares ``errors`` and nothing else)."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from indexcheck.errors import (
    AuthError,
    BackendUnavailableError,
    InputError,
    RateLimitError,
    SpecError,
    TransientError,
)
from indexcheck.remote.retry import RetryPolicy
from indexcheck.remote.translate import Caught, ErrorMap, Rule, doing, matches
from indexcheck.stores.base import BaseStore


class NotFoundError(Exception):
    """Named like chromadb's, defined here: a bare name matches along the MRO."""


class MissingCollection(NotFoundError):
    pass


@pytest.fixture
def fake_sdk() -> Iterator[types.ModuleType]:
    mod = types.ModuleType("fakesdk")
    errors = types.ModuleType("fakesdk.errors")

    class Boom(Exception):
        pass

    Boom.__module__ = "fakesdk.errors"
    errors.Boom = Boom  # type: ignore[attr-defined]
    mod.errors = errors  # type: ignore[attr-defined]
    sys.modules["fakesdk"], sys.modules["fakesdk.errors"] = mod, errors
    yield mod
    del sys.modules["fakesdk"], sys.modules["fakesdk.errors"]


def test_patterns_match_by_class_name_lazy_path_and_module(fake_sdk: types.ModuleType) -> None:
    boom = fake_sdk.errors.Boom("x")
    assert matches(ValueError, ValueError("x")) and not matches(KeyError, ValueError("x"))
    assert matches("NotFoundError", MissingCollection("x"))  # along the MRO
    assert not matches("NotFoundError", ValueError("x"))
    assert matches("fakesdk:errors.Boom", boom)
    assert not matches("fakesdk:errors.Missing", boom)
    assert matches("fakesdk.*", boom) and not matches("fake.*", boom)
    # a lazy path never imports: an SDK that is not loaded matches nothing
    assert "no_such_sdk" not in sys.modules
    assert not matches("no_such_sdk:Error", boom)
    assert "no_such_sdk" not in sys.modules


TABLE = ErrorMap(
    Rule("NotFoundError", InputError, "{what}: not found ({text})"),
    Rule(
        Exception,
        TransientError,
        "HTTP {status}",
        when=lambda c: c.status == 429,
        options={"rate_limited": lambda c: True},
    ),
    Rule(Exception, AuthError, "{what}: refused", when=lambda c: "denied" in c.text),
    Rule(OSError, BackendUnavailableError, "{what} failed: {name}: {text}"),
)


def test_the_first_matching_row_wins_and_formats_its_fields() -> None:
    err = TABLE.translate(MissingCollection("docs"), what="reading docs", status=None)
    assert type(err) is InputError and str(err) == "reading docs: not found (docs)"
    err = TABLE.translate(OSError("access denied"), what="w", status=None)
    assert type(err) is AuthError and str(err) == "w: refused"
    err = TABLE.translate(OSError("reset"), what="w", status=None)
    assert type(err) is BackendUnavailableError and str(err) == "w failed: OSError: reset"
    err = TABLE.translate(KeyError("x"), what="w", status=429)
    assert isinstance(err, TransientError) and err.rate_limited and str(err) == "HTTP 429"
    assert TABLE.translate(KeyError("bug"), what="w", status=None) is None


def test_mapping_translates_once_and_lets_our_errors_and_bugs_through() -> None:
    with pytest.raises(InputError, match="opening: not found"):
        with TABLE.mapping(what="opening", status=None):
            raise MissingCollection("docs")
    with pytest.raises(SpecError, match="ours"):
        with TABLE.mapping(what="opening", status=None):
            raise SpecError("ours")
    with pytest.raises(KeyError):  # not the SDK's: a bug stays a bug
        with TABLE.mapping(what="opening", status=None):
            raise KeyError("bug")
    with pytest.raises(RateLimitError, match="still rate-limited opening after 0 retries"):
        with TABLE.mapping(what="opening", status=429, label="fake"):
            raise KeyError("slow")


def _status(caught: Caught) -> dict[str, int]:
    return {"status": getattr(caught.exc, "status", 0)}


#: facts read off the exception (``fields``) and rows of one phase (``doing``)
PHASED = ErrorMap(
    Rule(OSError, InputError, "cannot open {path} ({text})", when=doing("open")),
    Rule(KeyError, AuthError, "{where}: HTTP {status}", when=lambda c: c.status == 401),
    Rule(("no_such_sdk.errors:Boom", LookupError), BackendUnavailableError, "{where} {name}"),
    fields=_status,
)


def _key_error(status: int) -> KeyError:
    exc = KeyError("k")
    exc.status = status  # type: ignore[attr-defined]
    return exc


def test_fields_read_facts_off_the_exception_for_every_row() -> None:
    auth = PHASED.translate(_key_error(401), where="srv")
    assert type(auth) is AuthError and str(auth) == "srv: HTTP 401"
    other = PHASED.translate(_key_error(500), where="srv")  # falls to LookupError
    assert type(other) is BackendUnavailableError and str(other) == "srv KeyError"


def test_a_rule_reads_the_first_line_of_a_long_many_line_error() -> None:
    """``{line}``: the first non-empty line, at most 200 characters; the class name when the
    error says nothing (a server's multi-line dump never floods a message)."""
    table = ErrorMap(Rule(ValueError, BackendUnavailableError, "failed ({name}: {line})"))
    err = table.translate(ValueError("\n" + "x" * 300 + "\nsecond line"))
    assert str(err) == f"failed (ValueError: {'x' * 200})"
    assert str(table.translate(ValueError(""))) == "failed (ValueError: ValueError)"


def test_rows_may_hold_only_while_doing_one_thing() -> None:
    exc = OSError("no {such} file")  # braces in the exception text are data, not a template
    opened = PHASED.translate(exc, doing="open", path="/x")
    assert type(opened) is InputError and str(opened) == "cannot open /x (no {such} file)"
    assert PHASED.translate(exc, doing="read", path="/x") is None


def test_call_runs_once_and_translates_only_what_a_row_names() -> None:
    with pytest.raises(ValueError, match="bug"):
        PHASED.call("read", lambda: (_ for _ in ()).throw(ValueError("bug")), where="srv")
    with pytest.raises(BackendUnavailableError, match="srv IndexError"):
        PHASED.call("read", lambda: [][1], where="srv")
    with pytest.raises(InputError, match="cannot open /x"):
        PHASED.call("open", lambda: open("/no/such/dir/x"), path="/x")
    assert PHASED.call("read", lambda: 7, where="srv") == 7


class TableStore(BaseStore):
    """A store that declares an error table and a retry policy, nothing else about errors."""

    scheme = "tabled"
    errors = ErrorMap(
        Rule("NotFoundError", InputError, "{label} {doing}: no such {thing}"),
        Rule(TimeoutError, TransientError, "timed out"),
        unavailable="{label} {doing} gave up after {attempts} retries ({err})",
    )
    retry = RetryPolicy(max_retries=2, base_delay=0.0)

    def _error_fields(self, doing: str) -> dict[str, str]:
        return {"thing": "collection"}

    def _sleep(self, seconds: float) -> None:
        pass


def test_the_base_applies_a_stores_table_in_call_and_translating() -> None:
    store = TableStore()

    def missing() -> None:
        raise MissingCollection("docs")

    def slow() -> None:
        raise TimeoutError("slow")

    with pytest.raises(InputError) as info:
        store._call("reading", missing)
    assert str(info.value) == "tabled reading: no such collection"
    with pytest.raises(BackendUnavailableError) as down:
        store._call("reading", slow)
    assert str(down.value) == "tabled reading gave up after 2 retries (timed out)"
    with pytest.raises(BackendUnavailableError, match="after 0 retries"):
        with store._translating("scanning"):
            slow()


def test_every_sdk_registers_its_rows_in_the_one_table() -> None:
    """One table: each SDK's rows under a service name, one translate() for all of them."""
    import indexcheck.engines
    import indexcheck.stores.chroma.connect
    import indexcheck.stores.lancedb.opening
    import indexcheck.stores.milvus.opening
    import indexcheck.stores.pgvector.connect
    import indexcheck.stores.qdrant.opening
    import indexcheck.stores.upstash.errors  # noqa: F401
    from indexcheck.remote.http import HTTP_ERRORS
    from indexcheck.remote.translate import TABLE, translate

    names = {"chroma", "lancedb", "milvus", "qdrant", "pgvector", "upstash", "ray", "http"}
    assert names <= set(TABLE) and TABLE["http"] is HTTP_ERRORS
    assert translate(KeyError("bug"), "http", who="m", server="s") is None


class _Refused(Exception):
    status_code = 401
    body = '{"message": "no"}'


def test_http_rows_read_statuses_once_and_chain_only_what_the_retry_reads() -> None:
    import indexcheck.remote.http  # noqa: F401  (registers the "http" rows)
    from indexcheck.remote.translate import translating

    fields = {
        "who": "mistral:m",
        "server": "srv",
        "key_env": "KEY",
        "malformed_fix": "fix",
        "reject_fix": "check",
        "timeout_s": 2.0,
    }
    with pytest.raises(AuthError) as auth:
        with translating("http", **fields):
            raise _Refused()
    assert str(auth.value) == (
        "mistral:m: the server refused the API key (HTTP 401); set KEY to a valid key for srv"
    )
    assert auth.value.__cause__ is None and auth.value.__suppress_context__
    slow = type("TimeoutException", (Exception,), {})
    with pytest.raises(TransientError) as transient:
        with translating("http", **fields):
            raise slow()
    assert str(transient.value) == "TimeoutException talking to srv (--timeout 2 s per request)"
    assert isinstance(transient.value.__cause__, slow)
    with pytest.raises(SpecError):  # ours pass unchanged
        with translating("http", **fields):
            raise SpecError("ours")
