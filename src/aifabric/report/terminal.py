"""Terminal output of ``aifabric compare``: the decision first (recommendation, verdict, what it
hinges on, the deciding numbers), then the side-by-side table, the reasons and the brochure claims;
the risk and sensitivity tables with ``--details`` (rich). Everything fits 80 columns."""

from __future__ import annotations

from aifabric.report.result import step_with_band

DETAILS_HINT = "risk and sensitivity tables: --details; the full report: --report FILE.html"


def _pct_or(x, fmt="{:+.1%}", none="hang") -> str:
    return none if x is None else fmt.format(x)


def console():
    """A rich console on stdout at the terminal's width (``COLUMNS``; 80 without a terminal)."""
    from rich.console import Console

    return Console()


def _ring_cell(d: dict) -> str:
    keys = ("comm_slowdown_quiet", "comm_slowdown_congested")
    if any(k in d for k in keys):
        return " / ".join(_pct_or(d.get(k)) if k in d else "-" for k in keys)
    return _pct_or(d.get("comm_slowdown"), none="-")


def _risk_table(f: dict, detail: dict):
    """One fabric's risk scenarios, largest expected loss first."""
    from rich import box
    from rich.table import Table

    lo, hi = f.get("expected_loss_range") or (f["expected_loss"], f["expected_loss"])
    t = Table(title=f"risk on {f['label']}", box=box.SIMPLE_HEAD, title_justify="left")
    of = next(iter(detail.values()))["slowdown_of"]
    heads = ("scenario", "ring step quiet / congested", f"{of} slowdown", "p", "share d", "loss % (range)")
    for col in heads:
        t.add_column(col, justify="left" if col == "scenario" else "right", no_wrap=col == "scenario")
    for sid, d in sorted(detail.items(), key=lambda kv: -kv[1]["expected_loss"]):
        rng = d.get("expected_loss_range") or [d["expected_loss"], d["expected_loss"]]
        stopped = "all (stopped)" if sid in ("job-interruptions", "switch-failures") else "hang"
        t.add_row(
            sid,
            _ring_cell(d),
            _pct_or(d["slowdown"], none=stopped),
            f"{d['probability']:.0%}",
            f"{d.get('persistence', 1.0):.2%}",
            f"{100 * d['expected_loss']:.3f} ({100 * rng[0]:.3f}–{100 * rng[1]:.3f})",
        )
    t.add_row("total", "", "", "", "", f"{100 * f['expected_loss']:.2f} ({100 * lo:.2f}–{100 * hi:.2f})")
    return t


def print_risk(con, result: dict) -> None:
    """One table per fabric, the same columns for both: the scenario library measured on the fabric's
    testbed, probability x persistence x lost share, combined, plus job interruptions (goodput)."""
    con.print(
        "[dim]expected loss = p × d × l with l = 1 − 1/(1+s) (s: the slowdown), combined "
        "1 − Π(1 − p d l); measured on each fabric's own packet-level testbed[/dim]"
    )
    for f in result["fabrics"]:
        detail = f.get("risk_detail") or {}
        if not detail:
            continue
        con.print(_risk_table(f, detail))
        g = f.get("goodput") or {}
        if g:
            con.print(
                f"[dim]{f['label']}: {g['interruptions_per_year']:.1f} job interruptions a year × "
                f"{60 * g['hours_per_interruption']:.0f} min = goodput loss {f['goodput_loss']:.3%} of "
                f"GPU-hours (in the total above); fabric-link re-convergence {g['reconvergence_s']:g} s vs "
                f"NCCL retry budget {g['nccl_retry_budget_s']:.0f} s[/dim]"
            )


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def deciding_numbers(result: dict) -> list[tuple[str, list[str]]]:
    """The numbers the decision weighs, one row each with a cell per fabric: network capex, the
    workload's time (iteration) or latency, the expected loss from the risk library, and the objective
    the recommendation minimises (its name from ``recommendation.objective``)."""
    fab = result["fabrics"]
    per = ((result.get("evidence") or {}).get("decide") or {}).get("fabrics") or {}
    rows = [("network capex", [f"${f['capex_usd'] / 1e6:,.2f} M" for f in fab])]
    if any(f.get("iteration_time_s") for f in fab):
        rows.append(("iteration time", [step_with_band(f) for f in fab]))
    elif any(f.get("small_message_latency_us") for f in fab):
        rows.append(
            ("small-message latency", [_or_dash(f.get("small_message_latency_us"), "{:.2f} us") for f in fab])
        )
    rows.append(("expected loss (risk)", [f"{f['expected_loss']:.2%}" for f in fab]))
    objective = (result.get("recommendation") or {}).get("objective")
    values = [(per.get(f["fabric"]) or {}).get("objective") for f in fab]
    if objective and any(isinstance(v, (int, float)) for v in values):
        rows.append((objective, [_or_dash(v, "{:.4g}") for v in values]))
    return rows


