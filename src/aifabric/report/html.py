"""The HTML report of ``aifabric compare``: one self-contained file (plotly.js's basic bundle inlined
once, :mod:`aifabric.report.plotlyjs`; no network).

Sections: recommendation with its reasons and evidence; capex and BOM per fabric; the step time's
difference to the reference fabric (the first InfiniBand one) part by part (compute / exposed
communication), and the bus bandwidth's ratio to it by message size, each with the absolute values
in the hover and a table;
flow-completion-time distributions; for ``--workload inference`` / ``storage`` their own charts (network time
per decode step and per request against the latency budgets; checkpoint write time); the misconfiguration risk (packet-level testbed: expected loss
per mistake, iteration slowdown against spurious-pause duty cycle); the brochure claims tested; assumptions, estimates and sources.
Every chart is a ``<div class="chart" id=...>`` so a headless browser test can check it rendered.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from aifabric.report.result import step_with_band

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
CDF_POINTS = 400  # points drawn per flow-completion-time CDF (the shape at ¼ % resolution)

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.6rem} h2{font-size:1.25rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem} td,th{border:1px solid #ddd;padding:.25rem .5rem}
th{background:#f5f5f5;text-align:left} td.n{text-align:right;font-variant-numeric:tabular-nums}
.rec{font-size:1.3rem;padding:.6rem 1rem;background:#eef6ee;border-left:6px solid #3a7;display:inline-block}
.ev{color:#555;font-size:.85rem} .hold{color:#287a3e} .fail{color:#b03030} .na{color:#777}
.chart{min-height:380px} small{color:#666}
.card{border:1px solid #cde3d2;background:#f4faf5;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.card .answer{font-size:1.5rem;font-weight:600;color:#1f6b3a} table.deciding td,table.deciding th{padding:.2rem .6rem}
#toc{background:#fafafa;border:1px solid #eee;padding:.5rem 1rem;margin:1rem 0} #toc ol{columns:2;margin:.3rem 0}
table.heat td{min-width:7rem;text-align:center} table.heat td b{font-weight:600}
.heat-legend .sw{display:inline-block;width:1rem;height:.8rem;border:1px solid #ccc;vertical-align:middle}
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


def reference_fabric(fabrics: list[dict]) -> dict | None:
    """The fabric the difference charts compare the others with: the first InfiniBand one, else the
    first one."""
    return next((f for f in fabrics if f.get("technology") == "infiniband"), fabrics[0] if fabrics else None)


def _step_parts(f: dict) -> list[tuple[str, float]]:
    """(name, seconds) of a fabric's step: compute, bubble, optimizer, each group's exposed
    communication, and the whole step."""
    b = f["iteration"]["breakdown"]
    parts = [("compute", b["compute_s"]), ("pipeline bubble", b["bubble_s"]), ("optimizer", b["optimizer_s"])]
    parts.append(("straggler spread", b.get("straggler_s", 0.0)))
    parts += [(f"{g.upper()} exposed", s) for g, s in sorted(b["exposed_s"].items())]
    return [*parts, ("whole step", f["iteration"]["iteration_s"])]


def _fig_iteration(fabrics: list[dict]):
    """Each fabric's step time minus the reference fabric's, part by part (compute, bubble, optimizer,
    each group's *exposed* communication — the part no compute hides — and the whole step), in ms;
    the absolute times in the hover and in the table under the chart. With one fabric: its parts."""
    import plotly.graph_objects as go

    with_it = [f for f in fabrics if f.get("iteration")]
    ref = reference_fabric(with_it)
    others = [f for f in with_it if f is not ref]
    if not others:
        return _fig_iteration_absolute(with_it)
    fig = go.Figure()
    base = dict(_step_parts(ref))
    names = list(dict.fromkeys(n for f in with_it for n, _ in _step_parts(f)))
    for f in others:
        own = dict(_step_parts(f))
        a, b = [own.get(n, 0.0) for n in names], [base.get(n, 0.0) for n in names]
        fig.add_bar(
            name=f"{f['label']} − {ref['label']}",
            x=names,
            y=[1e3 * (x - y) for x, y in zip(a, b, strict=True)],
            customdata=list(zip(a, b, strict=True)),
            hovertemplate=f"%{{x}}: %{{y:+.2f}} ms<br>{_js(f['label'])} %{{customdata[0]:.4f}} s, "
            f"{_js(ref['label'])} %{{customdata[1]:.4f}} s<extra></extra>",
        )
    fig.update_layout(
        title=f"Training step time: each part's difference to {ref['label']} (ms)",
        yaxis={"title": f"difference to {ref['label']} (ms)", "ticksuffix": " ms", "zeroline": True},
        showlegend=True,
        legend={"orientation": "h", "y": -0.2},
        height=400,
    )
    return fig


def _fig_iteration_absolute(with_it: list[dict]):
    import plotly.graph_objects as go

    fig = go.Figure()
    for name in dict.fromkeys(n for f in with_it for n, _ in _step_parts(f)[:-1]):
        fig.add_bar(
            name=name,
            x=[f["label"] for f in with_it],
            y=[dict(_step_parts(f)).get(name, 0.0) for f in with_it],
        )
    fig.update_layout(
        barmode="stack", title="Training step time by part (s)", yaxis_title="seconds", height=380
    )
    return fig


def _iteration_table(fabrics: list[dict]) -> list[str]:
    """The step's parts per fabric in seconds (the absolute values behind the difference chart)."""
    with_it = [f for f in fabrics if f.get("iteration")]
    if not with_it:
        return []
    names = list(dict.fromkeys(n for f in with_it for n, _ in _step_parts(f)))
    out = [
        "<table id='iteration-table'><tr><th>step part (s)</th>",
        *(f"<th>{_e(f['label'])}</th>" for f in with_it),
        "</tr>",
    ]
    for n in names:
        cells = "".join(f"<td class='n'>{dict(_step_parts(f)).get(n, 0.0):.4f}</td>" for f in with_it)
        out.append(f"<tr><th>{_e(n)}</th>{cells}</tr>")
    return [*out, "</table>"]


def _js(text: str) -> str:
    """A label inside a plotly hovertemplate (which reads HTML tags and ``%{...}`` fields)."""
    return html.escape(str(text)).replace("%{", "% {")


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


def _sweep_gbytes(f: dict) -> dict[float, float]:
    """A fabric's all-reduce sweep as message size (bytes) → busbw (GB/s)."""
    return {r["size_bytes"]: r["busbw_gbps"] / 8 for r in (f.get("busbw_sweep") or [])}  # stored in Gb/s


def _fig_busbw(fabrics: list[dict]):
    """Each fabric's all-reduce bus bandwidth relative to the reference fabric's, by message size, in
    % (its busbw / the reference's − 1; 0 = parity); the GB/s of both in the hover and in the table
    under the chart. With one fabric: its busbw in GB/s."""
    import plotly.graph_objects as go

    with_bw = [f for f in fabrics if f.get("busbw_sweep")]
    ref = reference_fabric(with_bw)
    others = [f for f in with_bw if f is not ref]
    sizes = sorted({s for f in with_bw for s in _sweep_gbytes(f)})
    fig = go.Figure()
    if not others:
        for f in with_bw:
            bw = _sweep_gbytes(f)
            fig.add_scatter(x=list(bw), y=list(bw.values()), mode="lines+markers", name=f["label"])
        yaxis = {"title": "busbw (GB/s)", "ticksuffix": " GB/s"}
        title = "All-reduce bus bandwidth vs message size (nccl-tests busbw, GB/s)"
    else:
        base = _sweep_gbytes(ref)
        for f in others:
            own = _sweep_gbytes(f)
            xs = [s for s in sizes if s in own and base.get(s)]
            fig.add_scatter(
                x=xs,
                y=[100 * (own[s] / base[s] - 1) for s in xs],
                mode="lines+markers",
                name=f"{f['label']} vs {ref['label']}",
                customdata=[(_size_label(s), own[s], base[s]) for s in xs],
                hovertemplate=f"%{{customdata[0]}}: %{{y:+.2f}} %<br>{_js(f['label'])} %{{customdata[1]:.4g}} GB/s, "
                f"{_js(ref['label'])} %{{customdata[2]:.4g}} GB/s<extra></extra>",
            )
        fig.add_hline(y=0.0, line={"dash": "dot", "color": "#666"}, annotation_text="parity")
        yaxis = {"title": f"busbw difference to {ref['label']} (%)", "ticksuffix": " %", "zeroline": True}
        title = f"All-reduce bus bandwidth: difference to {ref['label']} by message size (nccl-tests busbw)"
    fig.update_layout(
        title=title,
        xaxis={
            "type": "log",
            "title": "message size",
            "tickvals": sizes,
            "ticktext": [_size_label(x) for x in sizes],
        },
        yaxis=yaxis,
        showlegend=True,
        legend={"orientation": "h", "y": -0.25},
        height=400,
    )
    return fig


def _busbw_table(fabrics: list[dict]) -> list[str]:
    """busbw in GB/s per message size and fabric (the absolute values behind the ratio chart)."""
    with_bw = [f for f in fabrics if f.get("busbw_sweep")]
    if not with_bw:
        return []
    bws = [_sweep_gbytes(f) for f in with_bw]
    head = "".join(f"<th>{_e(f['label'])}</th>" for f in with_bw)
    rows = [
        f"<tr><th>{_e(_size_label(s))}</th>"
        + "".join(f"<td class='n'>{_bw(bw.get(s))}</td>" for bw in bws)
        + "</tr>"
        for s in sorted({s for bw in bws for s in bw})
    ]
    return [
        "<details><summary>busbw in GB/s by message size</summary>",
        f"<table id='busbw-table'><tr><th>message size</th>{head}</tr>",
        *rows,
        "</table></details>",
    ]


def _bw(v: float | None) -> str:
    return "—" if v is None else f"{v:.4g}"


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
                # the CDF at most CDF_POINTS ranks, evenly spaced, the first and last kept
                at = np.unique(np.linspace(0, len(fct) - 1, min(len(fct), CDF_POINTS)).round().astype(int))
                fig.add_scatter(
                    x=[float(f"{v:.6g}") for v in fct[at]],
                    y=(at + 1) / len(fct),
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
    """Expected loss by scenario, largest contribution first (horizontal bars, one colour per fabric):
    where each fabric's expected loss comes from."""
    import plotly.graph_objects as go

    fig = go.Figure()
    share = {}
    for f in fabrics:
        for sid, d in (f.get("risk_detail") or {}).items():
            share[sid] = max(share.get(sid, 0.0), d["expected_loss"])
    order = sorted(share, key=lambda k: share[k])  # plotly draws the first category at the bottom
    for f in fabrics:
        detail = f.get("risk_detail") or {}
        if detail:
            fig.add_bar(
                name=f["label"],
                orientation="h",
                y=[k for k in order if k in detail],
                x=[100 * detail[k]["expected_loss"] for k in order if k in detail],
                hovertemplate="%{y}: %{x:.4f} % of goodput<extra>%{fullData.name}</extra>",
            )
    fig.update_layout(
        barmode="group",
        title="Expected goodput loss by scenario (p × d × l), largest first",
        xaxis={"title": "expected loss, % of goodput", "ticksuffix": " %", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.2},
        height=max(360, 28 * len(order) + 160),
    )
    if all((x or 0) == 0 for t in fig.data for x in t.x):
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
            "<h3>Rules of thumb from the industry articles, checked on these numbers</h3><table><tr>"
            "<th>rule of thumb</th><th>says</th>"
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
        "chart-busbw": _fig_busbw(fabrics),
        "chart-fct": _fig_fct(fabrics),
    }
    if any(f.get("iteration") for f in fabrics):
        figs["chart-iteration"] = _fig_iteration(fabrics)
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


def _side_by_side(fabrics: list[dict]) -> list[str]:
    rows = [
        ("switch × radix", lambda f: f"{f['plan']['switch']} × {f['plan']['radix']}"),
        ("tiers / switches", lambda f: f"{f['plan']['tiers']} / {f['plan']['switch_count']:,}"),
        ("capex", lambda f: f"{f['capex_usd']:,.0f} USD"),
        ("capex per GPU", lambda f: f"{f['plan']['network_capex_per_gpu_usd']:,.0f} USD"),
        ("power", lambda f: f"{f['plan']['power_w'] / 1000:,.1f} kW"),
        ("iteration time", step_with_band),
        ("tokens / s", lambda f: f"{f['tokens_per_s']:,.0f}" if f.get("tokens_per_s") else "—"),
        (
            "all-reduce busbw, 8 GiB",
            lambda f: f"{f['busbw_gbps'] / 8:.0f} GB/s" if f.get("busbw_gbps") else "—",
        ),
        (
            "expected loss from failures and misconfigurations",
            lambda f: f"{100 * f['expected_loss']:.2f} %" if f.get("risk") else "—",
        ),
        (
            "goodput loss from job interruptions",
            lambda f: f"{100 * f.get('goodput_loss', 0.0):.3f} %" if f.get("risk") else "—",
        ),
    ]
    out = ["<table><tr><th></th>" + "".join(f"<th>{_e(f['label'])}</th>" for f in fabrics) + "</tr>"]
    for name, fn in rows:
        out.append(
            f"<tr><th>{_e(name)}</th>" + "".join(f"<td class='n'>{_e(fn(f))}</td>" for f in fabrics) + "</tr>"
        )
    return [*out, "</table>"]


def _reasons(rec: dict) -> list[str]:
    out = ["<ol>"]
    for r in rec["reasons"]:
        ev = "; ".join(f"{k}: {v}" for k, v in r["evidence"].items())
        out.append(f"<li>{_e(r['text'])}" + (f" <span class='ev'>[{_e(ev)}]</span>" if ev else "") + "</li>")
    return [*out, "</ol>"]


def _claims(result: dict) -> list[str]:
    out = ["<table><tr><th>claim</th><th>holds</th><th>evidence</th></tr>"]
    for c in result.get("claims", []):
        cls, word = {True: ("hold", "yes"), False: ("fail", "no")}.get(c["holds"], ("na", "not tested"))
        out.append(
            f"<tr><td>{_e(c['claim'])}</td><td class='{cls}'>{word}</td><td>{_e(c['evidence'])}</td></tr>"
        )
    return [*out, "</table>"]


def _boms(fabrics: list[dict]) -> list[str]:
    out = []
    for f in fabrics:
        out.append(
            f"<h3>{_e(f['label'])}</h3><table><tr><th>where</th><th>item</th><th>catalog id</th><th>count</th>"
            "<th>unit USD</th><th>total USD</th><th>price source</th></tr>"
        )
        for x in f["plan"]["bom"]:
            star = "*" if x["estimate"] else ""
            out.append(
                f"<tr><td>{_e(x['where'])}</td><td>{_e(x['item'])}</td><td>{_e(x['catalog_id'])}</td>"
                f"<td class='n'>{x['count']:,}</td><td class='n'>{x['unit_price_usd']:,.0f}{star}</td>"
                f"<td class='n'>{x['total_usd']:,.0f}</td><td>{_e(x['price_source'])}</td></tr>"
            )
        out.append("</table>")
    return out


def _references(result: dict) -> dict[str, list[str]]:
    est = used_estimates(result)
    return {
        "notes": ["<ul>", *(f"<li>{_e(a)}</li>" for a in result.get("assumption_notes", [])), "</ul>"],
        "estimates": [
            f"<p><small>{len(est)} of the catalog's {len(result.get('estimates', []))} estimated values are in "
            "the designs shown.</small></p><table><tr><th>kind</th><th>id</th><th>field</th><th>basis</th></tr>",
            *(
                f"<tr><td>{_e(x['kind'])}</td><td>{_e(x['id'])}</td><td>{_e(x['field'])}</td><td>{_e(x['basis'])}</td></tr>"
                for x in est
            ),
            "</table>",
        ],
        "sources": ["<ul>", *(source_item(k, v) for k, v in used_sources(result)), "</ul>"],
    }


def _sections(result: dict, divs: dict) -> list[tuple[str, str, list[str]]]:
    """(id, title, HTML parts) of every section, in reading order."""
    fabrics, rec = result["fabrics"], result["recommendation"]
    secs = [
        ("why", "Why this answer", [*_hinges_section(result), *_reasons(rec)]),
        ("fabrics", "Fabrics side by side", _side_by_side(fabrics)),
        ("capex", "Capex", [divs["chart-capex"]]),
    ]
    if "chart-inference" in divs:
        secs.append(("inference", "Inference traffic", [divs["chart-inference"]]))
    if "chart-storage" in divs:
        secs.append(("storage", "Storage traffic", [divs["chart-storage"]]))
    fct_note = f"<p><small>{_e(fabrics[0].get('fct_title', '') if fabrics else '')}</small></p>"
    if "chart-iteration" in divs:
        secs.append(("iteration", "Iteration time", [divs["chart-iteration"], *_iteration_table(fabrics)]))
    secs += [
        ("busbw", "Bus bandwidth", [divs["chart-busbw"], *_busbw_table(fabrics)]),
        ("fct", "Flow completion times", [fct_note, divs["chart-fct"]]),
    ]
    if "chart-risk" in divs:
        secs.append(
            ("risk", "Failure and misconfiguration risk", [divs["chart-risk"], *_risk_section(result)])
        )
    if "chart-jitter" in divs:
        secs.append(("jitter", "Jitter: spurious PAUSE frames", [divs["chart-jitter"]]))
    if "chart-tornado" in divs:
        secs.append(
            (
                "sensitivity",
                "What would flip the answer",
                [divs["chart-tornado"], *_sensitivity_section(result)],
            )
        )
    refs = _references(result)
    return secs + [
        ("claims", "Brochure claims tested on this cluster", _claims(result)),
        ("bom", "Bills of materials", _boms(fabrics)),
        ("notes", "Model notes", refs["notes"]),
        ("estimates", "Estimated values in these designs", refs["estimates"]),
        ("sources", "Sources", refs["sources"]),
    ]


def render_report(result: dict) -> str:
    """Return the HTML text of the report for a ``compare`` result dict: the summary card, a table of
    contents, then the sections; plotly.js is inlined once and each figure's JSON once."""
    from aifabric.report.plotlyjs import check_traces, plotly_js

    figs = figures(result)
    check_traces(figs.values())
    divs = {k: f'<div class="chart" id="{k}"></div>' for k in figs}
    scripts = "\n".join(
        f"(function(f){{Plotly.newPlot({json.dumps(k)}, f.data, f.layout, {{responsive: true}});}})({fig.to_json()});"
        for k, fig in figs.items()
    )
    inputs = result.get("inputs", {})
    sections = _sections(result, divs)
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>aifabric — {_e(result.get('scenario', ''))}"
        f"</title><style>{_CSS}</style><script>{plotly_js()}</script></head><body>",
        f"<h1>InfiniBand or RoCE for {inputs.get('gpus', 0):,} × {_e(str(inputs.get('gpu', '')).upper())} — "
        f"{_e(inputs.get('workload', ''))}</h1>",
        f"<p><small>aifabric {_e(result.get('version', ''))} · {_e(result.get('scenario', ''))}</small></p>",
        "<h2 id='recommendation'>Answer</h2>",
        summary_card(result),
        toc([("recommendation", "Answer"), *((sid, title) for sid, title, _ in sections)]),
    ]
    for sid, title, body in sections:
        parts += [f"<section id='sec-{sid}'><h2 id='{sid}'>{_e(title)}</h2>", *body, "</section>"]
    parts.append(f"<script>{scripts}</script></body></html>")
    return "\n".join(parts)


