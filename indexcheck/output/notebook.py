"""What a result gives a notebook: its rows as a pandas DataFrame, its summary as HTML.

A result class takes :class:`Notebook` as a base and names its row lists in ``frames`` (keys
of its JSON form, the default first). Jupyter calls ``_repr_html_``: the result's summary
sections (those of its terminal summary, else its report's), rendered with every id, text
and path escaped, so data is never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import InputError
from .model import Section, Table, Text

#: rows shown in a result's notebook summary
PREVIEW_ROWS = 10

if TYPE_CHECKING:
    import pandas as pd


class Notebook:
    """``to_pandas()`` and ``_repr_html_()`` for a result with ``to_dict()``."""

    #: the row lists ``to_pandas`` gives, by their key in ``to_dict()``; the first by default
    frames: ClassVar[tuple[str, ...]] = ()

    if TYPE_CHECKING:  # every result class defines it; the mixin only reads it

        def to_dict(self) -> dict[str, Any]: ...

    def frame_rows(self, rows: str) -> list[dict[str, Any]]:
        """The rows ``to_pandas(rows)`` holds, as dicts (a result may flatten nested ones)."""
        return list(self.to_dict()[rows])

    def to_pandas(self, rows: str | None = None) -> pd.DataFrame:
        """One row list of the result as a DataFrame, its columns the keys of the JSON rows
        (nullable dtypes: a missing figure is ``<NA>``, never a guessed number).

        ``rows``: one of ``frames`` (default: the first)."""
        try:
            import pandas as pd
        except ImportError:
            raise InputError("to_pandas() needs pandas; run: pip install pandas") from None
        name = rows or (self.frames[0] if self.frames else None)
        if name is None or name not in self.frames:
            which = ", ".join(self.frames) or "none"
            raise InputError(f"no rows named {name!r} in this result; the rows are: {which}")
        data = self.frame_rows(name)
        frame = pd.DataFrame.from_records(data) if data else pd.DataFrame()
        return frame.convert_dtypes()

    def _repr_html_(self) -> str | None:
        from .registry import sections, summary_html

        try:
            found = sections(self)
        except TypeError:  # no renderer registered: the verdict alone
            found = []
        shown = [s for s in found if s.terminal] or [s for s in found if s.report]
        if self.frames:
            shown.append(self._preview())
        ok = getattr(self, "ok", None)
        verdict = str(getattr(self, "verdict", "PASS" if ok else "FAIL"))
        command = (getattr(self, "manifest", None) or {}).get("command")
        title = f"indexcheck {command or type(self).__name__}"
        return summary_html(title, verdict, shown)

    def _preview(self) -> Section:
        """The first rows of the default row list, their plain (not nested) columns."""
        rows = self.frame_rows(self.frames[0])
        cols = [k for k, v in (rows[0] if rows else {}).items() if not isinstance(v, dict | list)]
        table = Table(cols, [[r.get(c) for c in cols] for r in rows[:PREVIEW_ROWS]])
        more = f"the first {PREVIEW_ROWS} of {len(rows)}; " if len(rows) > PREVIEW_ROWS else ""
        note = Text(f"{more}to_pandas({self.frames[0]!r}) holds them all")
        return Section(f"{self.frames[0]} ({len(rows)})", None, [table, note])


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A :meth:`Notebook.to_pandas` frame back to the JSON rows (``<NA>`` -> None)."""
    plain = frame.astype(object).where(frame.notna(), None)
    return [dict(r) for r in plain.to_dict("records")]


__all__ = ["Notebook", "frame_records"]
