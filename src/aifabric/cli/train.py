"""``aifabric train SCENARIO.yaml [--fabric ib|roce|both] [--json]`` — the workload, measure and
performance stages only (no risk, no advice): the fastest layout that fits memory on each fabric,
its step time, MFU and where the time goes."""

from __future__ import annotations

from pathlib import Path

import typer

from aifabric.cli._json import dumps


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_cmd(
        scenario: Path | None = typer.Argument(
            None, help="Scenario YAML with advisor: (gpus, gpu) and training: sections (optional)."
        ),
        fabric: str = typer.Option("both", "--fabric", help="ib | roce | both."),
        gpus: int | None = typer.Option(None, "--gpus", help="GPU count (overrides advisor.gpus)."),
        gpu: str | None = typer.Option(None, "--gpu", help="GPU system (overrides advisor.gpu)."),
        model: str | None = typer.Option(None, "--model", help="Model (overrides training.model)."),
        compute_efficiency: float | None = typer.Option(
            None,
            "--compute-efficiency",
            help="Measured sustained GEMM efficiency (fraction of the dense peak).",
        ),
        roce_routing: str | None = typer.Option(
            None,
            "--roce-routing",
            help="ecmp | adaptive-packet | spectrum-x | flowlet | adaptive (old spelling).",
        ),
        ib_routing: str | None = typer.Option(None, "--ib-routing", help="adaptive-packet | static."),
        catalog_file: Path | None = typer.Option(
            None, "--catalog", help="YAML file overriding catalog records."
        ),
        calibration: Path | None = typer.Option(
            None,
            "--calibration",
            help="A file written by `aifabric calibrate` (measured NIC efficiency, latency).",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Step time, MFU and the best layout per fabric for a training job (fast; no risk, no advice)."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.api import train_result
            from aifabric.cli.compare import build_advisor, check_compute_efficiency, load_calibration
            from aifabric.errors import InputError
            from aifabric.hardware.catalog import load_catalog

            if fabric not in ("ib", "infiniband", "roce", "both"):
                raise InputError("unknown fabric", field="--fabric", value=fabric, allowed="ib, roce, both")
            check_compute_efficiency(compute_efficiency)
            asked = build_advisor(
                scenario,
                {
                    "gpus": gpus,
                    "gpu": gpu.lower() if gpu is not None else None,
                    "model": model,
                    "roce_routing": roce_routing,
                    "ib_routing": ib_routing,
                },
            )
            adv, name, training = asked.advisor, asked.name, asked.training
            if adv.workload != "training":
                raise InputError(
                    "train times a training job",
                    field="advisor.workload",
                    value=adv.workload,
                    allowed="training",
                )
            cat = load_catalog(catalog_file)
            cal = load_calibration(calibration)
            out = train_result(
                adv,
                cat,
                training,
                fabric,
                seed=asked.seed,
                compute_efficiency=compute_efficiency,
                scenario_file=str(scenario) if scenario else None,
                calibration=cal,
                assumptions=asked.assumptions,
            )
            out["scenario"] = name
            out["seed"] = asked.seed
            if as_json:
                from aifabric.report.result import json_safe

                typer.echo(dumps(json_safe(out), indent=2, default=float))
            else:
                _print(out)
            return 0

        run_guarded(body)


def _sharp_text(f: dict) -> str:
    s = f.get("sharp")
    if not s:
        return "none" if f["technology"] != "infiniband" else "none (switch without it)"
    return f"{s['generation']}, {'granted' if s['granted'] else s['note']}"


def _print(out: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from aifabric.report.result import step_with_band

    con = Console(width=max(100, Console().width))
    con.print(f"[bold]aifabric train[/bold] — {out['gpus']:,} × {out['gpu'].upper()}, {out['model']}")
    t = Table(title="best layout per fabric (searched where the training: section leaves it open)")
    t.add_column("")
    for f in out["fabrics"]:
        t.add_column(f["label"], justify="right")

    def row(name, fn):
        t.add_row(name, *[fn(f) for f in out["fabrics"]])

    def lay(f):
        la = f["iteration"]["layout"]
        return f"TP{la['tp']} CP{la['cp']} PP{la['pp']} VP{la['vp']} DP{la['dp']} EP{la['ep']} mb{la['micro_batch']}"

    row("layout", lay)
    row("rank order", lambda f: f["iteration"]["layout"].get("order", ""))
    row("step time", step_with_band)
    row("MFU", lambda f: f"{f['mfu']:.1%}")
    row("tokens / s", lambda f: f"{f['tokens_per_s']:,.0f}")
    row("compute", lambda f: f"{f['iteration']['breakdown']['compute_s']:.3f} s")
    row("pipeline bubble", lambda f: f"{f['iteration']['breakdown']['bubble_s']:.3f} s")
    row("straggler spread", lambda f: f"{f['iteration']['breakdown'].get('straggler_s', 0.0):.3f} s")
    for g in ("tp", "cp", "pp", "dp", "ep"):
        row(
            f"{g.upper()} exposed",
            lambda f, g=g: f"{f['iteration']['breakdown']['exposed_s'].get(g, 0.0):.3f} s",
        )
    row(
        "ring-step / permutation efficiency",
        lambda f: f"{f['ring_step_efficiency']:.3f} / {f['permutation_efficiency']:.3f}",
    )
    row("SHARP (in-network all-reduce)", _sharp_text)
    con.print(t)
    for f in out["fabrics"]:
        ru = f["iteration"].get("runners_up") or []
        if ru:
            con.print(
                f"{f['fabric']} runners-up: "
                + "; ".join(
                    f"TP{r['layout']['tp']} CP{r['layout']['cp']} PP{r['layout']['pp']} VP{r['layout']['vp']} "
                    f"DP{r['layout']['dp']} mb{r['layout']['micro_batch']} {r['layout'].get('order', '')} "
                    f"{r['iteration_s']:.3f} s"
                    for r in ru
                )
            )
    con.print(f"[dim]{out['wall_s']:.1f} s[/dim]")
