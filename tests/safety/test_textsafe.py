"""Data is never markup: ids and texts are escaped for rich, Markdown and HTML."""

from __future__ import annotations

import io

from rich.console import Console

from indexcheck.safety.textsafe import escape_html, escape_md, escape_rich, visible

NASTY = "[bold red]x[/] <script>alert(1)</script> *a*|b \x1b[2J\x07"


def test_control_characters_are_shown_not_sent() -> None:
    assert visible("a\x1bb\x07c\td\ne") == "a\\x1bb\\x07c\td\ne"
    for esc in (escape_rich, escape_md, escape_html):
        assert "\x1b" not in esc(NASTY) and "\x07" not in esc(NASTY)


def test_rich_prints_the_text_itself() -> None:
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(escape_rich(NASTY))
    assert buf.getvalue().rstrip("\n") == visible(NASTY)


def test_markdown_and_html_cannot_open_tags_or_cells() -> None:
    md = escape_md(NASTY)
    assert "<script>" not in md and "\\<script\\>" in md and "\\|" in md and "\\*a\\*" in md
    assert escape_md("a\nb") == "a\\nb"
    assert escape_html(NASTY).startswith("[bold red]x[/] &lt;script&gt;")
    assert escape_html('"') == "&quot;"


def test_a_nasty_chunk_id_reaches_the_terminal_as_text(small_kb, tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from indexcheck.cli.app import cli
    from indexcheck.stores.faiss.store import write_faiss_folder
    from indexcheck.testing import HashEmbedder

    ids = ["[red]evil\x1b[2J", "ok"]
    texts = ["one text", "another text"]
    chunks = tmp_path / "c.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    vecs = HashEmbedder(32).embed(texts)
    write_faiss_folder(tmp_path / "f", ids, vecs[::-1].copy())  # both vectors swapped: flagged
    r = CliRunner().invoke(
        cli,
        ["check-index", "--store", f"faiss:{tmp_path / 'f'}", "--chunks", str(chunks), "--all",
         "--embedder", "py:indexcheck.testing:HASH32"],
    )  # fmt: skip
    assert r.exit_code == 1, r.stderr
    assert "\x1b" not in r.stdout and "[red]evil\\x1b[2J" in r.stdout
