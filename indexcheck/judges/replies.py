"""A judge's reply read as JSON, and quoted as text: the one reader the answer judge and the
question writer share, so both refuse an empty or malformed reply in the same words and
quote it the same way in a repair request."""

from __future__ import annotations

import json
import re
from typing import Any

from .base import RawReply


class ReplyError(ValueError):
    """A judge reply that cannot be used; the message says why (sent in the repair request)."""


def reply_json(raw: RawReply) -> Any:
    """The JSON value of a reply given as text (a ```json fence is tolerated), or the reply
    itself when the judge returned parsed data. Raises ReplyError."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)
    if fence:
        text = fence.group(1)
    if not text:
        raise ReplyError("the reply is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})") from None


def reply_text(raw: RawReply) -> str:
    """A reply as text: itself, or its JSON when the judge returned parsed data (what a
    repair request quotes and an unusable reply is recorded as)."""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


def message_text(content: Any) -> str:
    """A chat message's content as text: a string, or the text parts of a list of chunks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for chunk in content:
        text = chunk.get("text") if isinstance(chunk, dict) else getattr(chunk, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts)
