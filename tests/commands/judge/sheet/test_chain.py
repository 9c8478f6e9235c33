"""The evidence sheet is tamper-evident: each of five hand edits is detected with and without a
key, a consistent re-forgery only with the key, and a clean sheet verifies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.judge.sheet.chain import genesis, link, sha256_hex, sign_run
from tests.util import tree_digest

ROOT = Path(__file__).resolve().parents[4]
ANSWERS = ROOT / "fixtures" / "judge" / "answers.jsonl"
PY_JUDGE = "py:tests.judge_hook:fixture_judge"
KEY = "canary-sheet-key-7Q2x"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")
    monkeypatch.delenv("INDEXCHECK_SHEET_KEY", raising=False)


def _env(key: str | None) -> dict[str, str | None]:
    return {"INDEXCHECK_SHEET_KEY": key}


def judge_run(sheet: Path, fmt: str = "jsonl", key: str | None = None) -> str:
    out = sheet.parent / "out.json"
    r = CliRunner().invoke(
        cli,
        ["judge", "--answers", str(ANSWERS), "--judge", PY_JUDGE, "--sheet", str(sheet),
         "--sheet-format", fmt, "--json", str(out)],
        env=_env(key),
    )  # fmt: skip
    assert r.exit_code == 1, r.output
    return str(json.loads(out.read_text())["sheet"]["run_id"])


def sheet_cmd(*args: str, key: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["sheet", *args], env=_env(key))


def verify(sheet: Path, key: str | None = None):  # type: ignore[no-untyped-def]
    return sheet_cmd("verify", "--sheet", str(sheet), key=key)


# -- the five hand edits, for both claim formats ---------------------------------------------


def _claims(run: Path) -> list[dict]:
    if (run / "claims.parquet").exists():
        return pq.read_table(run / "claims.parquet").to_pylist()
    return [json.loads(x) for x in (run / "claims.jsonl").read_text().splitlines()]


def _write_claims(run: Path, rows: list[dict]) -> None:
    if (run / "claims.parquet").exists():
        keys = list(rows[0])
        pq.write_table(
            pa.table({k: [r.get(k) for r in rows] for k in keys}), run / "claims.parquet"
        )
    else:
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
        (run / "claims.jsonl").write_text(text)


def flip_verdict(run: Path) -> str:
    rows = _claims(run)
    i = next(n for n, r in enumerate(rows) if r["verdict"] not in (None, "SUPPORTED"))
    rows[i]["verdict"] = "SUPPORTED"
    _write_claims(run, rows)
    return f"{rows[i]['row_id']}"


def edit_judge_model(run: Path) -> str:
    info = json.loads((run / "run.json").read_text())
    info["judge_model"] = "a-stronger-judge"
    (run / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    return "run.json"


def edit_prompt_version(run: Path) -> str:
    info = json.loads((run / "run.json").read_text())
    info["prompt_version"] = "0123456789ab"
    (run / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    return "run.json"


def drop_middle_row(run: Path) -> str:
    rows = _claims(run)
    rows.pop(3)
    _write_claims(run, rows)
    return f"{rows[3]['row_id']}"  # the row after the gap no longer follows its predecessor


def drop_last_rows(run: Path) -> str:
    rows = _claims(run)
    _write_claims(run, rows[:-2])
    return "rows"


def append_forged_row(run: Path) -> str:
    rows = _claims(run)
    forged = dict(rows[0]) | {"row_id": rows[0]["row_id"][:-1] + "9", "claim": "Forged claim."}
    _write_claims(run, [*rows, forged])
    return forged["row_id"]


def change_passage_text(run: Path) -> str:
    lines = (run / "cases.jsonl").read_text().splitlines()
    case = json.loads(lines[1])
    case["passages"][0]["text"] += " Members pay 5 dollars."
    lines[1] = json.dumps(case, ensure_ascii=False, sort_keys=True)
    (run / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return "cases.jsonl line 2"


EDITS: dict[str, Callable[[Path], str]] = {
    "verdict flipped": flip_verdict,
    "judge model edited in run.json": edit_judge_model,
    "prompt version edited in run.json": edit_prompt_version,
    "a row dropped at a line boundary": drop_middle_row,
    "the last rows dropped": drop_last_rows,
    "a forged row appended": append_forged_row,
    "a frozen passage text changed": change_passage_text,
}


@pytest.mark.parametrize("key", [None, KEY], ids=["no key", "key"])
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("edit", EDITS.values(), ids=list(EDITS))
def test_each_hand_edit_is_detected(tmp_path: Path, edit, fmt: str, key: str | None) -> None:
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet, fmt, key)
    r = verify(sheet, key)
    assert r.exit_code == 0, r.output
    named = edit(sheet / "runs" / run_id)
    r = verify(sheet, key)
    assert r.exit_code == 1, r.output
    assert "NOT VERIFIED" in r.output and run_id in r.output and named in r.output
    assert "Traceback" not in r.output and KEY not in r.output
    # export and diff verify first: nothing is certified, the first bad row is named
    pack = tmp_path / "pack"
    r = sheet_cmd("export", "--sheet", str(sheet), run_id, "--out", str(pack), key=key)
    assert r.exit_code == 1 and named in r.stderr and "does not verify" in r.stderr
    assert not pack.exists() or not any(pack.iterdir())
    r = sheet_cmd("diff", "--sheet", str(sheet), run_id, run_id, key=key)
    assert r.exit_code == 1 and named in r.stderr and "does not verify" in r.stderr


@pytest.mark.parametrize("key", [None, KEY], ids=["no key", "key"])
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_clean_sheet_verifies_and_exports(tmp_path: Path, fmt: str, key: str | None) -> None:
    sheet = tmp_path / "sheet"
    a, b = judge_run(sheet, fmt, key), judge_run(sheet, fmt, key)
    before = tree_digest(sheet, mtimes=True)
    r = verify(sheet, key)
    assert r.exit_code == 0, r.output
    assert f"{a}: verified" in r.output and f"{b}: verified" in r.output
    assert ("signature valid" in r.output) == (key is not None)
    info = json.loads((sheet / "runs" / a / "run.json").read_text())
    assert info["chain"]["rows"] == 7 + 13 and len(info["chain"]["head"]) == 64
    assert ("signature" in info) == (key is not None)
    pack = tmp_path / "pack"
    r = sheet_cmd("export", "--sheet", str(sheet), a, "--out", str(pack), key=key)
    assert r.exit_code == 0, r.output
    manifest = json.loads((pack / "manifest.json").read_text())
    assert manifest["chain"]["head"] == info["chain"]["head"]
    assert sheet_cmd("diff", "--sheet", str(sheet), a, b, key=key).exit_code == 0
    assert tree_digest(sheet, mtimes=True) == before  # verify and export write nothing
    assert KEY not in r.output
    for path in [*sheet.rglob("*"), *pack.rglob("*")]:  # the key is never written
        assert not path.is_file() or KEY.encode() not in path.read_bytes()


def test_a_signed_sheet_verified_without_the_key_says_the_signature_was_not_checked(
    tmp_path: Path,
) -> None:
    sheet = tmp_path / "sheet"
    judge_run(sheet, key=KEY)
    r = verify(sheet)
    assert r.exit_code == 0 and "signature not checked" in r.output
    assert "INDEXCHECK_SHEET_KEY" in r.output


# -- a consistent re-forgery: detected only with the key --------------------------------------


def rechain(run: Path, strip_signature: bool = False, key: str | None = None) -> None:
    """Recompute every hash, head, count and file hash of a hand-edited run consistently:
    what a forger without the key can do."""
    info = json.loads((run / "run.json").read_text())
    cases = [json.loads(x) for x in (run / "cases.jsonl").read_text().splitlines()]
    claims = _claims(run)
    head = link(cases, genesis(info))
    head = link(claims, head)
    (run / "cases.jsonl").write_text(
        "".join(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n" for c in cases)
    )
    _write_claims(run, claims)
    chain = info["chain"]
    chain["head"] = head
    chain["files"] = {name: sha256_hex((run / name).read_bytes()) for name in chain["files"]}
    if strip_signature:
        info.pop("signature", None)
    if key is not None:
        sign_run(info, key.encode())
    (run / "run.json").write_text(json.dumps(info, indent=2) + "\n")


def reforge(run: Path, strip_signature: bool = False, key: str | None = None) -> None:
    """Flip a verdict and recompute the chain consistently."""
    flip_verdict(run)
    rechain(run, strip_signature, key)


def test_a_consistent_reforgery_is_detected_only_with_the_key(tmp_path: Path) -> None:
    unsigned = tmp_path / "unsigned"
    run_id = judge_run(unsigned)
    reforge(unsigned / "runs" / run_id)
    assert verify(unsigned).exit_code == 0  # documented: no key, no proof against this

    for strip in (False, True):
        signed = tmp_path / f"signed-{strip}"
        run_id = judge_run(signed, key=KEY)
        reforge(signed / "runs" / run_id, strip_signature=strip)
        r = verify(signed, KEY)
        assert r.exit_code == 1 and "run.json" in r.output, r.output
        assert ("not signed" if strip else "does not match its signature") in r.output
        r = sheet_cmd("export", "--sheet", str(signed), run_id, "--out", str(tmp_path / "p"),
                      key=KEY)  # fmt: skip
        assert r.exit_code == 1 and "does not verify" in r.stderr


def test_a_run_signed_with_another_key_is_named(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet"
    judge_run(sheet, key=KEY)
    r = verify(sheet, "another-key")
    assert r.exit_code == 1 and "signed with another key" in r.output


def test_reforgery_with_the_key_itself_verifies(tmp_path: Path) -> None:
    """Whoever holds the key can sign anything: the key must stay with the auditor."""
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet, key=KEY)
    reforge(sheet / "runs" / run_id, key=KEY)
    assert verify(sheet, KEY).exit_code == 0


# -- revisions extend the chain ------------------------------------------------------------


@pytest.mark.parametrize("key", [None, KEY], ids=["no key", "key"])
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_revisions_extend_the_chain(tmp_path: Path, fmt: str, key: str | None) -> None:
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet, fmt, key)
    revise = ["revise", "--sheet", str(sheet), "--reviewer", "ana"]
    for verdict in ("UNSUPPORTED", "SUPPORTED", "CONTRADICTED"):
        r = sheet_cmd(*revise, f"{run_id}/j01/1", "--verdict", verdict, key=key)
        assert r.exit_code == 0, r.output
    r = verify(sheet, key)
    assert r.exit_code == 0 and "3 revisions" in r.output, r.output
    files = sorted((sheet / "revisions").glob("*.jsonl"))
    rows = [json.loads(p.read_text()) for p in files]
    assert {r["previous_verdict"] for r in rows} == {"PARTIALLY_SUPPORTED", "UNSUPPORTED",
                                                     "SUPPORTED"}  # fmt: skip
    pack = tmp_path / "pack"
    r = sheet_cmd("export", "--sheet", str(sheet), run_id, "--out", str(pack), key=key)
    assert r.exit_code == 0 and len((pack / "revisions.jsonl").read_text().splitlines()) == 3

    # an edited revision, and a dropped one, are named
    first = next(p for p, row in zip(files, rows, strict=True)
                 if row["previous_verdict"] == "PARTIALLY_SUPPORTED")  # fmt: skip
    second = next(p for p, row in zip(files, rows, strict=True)
                  if row["previous_verdict"] == "UNSUPPORTED")  # fmt: skip
    text = second.read_text()
    second.write_text(text.replace('"verdict": "SUPPORTED"', '"verdict": "UNSUPPORTED"'))
    r = verify(sheet, key)
    assert r.exit_code == 1 and second.name in r.output and "edited" in r.output
    second.write_text(text)
    first.unlink()
    r = verify(sheet, key)
    assert r.exit_code == 1 and "does not extend" in r.output
    r = sheet_cmd(*revise, f"{run_id}/j01/1", "--verdict", "SUPPORTED", key=key)
    assert r.exit_code == 1 and "does not verify" in r.stderr  # no revision of a broken chain


def test_a_revision_forged_without_the_key_is_detected_with_it(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet, key=KEY)
    r = sheet_cmd("revise", "--sheet", str(sheet), f"{run_id}/j01/1", "--verdict",
                  "SUPPORTED", "--reviewer", "mallory")  # fmt: skip
    assert r.exit_code == 0  # without the key anyone may append a correctly chained row ...
    assert verify(sheet).exit_code == 0
    r = verify(sheet, KEY)
    assert r.exit_code == 1 and "not signed" in r.output  # ... but not a signed one


# -- the key from the environment ----------------------------------------------------------


@pytest.mark.parametrize("pasted", [f" {KEY}", f"{KEY}\n", f"{KEY}\r\n", f"\t{KEY} "])
def test_a_pasted_key_is_stripped_with_a_warning(tmp_path: Path, pasted: str) -> None:
    sheet = tmp_path / "sheet"
    out = tmp_path / "out.json"
    r = CliRunner().invoke(
        cli, ["judge", "--answers", str(ANSWERS), "--judge", PY_JUDGE, "--sheet", str(sheet),
              "--json", str(out)], env=_env(pasted),
    )  # fmt: skip
    assert r.exit_code == 1
    assert "warning: INDEXCHECK_SHEET_KEY had surrounding whitespace" in r.stderr
    assert KEY not in r.output and KEY not in out.read_text()
    assert verify(sheet, KEY).exit_code == 0  # signed with the stripped key


@pytest.mark.parametrize("bad", [f"{KEY[:5]}\x07{KEY[5:]}", f"{KEY[:5]}\x1b{KEY[5:]}", "  "])
def test_a_key_with_a_control_character_is_refused_before_any_work(tmp_path, bad) -> None:
    sheet = tmp_path / "sheet"
    r = CliRunner().invoke(
        cli, ["judge", "--answers", str(ANSWERS), "--judge", "py:tests.hostile_judges:counting",
              "--sheet", str(sheet)], env=_env(bad),
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert "INDEXCHECK_SHEET_KEY" in line and KEY[5:] not in r.output and KEY[:5] not in r.output
    assert not sheet.exists()
    r = verify(tmp_path, bad)
    assert r.exit_code == 2 and "INDEXCHECK_SHEET_KEY" in r.stderr


# -- the exported audit pack -----------------------------------------------------------------


def _reseal(pack: Path) -> None:
    manifest = json.loads((pack / "manifest.json").read_text())
    manifest["files"] = {n: sha256_hex((pack / n).read_bytes()) for n in manifest["files"]}
    (pack / "manifest.json").write_text(json.dumps(manifest, indent=2))


@pytest.mark.parametrize("key", [None, KEY], ids=["no key", "key"])
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_exported_pack_verifies_and_an_edit_of_it_is_named(
    tmp_path: Path, fmt: str, key: str | None
) -> None:
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet, fmt, key)
    assert sheet_cmd("revise", "--sheet", str(sheet), f"{run_id}/j01/1", "--verdict",
                     "UNSUPPORTED", "--reviewer", "ana", key=key).exit_code == 0  # fmt: skip
    pack = tmp_path / "pack"
    assert sheet_cmd("export", "--sheet", str(sheet), run_id, "--out", str(pack),
                     key=key).exit_code == 0  # fmt: skip
    r = sheet_cmd("verify", "--pack", str(pack), key=key)
    assert r.exit_code == 0 and f"{run_id}: verified" in r.output and "1 revisions" in r.output
    assert ("signature valid" in r.output) == (key is not None)

    # a file edited after export
    answers = pack / "answers.jsonl"
    answers.write_text(answers.read_text().replace("Harbor City", "Harbour Town"))
    r = sheet_cmd("verify", "--pack", str(pack), key=key)
    assert r.exit_code == 1 and "answers.jsonl in the pack does not match" in r.output
    _reseal(pack)  # the manifest recomputed to match: the extract no longer follows the rows
    r = sheet_cmd("verify", "--pack", str(pack), key=key)
    assert r.exit_code == 1 and "answers.jsonl in the pack is not what the run's" in r.output

    # a verdict flipped and the manifest's sha256 recomputed to match: the chain names the row
    flipped = flip_verdict(pack)
    _reseal(pack)
    r = sheet_cmd("verify", "--pack", str(pack), key=key)
    assert r.exit_code == 1 and flipped in r.output, r.output


def test_verify_needs_one_of_sheet_or_pack(tmp_path: Path) -> None:
    r = sheet_cmd("verify")
    assert r.exit_code == 2 and "--sheet DIR or --pack DIR" in r.stderr
    r = sheet_cmd("verify", "--pack", str(tmp_path))
    assert r.exit_code == 2 and "no readable manifest.json" in r.stderr


def test_a_damaged_file_or_a_run_without_a_chain_is_not_verified(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet"
    broken, old = judge_run(sheet), judge_run(sheet)
    claims = sheet / "runs" / broken / "claims.jsonl"
    claims.write_text(claims.read_text() + "{oops\n")
    info_path = sheet / "runs" / old / "run.json"
    info = json.loads(info_path.read_text())
    del info["chain"]  # as written before the sheet was chained
    info_path.write_text(json.dumps(info, indent=2))
    r = verify(sheet)
    assert r.exit_code == 1 and "line 14 is not valid JSON" in r.output
    assert f"{old}: NOT VERIFIED: run.json has no hash chain" in r.output
    r = sheet_cmd("export", "--sheet", str(sheet), old, "--out", str(tmp_path / "p"))
    assert r.exit_code == 1 and "no hash chain" in r.stderr
    r = sheet_cmd("verify", "--sheet", str(sheet), "run-unknown")
    assert r.exit_code == 2 and "no run 'run-unknown'" in r.stderr


def test_verify_json_and_the_judge_json_name_the_chain(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet, key=KEY)
    out = json.loads((tmp_path / "out.json").read_text())["sheet"]
    info = json.loads((sheet / "runs" / run_id / "run.json").read_text())
    assert out["chain_head"] == info["chain"]["head"] and out["signed"] is True
    r = sheet_cmd("verify", "--sheet", str(sheet), "--json", "-", key=KEY)
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["ok"] and d["runs"][0]["verified"] and d["runs"][0]["signature"] == "signature valid"
    assert d["runs"][0]["head"] == info["chain"]["head"]
