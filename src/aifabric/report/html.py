"""The HTML report of ``aifabric compare``: one self-contained file (plotly.js inlined, no network).

Sections: recommendation with its reasons and evidence; capex and BOM per fabric; iteration-time
breakdown (compute / exposed communication); bus bandwidth against message size for both fabrics;
flow-completion-time distributions; for ``--workload inference`` / ``storage`` their own charts (network time
per decode step and per request against the latency budgets; checkpoint write time); the misconfiguration risk (packet-level testbed: expected loss
per mistake, iteration slowdown against spurious-pause duty cycle); the brochure claims tested; assumptions, estimates and sources.
Every chart is a ``<div class="chart" id=...>`` so a headless browser test can check it rendered.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

CHART_IDS = (
    "chart-capex",
    "chart-iteration",
    "chart-busbw",
    "chart-fct",
    "chart-risk",
    "chart-jitter",
    "chart-tornado",
)

# charts of their own for --workload inference / storage (only in those reports)
WORKLOAD_CHART_IDS = ("chart-inference", "chart-storage")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.6rem} h2{font-size:1.25rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem} td,th{border:1px solid #ddd;padding:.25rem .5rem}
th{background:#f5f5f5;text-align:left} td.n{text-align:right;font-variant-numeric:tabular-nums}
.rec{font-size:1.3rem;padding:.6rem 1rem;background:#eef6ee;border-left:6px solid #3a7;display:inline-block}
.ev{color:#555;font-size:.85rem} .hold{color:#287a3e} .fail{color:#b03030} .na{color:#777}
.chart{min-height:380px} small{color:#666}
"""


def _e(x) -> str:
    return html.escape(str(x))


def _fig_capex(fabrics: list[dict]):
    import plotly.graph_objects as go

    cats = ["switch", "nic", "transceiver", "cable"]
    fig = go.Figure()
    for cat in cats:
        fig.add_bar(
            name=cat,
            x=[f["label"] for f in fabrics],
            y=[sum(x["total_usd"] for x in f["plan"]["bom"] if x["category"] == cat) for f in fabrics],
        )
    fig.update_layout(barmode="stack", title="Network capex by part (USD)", yaxis_title="USD", height=380)
    return fig


