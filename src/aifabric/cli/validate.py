"""``aifabric validate SCENARIO.yaml`` — check a scenario file, print one line per problem.

A scenario with a topology and a workload is checked exactly as ``aifabric simulate`` checks it
before running (:func:`aifabric.cli._preflight.prepare`: the topology built, fabric references
resolved, flow files read, memory estimated); a scenario without them (an ``advisor:`` file for
``compare``) is checked as a file, and its topology built when it has one. A ``training:`` section
gets the workload stage's own checks (the spec, the layout, memory).
``aifabric validate --published [--json]`` — the training step model against published step times,
the collective models against published NCCL / DeepEP figures (the expert all-to-all of the training
and inference models: :mod:`aifabric.workload.llm.validation_collectives`).
``aifabric validate --pfc [--json]`` — the packet engine's PFC PAUSE / RESUME points against
htsim's and ns-3's rules (:mod:`aifabric.sim.pfc_validation`).
``aifabric validate --routing [--json]`` — the routing modes on an 8×8×8 leaf-spine permutation:
packet engine, flow model and the measure stage against the balls-into-bins / D-mod-k max-min
references (:mod:`aifabric.stages.validate.routing`).
``aifabric validate --interruptions [--json]`` — network-caused job interruptions at 16,384 H100 over
54 days on each fabric's default plan against the Llama 3 paper's Table 5 (RoCE checked within
±30 %, InfiniBand reported as the prediction; exit 1 when the check fails:
:mod:`aifabric.stages.validate.failures`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from aifabric.cli._json import dumps


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate(
        scenario: Path | None = typer.Argument(None, help="Scenario YAML file to check."),
        build: bool = typer.Option(
            True,
            "--build/--no-build",
            help="Also build the topology and workload it describes (the checks simulate runs).",
        ),
        mode: str | None = typer.Option(None, "--mode", help="packet or flow: check for this mode."),
        published: bool = typer.Option(
            False, "--published", help="Print the step-time model against published training runs instead."
        ),
        routing: bool = typer.Option(
            False,
            "--routing",
            help="Print the routing modes (ecmp, flowlet, adaptive-packet, spray, static) on an 8x8x8 "
            "leaf-spine permutation against their references instead.",
        ),
        pfc_check: bool = typer.Option(
            False,
            "--pfc",
            help="Print the packet engine's PFC PAUSE / RESUME points against htsim's and ns-3's rules instead.",
        ),
        symmetry: bool = typer.Option(
            False,
            "--symmetry",
            help="Run the main job on mirrors (each design against its own twin, six jobs): every stage "
            "must treat identical fabrics alike (exit 1 when one does not).",
        ),
        quick: bool = typer.Option(False, "--quick", hidden=True),  # --symmetry without the 16,384-GPU job
        interruptions: bool = typer.Option(
            False,
            "--interruptions",
            help="Print the modelled network-caused job interruptions at 16,384 H100 over 54 days against "
            "the Llama 3 paper's Table 5 instead (exit 1 when RoCE is outside ±30 %).",
        ),
        diagnose_check: bool = typer.Option(
            False,
            "--diagnose",
            help="Run every risk-library fault on the testbed, export its counters (Prometheus) and score "
            "`aifabric diagnose` on naming the fault and its location instead; exit 0 when precision and "
            "recall are both >= 0.9 on both fabrics.",
        ),
        uet: bool = typer.Option(
            False,
            "--uet",
            help="Compare the flow model's Ultra Ethernet with the packet engine and the UEC htsim's recorded "
            "FCTs instead (shipped UET scenarios and the --routing case); exit 0 when all are within 10 %.",
        ),
        as_json: bool = typer.Option(
            False,
            "--json",
            help="With --published / --routing / --uet / --pfc / --symmetry / --interruptions / --diagnose: one JSON object on stdout.",
        ),
    ) -> None:
        """Check a scenario file: unknown keys, bad units, impossible sizes, flow files. Exit 2 on problems."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.errors import InputError
            from aifabric.scenario import load_scenario

            if published:
                return _published(as_json)
            if routing:
                return _routing(as_json)
            if uet:
                return _uet(as_json)
            if pfc_check:
                return _pfc(as_json)
            if symmetry:
                return _symmetry(as_json, not quick)
            if interruptions:
                return _interruptions(as_json)
            if diagnose_check:
                return _diagnose(as_json)
            if scenario is None:
                raise InputError("missing", field="SCENARIO", allowed="a scenario YAML file, or --published")
            if not build:
                sc = load_scenario(scenario)
                typer.echo(f"{scenario}: ok — {sc.name}")
                return 0
            from aifabric.cli._preflight import in_file, prepare

            sc = load_scenario(scenario)
            if sc.training is not None:
                _check_training(sc, str(scenario))
            if sc.inference is not None or sc.storage is not None:
                _check_sections(sc, str(scenario))
            if sc.assumptions:
                from aifabric.stages.deployment import check_overrides

                check_overrides(sc.assumptions, str(scenario))
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


