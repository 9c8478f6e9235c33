"""check-index: low chunks whose stored vectors were embedded with another instruction prefix.

E5, BGE, GTE, Nomic and Instructor models expect a ``"passage: "``/``"query: "`` prefix or an
instruction; an index built with one and checked without it (or the reverse) looks stale or
like another model. :func:`find_prefix` re-embeds a seeded probe of the unexplained low
chunks (at most ``PROBE`` texts) with each prefix of :data:`KNOWN_PREFIXES` (and with none
when the user's embedder adds one), keeps the prefix under which most of them reach
``min_cosine``, then confirms it chunk by chunk on the chunks it was given. Cost: at most
``PROBE * len(KNOWN_PREFIXES) + len(positions)`` texts, counted in the diagnosis embeddings.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...embedders import DEFAULT_EMBEDDER
from ...embedders.cache import CachedEmbedder
from ...embedders.prefixes import PrefixedEmbedder, spec_with_prefix
from ...vectors import normalize_rows
from ..kit.finding import Finding
from ..kit.verdicts import Status

#: unexplained low chunks re-embedded with every candidate prefix (seeded)
PROBE = 16


@dataclass(frozen=True)
class KnownPrefix:
    """A prefix or instruction a model family puts in front of a text."""

    text: str
    family: str
    #: "passage" (chunks), "query" (questions) or "instruction"
    role: str
    #: the family's passage prefix, for a query prefix found on chunks
    passage: str | None = None


KNOWN_PREFIXES: tuple[KnownPrefix, ...] = (
    KnownPrefix("passage: ", "E5", "passage"),
    KnownPrefix("query: ", "E5", "query", "passage: "),
    KnownPrefix("search_document: ", "Nomic", "passage"),
    KnownPrefix("search_query: ", "Nomic", "query", "search_document: "),
    KnownPrefix("clustering: ", "Nomic", "instruction"),
    KnownPrefix("classification: ", "Nomic", "instruction"),
    KnownPrefix("Represent this sentence for searching relevant passages: ", "BGE", "query", ""),
    KnownPrefix("Represent the document for retrieval: ", "Instructor", "passage"),
    KnownPrefix("Represent the Wikipedia document for retrieval: ", "Instructor", "passage"),
    KnownPrefix("Represent the question for retrieving supporting documents: ", "Instructor",
                "query", "Represent the document for retrieval: "),
    KnownPrefix(
        "Instruct: Given a web search query, retrieve relevant passages that answer the "
        "query\nQuery: ", "GTE-Qwen", "query", "",
    ),
    KnownPrefix("passage:", "E5", "passage"),
    KnownPrefix("query:", "E5", "query", "passage:"),
)  # fmt: skip
NO_PREFIX = KnownPrefix("", "", "none")


@dataclass(frozen=True)
class PrefixFit:
    """The prefix the stored vectors of ``matched`` positions were embedded with."""

    found: KnownPrefix
    #: what the user's --embedder puts in front of chunk texts
    current: str
    #: positions whose stored vector matches its text with ``found`` (cosine >= min_cosine)
    matched: frozenset[int]
    #: positions tested chunk by chunk
    confirmed_over: int
    #: the --embedder spec that embeds chunks the way the stored vectors were
    fix_spec: str
    #: texts embedded for the test
    embeddings: int
    #: matches in the probe for every candidate tried, by prefix
    probe: dict[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return len(self.matched) / max(1, self.confirmed_over)


def split_embedder(embedder: Any) -> tuple[Any, str]:
    """(the embedder with no prefix, the prefix it puts in front of chunk texts)."""
    inner = embedder.inner if isinstance(embedder, CachedEmbedder) else embedder
    if isinstance(inner, PrefixedEmbedder):
        return inner.inner, inner.prefix
    return inner, ""


def embedder_spec(spec: Any, embedder: Any) -> str:
    """The spec the user typed (``settings.embedder``), else the default's or the model id."""
    if isinstance(spec, str) and spec.strip():
        return spec.strip()
    if spec is None:
        return DEFAULT_EMBEDDER
    base, _ = split_embedder(embedder)
    return str(getattr(base, "model_id", DEFAULT_EMBEDDER))


