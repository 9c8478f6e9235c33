"""The front ends over :mod:`indexcheck.api`: the command line (click, :mod:`.app`), the
pytest plugin (:mod:`.pytest_plugin`) and the test assertions (:mod:`.assertions`)."""

from __future__ import annotations


def main() -> None:
    from .signals import install

    install()  # first: SIGTERM and SIGHUP end a run as Ctrl-C does, from the very start
    from .allocator import tune

    tune()  # before the first large block is allocated
    from .app import main as _main

    _main()
