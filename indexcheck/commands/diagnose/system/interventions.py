"""diagnose --system's interventions: each a controlled change to one failing question's
context, replayed beside a control (the same question re-run unchanged).

``--intervene gold-context,fetch=20,exact,threshold=T,top-k=K,no-filter,realigned``:

- ``gold-context``: the expected chunk's text put first in the context actually sent;
- ``fetch=F``: ``retrieve(question, F)`` through the app's own ``assemble``;
- ``exact``: indexcheck's exact search over ``--store`` in place of the backend's
  approximate search, through the app's ``assemble``;
- ``threshold=T`` / ``top-k=K``: the recorded candidates through ``assemble(...,
  threshold=T)`` / ``(..., top_k=K)``, no retriever call;
- ``no-filter``: ``retrieve(question, depth, filter={})``, an empty filter (None would
  mean the app's own);
- ``realigned``: exact search over the store with each misaligned chunk's stored vector
  (exactly those check-index flags among the expected chunks) swapped for its fresh
  embedding; applies only to questions whose expected chunk was flagged.

What a recovery implicates (a factor, never a cause): see :data:`IMPLICATES`.
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
