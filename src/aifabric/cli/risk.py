"""``aifabric risk`` — the failure and misconfiguration testbed of ``compare`` on its own, every knob
exposed; ``--list`` prints the scenario library."""

from __future__ import annotations

import typer

from aifabric.cli._json import dumps
from aifabric.errors import InputError

# what the testbed can mean and run in reasonable time (base units: bit/s, bytes, ps)
LIMITS = {
    "--rate": (10**9, 4 * 10**12, "1Gbps..4Tbps"),
    "--buffer": (10**6, 2**32, "1MB..4GiB (the lossless testbed needs room for PFC headroom)"),
    "--hop": (1, 10**8, "up to 100us"),
    "--link-delay": (1, 10**9, "up to 1ms"),
    "--step": (1, 2**28, "1B..256MiB"),
    "--incast-size": (1, 2**28, "1B..256MiB"),
}


def _parse(kind: str, text: str, flag: str, example: str) -> int:
    from aifabric.cli import parse_unit_flag

    v = int(parse_unit_flag(kind, text, flag, example, positive=True))
    lo, hi, allowed = LIMITS[flag]
    if not lo <= v <= hi:
        raise InputError("out of range", field=flag, value=text, allowed=allowed)
    return v


def build_testbed(
    rate: str,
    routing: str,
    buffer: str,
    hop: str,
    link_delay: str,
    step: str,
    incast_senders: int,
    incast_size: str,
    storm_duty: float,
    seeds: str,
    technology: str = "roce",
    baseline: str | None = None,
):
    """CLI words → :class:`aifabric.stages.risk.testbed.Testbed` (one-line errors naming the flag)."""
    from aifabric.stages.risk.testbed import BASELINES, Testbed

    if technology not in BASELINES:
        raise InputError(
            "not an allowed value", field="--technology", value=technology, allowed="roce, infiniband"
        )
    allowed_routing = ("ecmp", "adaptive") if technology == "roce" else ("static", "adaptive")
    if routing == "ecmp" and technology == "infiniband":
        routing = "static"
    if routing == "adaptive-packet":  # the routing mode's name; the testbed's adaptive is per packet
        routing = "adaptive"
    if routing not in allowed_routing:
        raise InputError(
            "not an allowed value", field="--routing", value=routing, allowed=", ".join(allowed_routing)
        )
    cc = baseline or BASELINES[technology][0]
    if cc not in BASELINES[technology]:
        raise InputError(
            "not an allowed value", field="--baseline", value=cc, allowed=", ".join(BASELINES[technology])
        )
    base = Testbed()
    max_senders = (base.leaves - 1) * base.hosts_per_leaf
    if not 1 <= incast_senders <= max_senders:
        raise InputError(
            "out of range",
            field="--incast-senders",
            value=incast_senders,
            allowed=f"1..{max_senders} (hosts on the other leaves)",
        )
    if not 0 < storm_duty <= 1:
        raise InputError("must be in (0, 1]", field="--storm-duty", value=storm_duty, allowed="e.g. 0.02")
    try:
        seed_list = tuple(int(s) for s in seeds.split(",") if s.strip())
    except ValueError:
        seed_list = ()
    if not seed_list or any(s < 0 for s in seed_list):
        raise InputError(
            "expected comma-separated non-negative integers", field="--seeds", value=seeds, allowed="e.g. 1,2"
        )
    return Testbed(
        link_rate_bps=_parse("rate", rate, "--rate", "e.g. 400Gbps"),
        switch_latency_ns=_parse("time", hop, "--hop", "e.g. 600ns") / 1000,
        link_delay_ns=_parse("time", link_delay, "--link-delay", "e.g. 200ns") / 1000,
        buffer_bytes=_parse("size", buffer, "--buffer", "e.g. 128MB"),
        routing=routing,
        step_bytes=_parse("size", step, "--step", "e.g. 4MiB"),
        incast_senders=incast_senders,
        incast_bytes=_parse("size", incast_size, "--incast-size", "e.g. 32MiB"),
        storm_pause_us=storm_duty * base.storm_period_us,
        seeds=seed_list,
        technology=technology,
        baseline=cc,
    )