def write_report(result: dict, path: str | Path) -> Path:
    p = Path(path)
    p.write_text(render_report(result), encoding="utf-8")
    return p


# ---- the summary card, the table of contents and what the shown designs use --------------------------
_INPUT_LABELS = (
    ("jitter_sensitivity", "jitter sensitivity"),
    ("team_expertise", "team expertise"),
    ("budget", "budget"),
    ("growth", "growth"),
    ("network_budget_usd", "network budget (USD)"),
    ("designs", "designs"),
    ("placement", "placement"),
)


def asked_line(result: dict) -> str:
    """The question in words (only the inputs that were set): ``1,024 × H100 · training ...``."""
    inp = result.get("inputs") or {}
    head = f"{inp.get('gpus', 0):,} × {str(inp.get('gpu', '')).upper()} · {inp.get('workload', '')}"
    if result.get("model"):
        head += f" ({result['model']})"
    rest = [
        f"{label} {_fmt_value(inp[k])}" for k, label in _INPUT_LABELS if inp.get(k) not in (None, [], False)
    ]
    return " · ".join([head, *rest])


def _fmt_value(v) -> str:
    return ", ".join(map(str, v)) if isinstance(v, list) else _fmt(v)


def summary_card(result: dict) -> str:
    """The answer first: recommendation, verdict, what it hinges on and the deciding numbers per
    fabric (the same numbers as the terminal's first lines); also the notebook's ``_repr_html_``."""
    from aifabric.report.terminal import deciding_numbers

    rec = result["recommendation"]
    rate = f" at {rec['nic_rate_gbps']:g}G per GPU" if rec.get("nic_rate_gbps") else ""
    hinges = "".join(
        f"<li>{_e(h['assumption'])}: {_e(_fmt(h['value_now']))} now, flips at {_e(_fmt(h['flips_at']))} → "
        f"{_e(h.get('design_then') or h.get('recommendation_then') or '—')}</li>"
        for h in (rec.get("hinges_on") or [])[:3]
    )
    head = "".join(f"<th>{_e(f['label'])}</th>" for f in result["fabrics"])
    rows = "".join(
        f"<tr><th>{_e(name)}</th>" + "".join(f"<td class='n'>{_e(c)}</td>" for c in cells) + "</tr>"
        for name, cells in deciding_numbers(result)
    )
    return (
        f"<div class='card' id='summary-card'><div class='answer'>{_e(rec['fabric'])}{_e(rate)}"
        f"{' · ' + _e(rec['design']) if rec.get('design') else ''}</div>"
        f"<p>Verdict: <b>{_e(rec.get('verdict', ''))}</b>. {_e(_after_verdict(rec))}</p>"
        + (f"<p>It hinges on:</p><ul>{hinges}</ul>" if hinges else "")
        + f"<table class='deciding'><tr><th>deciding numbers</th>{head}</tr>{rows}</table>"
        f"<p><small>{_e(asked_line(result))}</small></p></div>"
    )


