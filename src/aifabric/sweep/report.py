"""The study report: one self-contained HTML file (plotly.js inlined), in the style of
``aifabric compare --report``.

Sections: the study (command, axes, points done / failed); Pareto charts of every design at every
point — network capex against step time and against cost per million trained tokens — with the
non-dominated designs joined; heat maps of the command's headline metric over the first two axes
(one per combination of the other axes, seeds averaged), each cell labelled with the
recommendation; where the recommendation flips along each axis (read from each point's stored
``recommendation`` — the decision stage's own answer, not a second copy of its rules); mean and 95 %
confidence interval over a ``seed`` axis; failed points with their errors.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from aifabric.report.html import _CSS

CHART_IDS = ("chart-pareto-step", "chart-pareto-token")
MAX_HEAT_ROWS = 60  # rows of the heat map table (combinations of the axes after the first)
MIN_SPREAD = 0.05  # a diverging scale is full at the study's largest difference, at least 5 %
# two-sided 95 % Student-t quantiles for 1..30 degrees of freedom; 1.96 beyond
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042)  # fmt: skip


def t95(df: int) -> float:
    """The two-sided 95 % Student-t quantile for ``df`` degrees of freedom."""
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


def _e(x) -> str:
    return html.escape(str(x))


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e3 else f"{v:,.0f}"
    return str(v)


def _table(df, limit: int = 200) -> str:
    if df is None or not len(df):
        return "<p><small>none</small></p>"
    head = "".join(f"<th>{_e(human(c))}</th>" for c in df.columns)
    body = []
    for _, r in df.head(limit).iterrows():
        cells = "".join(
            f"<td class='n'>{_e(_fmt(v))}</td>" if isinstance(v, int | float) and not isinstance(v, bool)
            else f"<td>{_e(_fmt(v))}</td>"
            for v in r.tolist()
        )  # fmt: skip
        body.append(f"<tr>{cells}</tr>")
    more = (
        f"<p><small>{len(df) - limit} more rows: aifabric results DIR</small></p>" if len(df) > limit else ""
    )
    return f"<table><tr>{head}</tr>{''.join(body)}</table>{more}"


def pareto_front(xs: list[float], ys: list[float]) -> list[int]:
    """Indices of the points no other point beats on both x and y (lower is better), by x."""
    order = sorted(range(len(xs)), key=lambda i: (xs[i], ys[i]))
    front, best = [], math.inf
    for i in order:
        if ys[i] < best:
            front.append(i)
            best = ys[i]
    return front


def flips(points, inputs: list[str], rec: str = "recommendation") -> list[dict]:
    """Where the stored recommendation changes between neighbouring values of one input with the
    other inputs held (seeds: the most frequent recommendation of a cell)."""
    if rec not in points.columns:
        return []
    ok = points[points["status"] == "ok"]
    axes = [c for c in inputs if c != "seed" and ok[c].nunique(dropna=False) > 1]
    out = []
    for a in axes:
        order = list(dict.fromkeys(points.sort_values("point_index")[a].tolist()))
        others = [c for c in axes if c != a]
        groups = ok.groupby(others, dropna=False, sort=False) if others else [((), ok)]
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            cell = g.groupby(a, dropna=False)[rec].agg(lambda s: s.mode().iloc[0] if len(s.mode()) else None)
            seq = [(v, cell[v]) for v in order if v in cell.index]
            for (v0, r0), (v1, r1) in zip(seq, seq[1:], strict=False):
                if r0 != r1:
                    out.append(
                        {
                            "axis": a,
                            "from": v0,
                            "to": v1,
                            "recommendation": f"{r0} → {r1}",
                            "with": ", ".join(f"{human(c)} {k}" for c, k in zip(others, key, strict=True))
                            or "—",
                        }
                    )
    return out


def ci_table(points, inputs: list[str], metrics: list[str]):
    """Mean and 95 % confidence interval of ``metrics`` over the ``seed`` input, per cell."""
    import pandas as pd

    ok = points[points["status"] == "ok"]
    others = [c for c in inputs if c != "seed"]
    rows = []
    groups = ok.groupby(others, dropna=False, sort=False) if others else [((), ok)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(others, key, strict=True))
        row["seeds"] = len(g)
        for m in metrics:
            v = pd.to_numeric(g[m], errors="coerce").dropna()
            if len(v) == 0:
                continue
            mean = float(v.mean())
            half = t95(len(v) - 1) * float(v.std(ddof=1)) / math.sqrt(len(v)) if len(v) > 1 else math.nan
            row[m] = mean
            row[f"{m} ±95%"] = half
        rows.append(row)
    return pd.DataFrame(rows)


def _fig_pareto(fabrics, y: str, title: str, ytitle: str):
    import plotly.graph_objects as go

    fig = go.Figure()
    d = fabrics.dropna(subset=["capex_usd", y])
    inputs = [c for c in d.columns if c.startswith("in:")]
    by = ["technology"] + (["nic_rate_gbps"] if "nic_rate_gbps" in d.columns else [])
    for key, g in d.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        name = str(key[0]) + (f" {key[1]:g}G" if len(key) > 1 and isinstance(key[1], int | float) else "")
        text = [
            "<br>".join([str(r.get("fabric", ""))] + [f"{human(c[3:])} {r[c]}" for c in inputs])
            for r in g.to_dict("records")
        ]
        fig.add_scatter(x=g["capex_usd"], y=g[y], mode="markers", name=name, text=text,
                        marker={"size": 9, "symbol": "circle" if key[0] == "infiniband" else "diamond"},
                        hovertemplate="%{text}<br>capex %{x:,.0f} USD<br>%{y:.4g}<extra></extra>")  # fmt: skip
    xs, ys = d["capex_usd"].tolist(), d[y].tolist()
    front = pareto_front(xs, ys)
    if front:  # a step line through the front's designs, each ringed
        fig.add_scatter(x=[xs[i] for i in front], y=[ys[i] for i in front], mode="lines+markers",
                        name=f"Pareto front ({len(front)} of {len(xs)}: no other is cheaper and better)",
                        line={"dash": "dot", "color": "#444", "shape": "hv"},
                        marker={"size": 16, "symbol": "circle-open", "color": "#444", "line": {"width": 2}},
                        hoverinfo="skip")  # fmt: skip
    fig.update_layout(title=title, xaxis_title="network capex (USD)", yaxis_title=ytitle, height=440,
                      legend={"orientation": "h", "y": -0.25})  # fmt: skip
    return fig


def parity(metric: str) -> float | None:
    """Where a metric means "no difference": 1 for a ratio (``X_over_Y``), 0 for a difference
    (``X_minus_Y``, ``delta_...``); None for a level (its colour scale is then sequential)."""
    if "_over_" in metric:
        return 1.0
    if "_minus_" in metric or metric.startswith("delta_"):
        return 0.0
    return None


def heat_colour(v: float | None, metric: str, spread: float, lo: float, hi: float) -> str:
    """A cell's background: diverging around :func:`parity` (``spread``: the difference, in log-ratio
    or in the metric's unit, at which the colour is full), else sequential from ``lo`` to ``hi``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "#f3f3f3"
    p = parity(metric)
    if p is None:
        t = 0.0 if hi <= lo else (v - lo) / (hi - lo)
        return _blend(_LEVEL, 0.1 + 0.6 * t)
    d = (math.log(v) if v > 0 else -math.inf) if p == 1.0 else v
    t = max(-1.0, min(1.0, d / spread))
    return _blend(_BELOW if t < 0 else _ABOVE, 0.75 * abs(t))