def _symmetry(as_json: bool, include_slow: bool) -> int:
    import json
    import sys

    from aifabric.symmetry import ITERATION_TOL, LOSS_TOL, symmetry

    checks = symmetry(include_slow, progress=lambda m: print(m, file=sys.stderr))
    ok = all(c.holds for c in checks)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "checks": [c.to_dict() for c in checks],
                    "tolerance": {"iteration": ITERATION_TOL, "expected_loss": LOSS_TOL},
                    "holds": ok,
                },
                indent=2,
            )
        )
    else:
        for c in checks:
            it = "—" if c.iteration[0] is None else f"{c.iteration[0]:.4g} / {c.iteration[1]:.4g} s"
            typer.echo(
                f"{'ok  ' if c.holds else 'FAIL'} {c.job:18} {c.family:10} iteration {it} "
                f"(gap {c.iteration_gap:.2%}), expected loss {c.expected_loss[0]:.3%} / "
                f"{c.expected_loss[1]:.3%}, verdict {c.verdict}"
            )
        typer.echo(
            f"{sum(c.holds for c in checks)} of {len(checks)} mirrors treat identical fabrics alike "
            f"(iteration within {ITERATION_TOL:.1%}, expected loss within {LOSS_TOL * 100:.1f} points, "
            "verdict no material difference)"
        )
    return 0 if ok else 1


def _check_training(sc, file: str) -> None:
    """The workload stage's checks of a ``training:`` section: the spec, the layout, memory."""
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import AdvisorSpec
    from aifabric.stages.design.fabrics import nic_rate_for
    from aifabric.stages.pipeline import workload_input
    from aifabric.stages.workload import workload

    adv = sc.advisor or AdvisorSpec()
    g = load_catalog().get("gpu", adv.gpu)
    workload(workload_input(adv, g, nic_rate_for(g)[0], sc.seed, sc.training, None, file, "training"))


def _check_sections(sc, file: str) -> None:
    """The workload stage's checks of ``inference:`` / ``storage:`` (model, fit, cluster size, and
    that the advisor's workload is the section's)."""
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import AdvisorSpec
    from aifabric.stages.design.fabrics import nic_rate_for
    from aifabric.stages.pipeline import workload_input
    from aifabric.stages.workload import workload

    adv = sc.advisor or AdvisorSpec()
    g = load_catalog().get("gpu", adv.gpu)
    sections = {
        k: getattr(sc, k).model_dump(exclude_none=True) for k in ("inference", "storage") if getattr(sc, k)
    }
    workload(workload_input(adv, g, nic_rate_for(g)[0], sc.seed, None, None, file, None, **sections))


def _routing(as_json: bool) -> int:
    """The routing-mode table of :mod:`aifabric.stages.validate.routing`."""

    from aifabric.stages.validate.routing import METRIC, format_table, routing_table

    rows = routing_table()
    checked = [r for r in rows if r["within_reference"] is not None]
    ok = sum(1 for r in checked if r["within_reference"])
    agree = [r for r in rows if r["engines_agree"] is not None]
    n_agree = sum(1 for r in agree if r["engines_agree"])
    if as_json:
        typer.echo(
            dumps(
                {
                    "metric": METRIC,
                    "modes": rows,
                    "within_reference": ok,
                    "checked": len(checked),
                    "engines_agree": n_agree,
                    "compared": len(agree),
                }
            )
        )
    else:
        _echo_table(format_table(rows))
        typer.echo(
            f"\n{ok} of {len(checked)} modes with a reference within it; packet engine, flow model and "
            f"measure stage within 10 % of each other for {n_agree} of {len(agree)}"
        )
    return 0