def _after_verdict(rec: dict) -> str:
    """The summary sentence without its leading ``verdict:`` (the card prints the verdict already)."""
    text, verdict = rec.get("summary", ""), rec.get("verdict", "")
    return text[len(verdict) + 1 :].strip() if verdict and text.startswith(verdict + ":") else text


def toc(sections: list[tuple[str, str]]) -> str:
    """A table of contents linking each ``(id, title)`` section."""
    items = "".join(f"<li><a href='#{_e(sid)}'>{_e(title)}</a></li>" for sid, title in sections)
    return f"<nav id='toc'><b>Contents</b><ol>{items}</ol></nav>"


def used_ids(result: dict) -> set[str]:
    """Catalog ids of the parts the shown designs use (their bills of materials, switches, NICs, GPU)."""
    ids = {str((result.get("inputs") or {}).get("gpu", ""))}
    for f in result.get("fabrics", []):
        plan = f.get("plan") or {}
        ids |= {str(plan.get("switch", "")), str(plan.get("nic", ""))}
        ids |= {str(x.get("catalog_id", "")) for x in plan.get("bom", [])}
    return ids - {""}


def used_estimates(result: dict) -> list[dict]:
    """The catalog estimates of the parts the shown designs use (not the whole catalog's)."""
    ids = used_ids(result)
    return [x for x in result.get("estimates", []) if str(x.get("id")) in ids]


