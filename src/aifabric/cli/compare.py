"""``aifabric compare [SCENARIO.yaml] [flags] [--json] [--report FILE.html]`` — the main job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import typer

from aifabric.errors import InputError

CHOICES = {
    "gpu": ("h100", "h200", "b200", "h800", "b300", "gb200-nvl72", "gb300-nvl72"),
    "workload": ("training", "inference", "storage", "trading"),
    "jitter_sensitivity": ("low", "medium", "high"),
    "team_expertise": ("none", "some", "expert"),
    "budget": ("low", "medium", "high"),
    "growth": ("none", "2x", "10x"),
    "roce_routing": ("ecmp", "adaptive"),
}


class Asked(NamedTuple):
    """What a compare/train command line asks: the advisor's inputs, the scenario's name and its
    ``training:`` and ``risk:`` sections (the file read once)."""

    advisor: Any
    name: str
    training: dict | None = None
    risk: Any = None


def build_advisor(scenario_path: Path | None, flags: dict) -> Asked:
    """Advisor inputs: built-in defaults < the scenario file's ``advisor:`` < command-line flags."""
    from aifabric.scenario import AdvisorSpec, load_scenario

    base = {}
    name = "built-in default (1,024 H100, Llama-3 70B training)"
    training = risk = None
    if scenario_path is not None:
        sc = load_scenario(scenario_path)
        name, training, risk = sc.name, sc.training, sc.risk
        if sc.advisor is not None:
            base = sc.advisor.model_dump(exclude_unset=True)
    for key, value in flags.items():
        if value is None:
            continue
        if key in CHOICES and value not in CHOICES[key]:
            raise InputError(
                "not an allowed value",
                field=f"--{key.replace('_', '-')}",
                value=value,
                allowed=", ".join(CHOICES[key]),
            )
        base[key] = value
    if base.get("gpus") is not None and base["gpus"] < 1:
        raise InputError("must be ≥ 1", field="--gpus", value=base["gpus"], allowed="a positive integer")
    if base.get("model") and base.get("workload", "training") != "training":
        raise InputError(
            "--model applies to --workload training only",
            field="--model",
            value=base["model"],
            allowed="omit --model, or use --workload training",
        )
    return Asked(AdvisorSpec(**base), name, training, risk)


def check_compute_efficiency(value: float | None) -> None:
    """``--compute-efficiency``: a fraction in (0, 1], or one line naming the flag."""
    if value is not None and not 0 < value <= 1:
        raise InputError("must be in (0, 1]", field="--compute-efficiency", value=value, allowed="e.g. 0.6")


def load_calibration(path: Path | None):
    """``--calibration FILE`` loaded (its warnings once on stderr), or None."""
    if path is None:
        return None
    from aifabric.calibrate import load

    cal = load(path)
    for w in dict.fromkeys(cal.warnings):
        typer.echo(f"warning: {w}", err=True)
    return cal


