"""``aifabric compare [SCENARIO.yaml] [flags] [--json] [--report FILE.html]`` — the main job."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import typer

from aifabric.cli._json import dumps
from aifabric.errors import InputError

CHOICES = {
    "gpu": ("h100", "h200", "b200", "h800", "b300", "gb200-nvl72", "gb300-nvl72"),
    "workload": ("training", "inference", "storage", "trading"),
    "jitter_sensitivity": ("low", "medium", "high"),
    "team_expertise": ("none", "some", "expert"),
    "budget": ("low", "medium", "high"),
    "growth": ("none", "2x", "10x"),
    "roce_routing": ("ecmp", "adaptive-packet", "spectrum-x", "flowlet", "adaptive"),
    "ib_routing": ("adaptive-packet", "static"),
    "placement": ("ideal", "fragmented", "shared"),
    "tuning": ("as-shipped", "tuned"),
}


def _with_ib_cc(risk, ib_cc: str | None):
    """``--ib-cc on|off`` → ``risk.ib_congestion_control`` (ib-cc | none), the InfiniBand twin of
    ``risk.roce_baseline`` (the risk testbed's congestion control)."""
    from aifabric.scenario import RiskSpec

    if ib_cc is not None and ib_cc not in ("on", "off"):
        raise InputError("not an allowed value", field="--ib-cc", value=ib_cc, allowed="on, off")
    spec = risk
    if ib_cc is not None:
        spec = (spec or RiskSpec()).model_copy(
            update={"ib_congestion_control": "ib-cc" if ib_cc == "on" else "none"}
        )
    return spec


class Asked(NamedTuple):
    """What a compare/train command line asks: the advisor's inputs, the scenario's name and its
    ``training:``, ``risk:``, ``inference:`` and ``storage:`` sections (the file read once; the
    latter two with their command-line flags applied)."""

    advisor: Any
    name: str
    training: dict | None = None
    risk: Any = None
    inference: dict | None = None
    storage: dict | None = None
    assumptions: dict | None = None  # the scenario's assumptions: section


# command-line flags that set a key of a workload section: flag -> (section, key)
SECTION_FLAGS = {
    "ttft_ms": ("inference", "ttft_ms"),
    "itl_ms": ("inference", "itl_ms"),
    "checkpoint_period": ("storage", "checkpoint_period_s"),
}


def build_advisor(scenario_path: Path | None, flags: dict, section_flags: dict | None = None) -> Asked:
    """Advisor inputs: built-in defaults < the scenario file's ``advisor:`` < command-line flags;
    ``section_flags`` (``--ttft-ms``, ``--itl-ms``, ``--checkpoint-period``) set keys of the
    ``inference:`` / ``storage:`` sections over the file's."""
    from aifabric.scenario import load_scenario

    base = {}
    name = "built-in default (1,024 H100, Llama-3 70B training)"
    training = risk = assumptions = None
    sections: dict[str, dict | None] = {"inference": None, "storage": None}
    if scenario_path is not None:
        sc = load_scenario(scenario_path)
        name, training, risk = sc.name, sc.training, sc.risk
        if sc.assumptions:
            from aifabric.stages.deployment import check_overrides

            assumptions = check_overrides(sc.assumptions, str(scenario_path))
        for sec in sections:
            if getattr(sc, sec) is not None:
                sections[sec] = getattr(sc, sec).model_dump(exclude_none=True)
        if sc.advisor is not None:
            base = sc.advisor.model_dump(exclude_unset=True)
    for key, value in flags.items():
        if value is None:
            continue
        if isinstance(value, str) and not value.strip():
            raise InputError("empty value", field=f"--{key.replace('_', '-')}", value=value)
        if key in CHOICES and value not in CHOICES[key]:
            raise InputError(
                "not an allowed value",
                field=f"--{key.replace('_', '-')}",
                value=value,
                allowed=", ".join(CHOICES[key]),
            )
        base[key] = value
    occ = flags.get("occupancy")
    if occ is not None and not 0 <= occ < 1:
        raise InputError("must be a fraction in [0, 1)", field="--occupancy", value=occ, allowed="e.g. 0.5")
    jobs = flags.get("background_jobs")
    if jobs is not None and jobs < 1:
        raise InputError("must be an integer ≥ 1", field="--background-jobs", value=jobs, allowed="e.g. 4")
    qps = flags.get("qps_per_connection")
    if qps is not None and not 1 <= qps <= 64:
        raise InputError(
            "must be an integer in 1..64", field="--qps-per-connection", value=qps, allowed="e.g. 4"
        )
    if base.get("gpus") is not None and base["gpus"] < 1:
        raise InputError("must be ≥ 1", field="--gpus", value=base["gpus"], allowed="a positive integer")
    workload = base.get("workload", "training")
    if base.get("model") and workload == "trading":
        raise InputError(
            "--model applies to --workload training, inference or storage",
            field="--model",
            value=base["model"],
            allowed="omit --model, or use --workload training | inference | storage",
        )
    for key, value in (section_flags or {}).items():
        if value is None:
            continue
        section, skey = SECTION_FLAGS[key]
        flag = f"--{key.replace('_', '-')}"
        if workload != section:
            raise InputError(
                f"applies to --workload {section} only",
                field=flag,
                value=value,
                allowed=f"--workload {section}",
            )
        if not 0 < value < float("inf"):
            raise InputError("must be a positive number", field=flag, value=value)
        sections[section] = {**(sections[section] or {}), skey: value}
    return Asked(
        _advisor(base, flags, scenario_path),
        name,
        training,
        risk,
        sections["inference"],
        sections["storage"],
        assumptions,
    )


def _advisor(base: dict, flags: dict, scenario_path: Path | None):
    """``AdvisorSpec(**base)``; a value out of its range is one line naming the flag that gave it
    (or the scenario file's ``advisor.KEY``), never an internal ValidationError."""
    from pydantic import ValidationError

    from aifabric.scenario import AdvisorSpec, validation_errors

    try:
        return AdvisorSpec(**base)
    except ValidationError as exc:
        errs = validation_errors(exc, None, AdvisorSpec).errors
        e = errs[0]
        key = (e.field or "").split(".")[0]
        if flags.get(key) is not None:
            raise InputError(
                e.problem, field=f"--{key.replace('_', '-')}", value=e.value, allowed=e.allowed
            ) from None
        raise InputError(
            e.problem,
            file=str(scenario_path) if scenario_path else None,
            field=f"advisor.{e.field}",
            value=e.value,
            allowed=e.allowed,
        ) from None


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


def _p99_budget(v: float | None) -> float | None:
    if v is not None and not 0 < v < float("inf"):
        raise InputError("must be a positive fraction", field="--p99-budget", value=v, allowed="e.g. 0.25")
    return v


def _ids(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def buyer_options(
    designs,
    switch,
    nic,
    nic_rate,
    planes,
    rail_only,
    max_tiers,
    oversubscription,
    lengths,
    hall_size,
    lossy_roce,
    storage_nodes,
    checkpoint,
    dual_tor=False,
    spine_spares=None,
    host_link_media=None,
) -> dict:
    """compare's buyer options (issue 14) as advisor keys; None / False = not asked (the scenario
    file's value, else the reference design, stays). Bad values: one line naming the flag."""
    from aifabric.cli.plan import _parse_hall, _parse_lengths, _parse_rate_gbps
    from aifabric.design.cost import check_host_link_media

    for flag, value, ok, allowed in (
        ("--planes", planes, planes is None or 1 <= planes <= 16, "1 to 16"),
        ("--max-tiers", max_tiers, max_tiers in (None, 1, 2, 3), "1, 2, 3"),
        (
            "--oversubscription",
            oversubscription,
            oversubscription is None or 1 <= oversubscription <= 64,
            "1 (non-blocking) to 64",
        ),
        ("--storage-nodes", storage_nodes, storage_nodes is None or storage_nodes >= 0, "≥ 0"),
        ("--spine-spares", spine_spares, spine_spares is None or 0 <= spine_spares <= 64, "0 to 64"),
        (
            "--checkpoint-gbytes-per-s",
            checkpoint,
            checkpoint is None or 0 <= checkpoint < float("inf"),
            "≥ 0 GB/s",
        ),
    ):
        if not ok:
            raise InputError("out of range", field=flag, value=value, allowed=allowed)
    out = {
        "designs": _ids(designs),
        "switch": _ids(switch),
        "nic": _ids(nic),
        "nic_rate_gbps": _parse_rate_gbps(nic_rate) if nic_rate else None,
        "planes": planes,
        "rail_only": True if rail_only else None,
        "max_tiers": max_tiers,
        "oversubscription": oversubscription,
        "lengths_m": _parse_lengths(lengths) or None,
        "hall_size_m": _parse_hall(hall_size),
        "lossy_roce": True if lossy_roce else None,
        "storage_nodes": storage_nodes,
        "checkpoint_gbytes_per_s": checkpoint,
        "dual_tor": True if dual_tor else None,
        "spine_spares": spine_spares,
        "host_link_media": check_host_link_media(host_link_media) if host_link_media else None,
    }
    if out["nic_rate_gbps"] is not None and out["nic_rate_gbps"] <= 0:
        raise InputError("must be > 0", field="--nic-rate", value=nic_rate, allowed="e.g. 400Gbps")
    if designs is not None and not out["designs"]:
        raise InputError(
            "no design named", field="--designs", value=designs, allowed="e.g. ib-ndr-400g,spectrum-x-400g"
        )
    return out


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
            help="Model trained, served (--workload inference) or checkpointed (--workload storage): "
            "llama3-8b, llama3-70b, llama3-405b, gpt3-175b, deepseek-moe, … (default llama3-70b).",
        ),
        jitter: str | None = typer.Option(None, "--jitter-sensitivity", help="low | medium | high."),
        expertise: str | None = typer.Option(
            None, "--team-expertise", help="none | some | expert (RDMA tuning)."
        ),
        budget: str | None = typer.Option(None, "--budget", help="low | medium | high."),
        growth: str | None = typer.Option(None, "--growth", help="none | 2x | 10x expected cluster growth."),
        roce_routing: str | None = typer.Option(
            None,
            "--roce-routing",
            help="ecmp (NCCL's RoCE default) | adaptive-packet (per-packet AR, reordering NIC) | "
            "spectrum-x (adaptive-packet + telemetry CC) | flowlet | adaptive (old spelling of adaptive-packet).",
        ),
        ib_routing: str | None = typer.Option(
            None,
            "--ib-routing",
            help="adaptive-packet (AR as deployed on AI clusters; default) | static (a plain OpenSM's LFT).",
        ),
        ib_cc: str | None = typer.Option(
            None, "--ib-cc", help="on | off: InfiniBand congestion control in the risk testbed (default off)."
        ),
        placement: str | None = typer.Option(
            None,
            "--placement",
            help="Where the job's ranks land: ideal (the fabric's order, default) | fragmented (random "
            "free nodes of a partly allocated cluster) | shared (fragmented, other jobs' traffic on the fabric).",
        ),
        occupancy: float | None = typer.Option(
            None, "--occupancy", help="fragmented/shared: share of the nodes other jobs hold (default 0.5)."
        ),
        background_jobs: int | None = typer.Option(
            None, "--background-jobs", help="shared: how many other jobs run on those nodes (default 4)."
        ),
        qps_per_connection: int | None = typer.Option(
            None,
            "--qps-per-connection",
            help="QPs per NCCL connection, each hashed by ECMP on its own (NCCL_IB_QPS_PER_CONNECTION; default 1).",
        ),
        network_budget: str | None = typer.Option(
            None,
            "--network-budget",
            help="Ceiling on network capex in USD (e.g. 5e6): designs above it are ruled out.",
        ),
        p99_budget: float | None = typer.Option(
            None,
            "--p99-budget",
            help="Trading / high jitter sensitivity: a design's p99 collective step time may be at most "
            "this fraction above the best design's (default 0.25, an assumption).",
        ),
        compute_efficiency: float | None = typer.Option(
            None,
            "--compute-efficiency",
            help="Measured sustained GEMM efficiency (fraction of the dense peak) replacing the step model's "
            "fitted one (0.626 BF16, 0.477 FP8). MFU is an output.",
        ),
        mfu: float | None = typer.Option(None, "--mfu", hidden=True),
        congestion_share: float | None = typer.Option(
            None,
            "--congestion-share",
            help="Share of communication time overlapping congestion in the risk model (default: the "
            "storage share — 0 with storage off the compute fabric).",
        ),
        storage_on_fabric: bool = typer.Option(
            False,
            "--storage-on-fabric",
            help="Storage / checkpoint traffic shares the compute fabric (default: its own network, as "
            "the reference designs build it); its share of time comes from the job's checkpoint model.",
        ),
        tuning: str | None = typer.Option(
            None,
            "--tuning",
            help="as-shipped (default: IB congestion control off, RoCE PFC + DCQCN at vendor defaults) | "
            "tuned (IB CC on, RoCE DCQCN tuned / Spectrum-X CC): the same state on both fabrics.",
        ),
        catalog_file: Path | None = typer.Option(
            None, "--catalog", help="YAML file overriding catalog records."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
        details: bool = typer.Option(
            False, "--details", help="Also print the risk and sensitivity tables and the reasons' evidence."
        ),
        report: Path | None = typer.Option(None, "--report", help="Write a self-contained HTML report here."),
        build_dir: Path | None = typer.Option(
            None,
            "--build",
            help="Write the recommended design's build artefacts into this new folder (as plan --build).",
        ),
        calibration: Path | None = typer.Option(
            None,
            "--calibration",
            help="Calibration file from `aifabric calibrate` (NIC efficiency, latency).",
        ),
        designs: str | None = typer.Option(
            None,
            "--designs",
            help="Named designs side by side, comma-separated (replaces the default IB + RoCE pair), e.g. "
            "ib-ndr-400g,spectrum-x-400g,th5-sonic-400g,jericho3-ai-400g (an unknown name lists them all).",
        ),
        switch: str | None = typer.Option(
            None, "--switch", help="Catalog switch id(s), comma-separated; each applies to its technology."
        ),
        nic: str | None = typer.Option(
            None, "--nic", help="Catalog NIC id(s), comma-separated; each applies to its technology."
        ),
        nic_rate: str | None = typer.Option(
            None, "--nic-rate", help="Per-GPU NIC rate, e.g. 400Gbps (default: the GPU system's)."
        ),
        planes: int | None = typer.Option(
            None, "--planes", help="Network planes the NIC rate is split over (e.g. 2: 800G as 2 × 400G)."
        ),
        rail_only: bool = typer.Option(
            False, "--rail-only", help="Rail-only designs: no spine between rails (cross-rail over NVLink)."
        ),
        max_tiers: int | None = typer.Option(
            None, "--max-tiers", help="Most switch tiers allowed (1, 2, 3)."
        ),
        oversubscription: float | None = typer.Option(
            None, "--oversubscription", help="Leaf down:up ratio (1 = non-blocking, 2 = 2:1)."
        ),
        lengths: str | None = typer.Option(
            None, "--lengths", help="Cable lengths host-leaf,leaf-spine,spine-core (default 5m,40m,300m)."
        ),
        hall_size: str | None = typer.Option(
            None,
            "--hall-size",
            help="Side of a square data hall, e.g. 60m: switch-to-switch runs = 2 × side.",
        ),
        host_link_media: str | None = typer.Option(
            None,
            "--host-link-media",
            help="Host-link media: auto (the cheapest that reaches, one table and rule for both fabrics) | dac | acc | "
            "aec | aoc | optics.",
        ),
        lossy_roce: bool = typer.Option(
            False, "--lossy-roce", help="RoCE without PFC (NIC retransmission); its slowdown is measured."
        ),
        dual_tor: bool = typer.Option(
            False,
            "--dual-tor",
            help="Dual-ToR for the RoCE designs: each NIC as 2 half-rate legs on two leaves (MLAG / EVPN "
            "multihoming); InfiniBand has no such option and says so. Adds switch failures to every "
            "fabric's risk.",
        ),
        switch_failures: bool = typer.Option(
            False,
            "--switch-failures",
            help="Value leaf / spine switch failures in every fabric's risk (on by itself with --dual-tor "
            "or --spine-spares): the like-for-like baseline for them.",
        ),
        spine_spares: int | None = typer.Option(
            None,
            "--spine-spares",
            help="Spines per plane beyond the non-blocking count (2-tier); adds switch failures to every "
            "fabric's risk.",
        ),
        storage_nodes: int | None = typer.Option(
            None,
            "--storage-nodes",
            help="Price whole designs: back end + an Ethernet front-end/storage network with this many "
            "storage nodes.",
        ),
        checkpoint: float | None = typer.Option(
            None,
            "--checkpoint-gbytes-per-s",
            help="Price whole designs with storage nodes sized for this checkpoint bandwidth (GB/s).",
        ),
        ttft_ms: float | None = typer.Option(
            None,
            "--ttft-ms",
            help="Inference: time-to-first-token budget in ms (default 450, MLPerf v5.0 Llama2-70B-Interactive).",
        ),
        itl_ms: float | None = typer.Option(
            None,
            "--itl-ms",
            help="Inference: inter-token latency budget in ms (default 40, MLPerf v5.0 Llama2-70B-Interactive).",
        ),
        checkpoint_period: float | None = typer.Option(
            None,
            "--checkpoint-period",
            help="Storage: seconds between checkpoints (default 1800, an assumption).",
        ),
    ) -> None:
        """Both fabrics designed, priced and simulated for your cluster, and a recommendation."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.cli._outpaths import check_out_file, write_guarded
            from aifabric.hardware.catalog import load_catalog

            check_out_file(report, "--report")  # before any work (issue 32)
            adv, name, training, risk, inference, storage, assumptions = build_advisor(
                scenario,
                {
                    "gpus": gpus,
                    "gpu": gpu.lower() if gpu is not None else None,
                    "workload": workload,
                    "model": model,
                    "jitter_sensitivity": jitter,
                    "team_expertise": expertise,
                    "budget": budget,
                    "growth": growth,
                    "roce_routing": roce_routing,
                    "ib_routing": ib_routing,
                    "placement": placement,
                    "occupancy": occupancy,
                    "background_jobs": background_jobs,
                    "qps_per_connection": qps_per_connection,
                    "network_budget_usd": _budget(network_budget),
                    "p99_budget": _p99_budget(p99_budget),
                    "storage_placement": "on-fabric" if storage_on_fabric else None,
                    "tuning": tuning,
                    **buyer_options(
                        designs,
                        switch,
                        nic,
                        nic_rate,
                        planes,
                        rail_only,
                        max_tiers,
                        oversubscription,
                        lengths,
                        hall_size,
                        lossy_roce,
                        storage_nodes,
                        checkpoint,
                        dual_tor,
                        spine_spares,
                        host_link_media,
                    ),
                },
                {"ttft_ms": ttft_ms, "itl_ms": itl_ms, "checkpoint_period": checkpoint_period},
            )
            if mfu is not None:
                raise InputError(
                    "MFU is now computed from first principles (an output)",
                    field="--mfu",
                    value=mfu,
                    allowed="--compute-efficiency FRACTION (a measured sustained GEMM efficiency)",
                )
            check_compute_efficiency(compute_efficiency)
            risk = _with_ib_cc(risk, ib_cc)
            if switch_failures:
                from aifabric.scenario import RiskSpec

                risk = (risk or RiskSpec()).model_copy(update={"switch_failures": True})
            cat = load_catalog(catalog_file)
            cal = load_calibration(calibration)
            result = _run(
                adv,
                cat,
                compute_efficiency,
                congestion_share,
                True,  # progress on stderr, also with --json
                training,
                scenario,
                cal,
                risk,
                inference,
                storage,
                assumptions,
            )
            if cal is not None:
                result["calibration"] = {
                    "file": str(calibration),
                    "warnings": list(dict.fromkeys(cal.warnings)),
                }
            result["scenario"] = name
            if report is not None:
                from aifabric.report.html import write_report

                write_guarded(lambda: write_report(result, report), "--report", report)
                result["report"] = str(report)
            if build_dir is not None:
                result["build"] = _build_chosen(result, cat, build_dir)
            if as_json:
                slim = {
                    **result,
                    "fabrics": [
                        {k: v for k, v in f.items() if k not in ("fct_us", "permutation_fct_us")}
                        for f in result["fabrics"]
                    ],
                }
                typer.echo(dumps(slim, indent=2, default=float))
            else:
                from aifabric.report.terminal import print_comparison

                print_comparison(result, details=details)
            return 0

        run_guarded(body)


def _build_chosen(result: dict, cat, folder: Path) -> list[dict]:
    """plan --build for the recommended design (its plan as compare priced it)."""
    from aifabric.build.sizing import plan_from_dict
    from aifabric.cli.build import build_plans

    label = (result.get("recommendation") or {}).get("design")
    chosen = [f for f in result["fabrics"] if f.get("plan") and label in (f.get("label"), f.get("design"))]
    if not chosen:
        raise InputError("no recommended design with a plan to build", field="--build", value=label)
    fp = plan_from_dict(chosen[0]["plan"], cat, "compare")
    return build_plans([fp], cat, folder, None, sized=True)[1]


def _run(
    adv,
    cat,
    compute_efficiency,
    congestion_share: float | None,
    show_progress: bool,
    training,
    scenario,
    calibration=None,
    risk=None,
    inference=None,
    storage=None,
    assumptions=None,
) -> dict:
    from aifabric.api import compare_advisor

    kw = dict(
        compute_efficiency=compute_efficiency,
        congestion_share=congestion_share,
        training=training,
        scenario_file=str(scenario) if scenario else None,
        calibration=calibration,
        risk=risk,
        inference=inference,
        storage=storage,
        assumptions=assumptions,
    )
    from aifabric.cli._progress import progress_callback

    with progress_callback(show_progress) as show:
        return compare_advisor(adv, cat, progress=show, **kw)
