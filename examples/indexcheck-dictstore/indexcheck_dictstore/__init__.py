"""An example indexcheck plugin: a store (``dict:FILE.npz``) and a command (``dict-info``).

Both register through indexcheck's plugin hooks (``indexcheck.plugins``), found through the
``indexcheck`` entry point group of this package's ``pyproject.toml``, exactly as the
built-in stores and commands register. Install it (``pip install
examples/indexcheck-dictstore``): ``--store dict:vectors.npz`` and ``indexcheck dict-info
vectors.npz`` then work.
"""

from __future__ import annotations

from typing import Any

import click

from indexcheck.plugins import hookimpl

from .store import DictStore


@hookimpl
def register_stores(register: Any) -> None:
    # a "module:attr" path is imported only when a dict: spec is opened
    register("dict", "indexcheck_dictstore.store:DictStore")


@click.command("dict-info")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def dict_info(path: str) -> None:
    """Count the vectors of a dict: store file and show their dimension."""
    import numpy as np

    with np.load(path) as npz:
        dims = sorted({npz[key].shape[-1] for key in npz.files})
        click.echo(f"{len(npz.files)} vectors, dimension {', '.join(map(str, dims)) or '-'}")


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(dict_info)


__all__ = ["DictStore", "dict_info"]
