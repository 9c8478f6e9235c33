"""Every command's renderer, registered: importing this module imports each command's
``report`` module, whose last line registers its builder and result type with
:mod:`indexcheck.output.registry` (as ir_measures' ``measures/__init__.py`` imports every
measure). The face imports it before it renders a result or reads a ``--json`` file back.
"""

from __future__ import annotations

from . import embed as _embed
from .check_index import report as _check_index
from .ci import report as _ci
from .compare_ann import report as _compare_ann
from .diagnose import report as _diagnose
from .diagnose.system import result as _system
from .diff_index import report as _diff_index
from .judge import answer_checks as _answer_checks
from .judge import report as _judge
from .probe_scale import convert as _convert
from .probe_scale import report as _probe_scale
from .repair import report as _repair
from .sweep_threshold import report as _sweep_threshold

REPORTS = (
    _check_index,
    _probe_scale,
    _sweep_threshold,
    _compare_ann,
    _diagnose,
    _diff_index,
    _judge,
    _ci,
    _embed,
    _answer_checks,
    _system,
    _convert,
    _repair,
)

__all__ = ["REPORTS"]
