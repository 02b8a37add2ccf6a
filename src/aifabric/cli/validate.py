"""``aifabric validate SCENARIO.yaml`` — check a scenario file, print one line per problem.
``aifabric validate --published [--json]`` — the training step model against published step times."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate(
        scenario: Path | None = typer.Argument(None, help="Scenario YAML file to check."),
        published: bool = typer.Option(
            False, "--published", help="Print the step-time model against published training runs instead."
        ),
        as_json: bool = typer.Option(False, "--json", help="With --published: one JSON object on stdout."),
        build: bool = typer.Option(
            True,
            "--build/--no-build",
            help="Also build the topology it describes (catches sizes a topology cannot hold).",
        ),
    ) -> None:
        """Check a scenario file: unknown keys, bad units, impossible sizes. Exit 2 on problems."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.errors import InputError
            from aifabric.scenario import load_scenario

            if published:
                return _published(as_json)
            if scenario is None:
                raise InputError("missing", field="SCENARIO", allowed="a scenario YAML file, or --published")
            sc = load_scenario(scenario)
            if sc.training is not None:  # the workload stage's own checks: spec, layout, memory
                from aifabric.hardware.catalog import load_catalog
                from aifabric.scenario import AdvisorSpec
                from aifabric.stages.design import nic_rate_for
                from aifabric.stages.workload import WorkloadInput, workload

                adv = sc.advisor or AdvisorSpec()
                g = load_catalog().get("gpu", adv.gpu)
                gpn = int(g.gpus_per_node or 8)
                workload(
                    WorkloadInput(
                        "training",
                        adv.gpus,
                        gpn,
                        float(g.hbm_gbytes or 80),
                        adv.model,
                        sc.seed,
                        sc.training,
                        adv.gpu,
                        nic_rate_for(g)[0],
                        None,
                        str(scenario),
                    )
                )
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

        run_guarded(body)


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


def _published(as_json: bool) -> int:
    """The validation table of :mod:`aifabric.workload.llm.validation` (sources, tolerance ±10 %)."""
    import json

    from aifabric.workload.llm.validation import format_table, validation_table

    rows = validation_table()
    checked = [r for r in rows if r["role"] != "fit"]
    ok = sum(1 for r in checked if r["within_tolerance"])
    if as_json:
        typer.echo(json.dumps({"cases": rows, "within_tolerance": ok, "checked": len(checked)}, default=str))
    else:
        typer.echo(format_table(rows))
        typer.echo(
            f"\n{ok} of {len(checked)} published cases (not used in the fit) within ±10 % of the step time"
        )
    return 0
