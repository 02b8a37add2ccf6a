"""Stage 4 — *performance*: step time, MFU, tokens/s and cost per trained token from workload ×
measurement; the layout search (which parallelism is fastest on *this* fabric) lives here.
Analytic and fast (sensitivity analysis and Monte-Carlo call it many times).

Input: the :class:`~aifabric.stages.workload.Workload`, one
:class:`~aifabric.stages.measure.FabricNetwork` (from *measure*, or built from a user's own
numbers). Output: :class:`FabricPerformance` per fabric in :class:`PerformanceEvidence`. The step
model is :mod:`aifabric.workload.llm` (compute from FLOPs and bytes with one fitted parameter
set, MFU as an output, every collective with its own overlap window); the network enters only
through the fabric's collective-time model (:meth:`~aifabric.stages.measure.FabricNetwork.comm`).
Every layout the ``training:`` section leaves open is searched on each fabric; the best layout
and the runners-up are reported.

Cost per trained token: cluster capex (servers + network) amortised straight-line over
:data:`LIFETIME_YEARS` and charged for the training time (energy and operations excluded).
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

    @property
    def iteration_time_s(self) -> float | None:
        return self.iteration.iteration_s if self.iteration else None

    @property
    def tokens_per_s(self) -> float | None:
        return self.iteration.tokens_per_s if self.iteration else None

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
        return d

    def to_dict(self) -> dict:
        return {
            "fabric": self.key,
            "iteration_time_s": self.iteration_time_s,
            "tokens_per_s": self.tokens_per_s,
            "cost_per_million_tokens_usd": self.cost_per_million_tokens_usd,
            "iteration": self.iteration_dict(),
            "training_cost": self.training_cost,
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


def fabric_performance(
    workload,
    network,
    network_capex_usd: float,
    train_tokens: float = TRAIN_TOKENS,
    server_usd_per_gpu: float = SERVER_USD_PER_GPU,
) -> FabricPerformance:
    """The fastest layout on this fabric and its cost per trained token."""
    if not workload.is_training_step:
        return FabricPerformance(network.key, None, None)
    res = search(workload, network)
    it = res.best
    cost = training_cost(train_tokens, it.tokens_per_s, workload.gpus, network_capex_usd, server_usd_per_gpu)
    return FabricPerformance(network.key, it, cost, tuple(res.runners_up))


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
    "iteration_slowdown",
    "performance",
    "search",
    "server_usd_per_gpu",
    "step_time",
    "training_cost",
]
