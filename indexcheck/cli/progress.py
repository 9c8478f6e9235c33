"""Progress on stderr: a status line (:func:`progress`, :func:`model_calls`) and real bars
for long loops (:func:`progress_bars`: done/total, rate and ETA, through rich.progress).

The core reports through ``tick(task, done, total)`` and ``say(message)`` callbacks; this
module turns them into a status line or bars. Quiet (the callbacks do nothing) when stderr
is not a terminal or ``INDEXCHECK_QUIET`` is set.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

Say = Callable[[str], None]
Tick = Callable[[str, int, "int | None"], None]

err_console = Console(stderr=True, highlight=False)


def quiet() -> bool:
    return not err_console.is_terminal or bool(os.environ.get("INDEXCHECK_QUIET"))


@contextmanager
def progress() -> Iterator[Say]:
    """A status line on stderr; yields ``say(message)``."""
    if quiet():
        yield lambda msg: None
        return
    with err_console.status("starting") as status:
        yield lambda msg: status.update(msg)


@contextmanager
def model_calls(cache: Any, *models: Any) -> Iterator[Say]:
    """:func:`progress` while models are called (judge, questions generate); afterwards,
    whatever happened, the judgement cache (None: none) and every model closed."""
    try:
        with progress() as say:
            yield say
    finally:
        if cache is not None:
            cache.close()
        for model in models:
            getattr(model, "close", lambda: None)()


class _Rate(ProgressColumn):
    """Items per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f}/s")


@contextmanager
def progress_bars() -> Iterator[tuple[Say, Tick]]:
    """Yields ``(say, tick)``; one bar per task name, created on its first tick."""
    if quiet():
        yield (lambda _m: None), (lambda _t, _d, _n: None)
        return
    bars = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        _Rate(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    )
    tasks: dict[str, TaskID] = {}

    def tick(task: str, done: int, total: int | None) -> None:
        if task not in tasks:
            tasks[task] = bars.add_task(task, total=total)
        bars.update(tasks[task], completed=done, total=total)

    def say(message: str) -> None:
        # print, not log: a log line ends with this file's name and line, which tells a
        # user nothing; Text keeps ids with brackets from being read as markup
        bars.console.print(Text(message))

    with bars:
        yield say, tick
