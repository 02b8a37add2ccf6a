"""``diagnose --report FILE``: one self-contained HTML page — the topology drawn tier by tier
(hosts at the bottom), every port named by a finding coloured by severity, the findings table and
the drift line."""

from __future__ import annotations

import html
from pathlib import Path

from aifabric.diagnose.fabric import load_fabric

COLOUR = {"error": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}


def _svg(fm, hot: dict[str, str]) -> str:
    tiers: dict[int, list[str]] = {}
    for d in fm.devices:
        tiers.setdefault(fm.tiers.get(d, 1), []).append(d)
    width = max(900, 28 * max(len(v) for v in tiers.values()))
    top = max(tiers)
    pos = {}
    for t, devs in tiers.items():
        y = 40 + (top - t) * 110
        for i, d in enumerate(devs):
            pos[d] = ((i + 0.5) * width / len(devs), y)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{top * 110 + 80}">']
    drawn = set()
    for p in fm.ports.values():
        if p.link in drawn:
            continue
        drawn.add(p.link)
        (x1, y1), (x2, y2) = pos[p.device], pos[p.peer]
        sev = hot.get(p.name) or hot.get(f"{p.peer}:{p.peer_label}")
        colour, w = (COLOUR[sev], 3) if sev else ("#bbb", 1)
        parts.append(
            f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="{colour}" stroke-width="{w}"/>'
        )
    for d, (x, y) in pos.items():
        colour = COLOUR.get(hot.get(d, ""), "#455a64")
        parts.append(
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="6" fill="{colour}"><title>{html.escape(d)}</title></circle>'
        )
        if fm.tiers.get(d, 1) > 0 or len(pos) <= 64:
            parts.append(
                f'<text x="{x:.0f}" y="{y - 9:.0f}" font-size="9" text-anchor="middle">{html.escape(d)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def write_report(path, out: dict, topology) -> Path:
    """Write the HTML report of a ``diagnose`` result."""
    fm = load_fabric(topology)
    order = {"info": 0, "warning": 1, "error": 2}
    hot: dict[str, str] = {}
    for f in out["findings"]:
        for key in (f["location"], f["location"].split(":")[0]):
            if order[f["severity"]] >= order.get(hot.get(key, "info"), 0):
                hot[key] = f["severity"]
    rows = "".join(
        f"<tr><td style='color:{COLOUR[f['severity']]}'>{f['severity']}</td><td>{html.escape(f['kind'])}</td>"
        f"<td>{html.escape(f['location'])}</td><td>{html.escape(str(f['evidence']))}</td>"
        f"<td>{html.escape(f['check'])}</td></tr>"
        for f in out["findings"]
    )
    d = out.get("drift")
    drift = (
        f"<p>Drift: measured {d['measured']} {d['unit']}, model {d['model']}, ratio {d['ratio']:.2f} "
        f"(band {d['band'][0]}–{d['band'][1]}); explained by: {', '.join(d['explained_by']) or 'nothing modelled'}</p>"
        if d
        else ""
    )
    page = (
        "<!doctype html><meta charset='utf-8'><title>aifabric diagnose</title>"
        "<body style='font-family:sans-serif'>"
        f"<h1>aifabric diagnose — {html.escape(str(out['fabric']['source']))}</h1>"
        f"<p>{out['fabric']['devices']} devices, {out['fabric']['links']} links; counters "
        f"{html.escape(', '.join(out['formats']))}; interval {out['interval_s']} s</p>{drift}"
        f"{_svg(fm, hot)}"
        "<table border='1' cellpadding='4' style='border-collapse:collapse'><tr><th>severity</th><th>kind</th>"
        f"<th>location</th><th>evidence</th><th>check</th></tr>{rows}</table></body>"
    )
    p = Path(path)
    p.write_text(page)
    return p
