"""``repair --out``: where a repaired copy goes, parsed at the face before any work with
the grammar of ``--store`` specs (``KIND:LOCATION?key=value``), so the command below gets
what the spec names and never parses one. A plain path is a NEW folder holding
``vectors.parquet`` (and a FAISS index for a FAISS source); ``chroma:DIR?collection=C``,
``lancedb:DIR?table=T``, ``qdrant:DIR?collection=C``, ``milvus:DIR?collection=C`` (Milvus
Lite), ``faiss:DIR`` and ``parquet:DIR`` name a NEW folder holding that kind of store;
``pgvector:postgresql://...?table=NEW`` a new table in that database, and
``upstash:URL?namespace=NEW`` and ``pinecone:INDEX?namespace=NEW`` a new namespace
(hosted: with --yes)."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SpecError
from ..safety.redact import remember
from ..safety.secrets import spec_password
from .params import Choice, Param, StoreSpec, Str, check_params
from .pgvector.connect import LIBPQ_KEYS
from .pgvector.connect import parse_target as pgvector_target

#: target kind -> the options its spec takes (unknown ones refused with a did-you-mean)
KINDS: dict[str, dict[str, Param]] = {
    "folder": {},
    "parquet": {},
    "faiss": {"layout": Choice("langchain", "indexcheck")},
    "chroma": {"collection": Str()},
    "lancedb": {"table": Str()},
    "qdrant": {"collection": Str()},
    "milvus": {"collection": Str()},
    "pgvector": {"table": Str(), "schema": Str(), **{k: Str() for k in LIBPQ_KEYS}},
    "upstash": {"namespace": Str()},
    "pinecone": {"namespace": Str(), "host": Str()},
}
#: the kinds written on a server (a staging table renamed, or a new namespace), not in a
#: new folder
SERVER = ("pgvector", "upstash", "pinecone")
#: the hosted kinds: writing to them needs --yes
HOSTED = ("upstash", "pinecone")
#: what names the new table or namespace of a server kind
NEW_NAME = {
    "pgvector": ("table", "e.g. ?table=fixed"),
    "upstash": ("namespace", "e.g. ?namespace=fixed"),
    "pinecone": ("namespace", "e.g. ?namespace=fixed"),
}
#: store kinds repair reads but cannot write a new collection of yet
NOT_YET = ("llamaindex", "jsonl", "sqlitevec")
UPSTASH_URL_ENV = "UPSTASH_VECTOR_REST_URL"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_+-]+):(?![\\/]{2})")
EXAMPLE = "e.g. --out ./fixed or --out chroma:./fixed?collection=docs"


@dataclass(frozen=True)
class PineconeNamespace:
    """The index name, control-plane host (None: Pinecone's) and namespace a spec names."""

    index: str
    host: str | None
    namespace: str


@dataclass(frozen=True)
class UpstashNamespace:
    """The index URL and namespace a spec names."""

    url: str
    namespace: str


@dataclass(frozen=True)
class TargetSpec:
    """A parsed ``--out``: ``kind`` (``folder`` for a plain path), the NEW ``folder`` it
    writes (unused for a server kind: ``text`` names the table), its checked options, and,
    for a server kind, what it names (``names``: a pgvector ``Target``, a
    ``PineconeNamespace`` or an ``UpstashNamespace``) and what the source spec names when
    the source is of the same kind (``source``, else None)."""

    kind: str
    folder: Path
    params: dict[str, Any]
    text: str
    names: Any = None
    source: Any = None

    def param(self, key: str, default: str) -> str:
        value = self.params.get(key)
        return str(value) if value else default


def pinecone_namespace(parsed: StoreSpec) -> PineconeNamespace:
    """What a ``pinecone:`` spec names (``""`` and ``__default__`` are the default one)."""
    ns = parsed.params.get("namespace", "")
    return PineconeNamespace(parsed.location.strip(), parsed.params.get("host") or None,
                             "" if ns == "__default__" else ns)  # fmt: skip


def upstash_namespace(parsed: StoreSpec) -> UpstashNamespace:
    """What an ``upstash:`` spec names; SpecError (exit 2) when it names no index URL."""
    url = parsed.location.strip() or os.environ.get(UPSTASH_URL_ENV, "").strip()
    if not url.startswith(("http://", "https://")):
        raise SpecError(
            f"--out upstash: needs the index URL (https://<index>.upstash.io) or {UPSTASH_URL_ENV}"
        )
    return UpstashNamespace(url.rstrip("/"), parsed.params.get("namespace", ""))


def _names(text: str, parsed: StoreSpec) -> Any:
    """What the server spec ``text`` (``parsed``) names (a pgvector spec's password is
    scrubbed from every message from now on)."""
    if parsed.scheme == "pgvector":
        remember(spec_password(text))
        return pgvector_target(parsed)
    if parsed.scheme == "pinecone":
        return pinecone_namespace(parsed)
    return upstash_namespace(parsed)


def parse_target(out: str | Path, source: str = "") -> TargetSpec:
    """The target ``out`` names (``source``: the source's spec, compared with a server
    target of its kind); SpecError (exit 2) for an unknown kind or option (with the closest
    known one) or a location that is not a local folder."""
    if isinstance(out, Path) or not _SCHEME.match(str(out)):
        return TargetSpec("folder", Path(out), {}, str(out))
    text = str(out)
    parsed = StoreSpec.parse(text)
    if parsed.scheme in NOT_YET:
        raise SpecError(
            f"--out {parsed.scheme}:... is not written by repair yet; pass --out DIR for a "
            "Parquet copy (vectors.parquet) to bulk-load, or one of: "
            + ", ".join(f"{k}:DIR" for k in KINDS if k not in ("folder", *SERVER))
            + ", pgvector:DSN?table=NEW, upstash:URL?namespace=NEW, pinecone:INDEX?namespace=NEW"
        )
    if parsed.scheme not in KINDS or parsed.scheme == "folder":
        known = [k for k in KINDS if k not in ("folder", *SERVER)]
        close = difflib.get_close_matches(parsed.scheme, known + list(NOT_YET), n=1)
        guess = f"; did you mean {close[0]}?" if close else ";"
        raise SpecError(
            f"--out {text}: unknown target kind '{parsed.scheme}'{guess} use a folder or one "
            f"of {', '.join(k + ':DIR' for k in known)}, pgvector:DSN?table=NEW ({EXAMPLE})"
        )
    loc = parsed.location
    if parsed.scheme in SERVER:
        params = check_params(f"--out {parsed.scheme}", parsed.params, KINDS[parsed.scheme])
        key, example = NEW_NAME[parsed.scheme]
        parsed.require(key, f"name a NEW {key} in the source's {parsed.scheme}, {example}")
        same = source.startswith(f"{parsed.scheme}:")
        names = _names(text, parsed)
        return TargetSpec(parsed.scheme, Path(), params, text, names,
                          _names(source, StoreSpec.parse(source)) if same else None)  # fmt: skip
    if not loc or "://" in loc or loc.startswith("//"):
        raise SpecError(
            f"--out {text}: a {parsed.scheme} target is a NEW local folder, not "
            f"'{loc or '(nothing)'}' ({EXAMPLE})"
        )
    params = check_params(f"--out {parsed.scheme}", parsed.params, KINDS[parsed.scheme])
    return TargetSpec(parsed.scheme, Path(loc), params, text)


__all__ = ["HOSTED", "KINDS", "NOT_YET", "SERVER", "PineconeNamespace", "TargetSpec",
           "UpstashNamespace", "parse_target"]  # fmt: skip
