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

CHART_IDS = ("chart-pareto-step", "chart-pareto-token")  # + chart-heat-N, one per heat map
MAX_HEATMAPS = 6
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
    head = "".join(f"<th>{_e(c)}</th>" for c in df.columns)
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
                            "with": ", ".join(f"{c}={k}" for c, k in zip(others, key, strict=True)) or "—",
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
            "<br>".join([str(r.get("fabric", ""))] + [f"{c[3:]}={r[c]}" for c in inputs])
            for r in g.to_dict("records")
        ]
        fig.add_scatter(x=g["capex_usd"], y=g[y], mode="markers", name=name, text=text,
                        marker={"size": 9, "symbol": "circle" if key[0] == "infiniband" else "diamond"},
                        hovertemplate="%{text}<br>capex %{x:,.0f} USD<br>%{y:.4g}<extra></extra>")  # fmt: skip
    xs, ys = d["capex_usd"].tolist(), d[y].tolist()
    front = pareto_front(xs, ys)
    if front:
        fig.add_scatter(x=[xs[i] for i in front], y=[ys[i] for i in front], mode="lines",
                        name="Pareto front", line={"dash": "dot", "color": "#444"})  # fmt: skip
    fig.update_layout(title=title, xaxis_title="network capex (USD)", yaxis_title=ytitle, height=420)
    return fig


def _fig_heat(cell, a: str, b: str, metric: str, title: str, text_col: str | None):
    import plotly.graph_objects as go

    xs = list(dict.fromkeys(cell[a].tolist()))
    ys = list(dict.fromkeys(cell[b].tolist()))
    z = [[None] * len(xs) for _ in ys]
    txt = [[""] * len(xs) for _ in ys]
    for r in cell.to_dict("records"):
        i, j = ys.index(r[b]), xs.index(r[a])
        v = r.get(metric)
        z[i][j] = None if v is None or (isinstance(v, float) and math.isnan(v)) else v
        lab = f"{_fmt(z[i][j])}"
        if text_col and r.get(text_col) is not None:
            lab = f"{r[text_col]}<br>{lab}"
        txt[i][j] = lab
    fig = go.Figure(
        go.Heatmap(
            x=[str(x) for x in xs], y=[str(y) for y in ys], z=z, text=txt, texttemplate="%{text}",
            colorscale="RdBu", colorbar={"title": metric}, reversescale=True,
        )
    )  # fmt: skip
    fig.update_layout(title=title, xaxis_title=a, yaxis_title=b, height=420)
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


def _heat_charts(cmd, ok, points, inputs: list[str]) -> list[tuple]:
    """Heat maps of the command's headline metric over the first two varying axes (one per
    combination of the others, seeds averaged), each cell labelled with the recommendation."""
    charts: list[tuple] = []
    metric = cmd.heat_metric
    varying = [c for c in inputs if c != "seed" and points[c].nunique(dropna=False) > 1]
    if metric in ok.columns and len(varying) >= 1:
        a = varying[0]
        b = varying[1] if len(varying) > 1 else None
        rest = varying[2:]
        text_col = "recommendation" if "recommendation" in ok.columns else None
        keys = [a] + ([b] if b else []) + rest
        agg = {metric: "mean"}
        if text_col:
            agg[text_col] = lambda s: s.mode().iloc[0] if len(s.mode()) else None
        cells = ok.groupby(keys, dropna=False, sort=False).agg(agg).reset_index()
        if b is None:
            cells["_"] = ""
            b = "_"
        groups = cells.groupby(rest, dropna=False, sort=False) if rest else [((), cells)]
        for n, (key, g) in enumerate(groups):
            if n >= MAX_HEATMAPS:
                break
            key = key if isinstance(key, tuple) else (key,)
            where = ", ".join(f"{c}={k}" for c, k in zip(rest, key, strict=True))
            title = f"{metric}{' — ' + where if where else ''}"
            charts.append(
                (f"chart-heat-{n}", f"Heat map: {title}", _fig_heat(g, a, b, metric, title, text_col))
            )
    return charts


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
        + ", ".join(f"<code>{_e(k)}</code>" for k in meta["input_columns"])
        + "</p>",
    ]
    if fabrics is not None and len(fabrics) and "capex_usd" in fabrics.columns:
        fab = fabrics.rename(columns={c: f"in:{c}" for c in inputs})
        if "iteration_time_s" in fab.columns:
            charts.append(("chart-pareto-step", "Pareto: network capex vs step time",
                           _fig_pareto(fab, "iteration_time_s", "Network capex vs training step time",
                                       "step time (s)")))  # fmt: skip
        if "cost_per_million_tokens_usd" in fab.columns:
            charts.append(("chart-pareto-token", "Pareto: network capex vs cost per token",
                           _fig_pareto(fab, "cost_per_million_tokens_usd",
                                       "Network capex vs cost per million trained tokens (risk-adjusted cluster cost)",
                                       "USD per million tokens")))  # fmt: skip
    charts += _heat_charts(cmd, ok, points, inputs)
    metric = cmd.heat_metric
    parts += [f"<h2>{_e(heading)}</h2><div class='chart' id='{cid}'></div>" for cid, heading, _ in charts]
    if "recommendation" in points.columns:
        import pandas as pd

        fl = flips(points, inputs)
        parts.append("<h2>Where the recommendation flips</h2>")
        parts.append(
            "<p><small>Neighbouring values of one axis, the other axes held, whose points' "
            "recommendations (from the decision stage of each point's compare) differ.</small></p>"
        )
        parts.append(
            _table(pd.DataFrame(fl)) if fl else "<p><small>no flip between neighbouring points</small></p>"
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
    import json

    from plotly.offline import get_plotlyjs

    meta = store.meta()
    parts, charts = study_sections(store)
    scripts = "\n".join(
        f"Plotly.newPlot({json.dumps(cid)}, {fig.to_json()}.data, {fig.to_json()}.layout, {{responsive: true}});"
        for cid, _, fig in charts
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>aifabric study {_e(meta['name'])}"
        f"</title><style>{_CSS}</style><script>{get_plotlyjs()}</script></head><body>"
        + "\n".join(parts)
        + f"<script>{scripts}</script></body></html>"
    )


def write_study_report(store, path: str | Path) -> Path:
    """Render the report of the study in ``store`` to ``path`` (written atomically)."""
    from aifabric.sweep.store import _atomic_write_bytes

    p = Path(path)
    _atomic_write_bytes(p, render_study_report(store).encode("utf-8"))
    return p
