"""``aifabric calibrate --report FILE.html``: model vs measured per file, held-out points marked.
One self-contained file (plotly.js inlined), like the compare report."""

from __future__ import annotations

import json
from pathlib import Path

from aifabric.report.html import _CSS, _e

_Y = {
    "busbw_gbytes_per_s": "busbw (GB/s, 1e9 B/s)",
    "busbw_gbps": "busbw (GB/s, 1e9 B/s)",
    "bw_gbps": "bandwidth per direction (Gb/s)",
    "latency_us": "latency (µs)",
}


def _figure(fit):
    import plotly.graph_objects as go

    rows = fit.rows
    fig = go.Figure()
    x = [r["size_bytes"] for r in rows]
    fig.add_scatter(
        x=x, y=[r["measured"] for r in rows], mode="markers", name="measured", marker={"color": "#222"}
    )
    fig.add_scatter(
        x=x, y=[r["model"] for r in rows], mode="lines", name="model after the fit", line={"color": "#1f6fb2"}
    )
    held = [r for r in rows if r["held_out"]]
    if held:
        fig.add_scatter(
            x=[r["size_bytes"] for r in held],
            y=[r["measured"] for r in held],
            mode="markers",
            name="held out (not fitted)",
            marker={"symbol": "circle-open", "size": 13, "color": "#c0392b"},
        )
    fig.update_layout(
        title=f"{Path(fit.source).name} — {fit.kind}, {fit.transport}",
        xaxis={"type": "log", "title": "size (bytes)"},
        yaxis={
            "title": _Y.get(fit.quantity, fit.quantity),
            "type": "log" if fit.quantity == "latency_us" else "linear",
        },
        height=420,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
    )
    return fig


def _pct(x, signed: bool = True):
    return "—" if x is None else (f"{100 * x:+.1f} %" if signed else f"{100 * x:.1f} %")


def render(fits, doc: dict) -> str:
    from plotly.offline import get_plotlyjs

    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>aifabric calibrate</title><style>{_CSS}</style>"
        f"<script>{get_plotlyjs()}</script></head><body><h1>Calibration: model vs measured</h1>",
        f"<p><small>{_e(doc.get('created_by', ''))} · {_e(doc.get('created', ''))} · fitted on sizes ≤ "
        f"{_e(doc.get('fit_max_bytes'))} B; larger sizes are held out and predicted</small></p>",
        "<h2>Parameters</h2><table><tr><th>transport</th><th>parameter</th><th>value</th><th>unit</th>"
        "<th>how</th><th>source</th></tr>",
    ]
    for tr, d in doc["parameters"].items():
        for name, p in d.items():
            v = p.get("value")
            parts.append(
                f"<tr><td>{_e(tr)}</td><td>{_e(name)}</td><td class='n'>{'—' if v is None else f'{v:.4g}'}</td>"
                f"<td>{_e(p.get('unit', ''))}</td><td>{_e(p.get('how', ''))}</td><td>{_e(p.get('source', ''))}</td></tr>"
            )
    parts.append("</table>")
    scripts = []
    for i, f in enumerate(fits):
        s = f.summary()
        cid = f"chart-cal-{i}"
        parts.append(f"<h2>{_e(Path(f.source).name)}</h2>")
        parts.append(
            f"<p>{_e(f.kind)} · transport {_e(f.transport)} · {s['fitted_points']} points fitted, "
            f"{s['held_out_points']} held out · held-out max |error| {_pct(s['held_out_max_abs_error'], False)} "
            f"(target 10 %: <b class='{'hold' if s['target_met'] else 'fail'}'>"
            f"{'met' if s['target_met'] else 'not met' if s['held_out_points'] else 'no held-out points'}</b>)</p>"
        )
        parts.append(f'<div class="chart" id="{cid}"></div>')
        parts.append(
            "<table><tr><th>size (B)</th><th>measured</th><th>model</th><th>error</th><th>held out</th></tr>"
            + "".join(
                f"<tr><td class='n'>{r['size_bytes']:,}</td><td class='n'>{r['measured']:.4g}</td>"
                f"<td class='n'>{r['model']:.4g}</td><td class='n'>{_pct(r['error'])}</td>"
                f"<td>{'yes' if r['held_out'] else ''}</td></tr>"
                for r in f.rows
            )
            + "</table>"
        )
        if f.notes:
            parts.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in f.notes) + "</ul>")
        fig = _figure(f)
        scripts.append(
            f"Plotly.newPlot({json.dumps(cid)}, {fig.to_json()}.data, {fig.to_json()}.layout, {{responsive: true}});"
        )
    parts.append(f"<script>{chr(10).join(scripts)}</script></body></html>")
    return "\n".join(parts)


def write_report(fits, doc: dict, path) -> Path:
    p = Path(path)
    p.write_text(render(fits, doc), encoding="utf-8")
    return p
