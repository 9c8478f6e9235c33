"""What the commands' results share in their JSON form."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any


def json_form(result: Any, *optional: str) -> dict[str, Any]:
    """``asdict(result)`` without the ``optional`` keys whose value is None: a run that did
    not produce them reads as one from before they existed."""
    out = asdict(result)
    for key in optional:
        if out[key] is None:
            del out[key]
    return out


def picked(obj: Any, *names: str) -> dict[str, Any]:
    """The named attributes (fields or properties) of ``obj``, in that order: the plain part
    of a hand-written JSON form, beside which its computed and renamed keys are added."""
    return {name: getattr(obj, name) for name in names}


__all__ = ["json_form", "picked"]