def _or_dash(v, fmt: str) -> str:
    return fmt.format(v) if isinstance(v, (int, float)) else "—"


def print_answer(con, result: dict) -> None:
    """The decision first, in at most 15 lines at 80 columns: recommendation, verdict, what it hinges
    on (three at most) and the deciding numbers per fabric."""
    from rich import box
    from rich.table import Table

    rec = result["recommendation"]
    rate = f" at {rec['nic_rate_gbps']:g}G per GPU" if rec.get("nic_rate_gbps") else ""
    uet = ", Ultra Ethernet transport" if rec.get("transport") == "uet" else ""
    design = f" ({rec['design']}{uet})" if rec.get("design") else ""
    con.print(f"[bold green]Recommendation: {rec['fabric']}{rate}[/bold green]{design}")
    best = result.get("probability_best") or {}
    share = f" (cheapest in {best[rec['design']]:.0%} of samples)" if rec.get("design") in best else ""
    hinges = rec.get("hinges_on") or []
    con.print(f"Verdict: [bold]{rec.get('verdict', '')}[/bold]{share}" + ("; hinges on:" if hinges else ""))
    for h in hinges[:3]:
        then = h.get("design_then") or h.get("recommendation_then") or "—"
        out = " (outside its range)" if h.get("outside_range") else ""
        con.print(
            f"  {h['assumption']}: {_fmt(h['value_now'])} now, flips at {_fmt(h['flips_at'])}{out} → {then}"
        )
    if len(hinges) > 3:
        con.print(f"  [dim]and {len(hinges) - 3} more (--details)[/dim]")
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), show_edge=False)
    t.add_column("deciding numbers")
    for f in result["fabrics"]:
        t.add_column(f["label"], justify="right")
    for name, cells in deciding_numbers(result):
        t.add_row(name, *cells)
    con.print(t)


def _core_rows(fabrics: list[dict]) -> list[tuple]:
    rows = [
        ("design", lambda f: f.get("design") or f["fabric"]),
        ("switches (tiers)", lambda f: f"{f['plan']['switch_count']:,} ({f['plan']['tiers']})"),
        ("network capex", lambda f: f"${f['capex_usd']:,.0f}"),
    ]
    if any(f.get("transport") == "uet" for f in fabrics):  # said when a design runs a transport of its own
        rows.insert(1, ("transport", lambda f: f.get("transport") or "—"))
    if any(f.get("front_end") for f in fabrics):
        rows.append(
            (
                "  of which front end",
                lambda f: f"${f['front_end']['front_end_capex_usd']:,.0f}" if f.get("front_end") else "—",
            )
        )
    rows += [
        ("TCO (lifetime)", lambda f: f"${f['tco_usd']:,.0f}" if f.get("tco_usd") is not None else "—"),
        ("capex per GPU", lambda f: f"${f['plan']['network_capex_per_gpu_usd']:,.0f}"),
        ("power", lambda f: f"{f['power_w'] / 1000:,.1f} kW"),
        ("routing / ring-step efficiency", lambda f: f"{f['routing']} / {f['ring_step_efficiency']:.3f}"),
    ]
    if any((f.get("placement") or {}).get("kind", "ideal") != "ideal" for f in fabrics):
        rows.append(
            (
                "placement (ring on ideal)",
                lambda f: (
                    f"{f['placement']['kind']} ({f['placement'].get('ring_step_efficiency_ideal', 1.0):.3f})"
                ),
            )
        )
    if any(f.get("pp_send_recv_efficiency") is not None for f in fabrics):
        rows.append(("pipeline sends: efficiency (in leaf)", _placed_pp))
    return rows + [
        (
            "rail permutation FCT p99",
            lambda f: f"{f['permutation_fct_p99_us']:,.0f} us" if f.get("permutation_fct_p99_us") else "—",
        ),
        ("all-reduce busbw, 8 GiB", _busbw_cell),
        (
            "small-message latency",
            lambda f: f"{f['small_message_latency_us']:.2f} us" if f.get("small_message_latency_us") else "—",
        ),
        ("iteration time", step_with_band),
        ("tokens / s", lambda f: f"{f['tokens_per_s']:,.0f}" if f.get("tokens_per_s") else "—"),
        (
            "cost per 1M tokens",
            lambda f: (
                f"${f['training_cost']['cost_per_million_tokens_usd']:.3f}" if f.get("training_cost") else "—"
            ),
        ),
    ]


