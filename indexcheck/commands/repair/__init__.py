"""repair: a corrected copy of a broken index, at the cost of the vectors that exist nowhere.

:mod:`.rows` reads the store once, keeping ids and text keys only; :mod:`.plan` reads where
each chunk's right vector is from the repeated texts alone (the shift models of
:mod:`..check_index.shift.model`) and a seeded sample, embedded, picks the reading and
checks the reused vectors; :mod:`.mend` runs the plan and :mod:`.fill` streams the copy,
embedding only the chunks whose vector no row holds (and any reused vector that failed its
check), to the target's writers (:mod:`.targets`, one per kind); :func:`.run.run_repair`
refuses a bad target before any work (:mod:`.preflight`), opens what the settings name,
runs check-index --all on the copy and stamps the manifest. The user guide is docs/guides/repair.md.
"""

from __future__ import annotations

from .result import RepairResult
from .settings import RepairSettings

__all__ = ["RepairResult", "RepairSettings"]