def _fig_iteration(fabrics: list[dict]):
    """Step time split into compute, pipeline bubble, optimizer and each group's *exposed*
    communication (the part no compute hides)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    with_it = [f for f in fabrics if f.get("iteration")]
    parts = [("compute_s", "compute"), ("bubble_s", "pipeline bubble"), ("optimizer_s", "optimizer")]
    for key, name in parts:
        fig.add_bar(
            name=name, x=[f["label"] for f in with_it], y=[f["iteration"]["breakdown"][key] for f in with_it]
        )
    groups = sorted({g for f in with_it for g in f["iteration"]["breakdown"]["exposed_s"]})
    for g in groups:
        fig.add_bar(
            name=f"{g.upper()} exposed",
            x=[f["label"] for f in with_it],
            y=[f["iteration"]["breakdown"]["exposed_s"].get(g, 0.0) for f in with_it],
        )
    fig.update_layout(
        barmode="stack",
        title="Training step time (s): compute, bubble, optimizer and exposed communication per group",
        yaxis_title="seconds",
        height=380,
    )
    return fig


def _fig_inference(fabrics: list[dict]):
    """Per fabric: the decode step (compute + exposed network) against the inter-token budget, and the
    time to first token (prefill + KV-cache transfer) against its budget, in ms."""
    from plotly.subplots import make_subplots

    with_inf = [f for f in fabrics if f.get("inference")]
    x = [f["label"] for f in with_inf]
    inf = [f["inference"] for f in with_inf]
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("per output token (inter-token latency)", "time to first token")
    )
    fig.add_bar(name="decode compute", x=x, y=[d["decode_compute_s"] * 1e3 for d in inf], row=1, col=1)
    fig.add_bar(
        name="NVLink in the domain", x=x, y=[d.get("decode_nvlink_s", 0.0) * 1e3 for d in inf], row=1, col=1
    )
    fig.add_bar(
        name="network per decode step", x=x, y=[d["decode_network_s"] * 1e3 for d in inf], row=1, col=1
    )
    fig.add_scatter(
        name="ITL budget", x=x, y=[d["itl_budget_s"] * 1e3 for d in inf], mode="lines+markers", row=1, col=1
    )
    fig.add_bar(name="prefill", x=x, y=[d["prefill_s"] * 1e3 for d in inf], row=1, col=2)
    fig.add_bar(name="KV-cache transfer", x=x, y=[d["kv_transfer_s"] * 1e3 for d in inf], row=1, col=2)
    fig.add_scatter(
        name="TTFT budget", x=x, y=[d["ttft_budget_s"] * 1e3 for d in inf], mode="lines+markers", row=1, col=2
    )
    fig.update_layout(
        barmode="stack",
        title="Inference: network time per decode step and per request against the latency budgets (ms)",
        height=400,
    )
    fig.update_yaxes(title_text="ms", row=1, col=1)
    fig.update_yaxes(title_text="ms", row=1, col=2)
    if inf and not inf[0]["needs_backend"]:
        fig.add_annotation(
            text="served inside one NVLink domain: nothing on the back-end fabric",
            xref="paper",
            yref="paper",
            x=0.5,
            y=1.12,
            showarrow=False,
        )
    return fig


def _fig_storage(fabrics: list[dict]):
    """Per fabric: the time one checkpoint write takes, and the share of time the back-end carries it."""
    import plotly.graph_objects as go

    with_st = [f for f in fabrics if f.get("storage")]
    fig = go.Figure()
    fig.add_bar(
        name="checkpoint write",
        x=[f["label"] for f in with_st],
        y=[f["storage"]["burst_s"] for f in with_st],
        text=[
            f"{f['storage']['burst_s']:.1f} s every {f['storage']['checkpoint_period_s'] / 60:g} min"
            + (
                f"; back-end busy {f['storage']['backend_busy_share']:.1%}"
                if f["storage"]["on_backend"]
                else "; own storage network"
            )
            for f in with_st
        ],
    )
    fig.update_layout(
        title="Storage: time one checkpoint write takes per fabric (s)", yaxis_title="seconds", height=380
    )
    return fig


def _fig_busbw(fabrics: list[dict]):
    import plotly.graph_objects as go

    fig = go.Figure()
    for f in fabrics:
        sweep = f.get("busbw_sweep") or []
        fig.add_scatter(
            x=[r["size_bytes"] for r in sweep],
            y=[r["busbw_gbps"] / 8 for r in sweep],
            mode="lines+markers",
            name=f["label"],
        )
    sizes = sorted({r["size_bytes"] for f in fabrics for r in (f.get("busbw_sweep") or [])})
    fig.update_layout(
        title="All-reduce bus bandwidth vs message size (nccl-tests busbw, GB/s)",
        xaxis={
            "type": "log",
            "title": "message size",
            "tickvals": sizes,
            "ticktext": [_size_label(x) for x in sizes],
        },
        yaxis_title="busbw (GB/s)",
        yaxis_ticksuffix=" GB/s",
        height=380,
    )
    return fig


def _size_label(n: float) -> str:
    """Bytes in binary units as nccl-tests users read them: 8 B, 2 KiB, 512 MiB, 8 GiB."""
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n:g} B"


def _fig_fct(fabrics: list[dict]):
    import numpy as np
    import plotly.graph_objects as go

    fig = go.Figure()
    for f in fabrics:
        for key, what, dash in (
            ("fct_us", "ring step", "solid"),
            ("permutation_fct_us", "rail permutation", "dash"),
        ):
            fct = np.sort(np.asarray(f.get(key) or [], dtype=float))
            if len(fct):
                fig.add_scatter(
                    x=fct,
                    y=np.arange(1, len(fct) + 1) / len(fct),
                    mode="lines",
                    name=f"{f['label']} — {what}",
                    line={"dash": dash},
                )
    fig.update_layout(
        title="Flow completion times (CDF): a DP ring step and a same-rail random permutation",
        xaxis={"type": "log", "title": "FCT", "ticksuffix": " µs"},
        yaxis={"title": "share of flows", "tickformat": ".0%"},
        legend={"orientation": "h", "y": -0.25},
        height=520,
    )
    return fig


def _fig_risk(fabrics: list[dict]):
    import plotly.graph_objects as go

    fig = go.Figure()
    for f in fabrics:
        detail = f.get("risk_detail") or {}
        if detail:
            fig.add_bar(
                name=f"{f['label']}: lost share while present (l)",
                x=list(detail),
                y=[100 * d.get("loss_while_present", 0.0) for d in detail.values()],
            )
            fig.add_bar(
                name=f"{f['label']}: expected loss (p x d x l)",
                x=list(detail),
                y=[100 * d["expected_loss"] for d in detail.values()],
            )
    fig.update_layout(
        barmode="group",
        title="Failures and misconfigurations, both fabrics: loss while present and expected loss (%)",
        yaxis={"title": "share of goodput", "ticksuffix": " %", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.35},
        height=460,
    )
    if all((y or 0) == 0 for t in fig.data for y in t.y):
        fig.add_annotation(
            text="no measured loss from any scenario on this job (its communication is hidden behind compute)",
            showarrow=False,
            xref="paper",
            yref="paper",
            x=0.5,
            y=0.5,
        )
    return fig


def _fig_jitter(result: dict):
    import plotly.graph_objects as go

    fig = go.Figure()
    j = result.get("jitter") or {}
    sweep = j.get("sweep") or []
    groups: dict = {}
    for r in sweep:
        groups.setdefault((r.get("burst_us", 2.0), r.get("share", 1.0)), []).append(r)
    for (burst, share), rows in groups.items():
        fig.add_scatter(
            x=[100 * r["duty"] for r in rows],
            y=[100 * (r["comm_slowdown"] or 0.0) for r in rows],
            mode="lines+markers",
            name=f"ring step: {burst:g} us bursts on {share:.0%} of NICs",
        )
    if sweep:
        x = sorted({100 * r["duty"] for r in sweep})
        fig.add_scatter(
            x=[x[0], x[-1]], y=[20, 20], mode="lines", name="the ~20 % claim", line={"dash": "dot"}
        )
    duties = sorted({100 * r["duty"] for r in sweep})
    fig.update_layout(
        title="Jitter: PAUSE bursts on a share of the NICs — ring-step slowdown vs share of time paused",
        xaxis={
            "type": "log",
            "title": "time paused",
            "tickvals": duties,
            "ticktext": [f"{d:g} %" for d in duties],
        },
        yaxis={"title": "ring-step slowdown", "ticksuffix": " %"},
        legend={"orientation": "h", "y": -0.3},
        height=440,
    )
    return fig


def _risk_section(result: dict) -> list[str]:
    out = [
        "<p>Each scenario is measured on a packet-level pod derived from the fabric (same rate, hop latency, "
        "buffer per port, oversubscription, routing and baseline congestion control): the ring step's slowdown "
        "s, sent through the iteration model; lost share while present l = 1 - 1/(1+s); probability p; share "
        "of the year present d; expected loss p·d·l; the fabric's total 1 - Π(1 - p·d·l), with a range from the "
        "low and high ends of p and d.</p>"
    ]
    for f in result["fabrics"]:
        detail = f.get("risk_detail") or {}
        if not detail:
            continue
        out.append(
            f"<h3>{_e(f['label'])}</h3><table><tr><th>scenario</th><th>what it breaks</th><th>how it is "
            "modelled</th><th>ring step slowdown quiet / congested</th><th>slowdown s</th><th>p</th><th>present "
            "d</th><th>expected loss (range)</th><th>basis</th></tr>"
        )
        for sid, d in detail.items():
            qc = " / ".join(
                "-" if k not in d else ("hang" if d[k] is None else f"{d[k]:+.1%}")
                for k in ("comm_slowdown_quiet", "comm_slowdown_congested")
            )
            if qc == "- / -":
                qc = "-" if d.get("comm_slowdown") is None else f"{d['comm_slowdown']:+.1%} (flow model)"
            slow = (
                "all GPUs stopped"
                if d["slowdown"] is None
                else f"{d['slowdown']:+.1%} of the {d['slowdown_of']}"
            )
            rng = d.get("expected_loss_range") or [d["expected_loss"]] * 2
            out.append(
                f"<tr><td>{_e(sid)}</td><td>{_e(d['what'])}</td><td><small>{_e(d.get('model', ''))}</small></td>"
                f"<td class='n'>{_e(qc)}</td><td class='n'>{_e(slow)}</td><td class='n'>{d['probability']:.0%}</td>"
                f"<td class='n'>{d.get('persistence', 1.0):.2%}</td><td class='n'>{d['expected_loss']:.3%} "
                f"({rng[0]:.3%}–{rng[1]:.3%})</td><td><small>{_e(d.get('probability_basis', ''))}</small></td></tr>"
            )
        lo, hi = f.get("expected_loss_range") or [f["expected_loss"]] * 2
        out.append(
            f"<tr><th colspan=7>total expected loss (goodput loss from job interruptions "
            f"{f.get('goodput_loss', 0.0):.3%} included)</th><td class='n'>{f['expected_loss']:.2%} "
            f"({lo:.2%}–{hi:.2%})</td><td></td></tr></table>"
        )
        tb = f.get("risk_testbed")
        if tb:
            na = "; ".join(f"{k}: {v}" for k, v in (tb.get("not_applicable") or {}).items())
            out.append(
                "<p><small>Testbed: "
                + _e("; ".join(f"{k}: {v}" for k, v in tb["testbed"].items()))
                + f" — {tb['runs']} runs, {tb['wall_s']:.1f} s of simulation. Not measured here: "
                + _e(na or "none")
                + ". Counters (pause frames / drops / ECN marks, mean per run): "
                + _e(
                    "; ".join(
                        f"{tr} {cfg} {c['pause_frames']}/{c['drops']}/{c['ecn_marks']}"
                        for tr, per in tb["counters"].items()
                        for cfg, c in per.items()
                    )
                )
                + "</small></p>"
            )
    return out


def _fig_tornado(result: dict):
    """Per uncertain input: the runner-up's cost relative to the recommended design's at the low and
    high end of the input's plausible range (0 = tie; below 0 the recommendation flips)."""
    import plotly.graph_objects as go

    rows = (result.get("evidence") or {}).get("decide", {}).get("tornado") or []
    rows = sorted(rows, key=lambda r: abs((r["at_high"] or 0) - (r["at_low"] or 0)))
    fig = go.Figure()
    fig.add_bar(
        name="input at range low",
        y=[r["label"] for r in rows],
        x=[100 * (r["at_low"] or 0) for r in rows],
        orientation="h",
    )
    fig.add_bar(
        name="input at range high",
        y=[r["label"] for r in rows],
        x=[100 * (r["at_high"] or 0) for r in rows],
        orientation="h",
    )
    fig.update_layout(
        barmode="group",
        title="Sensitivity: runner-up's cost vs the recommended design's (%); "
        "below 0 the recommendation flips",
        xaxis_title="runner-up cost − recommended cost (%)",
        xaxis_ticksuffix=" %",
        height=max(380, 28 * len(rows) + 120),
        margin={"l": 320},
    )
    return fig


