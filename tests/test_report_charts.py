"""The reports' charts show differences between fabrics, their plotly.js bundle draws every chart, and
the study report's heat map is coloured around parity of the recommendation's own objective. Built
from the pinned compare results (tests/pins), no measurement runs here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aifabric.report import html as report
from aifabric.report.plotlyjs import TRACE_TYPES, bundle_version, check_traces
from aifabric.sweep.report import heat_colour, human, parity

PINS = Path(__file__).parent / "pins"


def _pin(name: str) -> dict:
    """A pinned compare result, with the ``wall_s`` timings the pins leave out put back (as 0)."""
    return _timed(json.loads((PINS / f"compare-{name}.json").read_text()))


def _timed(o):
    if isinstance(o, dict):
        out = {k: _timed(v) for k, v in o.items()}
        return {**out, "wall_s": 0.0} if "runs" in out else out
    return [_timed(v) for v in o] if isinstance(o, list) else o


@pytest.mark.parametrize("name", ["default", "b200_2048", "moe1024low", "stor128"])
def test_every_report_chart_is_in_the_bundle_and_the_report_is_small(name):
    """Every figure of the report uses a trace type the inlined basic bundle registers; the report
    inlines that bundle once and stays ≤ 1.5 MB."""
    r = _pin(name)
    figs = report.figures(r)
    assert {t.type for f in figs.values() for t in f.data} <= TRACE_TYPES
    text = report.render_report(r)
    assert (
        text.count("<script>") == 2 and text.count(f"plotly.js (basic - minified) v{bundle_version()}") == 1
    )
    assert len(text.encode()) <= 1_500_000


def test_bundle_matches_the_plotly_package_and_refuses_other_traces():
    """The vendored bundle is the plotly.js major version the plotly Python package writes figures for;
    a figure the bundle cannot draw (a heat map) is refused with its title, not drawn blank."""
    import plotly.graph_objects as go
    from plotly.offline import get_plotlyjs_version

    assert bundle_version().split(".")[0] == get_plotlyjs_version().split(".")[0]
    check_traces([go.Figure(go.Bar(x=[1], y=[2])), go.Figure(go.Scatter(x=[1], y=[2]))])
    with pytest.raises(ValueError, match="heat: trace type heatmap is not in"):
        check_traces([go.Figure(go.Heatmap(z=[[1]]), layout={"title": "heat"})])


def test_busbw_chart_is_each_fabrics_difference_to_infiniband():
    """One trace per non-reference fabric: (its busbw / InfiniBand's − 1) in % at every message size,
    with both GB/s values in the hover data and the GB/s table; InfiniBand is the reference wherever
    it is listed."""
    r = _pin("default")
    fabrics = list(reversed(r["fabrics"]))  # RoCE first: the reference is still InfiniBand
    ib = next(f for f in fabrics if f["technology"] == "infiniband")
    roce = next(f for f in fabrics if f["technology"] == "roce")
    fig = report.figures({**r, "fabrics": fabrics})["chart-busbw"]
    (t,) = fig.data
    ib_bw = {x["size_bytes"]: x["busbw_gbytes_per_s"] for x in ib["busbw_sweep"]}
    for size, y, (_, own, base) in zip(t.x, t.y, t.customdata, strict=True):
        rb = next(x["busbw_gbytes_per_s"] for x in roce["busbw_sweep"] if x["size_bytes"] == size)
        assert y == pytest.approx(100 * (rb / ib_bw[size] - 1), rel=1e-9)
        assert (own, base) == pytest.approx((rb, ib_bw[size]))
    assert min(t.y) < -0.1 and fig.layout.yaxis.ticksuffix == " %"
    assert [s.y0 for s in fig.layout.shapes] == [0.0]  # the parity line
    table = "".join(report._busbw_table(fabrics))
    assert table.count("<tr>") == len(ib_bw) + 1
    one = report.figures({**r, "fabrics": [ib]})["chart-busbw"]  # one fabric: its own GB/s
    assert list(one.data[0].y) == pytest.approx(list(ib_bw.values()))


def test_iteration_chart_is_each_parts_difference_in_ms():
    """Per step part (compute, bubble, optimizer, each group's exposed time, the whole step) the
    difference to InfiniBand in ms; the parts in seconds in the table."""
    r = _pin("b200_2048")
    fig = report.figures(r)["chart-iteration"]
    ib = next(f for f in r["fabrics"] if f["technology"] == "infiniband")
    for t, f in zip(fig.data, [f for f in r["fabrics"] if f is not ib], strict=True):
        parts = dict(zip(t.x, t.y, strict=True))
        whole = 1e3 * (f["iteration"]["iteration_s"] - ib["iteration"]["iteration_s"])
        assert parts["whole step"] == pytest.approx(whole)
        b, rb = ib["iteration"]["breakdown"], f["iteration"]["breakdown"]
        assert parts["compute"] == pytest.approx(1e3 * (rb["compute_s"] - b["compute_s"]))
        for g in b["exposed_s"]:
            assert parts[f"{g.upper()} exposed"] == pytest.approx(
                1e3 * (rb["exposed_s"][g] - b["exposed_s"][g])
            )
    assert fig.layout.yaxis.ticksuffix == " ms"
    assert "<th>whole step</th>" in "".join(report._iteration_table(r["fabrics"]))


def test_heat_colours_are_centred_on_parity():
    """A ratio is white at 1, orange below (RoCE cheaper), blue above, equally deep at r and 1/r;
    a difference is white at 0; a level (no parity) is sequential."""
    m = "roce_over_ib_objective"
    spread = 0.05
    assert parity(m) == 1.0 and parity("iteration_s") is None and parity("ib_minus_roce_s") == 0.0
    assert heat_colour(1.0, m, spread, 0, 0) == "#ffffff"
    below, above = heat_colour(1 / 1.03, m, spread, 0, 0), heat_colour(1.03, m, spread, 0, 0)
    rgb = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in (below, above)]
    assert rgb[0][0] > rgb[0][2] and rgb[1][2] > rgb[1][0]  # orange, blue
    assert sum(255 - x for x in rgb[0]) > 0 and heat_colour(0.5, m, spread, 0, 0) != heat_colour(
        0.99, m, spread, 0, 0
    )
    assert heat_colour(0.0, "ib_minus_roce_s", 1.0, 0, 0) == "#ffffff"
    assert heat_colour(1.0, "iteration_s", 0, 1.0, 2.0) != heat_colour(2.0, "iteration_s", 0, 1.0, 2.0)


def test_study_objective_columns_agree_with_the_recommendation():
    """The heat map's metric is the decision's objective: RoCE's best over InfiniBand's best is below 1
    exactly when the recommended design is a RoCE one (every pinned compare result)."""
    from aifabric.sweep.commands import COMMANDS, _compare_summarize

    assert COMMANDS["compare"].heat_metric == "roce_over_ib_objective"
    for pin in sorted(PINS.glob("compare-*.json")):
        r = json.loads(pin.read_text())
        s, tables = _compare_summarize(r)
        decided = r["evidence"]["decide"]["fabrics"]
        design = r["recommendation"]["design"]
        tech = next((d["technology"] for d in decided.values() if d["design"] == design), None)
        if s["roce_over_ib_objective"] is None or tech not in ("infiniband", "roce"):
            continue
        assert (s["roce_over_ib_objective"] < 1) == (tech == "roce"), pin.name
        assert s["objective_name"] == r["recommendation"]["objective"]
        assert all(row["objective"] is not None for row in tables["fabrics"]), pin.name


@pytest.mark.parametrize(
    ("col", "words"),
    [
        ("advisor_team_expertise", "team expertise"),
        ("advisor_gpus", "GPUs"),
        ("ib_capex_usd", "InfiniBand capex (USD)"),
        ("roce_busbw_gbytes_per_s", "RoCE busbw (GB/s)"),
        ("wall_s", "wall (s)"),
        ("status", "status"),
    ],
)
def test_study_columns_in_words(col, words):
    assert human(col) == words
