"""The report registry: each command's ``report.py`` registers, at its end (as ir_measures
registers a measure), the builder of its report sections, the keys that name its JSON when a
file carries no manifest, and the result type it renders. Results hold data only: nothing
here is a method of a result, and no result imports its renderer.

Builders take the JSON form (``to_dict()``), so any command's sections can be rebuilt from a
``--json`` file. :mod:`indexcheck.commands.reports` imports every command's ``report``
module, so every kind and type is registered before a result is rendered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InputError
from .model import Block, Section, manifest_section, ok_verdict

Payload = Mapping[str, Any]
Builder = Callable[[Payload, "str | None"], list[Section]]

#: every command kind, in the order a key signature is tried (a kind whose keys are a
#: superset of another's goes first)
KINDS = (
    "ci",
    "check-index",
    "probe-scale",
    "sweep-threshold",
    "compare-ann",
    "diagnose",
    "judge",
    "diff-index",
)
_SNIFF_ORDER = (
    "ci",
    "judge",
    "compare-ann",
    "probe-scale",
    "sweep-threshold",
    "diagnose",
    "diff-index",
    "check-index",
)
SectionsOf = Callable[[Any], list[Section]]
_BUILDERS: dict[str, Builder] = {}
_SIGNATURES: dict[str, frozenset[str]] = {}
_BY_TYPE: dict[type, SectionsOf] = {}


def register(
    kind: str,
    builder: Builder,
    signature: set[str],
    summary: SectionsOf | None = None,
    *,
    result: type | None = None,
) -> None:
    """Register ``kind``'s section builder and the JSON keys that name it; with ``result``,
    a result of that type renders as the report's sections (from its JSON form), then
    ``summary``'s terminal summary of it when given."""
    if kind not in KINDS:
        raise ValueError(f"unknown result kind {kind!r}")
    _BUILDERS[kind] = builder
    _SIGNATURES[kind] = frozenset(signature)
    if result is not None:

        def of(r: Any) -> list[Section]:
            return [*sections_of(r.to_dict()), *(summary(r) if summary else [])]

        _BY_TYPE[result] = of


def register_sections(result: type, sections: SectionsOf) -> None:
    """Register the sections of a result type that no JSON builder renders (embed,
    check-answers, diagnose --system): ``sections(result)`` gives them all."""
    _BY_TYPE[result] = sections


def sections(result: Any) -> list[Section]:
    """A result's sections, by its type: its report's sections, then its terminal summary
    (``terminal=True``); a result dict (a ``--json`` file) gives its report's sections."""
    if isinstance(result, Mapping):
        return sections_of(result)
    for cls in type(result).__mro__:
        found = _BY_TYPE.get(cls)
        if found is not None:
            return found(result)
    raise TypeError(f"no renderer is registered for {type(result).__name__}")


def section(title: str, r: Payload, verdict: str | None, *blocks: Block) -> Section:
    """A builder's section of ``blocks``, with the verdict it is given (ci passes its
    check's) else the result's own ``ok``."""
    return Section(title, verdict or ok_verdict(r["ok"]), list(blocks))


HtmlSummary = Callable[[str, str, Sequence[Section]], str]
_HTML: list[HtmlSummary] = []


def register_html(render: HtmlSummary) -> None:
    """Register the renderer of a result's HTML summary (a notebook's ``_repr_html_``):
    ``render(title, verdict, sections)``; :mod:`.render.blocks` registers its own."""
    _HTML[:] = [render]


def summary_html(title: str, verdict: str, shown: Sequence[Section]) -> str | None:
    """The HTML summary of ``shown`` sections, or None when no renderer is registered (the
    face registers it: a result made through :mod:`indexcheck.api` always has one)."""
    return _HTML[0](title, verdict, shown) if _HTML else None


def kind_of(payload: Payload) -> str:
    """Which command produced a result dict (its manifest, else its registered keys)."""
    cmd = (payload.get("manifest") or {}).get("command")
    if cmd in KINDS:
        return str(cmd)
    keys = set(payload)
    for kind in _SNIFF_ORDER:
        need = _SIGNATURES.get(kind)
        if need is not None and need <= keys:
            return kind
    raise InputError("not an indexcheck result: pass the JSON written by --json")


def sections_of(
    payload: Payload, verdict: str | None = None, manifest: bool = True
) -> list[Section]:
    """A result dict's report sections; ``manifest=False`` leaves its manifest to the
    caller (ci renders its checks' manifests in its own section)."""
    kind = kind_of(payload)
    out = _BUILDERS[kind](payload, verdict)
    if kind != "ci" and manifest:
        out.append(manifest_section(payload.get("manifest") or {}, f"{kind}: manifest"))
    return out


__all__ = [
    "KINDS",
    "Builder",
    "Payload",
    "kind_of",
    "register",
    "register_html",
    "register_sections",
    "section",
    "sections",
    "sections_of",
    "summary_html",
]