def _sensitivity_section(result: dict) -> list[str]:
    rows = result.get("sensitivity") or []
    out = [
        "<table><tr><th>input</th><th>base</th><th>plausible range</th><th>break-even</th><th>flips</th>"
        "<th>basis of the range</th></tr>"
    ]
    for s in sorted(rows, key=lambda r: (not r["flips"], r["input"])):
        if s.get("kind") == "categorical":
            then = f"{s['design_then']}, {s['verdict_then']}"
            out.append(
                f"<tr><td>{_e(s['label'])}</td><td class='n'>{_e(s['base'])}</td>"
                f"<td class='n'>{_e(' | '.join(s['range']))}</td><td class='n'>{_e(s['break_even'] or '—')}</td>"
                f"<td>{'yes' if s['flips'] else 'no'}</td><td><small>then: {_e(then)}</small></td></tr>"
            )
            continue
        be = "—" if s["break_even"] is None else f"{s['break_even']:.3g}"
        out.append(
            f"<tr><td>{_e(s['label'])}</td><td class='n'>{s['base']:.3g}</td>"
            f"<td class='n'>{s['range'][0]:.3g} – {s['range'][1]:.3g}</td><td class='n'>{be}</td>"
            f"<td>{'yes' if s['flips'] else 'no'}</td><td><small>{_e(s['basis'])}</small></td></tr>"
        )
    out.append("</table>")
    rules = result.get("rules") or []
    if rules:
        out.append(
            "<h3>The product brief's rules, as explanations</h3><table><tr><th>rule</th><th>says</th>"
            "<th>applies</th><th>numbers agree</th><th>why</th></tr>"
        )
        for r in rules:
            agree = {True: "yes", False: "no", None: "—"}[r["agrees"]]
            out.append(
                f"<tr><td>{_e(r['rule'])}</td><td>{_e(r['rule_says'])}</td><td>{'yes' if r['applies'] else 'no'}"
                f"</td><td>{agree}</td><td><small>{_e(r['why'])}</small></td></tr>"
            )
        out.append("</table>")
    return out


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _hinges_section(result: dict) -> list[str]:
    """What the answer hinges on, then the assumptions that decide it (the register's ``decides``)."""
    rec = result["recommendation"]
    out = [f"<p class='summary' id='summary'>{_e(rec.get('summary', ''))}</p>"]
    hinges = rec.get("hinges_on") or []
    if hinges:
        out.append(
            "<h3>What it hinges on</h3><table id='hinges'><tr><th>assumption</th><th>now</th>"
            "<th>flips at</th><th>then</th></tr>"
        )
        for h in hinges:
            then = h.get("design_then") or h.get("recommendation_then") or "—"
            out.append(
                f"<tr><td>{_e(h['assumption'])}</td><td class='n'>{_e(_fmt(h['value_now']))}</td>"
                f"<td class='n'>{_e(_fmt(h['flips_at']))}{' (outside its range)' if h.get('outside_range') else ''}"
                f"</td><td>{_e(then)}</td></tr>"
            )
        out.append("</table>")
    reg = [a for a in result.get("assumptions", []) if isinstance(a, dict)]
    key = [a for a in reg if a.get("decides")] or [a for a in reg if a.get("kind") == "deployment"][:4]
    out.append(
        "<h3>Assumptions that decide this</h3><table id='assumptions'><tr><th>assumption</th><th>value</th>"
        "<th>range / alternatives</th><th>applies to</th><th>source</th></tr>"
    )
    for a in key:
        alt = a.get("alternatives") or a.get("range")
        out.append(
            f"<tr><td>{_e(a['name'])}</td><td class='n'>{_e(_fmt(a['value']))}{' ' + _e(a['unit']) if a.get('unit') else ''}"
            f"</td><td>{_e(' | '.join(_fmt(x) for x in alt) if alt else '—')}</td>"
            f"<td>{_e(', '.join(a['applies_to']))}</td><td><small>{_e(a['source'])}</small></td></tr>"
        )
    out.append(
        f"</table><p><small>{len(reg)} assumptions in the register (JSON <code>assumptions[]</code>); "
        "a scenario's <code>assumptions:</code> section overrides any of them.</small></p>"
    )
    return out


