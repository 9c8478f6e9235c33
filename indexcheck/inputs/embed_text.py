"""The text that was embedded: ``--embed-template`` and instruction prefixes in embedder specs.

A stored vector embeds whatever the indexer sent to the model, often not the stored chunk
text (LlamaIndex prepends a metadata header, E5-style models want ``"passage: "``), so the
bare text re-embedded falls short of the threshold on a correct index. This module rebuilds
the sent text. Templates use ``str.format`` braces, restricted to ``{text}``, ``{id}``,
``{metadata}`` (every field as "key: value" lines, LlamaIndex's default header) and
``{meta[KEY]}``: no attribute access, conversions or format specs, since a template comes
from the user or a stored node and must never reach Python objects. ``{{``/``}}`` are literal
braces; ``\n``, ``\t`` and ``\\`` written as two characters (as a shell passes them) are read
as newline, tab and backslash. Instruction prefixes belong to the embedder spec
(``?prefix=passage:%20``, :mod:`indexcheck.embedders.prefixes`).
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import DataFileError, InputError

TEXT_FIELDS = ("text", "id", "metadata")
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
