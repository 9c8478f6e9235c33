"""Escaping user data (ids, texts, paths) for the terminal, Markdown and HTML.

Data is never markup: every value that came from a user's files or a store goes through one
of these before rich, a Markdown file or an HTML page sees it. Control characters are shown,
not sent: ESC becomes the four characters ``\\x1b``, so a chunk id cannot move the cursor,
recolour the terminal or hide a line. Lone surrogates (an undecodable byte in a file name)
and the non-characters U+FFFE/U+FFFF are shown the same way (``\\udcff``): no encoder
chokes on them and no XML parser refuses the page.

:func:`xml_safe` is the last step of every XML or HTML document indexcheck writes (JUnit, the
HTML report): whatever a value held, the document holds no character XML 1.0 forbids.
"""

from __future__ import annotations

import html
import re

# C0 controls except tab and newline, DEL, and the C1 block (which terminals also obey).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
# What XML 1.0 forbids (section 2.2 Char): C0 controls but tab, LF and CR; surrogates;
# U+FFFE and U+FFFF.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# Markdown punctuation that can start emphasis, code, links, table cells, HTML or entities
# anywhere in a line (line-start-only syntax such as '#' or '-' never reaches a line start:
# data sits in table cells and after our own words).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def _shown(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``str(text)`` with control characters shown as ``\\xNN`` escapes."""
    return _CONTROL.sub(_shown, str(text))


def xml_safe(text: object) -> str:
    """``str(text)`` with every character XML 1.0 forbids shown as a ``\\xNN`` escape
    (tab, LF and CR, which XML allows, are kept)."""
    return _XML_FORBIDDEN.sub(_shown, str(text))


def escape_rich(text: object) -> str:
    """Safe inside a rich markup string: square brackets cannot open a style tag."""
    from rich.markup import escape

    return escape(visible(text))


def escape_md(text: object, *, inline: bool = True) -> str:
    """Safe inside Markdown text and table cells: no emphasis, links, HTML or cell breaks.

    ``inline`` also folds newlines into a visible ``\\n`` so a table row stays one row.
    """
    out = _MD_SPECIAL.sub(r"\\\1", visible(text))
    return out.replace("\n", "\\n").replace("\t", " ") if inline else out


def escape_html(text: object) -> str:
    """Safe inside HTML text and quoted attributes."""
    return html.escape(visible(text), quote=True)


__all__ = ["escape_html", "escape_md", "escape_rich", "visible", "xml_safe"]
