"""The evidence sheet's hash chain: every row carries the hash of the previous row and of its own
content, and run.json records the chain's head, its row count and the sha256 of each file.

One chain per run, in this order::

    genesis = sha256("indexcheck-sheet-chain-v1\n" + canonical(run.json without chain/signature))
    cases.jsonl rows -> claim rows (claims.jsonl or claims.parquet) -> revisions of the run

``row_hash`` is sha256 of a row's canonical JSON (sorted keys, no spaces, UTF-8) without
``row_hash`` (and a revision's ``mac``); ``prev_hash`` is the previous row's (the genesis
first). A Parquet claim row is hashed as stored (every column, values as the file's strings or
nulls). With ``INDEXCHECK_SHEET_KEY``, run.json carries ``signature`` (HMAC-SHA256 of its
canonical JSON without it) and each revision ``mac`` (HMAC-SHA256 of its ``row_hash``). What
this detects is in the README ("The evidence sheet").
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import unicodedata
from collections.abc import Mapping
from typing import Any

from ....errors import InputError

ALGORITHM = "sha256"
SIGNATURE = "HMAC-SHA256"
KEY_ENV = "INDEXCHECK_SHEET_KEY"
_GENESIS_TAG = b"indexcheck-sheet-chain-v1\n"
_KEY_ID_TAG = b"indexcheck-sheet-key-id"
#: run.json keys that are not part of the header the genesis is computed from
CHAIN_KEYS = ("chain", "signature")


def canonical(obj: Any) -> bytes:
    """The one byte form every hash and MAC is computed over."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def row_hash(row: Mapping[str, Any]) -> str:
    """sha256 hex of ``row`` without its own ``row_hash`` and ``mac`` (the MAC signs the
    hash); its ``prev_hash`` is included."""
    return sha256_hex(canonical({k: v for k, v in row.items() if k not in ("row_hash", "mac")}))


def genesis(info: Mapping[str, Any]) -> str:
    """The chain's first ``prev_hash``: sha256 of run.json's header (all but chain, signature)."""
    header = {k: v for k, v in info.items() if k not in CHAIN_KEYS}
    return sha256_hex(_GENESIS_TAG + canonical(header))


def link(rows: list[dict[str, Any]], prev: str) -> str:
    """Give each row (in place) its ``prev_hash`` and ``row_hash``; returns the new head."""
    for row in rows:
        row.pop("row_hash", None)
        row["prev_hash"] = prev
        row["row_hash"] = prev = row_hash(row)
    return prev


def first_break(rows: list[tuple[str, dict[str, Any]]], prev: str) -> tuple[str | None, str]:
    """(a message naming the first row that breaks the chain from ``prev``, or None; the head
    reached). ``rows`` are (where, row) pairs, ``where`` naming the file and line."""
    for where, row in rows:
        if row.get("prev_hash") != prev:
            if "prev_hash" not in row:
                return f"{where} carries no chain hashes (not written by this indexcheck)", prev
            return (
                f"{where} does not follow the row before it (its previous hash differs): "
                "a row was dropped, inserted or reordered before it",
                prev,
            )
        if row.get("row_hash") != row_hash(row):
            return f"{where} does not match its own hash: it was edited by hand", prev
        prev = str(row["row_hash"])
    return None, prev


def mac(key: bytes, data: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def key_id(key: bytes) -> str:
    """A short public name of the key (not the key): tells 'another key' from 'forged'."""
    return mac(key, _KEY_ID_TAG)[:16]


def sign_run(info: dict[str, Any], key: bytes) -> None:
    """Add ``signature`` (HMAC-SHA256 of run.json without it) to ``info`` in place."""
    info.pop("signature", None)
    body = canonical(info)
    info["signature"] = {"algorithm": SIGNATURE, "key_id": key_id(key), "mac": mac(key, body)}


def check_signature(info: Mapping[str, Any], key: bytes, where: str) -> str | None:
    """A message when run.json (or a manifest) is unsigned or its MAC does not match ``key``."""
    sig = info.get("signature")
    if not isinstance(sig, dict) or "mac" not in sig:
        return (
            f"{where} is not signed, but {KEY_ENV} is set: a run written without the key, "
            "or a forgery that dropped the signature"
        )
    body = canonical({k: v for k, v in info.items() if k != "signature"})
    if hmac.compare_digest(str(sig["mac"]), mac(key, body)):
        return None
    if sig.get("key_id") != key_id(key):
        return f"{where} was signed with another key than {KEY_ENV} (or its signature was forged)"
    return f"{where} does not match its signature: it was edited or re-forged"


def sheet_key(environ: Mapping[str, str] | None = None) -> tuple[bytes | None, str | None]:
    """(the signing key from ``INDEXCHECK_SHEET_KEY`` or None, a warning to show or None).

    Surrounding whitespace is stripped with a warning naming the variable; an empty value or
    one holding a control character is InputError (exit 2) naming the variable, never the
    value. The same validation as every secret read from the environment."""
    raw = (os.environ if environ is None else environ).get(KEY_ENV)
    if raw is None:
        return None, None
    value = raw.strip()
    warning = None
    if value != raw:
        warning = f"{KEY_ENV} had surrounding whitespace (a pasted key?); it was stripped"
    if not value:
        raise InputError(f"{KEY_ENV} is set but empty; set the sheet key or unset the variable")
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise InputError(
            f"{KEY_ENV} holds a control character; set it again without one (it is not shown)"
        )
    return value.encode("utf-8", "surrogateescape"), warning


__all__ = [
    "KEY_ENV",
    "canonical",
    "check_signature",
    "first_break",
    "genesis",
    "key_id",
    "link",
    "mac",
    "row_hash",
    "sha256_hex",
    "sheet_key",
    "sign_run",
]
