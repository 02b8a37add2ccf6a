"""``aifabric risk`` — the misconfiguration testbed of ``compare`` on its own, every knob exposed."""

from __future__ import annotations

import json

import typer

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
):
    """CLI words → :class:`aifabric.stages.testbed.Testbed` (one-line errors naming the flag)."""
    from aifabric.stages.testbed import Testbed

    if routing not in ("ecmp", "adaptive"):
        raise InputError("not an allowed value", field="--routing", value=routing, allowed="ecmp, adaptive")
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
    )


def register(app: typer.Typer) -> None:
    @app.command("risk")
    def risk_cmd(
        rate: str = typer.Option("400Gbps", "--rate", help="Link (NIC) rate."),
        routing: str = typer.Option("ecmp", "--routing", help="ecmp | adaptive (per packet)."),
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
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Lossless misconfigurations on a packet-level leaf-spine testbed: ring-step slowdown per mistake."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.stages.testbed import measure_testbed

            tb = build_testbed(
                rate, routing, buffer, hop, link_delay, step, incast_senders, incast_size, storm_duty, seeds
            )
            try:
                rm = measure_testbed(tb)
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
                typer.echo(json.dumps(out, indent=2, default=float))
            else:
                _print(out)
            return 0

        run_guarded(body)


def _print(out: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=max(132, Console().width))
    for k, v in out["testbed"].items():
        con.print(f"[dim]{k}:[/dim] {v}")
    t = Table(title="the testbed (mean over seeds; Δ vs tuned; PAUSE frames / ECN marks per run)")
    t.add_column("configuration", no_wrap=True)
    for tr in out["step_us"]:
        t.add_column(f"ring {tr} us", justify="right", no_wrap=True)
        t.add_column("Δ", justify="right", no_wrap=True)
        t.add_column("PAUSE/ECN", justify="right", no_wrap=True)
    t.add_column("incast us", justify="right", no_wrap=True)
    t.add_column("Δ", justify="right", no_wrap=True)
    for cfg in out["step_us"]["quiet"]:
        cells = []
        for tr, steps in out["step_us"].items():
            slow = out["comm_slowdown"][tr].get(cfg)
            c = out["counters"][tr][cfg]
            cells += [
                f"{steps[cfg]:,.1f}",
                "—" if slow is None else f"{slow:+.1%}",
                f"{c['pause_frames']:,} / {c['ecn_marks']:,}",
            ]
        inc = out["storage_slowdown"].get(cfg)
        cells += [f"{out['incast_us'][cfg]:,.1f}", "—" if inc is None else f"{inc:+.1%}"]
        t.add_row(cfg, *cells)
    con.print(t)
    con.print(
        "[dim]ring columns: the synchronous step's slowest flow; incast: the congested mix's slowest incast "
        "flow (the storage transfer itself)[/dim]"
    )
    if out["jitter_sweep"]:
        j = Table(title="pfc-storm: ring-step slowdown vs share of time spine0 is paused (quiet traffic)")
        j.add_column("paused", justify="right")
        j.add_column("ring step slowdown", justify="right")
        for r in out["jitter_sweep"]:
            j.add_row(f"{r['duty']:.0%}", f"{r['comm_slowdown']:+.1%}")
        con.print(j)
    con.print(
        f"[dim]{out['runs']} packet runs, {out['wall_s']:.1f} s of simulation; drops across all runs: "
        f"{sum(c['drops'] for per in out['counters'].values() for c in per.values())}[/dim]"
    )
