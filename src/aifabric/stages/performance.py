"""Stage 4 — *performance*: step time, MFU, tokens/s and cost per trained token from workload ×
measurement; the layout search (which parallelism is fastest on *this* fabric) lives here.
Analytic and fast (sensitivity analysis and Monte-Carlo call it many times).

Input: the :class:`~aifabric.stages.workload.Workload`, one
:class:`~aifabric.stages.measure.network.FabricNetwork` (from *measure*, or built from a user's own
numbers). Output: :class:`FabricPerformance` per fabric in :class:`PerformanceEvidence`. The step
model is :mod:`aifabric.workload.llm` (compute from FLOPs and bytes with one fitted parameter
set, MFU as an output, every collective with its own overlap window); the network enters only
through the fabric's collective-time model (:meth:`~aifabric.stages.measure.network.FabricNetwork.comm`).
Every layout the ``training:`` section leaves open is searched on each fabric; the best layout
and the runners-up are reported.

Cost per trained token: cluster capex (servers + network) amortised straight-line over
:data:`LIFETIME_YEARS` and charged for the training time (energy and operations excluded).

**Inference** (``--workload inference``): on each fabric the serving model
(:func:`aifabric.workload.llm.inference.serve`) gives the network-exposed time per decode step
(wide expert-parallel dispatch/combine, or pipeline sends), the KV-cache transfer per request
(disaggregated prefill → decode), both against the TTFT and inter-token budgets, and the output
tokens per second the cluster serves within them; cost per million served tokens uses the same
capex amortisation. A model whose instance fits one NVLink domain and is not disaggregated puts
nothing on the back-end: the fabrics then differ only in cost.

**Storage** (``--workload storage``): checkpoint write time per fabric
(:func:`storage_performance`): the state (14 bytes per parameter) at min(the storage nodes' ingest,
the writers' NICs). Off the back-end (the reference designs) both go over the servers' own storage
NICs and network, the same for both fabrics; on the back-end, over the fabric's NICs and the storage
nodes' ports at line rate × the fabric's payload share at its MTU (the few storage ports, not the
non-blocking core, bound many-to-few writes), and the burst is victim traffic next to training for
burst/period of the time (the risk stage's storage-incast share, measured on each fabric's testbed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

TRAIN_TOKENS = 15e12  # Llama 3 405B was pre-trained on ~15.6T tokens (Llama 3 paper) — the default "N tokens"
SERVER_USD_PER_GPU = 310_000 / 8  # HGX H100 node incl. 8 × 400G IB NICs ~310 k USD (S60, low, Aug 2024)
LIFETIME_YEARS = 4.0
RUNNERS_UP = 3


def training_cost(
    tokens_to_train: float,
    tokens_per_s: float,
    gpus: int,
    network_capex_usd: float,
    server_capex_usd_per_gpu: float,
    lifetime_years: float = LIFETIME_YEARS,
) -> dict:
    """Time and capex cost to train ``tokens_to_train`` tokens: cluster capex (servers + network)
    amortised straight-line over ``lifetime_years`` and charged for the training time."""
    seconds = tokens_to_train / tokens_per_s
    capex = gpus * server_capex_usd_per_gpu + network_capex_usd
    per_second = capex / (lifetime_years * 365.25 * 86400)
    return {
        "train_days": seconds / 86400,
        "train_cost_usd": per_second * seconds,
        "cost_per_million_tokens_usd": per_second / tokens_per_s * 1e6,
        "cluster_capex_usd": capex,
        "lifetime_years": lifetime_years,
    }


@dataclass(frozen=True)
class FabricPerformance:
    key: str
    iteration: object | None  # aifabric.workload.llm.StepResult (the best layout on this fabric)
    training_cost: dict | None
    runners_up: tuple = field(default=(), repr=False)  # next-best layouts on this fabric
    inference: dict | None = None  # --workload inference: ServingResult.to_dict() + cost
    storage: dict | None = None  # --workload storage: storage_performance()
    band: dict | None = None  # the step time's error band (aifabric.workload.llm.band)

    @property
    def iteration_time_s(self) -> float | None:
        return self.iteration.iteration_s if self.iteration else None

    @property
    def tokens_per_s(self) -> float | None:
        return self.iteration.tokens_per_s if self.iteration else None

    @property
    def storage_incast(self) -> tuple[float, str] | None:
        """Inference / storage: the share of time storage traffic shares the back-end, with its basis
        (the risk stage's storage-incast share); None for training (the generic share stays)."""
        if self.storage is not None:
            return self.storage["backend_busy_share"], (
                "the storage workload's checkpoint burst / period on the back-end fabric (0 when storage has "
                "its own network)"
            )
        if self.inference is not None:  # no checkpoints; model and data reads over the storage NICs
            return 0.0, (
                "inference writes no checkpoints; storage reads go over the servers' own storage NICs "
                "(reference designs, prices-and-hardware §5a): 0 unless risk.probability.storage-incast sets it"
            )
        return None

    def risk_spec(self, spec):
        """The risk: section with this workload's own storage-incast share (``spec`` itself for
        training, or when the user set the share)."""
        inc = self.storage_incast
        if inc is None or "storage-incast" in spec.probability:
            return spec
        return spec.model_copy(update={"probability": {**spec.probability, "storage-incast": inc[0]}})

    @property
    def uses_backend(self) -> bool:
        """False only for inference served inside NVLink domains (nothing on the back-end fabric)."""
        return self.inference is None or bool(self.inference["needs_backend"])

    def decode_slowdown(self, comm_slowdown: float) -> float:
        """Inference: the decode step's slowdown when communication is ``comm_slowdown`` slower — its
        network share × it (0 when nothing of the step crosses the back-end)."""
        share = self.inference["network_share_of_itl"]
        return share * comm_slowdown if share > 0 else 0.0

    @property
    def cost_per_million_tokens_usd(self) -> float | None:
        return self.training_cost["cost_per_million_tokens_usd"] if self.training_cost else None

    def iteration_dict(self) -> dict | None:
        """``fabrics[].iteration``: iteration_s, mfu, layout, breakdown (+ collectives, memory,
        runners-up)."""
        if self.iteration is None:
            return None
        d = self.iteration.to_dict()
        d["runners_up"] = [
            {"layout": r.layout.to_dict(), "iteration_s": r.iteration_s, "mfu": r.mfu}
            for r in self.runners_up
        ]
        d["band"] = self.band
        return d

    def to_dict(self) -> dict:
        return {
            "fabric": self.key,
            "iteration_time_s": self.iteration_time_s,
            "tokens_per_s": self.tokens_per_s,
            "cost_per_million_tokens_usd": self.cost_per_million_tokens_usd,
            "iteration": self.iteration_dict(),
            "training_cost": self.training_cost,
            "inference": self.inference,
            "storage": self.storage,
        }


@dataclass(frozen=True)
class PerformanceEvidence:
    train_tokens: float
    server_usd_per_gpu: float
    fabrics: tuple[FabricPerformance, ...]

    def fabric(self, key: str) -> FabricPerformance | None:
        return next((f for f in self.fabrics if f.key == key), None)

    def to_dict(self) -> dict:
        return {
            "train_tokens": self.train_tokens,
            "server_usd_per_gpu": self.server_usd_per_gpu,
            "fabrics": [f.to_dict() for f in self.fabrics],
        }


def search(workload, network, runners_up: int = RUNNERS_UP):
    """The layout search on one fabric: :class:`aifabric.workload.llm.SearchResult`."""
    from aifabric.workload.llm import plan_training

    return plan_training(workload.spec, workload.gpu, workload.gpus, network.comm(), runners_up=runners_up)


def step_time(workload, network, layout=None, compute_efficiency: float | None = None):
    """One training step on ``network`` with ``layout`` fixed (the search's best when None):
    :class:`aifabric.workload.llm.StepResult`, or None when the workload has no training step.
    ``compute_efficiency`` overrides the fitted GEMM efficiency (sensitivity analysis)."""
    if not workload.is_training_step:
        return None
    if layout is None:
        return search(workload, network, runners_up=0).best
    from aifabric.workload.llm import get_gpu
    from aifabric.workload.llm import step_time as llm_step

    spec = workload.spec
    eff = compute_efficiency if compute_efficiency is not None else spec.compute_efficiency
    return llm_step(
        workload.model,
        get_gpu(workload.gpu),
        workload.gpus,
        layout,
        spec.seq_len,
        spec.global_batch,
        network.comm(),
        precision=spec.precision,
        fw=spec.framework.to_framework(),
        compute_efficiency=eff,
    )


def usd_per_second(gpus: int, server_usd_per_gpu: float, network_capex_usd: float) -> float:
    """Cluster capex (servers + network) amortised straight-line over :data:`LIFETIME_YEARS`, per second."""
    return (gpus * server_usd_per_gpu + network_capex_usd) / (LIFETIME_YEARS * 365.25 * 86400)


def inference_performance(
    workload, network, network_capex_usd: float, server_usd_per_gpu: float = SERVER_USD_PER_GPU
) -> dict:
    """Serving on this fabric: per-decode-step network time, KV transfer, ITL/TTFT against the
    budgets, served tokens/s within them and cost per million served tokens (None when none meet)."""
    from aifabric.workload.llm.inference import serve

    spec = workload.inference
    res = serve(spec, workload.gpu, network.comm(), workload.gpus)
    d = res.to_dict()
    per_s = usd_per_second(workload.gpus, server_usd_per_gpu, network_capex_usd)
    d.update(
        model=spec.model,
        ttft_budget_s=spec.ttft_budget_s,
        itl_budget_s=spec.itl_budget_s,
        disaggregated=spec.disaggregated,
        cost_per_million_served_tokens_usd=(per_s / res.tokens_per_s * 1e6) if res.tokens_per_s > 0 else None,
    )
    return d


def _trainable_tokens_per_s(model, gpu: str, gpus: int) -> float:
    """Tokens/s the GPUs could train at: 6 · active parameters FLOPs per token at the fitted BF16
    GEMM efficiency (an upper bound: no attention, bubble or communication)."""
    from aifabric.workload.llm import CALIBRATION, get_gpu

    flops = gpus * get_gpu(gpu).peak_tflops("bf16") * 1e12 * CALIBRATION.gemm_efficiency
    return flops / (6.0 * model.active_params)


def storage_performance(workload, network) -> dict:
    """Checkpoint writes and data loading of ``workload.storage`` with this fabric (module doc)."""
    from aifabric.stages.measure.network import HEADER_BYTES, MTU_BYTES
    from aifabric.workload.llm.storage import HOST_STORAGE_GBPS, storage_traffic

    setup = workload.storage
    # many writers into a few storage ports: the storage nodes' ports are the bottleneck, not the
    # (non-blocking) core, so the fabric enters through its header overhead at the MTU
    mtu = MTU_BYTES[network.technology]
    fraction = mtu / (mtu + HEADER_BYTES[network.technology])
    achieved = network.link_rate_bps / 8 * fraction  # bytes/s per GPU NIC on the back-end
    node_bytes = setup.storage_node_gbps / 8 * 1e9
    if setup.on_backend:
        ingest, writer, path = setup.storage_nodes * node_bytes * fraction, achieved, "back-end fabric"
    else:
        ingest = setup.storage_nodes * node_bytes
        writer = HOST_STORAGE_GBPS / 8 * 1e9 / workload.gpus_per_node
        path = "the servers' own storage NICs and network (not this fabric, not priced)"
    tps = _trainable_tokens_per_s(setup.model, workload.gpu, workload.gpus)
    st = storage_traffic(
        setup.model,
        workload.gpus,
        tps,
        setup.checkpoint_period_s,
        ingest,
        writer,
        setup.bytes_per_token,
        setup.on_backend,
    )
    d = st.to_dict()
    d.update(
        model=setup.model.name,
        path=path,
        storage_nodes=setup.storage_nodes,
        storage_ingest_bytes_per_s=ingest,
        writers_bytes_per_s=workload.gpus * writer,
        bottleneck="storage nodes" if ingest <= workload.gpus * writer else "writers' NICs",
        achieved_nic_fraction=fraction if setup.on_backend else None,
        tokens_per_s_upper_bound=tps,
    )
    return d


def fabric_performance(
    workload,
    network,
    network_capex_usd: float,
    train_tokens: float = TRAIN_TOKENS,
    server_usd_per_gpu: float = SERVER_USD_PER_GPU,
) -> FabricPerformance:
    """The fastest layout on this fabric and its cost per trained token (inference: serving on this
    fabric; storage: checkpoint writes)."""
    if workload.inference is not None:
        inf = inference_performance(workload, network, network_capex_usd, server_usd_per_gpu)
        return FabricPerformance(network.key, None, None, inference=inf)
    if workload.storage is not None:
        return FabricPerformance(network.key, None, None, storage=storage_performance(workload, network))
    if not workload.is_training_step:
        return FabricPerformance(network.key, None, None)
    res = search(workload, network)
    it = res.best
    cost = training_cost(train_tokens, it.tokens_per_s, workload.gpus, network_capex_usd, server_usd_per_gpu)
    from aifabric.workload.llm.band import error_band

    band = error_band(workload.model, it.iteration_s)
    return FabricPerformance(network.key, it, cost, tuple(res.runners_up), band=band)


def server_usd_per_gpu(gpu) -> tuple[float, str]:
    """One GPU's share of its server's price: the catalog system's ``price_usd`` / GPUs per node,
    else the HGX H100 figure (S60) — said so in the basis."""
    price = getattr(gpu, "price_usd", None)
    per_node = getattr(gpu, "gpus_per_node", None) or 8
    if price:
        basis = getattr(gpu, "price_source", None) or getattr(gpu, "source", None) or "catalog"
        return float(
            price
        ) / per_node, f"{gpu.id} system price {float(price):,.0f} USD / {per_node} GPUs ({basis})"
    return SERVER_USD_PER_GPU, f"no public {gpu.id} system price: the HGX H100 figure (S60, low) is used"


def performance(
    workload, design, network, progress=None, server_usd: float = SERVER_USD_PER_GPU
) -> PerformanceEvidence:
    """Every fabric's best layout, step time and cost per token (``server_usd``: servers per GPU)."""
    tick = progress or (lambda msg: None)
    out = []
    for fd in design.fabrics:
        if workload.is_training_step:
            tick(f"layout search and training step on {fd.key}")
        elif workload.inference is not None:
            tick(f"decode step and KV transfer on {fd.key}")
        out.append(
            fabric_performance(workload, network.fabric(fd.key), fd.capex_usd, server_usd_per_gpu=server_usd)
        )
    return PerformanceEvidence(TRAIN_TOKENS, server_usd, tuple(out))


def iteration_slowdown(workload, base: FabricPerformance, perturbed_network) -> float:
    """Relative step-time slowdown on ``perturbed_network`` with the layout chosen on the healthy
    fabric (a fault does not re-plan the job)."""
    slow = step_time(workload, perturbed_network, base.iteration.layout)
    return slow.iteration_s / base.iteration.iteration_s - 1


__all__ = [
    "SERVER_USD_PER_GPU",
    "TRAIN_TOKENS",
    "FabricPerformance",
    "PerformanceEvidence",
    "fabric_performance",
    "inference_performance",
    "iteration_slowdown",
    "performance",
    "search",
    "server_usd_per_gpu",
    "step_time",
    "storage_performance",
    "training_cost",
    "usd_per_second",
]
