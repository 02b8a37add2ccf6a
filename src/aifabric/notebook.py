"""The Python API for notebooks, beside :mod:`aifabric.api`: ``aifabric.train``, ``collective`` and
``calibrate``, strict keyword checks (a wrong type is an error naming the keyword, never a silent
conversion) and results that draw themselves in Jupyter (``_repr_html_``) and write a page
(``to_html(path)``)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from aifabric.errors import InputError
from aifabric.keywords import check_type, rate_gbps, renamed


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
        f"<body style='font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto'>"
        f"<h1>{html.escape(title)}</h1>{body}</body></html>"
    )


@dataclass(frozen=True)
class TableResult:
    """A result whose main table is a DataFrame (``frame``) plus the JSON-ready dict (``result``)."""

    title: str
    result: dict = field(repr=False)
    rows: list = field(repr=False)

    @property
    def frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows)

    def _repr_html_(self) -> str:
        return f"<h4>{html.escape(self.title)}</h4>" + self.frame.to_html(index=False, max_rows=60)

    def to_html(self, path: str | Path) -> Path:
        """Write the table as a self-contained HTML page."""
        p = Path(path)
        p.write_text(_page(self.title, self.frame.to_html(index=False)), encoding="utf-8")
        return p


class TrainResult(TableResult):
    """``aifabric.train``: one row per fabric (iteration time, MFU, tokens/s, capex)."""

    @property
    def fabrics(self):
        return self.frame


class CollectiveResult(TableResult):
    """``aifabric.collective``: one row per message size, nccl-tests' columns (GB/s)."""


class CalibrationResult(TableResult):
    """``aifabric.calibrate``: one row per measured point (measured vs model), ``parameters``."""

    @property
    def parameters(self) -> dict:
        return self.result["parameters"]


def train(
    gpus: int | None = None,
    gpu: str | None = None,
    model: str | None = None,
    *,
    training: dict | None = None,
    fabric: str = "both",
    compute_efficiency: float | None = None,
    seed: int = 1,
    catalog=None,
) -> TrainResult:
    """Step time, MFU and the best layout per fabric for a training job (``aifabric train``)."""
    from aifabric.api import train_result
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import scenario_from_dict

    for name, value, kind in (
        ("gpus", gpus, int),
        ("gpu", gpu, str),
        ("model", model, str),
        ("fabric", fabric, str),
    ):
        check_type(name, value, kind)
    check_type("compute_efficiency", compute_efficiency, float)
    check_type("seed", seed, int)
    asked = {"gpus", "gpu", "model", "fabric"}
    adv = {k: v for k, v in (("gpus", gpus), ("gpu", gpu), ("model", model)) if v is not None}
    try:
        sc = scenario_from_dict(
            {"advisor": {**adv, "workload": "training"}, **({"training": training} if training else {})}
        )
        cat = catalog if catalog is not None else load_catalog(None)
        res = train_result(sc.advisor, cat, sc.training, fabric, seed, compute_efficiency)
    except InputError as exc:
        raise renamed(exc, asked) from None
    keep = (
        "fabric",
        "technology",
        "label",
        "routing",
        "capex_usd",
        "iteration_time_s",
        "mfu",
        "tokens_per_s",
    )
    rows = [{k: f.get(k) for k in keep} for f in res["fabrics"]]
    return TrainResult(f"aifabric.train: {res['gpus']:,} × {res['gpu'].upper()}, {res['model']}", res, rows)


OPS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast")


def _collective_topology(gpus: int, tech: str, gpu: str, rate: float):
    from aifabric.design.plan import plan_fabric
    from aifabric.hardware.catalog import load_catalog
    from aifabric.stages.design.fabrics import SWITCH_HOP_NS
    from aifabric.topology import rail_optimized

    cat = load_catalog()
    p = plan_fabric(gpus, tech, cat, gpu=gpu, nic_rate_gbps=rate, planes=None)
    sw = cat.switches[p.switch_id]
    hop_ns = float(sw.latency_ns) if sw.latency_ns else SWITCH_HOP_NS[tech]
    topo = rail_optimized(
        gpus, int(p.nic_rate_gbps * 1e9), gpus_per_node=p.design.gpus_per_node, radix=p.radix, planes=1
    )
    return topo, hop_ns


