"""The answer judge and the question writer read a judge's reply through one reader
(judges/replies.py): the same error class and the same words for an empty or malformed
reply, a ```json fence tolerated by both."""

from __future__ import annotations

import pytest

from indexcheck.commands.judge import parse_reply
from indexcheck.commands.questions import calls
from indexcheck.judges.replies import ReplyError, reply_json, reply_text


@pytest.mark.parametrize(
    ("raw", "words"),
    [("   ", "the reply is empty"), ("{not json", "the reply is not valid JSON")],
)
def test_both_readers_refuse_a_bad_reply_in_the_same_words(raw: str, words: str) -> None:
    for read in (parse_reply, calls._json_object):
        with pytest.raises(ReplyError, match=words):
            read(raw)


def test_a_fenced_reply_reads_as_its_json() -> None:
    fenced = '```json\n{"claims": [{"claim": "x", "verdict": "supported"}]}\n```'
    assert reply_json(fenced) == {"claims": [{"claim": "x", "verdict": "supported"}]}
    assert parse_reply(fenced)[0]["claim"] == "x"
    assert reply_json({"already": "parsed"}) == {"already": "parsed"}
    assert reply_text({"a": "é"}) == '{"a": "é"}' and reply_text("as sent") == "as sent"
