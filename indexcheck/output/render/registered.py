"""Every command's report builder, registered.

Each command's ``core/<command>/report.py`` registers its builder with
:mod:`indexcheck.output.registry` on its last line; importing them all here means any
``--json`` file can be read back, whichever command wrote it.
"""

from __future__ import annotations

from ...commands.check_index import report as _check_index
from ...commands.ci import report as _ci
from ...commands.compare_ann import report as _compare_ann
from ...commands.diagnose import report as _diagnose
from ...commands.diff_index import report as _diff_index
from ...commands.judge import report as _judge
from ...commands.probe_scale import report as _probe_scale
from ...commands.sweep_threshold import report as _sweep_threshold
from ..registry import KINDS, kind_of, sections_of

REPORTS = (
    _check_index,
    _probe_scale,
    _sweep_threshold,
    _compare_ann,
    _diagnose,
    _diff_index,
    _judge,
    _ci,
)

__all__ = ["KINDS", "REPORTS", "kind_of", "sections_of"]
