"""Terminal output of ``aifabric compare``: the side-by-side table, the risk table, the
recommendation with its reasons and the brochure claims (rich)."""

from __future__ import annotations


def print_risk(con, result: dict) -> None:
    from rich.table import Table

    for f in result["fabrics"]:
        detail = f.get("risk_detail") or {}
        if not detail:
            continue
        t = Table(
            title=f"misconfiguration risk on {f['fabric']} (packet-level testbed; expected loss = "
            "probability x slowdown)"
        )
        of = next(iter(detail.values()))["slowdown_of"]
        for col in (
            "mistake",
            "ring step quiet / congested",
            f"{of} slowdown",
            "probability",
            "expected loss",
        ):
            t.add_column(col, justify="left" if col == "mistake" else "right")
        for mid, d in detail.items():
            q, c = d.get("comm_slowdown_quiet"), d.get("comm_slowdown_congested")
            qc = (
                f"{q:+.1%} / {c:+.1%}"
                if q is not None
                else (f"{d['comm_slowdown']:+.1%}" if d.get("comm_slowdown") is not None else "-")
            )
            t.add_row(
                mid, qc, f"{d['slowdown']:+.1%}", f"{d['probability']:.0%}", f"{d['expected_loss']:.1%}"
            )
        t.add_row("total", "", "", "", f"{f['expected_loss']:.1%}")
        con.print(t)


def print_comparison(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=max(100, Console().width))
    inp = result["inputs"]
    rec = result["recommendation"]
    con.print(
        f"[bold]aifabric compare[/bold] — {inp['gpus']:,} × {inp['gpu'].upper()}, {inp['workload']}"
        + (f" ({result['model']})" if result.get("model") else "")
        + f"; jitter {inp['jitter_sensitivity']}, expertise {inp['team_expertise']}, budget {inp['budget']}, "
        f"growth {inp['growth']}"
    )
    t = Table(title="fabrics side by side")
    t.add_column("")
    for f in result["fabrics"]:
        t.add_column(f["label"], justify="right")

    def row(name, fn):
        t.add_row(name, *[fn(f) for f in result["fabrics"]])

    row("switches (tiers)", lambda f: f"{f['plan']['switch_count']:,} ({f['plan']['tiers']})")
    row("network capex", lambda f: f"${f['capex_usd']:,.0f}")
    row("capex per GPU", lambda f: f"${f['plan']['network_capex_per_gpu_usd']:,.0f}")
    row("power", lambda f: f"{f['power_w'] / 1000:,.1f} kW")
    row("routing / ring-step efficiency", lambda f: f"{f['routing']} / {f['ring_step_efficiency']:.3f}")
    row(
        "rail permutation FCT p99",
        lambda f: f"{f['permutation_fct_p99_us']:,.0f} us" if f.get("permutation_fct_p99_us") else "—",
    )
    row(
        "all-reduce busbw, 8 GiB",
        lambda f: f"{f['busbw_gbps'] / 8:,.0f} GB/s" if f.get("busbw_gbps") is not None else "— (one node)",
    )
    row(
        "small-message latency",
        lambda f: f"{f['small_message_latency_us']:.2f} us" if f.get("small_message_latency_us") else "—",
    )
    row("iteration time", lambda f: f"{f['iteration_time_s']:.3f} s" if f.get("iteration_time_s") else "—")
    row("tokens / s", lambda f: f"{f['tokens_per_s']:,.0f}" if f.get("tokens_per_s") else "—")
    row(
        "cost per 1M tokens",
        lambda f: (
            f"${f['training_cost']['cost_per_million_tokens_usd']:.3f}" if f.get("training_cost") else "—"
        ),
    )
    con.print(t)
    print_risk(con, result)
    rate = f" at {rec['nic_rate_gbps']:g}G per GPU" if rec.get("nic_rate_gbps") else ""
    con.print(f"\n[bold green]Recommendation: {rec['fabric']}{rate}[/bold green]")
    con.print(
        f"design {rec.get('design', '')}; verdict: [bold]{rec.get('verdict', '')}[/bold]; objective: "
        f"{rec.get('objective', '')}"
    )
    if result.get("probability_best"):
        con.print(
            "probability cheapest (Monte-Carlo over the uncertain inputs): "
            + ", ".join(f"{k} {v:.0%}" for k, v in result["probability_best"].items())
        )
    for i, r in enumerate(rec["reasons"], 1):
        ev = "; ".join(f"{k}={v}" for k, v in r["evidence"].items())
        con.print(f" {i}. {r['text']}  [dim]({ev})[/dim]")
    print_sensitivity(con, result)
    c = Table(title="brochure claims on this cluster")
    c.add_column("claim")
    c.add_column("holds")
    c.add_column("evidence", overflow="fold")
    for cl in result["claims"]:
        c.add_row(cl["claim"], {True: "yes", False: "no", None: "not tested"}[cl["holds"]], cl["evidence"])
    con.print(c)
    if result.get("report"):
        con.print(f"report: {result['report']}")
    con.print(
        f"[dim]{len(result['estimates'])} catalog values are estimates (see --report or --json); "
        f"{result['wall_s']:.1f} s[/dim]"
    )


def print_sensitivity(con, result: dict) -> None:
    """The uncertain inputs whose plausible range crosses the break-even, then the rest by name."""
    from rich.table import Table

    rows = result.get("sensitivity") or []
    if not rows:
        return
    t = Table(title="sensitivity: where the recommendation flips (all else at base)")
    for col in ("input", "base", "plausible range", "break-even", "flips"):
        t.add_column(col, justify="left" if col == "input" else "right")
    for s in sorted(rows, key=lambda r: (not r["flips"], r["break_even"] is None, r["input"])):
        be = "—" if s["break_even"] is None else f"{s['break_even']:.3g}"
        t.add_row(
            s["label"],
            f"{s['base']:.3g}",
            f"{s['range'][0]:.3g} – {s['range'][1]:.3g}",
            be,
            "[bold red]yes[/bold red]" if s["flips"] else "no",
        )
    con.print(t)
