"""The text that was embedded: ``--embed-template`` and instruction prefixes in embedder specs.

A stored vector is the embedding of whatever the indexer sent to the model, which is often
not the stored chunk text: LlamaIndex prepends a metadata header, E5-style models want
``"passage: "`` in front. Re-embedding the bare text then gives cosines around 0.85 on a
correct index. This module rebuilds the sent text.

Templates (``--embed-template``) use ``str.format`` braces, restricted to these fields::

    {text}          the chunk text
    {id}            the chunk id
    {metadata}      every metadata field as "key: value" lines (LlamaIndex's default header)
    {meta[KEY]}     one metadata field, e.g. {meta[title]}

No attribute access, no conversions (``!r``), no format specs (``:>10``): a template
comes from the user or from a stored node and is never allowed to reach Python objects.
``{{`` and ``}}`` are literal braces; ``\\n``, ``\\t`` and ``\\\\`` written as two characters
(as a shell passes them) are read as newline, tab and backslash.

Instruction prefixes belong to the embedder spec, as a query string after the model::

    st:intfloat/e5-small-v2?prefix=passage:%20&query_prefix=query:%20
    mistral:mistral-embed?prefix=...

Values are percent-decoded (``%20`` is a space; ``+`` stays a plus). ``prefix`` goes in
front of every chunk text, ``query_prefix`` in front of every question. Both are part of
the embedder's ``model_id``, so cached embeddings never mix prefixed and bare texts.
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

from .embedders.base import EmbedStats
from .errors import DataFileError, InputError, SpecError

TEXT_FIELDS = ("text", "id", "metadata")
EMBEDDER_SPEC_KEYS = ("prefix", "query_prefix")
METADATA_LINE = "{key}: {value}"
METADATA_SEPARATOR = "\n"

_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\"}
_FORMATTER = string.Formatter()


def unescape(template: str) -> str:
    r"""Read ``\n``, ``\t`` and ``\\`` typed as two characters; leave other backslashes."""
    out: list[str] = []
    i = 0
    while i < len(template):
        ch = template[i]
        if ch == "\\" and i + 1 < len(template) and template[i + 1] in _ESCAPES:
            out.append(_ESCAPES[template[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class _Part:
    literal: str
    field: str | None  # "text", "id", "metadata", or "meta" with key
    key: str | None = None


def _parse(template: str, allowed: Sequence[str], where: str) -> list[_Part]:
    """Split a format template into literal text and checked fields."""
    parts: list[_Part] = []
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise InputError(
            f"{where} {template!r} is not a valid template ({exc}); write literal braces "
            "as {{ and }}"
        ) from None
    for literal, name, spec, conv in parsed:
        if name is None:
            parts.append(_Part(literal, None))
            continue
        if conv is not None or spec:
            raise InputError(
                f"{where} {template!r}: '{{{name}{'!' + conv if conv else ''}"
                f"{':' + spec if spec else ''}}}' uses a conversion or format spec, which "
                "templates do not allow; write just '{" + name + "}'"
            )
        if "meta" in allowed and name.startswith("meta[") and name.endswith("]"):
            key = name[5:-1]
            if not key or "[" in key or "]" in key:
                raise InputError(f"{where} {template!r}: '{{{name}}}' needs one key")
            parts.append(_Part(literal, "meta", key))
            continue
        if name not in allowed:
            shown = ", ".join("{" + (a + "[KEY]" if a == "meta" else a) + "}" for a in allowed)
            close = difflib.get_close_matches(name, list(allowed), n=1)
            hint = f" (did you mean {{{close[0]}}}?)" if close else ""
            raise InputError(
                f"{where} {template!r}: unknown field '{{{name}}}'{hint}; the fields are {shown}"
            )
        parts.append(_Part(literal, name))
    return parts


def safe_format(template: str, values: Mapping[str, str], where: str = "template") -> str:
    """``template.format(**values)`` for plain ``{name}`` fields only (no attribute or
    index access, conversions or format specs); InputError otherwise."""
    parts = _parse(template, list(values), where)
    return "".join(p.literal + (values[p.field] if p.field else "") for p in parts)


def metadata_lines(
    metadata: Mapping[str, Any] | None,
    exclude: Sequence[str] = (),
    line_template: str = METADATA_LINE,
    separator: str = METADATA_SEPARATOR,
) -> str:
    """LlamaIndex's metadata header: ``line_template`` per field (``{key}``/``{value}``,
    value through ``str()``), in the mapping's order, joined by ``separator``."""
    if not metadata:
        return ""
    skip = set(exclude)
    return separator.join(
        safe_format(line_template, {"key": str(k), "value": str(v)}, "metadata template")
        for k, v in metadata.items()
        if k not in skip
    )