def figures(result: dict) -> dict:
    """The report's plotly figures by chart id (what :func:`render_report` draws)."""
    fabrics = result["fabrics"]
    figs = {
        "chart-capex": _fig_capex(fabrics),
        "chart-iteration": _fig_iteration(fabrics),
        "chart-busbw": _fig_busbw(fabrics),
        "chart-fct": _fig_fct(fabrics),
    }
    if any(f.get("inference") for f in fabrics):
        figs["chart-inference"] = _fig_inference(fabrics)
    if any(f.get("storage") for f in fabrics):
        figs["chart-storage"] = _fig_storage(fabrics)
    if any(f.get("risk_detail") for f in fabrics):
        figs["chart-risk"] = _fig_risk(fabrics)
    if (result.get("jitter") or {}).get("sweep"):
        figs["chart-jitter"] = _fig_jitter(result)
    if (result.get("evidence") or {}).get("decide", {}).get("tornado"):
        figs["chart-tornado"] = _fig_tornado(result)
    return figs


def recommendation_parts(result: dict) -> list[str]:
    """The answer card (``#recommendation``) and the verdict line with P(cheapest) per design."""
    rec = result["recommendation"]
    return [
        f"<div class='rec' id='recommendation'>{_e(rec['fabric'])}"
        + (f" · {rec['nic_rate_gbps']:g}G per GPU" if rec.get("nic_rate_gbps") else "")
        + (f" · {_e(rec['design'])}" if rec.get("design") else "")
        + "</div>",
        f"<p>Verdict: <b>{_e(rec.get('verdict', ''))}</b> · objective: {_e(rec.get('objective', ''))}"
        + (
            " · probability cheapest: "
            + _e(", ".join(f"{k} {v:.0%}" for k, v in result["probability_best"].items()))
            if result.get("probability_best")
            else ""
        )
        + "</p>",
    ]