def collective(
    op: str = "all-reduce",
    gpus: int = 16,
    *,
    gpu: str = "h100",
    technology: str = "ib",
    nic_rate: str | float = "400Gbps",
    algorithm: str = "auto",
    engine: str = "flow",
    min_bytes: str | int = "8B",
    max_bytes: str | int = "8GiB",
) -> CollectiveResult:
    """One collective across message sizes on a planned rail-optimised fabric, as nccl-tests prints it
    (``aifabric collective``); busbw and algbw in GB/s."""
    from aifabric.stages.design.fabrics import ROUTING
    from aifabric.stages.measure.network import HEADER_BYTES, MTU_BYTES
    from aifabric.units import UnitError, parse_size
    from aifabric.workload.collectives import default_sizes, nccl_sweep

    for name, value, kind in (
        ("op", op, str),
        ("gpus", gpus, int),
        ("gpu", gpu, str),
        ("technology", technology, str),
    ):
        check_type(name, value, kind)
    _one_of("op", op, OPS)
    tech = {"ib": "infiniband", "infiniband": "infiniband", "roce": "roce"}.get(technology)
    if tech is None:
        raise InputError(
            "unknown technology", field="technology", value=technology, allowed="ib, infiniband, roce"
        )
    _one_of("gpu", gpu, ("h100", "h200", "b200"))
    _one_of("engine", engine, ("flow", "analytic"))
    _one_of("algorithm", algorithm, ("ring", "tree", "nvls", "nvls-tree", "pat", "auto"))
    if not 1 <= gpus <= 1_000_000:
        raise InputError("out of range", field="gpus", value=gpus, allowed="1..1,000,000")
    try:
        lo, hi = parse_size(min_bytes), parse_size(max_bytes)
    except UnitError as exc:
        raise InputError(
            "bad size", field="min_bytes / max_bytes", value=exc.value, allowed=exc.allowed
        ) from None
    if not 0 < lo <= hi <= 2**40:
        raise InputError(
            "need 0 < min_bytes ≤ max_bytes ≤ 1TiB", field="min_bytes / max_bytes", value=f"{lo}..{hi}"
        )
    topo, hop_ns = _collective_topology(gpus, tech, gpu, rate_gbps("nic_rate", nic_rate))
    df = nccl_sweep(
        op, default_sizes(lo, hi), topo, engine=engine, algorithm=algorithm, routing=ROUTING[tech],
        technology=tech, gpu=gpu, switch_latency_ps=hop_ns * 1000, header_bytes=HEADER_BYTES[tech],
        mtu_bytes=MTU_BYTES[tech],
    )  # fmt: skip
    rows = df.to_dict("records")
    result = {"op": op, "gpus": gpus, "technology": tech, "rows": rows}
    return CollectiveResult(f"aifabric.collective: {op} on {gpus} {gpu.upper()} ({tech})", result, rows)


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InputError("not an allowed value", field=name, value=value, allowed=", ".join(allowed))


def calibrate(
    *files: str | Path,
    nic_rate: str | float | None = None,
    fit_max_bytes: str | int = "256MiB",
    gpus_per_node: int | None = None,
    out: str | Path | None = None,
) -> CalibrationResult:
    """Fit NIC efficiency, latency and NCCL's pipeline term to nccl-tests / perftest output
    (``aifabric calibrate``); ``out`` also writes the calibration file the other commands read."""
    from aifabric import __version__
    from aifabric.calibrate import calibration, fit, parsers
    from aifabric.units import UnitError, parse_size

    if not files:
        raise InputError("no measurement file", field="files", allowed="nccl-tests or perftest output files")
    check_type("gpus_per_node", gpus_per_node, int)
    try:
        fmax = parse_size(fit_max_bytes)
    except UnitError as exc:
        raise InputError(
            "bad size", field="fit_max_bytes", value=fit_max_bytes, allowed=exc.allowed
        ) from None
    rate = rate_gbps("nic_rate", nic_rate)
    bps = None if rate is None else rate * 1e9
    fits = []
    for f in files:
        run = parsers.parse_measurement(Path(f))
        if run.kind == "nccl-tests":
            fits.append(fit.fit_nccl(run, fmax, gpus_per_node, bps, None, None, None))
        else:
            fits.append(fit.fit_perftest(run, fmax, bps, None))
    doc = calibration.build(fits, fmax, __version__)
    if out is not None:
        calibration.write(doc, Path(out))
    rows = [r for f in fits for r in f.rows]
    result = {"fits": rows, "transport": doc["transport"], "parameters": doc["parameters"]}
    return CalibrationResult(
        f"aifabric.calibrate: {len(files)} file(s), transport {doc['transport']}", result, rows
    )
