"""Progress lines on stderr say the message, not where the logger was called from."""

from __future__ import annotations

import io

from rich.console import Console

from indexcheck.cli import progress as progress_module


def test_a_progress_line_prints_no_source_file(monkeypatch) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200, color_system=None)
    monkeypatch.setattr(progress_module, "err_console", console)
    monkeypatch.delenv("INDEXCHECK_QUIET", raising=False)
    with progress_module.progress_bars() as (say, tick):
        tick("embedding", 1, 2)
        say("reading every stored vector of [chunks]")
    text = out.getvalue()
    assert "reading every stored vector of [chunks]" in text  # data is never markup
    assert "progress.py" not in text and ".py:" not in text