def reasons_parts(result: dict) -> list[str]:
    """The recommendation's reasons, each with its evidence and rule, as a numbered list."""
    out = ["<ol>"]
    for r in result["recommendation"]["reasons"]:
        ev = "; ".join(f"{k}: {v}" for k, v in r["evidence"].items())
        out.append(
            f"<li>{_e(r['text'])} <span class='ev'>[{_e(ev)}] (rule {_e(r.get('rule', ''))})</span></li>"
        )
    out.append("</ol>")
    return out


_SIDE_BY_SIDE = (
    ("switch × radix", lambda f: f"{f['plan']['switch']} × {f['plan']['radix']}"),
    ("tiers / switches", lambda f: f"{f['plan']['tiers']} / {f['plan']['switch_count']:,}"),
    ("capex", lambda f: f"{f['capex_usd']:,.0f} USD"),
    ("capex per GPU", lambda f: f"{f['plan']['network_capex_per_gpu_usd']:,.0f} USD"),
    ("power", lambda f: f"{f['plan']['power_w'] / 1000:,.1f} kW"),
    ("iteration time", lambda f: f"{f['iteration_time_s']:.3f} s" if f.get("iteration_time_s") else "—"),
    ("tokens / s", lambda f: f"{f['tokens_per_s']:,.0f}" if f.get("tokens_per_s") else "—"),
    (
        "all-reduce busbw, 8 GiB",
        lambda f: (
            f"{f['busbw_gbps'] / 8:.0f} GB/s ({f['busbw_gbps']:,.0f} Gb/s)" if f.get("busbw_gbps") else "—"
        ),
    ),
    (
        "expected loss from failures and misconfigurations",
        lambda f: f"{100 * f['expected_loss']:.2f} %" if f.get("risk") else "—",
    ),
    (
        "goodput loss from job interruptions",
        lambda f: f"{100 * f.get('goodput_loss', 0.0):.3f} %" if f.get("risk") else "—",
    ),
)