def _placed_pp(f: dict) -> str:
    """The pipeline sends' placed-pattern efficiency and the share of their bytes inside one leaf."""
    pp = (f.get("placed_patterns") or {}).get("pp_send_recv")
    if not pp:
        return "—"
    leaf = pp.get("in_leaf_share")
    return f"{pp['efficiency']:.3f}" + (f" ({leaf:.0%})" if leaf is not None else "")


def _busbw_cell(f: dict) -> str:
    v = f.get("busbw_gbytes_per_s")
    if v is None and f.get("busbw_gbps") is not None:  # a result written before the unit was in the key
        v = f["busbw_gbps"] / 8
    return "— (one node)" if v is None else f"{v:,.0f} GB/s"


def _inference_rows() -> list[tuple]:
    def inf(f):
        return f.get("inference") or {}

    return [
        ("back-end fabric needed", lambda f: "yes" if inf(f).get("needs_backend") else "no (NVLink domain)"),
        ("GPUs per instance / batch", lambda f: f"{inf(f)['gpus_per_instance']} / {inf(f)['batch']}"),
        ("network per decode step", lambda f: f"{inf(f)['decode_network_s'] * 1e3:.3f} ms"),
        ("NVLink per decode step", lambda f: f"{inf(f).get('decode_nvlink_s', 0.0) * 1e3:.3f} ms"),
        (
            "inter-token latency (budget)",
            lambda f: f"{inf(f)['itl_s'] * 1e3:.2f} ms ({inf(f)['itl_budget_s'] * 1e3:g})",
        ),
        ("KV transfer per request", lambda f: f"{inf(f)['kv_transfer_s'] * 1e3:.2f} ms"),
        (
            "time to first token (budget)",
            lambda f: f"{inf(f)['ttft_s'] * 1e3:.0f} ms ({inf(f)['ttft_budget_s'] * 1e3:g})",
        ),
        ("served tokens / s in budget", lambda f: f"{inf(f)['tokens_per_s']:,.0f}"),
        (
            "cost per 1M served tokens",
            lambda f: (
                f"${inf(f)['cost_per_million_served_tokens_usd']:.3f}"
                if inf(f).get("cost_per_million_served_tokens_usd")
                else "— (misses budget)"
            ),
        ),
    ]


def _storage_rows() -> list[tuple]:
    def sto(f):
        return f.get("storage") or {}

    return [
        ("storage on the back-end", lambda f: "yes" if sto(f).get("on_backend") else "no (own network)"),
        ("checkpoint size", lambda f: f"{sto(f)['checkpoint_bytes'] / 1e12:.2f} TB"),
        (
            "checkpoint write (period)",
            lambda f: f"{sto(f)['burst_s']:.1f} s ({sto(f)['checkpoint_period_s'] / 60:g} min)",
        ),
        ("back-end busy with checkpoints", lambda f: f"{sto(f)['backend_busy_share']:.2%}"),
        ("data loading (at most)", lambda f: f"{sto(f)['data_loading_bps'] / 1e9:.2f} Gb/s"),
    ]


def side_by_side(result: dict):
    """The fabrics side by side: design, cost, power, network measurements, workload numbers."""
    from rich import box
    from rich.table import Table

    fabrics = result["fabrics"]
    t = Table(title="fabrics side by side", box=box.SIMPLE_HEAD, title_justify="left")
    t.add_column("")
    for f in fabrics:
        t.add_column(f["label"], justify="right")
    rows = _core_rows(fabrics)
    if any(f.get("inference") for f in fabrics):
        rows += _inference_rows()
    if any(f.get("storage") for f in fabrics):
        rows += _storage_rows()
    for name, fn in rows:
        t.add_row(name, *[fn(f) for f in fabrics])
    return t