def find_prefix(
    embedder: Any,
    spec: str,
    positions: Sequence[int],
    texts: Sequence[str],
    stored: np.ndarray,
    min_cosine: float,
    seed: int = 0,
) -> tuple[PrefixFit | None, int]:
    """(the known prefix under which the stored vectors of ``positions`` match their
    ``texts`` or None, the texts embedded to find out). ``stored`` unit float32 (n, d),
    row i the vector of positions[i]; ``spec`` the user's --embedder spec (for the fix).
    Embeds through the embedder with no prefix, uncached (probes, not the index's texts)."""
    if not len(positions):
        return None, 0
    base, current = split_embedder(embedder)
    stored = np.asarray(stored, dtype=np.float32)
    n = len(positions)
    rng = np.random.default_rng(seed)
    probe = np.sort(rng.choice(n, size=min(PROBE, n), replace=False))
    cands = ([NO_PREFIX] if current else []) + [k for k in KNOWN_PREFIXES if k.text != current]
    spent = 0
    scores: dict[str, int] = {}
    best: KnownPrefix | None = None
    for cand in cands:
        got = _matches(base, cand.text, [texts[i] for i in probe], stored[probe], min_cosine)
        spent += len(probe)
        scores[cand.text] = int(got.sum())
        if got.any() and (best is None or scores[cand.text] > scores[best.text]):
            best = cand
        if got.all():
            break
    if best is None:
        return None, spent
    rest = np.setdiff1d(np.arange(n), probe)
    ok = np.zeros(n, dtype=bool)
    ok[probe] = _matches(base, best.text, [texts[i] for i in probe], stored[probe], min_cosine)
    if rest.size:
        ok[rest] = _matches(base, best.text, [texts[i] for i in rest], stored[rest], min_cosine)
        spent += int(rest.size)
    matched = frozenset(int(positions[int(i)]) for i in np.flatnonzero(ok))
    fix = spec_with_prefix(spec, best.text)
    return PrefixFit(best, current, matched, n, fix, spent, scores), spent


def _matches(
    base: Any, prefix: str, texts: list[str], stored: np.ndarray, min_cosine: float
) -> np.ndarray:
    fresh = normalize_rows(np.asarray(base.embed([prefix + t for t in texts]), np.float32))
    result: np.ndarray = np.einsum("ij,ij->i", fresh, stored) >= min_cosine
    return result


def _said(prefix: str) -> str:
    return f"the prefix {prefix!r}" if prefix else "no prefix"


def prefix_finding(fit: PrefixFit, ids: list[str], compared: int) -> Finding:
    """The finding of the chunks ``ids`` (in position order) that match with ``fit.found``;
    ``compared``: chunks with a comparable vector in the check."""
    k = fit.found
    adds = f"adds {fit.current!r}" if fit.current else "adds none"
    typed = f"--embedder {shlex.quote(fit.fix_spec)}"
    others = compared - len(ids)
    first = f"stored vectors were embedded with {_said(k.text)}; your --embedder {adds}"
    where = f"{len(ids)} chunk(s) from '{ids[0]}' to '{ids[-1]}'" if ids else "0 chunks"
    if others <= 0:
        fix = (
            f"{where}, every compared chunk: the index is consistent; check it with {typed}"
            + (" and embed questions with the family's query prefix" if k.role == "passage"
               else "")
        )  # fmt: skip
    else:
        fix = (
            f"{where}; the other {others} compared chunk(s) match without it: the indexer "
            f"embedded these with another text; re-embed them the way the rest were ({typed} "
            "is the spec under which they match)"
        )
    if k.role == "query" and k.passage is not None:
        fix += (
            f". {k.text.strip()!r} is {k.family}'s query prefix: the chunks were embedded "
            f"as questions; {k.family} embeds passages with {_said(k.passage)}"
        )
    details: dict[str, Any] = {
        "prefix": k.text,
        "family": k.family,
        "role": k.role,
        "embedder_prefix": fit.current,
        "fix_embedder": fit.fix_spec,
        "matched": len(fit.matched),
        "confirmed_over": fit.confirmed_over,
        "probe_matches": fit.probe,
        "prefix_embeddings": fit.embeddings,
    }
    return Finding(Status.EMBEDDED_TEXT_DIFFERS, "error", f"{first}: {fix}", ids, details)


def with_prefix_finding(
    findings: list[Finding], fit: PrefixFit | None, ids: list[str], compared: int
) -> list[Finding]:
    """``findings`` with the prefix finding first and its chunks out of the generic
    ``embedded_text_differs`` finding (dropped when none is left)."""
    if fit is None or not ids:
        return findings
    mine = set(ids)
    out = [prefix_finding(fit, ids, compared)]
    for f in findings:
        if f.kind == Status.EMBEDDED_TEXT_DIFFERS:
            rest = [i for i in f.chunk_ids if i not in mine]
            if not rest:
                continue
            head, _, tail = f.message.partition(": ")
            f = Finding(f.kind, f.severity, f"{len(rest)} chunk(s): {tail}", rest, f.details)
        out.append(f)
    return out


def is_root(finding: Finding) -> bool:
    """A finding the terminal prints before the table: a prefix named."""
    return finding.kind == Status.EMBEDDED_TEXT_DIFFERS and "prefix" in finding.details