_SOURCE_ID = re.compile(r"\b([SP])(\d+)\b")


def used_sources(result: dict) -> list[tuple[str, str]]:
    """The sources cited anywhere in the result except the source list itself (prices, estimates,
    assumptions, reasons, claims), sorted by letter and number: S2 before S10."""
    sources = result.get("sources") or {}
    shown = {k: v for k, v in result.items() if k not in ("sources", "estimates")}
    text = json.dumps(shown, default=str) + json.dumps(used_estimates(result), default=str)
    cited = {f"{a}{n}" for a, n in _SOURCE_ID.findall(text)}
    keys = [k for k in sources if k in cited]
    return [(k, sources[k]) for k in sorted(keys, key=_source_key)]


def _source_key(k: str) -> tuple[str, int]:
    m = _SOURCE_ID.fullmatch(k)
    return (m.group(1), int(m.group(2))) if m else (k, 0)


def source_item(key: str, text: str) -> str:
    """One source as a list item, its URL as a link when it starts with one."""
    url, _, rest = text.partition(" ")
    if url.startswith(("https://", "http://")):
        return f"<li id='src-{_e(key)}'><b>{_e(key)}</b> <a href='{_e(url)}'>{_e(url)}</a> {_e(rest)}</li>"
    return f"<li id='src-{_e(key)}'><b>{_e(key)}</b> {_e(text)}</li>"


# ---- the report's components, reused by ``aifabric serve`` (aifabric.serve.view) -------------------
def recommendation_parts(result: dict) -> list[str]:
    """The answer (``#recommendation``) and the verdict line with P(cheapest) per design."""
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
    """The recommendation's reasons, each with its evidence, as a numbered list."""
    return _reasons(result["recommendation"])


def side_by_side_parts(result: dict) -> list[str]:
    """The fabrics side by side: switch, tiers, capex, power, step time, busbw, expected loss."""
    return ["<h2>Fabrics side by side</h2>", *_side_by_side(result["fabrics"])]


hinges_parts = _hinges_section
sensitivity_parts = _sensitivity_section
fig_capex = _fig_capex
fig_tornado = _fig_tornado
