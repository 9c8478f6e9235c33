"""judge: grade each answer's claims against the exact context it was given.

The judge model splits the answer into claims and gives each a verdict, an evidence span and
a rationale; indexcheck then checks every claim itself (:mod:`.claim_checks`): the span must
occur in the context, the claim's numbers must occur in the span, and the citations attached
to its sentence must be the passages that hold the span. A reply that does not parse is
retried with a repair request; if it still fails the answer is UNJUDGED with the raw reply
kept, never a NaN or a 0. A refusal has no claims (REFUSAL), never a groundedness of 0 or 1.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ...errors import DataFileError
from ...inputs.answers import AnswerRow, is_refusal
from ...judges.base import Judge, JudgeRequest, RawReply
from ...judges.cache import JudgementCache, judgement_key
from ...judges.replies import ReplyError, reply_json, reply_text
from ..kit.stats import wilson
from .claims import (
    CitationStatus,
    ClaimVerdict,
    citation_status,
    find_span,
    keys,
    missing_numbers,
    normalize,
    quantities,
)
from .result import AnswerResult as AnswerResult
from .result import AnswerStatus as AnswerStatus
from .result import ClaimResult as ClaimResult
from .result import JudgeResult as JudgeResult
from .settings import CheckAnswersSettings as CheckAnswersSettings
from .settings import JudgeSettings as JudgeSettings

DEFAULT_PROMPT = "judge_v1.md"
EXAMPLES = 10
#: characters of passage kept either side of an evidence span (for reports)
EXCERPT = 300


@dataclass(frozen=True)
class Prompt:
    """The judge's instructions; ``version`` is the first 12 hex of their sha256."""

    text: str
    version: str
    source: str


def load_prompt(path: str | Path | None = None) -> Prompt:
    """The shipped prompt, or the file ``path`` (``--prompt``)."""
    if path is None:
        text = resources.files("indexcheck.prompts").joinpath(DEFAULT_PROMPT).read_text("utf-8")
        source = f"indexcheck/prompts/{DEFAULT_PROMPT}"
    else:
        p = Path(path)
        if not p.is_file():
            raise DataFileError(f"prompt file {p} does not exist; check --prompt")
        try:
            text, source = p.read_text(encoding="utf-8"), str(p)
        except UnicodeDecodeError:
            from ...inputs.rowfiles import utf8_error

            raise utf8_error(p) from None
    if not text.strip():
        raise DataFileError(f"prompt {source} is empty")
    return Prompt(text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], source)


def _verdict(value: Any) -> ClaimVerdict:
    text = re.sub(r"[\s-]+", "_", str(value or "").strip()).upper()
    try:
        return ClaimVerdict(text)
    except ValueError:
        allowed = ", ".join(v.value for v in ClaimVerdict)
        raise ReplyError(f"verdict {value!r} is not one of {allowed}") from None


def parse_reply(raw: RawReply) -> list[dict[str, Any]]:
    """The claims of a reply: ``{"claims": [{claim, verdict, evidence_span, rationale}]}``,
    as text (a ```json fence is tolerated) or a dict. Raises ReplyError."""
    data = reply_json(raw)
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise ReplyError('the reply has no "claims" list')
    if not data["claims"]:
        # only refusals have no claims, and they never reach the judge: an empty list is a
        # judge that did not do the work, never a pass
        raise ReplyError("the reply lists no claims; split the answer into at least one claim")
    claims: list[dict[str, Any]] = []
    for i, item in enumerate(data["claims"]):
        if not isinstance(item, dict):
            raise ReplyError(f"claims[{i}] is not an object")
        claim = item.get("claim")
        if not isinstance(claim, str) or not claim.strip():
            raise ReplyError(f'claims[{i}] has no "claim" text')
        span = item.get("evidence_span")
        if span is not None and not isinstance(span, str):
            raise ReplyError(f'claims[{i}] "evidence_span" must be a string')
        rationale = item.get("rationale")
        if rationale is not None and not isinstance(rationale, str):
            raise ReplyError(f'claims[{i}] "rationale" must be a string')
        missing = item.get("missing")
        claims.append(
            {
                "claim": claim.strip(),
                "verdict": _verdict(item.get("verdict")),
                "evidence_span": span or "",
                "rationale": rationale or "",
                "missing": missing if isinstance(missing, str) else None,
            }
        )
    return claims


def build_request(prompt: Prompt, row: AnswerRow) -> JudgeRequest:
    """The chat messages for one answer: the prompt as system message, the case as user."""
    user = f"QUESTION:\n{row.question}\n\nCONTEXT:\n{row.context_sent}\n\nANSWER:\n{row.answer}"
    messages = ({"role": "system", "content": prompt.text}, {"role": "user", "content": user})
    return JudgeRequest(row.question, row.context_sent, row.answer, messages)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", normalize(text)))


def _cited_for(claim: str, row: AnswerRow) -> list[str]:
    """Ids cited by the answer sentence the claim comes from (most shared words)."""
    if not row.sentences:
        return []
    words = _words(claim)
    best = max(row.sentences, key=lambda s: len(words & _words(s.text)))
    return list(best.cited)


