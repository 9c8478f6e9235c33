"""The report registry: each command's ``report.py`` registers the builder of its report
sections at the end of its module (as ir_measures registers a measure), with the keys that
name its JSON when a file carries no manifest.

Builders take the JSON form (``to_dict()``), so ``indexcheck report`` and the HTML report
can rebuild any command's sections from a ``--json`` file. The report layer imports every
command's ``report`` module, so every kind is registered before a file is read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
_BUILDERS: dict[str, Builder] = {}
_SIGNATURES: dict[str, frozenset[str]] = {}


def register(
    kind: str,
    builder: Builder,
    signature: set[str],
    summary: Callable[[Any], list[Section]] | None = None,
) -> Callable[[Any], list[Section]]:
    """Register ``kind``'s section builder and the JSON keys that name it; return the
    result's ``sections``: the report's sections (from its JSON form), then ``summary``'s
    terminal summary of the result when given."""
    if kind not in KINDS:
        raise ValueError(f"unknown result kind {kind!r}")
    _BUILDERS[kind] = builder
    _SIGNATURES[kind] = frozenset(signature)

    def sections(result: Any) -> list[Section]:
        return [*sections_of(result.to_dict()), *(summary(result) if summary else [])]

    return sections


def section(title: str, r: Payload, verdict: str | None, *blocks: Block) -> Section:
    """A builder's section of ``blocks``, with the verdict it is given (ci passes its
    check's) else the result's own ``ok``."""
    return Section(title, verdict or ok_verdict(r["ok"]), list(blocks))


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


__all__ = ["KINDS", "Builder", "Payload", "kind_of", "register", "section", "sections_of"]
