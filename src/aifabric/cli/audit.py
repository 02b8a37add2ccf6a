"""``aifabric audit CONFIG...`` and ``aifabric roce-config`` — thin wrappers over :mod:`aifabric.audit`."""

from __future__ import annotations

import json
import sys

import typer


def _fail_lines(lines: list[str], code: int = 2) -> None:
    for line in lines:
        typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    @app.command("audit")
    def audit(
        configs: list[str] = typer.Argument(
            ...,
            help="SONiC config_db files (nested, flat TABLE|key, or old "
            "[TABLE|key] syntax). a.json+b.json+lookup.ini or a directory = one switch.",
        ),
        topology: str | None = typer.Option(
            None,
            "--topology",
            help="Topology for the PFC deadlock check: ns-3 "
            "topology.txt, ibnetdiscover output, or ring:N / fat-tree:K / "
            "leaf-spine:L:S:H.",
        ),
        routing: str = typer.Option(
            "ecmp", "--routing", help="Routes for the deadlock check: ecmp | up-down."
        ),
        fail_link: list[str] = typer.Option(
            [], "--fail-link", help="Fail this link first (A-B); repeatable."
        ),
        nic_dscp: int | None = typer.Option(
            None,
            "--nic-dscp",
            min=0,
            max=63,
            help="RoCE DSCP the NICs send (default: assume the NVIDIA default 26 "
            "and report a mismatch as a warning).",
        ),
        cnp_dscp: int = typer.Option(48, "--cnp-dscp", min=0, max=63, help="CNP DSCP the NICs send."),
        lookup: list[str] = typer.Option(
            [],
            "--pg-lookup",
            help="pg_profile_lookup.ini for the switches "
            "(bound by hwsku in the file name, or to the only switch).",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Lossless-RoCE findings for SONiC switch configs. Exit 0 clean, 1 error findings or deadlock, 2 bad input."""
        from aifabric.audit import audit_files

        report = audit_files(
            configs,
            topology=topology,
            nic_dscp=nic_dscp,
            failed_link=fail_link,
            routing=routing,
            lookups=lookup,
            cnp_dscp=cnp_dscp,
        )
        if as_json:
            sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
        else:
            _print_table(report)
        for e in report.errors:
            typer.echo(f"error: {e}", err=True)
        raise typer.Exit(report.exit_code())

    @app.command("roce-config")
    def roce_config_cmd(
        switch: str = typer.Option(..., "--switch", help="Switch hostname (DEVICE_METADATA hostname)."),
        speed: str = typer.Option("400G", "--speed", help="Port speed, e.g. 100G, 400G, 800G."),
        cable: str = typer.Option("5m", "--cable", help="Cable length, e.g. 5m, 40m, 300m."),
        os_name: str = typer.Option("sonic", "--os", help="Switch OS: sonic."),
        ports: str = typer.Option("32", "--ports", help="Port count or a list Ethernet0,Ethernet8,..."),
        nic_dscp: int = typer.Option(26, "--nic-dscp", help="RoCE DSCP of the NICs."),
        cnp_dscp: int = typer.Option(48, "--cnp-dscp", help="CNP DSCP of the NICs."),
        priority: int = typer.Option(3, "--priority", help="Lossless priority (PFC / TC / PG / queue)."),
        asic: str = typer.Option("spectrum-4", "--asic", help="ASIC constants for the headroom formula."),
        mtu: int = typer.Option(9100, "--mtu", help="Port MTU in bytes."),
        ecn: str = typer.Option(
            "nvidia", "--ecn", help="ECN preset: nvidia (150KB/1.5MB/100%) | sonic (1MiB/2MiB/5%)."
        ),
        buffer: str = typer.Option("128MiB", "--buffer", help="Switch shared buffer, e.g. 128MiB."),
    ) -> None:
        """Print a config_db.json fragment with a correct lossless-RoCE profile (it passes `aifabric audit`)."""
        from aifabric.audit.generate import roce_config
        from aifabric.errors import InputError

        try:
            cfg = roce_config(
                switch,
                speed,
                cable,
                os=os_name,
                ports=ports,
                nic_dscp=nic_dscp,
                cnp_dscp=cnp_dscp,
                lossless_priority=priority,
                asic=asic,
                mtu=mtu,
                ecn=ecn,
                buffer=buffer,
            )
        except InputError as exc:
            _fail_lines([str(exc)])
        sys.stdout.write(json.dumps(cfg, indent=4) + "\n")


def _print_table(report) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    counts = report.counts()
    if report.findings:
        t = Table(
            title=f"aifabric audit: {len(report.devices)} device(s) — {counts['error']} error, "
            f"{counts['warning']} warning, {counts['info']} info",
            show_lines=False,
        )
        for col in ("severity", "rule", "device", "object", "message"):
            t.add_column(col, overflow="fold")
        style = {"error": "bold red", "warning": "yellow", "info": "dim"}
        for f in report.findings:
            obj = f.object if len(f.object) <= 60 else f.object[:57] + "..."
            t.add_row(f"[{style[f.severity]}]{f.severity}[/]", f.rule, f.device, obj, f.message)
        console.print(t)
    else:
        console.print(f"aifabric audit: {len(report.devices)} device(s), no findings")
    if report.deadlock is not None:
        d = report.deadlock
        console.print(
            f"deadlock check ({d['routing']}, failed: {', '.join(d['failed_links']) or 'none'}): "
            f"{len(d['cycles'])} cycle(s)"
        )