def side_by_side_parts(result: dict) -> list[str]:
    """The fabrics side by side: switch, tiers, capex, power, step time, busbw, expected loss."""
    fabrics = result["fabrics"]
    parts = [
        "<h2>Fabrics side by side</h2><table><tr><th></th>"
        + "".join(f"<th>{_e(f['label'])}</th>" for f in fabrics)
        + "</tr>"
    ]
    for name, fn in _SIDE_BY_SIDE:
        parts.append(
            f"<tr><th>{_e(name)}</th>" + "".join(f"<td class='n'>{_e(fn(f))}</td>" for f in fabrics) + "</tr>"
        )
    parts.append("</table>")
    return parts


hinges_parts = _hinges_section
sensitivity_parts = _sensitivity_section
fig_capex = _fig_capex
fig_tornado = _fig_tornado


def render_report(result: dict) -> str:
    """Return the HTML text of the report for a ``compare`` result dict."""
    from plotly.offline import get_plotlyjs

    fabrics = result["fabrics"]
    figs = figures(result)
    divs = {k: f'<div class="chart" id="{k}"></div>' for k in figs}
    scripts = "\n".join(
        f"Plotly.newPlot({json.dumps(k)}, {fig.to_json()}.data, {fig.to_json()}.layout, {{responsive: true}});"
        for k, fig in figs.items()
    )
    inputs = result.get("inputs", {})
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>aifabric — {_e(result.get('scenario', ''))}"
        f"</title><style>{_CSS}</style><script>{get_plotlyjs()}</script></head><body>",
        f"<h1>IB or RoCE for {_e(inputs.get('gpus'))} × {_e(str(inputs.get('gpu', '')).upper())} — "
        f"{_e(inputs.get('workload', ''))}</h1>",
        f"<p><small>aifabric {_e(result.get('version', ''))} · scenario {_e(result.get('scenario', ''))} · "
        f"inputs: {_e(', '.join(f'{k}={v}' for k, v in inputs.items()))}</small></p>",
        "<h2>Recommendation</h2>",
        *recommendation_parts(result),
        *hinges_parts(result),
        *reasons_parts(result),
        *side_by_side_parts(result),
    ]
    parts += [
        "<h2>Capex</h2>",
        divs["chart-capex"],
    ]
    if "chart-inference" in divs:
        parts += ["<h2>Inference traffic</h2>", divs["chart-inference"]]
    if "chart-storage" in divs:
        parts += ["<h2>Storage traffic</h2>", divs["chart-storage"]]
    parts += [
        "<h2>Iteration time</h2>",
        divs["chart-iteration"],
        "<h2>Bus bandwidth</h2>",
        divs["chart-busbw"],
        "<h2>Flow completion times</h2>",
        f"<p><small>{_e(fabrics[0].get('fct_title', '') if fabrics else '')}</small></p>",
        divs["chart-fct"],
    ]
    if "chart-risk" in divs:
        parts += ["<h2>Failure and misconfiguration risk</h2>", divs["chart-risk"]] + _risk_section(result)
    if "chart-jitter" in divs:
        parts += ["<h2>Jitter: spurious PAUSE frames</h2>", divs["chart-jitter"]]
    if "chart-tornado" in divs:
        parts += ["<h2>Sensitivity: what would flip the recommendation</h2>", divs["chart-tornado"]]
        parts += _sensitivity_section(result)
    parts.append(
        "<h2>Brochure claims tested on this cluster</h2><table><tr><th>claim</th><th>holds</th>"
        "<th>evidence</th></tr>"
    )
    for c in result.get("claims", []):
        cls, word = (
            ("hold", "yes")
            if c["holds"] is True
            else (("fail", "no") if c["holds"] is False else ("na", "not tested"))
        )
        parts.append(
            f"<tr><td>{_e(c['claim'])}</td><td class='{cls}'>{word}</td><td>{_e(c['evidence'])}</td></tr>"
        )
    parts.append("</table>")
    for f in fabrics:
        parts.append(
            f"<h2>Bill of materials — {_e(f['label'])}</h2><table><tr><th>where</th><th>item</th>"
            "<th>catalog id</th><th>count</th><th>unit USD</th><th>total USD</th><th>price source</th></tr>"
        )
        for x in f["plan"]["bom"]:
            star = "*" if x["estimate"] else ""
            parts.append(
                f"<tr><td>{_e(x['where'])}</td><td>{_e(x['item'])}</td><td>{_e(x['catalog_id'])}</td>"
                f"<td class='n'>{x['count']:,}</td><td class='n'>{x['unit_price_usd']:,.0f}{star}</td>"
                f"<td class='n'>{x['total_usd']:,.0f}</td><td>{_e(x['price_source'])}</td></tr>"
            )
        parts.append("</table>")
    parts.append(
        "<h2>Model notes</h2><ul>"
        + "".join(f"<li>{_e(a)}</li>" for a in result.get("assumption_notes", []))
        + "</ul>"
    )
    parts.append(
        "<h2>Estimated catalog values used</h2><table><tr><th>kind</th><th>id</th><th>field</th>"
        "<th>basis</th></tr>"
        + "".join(
            f"<tr><td>{_e(x['kind'])}</td><td>{_e(x['id'])}</td><td>{_e(x['field'])}</td><td>{_e(x['basis'])}"
            "</td></tr>"
            for x in result.get("estimates", [])
        )
        + "</table>"
    )
    parts.append(
        "<h2>Sources</h2><ul>"
        + "".join(f"<li><b>{_e(k)}</b> {_e(v)}</li>" for k, v in sorted(result.get("sources", {}).items()))
        + "</ul>"
    )
    parts.append(f"<script>{scripts}</script></body></html>")
    return "\n".join(parts)


def write_report(result: dict, path: str | Path) -> Path:
    p = Path(path)
    p.write_text(render_report(result), encoding="utf-8")
    return p
