"""judge's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...output.model import Fragment, Section, Table, Text
from ...output.registry import Payload, register, section
from .result import JudgeResult

if TYPE_CHECKING:
    pass


def judge_rows(payload: Payload) -> list[list[Any]]:
    """Counts per verdict and status, and the supported rate, as table rows."""
    from .claims import ClaimVerdict

    r = payload["supported_rate"]
    rows: list[list[Any]] = [[v.value, payload["counts"][v.value]] for v in ClaimVerdict]
    rows += [[s, n] for s, n in payload["statuses"].items()]
    if r["value"] is not None:
        rows.append(
            [
                "supported rate [95% Wilson]",
                f"{r['value']:.3f} [{r['low']:.3f}, {r['high']:.3f}] ({r['k']}/{r['n']})",
            ]
        )
    return rows


def _judge(r: Payload, verdict: str | None) -> list[Section]:
    counts = Table(["verdict / status", "count"], judge_rows(r))
    sec = section("judge: claims against their context", r, verdict, counts)
    sec.blocks.append(Text("A supported claim is supported by the context, not proven true."))
    sec.blocks.append(Fragment("claims", r))
    return [sec]


#: judge's report has no terminal summary: its terminal output is report/judge_terminal's
register("judge", _judge, {"answers", "supported_rate", "prompt_version"}, result=JudgeResult)
