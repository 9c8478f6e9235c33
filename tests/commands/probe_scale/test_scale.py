"""probe-scale and convert-threshold: the catalogue, its conversions, the probe on stores
whose score formula is known (or deliberately not), the cache, and the two commands."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from indexcheck.cli.app import Group
from indexcheck.cli.probe_scale import convert_threshold_cmd, probe_scale_cmd
from indexcheck.commands import probe_scale as scale
from indexcheck.commands.probe_scale import (
    CATALOGUE,
    ScaleResult,
    convert_threshold,
    probe_scale,
    scale_for,
    transform_of,
)
from indexcheck.errors import InputError
from indexcheck.stores.base import StoreInfo
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import MemoryStore

N, D = 200, 16
ISSUE_FORMULAS = [
    "(1+cos)/2", "1-cos", "l2^2", "l2", "-dot", "1/(1+l2^2)", "(1+dot)/2", "1-dot",
    "1/(2-cos)", "dot", "cos",
]  # fmt: skip
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))


def vectors(unit: bool, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((N, D)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True) if unit else x


class ScoredStore(MemoryStore):
    """An in-memory store that reports ``fn(variable)`` in float32 for every returned pair,
    and counts the query vectors, fetch calls and iter_vectors blocks it serves."""

    def __init__(
        self,
        vecs: np.ndarray,
        variable: str,
        fn: Callable[[np.ndarray], np.ndarray],
        documented: str = "unknown",
    ) -> None:
        metric = {"cos": "cosine", "dot": "ip", "l2": "l2"}[variable]
        super().__init__([f"c{i:03d}" for i in range(len(vecs))], vecs, metric=metric)
        self.variable, self.fn, self.documented = variable, fn, documented
        self.queries_sent = 0

    def info(self) -> StoreInfo:
        return dataclasses.replace(super().info(), score=self.documented, higher_is_better=None)

    def query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(vectors, dtype=np.float64)
        self.queries_sent += len(q)
        _, I = super().exact_query(vectors, k)
        out = np.full(I.shape, np.nan, dtype=np.float32)
        for a, b in zip(*np.nonzero(I != None), strict=True):  # noqa: E711
            x = self.vectors[self._pos[I[a, b]]].astype(np.float64)
            dot = float(q[a] @ x)
            var = {
                "cos": dot / (np.linalg.norm(q[a]) * np.linalg.norm(x)),
                "dot": dot,
                "l2": float(np.linalg.norm(q[a] - x)),
            }[self.variable]
            out[a, b] = np.float32(self.fn(np.asarray(var)))
        return out, I


def catalogue_store(formula: str, unit: bool, documented: str = "unknown") -> ScoredStore:
    t = CATALOGUE[formula]
    return ScoredStore(vectors(unit), t.variable, t.apply, documented)


# -- catalogue and conversions -------------------------------------------------------


def test_catalogue_holds_every_formula_of_the_issue_with_its_direction() -> None:
    assert set(ISSUE_FORMULAS) <= set(CATALOGUE)
    for f, t in CATALOGUE.items():
        assert t.formula == f and t.variable in ("cos", "dot", "l2")
    lower = {f for f, t in CATALOGUE.items() if not t.higher_is_better}
    assert lower == {"1-cos", "2-2cos", "-dot", "1-dot", "l2", "l2^2"}
    assert CATALOGUE["(1+cos)/2"].score_range(True) == (0.0, 1.0)
    assert CATALOGUE["1/(2-cos)"].score_range(False) == pytest.approx((1 / 3, 1.0))
    assert CATALOGUE["l2^2"].score_range(True) == (0.0, 4.0)
    assert CATALOGUE["l2^2"].score_range(False) == (0.0, np.inf)
    assert CATALOGUE["-dot"].score_range(False) == (-np.inf, np.inf)
    assert CATALOGUE["1/(1+l2^2)"].score_range(True) == pytest.approx((0.2, 1.0))


def test_transform_of_forgives_spacing_and_rejects_unknown_formulas() -> None:
    assert transform_of(" (cos + 1)/2 ").formula == "(1+cos)/2"
    assert transform_of("L2**2").formula == "l2^2"
    assert transform_of("cosine").formula == "cos"
    with pytest.raises(InputError, match="unknown score formula 'l1'; use one of"):
        transform_of("l1")


def test_apply_keeps_float32() -> None:
    x = np.asarray([0.25, 0.5], dtype=np.float32)
    assert CATALOGUE["(1+cos)/2"].apply(x).dtype == np.float32
    assert CATALOGUE["l2^2"].invert(x).dtype == np.float32


def _eval(text: str, **names: np.ndarray) -> np.ndarray:
    """Evaluate one of our own conversion strings ('cos = 2*s-1', a piecewise one as
    'where(s >= 1, s-1, 1-1/s)') on arrays."""
    expr = text.split("=", 1)[1].replace("^", "**")
    scope = {"__builtins__": {}, "sqrt": np.sqrt, "where": np.where}
    with np.errstate(divide="ignore"):
        value: np.ndarray = eval(expr, scope, names)  # noqa: S307
    return value


@pytest.mark.parametrize("formula", list(CATALOGUE))
def test_conversion_strings_say_what_the_functions_do(formula: str) -> None:
    cos = np.linspace(-0.95, 0.95, 41)
    r = _result(formula)
    s = r.from_cosine(cos)
    assert _eval(r.from_cosine_formula or "", cos=cos) == pytest.approx(s, abs=1e-5)
    assert _eval(r.to_cosine_formula or "", s=s.astype(np.float64)) == pytest.approx(cos, abs=1e-4)


def _result(formula: str, normalized: bool = True, ok: bool = True) -> ScaleResult:
    t = CATALOGUE[formula]
    return ScaleResult(
        ok=ok,
        transform=formula if ok else None,
        variable=t.variable,
        higher_is_better=t.higher_is_better,
        max_residual=0.0,
        normalized=normalized,
        to_cosine_formula=t.cos_of_s,
        from_cosine_formula=t.s_of_cos,
        documented="unknown",
        equivalent=[],
        candidates=[],
        pairs=[],
        queries_made=0,
        vectors_fetched=0,
        source="probed",
        message="",
    )


@SETTINGS
@given(
    formula=st.sampled_from(list(CATALOGUE)),
    cos=st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=20),
)
def test_every_transform_round_trips_through_cosine(formula: str, cos: list[float]) -> None:
    c = np.asarray(cos, dtype=np.float64)
    r = _result(formula)
    back = r.to_cosine(r.from_cosine(c))
    # float32 scores; l2-based scales lose precision near cos = 1 (d cos / d l2 -> 0 there)
    tol = 2e-3 if CATALOGUE[formula].variable == "l2" else 2e-6
    assert back.dtype == np.float32
    assert np.allclose(back, c, atol=tol)


@SETTINGS
@given(formula=st.sampled_from(list(CATALOGUE)), x=st.floats(-0.999, 0.999))
def test_apply_and_invert_are_inverse_on_raw_variables(formula: str, x: float) -> None:
    t = CATALOGUE[formula]
    v = {"cos": x, "dot": 40 * x, "l2": 20 * (x + 1)}[t.variable]
    assert t.invert(t.apply(np.asarray([v])))[0] == pytest.approx(v, rel=1e-9, abs=1e-9)


@SETTINGS
@given(a=st.sampled_from(list(CATALOGUE)), b=st.sampled_from(list(CATALOGUE)), u=st.floats(0, 1))
def test_thresholds_convert_both_ways(a: str, b: str, u: float) -> None:
    lo, hi = CATALOGUE[a].score_range(True)
    value = lo + (hi - lo) * (0.02 + 0.96 * u)  # away from the ends, where l2 is steep
    there = convert_threshold(value, a, b)
    lo_b, hi_b = CATALOGUE[b].score_range(True)
    assert lo_b - 1e-9 <= there <= hi_b + 1e-9
    assert convert_threshold(there, b, a) == pytest.approx(value, rel=1e-6, abs=1e-6)


def test_known_conversions() -> None:
    assert convert_threshold(0.80, "(1+cos)/2", "cos") == 0.6
    assert convert_threshold(0.60, "cos", "(1+cos)/2") == 0.8
    assert convert_threshold(0.4, "1-cos", "l2^2") == pytest.approx(0.8)
    assert convert_threshold(0.5, "1/(1+l2^2)", "cos") == pytest.approx(0.5)
    assert convert_threshold(-0.7, "-dot", "dot", normalized=False) == 0.7
    assert convert_threshold(9.0, "l2^2", "l2", normalized=False) == 3.0


def test_out_of_range_values_and_cross_variable_raw_conversions_are_refused() -> None:
    with pytest.raises(InputError, match=r"1.2 is outside the range of \(1\+cos\)/2 \[0, 1\]"):
        convert_threshold(1.2, "(1+cos)/2", "cos")
    with pytest.raises(InputError, match="outside the range of l2 .* on unit-norm vectors"):
        convert_threshold(2.5, "l2", "cos")
    with pytest.raises(InputError, match="outside the range of 1/\\(2-cos\\)"):
        convert_threshold(0.2, "1/(2-cos)", "cos")
    with pytest.raises(InputError, match="needs unit-norm vectors"):
        convert_threshold(3.0, "dot", "cos", normalized=False)


def test_result_conversions_need_a_known_scale_and_unit_vectors() -> None:
    r = _result("l2^2")
    assert r.to_cosine(np.asarray([0.0, 2.0, 4.0, -1e-7])) == pytest.approx([1, 0, -1, 1])
    with pytest.raises(InputError, match="needs unit-norm vectors"):
        _result("dot", normalized=False).to_cosine(np.asarray([0.3]))
    assert _result("1-cos", normalized=False).to_cosine(np.asarray([0.3])) == pytest.approx(0.7)
    with pytest.raises(InputError, match="score scale is unknown"):
        _result("cos", ok=False).from_cosine(np.asarray([0.3]))


# -- the probe ---------------------------------------------------------------------


@pytest.mark.parametrize("unit", [True, False], ids=["unit", "raw"])
@pytest.mark.parametrize("formula", list(CATALOGUE))
def test_probe_names_every_catalogue_formula(formula: str, unit: bool) -> None:
    store = catalogue_store(formula, unit)
    r = probe_scale(store)
    t = CATALOGUE[formula]
    assert r.ok, r.message
    assert (r.transform, r.equivalent) == (formula, [])
    assert r.higher_is_better is t.higher_is_better
    assert r.normalized is unit
    assert r.max_residual is not None and r.max_residual < 1e-3
    assert r.observed_order == ("descending" if t.higher_is_better else "ascending")
    if unit or t.variable == "cos":
        assert (r.to_cosine_formula, r.from_cosine_formula) == (t.cos_of_s, t.s_of_cos)
    else:
        assert r.to_cosine_formula is None and "needs unit-norm" in r.message
    # the probed queries reach high and low similarities
    assert r.cos_range is not None and r.cos_range[1] > 0.999 and r.cos_range[0] < 0.5


def test_probe_cost_is_a_few_dozen_queries_one_fetch_one_block() -> None:
    store = catalogue_store("(1+cos)/2", True)
    r = probe_scale(store, probes=16, k=8)
    assert r.queries_made == store.queries_sent == 16
    assert store.requests["fetch"] == 1 and store.requests["iter"] == 1
    assert len(r.pairs) == 16 * 8 and r.vectors_fetched <= 16 * 8
    assert set(r.pairs[0]) == {"query", "rank", "id", "score", "cos", "dot", "l2"}
    assert probe_scale(catalogue_store("cos", True), probes=48).queries_made == 48
    with pytest.raises(InputError, match="--probes must be between 1 and 48"):
        probe_scale(store, probes=49)


def test_probe_is_seeded() -> None:
    a = probe_scale(catalogue_store("l2", False), seed=3)
    b = probe_scale(catalogue_store("l2", False), seed=3)
    c = probe_scale(catalogue_store("l2", False), seed=4)
    assert a.pairs == b.pairs and a.pairs != c.pairs


def test_when_formulas_coincide_the_documented_one_is_named_and_the_rest_listed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # unit queries on unit vectors: cos and dot (and their offsets) cannot be told apart
    unit_queries = scale.build_queries

    def build(base: np.ndarray, probes: int, rng: np.random.Generator) -> np.ndarray:
        q = unit_queries(base, probes, rng)
        out: np.ndarray = q / np.linalg.norm(q, axis=1, keepdims=True)
        return out

    monkeypatch.setattr(scale.probe, "build_queries", build)
    r = probe_scale(catalogue_store("(1+cos)/2", True, documented="(1+dot)/2"))
    assert (r.ok, r.transform, r.equivalent) == (True, "(1+dot)/2", ["(1+cos)/2"])
    assert "equally consistent: (1+cos)/2" in r.message
    r = probe_scale(catalogue_store("dot", True, documented="cos"))
    assert (r.transform, r.equivalent) == ("cos", ["dot"])


def _piecewise(xs: list[float], ys: list[float]) -> Callable[[np.ndarray], np.ndarray]:
    def fn(x: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.interp(x, xs, ys)
        return out

    return fn


@st.composite
def monotone_functions(draw: Any) -> tuple[str, Callable[[np.ndarray], np.ndarray], str]:
    """A random monotone map of cos, dot or l2: piecewise linear through random knots, a
    random power, or a random affine map."""
    variable = draw(st.sampled_from(["cos", "dot", "l2"]))
    lo, hi = {"cos": (-1.0, 1.0), "dot": (-12.0, 12.0), "l2": (0.0, 10.0)}[variable]
    sign = draw(st.sampled_from([1.0, -1.0]))
    kind = draw(st.sampled_from(["knots", "power", "affine"]))
    if kind == "knots":
        m = draw(st.integers(3, 7))
        steps = draw(st.lists(st.floats(0.05, 2.0), min_size=m, max_size=m))
        xs = list(np.linspace(lo, hi, m))
        ys = list(sign * np.cumsum(steps))
        return variable, _piecewise(xs, ys), kind
    if kind == "power":
        p = draw(st.floats(0.3, 3.0))
        return variable, (lambda x: sign * np.abs(x - lo) ** p), kind
    a = draw(st.floats(0.1, 5.0))
    b = draw(st.floats(-3.0, 3.0))
    return variable, (lambda x: sign * a * x + b), kind


@SETTINGS
@given(f=monotone_functions(), unit=st.booleans())
def test_a_monotone_scale_outside_the_catalogue_is_unknown_never_misnamed(
    f: tuple[str, Callable[[np.ndarray], np.ndarray], str], unit: bool
) -> None:
    variable, fn, _ = f
    store = ScoredStore(vectors(unit, seed=1), variable, fn, documented="cos")
    r = probe_scale(store, probes=16, k=8)
    pairs = r.pairs
    scores = np.asarray([p["score"] for p in pairs])
    # how far each catalogue formula is from the scores actually reported
    dist = {
        name: float(np.max(np.abs(scores - t.apply(np.asarray([p[t.variable] for p in pairs])))))
        for name, t in CATALOGUE.items()
    }
    if r.ok:  # named: only if that formula does reproduce what the store reported
        assert r.transform is not None
        assert dist[r.transform] <= 1e-3 * (1 + np.max(np.abs(scores))) * 20
    assume(min(dist.values()) > 0.05 * (1 + np.ptp(scores)))
    assert not r.ok and r.transform is None
    assert len(r.candidates) == 5 and r.candidates[0]["max_residual"] > 0
    assert "no known formula explains the scores" in r.message


def test_nan_padding_and_missing_ids_are_skipped() -> None:
    small = catalogue_store("1-cos", True)
    few = MemoryStore(small.ids[:5], small.vectors[:5])
    r = probe_scale(few, probes=8, k=8)  # k > n: NaN padding
    assert r.ok and r.transform == "cos" and len(r.pairs) == 8 * 5
    assert all(p["id"] is not None for p in r.pairs)


def test_too_few_pairs_is_not_named() -> None:
    one = MemoryStore(["a"], np.ones((1, 4), dtype=np.float32))
    r = probe_scale(one, probes=4, k=1)
    assert not r.ok and r.transform is None and "only 4 usable" in r.message


def test_an_empty_store_is_an_input_error() -> None:
    empty = MemoryStore([], np.zeros((0, 4), dtype=np.float32), dimension=4)
    with pytest.raises(InputError, match="holds no finite non-zero vector"):
        probe_scale(empty)


# -- cache ---------------------------------------------------------------------------


def test_scale_for_probes_once_per_fingerprint(tmp_path: Path) -> None:
    cache = tmp_path / "c"
    store = catalogue_store("(1+cos)/2", True, documented="(1+cos)/2")
    first = scale_for(store, cache_dir=cache)
    assert (first.source, first.transform, store.queries_sent) == ("probed", "(1+cos)/2", 16)
    again = scale_for(store, cache_dir=cache)
    assert again.source == "cached" and store.queries_sent == 16
    assert again.to_dict() | {"source": "probed"} == json.loads(json.dumps(first.to_dict()))
    assert again.to_cosine(np.asarray([0.8])) == pytest.approx(0.6)
    assert len(list(cache.glob("*.json"))) == 1

    changed = ScoredStore(vectors(True, seed=9), "cos", CATALOGUE["(1+cos)/2"].apply)
    assert scale_for(changed, cache_dir=cache).source == "probed"
    assert scale_for(store, cache_dir=cache, refresh=True).source == "probed"
    assert store.queries_sent == 32


def test_same_vectors_read_with_another_metric_have_their_own_cache_entry(
    tmp_path: Path,
) -> None:
    x = vectors(True)
    cos_store = MemoryStore([str(i) for i in range(N)], x, metric="cosine")
    l2_store = MemoryStore([str(i) for i in range(N)], x, metric="l2")
    assert cos_store.fingerprint() == l2_store.fingerprint()
    assert scale_for(cos_store, cache_dir=tmp_path).transform == "cos"
    assert scale_for(l2_store, cache_dir=tmp_path).transform == "l2^2"


def test_without_probing_the_documented_formula_is_used(tmp_path: Path) -> None:
    store = catalogue_store("(1+cos)/2", True, documented="(1+cos)/2")
    r = scale_for(store, cache_dir=tmp_path, probe=False)
    assert (r.source, r.ok, r.transform, r.normalized, r.queries_made) == (
        "documented",
        True,
        "(1+cos)/2",
        True,
        0,
    )
    assert store.queries_sent == 0 and "not measured" in r.message
    unknown = catalogue_store("cos", True, documented="l1")
    assert not scale_for(unknown, cache_dir=tmp_path, probe=False).ok


def test_default_cache_dir_follows_the_environment(tmp_path: Path) -> None:
    store = catalogue_store("cos", True)
    scale_for(store)
    assert len(list((tmp_path / "cache" / "scale").glob("*.json"))) == 1


# -- commands -------------------------------------------------------------------------


def group() -> click.Group:
    """The commands under the real group class, as the lead will register them."""
    g = Group()
    g.add_command(probe_scale_cmd)
    g.add_command(convert_threshold_cmd)
    return g


def test_cli_probe_scale_writes_json_and_passes(tmp_path: Path) -> None:
    write_faiss_folder(tmp_path / "f", [f"v{i}" for i in range(N)], vectors(True), metric="ip")
    out = tmp_path / "scale.json"
    args = ["--store", f"faiss:{tmp_path / 'f'}", "--probes", "12", "--seed", "2"]
    r = CliRunner().invoke(probe_scale_cmd, [*args, "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "PASS" in r.stdout and "reports dot (higher is better)" in r.stdout
    assert "to cosine:   cos = s" in r.stdout
    data = json.loads(out.read_text())
    for key in (
        "transform",
        "higher_is_better",
        "max_residual",
        "normalized",
        "to_cosine",
        "from_cosine",
        "pairs",
        "manifest",
        "queries_made",
        "candidates",
        "equivalent",
    ):
        assert key in data  # fmt: skip
    assert (data["transform"], data["higher_is_better"], data["normalized"]) == ("dot", True, True)
    assert (data["to_cosine"], data["from_cosine"], data["queries_made"]) == (
        "cos = s",
        "s = cos",
        12,
    )
    assert len(data["pairs"]) == 12 * 8
    m = data["manifest"]
    assert m["command"] == "probe-scale" and m["seed"] == 2 and m["index_fingerprint"]
    assert m["store"]["backend"] == "faiss" and Path(m["cache"]).is_file()
    # convert-threshold --store uses the cached probe
    r = CliRunner().invoke(convert_threshold_cmd, ["0.3", "--store", f"faiss:{tmp_path / 'f'}"])
    assert r.exit_code == 0 and "0.3 on dot (keep scores >= 0.3) = 0.3 on cos" in r.stdout


def test_cli_unknown_scale_fails_with_exit_1_and_candidates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = ScoredStore(vectors(True), "cos", lambda c: np.exp(3 * c), documented="cos")
    monkeypatch.setattr("indexcheck.stores.opening.open_store", lambda spec, options: store)
    r = CliRunner().invoke(probe_scale_cmd, ["--store", "memory:x", "--json", "-"])
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["ok"] is False and data["transform"] is None and data["higher_is_better"] is True
    assert data["candidates"][0]["fits"] is False
    assert "FAIL" in r.stderr and "no known formula explains the scores" in r.stderr


def test_cli_convert_threshold() -> None:
    run = CliRunner().invoke
    r = run(convert_threshold_cmd, ["0.80", "--from", "(1+cos)/2"])
    assert r.exit_code == 0
    assert r.stdout == ("0.8 on (1+cos)/2 (keep scores >= 0.8) = 0.6 on cos (keep scores >= 0.6)\n")
    r = run(convert_threshold_cmd, ["-0.5", "--from", "-dot", "--to", "l2^2", "--json", "-"])
    assert r.exit_code == 0
    assert json.loads(r.stdout) == {
        "schema_version": 2,
        "value": -0.5,
        "from": "-dot",
        "to": "l2^2",
        "result": 1.0,
        "normalized": True,
        "from_higher_is_better": False,
        "to_higher_is_better": False,
        "scale_source": "given",
    }
    assert "-0.5 on -dot (keep scores <= -0.5) = 1 on l2^2 (keep scores <= 1)" in r.stderr


def test_cli_lists_every_formula_and_maps_store_errors_to_one_line(tmp_path: Path) -> None:
    assert all(f in (convert_threshold_cmd.help or "") for f in CATALOGUE)
    r = CliRunner().invoke(probe_scale_cmd, ["--store", f"faiss:{tmp_path / 'nope'}"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("error: faiss store folder") and r.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["1.2", "--from", "(1+cos)/2"], "1.2 is outside the range of (1+cos)/2 [0, 1]"),
        (["0.5", "--from", "l1"], "unknown score formula 'l1'"),
        (["0.5"], "pass --from FORMULA"),
        (["0.3", "--from", "dot", "--to", "l2", "--raw-vectors"], "needs unit-norm vectors"),
        (["0.3", "--from", "dot", "--store", "faiss:/nope"], "pass --from or --store, not both"),
    ],
)
def test_cli_convert_threshold_refusals_exit_2_with_one_line(args: list[str], message: str) -> None:
    for cmd, argv in ((convert_threshold_cmd, args), (group(), ["convert-threshold", *args])):
        r = CliRunner().invoke(cmd, argv)
        assert r.exit_code == 2, r.output
        assert r.stdout == "" and r.stderr.count("\n") == 1
        assert r.stderr.startswith("error: ") and message in r.stderr
