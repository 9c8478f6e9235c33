"""diagnose --system's interventions: each a controlled change to one failing question's
context, replayed beside a control (the same question re-run unchanged).

``--intervene gold-context,fetch=20,exact,threshold=T,top-k=K,no-filter,realigned``:
``gold-context`` puts the expected chunk's text first in the context sent; ``fetch=F`` calls
``retrieve(question, F)`` through the app's ``assemble``; ``exact`` puts indexcheck's exact
search over ``--store`` in place of the backend's; ``threshold=T``/``top-k=K`` pass the recorded
candidates through ``assemble`` again (no retriever call); ``no-filter`` retrieves with
``filter={}`` (None would mean the app's own); ``realigned`` searches exactly with each
flagged expected chunk's stored vector swapped for its fresh embedding (only for questions
whose expected chunk was flagged). The table is in docs/guides/your-pipeline.md; what a
recovery implicates (a factor, never a cause) is :data:`IMPLICATES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import InputError

#: the factor a recovery under each intervention implicates
IMPLICATES = {
    "control": "chance (flaky)",
    "gold-context": "upstream of generation",
    "fetch": "approximate search",
    "exact": "approximate search",
    "threshold": "the threshold",
    "top-k": "the context budget",
    "no-filter": "the filter",
    "realigned": "the index (vector alignment)",
}
#: what to try next when an intervention recovers failures
EXPERIMENTS = {
    "gold-context": "inspect retrieval and assembly for these questions",
    "fetch": "retrieve deeper (or raise the ANN search breadth: efSearch / nprobe)",
    "exact": "raise the ANN search breadth (efSearch / nprobe) or rebuild the ANN index",
    "threshold": "lower the refusal threshold (sweep-threshold measures the trade-off)",
    "top-k": "keep more chunks in the context (raise top-k or the token budget)",
    "no-filter": "check the metadata filter the app applies",
    "realigned": "re-embed the chunks check-index flags and rebuild the index",
}
NEEDS_STORE = ("exact", "realigned")


@dataclass(frozen=True)
class Intervention:
    name: str
    value: float | None = None

    @property
    def arm(self) -> str:
        if self.value is None:
            return self.name
        v = int(self.value) if self.name in ("fetch", "top-k") else self.value
        return f"{self.name}={v:g}" if isinstance(v, float) else f"{self.name}={v}"


def parse_interventions(spec: str | None) -> list[Intervention]:
    """``gold-context,fetch=20,...`` -> interventions; anything else is bad input (exit 2)."""
    out: list[Intervention] = []
    for part in (p.strip() for p in (spec or "").split(",")):
        if not part:
            continue
        name, eq, raw = part.partition("=")
        if name in ("gold-context", "exact", "no-filter", "realigned") and not eq:
            out.append(Intervention(name))
        elif name in ("fetch", "top-k") and eq:
            if not raw.isdigit() or int(raw) < 1:
                raise InputError(f"--intervene {part}: {name} needs a whole number >= 1")
            out.append(Intervention(name, float(raw)))
        elif name == "threshold" and eq:
            try:
                value = float(raw)
            except ValueError:
                value = float("nan")
            if value != value or value in (float("inf"), float("-inf")):
                raise InputError(f"--intervene {part}: threshold needs a finite number")
            out.append(Intervention(name, value))
        else:
            raise InputError(
                f"--intervene: unknown intervention '{part}'; use gold-context, fetch=F, "
                "exact, threshold=T, top-k=K, no-filter or realigned"
            )
    return out


__all__ = ["EXPERIMENTS", "IMPLICATES", "NEEDS_STORE", "Intervention", "parse_interventions"]