@dataclass(frozen=True)
class EmbedTemplate:
    """A checked ``--embed-template``; ``render`` builds the text sent to the model.

    ``exclude`` leaves metadata keys out of ``{metadata}``. When ``{metadata}`` renders
    empty, the text alone is returned, as LlamaIndex does for a node without metadata.
    """

    template: str
    exclude: tuple[str, ...] = ()
    _parts: tuple[_Part, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = _parse(unescape(self.template), (*TEXT_FIELDS, "meta"), "--embed-template")
        object.__setattr__(self, "_parts", tuple(parts))

    @classmethod
    def parse(cls, template: str, exclude: Sequence[str] = ()) -> EmbedTemplate:
        """Check a template at the edge (InputError, exit 2, on a bad field)."""
        return cls(template, tuple(exclude))

    def uses_metadata(self) -> bool:
        return any(p.field in ("metadata", "meta") for p in self._parts)

    def render(self, chunk_id: str, text: str, metadata: Mapping[str, Any] | None) -> str:
        """The text as the template builds it; DataFileError for a missing ``meta[KEY]``."""
        parts = self._parts
        header = metadata_lines(metadata, self.exclude)
        if not header and any(p.field == "metadata" for p in parts):
            return text
        out: list[str] = []
        for p in parts:
            out.append(p.literal)
            if p.field == "text":
                out.append(text)
            elif p.field == "id":
                out.append(chunk_id)
            elif p.field == "metadata":
                out.append(header)
            elif p.field == "meta":
                assert p.key is not None
                if not metadata or p.key not in metadata:
                    raise DataFileError(
                        f"chunk '{chunk_id}' has no metadata field '{p.key}' used by "
                        "--embed-template; add the column to the chunks file or drop "
                        f"{{meta[{p.key}]}}"
                    )
                out.append(str(metadata[p.key]))
        return "".join(out)

    def render_all(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadata: Sequence[Mapping[str, Any] | None] | None,
    ) -> list[str]:
        """Render every chunk (``metadata`` aligned with ``ids``, or None for none)."""
        metas: Sequence[Mapping[str, Any] | None] = metadata or [None] * len(ids)
        return [self.render(i, t, m) for i, t, m in zip(ids, texts, metas, strict=True)]


# --- embedder spec: instruction prefixes --------------------------------------------------


@dataclass(frozen=True)
class EmbedderSpec:
    """An embedder spec split into the provider part and its prefixes."""

    base: str
    prefix: str = ""
    query_prefix: str = ""

    def suffix(self) -> str:
        """The query string that identifies the prefixes, '' when there are none."""
        pairs = [
            (k, v) for k, v in (("prefix", self.prefix), ("query_prefix", self.query_prefix)) if v
        ]
        return "?" + "&".join(f"{k}={quote(v, safe=':')}" for k, v in pairs) if pairs else ""


def parse_embedder_spec(spec: str) -> EmbedderSpec:
    """Split ``BASE?prefix=...&query_prefix=...``; SpecError (exit 2) for unknown, repeated
    or malformed keys, naming the known ones and the closest match."""
    base, sep, query = spec.lstrip().partition("?")
    base = base.strip()
    if not sep:
        return EmbedderSpec(base)
    values: dict[str, str] = {}
    for item in query.split("&"):
        if not item:
            continue
        key, eq, raw = item.partition("=")
        if not eq:
            raise SpecError(
                f"embedder spec '{spec}': '{item}' needs a value, e.g. prefix=passage:%20"
            )
        if key not in EMBEDDER_SPEC_KEYS:
            close = difflib.get_close_matches(key, EMBEDDER_SPEC_KEYS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise SpecError(
                f"embedder spec '{spec}': unknown key '{key}'{hint}; known keys: "
                f"{', '.join(EMBEDDER_SPEC_KEYS)}"
            )
        if key in values:
            raise SpecError(f"embedder spec '{spec}': '{key}' is given twice; keep one")
        values[key] = unquote(raw)
    return EmbedderSpec(base, values.get("prefix", ""), values.get("query_prefix", ""))


class PrefixedEmbedder:
    """An Embedder that puts an instruction prefix in front of every text.

    ``model_id`` is the inner one plus the prefix (so caches keep them apart);
    ``dimension`` and ``stats`` are the inner embedder's. ``embed`` returns float32 (n, d).
    """

    def __init__(self, inner: Any, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix
        self.model_id = f"{inner.model_id}?prefix={quote(prefix, safe=':')}"
        self.dimension = int(inner.dimension)

    @property
    def stats(self) -> EmbedStats:
        stats: EmbedStats = self.inner.stats
        return stats

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.inner.embed([self.prefix + t for t in texts]), dtype=np.float32)


def with_prefixes(inner: Any, spec: EmbedderSpec) -> tuple[Any, Any]:
    """(embedder for chunk texts, embedder for questions) from an opened base embedder."""
    docs = PrefixedEmbedder(inner, spec.prefix) if spec.prefix else inner
    queries = PrefixedEmbedder(inner, spec.query_prefix) if spec.query_prefix else inner
    return docs, queries
