"""The CLI fixes glibc's mmap and trim thresholds for its own process, unless the user set
glibc's variables; the library never touches them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from indexcheck.cli import allocator


class _Libc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


def test_both_thresholds_are_set() -> None:
    libc = _Libc()
    assert allocator.tune({}, libc)
    assert libc.calls == [
        (allocator.M_MMAP_THRESHOLD, 32 << 20),
        (allocator.M_TRIM_THRESHOLD, 256 << 20),
    ]


@pytest.mark.parametrize("name", allocator.USER_VARIABLES)
def test_the_users_own_setting_wins(name: str) -> None:
    libc = _Libc()
    assert not allocator.tune({name: "1000000"}, libc)
    assert libc.calls == []


def test_the_cli_entry_tunes_and_importing_the_library_does_not() -> None:
    """The console script's main() calls tune() first; `import indexcheck` (and its api)
    never does."""
    code = (
        "import indexcheck.cli.allocator as a\n"
        "seen = []\n"
        "a.tune = lambda *x: seen.append(1) or True\n"
        "import indexcheck, indexcheck.api\n"
        "assert not seen, 'the library tuned the allocator'\n"
        "import indexcheck.cli as c, sys\n"
        "sys.argv = ['indexcheck', '--version']\n"
        "try:\n"
        "    c.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert seen == [1], seen\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_on_this_machine_glibc_takes_the_call() -> None:
    if allocator._libc() is None:
        pytest.skip("not glibc")
    assert allocator.tune({})
