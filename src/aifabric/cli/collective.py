"""``aifabric collective OP`` — an nccl-tests-shaped sweep of one collective on a planned fabric."""

from __future__ import annotations

import json

import typer

from aifabric.errors import InputError

OPS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast")


ALGORITHMS = ("ring", "tree", "nvls", "nvls-tree", "auto")
ENGINES = ("flow", "analytic")
GPUS = ("h100", "h200", "b200")
MAX_BYTES = 2**40


def register(app: typer.Typer) -> None:
    @app.command("collective")
    def collective_cmd(
        op: str = typer.Argument(
            ..., help="all-reduce | reduce-scatter | all-gather | all-to-all | broadcast."
        ),
        gpus: int = typer.Option(16, "--gpus", help="GPUs (one NIC per GPU, rail-optimised fabric)."),
        gpu: str = typer.Option("h100", "--gpu", help="h100 | h200 | b200 (NVLink domain)."),
        technology: str = typer.Option("ib", "--technology", help="ib | roce."),
        nic_rate: str = typer.Option("400Gbps", "--nic-rate", help="Per-GPU NIC rate."),
        algorithm: str = typer.Option(
            "ring",
            "--algorithm",
            help="ring | tree | nvls (one server) | nvls-tree (several) | auto (NCCL-style choice per size).",
        ),
        engine: str = typer.Option("flow", "--engine", help="flow (routed flows, max-min) | analytic (α-β)."),
        routing: str | None = typer.Option(
            None,
            "--routing",
            help="ecmp | flowlet | adaptive-packet | static | adaptive (old spelling of flowlet in the flow "
            "model) (default: adaptive-packet on IB, ecmp on RoCE).",
        ),
        sharp: bool = typer.Option(False, "--sharp", help="SHARP in-network all-reduce (InfiniBand only)."),
        min_bytes: str = typer.Option("8B", "--min-bytes", help="Smallest size (nccl-tests -b)."),
        max_bytes: str = typer.Option("8GiB", "--max-bytes", help="Largest size (nccl-tests -e)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        calibration: str | None = typer.Option(
            None,
            "--calibration",
            help="Calibration file from `aifabric calibrate`: re-time the sweep with it.",
        ),
    ) -> None:
        """Estimate a collective across message sizes and print it like nccl-tests does."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.cli.plan import TECH_WORDS, _parse_rate_gbps
            from aifabric.design.plan import plan_fabric
            from aifabric.hardware.catalog import load_catalog
            from aifabric.stages.design import ROUTING, SWITCH_HOP_NS
            from aifabric.stages.measure import HEADER_BYTES, MTU_BYTES
            from aifabric.topology import rail_optimized
            from aifabric.units import UnitError, parse_size
            from aifabric.workload.collectives import default_sizes, format_nccl_table, nccl_sweep

            if op not in OPS:
                raise InputError("unknown collective", field="OP", value=op, allowed=", ".join(OPS))
            techs = TECH_WORDS.get(technology.lower())
            if techs is None or len(techs) != 1:
                raise InputError(
                    "unknown technology", field="--technology", value=technology, allowed="ib, roce"
                )
            tech = techs[0]
            if algorithm not in ALGORITHMS:
                raise InputError(
                    "unknown algorithm", field="--algorithm", value=algorithm, allowed=", ".join(ALGORITHMS)
                )
            allowed_routing = ("ecmp", "flowlet", "adaptive-packet", "static", "adaptive")
            if routing is not None and routing not in allowed_routing:
                raise InputError(
                    "unknown routing"
                    + (
                        " (spray needs the packet engine: go-back-N on out-of-order arrival)"
                        if routing == "spray"
                        else ""
                    ),
                    field="--routing",
                    value=routing,
                    allowed=", ".join(allowed_routing),
                )
            try:
                lo, hi = parse_size(min_bytes), parse_size(max_bytes)
            except UnitError as exc:
                raise InputError(
                    "bad size", field="--min-bytes/--max-bytes", value=exc.value, allowed=exc.allowed
                ) from None
            if not 0 < lo <= hi:
                raise InputError("need 0 < min ≤ max", field="--min-bytes/--max-bytes", value=f"{lo}..{hi}")
            if hi > MAX_BYTES:
                raise InputError(
                    "too large", field="--max-bytes", value=max_bytes, allowed="at most 1TiB (nccl-tests -e)"
                )
            if engine not in ENGINES:
                raise InputError("unknown engine", field="--engine", value=engine, allowed=", ".join(ENGINES))
            if gpu.lower() not in GPUS:
                raise InputError("unknown GPU", field="--gpu", value=gpu, allowed=", ".join(GPUS))
            if sharp and tech != "infiniband":
                raise InputError(
                    "SHARP is an InfiniBand switch feature", field="--sharp", allowed="--technology ib"
                )
            cat = load_catalog()
            p = plan_fabric(gpus, tech, cat, gpu=gpu.lower(), nic_rate_gbps=_parse_rate_gbps(nic_rate))
            sw = cat.switches[p.switch_id]
            hop_ns = float(sw.latency_ns) if sw.latency_ns else SWITCH_HOP_NS[tech]
            topo = rail_optimized(
                gpus, int(p.nic_rate_gbps * 1e9), gpus_per_node=p.design.gpus_per_node, radix=p.radix
            )
            try:
                df = nccl_sweep(
                    op,
                    default_sizes(lo, hi),
                    topo,
                    engine=engine,
                    algorithm=algorithm,
                    routing=routing or ROUTING[tech],
                    technology=tech,
                    gpu=gpu.lower(),
                    sharp=sharp,
                    switch_latency_ps=hop_ns * 1000,
                    header_bytes=HEADER_BYTES[tech],
                    mtu_bytes=MTU_BYTES[tech],
                )
            except InputError as exc:  # name the flag the user typed, not the scenario field
                if exc.field == "workload.algorithm":
                    raise InputError(
                        exc.problem, field="--algorithm", value=exc.value, allowed=exc.allowed
                    ) from None
                raise
            if calibration is not None:  # the user's fitted NIC efficiency, latency and pipeline fill
                from aifabric.calibrate import calibrate_sweep, load

                cal = load(calibration)
                df = calibrate_sweep(
                    df,
                    cal,
                    op,
                    gpus,
                    p.design.gpus_per_node,
                    gpu.lower(),
                    p.nic_rate_gbps * 1e9,
                    tech,
                    algorithm,
                )
                for w in dict.fromkeys(cal.warnings):
                    typer.echo(f"warning: {w}", err=True)
            if as_json:
                typer.echo(
                    json.dumps(
                        {
                            "op": op,
                            "gpus": gpus,
                            "technology": tech,
                            "switch": p.switch_id,
                            "engine": engine,
                            "algorithm": "sharp" if sharp else algorithm,
                            "rows": json.loads(df.to_json(orient="records")),
                        },
                        indent=2,
                    )
                )
            else:
                typer.echo(
                    f"# {tech} fabric: {p.switch_id} × {p.radix}, {p.design.tiers} tier(s), {gpus} GPUs"
                )
                typer.echo(format_nccl_table(df))
            return 0

        run_guarded(body)
