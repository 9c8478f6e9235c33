"""Production traces as input: OpenInference/Phoenix (JSON, JSONL, Parquet), OTLP JSON
(OpenInference and OTel GenAI spans), Langfuse and LangSmith exports read by ``--answers``.

The exports are made at test time by real instrumentation of a LangChain pipeline
(tests/builders/traced_pipeline.py, whose docstring says which files are written by the
SDKs' own exporters and which are built from the recorded spans because their SDKs cannot
export offline: Phoenix's Parquet layout and the Langfuse export). Every format must give
the same judge results as the answers.jsonl the pipeline's own outputs make.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import DataFileError
from indexcheck.inputs.answers import read_answers
from indexcheck.inputs.corpus import load_chunks
from indexcheck.inputs.formats.traces import sniff_format
from indexcheck.inputs.formats.traces.otlp import otlp_id

ROOT = Path(__file__).resolve().parents[3]
CHUNKS = ROOT / "fixtures" / "chunks.jsonl"
JUDGE = "py:tests.judge_hook:context_judge"
FORMATS = {
    "openinference_jsonl": "openinference",
    "openinference_json": "openinference",
    "openinference_parquet": "openinference",
    "otlp": "otlp",
    "otlp_genai": "otlp",
    "langfuse": "langfuse",
    "langsmith": "langsmith",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("openinference.instrumentation.langchain")
    from tests.builders.trace_exports import write_exports
    from tests.builders.traced_pipeline import run_pipeline

    tmp = tmp_path_factory.mktemp("traces")
    rec = run_pipeline(tmp)
    rec.files = write_exports(rec, tmp / "exports")
    return rec


@pytest.fixture(scope="module")
def files(recorded: Any) -> dict[str, Path]:
    return recorded.files


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def judged(path: Path, *extra: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """Exit code, the judged answers keyed by question (ids differ per format: trace ids),
    and the whole JSON result."""
    r = run("judge", "--answers", str(path), "--judge", JUDGE, "--json", "-", *extra)
    assert r.exit_code in (0, 1), r.stderr
    out = json.loads(r.stdout[r.stdout.index("{") :])
    question = {a.id: a.question for a in read_answers(path, chunks=_chunks()).rows}
    answers = {}
    for a in out["answers"]:
        answers[question[a["id"]]] = {k: v for k, v in a.items() if k not in ("id", "cached")}
    return r.exit_code, answers, out


def _chunks() -> Any:
    return load_chunks(CHUNKS, "id", "text")


def test_the_pipeline_answers_refuses_and_fabricates(recorded: Any) -> None:
    answers = [a["answer"] for a in recorded.answers]
    assert len(answers) == 6
    assert sum("I don't know" in a for a in answers) == 2
    assert sum("free drinks" in a for a in answers) == 1
    assert all(len(a["contexts"]) == 3 for a in recorded.answers)


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_export_gives_the_judge_results_of_its_answers_file(
    files: dict[str, Path], name: str
) -> None:
    code_ref, ref, ref_out = judged(files["answers"])
    code, got, out = judged(files[name], "--chunks", str(CHUNKS))
    assert got == ref
    assert code == code_ref == 1  # the fabrication is UNSUPPORTED in both
    for key in ("counts", "statuses", "supported_rate", "citations"):
        assert out[key] == ref_out[key], key
    assert out["statuses"] == {"JUDGED": 4, "REFUSAL": 2, "UNJUDGED": 0}
    assert out["manifest"]["answers_source"]["format"] == FORMATS[name]
    assert out["manifest"]["answers_source"]["traces"] == 6
    assert "answers_source" not in ref_out["manifest"]


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_export_is_sniffed(files: dict[str, Path], name: str) -> None:
    assert sniff_format(files[name]) == FORMATS[name]
    assert sniff_format(files["answers"]) == "own"


@pytest.mark.parametrize("name", ["openinference_jsonl", "otlp", "langfuse"])
def test_langchain_openinference_documents_pair_by_content_hash_and_scores_are_absent(
    files: dict[str, Path], name: str
) -> None:
    r = run("judge", "--answers", str(files[name]), "--chunks", str(CHUNKS), "--judge", JUDGE,
            "--json", "-")  # fmt: skip
    source = json.loads(r.stdout[r.stdout.index("{") :])["manifest"]["answers_source"]
    assert source["paired_by_content"] == 18 and source["documents"] == 18
    assert source["scores"] == "absent" and source["documents_with_score"] == 0
    assert "warning:" in r.stderr and "scores are absent" in r.stderr
    assert "18 of 18 documents carry no id and were paired to chunks by content hash" in r.stderr


def test_pairing_uses_diff_index_normalised_hash(files: dict[str, Path], tmp_path: Path) -> None:
    """A chunks file that differs from the traced text only in line endings and outer
    whitespace still pairs (NFC, CRLF -> LF, strip, as diff-index hashes)."""
    rows = [json.loads(line) for line in CHUNKS.read_text().splitlines()]
    crlf = tmp_path / "chunks-crlf.jsonl"
    crlf.write_text(
        "".join(
            json.dumps({**r, "text": "  " + r["text"].replace("\n", "\r\n") + "\n"}) + "\n"
            for r in rows
        )  # fmt: skip
    )
    exact = read_answers(files["openinference_jsonl"], chunks=_chunks()).rows
    loose = read_answers(files["openinference_jsonl"], chunks=load_chunks(crlf, "id", "text"))
    assert [[p.id for p in a.contexts] for a in loose.rows] == [
        [p.id for p in a.contexts] for a in exact
    ]


def test_ids_and_genai_documents_need_no_chunks(files: dict[str, Path]) -> None:
    """LangSmith runs keep each LangChain Document's id, GenAI spans record document ids:
    no pairing, and no --chunks needed."""
    for name in ("langsmith", "otlp_genai"):
        read = read_answers(files[name])
        assert read.source is not None and read.source["paired_by_content"] == 0
        assert all(len(a.contexts) == 3 for a in read.rows)


def _retriever_line(path: Path) -> tuple[list[dict[str, Any]], int]:
    spans = [json.loads(line) for line in path.read_text().splitlines()]
    i = next(i for i, s in enumerate(spans) if s["attributes"].get("openinference.span.kind")
             == "RETRIEVER")  # fmt: skip
    return spans, i


def test_without_chunks_the_missing_document_id_is_named_with_its_span(
    files: dict[str, Path],
) -> None:
    spans, i = _retriever_line(files["openinference_jsonl"])
    r = run("judge", "--answers", str(files["openinference_jsonl"]), "--judge", JUDGE)
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    span_id = spans[i]["context"]["span_id"][2:]
    assert f"line {i + 1}, span {span_id}" in line
    assert "retrieval.documents.0.document.id is missing" in line and "--chunks" in line


def test_a_document_with_neither_id_nor_content_is_named(
    files: dict[str, Path], tmp_path: Path
) -> None:
    spans, i = _retriever_line(files["openinference_jsonl"])
    del spans[i]["attributes"]["retrieval.documents.1.document.content"]
    bad = tmp_path / "spans.jsonl"
    bad.write_text("".join(json.dumps(s) + "\n" for s in spans))
    r = run("judge", "--answers", str(bad), "--chunks", str(CHUNKS), "--judge", JUDGE)
    assert r.exit_code == 2
    span_id = spans[i]["context"]["span_id"][2:]
    assert f"spans.jsonl line {i + 1}, span {span_id}: retrieval.documents.1.document.id and " \
        "retrieval.documents.1.document.content are both missing" in r.stderr  # fmt: skip
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_document_whose_content_is_in_no_chunk_is_named(
    files: dict[str, Path], tmp_path: Path
) -> None:
    spans, i = _retriever_line(files["openinference_jsonl"])
    spans[i]["attributes"]["retrieval.documents.2.document.content"] = "Text from another index."
    bad = tmp_path / "spans.jsonl"
    bad.write_text("".join(json.dumps(s) + "\n" for s in spans))
    doc = r"retrieval\.documents\.2\.document"
    with pytest.raises(DataFileError, match=rf"{doc}\.id is missing and {doc}\.content matches no"):
        read_answers(bad, chunks=_chunks())


def test_langsmith_and_genai_missing_fields_are_named(
    files: dict[str, Path], tmp_path: Path
) -> None:
    runs = [json.loads(line) for line in files["langsmith"].read_text().splitlines()]
    k = next(i for i, r in enumerate(runs) if r["run_type"] == "retriever")
    doc = runs[k]["outputs"]["documents"][0]
    doc.pop("id", None)
    doc.pop("page_content", None)
    doc.get("kwargs", {}).pop("id", None)
    doc.get("kwargs", {}).pop("page_content", None)
    bad = tmp_path / "runs.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in runs))
    with pytest.raises(DataFileError, match=rf"runs.jsonl line {k + 1}, run {runs[k]['id']}: "
                       r"outputs\.documents\[0\]\.id and .* are both missing"):  # fmt: skip
        read_answers(bad)

    data = json.loads(files["otlp_genai"].read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    sp = next(s for s in spans if s["name"].startswith("retrieval"))
    attr = next(a for a in sp["attributes"] if a["key"] == "gen_ai.retrieval.documents")
    docs = json.loads(attr["value"]["stringValue"])
    del docs[0]["id"]
    attr["value"]["stringValue"] = json.dumps(docs)
    bad = tmp_path / "genai.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(DataFileError, match=rf"span {sp['spanId']}: gen_ai\.retrieval\."
                       r"documents\[0\]\.id is missing; pass --chunks"):  # fmt: skip
        read_answers(bad)
    assert [p.id for p in read_answers(bad, chunks=_chunks()).rows[0].contexts]  # pairs


def test_answers_format_names_the_format(files: dict[str, Path], tmp_path: Path) -> None:
    code, got, _ = judged(files["otlp"], "--chunks", str(CHUNKS), "--answers-format", "otlp")
    _, ref, _ = judged(files["answers"], "--answers-format", "own")
    assert got == ref
    # the wrong format named: one line naming what that format needs
    r = run("judge", "--answers", str(files["openinference_jsonl"]), "--answers-format",
            "langsmith", "--judge", JUDGE)  # fmt: skip
    assert r.exit_code == 2
    assert "phoenix-spans.jsonl looks like openinference, not langsmith: pass " \
        "--answers-format openinference" in r.stderr  # fmt: skip
    r = run("judge", "--answers", str(files["langsmith"]), "--answers-format", "own",
            "--judge", JUDGE)  # fmt: skip
    assert r.exit_code == 2 and "looks like langsmith, not own" in r.stderr
    r = run("judge", "--answers", str(files["openinference_jsonl"]), "--answers-format",
            "phoenix", "--judge", JUDGE)  # fmt: skip
    assert r.exit_code == 2 and "openinference" in r.stderr
    # a file nothing recognises: sniffing says so and points at --answers-format
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps([{"span": 1, "payload": "x"}]))
    r = run("judge", "--answers", str(odd), "--judge", JUDGE)
    assert r.exit_code == 2 and "cannot tell which export odd.json is" in r.stderr
    assert "--answers-format own|openinference|otlp|langfuse|langsmith" in r.stderr


def test_otlp_ids_in_base64_are_read_as_hex() -> None:
    assert otlp_id("AAAAAAAAAAAAAAAAAAAAAQ==", 32) == "0" * 31 + "1"
    assert otlp_id("0123456789abcdef", 16) == "0123456789abcdef"


def test_traces_refusals_feed_diagnose(recorded: Any, tmp_path: Path) -> None:
    path = recorded.files["openinference_jsonl"]
    out, js = tmp_path / "refusals.jsonl", tmp_path / "refusals.json"
    r = run("traces", "refusals", "--answers", str(path), "--chunks", str(CHUNKS),
            "--out", str(out), "--json", str(js))  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert "2 of 6 answers refused (33.3%) [format openinference]" in r.stdout
    result = json.loads(js.read_text())
    refused = {a["id"] for a in recorded.answers if "I don't know" in a["answer"]}
    assert {x["id"] for x in result["refusals"]} == refused
    assert result["answers_source"]["scores"] == "absent"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {row["id"] for row in rows} == refused
    retrieved = {a["id"]: [c["id"] for c in a["contexts"]] for a in recorded.answers}
    assert all(row["expected"] == retrieved[row["id"]] for row in rows)
    assert all(row["expected_from"] == "retrieved" for row in rows)

    spec = f"faiss:{recorded.faiss_dir}?index_name=docs"
    r = run("diagnose", "--store", spec, "--trust-pickle", "--embedder", "minilm",
            "--questions", str(out), "--chunks", str(CHUNKS), "--answers", str(path),
            "-k", "3", "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.stderr
    diag = json.loads(r.stdout[r.stdout.index("{") :])
    labels = {q["id"]: q["label"] for q in diag["questions"]}
    assert labels == {i: "GENERATION_REFUSED" for i in refused}
    assert diag["manifest"]["answers_source"]["format"] == "openinference"


def test_traces_refusals_without_chunks_names_the_field(files: dict[str, Path]) -> None:
    r = run("traces", "refusals", "--answers", str(files["openinference_jsonl"]))
    assert r.exit_code == 2 and "document.id is missing; pass --chunks" in r.stderr
    r = run("traces", "refusals", "--answers", str(files["langsmith"]), "--refusal-pattern", "x*")
    assert r.exit_code == 2 and "matches an empty text" in r.stderr


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    """Dotted keys as Phoenix keeps attributes: nested objects, numbered parts as lists."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        node: Any = root
        parts = key.split(".")
        for part, nxt in zip(parts, parts[1:], strict=False):
            child = [] if nxt.isdigit() else {}
            if isinstance(node, list):
                while len(node) <= int(part):
                    node.append(child)
                node = node[int(part)]
            else:
                node = node.setdefault(part, child)
        if isinstance(node, list):
            node.append(value)
        else:
            node[parts[-1]] = value
    return root


