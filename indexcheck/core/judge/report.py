"""judge's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...sections import (
    Fragment,
    Section,
    Table,
    Text,
    ok_verdict,
)
from ..reports import Payload, register, sections_of

if TYPE_CHECKING:
    from .result import JudgeResult


def judge_rows(payload: Payload) -> list[list[Any]]:
    """Counts per verdict and status, and the supported rate, as table rows."""
    from .claims import Verdict

    r = payload["supported_rate"]
    rows: list[list[Any]] = [[v.value, payload["counts"][v.value]] for v in Verdict]
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
    sec = Section("judge: claims against their context", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(Table(["verdict / status", "count"], judge_rows(r)))
    sec.blocks.append(Text("A supported claim is supported by the context, not proven true."))
    sec.blocks.append(Fragment("claims", r))
    return [sec]


def sections(result: JudgeResult) -> list[Section]:
    """The report's sections (from the JSON form)."""
    return [*sections_of(result.to_dict())]


register("judge", _judge, {"answers", "supported_rate", "prompt_version"})
