"""``--engine local|ray`` and ``--ray-address``, shared by check-index, compare-ann and
diff-index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .options import choice_option

F = TypeVar("F", bound=Callable[..., Any])


def engine_options(f: F) -> F:
    f = click.option(
        "--ray-address",
        envvar="RAY_ADDRESS",
        default=None,
        help="Ray cluster to join with --engine ray [env RAY_ADDRESS]; default: a new local one.",
    )(f)
    return choice_option(
        "--engine",
        ["local", "ray"],
        "local",
        "Where the long blocks run (check-index --all embedding, compare-ann exact "
        "search, diff-index new texts): this process, or Ray tasks "
        "(pip install 'indexcheck[ray]').",
    )(f)