def _budget(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        v = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise InputError(
            "not a number", field="--network-budget", value=text, allowed="USD, e.g. 5e6"
        ) from None
    if not v > 0 or v == float("inf"):
        raise InputError(
            "must be a positive, finite amount", field="--network-budget", value=text, allowed="USD, e.g. 5e6"
        )
    return v


def register(app: typer.Typer) -> None:
    @app.command("compare")
    def compare_cmd(
        scenario: Path | None = typer.Argument(
            None, help="Scenario YAML with an advisor: section (optional)."
        ),
        gpus: int | None = typer.Option(None, "--gpus", help="GPU count (default 1024)."),
        gpu: str | None = typer.Option(
            None, "--gpu", help="h100 | h200 | b200 | h800 | b300 | gb200-nvl72 | gb300-nvl72 (default h100)."
        ),
        workload: str | None = typer.Option(
            None, "--workload", help="training | inference | storage | trading."
        ),
        model: str | None = typer.Option(
            None,
            "--model",
            help="Training model: llama3-8b, llama3-70b, llama3-405b, "
            "gpt3-175b, deepseek-moe (default llama3-70b).",
        ),
        jitter: str | None = typer.Option(None, "--jitter-sensitivity", help="low | medium | high."),
        expertise: str | None = typer.Option(
            None, "--team-expertise", help="none | some | expert (RDMA tuning)."
        ),
        budget: str | None = typer.Option(None, "--budget", help="low | medium | high."),
        growth: str | None = typer.Option(None, "--growth", help="none | 2x | 10x expected cluster growth."),
        roce_routing: str | None = typer.Option(
            None, "--roce-routing", help="ecmp (NCCL's RoCE default) | adaptive (Spectrum-X class)."
        ),
        network_budget: str | None = typer.Option(
            None,
            "--network-budget",
            help="Ceiling on network capex in USD (e.g. 5e6): designs above it are ruled out.",
        ),
        compute_efficiency: float | None = typer.Option(
            None,
            "--compute-efficiency",
            help="Measured sustained GEMM efficiency (fraction of the dense peak) replacing the step model's "
            "fitted one (0.626 BF16, 0.477 FP8). MFU is an output.",
        ),
        mfu: float | None = typer.Option(None, "--mfu", hidden=True),
        congestion_share: float = typer.Option(
            0.25,
            "--congestion-share",
            help="Share of communication time overlapping congestion in the "
            "risk model (default 0.25, an assumption).",
        ),
        catalog_file: Path | None = typer.Option(
            None, "--catalog", help="YAML file overriding catalog records."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
        report: Path | None = typer.Option(None, "--report", help="Write a self-contained HTML report here."),
        calibration: Path | None = typer.Option(
            None,
            "--calibration",
            help="Calibration file from `aifabric calibrate` (NIC efficiency, latency).",
        ),
    ) -> None:
        """Both fabrics designed, priced and simulated for your cluster, and a recommendation."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.hardware.catalog import load_catalog

            adv, name, training, risk = build_advisor(
                scenario,
                {
                    "gpus": gpus,
                    "gpu": gpu.lower() if gpu else None,
                    "workload": workload,
                    "model": model,
                    "jitter_sensitivity": jitter,
                    "team_expertise": expertise,
                    "budget": budget,
                    "growth": growth,
                    "roce_routing": roce_routing,
                    "network_budget_usd": _budget(network_budget),
                },
            )
            if mfu is not None:
                raise InputError(
                    "MFU is now computed from first principles (an output)",
                    field="--mfu",
                    value=mfu,
                    allowed="--compute-efficiency FRACTION (a measured sustained GEMM efficiency)",
                )
            check_compute_efficiency(compute_efficiency)
            if report is not None and not report.parent.exists():
                raise InputError("folder does not exist", field="--report", value=str(report))
            cat = load_catalog(catalog_file)
            cal = load_calibration(calibration)
            result = _run(
                adv, cat, compute_efficiency, congestion_share, not as_json, training, scenario, cal, risk
            )
            if cal is not None:
                result["calibration"] = {
                    "file": str(calibration),
                    "warnings": list(dict.fromkeys(cal.warnings)),
                }
            result["scenario"] = name
            if report is not None:
                from aifabric.report.html import write_report

                write_report(result, report)
                result["report"] = str(report)
            if as_json:
                slim = {
                    **result,
                    "fabrics": [
                        {k: v for k, v in f.items() if k not in ("fct_us", "permutation_fct_us")}
                        for f in result["fabrics"]
                    ],
                }
                typer.echo(json.dumps(slim, indent=2, default=float))
            else:
                from aifabric.report.terminal import print_comparison

                print_comparison(result)
            return 0

        run_guarded(body)


def _run(
    adv,
    cat,
    compute_efficiency,
    congestion_share: float,
    show_progress: bool,
    training,
    scenario,
    calibration=None,
    risk=None,
) -> dict:
    from aifabric.api import compare_advisor

    kw = dict(
        compute_efficiency=compute_efficiency,
        congestion_share=congestion_share,
        training=training,
        scenario_file=str(scenario) if scenario else None,
        calibration=calibration,
        risk=risk,
    )
    if not show_progress:
        return compare_advisor(adv, cat, **kw)
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as prog:
        task = prog.add_task("starting", total=None)

        def show(msg: str) -> None:
            # a counted step (the testbed's parallel runs, aifabric.stages.workers.Progress) fills
            # the bar; any other message is a stage name with an indefinite bar
            total = getattr(msg, "total", None)
            prog.update(
                task,
                description=str(msg).split(":")[0] if total else msg,
                total=total,
                completed=getattr(msg, "done", 0),
            )

        return compare_advisor(adv, cat, progress=show, **kw)
