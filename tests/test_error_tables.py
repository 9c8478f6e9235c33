"""The declarative SDK error tables (stores/error_tables.py) and the one metric table."""

from __future__ import annotations

import pytest

from indexcheck.errors import AuthError, BackendUnavailableError, InputError
from indexcheck.stores.error_tables import Caller, ErrorTable, Rule, apply_error_table, doing

TABLE = ErrorTable(
    facts=lambda exc: {"status": getattr(exc, "status", 0)},
    rules=(
        Rule("builtins:OSError", InputError, "cannot open {path} ({text})", when=doing("open")),
        Rule(
            "builtins:KeyError",
            AuthError,
            "{where}: HTTP {status}",
            when=lambda f: f["status"] == 401,
        ),
        Rule(
            ("no_such_sdk.errors:Boom", "builtins:LookupError"),
            BackendUnavailableError,
            "{where} {type}",
        ),
    ),
)


def _key_error(status: int) -> KeyError:
    exc = KeyError("k")
    exc.status = status  # type: ignore[attr-defined]
    return exc


def test_first_matching_rule_wins_and_conditions_are_checked() -> None:
    auth = apply_error_table(TABLE, _key_error(401), where="srv")
    assert type(auth) is AuthError and str(auth) == "srv: HTTP 401"
    other = apply_error_table(TABLE, _key_error(500), where="srv")  # falls to LookupError
    assert type(other) is BackendUnavailableError and str(other) == "srv KeyError"


def test_rules_may_hold_only_while_doing_one_thing() -> None:
    exc = OSError("no {such} file")  # braces in the exception text are data, not a template
    opened = apply_error_table(TABLE, exc, doing="open", path="/x")
    assert type(opened) is InputError and str(opened) == "cannot open /x (no {such} file)"
    assert apply_error_table(TABLE, exc, doing="read", path="/x") is None


def test_what_no_rule_names_is_not_translated() -> None:
    assert apply_error_table(TABLE, ValueError("bug"), where="srv") is None
    call = Caller(TABLE, where="srv")
    with pytest.raises(ValueError, match="bug"):
        call("read", lambda: (_ for _ in ()).throw(ValueError("bug")))
    with pytest.raises(BackendUnavailableError, match="srv IndexError"):
        call("read", lambda: [][1])
    assert call("read", lambda: 7) == 7


def test_every_store_takes_its_scores_from_the_one_metric_table() -> None:
    from indexcheck.stores import _local, chroma, lancedb, milvus, pgvector_sql, qdrant
    from indexcheck.stores.metric_table import scores_of

    assert chroma.SPACE_SCORES is scores_of("chroma")
    assert lancedb.DISTANCE_SCORES is scores_of("lancedb")
    assert milvus.METRICS is scores_of("milvus")
    assert qdrant.DISTANCES is scores_of("qdrant")
    local = scores_of("local")
    assert {m: v[1:] for m, v in _local.LOCAL_METRICS.items()} == {
        m: tuple(s) for m, s in local.items()
    }
    assert {m: v[1] for m, v in pgvector_sql.METRICS.items()} == {
        m: s.formula for m, s in scores_of("pgvector").items()
    }
    # what users saw before the table existed, unchanged
    assert dict(scores_of("chroma")) == {
        "l2": ("l2^2", False),
        "ip": ("1-dot", False),
        "cosine": ("1-cos", False),
    }
    assert pgvector_sql.METRICS == {
        "cosine": ("<=>", "1-cos"),
        "l2": ("<->", "l2"),
        "ip": ("<#>", "-dot"),
        "l1": ("<+>", "l1"),
    }
