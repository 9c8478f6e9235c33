"""LangChain's shared ``langchain_pg_embedding`` table and pgvector without an ANN index
(issue 17, item 9), on the tables LangChain's ``PGVector`` itself wrote.

- The table holds two collections (the corpus and unrelated rows): without
  ``&collection=`` every command refuses it with exit 2 naming both, instead of mixing them
  into hundreds of findings; ``&collection=`` still opens one.
- probe-scale on a table with no ANN index measures an operator indexcheck chose: its own
  verdict ``ASSUMED`` (exit 0), never the word PASS; ci does not count it as a pass.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import InputError
from indexcheck.stores import open_store

EMB = ["--embedder", "minilm"]


def test_two_collections_without_collection_exit_2_naming_both(framework_index) -> None:
    built = framework_index("langchain", "pgvector", "correct")
    whole = built.spec.split("&collection=")[0]
    name, other = built.details["collection"], built.details["other_collection"]
    for extra in ([], ["--all"]):
        r = CliRunner().invoke(cli, ["check-index", "--store", whole, *EMB, *extra])
        assert r.exit_code == 2, (r.exit_code, r.stdout[-2000:], r.stderr)
        # (the test server's DSN holds a password: a warning line says so)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip() and "password" not in ln]
        assert len(lines) == 1, r.stderr
        assert "holds 2 LangChain collections" in lines[0]
        assert f"{name} (50 rows)" in lines[0] and f"{other} (12 rows)" in lines[0]
        assert "&collection=" in lines[0]
    try:
        open_store(whole)
    except InputError as e:
        assert "mixes them" in str(e)
    else:
        raise AssertionError("the shared table opened without &collection=")
    ok = CliRunner().invoke(cli, ["check-index", "--store", built.spec, *EMB, "--all"])
    assert ok.exit_code == 0, ok.stderr


def test_probe_on_an_assumed_operator_says_assumed_never_pass(framework_index) -> None:
    built = framework_index("langchain", "pgvector", "correct")
    r = CliRunner().invoke(cli, ["probe-scale", "--store", built.spec, "--no-cache"])
    assert r.exit_code == 0, r.stderr
    assert "ASSUMED" in r.stdout and "PASS" not in r.stdout, r.stdout
    j = CliRunner().invoke(cli, ["probe-scale", "--store", built.spec, "--json", "-"])
    assert j.exit_code == 0 and json.loads(j.stdout)["verdict"] == "ASSUMED"
    # named, the operator is measured: PASS
    named = CliRunner().invoke(
        cli, ["probe-scale", "--store", built.spec + "&operator=<=>", "--json", "-"]
    )
    assert named.exit_code == 0 and json.loads(named.stdout)["verdict"] == "PASS"


def test_ci_does_not_pass_an_assumed_scale(framework_index, tmp_path) -> None:
    built = framework_index("langchain", "pgvector", "correct")
    cfg = tmp_path / "indexcheck.toml"
    cfg.write_text(
        f'[ci]\nstore = "{built.spec}"\nembedder = "minilm"\n\n[ci.probe-scale]\nexpect = "1-cos"\n'
    )
    out = tmp_path / "ci.json"
    r = CliRunner().invoke(cli, ["ci", "--config", str(cfg), "--json", str(out)])
    assert r.exit_code == 1, (r.stdout, r.stderr)
    gate = json.loads(out.read_text())["gates"][0]
    assert gate["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert gate["detail"].startswith("ASSUMED") and "&operator=" in gate["detail"]
    cfg.write_text(cfg.read_text().replace(built.spec, built.spec + "&operator=<=>"))
    r = CliRunner().invoke(cli, ["ci", "--config", str(cfg), "--json", str(out)])
    assert r.exit_code == 0, (r.stdout, r.stderr)
