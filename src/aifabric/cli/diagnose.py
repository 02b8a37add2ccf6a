"""``aifabric diagnose --topology F --counters F... [--configs DIR] [--job F] [--json] [--report F]``
— findings from a running fabric's counters (:mod:`aifabric.diagnose`); exit 0 healthy (no
warning or error), 1 findings, 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose_cmd(
        topology: Path | None = typer.Option(
            None,
            "--topology",
            help="The fabric: an aifabric scenario file, an ibnetdiscover dump or LLDP neighbours JSON.",
        ),
        counters: list[Path] = typer.Option(
            [],
            "--counters",
            help="Counter snapshot(s), repeatable: Prometheus text or PromQL range JSON (node_exporter "
            "infiniband / ethtool, infiniband-exporter, rdma_exporter), SONiC show pfc / queue counters, "
            "perfquery, ethtool -S. Two scrapes of a counter: its increase between them. Left out with "
            "--job: drift only.",
        ),
        configs: Path | None = typer.Option(
            None, "--configs", help="Folder of switch configs: their aifabric audit findings are joined."
        ),
        job: Path | None = typer.Option(
            None, "--job", help="The job's nccl-tests output (text or -J JSON): drift against the model."
        ),
        calibration: Path | None = typer.Option(
            None, "--calibration", help="With --job: the model calibrated by `aifabric calibrate --out`."
        ),
        interval: str | None = typer.Option(
            None,
            "--interval",
            help="How long the counters accumulated (e.g. 30s), when the files do not say.",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (interface.md)."),
        report: Path | None = typer.Option(
            None, "--report", help="Write an HTML report with the topology's hot ports."
        ),
    ) -> None:
        """Find what is wrong with a running fabric from its counters (and how far the job falls short)."""
        from aifabric.cli import parse_unit_flag, run_guarded

        def body() -> int:
            from aifabric.diagnose import diagnose

            t_s = None
            if interval is not None:
                t_s = parse_unit_flag("time", interval, "--interval", "30s", positive=True) / 1e12
            out = diagnose(
                topology, list(counters), configs=configs, job=job, interval_s=t_s, calibration=calibration
            )
            if report is not None:
                from aifabric.diagnose.report import write_report
                from aifabric.errors import InputError

                if out["fabric"] is None:
                    raise InputError(
                        "needs the fabric", field="--report", allowed="--topology and --counters"
                    )

                write_report(report, out, topology)
            if as_json:
                typer.echo(json.dumps(out))
            else:
                _print(out)
            bad = any(f["severity"] in ("error", "warning") for f in out["findings"])
            drifted = out.get("drift") is not None and not out["drift"]["within_band"]
            return 1 if bad or drifted else 0

        run_guarded(body)


def _print(out: dict) -> None:
    fab = out["fabric"]
    t = out["interval_s"]
    if fab is None:
        _print_drift(out.get("drift"))
        return
    typer.echo(
        f"{fab['source']}: {fab['devices']} devices, {fab['links']} links ({fab['technology'] or 'technology from the counters'}); "
        f"counters: {', '.join(out['formats'])}, interval {f'{t:g} s' if t else 'unknown'}"
    )
    shown = [f for f in out["findings"] if f["severity"] != "info"]
    if not shown:
        typer.echo("healthy: no warning or error finding")
    for f in shown:
        ev = ", ".join(f"{k} {v}" for k, v in f["evidence"].items() if v is not None)
        typer.echo(f"{f['severity']:<7} {f['kind']:<24} {f['location']:<22} {ev}")
        typer.echo(f"        check: {f['check']}")
    info = len(out["findings"]) - len(shown)
    if info:
        typer.echo(f"({info} info finding(s) in --json)")
    for n in out["not_checked"]:
        typer.echo(f"not checked: {n}")
    if out["unmatched_ports"]:
        typer.echo(
            f"{len(out['unmatched_ports'])} counter port(s) not in the topology, e.g. {out['unmatched_ports'][0]}"
        )
    _print_drift(out.get("drift"))


def _print_drift(d: dict | None) -> None:
    if d:
        typer.echo(
            f"drift: measured {d['measured']:.1f} {d['unit']}, model {d['model']:.1f} → {d['ratio']:.0%} "
            f"({'within' if d['within_band'] else 'outside'} the model's ±{(1 - d['band'][0]):.0%} band)"
        )
        for p in d["explained"]:
            typer.echo(
                f"  {p['kind']} ({p['library_fault']} on the risk testbed): busbw ×{p['busbw_ratio_alone']:.2f} "
                f"alone, {p['share_of_gap']:.0%} of the gap"
            )
        if d["note"]:
            typer.echo(f"  note: {d['note']}")