def test_phoenix_nested_span_json_reads_as_the_sdk_json(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """Phoenix's span JSON: ``span_kind`` beside the span, attributes nested
    (``{"retrieval": {"documents": [{"document": {"content": ...}}]}}``)."""
    spans = [json.loads(line) for line in files["openinference_jsonl"].read_text().splitlines()]
    for s in spans:
        s["span_kind"] = s["attributes"].pop("openinference.span.kind")
        s["attributes"] = _nest(s["attributes"])
    assert "document" in spans[1]["attributes"]["retrieval"]["documents"][0]
    nested = tmp_path / "phoenix-nested.json"
    nested.write_text(json.dumps({"data": spans}))
    assert sniff_format(nested) == "openinference"
    got = read_answers(nested, chunks=_chunks()).rows
    ref = read_answers(files["openinference_jsonl"], chunks=_chunks()).rows
    assert [(a.id, a.question, a.answer, a.contexts) for a in got] == [
        (a.id, a.question, a.answer, a.contexts) for a in ref
    ]


def test_other_containers_of_the_same_exports(files: dict[str, Path], tmp_path: Path) -> None:
    """OTLP as the Collector's file exporter writes it (one request a line), Langfuse as its
    API pages it (``{"data": [...]}``), LangSmith runs as one JSON list."""
    request = json.loads(files["otlp"].read_text())
    one_a_line = tmp_path / "otlp.jsonl"
    one_a_line.write_text(json.dumps(request) + "\n")
    paged = tmp_path / "langfuse.json"
    paged.write_text(json.dumps({"data": json.loads(files["langfuse"].read_text()), "meta": {}}))
    runs = tmp_path / "runs.json"
    runs.write_text(
        json.dumps([json.loads(x) for x in files["langsmith"].read_text().splitlines()])
    )
    for copy, original in ((one_a_line, "otlp"), (paged, "langfuse"), (runs, "langsmith")):
        assert sniff_format(copy) == FORMATS[original]
        got = read_answers(copy, chunks=_chunks()).rows
        ref = read_answers(files[original], chunks=_chunks()).rows
        assert [(a.id, a.answer, a.contexts) for a in got] == [
            (a.id, a.answer, a.contexts) for a in ref
        ]


def test_traces_refusals_take_labels_from_a_question_set(recorded: Any, tmp_path: Path) -> None:
    """With --questions, a refusal whose question is labelled takes those labels: diagnose
    then tells a refusal with the answer in context (q003: GENERATION_REFUSED) from one whose
    chunk retrieval ranked below k (q005: RANKED_OUT, its chunk came 4th)."""
    path = recorded.files["openinference_jsonl"]
    out, js = tmp_path / "refusals.jsonl", tmp_path / "refusals.json"
    questions = ROOT / "fixtures" / "questions.jsonl"
    r = run("traces", "refusals", "--answers", str(path), "--chunks", str(CHUNKS),
            "--questions", str(questions), "--out", str(out), "--json", str(js))  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert "take as 'expected' the chunks their trace retrieved" not in r.stdout
    result = json.loads(js.read_text())
    assert result["labelled_from_questions"] == 2 and result["labelled_from_retrieved"] == 0
    rows = {row["expected_from"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert rows["questions:q003"]["expected"] == ["borrowing#library-of-things"]
    assert rows["questions:q005"]["expected"] == ["borrowing#picking-up-holds"]
    spec = f"faiss:{recorded.faiss_dir}?index_name=docs"
    r = run("diagnose", "--store", spec, "--trust-pickle", "--embedder", "minilm",
            "--questions", str(out), "--chunks", str(CHUNKS), "--answers", str(path),
            "-k", "3", "--json", "-")  # fmt: skip
    assert r.exit_code == 1, r.stderr
    diag = json.loads(r.stdout[r.stdout.index("{") :])
    labels = {q["id"]: q["label"] for q in diag["questions"]}
    assert labels[rows["questions:q003"]["id"]] == "GENERATION_REFUSED"
    assert labels[rows["questions:q005"]["id"]] == "RANKED_OUT"  # ranked 4th, cut by k=3


def _genai(files: dict[str, Path]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = json.loads(files["otlp_genai"].read_text())
    return data, data["resourceSpans"][0]["scopeSpans"][0]["spans"]


def _attr(span: dict[str, Any], key: str) -> dict[str, Any]:
    return next(a for a in span["attributes"] if a["key"] == key)


def test_genai_scores_when_recorded_and_answers_from_choice_events(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """Scores in gen_ai.retrieval.documents reach the passages (no warning); before GenAI
    1.37 the answer came as a ``gen_ai.choice`` event, which is read too."""
    data, spans = _genai(files)
    for sp in spans:
        if sp["name"].startswith("retrieval"):
            attr = _attr(sp, "gen_ai.retrieval.documents")
            docs = json.loads(attr["value"]["stringValue"])
            for n, d in enumerate(docs):
                d["score"] = 0.9 - n / 10
            attr["value"]["stringValue"] = json.dumps(docs)
        else:  # the answer only as an event on the chat span
            out = [a for a in sp["attributes"] if a["key"] == "gen_ai.output.messages"]
            for a in out:
                sp["attributes"].remove(a)
            if sp["name"].startswith("chat"):
                text = json.loads(out[0]["value"]["stringValue"])[0]["parts"][0]["content"]
                message = {"key": "message", "value": {"kvlistValue": {"values": [
                    {"key": "content", "value": {"stringValue": text}}]}}}  # fmt: skip
                sp["events"] = [{"name": "gen_ai.choice", "attributes": [message]}]
    changed = tmp_path / "genai.json"
    changed.write_text(json.dumps(data))
    read = read_answers(changed)
    assert read.source is not None and read.source["scores"] == "present"
    assert read.source["warnings"] == []
    assert [p.score for p in read.rows[0].contexts] == pytest.approx([0.9, 0.8, 0.7])
    ref = {a.id: a.answer for a in read_answers(files["otlp_genai"]).rows}
    assert {a.id: a.answer for a in read.rows} == ref


def test_a_trace_without_question_or_answer_is_named(
    files: dict[str, Path], tmp_path: Path
) -> None:
    data, spans = _genai(files)
    for sp in spans:
        sp["attributes"] = [a for a in sp["attributes"] if a["key"] != "gen_ai.output.messages"]
    bad = tmp_path / "genai.json"
    bad.write_text(json.dumps(data))
    root = next(s for s in spans if "parentSpanId" not in s)
    with pytest.raises(DataFileError, match=rf"span {root['spanId']}: the trace records no answer"):
        read_answers(bad)
    data, spans = _genai(files)
    for sp in spans:
        sp["attributes"] = [a for a in sp["attributes"] if a["key"] not in
                            ("gen_ai.retrieval.query.text", "gen_ai.input.messages")]  # fmt: skip
    bad.write_text(json.dumps(data))
    with pytest.raises(DataFileError, match=r"the trace records no question"):
        read_answers(bad)


def test_hostile_nesting_is_one_line(tmp_path: Path) -> None:
    """A span whose attributes nest thousands deep: exit 2 or read, never a traceback."""
    deep = '{"a": ' * 5000 + '"x"' + "}" * 5000
    bad = tmp_path / "deep.json"
    bad.write_text(
        '[{"context": {"trace_id": "0x1", "span_id": "0x2"}, "attributes": ' + deep + "}]"
    )
    r = run("judge", "--answers", str(bad), "--judge", JUDGE)
    assert r.exit_code == 2 and "deeper than indexcheck can read" in r.stderr
    shallow: Any = "x"
    for _ in range(900):  # parses, but deeper than any trace attribute: kept whole
        shallow = {"input": shallow}
    rec = {"context": {"trace_id": "0x1", "span_id": "0x2"}, "attributes": {"input": shallow}}
    bad.write_text(json.dumps([rec]))
    r = run("judge", "--answers", str(bad), "--judge", JUDGE)
    assert r.exit_code == 2 and "the trace records no question" in r.stderr


def test_check_answers_reads_a_trace_in_the_library_as_the_cli_does(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI goes through ``api.check_answers``; the library, given the export's path,
    pairs its documents without ids to the chunks as the CLI does (it read the export
    without the chunks, and refused it)."""
    import indexcheck
    from indexcheck import api

    calls: list[Any] = []
    real = api.check_answers
    monkeypatch.setattr(api, "check_answers", lambda *a, **k: calls.append(a) or real(*a, **k))
    path = files["openinference_jsonl"]
    r = run("check-answers", "--answers", str(path), "--chunks", str(CHUNKS), "--json", "-")
    assert r.exit_code in (0, 1), r.output
    assert len(calls) == 1
    cli_answers = json.loads(r.stdout[r.stdout.index("{") :])["answers"]
    monkeypatch.undo()  # indexcheck keeps a name it resolved: it must resolve the real one
    lib = indexcheck.check_answers(path, CHUNKS, answers_format="openinference")
    assert lib.to_dict()["answers"] == cli_answers
    assert indexcheck.check_answers(path, CHUNKS).to_dict()["answers"] == cli_answers


def test_judge_reads_a_trace_in_the_library_as_the_cli_does(files: dict[str, Path]) -> None:
    """``indexcheck.judge(export, JUDGE, chunks=...)`` pairs the documents without ids as
    ``judge --chunks`` does (the library had no chunks to pass, and refused the export)."""
    import indexcheck

    path = files["openinference_jsonl"]
    r = run("judge", "--answers", str(path), "--chunks", str(CHUNKS), "--judge", JUDGE,
            "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    cli_answers = json.loads(r.stdout[r.stdout.index("{") :])["answers"]
    lib = indexcheck.judge(path, JUDGE, chunks=CHUNKS)
    assert lib.to_dict()["answers"] == cli_answers
    with pytest.raises(DataFileError, match="document.id is missing"):
        indexcheck.judge(path, JUDGE)  # without the chunks: named, as the CLI names it


def test_diagnose_warns_of_a_trace_export_as_it_reads_it_even_when_the_run_then_fails(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """The warnings of a trace export given to ``diagnose --answers`` are printed when the
    file is read, before the store opens: a run that then fails still shows them."""
    missing = tmp_path / "no-such-index"
    r = run("diagnose", "--store", f"faiss:{missing}", "--questions",
            str(ROOT / "fixtures" / "questions.jsonl"), "--chunks", str(CHUNKS),
            "--answers", str(files["otlp"]))  # fmt: skip
    assert r.exit_code == 2, r.stderr
    assert "scores are absent" in r.stderr
    assert r.stderr.index("scores are absent") < r.stderr.index("error:")