def check_claim(item: dict[str, Any], row: AnswerRow) -> ClaimResult:
    """Apply indexcheck's own checks to one parsed claim of ``row``."""
    claim, judge_verdict, span = item["claim"], item["verdict"], item["evidence_span"]
    span_found: bool | None = None
    supported_by: list[str] = []
    evidence: dict[str, Any] | None = None
    if span.strip():
        span_found = find_span(span, row.context_sent) is not None
        for p in row.contexts:
            at = find_span(span, p.text)
            if at is None:
                continue
            supported_by.append(p.id)
            if evidence is None:
                lo = max(0, at[0] - EXCERPT)
                evidence = {"passage": p.id, "version": p.version, "rank": p.rank}
                evidence |= {"start": at[0], "end": at[1], "excerpt_start": lo}
                evidence["excerpt"] = p.text[lo : at[1] + EXCERPT]
        span_found = span_found or bool(supported_by)
    elif judge_verdict in (
        ClaimVerdict.SUPPORTED,
        ClaimVerdict.PARTIALLY_SUPPORTED,
        ClaimVerdict.CONTRADICTED,
    ):
        span_found = False
    verdict = ClaimVerdict.UNSUPPORTED if span_found is False else judge_verdict
    numbers = missing_numbers(claim, span) if span.strip() else [q.text for q in quantities(claim)]
    if verdict is ClaimVerdict.SUPPORTED and numbers:
        verdict = ClaimVerdict.UNSUPPORTED
    in_answer = keys(row.answer)
    added = list(dict.fromkeys(q.text for q in quantities(claim) if q.key not in in_answer))
    cited = _cited_for(claim, row)
    return ClaimResult(
        claim=claim,
        judge_verdict=judge_verdict,
        verdict=verdict,
        evidence_span=span,
        span_found=span_found,
        supported_by=supported_by,
        numbers_unsupported=numbers,
        numbers_not_in_answer=added,
        cited=cited,
        citation_status=citation_status(verdict, cited, supported_by),
        rationale=item["rationale"],
        missing=item["missing"],
        evidence=evidence,
    )


def judge_one(
    row: AnswerRow,
    judge: Judge,
    prompt: Prompt,
    *,
    retries: int = 2,
    refusal: re.Pattern[str] | None = None,
    cache: JudgementCache | None = None,
) -> AnswerResult:
    """Judge one answer: REFUSAL without a call, else ask (and repair up to ``retries``)."""
    if refusal is not None and is_refusal(row, refusal):
        return AnswerResult(row.id, AnswerStatus.REFUSAL, None)
    key = judgement_key(judge.model_id, prompt.version, row.question, row.context_sent, row.answer)
    cached = cache.get(key) if cache is not None else None
    items: list[dict[str, Any]] | None = None
    if cached is not None:
        judge.stats.cache_hits += 1
        items, from_cache = parse_reply(cached), True
    else:
        request = build_request(prompt, row)
        raw: RawReply = ""
        problem = ""
        for attempt in range(retries + 1):
            if attempt:
                judge.stats.repairs += 1
                request = request.repaired(reply_text(raw), problem)
            raw = judge.ask(request)
            try:
                items = parse_reply(raw)
                break
            except ReplyError as exc:
                problem = str(exc)
        judge.stats.judged += 1
        if items is None:
            return AnswerResult(
                row.id, AnswerStatus.UNJUDGED, None, raw_reply=reply_text(raw), problem=problem
            )
        if cache is not None:
            stored = [{**i, "verdict": str(i["verdict"])} for i in items]
            cache.put(key, judge.model_id, prompt.version, {"claims": stored})
        from_cache = False
    claims = [check_claim(item, row) for item in items or []]
    supported = sum(c.verdict is ClaimVerdict.SUPPORTED for c in claims)
    score = supported / len(claims) if claims else None
    return AnswerResult(row.id, AnswerStatus.JUDGED, score, claims, cached=from_cache)


def judge_answers(
    rows: Sequence[AnswerRow],
    judge: Judge,
    prompt: Prompt,
    *,
    retries: int = 2,
    refusal_pattern: str | None = None,
    cache: JudgementCache | None = None,
    allow_unjudged: bool = False,
    progress: Callable[[str], None] | None = None,
) -> JudgeResult:
    """Judge every answer; ``ok`` when every judged claim is SUPPORTED and none is UNJUDGED
    (UNJUDGED is tolerated with ``allow_unjudged``). Judge failures (auth, rate limit
    exhausted, service down) propagate as BackendError."""
    say = progress or (lambda _m: None)
    refusal = re.compile(refusal_pattern) if refusal_pattern else None
    out: list[AnswerResult] = []
    for i, row in enumerate(rows, 1):
        say(f"judging answer {i}/{len(rows)}")
        out.append(judge_one(row, judge, prompt, retries=retries, refusal=refusal, cache=cache))
    return summarise(out, judge.model_id, prompt.version, allow_unjudged)


def summarise(
    answers: list[AnswerResult], judge_id: str, prompt_version: str, allow_unjudged: bool
) -> JudgeResult:
    """Counts per verdict, status and citation status, and the claim-level supported rate."""
    claims = [c for a in answers for c in a.claims]
    counts = {v.value: sum(c.verdict is v for c in claims) for v in ClaimVerdict}
    judge_counts = {v.value: sum(c.judge_verdict is v for c in claims) for v in ClaimVerdict}
    statuses = {s.value: sum(a.status is s for a in answers) for s in AnswerStatus}
    citations = {s.value: sum(c.citation_status is s for c in claims) for s in CitationStatus}
    unjudged = [a.id for a in answers if a.status is AnswerStatus.UNJUDGED]
    rate = wilson(counts[ClaimVerdict.SUPPORTED], len(claims))
    ok = counts[ClaimVerdict.SUPPORTED] == len(claims) and (allow_unjudged or not unjudged)
    return JudgeResult(
        ok=ok,
        judge=judge_id,
        prompt_version=prompt_version,
        answers=answers,
        counts=counts,
        judge_counts=judge_counts,
        statuses=statuses,
        citations=citations,
        supported_rate=rate.as_dict(),
        unjudged=unjudged,
        allow_unjudged=allow_unjudged,
    )
