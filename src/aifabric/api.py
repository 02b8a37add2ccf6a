"""The Python API: ``aifabric.compare(...)`` and ``aifabric.plan(...)`` return objects whose tables
are pandas DataFrames; ``aifabric.simulate(scenario)`` runs the packet engine.

```python
import aifabric

res = aifabric.compare(gpus=1024, model="llama3-70b")
res.fabrics          # DataFrame: one row per fabric (capex_usd, iteration_time_s, busbw_gbytes_per_s, …)
res.recommendation   # {"fabric": ..., "reasons": [...]}
res.evidence.network # the measure stage's evidence (every stage: res.evidence.<stage>)

p = aifabric.plan(gpus=1024, technology="both")
p.fabrics, p.bom     # DataFrames
```
Each stage can also be called alone (``aifabric.stages.*``, see docs/architecture.md): for example
feed your own measured bandwidth into *performance* with
:meth:`aifabric.stages.measure.network.FabricNetwork.from_measured`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aifabric.errors import InputError

# The words plan's technology and train's --fabric accept, and the technologies each one means.
TECHNOLOGIES_OF = {
    "both": ("infiniband", "roce"),
    "ib": ("infiniband",),
    "infiniband": ("infiniband",),
    "roce": ("roce",),
}
FABRIC_COLUMNS = (
    "fabric",
    "technology",
    "routing",
    "capex_usd",
    "power_w",
    "iteration_time_s",
    "tokens_per_s",
    "busbw_gbytes_per_s",
    "ring_step_efficiency",
    "permutation_efficiency",
    "small_message_latency_us",
    "expected_loss",
)


def compare_advisor(adv, catalog, *args, **kwargs) -> dict:
    """The JSON-ready result of ``aifabric compare`` for advisor inputs ``adv`` (the CLI's path);
    the arguments are :func:`run_comparison`'s."""
    from aifabric.report.result import comparison_dict

    return comparison_dict(run_comparison(adv, catalog, *args, **kwargs))


def run_comparison(
    adv,
    catalog,
    seed: int = 1,
    compute_efficiency: float | None = None,
    progress=None,
    congestion_share=None,
    training: dict | None = None,
    scenario_file: str | None = None,
    calibration=None,
    risk=None,
    inference: dict | None = None,
    storage: dict | None = None,
    assumptions: dict | None = None,
):
    from aifabric.stages.pipeline import CompareInputs, run

    inputs = CompareInputs(
        adv,
        catalog,
        seed,
        compute_efficiency,
        congestion_share,  # None: the storage share (one setting)
        training,
        scenario_file,
        calibration,
        risk,
        inference,
        storage,
        assumptions,
    )
    return run(inputs, progress)


@dataclass(frozen=True)
class CompareResult:
    """``aifabric.compare``'s answer: the evidence chain, the JSON-ready dict and DataFrames."""

    evidence: Any = field(repr=False)  # aifabric.stages.pipeline.Comparison
    result: dict = field(repr=False)  # what `aifabric compare --json` prints (plus FCT samples)

    @property
    def recommendation(self) -> dict:
        return self.result["recommendation"]

    @property
    def fabrics(self):
        """One row per fabric: capex, power, iteration time, busbw at 8 GiB, efficiencies, risk."""
        import pandas as pd

        return pd.DataFrame([{k: f.get(k) for k in FABRIC_COLUMNS} for f in self.result["fabrics"]])

    @property
    def busbw(self):
        """The all-reduce busbw sweep per fabric (size_bytes, time_us, busbw_gbytes_per_s in GB/s, algorithm)."""
        import pandas as pd

        rows = [{"fabric": f["fabric"], **r} for f in self.result["fabrics"] for r in f["busbw_sweep"]]
        return pd.DataFrame(
            rows, columns=["fabric", "size_bytes", "time_us", "busbw_gbytes_per_s", "algorithm", "protocol"]
        )

    @property
    def risk(self):
        """One row per fabric and risk scenario."""
        import pandas as pd

        rows = [
            {"fabric": f["fabric"], "scenario": k, **{c: v for c, v in d.items() if c != "what"}}
            for f in self.result["fabrics"]
            for k, d in (f.get("risk_detail") or {}).items()
        ]
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        """In Jupyter: the report's summary card (answer, verdict, hinges-on, deciding numbers)."""
        from aifabric.report.html import summary_card

        return summary_card(self.result)

    def to_html(self, path) -> Any:
        """Write the HTML report (the same as ``aifabric compare --report FILE``); returns the path."""
        from aifabric.report.html import write_report

        return write_report(self.result, path)

    def __repr__(self) -> str:
        return f"CompareResult(recommendation={self.recommendation['fabric']!r}, fabrics={len(self.result['fabrics'])})"


def compare(
    gpus: int | None = None,
    gpu: str | None = None,
    workload: str | None = None,
    model: str | None = None,
    *,
    jitter_sensitivity: str | None = None,
    team_expertise: str | None = None,
    budget: str | None = None,
    growth: str | None = None,
    roce_routing: str | None = None,
    training: dict | None = None,
    compute_efficiency: float | None = None,
    congestion_share: float | None = None,
    seed: int = 1,
    catalog=None,
    progress=None,
    inference: dict | None = None,
    storage: dict | None = None,
    assumptions: dict | None = None,
    **buyer_options,
) -> CompareResult:
    """Both fabrics designed, priced, measured and weighed for one cluster (``aifabric compare``).
    Keyword arguments are the advisor's questions (interface.md); unset ones take the built-in
    default (1,024 H100 training Llama-3 70B); ``training`` is the scenario's ``training:`` section
    (model, precision, seq_len, global_batch, micro_batch, parallelism); ``inference`` and ``storage``
    are the scenario's ``inference:`` / ``storage:`` sections (``workload`` inference / storage).
    ``buyer_options`` are the advisor's design keys (``designs=["ib-ndr-400g", "th5-sonic-400g"]``,
    ``switch``, ``nic``, ``nic_rate_gbps``, ``planes``, ``rail_only``, ``max_tiers``,
    ``oversubscription``, ``lengths_m``, ``hall_size_m``, ``lossy_roce``, ``storage_nodes``,
    ``checkpoint_gbytes_per_s``). Bad input raises :class:`aifabric.errors.InputError` (or
    ``InputErrors``) naming the field."""
    kw = {k: v for k, v in locals().items() if k != "buyer_options"}  # the keywords, before any import
    from aifabric.keywords import renamed

    _check_compare_types(kw)
    try:
        return _compare(**kw, **buyer_options)
    except InputError as exc:
        raise renamed(exc, {"gpus", "gpu", "workload", "model", *buyer_options}) from None


def _check_compare_types(kw: dict) -> None:
    """Strict keyword types: ``gpus="64"`` is an error naming ``gpus``, never 64; rates may be
    ``"400G"`` / ``"400Gbps"`` (``nic_rate_gbps`` or ``nic_rate``)."""
    from aifabric.keywords import check_type

    words = (
        "gpu",
        "workload",
        "model",
        "jitter_sensitivity",
        "team_expertise",
        "budget",
        "growth",
        "roce_routing",
    )
    for name in words:
        check_type(name, kw.get(name), str)
    check_type("gpus", kw.get("gpus"), int)
    check_type("seed", kw.get("seed"), int)
    for name in ("compute_efficiency", "congestion_share"):
        check_type(name, kw.get(name), float)


def _compare(
    gpus=None,
    gpu=None,
    workload=None,
    model=None,
    *,
    jitter_sensitivity=None,
    team_expertise=None,
    budget=None,
    growth=None,
    roce_routing=None,
    training=None,
    compute_efficiency=None,
    congestion_share=None,
    seed=1,
    catalog=None,
    progress=None,
    inference=None,
    storage=None,
    assumptions=None,
    **buyer_options,
) -> CompareResult:
    from aifabric.hardware.catalog import load_catalog
    from aifabric.keywords import rate_gbps
    from aifabric.scenario import scenario_from_dict

    if "nic_rate" in buyer_options or isinstance(buyer_options.get("nic_rate_gbps"), str):
        rate = buyer_options.pop("nic_rate", None) or buyer_options.get("nic_rate_gbps")
        buyer_options["nic_rate_gbps"] = rate_gbps("nic_rate_gbps", rate)
    asked = {
        "gpus": gpus,
        "gpu": gpu,
        "workload": workload,
        "model": model,
        "jitter_sensitivity": jitter_sensitivity,
        "team_expertise": team_expertise,
        "budget": budget,
        "growth": growth,
        "roce_routing": roce_routing,
        **buyer_options,
    }
    sc = scenario_from_dict(
        {
            "advisor": {k: v for k, v in asked.items() if v is not None},
            **{k: v for k, v in (("inference", inference), ("storage", storage)) if v is not None},
        }
    )
    adv = sc.advisor
    if adv.model and adv.workload == "trading":
        raise InputError(
            "model applies to workload training, inference or storage", field="model", value=adv.model
        )
    inference = sc.inference.model_dump(exclude_none=True) if sc.inference is not None else None
    storage = sc.storage.model_dump(exclude_none=True) if sc.storage is not None else None
    if compute_efficiency is not None and not 0 < compute_efficiency <= 1:
        raise InputError(
            "must be in (0, 1]",
            field="compute_efficiency",
            value=compute_efficiency,
            allowed="a measured GEMM efficiency, e.g. 0.6",
        )
    cat = catalog if catalog is not None else load_catalog(None)
    c = run_comparison(
        adv,
        cat,
        seed,
        compute_efficiency,
        progress,
        congestion_share,
        training,
        inference=inference,
        storage=storage,
        assumptions=assumptions,
    )
    from aifabric.report.result import comparison_dict

    return CompareResult(c, comparison_dict(c))


@dataclass(frozen=True)
class PlanResult:
    """``aifabric.plan``'s answer: the plans and their tables as DataFrames."""

    plans: tuple = field(repr=False)

    @property
    def fabrics(self):
        """One row per fabric: technology, tiers, switches, NICs, capex, power."""
        import pandas as pd

        keep = (
            "technology",
            "gpus",
            "gpu",
            "tiers",
            "switch",
            "nic",
            "nic_rate_gbps",
            "planes",
            "switch_count",
            "nics",
            "transceivers",
            "cables",
            "capex_usd",
            "network_capex_per_gpu_usd",
            "power_w",
        )
        return pd.DataFrame([{k: p.to_dict().get(k) for k in keep} for p in self.plans])

    @property
    def bom(self):
        """Every bill-of-materials line of every plan, with its technology."""
        import pandas as pd

        return pd.DataFrame(
            [{"technology": p.technology, **line} for p in self.plans for line in p.to_dict()["bom"]]
        )

    def to_dict(self) -> dict:
        return {"fabrics": [p.to_dict() for p in self.plans]}


def plan(
    gpus: int,
    technology: str = "both",
    gpu: str = "h100",
    nic_rate_gbps: float | str = 400,
    *,
    oversubscription: float = 1.0,
    planes: int = 1,
    switch_id: str | None = None,
    nic_id: str | None = None,
    lengths_m: dict[str, float] | None = None,
    catalog=None,
) -> PlanResult:
    """Fabric design + bill of materials + capex/power for ``gpus`` GPUs (``aifabric plan``);
    ``technology`` is ``infiniband`` (or ``ib``), ``roce`` or ``both``."""
    from aifabric.design.plan import plan as plan_all
    from aifabric.hardware.catalog import load_catalog

    if technology not in TECHNOLOGIES_OF:
        raise InputError(
            "unknown technology", field="technology", value=technology, allowed="ib, infiniband, roce, both"
        )
    if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
        raise InputError("must be a positive integer", field="gpus", value=gpus)
    from aifabric.keywords import rate_gbps

    nic_rate_gbps = rate_gbps("nic_rate_gbps", nic_rate_gbps)
    cat = catalog if catalog is not None else load_catalog(None)
    plans = plan_all(
        gpus,
        TECHNOLOGIES_OF[technology],
        cat,
        gpu=gpu,
        nic_rate_gbps=nic_rate_gbps,
        oversubscription=oversubscription,
        planes=planes,
        switch_id=switch_id,
        nic_id=nic_id,
        lengths_m=lengths_m,
    )
    return PlanResult(tuple(plans))


def train_result(
    adv,
    catalog,
    training: dict | None = None,
    fabric: str = "both",
    seed: int = 1,
    compute_efficiency: float | None = None,
    scenario_file: str | None = None,
    progress=None,
    calibration=None,
    assumptions: dict | None = None,
) -> dict:
    """``aifabric train``: the design, workload, measure and performance stages only (no risk, no
    advice) for the ``training:`` section on each asked fabric; the JSON-ready dict."""
    import time

    from aifabric.stages.pipeline import CompareInputs, run_performance

    if fabric not in TECHNOLOGIES_OF:
        raise InputError("unknown fabric", field="--fabric", value=fabric, allowed="ib, roce, both")
    t0 = time.perf_counter()
    inputs = CompareInputs(
        adv,
        catalog,
        seed=seed,
        compute_efficiency=compute_efficiency,
        training=training,
        scenario_file=scenario_file,
        calibration=calibration,  # `aifabric calibrate`'s measured NIC efficiency / latency
        assumptions=assumptions,  # the scenario's assumptions: (sharp: off)
    )
    front = run_performance(
        inputs, progress, technologies=TECHNOLOGIES_OF[fabric], kind="training", sweep=False
    )
    des, wl, net, perf = front.design, front.workload, front.network, front.performance
    rows = []
    for fd in des.fabrics:
        n, fp = net.fabric(fd.key), perf.fabric(fd.key)
        it = fp.iteration_dict()
        rows.append(
            {
                "technology": fd.technology,
                "fabric": fd.key,
                "label": fd.label,
                "routing": n.routing,
                "capex_usd": fd.capex_usd,
                "ring_step_efficiency": n.ring_step_efficiency,
                "permutation_efficiency": n.permutation_efficiency,
                "sharp": n.sharp,
                "iteration_time_s": fp.iteration_time_s,
                "tokens_per_s": fp.tokens_per_s,
                "mfu": it["mfu"] if it else None,
                "iteration": it,
                "training_cost": fp.training_cost,
            }
        )
    return {
        "scenario": scenario_file or "built-in default",
        "gpus": adv.gpus,
        "gpu": adv.gpu,
        "model": wl.model.name if wl.model is not None else None,
        "training": wl.spec.model_dump(mode="json") if wl.spec is not None else None,
        "stages": ["design", "workload", "measure", "performance"],
        "fabrics": rows,
        "evidence": {
            "design": des.to_dict(),
            "workload": wl.to_dict(),
            "measure": net.to_dict(),
            "performance": perf.to_dict(),
        },
        "wall_s": time.perf_counter() - t0,
    }


__all__ = [
    "CompareResult",
    "PlanResult",
    "compare",
    "compare_advisor",
    "plan",
    "run_comparison",
    "train_result",
]
