"""``aifabric verify-build PLAN --ibnetdiscover F | --lldp F [--json]``: the cabled fabric
against the plan; exit 0 match, 1 differences, 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from aifabric.errors import InputError


def register(app: typer.Typer) -> None:
    @app.command("verify-build")
    def verify_build_cmd(
        plan: Path = typer.Argument(
            ..., help="A plan --build folder, a plan --json file, or a reference ibnetdiscover dump."
        ),
        ibnetdiscover: Path | None = typer.Option(
            None, "--ibnetdiscover", help="ibnetdiscover output of the cabled fabric."
        ),
        lldp: Path | None = typer.Option(
            None,
            "--lldp",
            help="LLDP JSON: an object of device name → that device's 'lldpctl -f json' output.",
        ),
        mapping: Path | None = typer.Option(
            None,
            "--mapping",
            help="CSV with columns plan,found mapping your names (hostname, NodeDescription or GUID) to the plan's.",
        ),
        no_cost: bool = typer.Option(False, "--no-cost", help="Skip the flow-model cost of each difference."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """Check the cabled fabric against the plan: every missing, extra, moved, swapped or slow link."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.build.verify import verify_build

            if (ibnetdiscover is None) == (lldp is None):
                raise InputError(
                    "give exactly one found fabric", field="--ibnetdiscover/--lldp", allowed="one of the two"
                )
            source = "ibnetdiscover" if ibnetdiscover is not None else "lldp"
            result = verify_build(plan, ibnetdiscover or lldp, source, mapping, cost=not no_cost)
            if as_json:
                typer.echo(json.dumps(result, indent=2))
            else:
                _print(result)
            return 0 if result["match"] else 1

        run_guarded(body)


def _print(result: dict) -> None:
    s = result["summary"]
    typer.echo(
        f"verify-build: {result['found']} against {result['plan']} ({result['technology']}): "
        f"{s['planned_links']:,} planned links, {s['found_links']:,} found, {s['differences']} difference(s)"
    )
    for d in result["differences"]:
        cost = ""
        if "rail_step_slowdown" in d:
            cost = f" [rail traffic to spine {d['rail_traffic_moved']:+.1%}"
            if d.get("rail_traffic_unroutable"):
                cost += f", cut off {d['rail_traffic_unroutable']:.1%}"
            if d.get("rail_step_slowdown"):
                cost += f", ring step ×{d['rail_step_slowdown']:.2f}"
            cost += "]"
        typer.echo(f"- {d['kind']}: {d['a']} {d['b']}".rstrip())
        typer.echo(f"    expected {d['expected']}; found {d['found']}{cost}")
        typer.echo(f"    fix: {d['fix']}")
    rt = s.get("rail_traffic")
    if isinstance(rt, dict) and result["differences"]:
        a = rt["all_differences"]
        typer.echo(
            f"all differences together: {a['rail_traffic_moved']:.1%} of rail-local traffic moved above the leaf, "
            f"{a['rail_traffic_unroutable']:.1%} cut off"
            + (f", ring step ×{a['rail_step_slowdown']:.2f}" if a.get("rail_step_slowdown") else "")
        )
    if result["match"]:
        typer.echo("the cabled fabric matches the plan")
