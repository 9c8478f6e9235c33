"""Elasticsearch and OpenSearch: which fields of an index hold the vector, the text and the
metadata, and how its knn scores, sniffed from ``indices.get_mapping`` (no hand-written
mapping).

Layouts read as the frameworks write them: LangChain ``ElasticsearchStore`` (``vector``
dense_vector, ``text``, ``metadata``), LlamaIndex (``embedding``, ``content``,
``metadata``) and LangChain ``OpenSearchVectorSearch`` (``vector_field`` knn_vector,
``text``, ``metadata``). Ids are the documents' ``_id``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError, SpecError

VECTOR_TYPES = {"elasticsearch": "dense_vector", "opensearch": "knn_vector"}
TEXT_NAMES = ("text", "content", "page_content", "chunk", "body")
METADATA_NAMES = ("metadata",)


@dataclass(frozen=True)
class Layout:
    """Where the parts of one index are, and how its vector field is searched."""

    index: str
    vector: str
    dimension: int
    text: str | None
    metadata: str | None
    similarity: str  # the mapping's own word: cosine, l2_norm, ..., cosinesimil, l2, ...
    engine: str | None  # OpenSearch: lucene / faiss / nmslib; None when not mapped
    index_options: dict[str, Any] = field(default_factory=dict)  # ES dense_vector options
    types: dict[str, str] = field(default_factory=dict)  # dotted path -> mapped type
    ignore_above: dict[str, int] = field(default_factory=dict)
    source_excludes: tuple[str, ...] = ()
    element_type: str = "float"


def walk(properties: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every mapped field as (dotted path, its mapping), sub-fields (``.keyword``) too."""
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        path = prefix + name
        yield path, dict(prop)
        if isinstance(prop.get("properties"), Mapping):
            yield from walk(prop["properties"], path + ".")
        for sub, sprop in (prop.get("fields") or {}).items():
            if isinstance(sprop, Mapping):
                yield f"{path}.{sub}", dict(sprop)


def _types(properties: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, int]]:
    types: dict[str, str] = {}
    ignore: dict[str, int] = {}
    for path, prop in walk(properties):
        types[path] = str(prop.get("type") or ("object" if "properties" in prop else ""))
        if prop.get("type") == "keyword" and prop.get("ignore_above") is not None:
            ignore[path] = int(prop["ignore_above"])
    return types, ignore


def one_index(response: Mapping[str, Any], asked: str, where: str) -> tuple[str, dict[str, Any]]:
    """The single concrete index a ``get_mapping`` reply names, and its ``mappings``."""
    names = sorted(response)
    if len(names) != 1:
        raise SpecError(
            f"?index={asked} at {where} matches {len(names)} indexes "
            f"({', '.join(names[:10]) or 'none'}); name one index"
        )
    body = response[names[0]] or {}
    return names[0], dict(body.get("mappings") or {})


def _pick(candidates: list[str], asked: str | None, what: str, key: str, where: str) -> str | None:
    if asked is not None:
        if asked not in candidates:
            raise InputError(
                f"{where} has no {what} field '{asked}'; {what} fields there: "
                f"{', '.join(candidates) or 'none'}; fix ?{key}="
            )
        return asked
    return None


def sniff(
    flavor: str, index: str, mappings: Mapping[str, Any], params: Mapping[str, str], where: str,
    settings: Mapping[str, Any] | None = None,
) -> Layout:  # fmt: skip
    """The :class:`Layout` of ``index`` from its ``mappings`` (and OpenSearch's index
    ``settings``, flat keys), honouring ``?vector=``, ``?text=``, ``?metadata=``."""
    props = dict(mappings.get("properties") or {})
    types, ignore = _types(props)
    fields = dict(walk(props))
    vtype = VECTOR_TYPES[flavor]
    vectors = [p for p, prop in fields.items() if prop.get("type") == vtype]
    here = f"index '{index}' at {where}"
    vector = _pick(vectors, params.get("vector"), vtype, "vector", here)
    if vector is None:
        if len(vectors) != 1:
            raise (InputError if not vectors else SpecError)(
                f"{here} has {len(vectors)} {vtype} fields ({', '.join(vectors) or 'none'}); "
                + ("pass ?vector=FIELD" if vectors else "indexcheck reads vector indexes")
            )
        vector = vectors[0]
    vprop = fields[vector]
    texts = [p for p, t in types.items() if t in ("text", "keyword") and "." not in p]
    text = _pick(texts, params.get("text"), "text", "text", here)
    if text is None:
        text = next((n for n in TEXT_NAMES if n in texts), None)
    objects = [p for p, t in types.items() if t in ("object", "flattened") and "." not in p]
    metadata = _pick(objects, params.get("metadata"), "metadata", "metadata", here)
    if metadata is None:
        metadata = next((n for n in METADATA_NAMES if n in objects), None)
    excludes = tuple(str(x) for x in ((mappings.get("_source") or {}).get("excludes") or []))
    if flavor == "elasticsearch":
        # ``similarity`` is cosine when the field is indexed and the mapping names none
        similarity = str(vprop.get("similarity") or "cosine")
        return Layout(
            index, vector, int(vprop.get("dims") or 0), text, metadata, similarity, None,
            dict(vprop.get("index_options") or {}), types, ignore, excludes,
            str(vprop.get("element_type") or "float"),
        )  # fmt: skip
    method = dict(vprop.get("method") or {})
    flat = dict(settings or {})
    space = str(
        method.get("space_type") or vprop.get("space_type")
        or flat.get("index.knn.space_type") or "l2"
    )  # fmt: skip
    engine = method.get("engine") or vprop.get("engine")
    options: dict[str, Any] = {"method": method} if method else {}
    if flat.get("index.knn.algo_param.ef_search") is not None:
        options["ef_search_setting"] = str(flat["index.knn.algo_param.ef_search"])
    return Layout(
        index, vector, int(vprop.get("dimension") or 0), text, metadata, space,
        str(engine) if engine else None, options, types, ignore,
        excludes, str(vprop.get("data_type") or "float"),
    )  # fmt: skip
