"""Build the fixture chunks and FAISS indexes (a correct one, and one with the positional bug).

    python scripts/build_fixtures.py chunks             # fixtures/kb/*.md -> chunks.jsonl
    python scripts/build_fixtures.py index --out DIR        # correct: vectors keyed by text hash
    python scripts/build_fixtures.py index --out DIR --positional-bug
                                                            # replays the cache-by-position bug

Chunks: one per ``## `` section of each Markdown file (files in name order), id
``<file stem>#<slug of the heading>``, text = heading line + blank line + body.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "fixtures" / "kb"
CHUNKS = ROOT / "fixtures" / "chunks.jsonl"


def slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def split_markdown(path: Path) -> list[dict[str, str]]:
    """One chunk per '## ' section; the '# ' title is not a chunk."""
    chunks: list[dict[str, str]] = []
    heading: str | None = None
    body: list[str] = []

    def flush() -> None:
        if heading is not None:
            text = f"{heading}\n\n" + "\n".join(body).strip()
            chunks.append({"id": f"{path.stem}#{slug(heading)}", "text": text, "file": path.name})

    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            flush()
            heading, body = line[3:].strip(), []
        elif heading is not None:
            body.append(line)
    flush()
    return chunks


def build_chunks() -> int:
    rows = [c for md in sorted(KB.glob("*.md")) for c in split_markdown(md)]
    with CHUNKS.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} chunks -> {CHUNKS.relative_to(ROOT)}")
    return 0


def build_index(
    out: Path, positional_bug: bool, embedder_spec: str, force: bool, buggy_out: Path | None = None
) -> int:
    from indexcheck.embedders import open_embedder
    from indexcheck.embedders.cache import CachedEmbedder
    from indexcheck.inputs.corpus import load_chunks
    from indexcheck.stores.faiss.store import write_faiss_folder
    from indexcheck.testing import positional_cache_bug

    corpus = load_chunks(CHUNKS)
    embedder = CachedEmbedder(open_embedder(embedder_spec), None)
    vectors = embedder.embed(corpus.texts)  # keyed by text hash: always right
    if buggy_out is not None:  # the demo's second index, from the same vectors
        if buggy_out.exists() and force:
            shutil.rmtree(buggy_out)
        buggy = positional_cache_bug(corpus.texts, vectors)
        write_faiss_folder(buggy_out, corpus.ids, buggy)
        print(f"{len(corpus)} vectors ({embedder.model_id}, positional bug) -> {buggy_out}")
    if positional_bug:
        vectors = positional_cache_bug(corpus.texts, vectors)
    if out.exists() and force:
        shutil.rmtree(out)
    write_faiss_folder(out, corpus.ids, vectors)
    kind = "with the positional-cache bug" if positional_bug else "keyed by text hash"
    print(f"{len(corpus)} vectors ({embedder.model_id}, {kind}) -> {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("chunks", help="split fixtures/kb/*.md into fixtures/chunks.jsonl")
    ix = sub.add_parser("index", help="embed fixtures/chunks.jsonl into a new FAISS folder")
    ix.add_argument("--out", type=Path, required=True)
    ix.add_argument("--positional-bug", action="store_true")
    ix.add_argument(
        "--buggy-out", type=Path, help="also write the positional-bug index here (one embedding)"
    )
    ix.add_argument("--embedder", default="minilm")
    ix.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = ap.parse_args(argv)
    if args.cmd == "chunks":
        return build_chunks()
    return build_index(args.out, args.positional_bug, args.embedder, args.force, args.buggy_out)


if __name__ == "__main__":
    sys.exit(main())
