"""``aifabric collective OP`` — an nccl-tests-shaped sweep of one collective on a planned fabric."""

from __future__ import annotations

import json

import typer

from aifabric.cli._json import dumps
from aifabric.errors import InputError

OPS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast")


ALGORITHMS = ("ring", "tree", "nvls", "nvls-tree", "pat", "auto")
ENGINES = ("flow", "analytic")
GPUS = ("h100", "h200", "b200")
MAX_BYTES = 2**40
MAX_PLANES = 8


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
            help="ring | tree | nvls (one server) | nvls-tree (several) | pat (all-gather / reduce-scatter, "
            "1 GPU per node) | auto (NCCL-style choice per size; the nccl_choice column says it either way).",
        ),
        engine: str = typer.Option(
            "flow",
            "--engine",
            "--mode",
            help="flow (routed flows, max-min; an all-pairs step above 1 M flows by its symmetry-reduced "
            "even-split link loads) | analytic (α-β). --mode is the same option (simulate's word).",
        ),
        planes: int | None = typer.Option(
            None,
            "--planes",
            help="Network planes (each NIC port to its own plane at nic-rate / planes; the design's "
            "switch radix then counts ports at that rate). Default: one plane at the full NIC rate. "
            "100,000 GPUs need --planes 2.",
        ),
        routing: str | None = typer.Option(
            None,
            "--routing",
            help="ecmp | flowlet | adaptive-packet | static | scheduled (RoCE: a Jericho3-AI-class cell "
            "fabric) | adaptive (old spelling of flowlet in the flow model) (default: adaptive-packet on "
            "IB, ecmp on RoCE).",
        ),
        sharp: bool = typer.Option(False, "--sharp", help="SHARP in-network all-reduce (InfiniBand only)."),
        min_bytes: str = typer.Option("8B", "--min-bytes", help="Smallest size (nccl-tests -b)."),
        max_bytes: str = typer.Option("8GiB", "--max-bytes", help="Largest size (nccl-tests -e)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        nic_efficiency: float | None = typer.Option(
            None,
            "--nic-efficiency",
            help="Per-NIC achieved efficiency cap (0–1]; default 0.94 (nccl-tests 46–48 GB/s per 400G "
            "NIC), or the calibration file's fitted value.",
        ),
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
            from aifabric.stages.design.fabrics import ROUTING, SWITCH_HOP_NS
            from aifabric.stages.measure.network import HEADER_BYTES, MTU_BYTES
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
            allowed_routing = ("ecmp", "flowlet", "adaptive-packet", "static", "scheduled", "adaptive")
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
                raise InputError(
                    "unknown engine", field="--engine/--mode", value=engine, allowed=", ".join(ENGINES)
                )
            if gpu.lower() not in GPUS:
                raise InputError("unknown GPU", field="--gpu", value=gpu, allowed=", ".join(GPUS))
            if sharp and tech != "infiniband":
                raise InputError(
                    "SHARP is an InfiniBand switch feature", field="--sharp", allowed="--technology ib"
                )
            if routing == "scheduled" and tech == "infiniband":
                raise InputError(
                    "scheduled is an Ethernet cell fabric (Jericho3-AI + Ramon)",
                    field="--routing",
                    value=routing,
                    allowed="--technology roce, or ecmp, flowlet, adaptive-packet, static",
                )
            if nic_efficiency is not None and not 0 < nic_efficiency <= 1:
                raise InputError(
                    "NIC efficiency out of range",
                    field="--nic-efficiency",
                    value=nic_efficiency,
                    allowed="(0, 1]",
                )
            cal = None
            eta = nic_efficiency
            if calibration is not None:
                from aifabric.calibrate import load

                cal = load(calibration)
                tr, _ = cal.params_for(tech)
                fitted = cal.value(tr, "nic_efficiency") if tr is not None else None
                if eta is None and fitted is not None:
                    eta = min(float(fitted), 1.0)  # the cap comes from the user's own measurement
            if planes is not None and not 1 <= planes <= MAX_PLANES:
                raise InputError(
                    "planes out of range", field="--planes", value=planes, allowed=f"1..{MAX_PLANES}"
                )
            from aifabric.scenario import MAX_COUNT

            if not 1 <= gpus <= MAX_COUNT:
                raise InputError("out of range", field="--gpus", value=gpus, allowed=f"1..{MAX_COUNT:,}")
            cat = load_catalog()
            p = plan_fabric(
                gpus, tech, cat, gpu=gpu.lower(), nic_rate_gbps=_parse_rate_gbps(nic_rate), planes=planes
            )
            sw = cat.switches[p.switch_id]
            hop_ns = float(sw.latency_ns) if sw.latency_ns else SWITCH_HOP_NS[tech]
            if planes is None:  # as before: one plane at the full NIC rate
                topo_args = (int(p.nic_rate_gbps * 1e9), 1)
            else:
                topo_args = (int(p.link_rate_gbps * 1e9), p.design.planes)
            if engine == "flow":
                from aifabric.flow.scale import check_collective_memory

                check_collective_memory(op, p.design)
            topo = rail_optimized(
                gpus,
                topo_args[0],
                gpus_per_node=p.design.gpus_per_node,
                radix=p.radix,
                planes=topo_args[1],
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
                    nic_efficiency=eta,
                )
            except InputError as exc:  # name the flag the user typed, not the scenario field
                if exc.field == "workload.algorithm":
                    raise InputError(
                        exc.problem, field="--algorithm", value=exc.value, allowed=exc.allowed
                    ) from None
                raise
            if cal is not None:  # the user's fitted NIC efficiency, latency and pipeline fill
                from aifabric.calibrate import calibrate_sweep

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
                    dumps(
                        {
                            "op": op,
                            "gpus": gpus,
                            "technology": tech,
                            "switch": p.switch_id,
                            "engine": engine,
                            "algorithm": "sharp" if sharp else algorithm,
                            "planes": topo_args[1],
                            "tiers": p.design.tiers,
                            "nic_efficiency": float(df.attrs.get("nic_efficiency", eta or 0.0)),
                            "rows": json.loads(df.to_json(orient="records")),
                        },
                        indent=2,
                    )
                )
            else:
                typer.echo(
                    f"# {tech} fabric: {p.switch_id} × {p.radix}, {p.design.tiers} tier(s)"
                    + (f" × {topo_args[1]} planes" if topo_args[1] > 1 else "")
                    + f", {gpus} GPUs"
                )
                typer.echo(format_nccl_table(df))
            return 0

        run_guarded(body)
