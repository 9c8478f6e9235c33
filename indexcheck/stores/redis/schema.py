"""Redis, schema: what ``FT.INFO`` says of an index, and which application wrote it.

``FT.INFO`` gives the key type (``HASH`` or ``JSON``), the key prefixes and one entry per
attribute (``identifier`` — a hash field or a JSON path —, ``attribute`` — its name in
queries —, ``type`` and, for a ``VECTOR``, ``algorithm``, ``data_type``, ``dim``,
``distance_metric``, ``M``, ``ef_construction``). The vector field, its dimension, type and
metric and the text field are read from it; no mapping is written by hand. Layouts:

- ``langchain``: langchain-redis ``RedisVectorStore`` (``text``, ``embedding``,
  ``_index_name`` and ``_metadata_json``: the metadata as JSON, with its types);
- ``llamaindex``: LlamaIndex's ``RedisVectorStore`` (``id``, ``doc_id``, ``text``,
  ``vector``; the node as JSON in ``_node_content``);
- ``redisvl``: any other index (RedisVL's own, or hand-made): every other document field
  is metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError, SpecError
from ..metric_table import scores_of

#: the vector types indexcheck decodes -> numpy dtype (little-endian, as Redis stores them)
DTYPES = {"FLOAT32": "<f4", "FLOAT64": "<f8", "FLOAT16": "<f2"}
TEXT_NAMES = ("text", "content", "page_content", "document", "chunk")


@dataclass(frozen=True)
class Attribute:
    """One indexed field: its name in queries, where it lives in a document, its type and
    its flags (``SORTABLE``, ``CASESENSITIVE``, ``INDEXMISSING``...)."""

    name: str
    path: str
    type: str
    flags: frozenset[str] = frozenset()
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Schema:
    """The index: where its documents are, its vector field, and its other fields."""

    index: str
    key_type: str  # HASH or JSON
    prefixes: tuple[str, ...]
    vector: Attribute
    algorithm: str  # FLAT, HNSW, SVS-VAMANA...
    data_type: str
    dimension: int
    metric: str  # COSINE, IP or L2
    text: str | None  # the document path of the text (hash field or JSON path)
    layout: str
    attributes: dict[str, Attribute]
    num_docs: int
    failures: int

    @property
    def hnsw(self) -> dict[str, Any]:
        return {k: v for k, v in self.vector.options.items() if k in ("m", "ef_construction")}


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _pairs(items: list[Any]) -> dict[str, Any]:
    return {_text(items[i]).lower(): items[i + 1] for i in range(0, len(items) - 1, 2)}


def _attribute(raw: list[Any]) -> Attribute:
    """One FT.INFO attribute entry: ``identifier X attribute Y type T key value... FLAG...``."""
    items = [_text(x) if isinstance(x, bytes | str) else x for x in raw]
    options: dict[str, Any] = {}
    flags: set[str] = set()
    i = 0
    while i < len(items):
        key = str(items[i])
        nxt = items[i + 1] if i + 1 < len(items) else None
        if key.upper() in ("SORTABLE", "UNF", "NOSTEM", "NOINDEX", "CASESENSITIVE",
                           "WITHSUFFIXTRIE", "INDEXEMPTY", "INDEXMISSING"):  # fmt: skip
            flags.add(key.upper())
            i += 1
            continue
        options[key.lower()] = nxt
        i += 2
    return Attribute(
        name=str(options.pop("attribute", options.get("identifier"))),
        path=str(options.pop("identifier")),
        type=str(options.pop("type")).upper(),
        flags=frozenset(flags),
        options=options,
    )


def parse_info(index: str, info: dict[str, Any], params: dict[str, str]) -> Schema:
    """The :class:`Schema` of ``FT.INFO`` (as redis-py's ``ft().info()`` returns it)."""
    definition = info.get("index_definition") or []
    definition = _pairs(definition) if isinstance(definition, list) else dict(definition)
    key_type = _text(definition.get("key_type", "HASH")).upper()
    prefixes = tuple(_text(p) for p in definition.get("prefixes") or [""])
    attrs = {a.name: a for a in (_attribute(list(r)) for r in info.get("attributes") or [])}
    vector = _vector(index, attrs, params.get("vector"))
    data_type = str(vector.options.get("data_type", vector.options.get("type", "FLOAT32")))
    data_type = data_type.upper()
    if data_type not in DTYPES:
        raise InputError(
            f"redis: the vector field '{vector.name}' of index '{index}' holds {data_type} "
            f"vectors; indexcheck reads {', '.join(DTYPES)}"
        )
    metric = str(vector.options.get("distance_metric", "")).upper()
    if metric not in scores_of("redis"):
        raise InputError(
            f"redis: index '{index}' measures '{metric}', which indexcheck does not know; "
            f"it knows {', '.join(scores_of('redis'))}"
        )
    asked = params.get("metric")
    if asked is not None and asked.upper() != metric:
        raise SpecError(
            f"redis: index '{index}' measures {metric} but the spec asks ?metric={asked}; "
            f"drop ?metric= or set it to {metric}"
        )
    layout = _layout(attrs)
    return Schema(
        index=index,
        key_type=key_type,
        prefixes=prefixes,
        vector=vector,
        algorithm=str(vector.options.get("algorithm", "")).upper(),
        data_type=data_type,
        dimension=int(vector.options.get("dim", 0)),
        metric=metric,
        text=_text_path(index, attrs, params.get("text"), key_type),
        layout=layout,
        attributes=attrs,
        num_docs=int(float(_text(info.get("num_docs", 0)))),
        failures=int(float(_text(info.get("hash_indexing_failures", 0)))),
    )


def _vector(index: str, attrs: dict[str, Attribute], asked: str | None) -> Attribute:
    vectors = [a for a in attrs.values() if a.type == "VECTOR"]
    if asked is not None:
        match = [a for a in vectors if asked in (a.name, a.path)]
        if not match:
            names = ", ".join(a.name for a in vectors) or "none"
            raise InputError(
                f"redis: index '{index}' has no vector field '{asked}'; vector fields: "
                f"{names}; pass one as ?vector="
            )
        return match[0]
    if len(vectors) != 1:
        names = ", ".join(a.name for a in vectors) or "none"
        raise (InputError if not vectors else SpecError)(
            f"redis: index '{index}' has {len(vectors)} vector fields ({names}); "
            + ("indexcheck needs one" if not vectors else "pass one as ?vector=")
        )
    return vectors[0]


def _layout(attrs: dict[str, Attribute]) -> str:
    if "_metadata_json" in attrs:
        return "langchain"
    if {"id", "doc_id", "text"} <= set(attrs):
        return "llamaindex"
    return "redisvl"


def _text_path(
    index: str, attrs: dict[str, Attribute], asked: str | None, key_type: str
) -> str | None:
    """The text's document path: ``?text=`` (a field name or path), else the first
    indexed TEXT field with a usual name."""
    if asked is not None:
        attr = attrs.get(asked)
        if attr is not None:
            return attr.path
        return asked if key_type == "HASH" or asked.startswith("$") else f"$.{asked}"
    for name in TEXT_NAMES:
        attr = attrs.get(name)
        if attr is not None and attr.type in ("TEXT", "TAG"):
            return attr.path
    return None
