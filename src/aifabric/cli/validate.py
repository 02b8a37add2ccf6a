"""``aifabric validate SCENARIO.yaml`` — check a scenario file, print one line per problem."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate(
        scenario: Path = typer.Argument(..., help="Scenario YAML file to check."),
        build: bool = typer.Option(
            True,
            "--build/--no-build",
            help="Also build the topology it describes (catches sizes a topology cannot hold).",
        ),
    ) -> None:
        """Check a scenario file: unknown keys, bad units, impossible sizes. Exit 2 on problems."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.scenario import load_scenario

            sc = load_scenario(scenario)
            if build and sc.topology is not None:
                from aifabric.errors import InputError
                from aifabric.topology import from_spec

                try:
                    topo = from_spec(sc.topology)
                except InputError as exc:
                    raise exc.with_file(str(scenario)) from None
                if sc.fabric.pfc_overrides or sc.fabric.pause_storms:  # switch / node names exist
                    from aifabric.sim.misconfig import check

                    try:
                        check(sc.fabric, topo, sc.sim.until_ps)
                    except InputError as exc:
                        raise exc.with_file(str(scenario)) from None
                if sc.fabric.failures:  # failed links exist (the same resolution the engine uses)
                    from aifabric.sim.engine import _failure_events

                    try:
                        _failure_events(sc.fabric, topo)
                    except InputError as exc:
                        raise exc.with_file(str(scenario)) from None
                hosts = topo.num_hosts
                wl = sc.workload
                if wl is not None:
                    _check_workload_fits(wl, hosts, str(scenario))
                typer.echo(
                    f"{scenario}: ok — {sc.name}: {hosts} hosts, {topo.num_switches} switches, "
                    f"{topo.num_links} links, {sc.fabric.technology}"
                )
            else:
                typer.echo(f"{scenario}: ok — {sc.name}")
            return 0

        run_guarded(body, every_problem=True)


def _check_workload_fits(wl, hosts: int, file: str) -> None:
    from aifabric.errors import InputError

    if wl.senders is not None and wl.senders > hosts - 1:
        raise InputError(
            f"more senders than the topology's other hosts ({hosts - 1})",
            file=file,
            field="workload.senders",
            value=wl.senders,
            allowed=f"1..{hosts - 1}",
        )
    if wl.receiver is not None and wl.receiver >= hosts:
        raise InputError(
            "receiver is not a host of the topology",
            file=file,
            field="workload.receiver",
            value=wl.receiver,
            allowed=f"0..{hosts - 1}",
        )
    if wl.hosts is not None and wl.hosts > hosts:
        raise InputError(
            "more hosts than the topology has",
            file=file,
            field="workload.hosts",
            value=wl.hosts,
            allowed=f"2..{hosts}",
        )
    if wl.path is not None and not Path(wl.path).is_file():
        raise InputError("flow file not found", file=file, field="workload.path", value=wl.path)