def _uet(as_json: bool) -> int:
    """:mod:`aifabric.stages.validate.uet`: exit 0 when every case is within its tolerance."""
    from aifabric.stages.validate.uet import format_uet, uet_report

    rep = uet_report()
    typer.echo(dumps(rep) if as_json else format_uet(rep))
    return 0 if rep["holds"] else 1


def _interruptions(as_json: bool) -> int:
    """The interruption check of :mod:`aifabric.stages.validate.failures`: exit 0 when it holds, else 1."""
    import json

    from aifabric.stages.validate.failures import format_table, interruption_table

    t = interruption_table()
    typer.echo(json.dumps(t) if as_json else format_table(t))
    return 0 if t["holds"] else 1


def _diagnose(as_json: bool) -> int:
    """The closed loop of :mod:`aifabric.diagnose.closed_loop`."""
    import json

    from aifabric.diagnose.closed_loop import closed_loop

    r = closed_loop("prometheus")
    if as_json:
        typer.echo(json.dumps(r))
    else:
        for x in r["runs"]:
            if x["fault"] is None:
                what = "baseline"
            elif not x["signature"]:
                what = "no counter signature"
            else:
                what = "named" if x["named"] else "MISSED"
            fp = f"; false positives: {', '.join(x['false_positives'])}" if x["false_positives"] else ""
            typer.echo(f"{x['run']:<40} {what:<22} {', '.join(x['findings'][:4])}{fp}")
        for tech, f in r["fabrics"].items():
            typer.echo(
                f"{tech}: precision {f['precision']:.2f}, recall {f['recall']:.2f} ({f['faults_named']} of "
                f"{f['faults_with_signature']} faults with a counter signature named; without one: "
                f"{', '.join(f['no_signature']) or 'none'})"
            )
    return 0 if r["pass"] else 1


def _pfc(as_json: bool) -> int:
    """The PFC trigger table of :mod:`aifabric.sim.pfc_validation`."""

    from aifabric.sim.pfc_validation import format_table, pfc_trigger_table

    rows = pfc_trigger_table()
    if as_json:
        typer.echo(dumps({"cases": rows}))
    else:
        _echo_table(format_table(rows))
    return 0


def _print_memory(rows: list[dict]) -> None:
    """The memory check ``train`` applies, on every published layout: how many fit, the refusals."""
    refused = [r for r in rows if not r["memory"]["fits"]]
    typer.echo(
        f"Memory (the check train applies): {len(rows) - len(refused)} of {len(rows)} published layouts fit"
    )
    for r in refused:
        typer.echo(f"  {r['case']}: {r['memory']['refusal']}")


def _published(as_json: bool) -> int:
    """The validation table of :mod:`aifabric.workload.llm.validation` (sources, tolerance ±10 %)."""

    from aifabric.workload.collective_validation import collective_validation_table
    from aifabric.workload.llm.attention_check import ATTENTION_TOLERANCE, attention_validation_table
    from aifabric.workload.llm.gemm import GEMM_TOLERANCE, fit_shape_model, gemm_validation_table
    from aifabric.workload.llm.validation import validation_table
    from aifabric.workload.llm.validation_collectives import TOLERANCE as EP_TOLERANCE
    from aifabric.workload.llm.validation_collectives import collective_validation_table as ep_table

    rows = validation_table()
    gemm_rows = gemm_validation_table()
    gemm_ok = sum(1 for r in gemm_rows if r["within_tolerance"])
    _, gemm_fit = fit_shape_model()
    checked = [r for r in rows if r["role"] != "fit"]
    ok = sum(1 for r in checked if r["within_tolerance"])
    coll = collective_validation_table()
    coll_checked = [r for r in coll if r["role"] == "check"]
    coll_ok = sum(1 for r in coll_checked if r["within_tolerance"])
    ep_rows = ep_table()
    ep_ok = sum(1 for r in ep_rows if r["within_tolerance"])
    ep_missed = [r["case"] for r in ep_rows if not r["within_tolerance"]]
    attn = attention_validation_table()
    attn_checked = [r for r in attn if r["role"] == "check"]
    attn_ok = sum(1 for r in attn_checked if r["within_tolerance"])
    if as_json:
        typer.echo(
            dumps(
                {
                    "cases": rows,
                    "within_tolerance": ok,
                    "checked": len(checked),
                    "memory_refused": [r["case"] for r in rows if not r["memory"]["fits"]],
                    "collectives": {
                        "cases": coll,
                        "within_tolerance": coll_ok,
                        "checked": len(coll_checked),
                    },
                    "expert_alltoall": {
                        "model": "aifabric.workload.llm.groups.ep_dispatch_combine (the training and "
                        "inference models' code) on the validation α-β network, H800 + 400 Gb/s IB",
                        "cases": ep_rows,
                        "within_tolerance": ep_ok,
                        "checked": len(ep_rows),
                        "tolerance": EP_TOLERANCE,
                        "known_misses": ep_missed,
                    },
                    "gemm_shapes": {
                        "cases": gemm_rows,
                        "within_tolerance": gemm_ok,
                        "checked": len(gemm_rows),
                        "tolerance": GEMM_TOLERANCE,
                        "fit": gemm_fit,
                    },
                    "attention": {
                        "cases": attn,
                        "within_tolerance": attn_ok,
                        "checked": len(attn_checked),
                        "tolerance": ATTENTION_TOLERANCE,
                    },
                },
                default=str,
            )
        )
    else:
        _print_published(rows, coll, ep_rows, gemm_rows, gemm_fit, attn)
        _print_memory(rows)
        from rich.console import Console

        Console().print(
            f"{ok} of {len(checked)} step-time cases, {coll_ok} of {len(coll_checked)} collective figures, "
            f"{ep_ok} of {len(ep_rows)} expert all-to-all cases, {gemm_ok} of {len(gemm_rows)} GEMM shapes and "
            f"{attn_ok} of {len(attn_checked)} attention checks within their tolerance (none used in a fit)"
        )
    return 0