def register(app: typer.Typer) -> None:
    @app.command("risk")
    def risk_cmd(
        rate: str = typer.Option("400Gbps", "--rate", help="Link (NIC) rate."),
        routing: str = typer.Option(
            "ecmp", "--routing", help="ecmp | adaptive-packet (or adaptive); static on infiniband."
        ),
        buffer: str = typer.Option("128MB", "--buffer", help="Switch shared buffer (Spectrum-4: 128 MB)."),
        hop: str = typer.Option("600ns", "--hop", help="Switch hop latency."),
        link_delay: str = typer.Option(
            "202ns", "--link-delay", help="Propagation delay per link (40 m ≈ 202 ns)."
        ),
        step: str = typer.Option("4MiB", "--step", help="Bytes per host in the ring step."),
        incast_senders: int = typer.Option(
            6, "--incast-senders", help="Senders of the congested mix's incast."
        ),
        incast_size: str = typer.Option("32MiB", "--incast-size", help="Bytes per incast sender."),
        storm_duty: float = typer.Option(
            0.02, "--storm-duty", help="Share of time spine0 is paused (pfc-storm)."
        ),
        seeds: str = typer.Option("1,2", "--seeds", help="Hash seeds to average over, comma-separated."),
        technology: str = typer.Option("roce", "--technology", help="roce | infiniband."),
        baseline: str = typer.Option(
            None,
            "--baseline",
            help="The fabric as intended: roce hpcc | dcqcn | pfc-only; infiniband none | ib-cc.",
        ),
        list_: bool = typer.Option(False, "--list", help="List the scenario library and exit."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Failures and misconfigurations on a packet-level leaf-spine testbed: ring-step slowdown per scenario."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.stages.risk.testbed import measure_testbed

            if list_:
                return _list(as_json)
            tb = build_testbed(
                rate,
                routing,
                buffer,
                hop,
                link_delay,
                step,
                incast_senders,
                incast_size,
                storm_duty,
                seeds,
                technology,
                baseline,
            )
            try:
                rm = measure_testbed(tb, technology == "roce")
            except RuntimeError as exc:
                if "lossless fabric dropped" not in str(exc):
                    raise
                raise InputError(
                    "the switch buffer cannot hold the PFC thresholds plus headroom of the testbed",
                    field="--buffer",
                    value=buffer,
                    allowed="a larger buffer, e.g. 32MB",
                ) from None
            out = rm.to_dict()
            if as_json:
                typer.echo(dumps(out, indent=2, default=float))
            else:
                _print(out)
            return 0

        run_guarded(body)


def library_rows() -> list[dict]:
    """The scenario library with each scenario's rate and its basis (``aifabric risk --list``)."""
    from aifabric.stages.risk.assess import MISCONFIG_PROBABILITY_BASIS, RATES
    from aifabric.stages.risk.testbed import LIBRARY

    return [
        {
            "scenario": sid,
            "fabrics": list(t.fabrics),
            "kind": t.kind,
            "breaks": t.breaks,
            "model": t.model,
            "traffic": list(t.traffic),
            "rate": RATES[sid].basis if sid in RATES else MISCONFIG_PROBABILITY_BASIS,
            "files": [f"scenarios/risk/{f}-{sid}.yaml" for f in t.fabrics],
        }
        for sid, t in LIBRARY.items()
    ]


def _list(as_json: bool) -> int:
    rows = library_rows()
    if as_json:
        typer.echo(dumps({"scenarios": rows}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title="the risk library (aifabric simulate scenarios/risk/<fabric>-<scenario>.yaml)")
    for col in ("scenario", "fabrics", "what it breaks", "how it is modelled", "rate and source"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(r["scenario"], ", ".join(r["fabrics"]), r["breaks"], r["model"], r["rate"])
    Console(width=max(160, Console().width)).print(t)
    return 0


def _print(out: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=max(132, Console().width))
    for k, v in out["testbed"].items():
        con.print(f"[dim]{k}:[/dim] {v}")
    t = Table(title="the testbed (mean over seeds; Δ vs the baseline; PAUSE frames / ECN marks per run)")
    t.add_column("scenario", no_wrap=True)
    for tr in out["step_us"]:
        t.add_column(f"ring {tr} us", justify="right", no_wrap=True)
        t.add_column("Δ", justify="right", no_wrap=True)
        t.add_column("PAUSE/ECN", justify="right", no_wrap=True)
    t.add_column("incast us", justify="right", no_wrap=True)
    cfgs = list(dict.fromkeys(c for steps in out["step_us"].values() for c in steps))
    for cfg in cfgs:
        cells = []
        for tr, steps in out["step_us"].items():
            if cfg not in steps:
                cells += ["-", "-", "-"]
                continue
            slow = out["comm_slowdown"][tr].get(cfg)
            c = out["counters"][tr].get(cfg, {"pause_frames": 0, "ecn_marks": 0})
            cells += [
                "hang" if steps[cfg] is None else f"{steps[cfg]:,.1f}",
                "—" if cfg == "baseline" else ("hang" if slow is None else f"{slow:+.1%}"),
                f"{c['pause_frames']:,} / {c['ecn_marks']:,}",
            ]
        inc = out["incast_us"].get(cfg)
        cells += ["-" if inc is None or inc != inc else f"{inc:,.1f}"]
        t.add_row(cfg, *cells)
    con.print(t)
    con.print(
        "[dim]ring columns: the synchronous step's slowest flow; incast: the congested mix's slowest incast "
        "flow (the storage transfer itself)[/dim]"
    )
    if out["jitter_sweep"]:
        j = Table(title="jitter: PAUSE bursts on a share of the ring's NICs (quiet traffic, first seed)")
        for col in ("burst", "share of NICs", "paused", "ring step slowdown"):
            j.add_column(col, justify="right")
        for r in out["jitter_sweep"]:
            s = r["comm_slowdown"]
            j.add_row(
                f"{r['burst_us']:g} us",
                f"{r['share']:.0%}",
                f"{r['duty']:.0%}",
                "hang" if s is None else f"{s:+.1%}",
            )
        con.print(j)
    if out.get("not_applicable"):
        con.print(
            "[dim]not measured: "
            + "; ".join(f"{k}: {v}" for k, v in out["not_applicable"].items())
            + "[/dim]"
        )
    con.print(
        f"[dim]{out['runs']} packet runs, {out['wall_s']:.1f} s of simulation; drops across all runs: "
        f"{sum(c['drops'] for per in out['counters'].values() for c in per.values())}[/dim]"
    )
