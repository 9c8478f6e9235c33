"""``--out``: where the repaired copy goes, parsed before any work with the grammar of
``--store`` specs (``KIND:LOCATION?key=value``). A plain path is a NEW folder holding
``vectors.parquet`` (and a FAISS index for a FAISS source); ``chroma:DIR?collection=C``,
``lancedb:DIR?table=T``, ``qdrant:DIR?collection=C``, ``milvus:DIR?collection=C`` (Milvus
Lite), ``faiss:DIR`` and ``parquet:DIR``
name a NEW folder holding that kind of store (and ``vectors.parquet`` beside it);
``pgvector:postgresql://...?table=NEW`` a new table in that database and
``upstash:URL?namespace=NEW`` and ``pinecone:INDEX?namespace=NEW`` a new namespace
(hosted: with --yes)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import SpecError
from ....stores.params import Choice, Param, StoreSpec, Str, check_params
from ....stores.pgvector.connect import LIBPQ_KEYS

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
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_+-]+):(?![\\/]{2})")
EXAMPLE = "e.g. --out ./fixed or --out chroma:./fixed?collection=docs"


@dataclass(frozen=True)
class TargetSpec:
    """A parsed ``--out``: ``kind`` (``folder`` for a plain path), the NEW ``folder`` it
    writes (unused for a server kind: ``text`` names the table), and its checked options."""

    kind: str
    folder: Path
    params: dict[str, Any]
    text: str

    def param(self, key: str, default: str) -> str:
        value = self.params.get(key)
        return str(value) if value else default


def parse_target(out: str | Path) -> TargetSpec:
    """The target ``out`` names; SpecError (exit 2) for an unknown kind or option (with
    the closest known one) or a location that is not a local folder."""
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
        return TargetSpec(parsed.scheme, Path(), params, text)
    if not loc or "://" in loc or loc.startswith("//"):
        raise SpecError(
            f"--out {text}: a {parsed.scheme} target is a NEW local folder, not "
            f"'{loc or '(nothing)'}' ({EXAMPLE})"
        )
    params = check_params(f"--out {parsed.scheme}", parsed.params, KINDS[parsed.scheme])
    return TargetSpec(parsed.scheme, Path(loc), params, text)


__all__ = ["HOSTED", "KINDS", "NOT_YET", "SERVER", "TargetSpec", "parse_target"]
