"""``aifabric audit CONFIG...`` and ``aifabric roce-config`` — thin wrappers over :mod:`aifabric.audit`."""

from __future__ import annotations

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
            help="Switch configs: SONiC config_db (nested, flat TABLE|key, or old [TABLE|key] "
            "syntax), NVUE (nv config show -o yaml, nv set lists), Arista EOS running-config; host "
            "files (mlnx_qos, mlxconfig, sysfs ecn, NCCL env); ibnetdiscover, iblinkinfo, opensm.conf. "
            "a+b+c or a directory = one switch or host.",
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
            help="RoCE DSCP the NICs send. Not given: nothing is assumed; the RoCE classes are "
            "inferred from the switch configs and NIC/switch disagreement is not judged.",
        ),
        cnp_dscp: int | None = typer.Option(
            None, "--cnp-dscp", min=0, max=63, help="CNP DSCP the NICs send (checks CNP's queue is strict)."
        ),
        intent: str = typer.Option(
            "auto",
            "--intent",
            help="Design intent for ECN: auto (the role's majority decides) | dcqcn (ECN + PFC) | "
            "pfc-only (ECN off is information).",
        ),
        roles: str | None = typer.Option(
            None, "--roles", help="Roles file: 'PATTERN ROLE' lines (glob on the switch name)."
        ),
        lookup: list[str] = typer.Option(
            [],
            "--pg-lookup",
            help="pg_profile_lookup.ini for the switches (bound by hwsku in the file name, or to the only switch).",
        ),
        fmt: str = typer.Option("table", "--format", help="Output: table | json | sarif | markdown."),
        as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help="Table: evidence and fix under each finding."
        ),
        width: int | None = typer.Option(
            None,
            "--width",
            min=40,
            max=1000,
            help="Table width in columns (default: the terminal's, else 80).",
        ),
    ) -> None:
        """Lossless-RoCE findings for switch and host configs. Exit 0 clean, 1 error findings or deadlock, 2 bad input."""
        from aifabric.audit import INTENTS, audit_files
        from aifabric.audit.output import FORMATS, render

        fmt = "json" if as_json else fmt
        if fmt not in FORMATS:
            _fail_lines([f"--format: unknown format (got {fmt!r}); allowed: {', '.join(FORMATS)}"])
        if intent not in INTENTS:
            _fail_lines([f"--intent: unknown intent (got {intent!r}); allowed: {', '.join(INTENTS)}"])
        if routing not in ("ecmp", "up-down"):
            _fail_lines([f"--routing: unknown routing (got {routing!r}); allowed: ecmp, up-down"])
        report = audit_files(
            configs,
            topology=topology,
            nic_dscp=nic_dscp,
            failed_link=fail_link,
            routing=routing,
            lookups=lookup,
            cnp_dscp=cnp_dscp,
            intent=intent,
            roles_file=roles,
        )
        if report.errors and not report.devices and not report.extra.get("hosts") and report.deadlock is None:
            _fail_lines([str(e) for e in report.errors])  # nothing could be audited: only the reasons
        if width is None:
            import shutil

            width = shutil.get_terminal_size((80, 24)).columns
        sys.stdout.write(render(report, fmt, width=width, verbose=verbose))
        for e in report.errors:
            typer.echo(f"error: {e}", err=True)
        raise typer.Exit(report.exit_code())

    @app.command("roce-config")
    def roce_config_cmd(
        switch: str = typer.Option("leaf-1", "--switch", help="Switch hostname."),
        speed: str = typer.Option("400G", "--speed", help="Port speed, e.g. 100G, 400G, 800G."),
        cable: str = typer.Option("5m", "--cable", help="Cable length, e.g. 5m, 40m, 300m."),
        os_name: str = typer.Option(
            "sonic",
            "--os",
            help="sonic (config_db JSON) | nvue (nv set lines) | eos (running-config) | host (NIC commands).",
        ),
        ports: str = typer.Option(
            "32", "--ports", help="Port count (or, for sonic, a list Ethernet0,Ethernet8,...)."
        ),
        nic_dscp: int = typer.Option(26, "--nic-dscp", help="RoCE DSCP of the NICs."),
        cnp_dscp: int = typer.Option(48, "--cnp-dscp", help="CNP DSCP of the NICs."),
        priority: int = typer.Option(3, "--priority", help="Lossless priority (PFC / TC / PG / queue)."),
        asic: str = typer.Option(
            "spectrum-4", "--asic", help="sonic: ASIC constants for the headroom formula."
        ),
        mtu: int = typer.Option(9100, "--mtu", help="Port MTU in bytes (NVUE at most 9216, EOS 9214)."),
        ecn: str = typer.Option(
            "nvidia", "--ecn", help="ECN preset: nvidia (150KB/1.5MB/100%) | sonic (1MiB/2MiB/5%)."
        ),
        buffer: str = typer.Option("128MiB", "--buffer", help="sonic: switch shared buffer, e.g. 128MiB."),
        interface: str = typer.Option("eth0", "--interface", help="host: the RoCE netdev, e.g. eth0."),
    ) -> None:
        """Print a lossless-RoCE config in the SONiC, NVUE or EOS dialect, or the host commands; `aifabric audit` finds nothing wrong in it."""
        from aifabric.audit.generate import render
        from aifabric.errors import InputError

        kw = dict(
            ports=ports, nic_dscp=nic_dscp, cnp_dscp=cnp_dscp, lossless_priority=priority, mtu=mtu, ecn=ecn
        )
        if os_name == "sonic":
            kw.update(asic=asic, buffer=buffer)
        if os_name == "host":
            kw["interface"] = interface
        try:
            text = render(os_name, switch, speed, cable, **kw)
        except InputError as exc:
            _fail_lines([str(exc)])
        sys.stdout.write(text)
