"""The examples at the end of each command's ``--help`` (click's epilog), one place for all.

Paths are the repository's demo (``make demo`` builds ``reports/demo/good-index``); every
example is a command line that parses (tests/cli/test_help_examples.py runs each through
click's parser).
"""

from __future__ import annotations

import click

GOOD = "faiss:reports/demo/good-index"
CHUNKS = "fixtures/chunks.jsonl"
QUESTIONS = "fixtures/questions.jsonl"
ANSWERS = "fixtures/judge/answers.jsonl"

#: command path -> example command lines (without the leading ``indexcheck``)
EXAMPLES: dict[str, tuple[str, ...]] = {
    "check-index": (
        f"check-index --store {GOOD} --chunks {CHUNKS} --sample 50",
        f"check-index --store {GOOD} --chunks {CHUNKS} --all --json out.json --report reports/ci",
    ),
    "probe-scale": (f"probe-scale --store {GOOD} --json scale.json",),
    "convert-threshold": ("convert-threshold 0.80 --from '(1+cos)/2' --to cos",),
    "sweep-threshold": (
        f"sweep-threshold --store {GOOD} --questions {QUESTIONS} --chunks {CHUNKS} -k 4 --fetch 20",
    ),
    "compare-ann": (f"compare-ann --store {GOOD} -k 4 --fetch 4,10,20 --target 0.01",),
    "diagnose": (
        f"diagnose --store {GOOD} --questions {QUESTIONS} --chunks {CHUNKS} -k 4 --fetch 20",
    ),
    "diff-index": (
        "diff-index --old faiss:./index-live --new faiss:./index-candidate "
        f"--chunks-new {CHUNKS} --json diff.json",
    ),
    "embed": (f"embed --chunks {CHUNKS} --embedder minilm --out vectors.parquet",),
    "repair": (
        "repair --store faiss:./index-live --out ./index-repaired --dry-run",
        "repair --store faiss:./index-live --out ./index-repaired --verify all --json repair.json",
    ),
    "check-answers": (f"check-answers --answers {ANSWERS} --chunks {CHUNKS}",),
    "judge": (
        f"judge --answers {ANSWERS} --chunks {CHUNKS} --judge mistral:mistral-small-latest "
        "--json judge.json --sheet evidence/",
    ),
    "ci": (
        "ci --config examples/indexcheck.toml --json baseline.json",
        "ci --config examples/indexcheck.toml --baseline baseline.json --junit junit.xml",
    ),
    "questions generate": (
        f"questions generate --chunks {CHUNKS} --generator mistral:mistral-small-latest "
        "--out questions.jsonl",
    ),
    "traces refusals": (
        f"traces refusals --answers {ANSWERS} --chunks {CHUNKS} --questions {QUESTIONS} "
        "--out refusals.jsonl",
    ),
    "sheet verify": ("sheet verify --sheet evidence/", "sheet verify --pack audit/"),
    "sheet revise": (
        "sheet revise --sheet evidence/ RUN/ANSWER/1 --verdict UNSUPPORTED --reviewer ana",
    ),
    "sheet diff": ("sheet diff --sheet evidence/ RUN_A RUN_B",),
    "sheet export": ("sheet export --sheet evidence/ RUN --out audit/",),
    "model status": ("model status", "model status --recalibrate"),
    "model install": ("model install",),
    "completion": ("completion bash > ~/.indexcheck-complete.bash",),
}


def epilog(lines: tuple[str, ...]) -> str:
    """An epilog click prints as written (``\\b``: no rewrapping)."""
    return "\b\nExamples:\n" + "\n".join(f"  indexcheck {line}" for line in lines)


def add_examples(cmd: click.Command, path: str = "") -> None:
    """Set the epilog of ``cmd`` (and of every subcommand of a group) from EXAMPLES."""
    name = f"{path} {cmd.name}".strip() if cmd.name else path
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            add_examples(sub, name)
        return
    if cmd.epilog is None and name in EXAMPLES:
        cmd.epilog = epilog(EXAMPLES[name])


__all__ = ["EXAMPLES", "add_examples", "epilog"]
