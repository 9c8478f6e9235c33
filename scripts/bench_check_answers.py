"""Benchmark check-answers: 1,000 answers against a 100k-chunk knowledge base, through the CLI.

Writes a seeded knowledge base (chunks with numbers, percentages, author-year references,
guideline names and URLs) and answers whose contexts are drawn from it, each answer restating
items of its context or of other chunks, and every tenth planting one item absent from both.
Then runs, each in a fresh process as a user would and ``--repeat`` times (median taken):

- baseline: the same interpreter importing the CLI and reading both files (``load_answers``,
  ``load_chunks``), nothing else;
- ``indexcheck check-answers --answers A --chunks C --json OUT``.

Prints both times and their ratio (the issue's target: under 2), the split the manifest
records (read, index, check), and fails unless exactly the planted items are flagged.

    .venv/bin/python scripts/bench_check_answers.py [--chunks 100000] [--answers 1000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

WORDS = (
    "dog cat diet protein kidney liver dose vaccine clinic owner weight study trial adult "
    "puppy kitten senior breed food water exercise treatment risk sample group result"
).split()
NAMES = "Harper Smith Jones Lee Patel Garcia Nguyen Brown Kim Rossi Novak Silva".split()
ORGS = "WSAVA AAHA ACVIM ISFM FEDIAF BSAVA".split()
BASELINE = (
    "import sys; import indexcheck.cli.app; "
    "from indexcheck.inputs.answers import load_answers; "
    "from indexcheck.inputs.corpus import load_chunks; "
    "load_answers(sys.argv[1]); load_chunks(sys.argv[2])"
)


def sentence(rng: np.random.Generator, i: int) -> str:
    words = [WORDS[j] for j in rng.integers(0, len(WORDS), 14)]
    kind = int(rng.integers(0, 6))
    if kind == 0:
        words.insert(4, f"{int(rng.integers(1, 99))}%")
    elif kind == 1:
        words.insert(3, f"{NAMES[i % len(NAMES)]} ({1950 + i % 70})")
    elif kind == 2:
        words.insert(5, f"{ORGS[i % len(ORGS)]} {1990 + i % 30}")
    elif kind == 3:
        words.append(f"https://kb.example.org/p/{i}")
    elif kind == 4:
        words.insert(2, f"{int(rng.integers(2, 60))} days")
    return " ".join(words).capitalize() + "."


def planted_name(a: int) -> str:
    """A surname no chunk holds: "Zq" and the answer's number in letters."""
    return "Zq" + "".join(chr(97 + int(d)) for d in str(a))


def write_inputs(folder: Path, n_chunks: int, n_answers: int, seed: int) -> tuple[Path, Path, int]:
    rng = np.random.default_rng(seed)
    texts = [" ".join(sentence(rng, i * 7 + s) for s in range(5)) for i in range(n_chunks)]
    chunks = folder / "chunks.jsonl"
    with chunks.open("w", encoding="utf-8") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": f"c{i:06d}", "text": t}) + "\n")
    answers = folder / "answers.jsonl"
    planted = 0
    with answers.open("w", encoding="utf-8") as f:
        for a in range(n_answers):
            picked = rng.integers(0, n_chunks, 4)
            contexts = [{"id": f"c{j:06d}", "text": texts[j]} for j in picked.tolist()]
            other = texts[int(rng.integers(0, n_chunks))]
            body = f"{contexts[0]['text']} {other.split('. ')[0]}."
            if a % 10 == 0:
                body += f" Studies by {planted_name(a)} (2031) found 99.7% of it."  # not in the KB
                planted += 2
            row = {"id": f"a{a}", "question": "What does it say?", "answer": body,
                   "contexts": contexts}  # fmt: skip
            f.write(json.dumps(row) + "\n")
    return answers, chunks, planted


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t, done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--answers", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bench_check_answers"))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    answers, chunks, planted = write_inputs(args.dir, args.chunks, args.answers, args.seed)
    mb = chunks.stat().st_size / 1e6
    print(f"{args.chunks} chunks ({mb:.0f} MB), {args.answers} answers, {planted} planted items")
    exe = Path(sys.executable).with_name("indexcheck")
    out = args.dir / "out.json"
    base, run, split = [], [], []
    for _ in range(args.repeat):
        t, done = timed([sys.executable, "-c", BASELINE, str(answers), str(chunks)])
        if done.returncode != 0:
            print(done.stderr)
            return 3
        base.append(t)
        cmd = [str(exe), "check-answers", "--answers", str(answers), "--chunks", str(chunks)]
        t, done = timed([*cmd, "--json", str(out)])
        if done.returncode != 1:
            print(f"exit {done.returncode}, expected 1 (planted flags): {done.stderr}")
            return 3
        run.append(t)
        split.append(json.loads(out.read_text())["manifest"]["seconds"])
    data = json.loads(out.read_text())
    flagged = {(a["id"], f["text"]) for a in data["answers"] for f in a["flags"]}
    expected = {
        (f"a{a}", x)
        for a in range(0, args.answers, 10)
        for x in (f"{planted_name(a)} (2031)", "99.7%")
    }
    if flagged != expected:
        extra, missed = sorted(flagged - expected)[:5], sorted(expected - flagged)[:5]
        print(
            f"FAIL: flagged {len(flagged)}, planted {len(expected)}; extra {extra} missed {missed}"
        )
        return 1
    b, r = statistics.median(base), statistics.median(run)
    s = {k: statistics.median(x[k] for x in split) for k in split[0]}
    print(f"reading the inputs (baseline process): {b:.2f} s")
    print(f"check-answers (CLI process):           {r:.2f} s")
    inside = ", ".join(f"{k} {v:.2f} s" for k, v in s.items())
    print(f"ratio: {r / b:.2f}x (target < 2x); inside the run: {inside}")
    print(f"every planted item flagged ({len(expected)}) and nothing else")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