def _echo_table(markdown: str) -> None:
    """A library's Markdown pipe table drawn as a rich table (wraps at the terminal's width)."""
    from rich.console import Console

    from aifabric.cli._tables import pipe_table

    Console().print(pipe_table(markdown))


def _print_published(rows, coll, ep_rows, gemm_rows, gemm_fit, attn) -> None:
    """``validate --published`` as rich tables that wrap at the terminal's width."""
    from rich.console import Console

    from aifabric.cli._tables import pipe_table, rows_table
    from aifabric.workload.collective_validation import format_collective_table
    from aifabric.workload.llm.attention_check import ATTENTION_TOLERANCE
    from aifabric.workload.llm.gemm import GEMM_TOLERANCE
    from aifabric.workload.llm.validation import format_table
    from aifabric.workload.llm.validation_collectives import TOLERANCE as EP_TOLERANCE
    from aifabric.workload.llm.validation_collectives import format_table as format_ep_table

    con = Console()
    con.print(pipe_table(format_table(rows), "Training step time against published runs (±10 %)"))
    con.print(
        pipe_table(format_collective_table(coll), "Collectives (NCCL / DeepEP) against published figures")
    )
    con.print(
        pipe_table(
            format_ep_table(ep_rows),
            f"Expert all-to-all against DeepEP's kernels (H800, 400 Gb/s IB per GPU; ±{EP_TOLERANCE:.0%}; "
            "error = model / published − 1: + = model slower for µs, faster for GB/s)",
            notes=("kernels", "model: set by"),
        )
    )
    for r in ep_rows:
        if not r["within_tolerance"]:
            con.print(f"  {r['case']} ({r['error']:+.1%}): {r['known_miss'] or 'not a known miss'}")
    gemm = [
        (r["case"], f"{r['published']:.0f}", f"{r['model']:.0f}", f"{r['error']:+.1%}") for r in gemm_rows
    ]
    con.print(
        rows_table(
            gemm,
            ("case", "published TFLOPS", "model TFLOPS", "error"),
            f"GEMM shapes, held out (fit: OpenXLA H100 BF16 {gemm_fit['bf16_rms']:.1%} RMS, DeepGEMM FP8 "
            f"{gemm_fit['fp8_rms']:.1%} RMS; ±{GEMM_TOLERANCE:.0%})",
        )
    )
    att = [
        (
            r["case"],
            f"{r['published_tflops']:.0f}",
            f"{r['model_tflops']:.0f}",
            f"{r['error']:+.1%}",
            r["role"],
        )
        for r in attn
    ]
    con.print(
        rows_table(
            att,
            ("case", "published TFLOPS", "model TFLOPS", "error", "role"),
            f"Attention (BF16, head dim 128) against cuDNN SDPA benchmarks (±{ATTENTION_TOLERANCE:.0%})",
        )
    )
