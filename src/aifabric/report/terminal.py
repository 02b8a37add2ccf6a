"""Terminal output of ``aifabric compare``: the side-by-side table, the risk table, the
recommendation with its reasons and the brochure claims (rich)."""

from __future__ import annotations


def _pct_or(x, fmt="{:+.1%}", none="hang") -> str:
    return none if x is None else fmt.format(x)


def print_risk(con, result: dict) -> None:
    """One table per fabric, the same columns for both: the scenario library measured on the fabric's
    testbed, probability x persistence x lost share, combined, plus job interruptions (goodput)."""
    from rich.table import Table

    for f in result["fabrics"]:
        detail = f.get("risk_detail") or {}
        if not detail:
            continue
        lo, hi = f.get("expected_loss_range") or (f["expected_loss"], f["expected_loss"])
        t = Table(
            title=f"failure and misconfiguration risk on {f['label']} (packet-level testbed of this fabric; "
            "loss = p x d x l, l = 1 - 1/(1+s), combined 1 - prod(1 - p d l))"
        )
        of = next(iter(detail.values()))["slowdown_of"]
        for col in (
            "scenario",
            "ring step quiet / congested",
            f"{of} slowdown s",
            "p",
            "present d",
            "expected loss (range)",
        ):
            t.add_column(col, justify="left" if col == "scenario" else "right", no_wrap=col == "scenario")
        for sid, d in detail.items():
            q, c = d.get("comm_slowdown_quiet"), d.get("comm_slowdown_congested")
            if "comm_slowdown_quiet" in d or "comm_slowdown_congested" in d:
                qc = " / ".join(
                    _pct_or(d.get(k)) if k in d else "-"
                    for k in ("comm_slowdown_quiet", "comm_slowdown_congested")
                )
            else:
                qc = _pct_or(d.get("comm_slowdown"), none="-")
            del q, c
            rng = d.get("expected_loss_range") or [d["expected_loss"], d["expected_loss"]]
            t.add_row(
                sid,
                qc,
                _pct_or(
                    d["slowdown"],
                    none="all (stopped)" if sid in ("job-interruptions", "switch-failures") else "hang",
                ),
                f"{d['probability']:.0%}",
                f"{d.get('persistence', 1.0):.2%}",
                f"{d['expected_loss']:.3%} ({rng[0]:.3%}-{rng[1]:.3%})",
            )
        t.add_row("total", "", "", "", "", f"{f['expected_loss']:.2%} ({lo:.2%}-{hi:.2%})")
        con.print(t)
        g = f.get("goodput") or {}
        if g:
            con.print(
                f"[dim]{f['label']}: {g['interruptions_per_year']:.1f} job interruptions a year x "
                f"{60 * g['hours_per_interruption']:.0f} min = goodput loss {f['goodput_loss']:.3%} of GPU-hours "
                f"(in the total above); fabric-link re-convergence {g['reconvergence_s']:g} s vs NCCL retry budget "
                f"{g['nccl_retry_budget_s']:.0f} s[/dim]"
            )


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
    print_answer(con, result)
    t = Table(title="fabrics side by side")
    t.add_column("")
    for f in result["fabrics"]:
        t.add_column(f["label"], justify="right")

    def row(name, fn):
        t.add_row(name, *[fn(f) for f in result["fabrics"]])

    row("design", lambda f: f.get("design") or f["fabric"])
    row("switches (tiers)", lambda f: f"{f['plan']['switch_count']:,} ({f['plan']['tiers']})")
    row("network capex", lambda f: f"${f['capex_usd']:,.0f}")
    if any(f.get("front_end") for f in result["fabrics"]):
        row(
            "  of which front end",
            lambda f: f"${f['front_end']['front_end_capex_usd']:,.0f}" if f.get("front_end") else "—",
        )
    row("TCO (lifetime)", lambda f: f"${f['tco_usd']:,.0f}" if f.get("tco_usd") is not None else "—")
    row("capex per GPU", lambda f: f"${f['plan']['network_capex_per_gpu_usd']:,.0f}")
    row("power", lambda f: f"{f['power_w'] / 1000:,.1f} kW")
    row("routing / ring-step efficiency", lambda f: f"{f['routing']} / {f['ring_step_efficiency']:.3f}")
    placed = [f.get("placement") or {} for f in result["fabrics"]]
    if any(p.get("kind", "ideal") != "ideal" for p in placed):
        row(
            "placement (ring on ideal)",
            lambda f: (
                f"{f['placement']['kind']} ({f['placement'].get('ring_step_efficiency_ideal', 1.0):.3f})"
            ),
        )
    if any(f.get("pp_send_recv_efficiency") is not None for f in result["fabrics"]):
        row("pipeline sends: efficiency (in leaf)", _placed_pp)
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
    if any(f.get("inference") for f in result["fabrics"]):
        inf = lambda f: f.get("inference") or {}  # noqa: E731
        row(
            "back-end fabric needed", lambda f: "yes" if inf(f).get("needs_backend") else "no (NVLink domain)"
        )
        row("GPUs per instance / batch", lambda f: f"{inf(f)['gpus_per_instance']} / {inf(f)['batch']}")
        row("network per decode step", lambda f: f"{inf(f)['decode_network_s'] * 1e3:.3f} ms")
        row("NVLink per decode step", lambda f: f"{inf(f).get('decode_nvlink_s', 0.0) * 1e3:.3f} ms")
        row(
            "inter-token latency (budget)",
            lambda f: f"{inf(f)['itl_s'] * 1e3:.2f} ms ({inf(f)['itl_budget_s'] * 1e3:g})",
        )
        row("KV transfer per request", lambda f: f"{inf(f)['kv_transfer_s'] * 1e3:.2f} ms")
        row(
            "time to first token (budget)",
            lambda f: f"{inf(f)['ttft_s'] * 1e3:.0f} ms ({inf(f)['ttft_budget_s'] * 1e3:g})",
        )
        row("served tokens / s in budget", lambda f: f"{inf(f)['tokens_per_s']:,.0f}")
        row(
            "cost per 1M served tokens",
            lambda f: (
                f"${inf(f)['cost_per_million_served_tokens_usd']:.3f}"
                if inf(f).get("cost_per_million_served_tokens_usd")
                else "— (misses budget)"
            ),
        )
    if any(f.get("storage") for f in result["fabrics"]):
        sto = lambda f: f.get("storage") or {}  # noqa: E731
        row("storage on the back-end", lambda f: "yes" if sto(f).get("on_backend") else "no (own network)")
        row("checkpoint size", lambda f: f"{sto(f)['checkpoint_bytes'] / 1e12:.2f} TB")
        row(
            "checkpoint write (period)",
            lambda f: f"{sto(f)['burst_s']:.1f} s ({sto(f)['checkpoint_period_s'] / 60:g} min)",
        )
        row("back-end busy with checkpoints", lambda f: f"{sto(f)['backend_busy_share']:.2%}")
        row("data loading (at most)", lambda f: f"{sto(f)['data_loading_bps'] / 1e9:.2f} Gb/s")
    con.print(t)
    if result.get("radix_note"):
        con.print(result["radix_note"])
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