_BELOW, _ABOVE, _LEVEL = (221, 107, 32), (43, 108, 176), (90, 90, 160)  # orange, blue, slate


def _blend(rgb: tuple[int, int, int], t: float) -> str:
    r, g, b = (round(255 + (c - 255) * t) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def _spread(values: list[float], metric: str) -> float:
    """The difference at which the diverging colour is full: the largest in the study, at least
    MIN_SPREAD (so that near-ties stay pale)."""
    p = parity(metric)
    ds = [abs(math.log(v)) if p == 1.0 else abs(v) for v in values if v is not None and (p != 1.0 or v > 0)]
    floor = math.log(1 + MIN_SPREAD) if p == 1.0 else 0.0
    return max([floor, *ds]) or 1.0


def _heat_table(cells, a: str, rows: list[str], metric: str) -> str:
    """One table for every combination of the axes: the columns are the first axis's values, the rows
    the other axes' combinations; each cell holds the recommendation and the metric, coloured."""
    xs = list(dict.fromkeys(cells[a].tolist()))
    groups = list(cells.groupby(rows, dropna=False, sort=False)) if rows else [((), cells)]
    vals = [
        v for v in cells[metric].tolist() if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]
    lo, hi, spread = min(vals, default=0.0), max(vals, default=0.0), _spread(vals, metric)
    head = "".join(f"<th>{_e(human(r))}</th>" for r in rows) + "".join(
        f"<th class='n'>{_e(human(a))} {_e(x)}</th>" for x in xs
    )
    out = [f"<table class='heat' id='heat-map'><tr>{head}</tr>"]
    for key, g in groups[:MAX_HEAT_ROWS]:
        key = key if isinstance(key, tuple) else (key,)
        by_x = {r[a]: r for r in g.to_dict("records")}
        tds = "".join(_heat_cell(by_x.get(x), metric, spread, lo, hi) for x in xs)
        out.append("<tr>" + "".join(f"<th>{_e(k)}</th>" for k in key) + tds + "</tr>")
    out.append("</table>")
    if len(groups) > MAX_HEAT_ROWS:
        out.append(f"<p><small>{len(groups) - MAX_HEAT_ROWS} more rows: aifabric results DIR</small></p>")
    return "".join(out) + _heat_legend(metric, spread, lo, hi)


def _heat_cell(r: dict | None, metric: str, spread: float, lo: float, hi: float) -> str:
    if r is None:
        return "<td></td>"
    v = r.get(metric)
    v = None if v is None or (isinstance(v, float) and math.isnan(v)) else v
    rec = r.get("recommendation")
    hover = "; ".join(
        f"{human(k)}: {_fmt(r[k])}" for k in r if k.startswith(("ib_", "roce_")) or k == "verdict"
    )
    return (
        f"<td class='n' style='background:{heat_colour(v, metric, spread, lo, hi)}' title='{_e(hover)}'>"
        + (f"<b>{_e(rec)}</b><br>" if rec is not None else "")
        + f"{_e(_fmt(v))}</td>"
    )


def _heat_legend(metric: str, spread: float, lo: float, hi: float) -> str:
    p = parity(metric)
    if p is None:
        sw = f"<span class='sw' style='background:{heat_colour(lo, metric, spread, lo, hi)}'></span> {_fmt(lo)}"
        return f"<p class='heat-legend' id='heat-legend'>{sw} … <span class='sw' style='background:{heat_colour(hi, metric, spread, lo, hi)}'></span> {_fmt(hi)}</p>"
    below, above = _SIDES.get(metric, ("below parity", "above parity"))
    full = f"×{math.exp(spread):.3g}" if p == 1.0 else f"±{spread:.3g}"
    return (
        f"<p class='heat-legend' id='heat-legend'><span class='sw' style='background:{_blend(_BELOW, 0.75)}'></span> {_e(below)} · "
        f"<span class='sw' style='background:#fff'></span> parity ({p:g}) · "
        f"<span class='sw' style='background:{_blend(_ABOVE, 0.75)}'></span> {_e(above)}. "
        f"<small>The colour deepens with the difference and is full at {full} (the study's largest, "
        f"{100 * MIN_SPREAD:g} % at least); hover a cell for both fabrics' values.</small></p>"
    )


def _heat_charts(cmd, ok, points, inputs: list[str]) -> list[str]:
    """The heat map of the command's headline metric over every varying axis (seeds averaged): the
    first axis across, the others' combinations down; each cell labelled with the recommendation."""
    metric = cmd.heat_metric
    varying = [c for c in inputs if c != "seed" and points[c].nunique(dropna=False) > 1]
    if metric not in ok.columns or not varying or not len(ok):
        return []
    a, rows = varying[0], varying[1:]
    agg = {c: "mean" for c in ok.columns if c == metric or _is_part(c, metric)}
    for c in ("recommendation", "verdict"):
        if c in ok.columns:
            agg[c] = lambda s: s.mode().iloc[0] if len(s.mode()) else None
    cells = ok.groupby([a, *rows], dropna=False, sort=False).agg(agg).reset_index()
    return [f"<h2 id='heat'>{_e(human(metric))} by {_e(', '.join(human(c) for c in varying))}</h2>",
            _heat_table(cells, a, rows, metric)]  # fmt: skip


def _is_part(col: str, metric: str) -> bool:
    """The fabrics' own values behind a ``roce_over_ib_X`` ratio: ``ib_X`` and ``roce_X``."""
    x = metric.removeprefix("roce_over_ib_")
    return x != metric and col in (f"ib_{x}", f"roce_{x}")


# ---- human names for the study's columns --------------------------------------------------------
_SIDES = {
    "roce_over_ib_objective": ("RoCE cheaper", "InfiniBand cheaper"),
    "roce_over_ib_cost_per_token": ("RoCE cheaper", "InfiniBand cheaper"),
}
_NAMES = {
    "roce_over_ib_objective": "RoCE ÷ InfiniBand risk-adjusted cost per useful work (the recommendation's objective)",
    "roce_over_ib_cost_per_token": "RoCE ÷ InfiniBand cost per million tokens (not risk-adjusted)",
    "ib_objective": "InfiniBand risk-adjusted cost",
    "roce_objective": "RoCE risk-adjusted cost",
    "objective": "risk-adjusted cost per useful work",
    "fct_p99_us": "p99 flow completion time (µs)",
    "iteration_s": "step time (s)",
    "busbw_gbytes_per_s": "bus bandwidth (GB/s)",
}
_WORDS = {"gpus": "GPUs", "gpu": "GPU", "ib": "InfiniBand", "roce": "RoCE", "nic": "NIC", "mfu": "MFU",
          "busbw": "busbw", "fct": "FCT", "tp": "TP", "pp": "PP", "dp": "DP", "ep": "EP", "cp": "CP"}  # fmt: skip
_UNITS = (("_gbytes_per_s", "GB/s"), ("_per_s", "per second"), ("_gbps", "Gb/s"), ("_usd", "USD"), ("_us", "µs"),
          ("_s", "s"))  # fmt: skip
_SECTIONS = ("advisor_", "training_", "inference_", "storage_", "fabric_", "risk_", "sim_", "in:")


def human(col: str) -> str:
    """A study column in words: ``advisor_team_expertise`` → ``team expertise``,
    ``ib_capex_usd`` → ``InfiniBand capex (USD)``."""
    col = str(col)
    if col in _NAMES:
        return _NAMES[col]
    for pre in _SECTIONS:
        col = col.removeprefix(pre)
    unit = None
    for suffix, u in _UNITS:
        if col.endswith(suffix) and len(col) > len(suffix):
            col, unit = col.removesuffix(suffix), u
            break
    words = " ".join(_WORDS.get(w, w) for w in col.split("_"))
    return f"{words} ({unit})" if unit else words


def _load(store, where: dict[str, list[str]] | None):
    """The study's meta, command, input columns, points and fabric rows, keeping only the points whose
    inputs take one of the values in ``where`` (input column → values, compared as text)."""
    from aifabric.sweep.commands import COMMANDS

    meta = store.meta()
    cmd = COMMANDS[meta["command"]]
    con = store.connect()
    points = con.sql("SELECT * FROM points").df()
    fabrics = con.sql("SELECT * FROM fabrics").df() if "fabrics" in cmd.tables else None
    con.close()
    inputs = [c for c in meta["input_columns"].values() if c in points.columns]
    for col, values in (where or {}).items():
        if col in inputs and values:
            points = points[points[col].astype(str).isin([str(v) for v in values])]
    if fabrics is not None and "point_id" in fabrics.columns:
        fabrics = fabrics[fabrics["point_id"].isin(points["point_id"])]
    return meta, cmd, inputs, points, fabrics


def _mode(col):
    """The most frequent value of a column (None for no column or no value)."""
    if col is None or not col.notna().any():
        return None
    return col.dropna().mode().iloc[0]


def study_axes(store) -> dict[str, list[str]]:
    """Each input column of the study with its values in study order, as text (the page's filters)."""
    _meta, _cmd, inputs, points, _f = _load(store, None)
    ordered = points.sort_values("point_index")
    return {c: [str(v) for v in dict.fromkeys(ordered[c].tolist())] for c in inputs}


def study_sections(store, where: dict[str, list[str]] | None = None) -> tuple[list[str], list[tuple]]:
    """The study report's HTML parts and its charts ``(id, heading, figure)``: Pareto charts, heat maps
    labelled with the recommendation, where it flips, seeds' confidence intervals, failed points and
    the points — over the points ``where`` keeps (:func:`_load`)."""
    meta, cmd, inputs, points, fabrics = _load(store, where)
    ok = points[points["status"] == "ok"]
    charts: list[tuple[str, str, object]] = []  # (id, heading, figure)
    parts = [
        f"<h1>Study: {_e(meta['name'])}</h1>",
        f"<p>aifabric {_e(meta['command'])} at {len(points)} of {meta['points']} points "
        f"({len(ok)} ok, {len(points) - len(ok)} failed). Axes: "
        + ", ".join(f"{_e(human(c))} (<code>{_e(k)}</code>)" for k, c in meta["input_columns"].items())
        + "</p>",
    ]
    if fabrics is not None and len(fabrics) and "capex_usd" in fabrics.columns:
        fab = fabrics.rename(columns={c: f"in:{c}" for c in inputs})
        if "iteration_time_s" in fab.columns:
            charts.append(("chart-pareto-step", "Pareto: network capex vs step time",
                           _fig_pareto(fab, "iteration_time_s", "Network capex vs training step time",
                                       "step time (s)")))  # fmt: skip
        if "objective" in fab.columns and fab["objective"].notna().any():
            unit = _mode(points.get("objective_name")) or "risk-adjusted cost per useful work"
            charts.append(("chart-pareto-token", "Pareto: network capex vs risk-adjusted cost",
                           _fig_pareto(fab, "objective", "Network capex vs the recommendation's objective "
                                       "(risk-adjusted cost per useful work)", unit)))  # fmt: skip
        elif "cost_per_million_tokens_usd" in fab.columns:
            charts.append(("chart-pareto-token", "Pareto: network capex vs cost per token",
                           _fig_pareto(fab, "cost_per_million_tokens_usd",
                                       "Network capex vs cost per million trained tokens (not risk-adjusted)",
                                       "USD per million tokens")))  # fmt: skip
    metric = cmd.heat_metric
    parts += [f"<h2>{_e(heading)}</h2><div class='chart' id='{cid}'></div>" for cid, heading, _ in charts]
    parts += _heat_charts(cmd, ok, points, inputs)
    if "recommendation" in points.columns:
        import pandas as pd

        fl = flips(points, inputs)
        parts.append("<h2>Where the recommendation flips</h2>")
        parts.append(
            "<p><small>Neighbouring values of one axis, the other axes held, whose points' "
            "recommendations (from the decision stage of each point's compare) differ.</small></p>"
        )
        parts.append(
            _table(pd.DataFrame([{**f, "axis": human(f["axis"])} for f in fl]))
            if fl
            else "<p><small>no flip between neighbouring points</small></p>"
        )
    if "seed" in points.columns and points["seed"].nunique() > 1:
        metrics = [m for m in (metric, *(c for c in ok.columns if c.endswith("cost_per_million_tokens_usd")),
                               *(c for c in ok.columns if c.endswith("iteration_time_s"))) if m in ok.columns]  # fmt: skip
        parts.append("<h2>Seeds: mean and 95 % confidence interval</h2>")
        parts.append(_table(ci_table(points, inputs, list(dict.fromkeys(metrics)))))
    failed = points[points["status"] != "ok"]
    parts.append("<h2>Failed points</h2>")
    parts.append(_table(failed[[*inputs, "error", "attempts"]] if len(failed) else None))
    shown = [c for c in [*inputs, "status", "recommendation", metric, "wall_s"] if c in points.columns]
    parts.append("<h2>Points</h2>")
    parts.append(_table(points[list(dict.fromkeys(shown))]))
    return parts, charts


def render_study_report(store) -> str:
    """The study report's HTML: the report's CSS and plotly.js bundle inlined once, each figure's
    JSON once."""
    import json

    from aifabric.report.plotlyjs import check_traces, plotly_js

    meta = store.meta()
    parts, charts = study_sections(store)
    check_traces(fig for _, _, fig in charts)
    scripts = "\n".join(
        f"(function(f){{Plotly.newPlot({json.dumps(cid)}, f.data, f.layout, {{responsive: true}});}})({fig.to_json()});"
        for cid, _, fig in charts
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>aifabric study {_e(meta['name'])}"
        f"</title><style>{_CSS}</style><script>{plotly_js()}</script></head><body>"
        + "\n".join(parts)
        + f"<script>{scripts}</script></body></html>"
    )


def write_study_report(store, path: str | Path) -> Path:
    """Render the report of the study in ``store`` to ``path`` (written atomically)."""
    from aifabric.sweep.store import _atomic_write_bytes

    p = Path(path)
    _atomic_write_bytes(p, render_study_report(store).encode("utf-8"))
    return p
