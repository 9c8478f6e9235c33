"""diagnose --system's setup, before anything is opened: the interventions parsed, the
answer refusal pattern compiled, the application loaded from its spec or wrapped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....inputs.answers import DEFAULT_ANSWER_REFUSAL_PATTERN, compile_pattern
from .hook import System, load_system
from .interventions import Intervention, parse_interventions


def prepare_system(
    system: str | Any,
    intervene: str | Sequence[str] | None = None,
    budget_calls: int | None = None,
    answer_refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN,
) -> tuple[System, list[Intervention]]:
    """diagnose --system's setup, before anything is opened: the interventions parsed
    (``"gold-context,fetch=20"`` or a list), the refusal pattern compiled, and the
    application loaded from a ``py:`` spec or wrapped from the object."""
    spec = intervene if isinstance(intervene, str) or intervene is None else ",".join(intervene)
    interventions = parse_interventions(spec)
    pattern = answer_refusal_pattern
    compile_pattern(pattern, "--answer-refusal-pattern")
    app = (
        load_system(system, budget_calls=budget_calls, refusal_pattern=pattern)
        if isinstance(system, str)
        else System(
            system, type(system).__name__, budget_calls=budget_calls, refusal_pattern=pattern
        )
    )
    return app, list(interventions)


__all__ = ["prepare_system"]