def _placed_pp(f: dict) -> str:
    """The pipeline sends' placed-pattern efficiency and the share of their bytes inside one leaf."""
    pp = (f.get("placed_patterns") or {}).get("pp_send_recv")
    if not pp:
        return "—"
    leaf = pp.get("in_leaf_share")
    return f"{pp['efficiency']:.3f}" + (f" ({leaf:.0%})" if leaf is not None else "")


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def print_answer(con, result: dict) -> None:
    """The decision first: recommendation, verdict, what it hinges on, the deciding numbers."""
    rec = result["recommendation"]
    rate = f" at {rec['nic_rate_gbps']:g}G per GPU" if rec.get("nic_rate_gbps") else ""
    con.print(
        f"[bold green]Answer: {rec['fabric']}{rate}[/bold green] ({rec.get('design', '')}) — verdict "
        f"[bold]{rec.get('verdict', '')}[/bold]"
    )
    if rec.get("summary"):
        con.print(rec["summary"])
    for h in rec.get("hinges_on") or []:
        then = h.get("design_then") or h.get("recommendation_then") or "—"
        out = " (outside its range)" if h.get("outside_range") else ""
        con.print(
            f"  hinges on {h['assumption']}: now {_fmt(h['value_now'])}, flips at {_fmt(h['flips_at'])}{out} → {then}"
        )
    dep = result.get("deployment") or {}
    fab = result["fabrics"]
    nums = "; ".join(
        f"{f['label']}: capex {f['capex_usd'] / 1e6:,.2f} M USD"
        + (f", iteration {f['iteration_time_s']:.3f} s" if f.get("iteration_time_s") else "")
        + f", expected loss {f['expected_loss']:.1%}"
        for f in fab
    )
    con.print(f"  {nums}")
    if dep:
        con.print(
            f"  [dim]storage {dep.get('storage_placement')} (share {dep.get('storage_share') or 0:.2%}), "
            f"tuning {dep.get('tuning')} on every fabric[/dim]"
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
        if s.get("kind") == "categorical":
            t.add_row(
                s["label"],
                str(s["base"]),
                " | ".join(s["range"]),
                f"{s['break_even'] or '—'} (then {s['design_then']}, {s['verdict_then']})",
                "[bold red]yes[/bold red]" if s["flips"] else "no",
            )
            continue
        be = "—" if s["break_even"] is None else f"{s['break_even']:.3g}"
        t.add_row(
            s["label"],
            f"{s['base']:.3g}",
            f"{s['range'][0]:.3g} – {s['range'][1]:.3g}",
            be,
            "[bold red]yes[/bold red]" if s["flips"] else "no",
        )
    con.print(t)
