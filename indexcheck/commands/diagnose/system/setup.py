"""diagnose --system's setup, before anything is opened: the interventions parsed, the
answer refusal pattern compiled, the application loaded from its spec or wrapped."""

from __future__ import annotations

from ....inputs.answers import compile_pattern
from ..settings import DiagnoseSettings
from .hook import System, load_system
from .interventions import Intervention, parse_interventions


def prepare_system(settings: DiagnoseSettings) -> tuple[System, list[Intervention]]:
    """diagnose --system's setup, before anything is opened: ``settings.intervene`` parsed
    (``"gold-context,fetch=20"`` or a list), the answer refusal pattern compiled, and
    ``settings.system`` loaded from a ``py:`` spec or wrapped from the object."""
    system, intervene, budget_calls = settings.system, settings.intervene, settings.budget_calls
    spec = intervene if isinstance(intervene, str) or intervene is None else ",".join(intervene)
    interventions = parse_interventions(spec)
    pattern = settings.answer_refusal_pattern
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