def print_reasons(con, rec: dict, details: bool) -> None:
    """The reasons, numbered; their evidence (name = value) with ``--details``."""
    con.print("[bold]Why[/bold]")
    reasons = [r for r in rec["reasons"] if r["text"] != rec.get("summary")]  # the summary is printed above
    for i, r in enumerate(reasons, 1):
        ev = "; ".join(f"{k} = {v}" for k, v in r["evidence"].items())
        con.print(f" {i}. {r['text']}" + (f"  [dim]({ev})[/dim]" if details and ev else ""))


def print_claims(con, result: dict, details: bool) -> None:
    """The brochure claims with a verdict each; the evidence with ``--details``."""
    from rich import box
    from rich.table import Table

    c = Table(title="brochure claims on this cluster", box=box.SIMPLE_HEAD, title_justify="left")
    c.add_column("claim", ratio=2 if details else 4)
    c.add_column("holds", no_wrap=True)
    if details:
        c.add_column("evidence", ratio=3)
    for cl in result["claims"]:
        holds = {True: "yes", False: "no", None: "not tested"}[cl["holds"]]
        c.add_row(cl["claim"], holds, *([cl["evidence"]] if details else []))
    con.print(c)


def print_comparison(result: dict, details: bool = False, con=None) -> None:
    """``aifabric compare``'s terminal page: the answer first, the tables after; ``details`` adds the
    risk and sensitivity tables and the reasons' evidence."""
    con = con or console()
    inp = result["inputs"]
    model = f" ({result['model']})" if result.get("model") else ""
    con.print(
        f"[bold]aifabric compare[/bold]: {inp['gpus']:,} × {inp['gpu'].upper()}, {inp['workload']}{model}"
    )
    print_answer(con, result)
    rec = result["recommendation"]
    if rec.get("summary"):
        con.print(rec["summary"])
    con.print(
        f"[dim]asked: jitter {inp['jitter_sensitivity']}, expertise {inp['team_expertise']}, budget "
        f"{inp['budget']}, growth {inp['growth']}{_deployment(result)}[/dim]"
    )
    con.print(side_by_side(result))
    if result.get("radix_note"):
        con.print(result["radix_note"])
    print_reasons(con, rec, details)
    if details:
        print_risk(con, result)
        print_sensitivity(con, result)
    print_claims(con, result, details)
    if result.get("report"):
        con.print(f"report: {result['report']}")
    hint = "" if details else f"{DETAILS_HINT}; "
    con.print(
        f"[dim]{hint}{len(result['estimates'])} catalog values are estimates (--report or --json); "
        f"{result['wall_s']:.1f} s[/dim]"
    )


def _deployment(result: dict) -> str:
    dep = result.get("deployment") or {}
    if not dep:
        return ""
    return (
        f"; storage {dep.get('storage_placement')} (share {dep.get('storage_share') or 0:.2%}), "
        f"tuning {dep.get('tuning')} on every fabric"
    )


def _sensitivity_row(s: dict) -> tuple:
    flips = "[bold red]yes[/bold red]" if s["flips"] else "no"
    if s.get("kind") == "categorical":
        then = f"{s['break_even'] or '—'} (then {s['design_then']}, {s['verdict_then']})"
        return s["label"], str(s["base"]), " | ".join(s["range"]), then, flips
    be = "—" if s["break_even"] is None else f"{s['break_even']:.3g}"
    return s["label"], f"{s['base']:.3g}", f"{s['range'][0]:.3g} – {s['range'][1]:.3g}", be, flips


def print_sensitivity(con, result: dict) -> None:
    """The uncertain inputs whose plausible range crosses the break-even, then the rest by name."""
    from rich import box
    from rich.table import Table

    rows = result.get("sensitivity") or []
    if not rows:
        return
    t = Table(
        title="sensitivity: where the recommendation flips (all else at base)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for col in ("input", "base", "plausible range", "break-even", "flips"):
        t.add_column(col, justify="left" if col == "input" else "right", ratio=3 if col == "input" else None)
    for s in sorted(rows, key=lambda r: (not r["flips"], r["break_even"] is None, r["input"])):
        t.add_row(*_sensitivity_row(s))
    con.print(t)
