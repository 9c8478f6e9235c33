"""The CLI fixes glibc's mmap and trim thresholds for its own process, unless the user set
glibc's variables; the library never touches them."""

from __future__ import annotations

import os
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


def test_a_glibc_malloc_tunable_wins_too() -> None:
    libc = _Libc()
    assert not allocator.tune({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"}, libc)
    assert allocator.tune({"GLIBC_TUNABLES": "glibc.rtld.nns=2"}, libc)


_MAPPED = (
    "import ctypes\n"
    "libc = ctypes.CDLL('libc.so.6')\n"
    "libc.malloc.restype = ctypes.c_void_p\n"
    "libc.free.argtypes = [ctypes.c_void_p]\n"
    "def mapped(size):\n"
    "    p = libc.malloc(size)\n"
    "    head = ctypes.c_size_t.from_address(p - 8).value  # the chunk's size field\n"
    "    libc.free(p)\n"
    "    return bool(head & 2)  # IS_MMAPPED\n"
)


def test_on_this_machine_a_large_block_comes_from_the_heap_after_tune() -> None:
    """In a process of its own (the test process keeps its allocator): a fresh 4 MB block
    is mapped by default and comes from the heap once tuned."""
    if allocator._libc() is None:
        pytest.skip("not glibc")
    code = _MAPPED + (
        "from indexcheck.cli.allocator import tune\n"
        "before = mapped(4 << 20)\n"
        "assert tune()\n"
        "print(before, mapped(4 << 20))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.pop("GLIBC_TUNABLES", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]
