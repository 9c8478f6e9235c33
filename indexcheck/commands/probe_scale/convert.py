"""convert-threshold: a score threshold expressed on another scale, the source scale given
or the one probed (or cached) for a store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...output.model import Section, Text
from ...output.registry import register_sections
from ...output.summary_kit import summary
from ...scales.transforms import convert_threshold as convert_value
from ...scales.transforms import transform_of
from .run import run_probe_scale
from .settings import ProbeScaleSettings

if TYPE_CHECKING:
    from ...stores.base import VectorStore


def convert_threshold(
    value: float,
    from_formula: str | None = None,
    to_formula: str = "cos",
    *,
    store: str | VectorStore | None = None,
    raw_vectors: bool = False,
    trust_pickle: bool = False,
) -> Converted:
    """``value`` on the scale ``from_formula`` (e.g. ``(1+cos)/2``, ``l2^2``; or the scale
    probed, or kept, for ``store``) expressed on ``to_formula``; ``raw_vectors``: the
    vectors are not unit-norm (only conversions within cos, dot or l2 exist). A value
    outside the source scale's range is refused (InputError). ``to_dict()`` is the JSON."""
    normalized, source = not raw_vectors, "given"
    if store is not None:
        if from_formula is not None:
            raise InputError("pass --from or --store, not both")
        scale = run_probe_scale(
            ProbeScaleSettings(store=store, reuse=True, trust_pickle=trust_pickle)
        )
        spec = scale.manifest["store"]["spec"]
        if not scale.ok or scale.transform is None:
            raise InputError(f"the score scale of {spec} is unknown ({scale.message}); pass --from")
        if scale.source == "operator_assumed":
            # the score depends on the operator the application writes: a threshold
            # converted from indexcheck's own choice would be on the wrong scale
            raise InputError(
                f"{spec} scores with whatever operator the application's query uses "
                "(<=> 1-cos, <-> l2, <#> -dot); add &operator= (or &metric=) to the spec to "
                "match it, or pass --from"
            )
        from_formula, normalized, source = scale.transform, bool(scale.normalized), scale.source
    if from_formula is None:
        raise InputError("pass --from FORMULA (the scale of VALUE) or --store SPEC")
    src, dst = transform_of(from_formula), transform_of(to_formula)
    out = convert_value(value, src.formula, dst.formula, normalized=normalized)
    return Converted(
        {
            "value": value,
            "from": src.formula,
            "to": dst.formula,
            "result": out,
            "normalized": normalized,
            "from_higher_is_better": src.higher_is_better,
            "to_higher_is_better": dst.higher_is_better,
            "scale_source": source,
        }
    )


@dataclass
class Converted:
    """convert-threshold's answer; its JSON is exactly ``payload`` (no manifest)."""

    payload: dict[str, Any]
    manifest: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    def to_dict(self) -> dict[str, Any]:
        return dict(self.payload)


def converted_sections(result: Converted) -> list[Section]:
    """One terminal line: the value on both scales and which side each keeps."""
    return [summary(None, Text(_converted_line(result.payload), whole=True))]


def _converted_line(p: dict[str, Any]) -> str:
    def keep(t_hib: bool, x: float) -> str:
        return f"keep scores {'>=' if t_hib else '<='} {x:.6g}"

    return (
        f"{p['value']:.6g} on {p['from']} ({keep(p['from_higher_is_better'], p['value'])}) = "
        f"{p['result']:.6g} on {p['to']} ({keep(p['to_higher_is_better'], p['result'])})"
    )


register_sections(Converted, converted_sections)

__all__ = ["Converted", "convert_threshold"]
