"""The question set on disk: its rows (question-set format plus provenance), the JSONL file
and its manifest sidecar, and the chunks read from a store that holds their texts.

Each row carries ``generator``, ``prompt_version``, ``seed`` and ``source`` (chunk id and
xxh3-128 text hash); the sidecar ``OUT.manifest.json`` holds the run's provenance: generator
and judge models, every prompt version, the seed, the options, the corpus fingerprint, the
drops per gate and the calls made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import InputError, OutputError
from ...inputs.corpus import Corpus
from ...output.files import write_atomic
from ...stores.base import VectorStore
from .calls import Task
from .plan import Slot, title


def _provenance(generator: str, versions: dict[str, str], seed: int, task: Task) -> dict[str, Any]:
    name = "out_of_scope_v1.md" if task is Task.OUT_OF_SCOPE else "questions_v1.md"
    return {"generator": generator, "prompt_version": versions[name], "seed": seed}


def in_scope_row(
    generator: str,
    versions: dict[str, str],
    seed: int,
    corpus: Corpus,
    slot: Slot,
    item: dict[str, Any],
) -> dict[str, Any]:
    """A generated in-scope question: ``expected`` = its chunk(s), with their hashes."""
    return {
        "id": slot.id,
        "question": item["question"],
        "expected": [corpus.ids[c] for c in slot.chunks],
        "topic": item.get("topic") or title(corpus.texts[slot.chunks[0]]),
        "kind": slot.task.value,
        "paraphrase": slot.level,
        "source": [{"id": corpus.ids[c], "hash": corpus.hashes[c]} for c in slot.chunks],
        **({"link": slot.link} if slot.link else {}),
        **_provenance(generator, versions, seed, slot.task),
    }


def oos_row(
    generator: str, versions: dict[str, str], seed: int, batch: int, j: int, item: dict[str, Any]
) -> dict[str, Any]:
    """A generated out-of-scope candidate (``in_scope: false``), before its verification."""
    row: dict[str, Any] = {
        "id": f"o{batch + 1:02d}-{j + 1}",
        "question": item["question"],
        "in_scope": False,
        "topic": item.get("topic") or "out-of-scope",
        "refusal_expected": False,
        "kind": "out-of-scope",
    }
    if "adjacent_to" in item:
        row["adjacent_to"] = item["adjacent_to"]
    return row | _provenance(generator, versions, seed, Task.OUT_OF_SCOPE)


def sidecar_path(out: Path) -> Path:
    return out.with_name(out.name + ".manifest.json")


def write_question_set(rows: list[dict[str, Any]], out: Path, manifest: dict[str, Any]) -> Path:
    """Write ``rows`` as JSONL to ``out`` and ``manifest`` beside it (each atomically: a
    reader never sees half a file); returns the sidecar."""
    side = sidecar_path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        write_atomic(side, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise OutputError(
            f"could not write {out}: {exc.strerror or exc}; the questions were generated "
            "but not saved (rerun with --cache to pay for them once)"
        ) from None
    return side


def manifest_of(result: Any, provenance: dict[str, Any], embedder: str | None) -> dict[str, Any]:
    """The sidecar: ``provenance`` (generator, judge, prompts, seed, options), the embedder,
    and the run's corpus, drops, calls and whether it completed."""
    data = result.to_dict()
    keep = ("complete", "stopped", "corpus", "drops", "calls", "multi_hop_note")
    return {**provenance, "embedder": embedder, **{k: data[k] for k in keep}}


def finish_run(
    result: Any,
    options: Mapping[str, Any],
    provenance: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """The run's provenance, for its manifest: the result's seed, generator and judge
    models and prompt versions, the ``options``, and ``provenance`` added. With ``out``
    (and questions kept, not a dry run) the set is written there, that provenance (with the
    ``embedder``'s model) as its sidecar, and ``result.out`` names it."""
    facts = {
        "seed": result.seed,
        "generator": {"model_id": result.generator},
        "judge": result.judge,
        "prompts": result.prompt_versions,
        "options": dict(options),
        **(provenance or {}),
    }
    if out is not None and result.questions and not result.dry_run:
        result.out = str(out)
        model = embedder.model_id if embedder is not None else None
        write_question_set(result.questions, Path(out), manifest_of(result, facts, model))
    return facts


def chunks_of(corpus: Corpus | None, store: VectorStore | None) -> Corpus:
    """``corpus``, else the chunks of ``store`` (a store that keeps its texts); InputError
    when there is neither."""
    if corpus is not None:
        return corpus
    if store is None:
        raise InputError("generate_questions needs chunks or a store that holds texts")
    return corpus_from_store(store)


def corpus_from_store(store: VectorStore) -> Corpus:
    """The chunks (ids and texts) of a store that keeps its texts (DataFileError if not)."""
    from ..check_index.sample.vectors import load_corpus_from_store

    corpus, _, _ = load_corpus_from_store(store)
    return corpus
