"""check-index's shift finding tells users to run ``indexcheck repair`` on their store; the
command it prints, typed as it is (with the check's --embedder), repairs the index."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.stores.files.store import write_vectors_file
from indexcheck.testing import HashEmbedder
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors


def test_the_printed_repair_command_repairs_the_index(tmp_path: Path) -> None:
    c = repeat_corpus(160, 20)
    src = tmp_path / "index.parquet"
    write_vectors_file(src, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    checked = api.check_index(f"parquet:{src}", None, HashEmbedder(32), sample=None, stream=True)
    shift = next(f for f in checked.findings if f.kind == "shift")
    typed = re.search(r"`(indexcheck repair [^`]+)`", shift.message)
    assert typed is not None, shift.message
    words = shlex.split(typed.group(1).replace("NEW_FOLDER", str(tmp_path / "fixed")))
    assert words[:2] == ["indexcheck", "repair"]
    r = CliRunner().invoke(cli, [*words[1:], "--embedder", "py:indexcheck.testing:HASH32"])
    assert r.exit_code == 0, r.output
