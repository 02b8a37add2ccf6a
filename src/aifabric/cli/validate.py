"""``aifabric validate SCENARIO.yaml`` — check a scenario file, print one line per problem.

A scenario with a topology and a workload is checked exactly as ``aifabric simulate`` checks it
before running (:func:`aifabric.cli._preflight.prepare`: the topology built, fabric references
resolved, flow files read, memory estimated); a scenario without them (an ``advisor:`` file for
``compare``) is checked as a file, and its topology built when it has one.
"""

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
            help="Also build the topology and workload it describes (the checks simulate runs).",
        ),
        mode: str | None = typer.Option(None, "--mode", help="packet or flow: check for this mode."),
    ) -> None:
        """Check a scenario file: unknown keys, bad units, impossible sizes, flow files. Exit 2 on problems."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.scenario import load_scenario

            if not build:
                sc = load_scenario(scenario)
                typer.echo(f"{scenario}: ok — {sc.name}")
                return 0
            from aifabric.cli._preflight import in_file, prepare
            from aifabric.errors import InputError

            sc = load_scenario(scenario)
            if sc.topology is not None and sc.workload is not None:
                prep = prepare(scenario, mode)
                topo = prep.topology
                flows = f", {prep.num_flows:,} flows" if prep.flows is not None else ""
                typer.echo(
                    f"{scenario}: ok — {sc.name}: {topo.num_hosts} hosts, {topo.num_switches} switches, "
                    f"{topo.num_links} links, {sc.fabric.technology}{flows} ({prep.mode} mode)"
                )
            elif sc.topology is not None:
                from aifabric.cli._preflight import checked_topology

                try:
                    topo = checked_topology(sc, mode or sc.sim.mode)
                except InputError as exc:
                    raise in_file(exc, str(scenario)) from None
                typer.echo(
                    f"{scenario}: ok — {sc.name}: {topo.num_hosts} hosts, {topo.num_switches} switches, "
                    f"{topo.num_links} links, {sc.fabric.technology}"
                )
            else:
                typer.echo(f"{scenario}: ok — {sc.name}")
            return 0

        run_guarded(body, every_problem=True)
