"""Stage 4 — *performance*: step time, tokens/s and cost per trained token from workload ×
measurement. Analytic and fast (sensitivity analysis and Monte-Carlo call it many times).

Input: the :class:`~aifabric.stages.workload.Workload`, one
:class:`~aifabric.stages.measure.FabricNetwork` (from *measure*, or built from a user's own
numbers), the GPU's peak and the compute efficiency. Output: :class:`FabricPerformance` per fabric
in :class:`PerformanceEvidence`. The iteration model is
:func:`aifabric.workload.training.iteration_time` over the workload's per-group collectives; the
network enters only through the fabric's collective-time model
(:meth:`~aifabric.stages.measure.FabricNetwork.comm`).

Cost per trained token: cluster capex (servers + network) amortised straight-line over
:data:`LIFETIME_YEARS` and charged for the training time (energy and operations excluded).
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.errors import InputError
from aifabric.workload.training import IterationBreakdown, iteration_time, training_cost

MFU = 0.40  # planning default inside Llama 3's published 38–43 % (hardware-facts §H, S92)
TRAIN_TOKENS = 15e12  # Llama 3 405B was pre-trained on ~15.6T tokens (Llama 3 paper) — the default "N tokens"
SERVER_USD_PER_GPU = 310_000 / 8  # HGX H100 node incl. 8 × 400G IB NICs ~310 k USD (S60, low, Aug 2024)
LIFETIME_YEARS = 4.0


@dataclass(frozen=True)
class FabricPerformance:
    key: str
    iteration: IterationBreakdown | None
    training_cost: dict | None

    @property
    def iteration_time_s(self) -> float | None:
        return self.iteration.iteration_s if self.iteration else None

    @property
    def tokens_per_s(self) -> float | None:
        return self.iteration.tokens_per_s if self.iteration else None

    @property
    def cost_per_million_tokens_usd(self) -> float | None:
        return self.training_cost["cost_per_million_tokens_usd"] if self.training_cost else None

    def to_dict(self) -> dict:
        return {
            "fabric": self.key,
            "iteration_time_s": self.iteration_time_s,
            "tokens_per_s": self.tokens_per_s,
            "cost_per_million_tokens_usd": self.cost_per_million_tokens_usd,
            "iteration": self.iteration.to_dict() if self.iteration else None,
            "training_cost": self.training_cost,
        }


@dataclass(frozen=True)
class PerformanceEvidence:
    mfu: float
    train_tokens: float
    server_usd_per_gpu: float
    fabrics: tuple[FabricPerformance, ...]

    def fabric(self, key: str) -> FabricPerformance | None:
        return next((f for f in self.fabrics if f.key == key), None)

    def to_dict(self) -> dict:
        return {
            "mfu": self.mfu,
            "train_tokens": self.train_tokens,
            "server_usd_per_gpu": self.server_usd_per_gpu,
            "fabrics": [f.to_dict() for f in self.fabrics],
        }


def step_time(workload, network, peak_tflops: float, mfu: float = MFU) -> IterationBreakdown | None:
    """One training iteration on one fabric (None when the workload has no training step)."""
    if not workload.is_training_step:
        return None
    return iteration_time(
        workload.model,
        workload.parallelism,
        workload.gpus,
        float(peak_tflops),
        network.comm(),
        mfu=mfu,
        gpus_per_node=workload.gpus_per_node,
        demands=list(workload.collectives),
    )


def fabric_performance(
    workload,
    network,
    peak_tflops: float,
    network_capex_usd: float,
    mfu: float = MFU,
    train_tokens: float = TRAIN_TOKENS,
    server_usd_per_gpu: float = SERVER_USD_PER_GPU,
) -> FabricPerformance:
    it = step_time(workload, network, peak_tflops, mfu)
    cost = None
    if it is not None:
        cost = training_cost(
            train_tokens,
            it.tokens_per_s,
            workload.gpus,
            network_capex_usd,
            server_usd_per_gpu,
            LIFETIME_YEARS,
        )
    return FabricPerformance(network.key, it, cost)


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
    workload,
    design,
    network,
    peak_tflops: float,
    mfu: float = MFU,
    progress=None,
    server_usd: float = SERVER_USD_PER_GPU,
) -> PerformanceEvidence:
    """Every fabric's iteration and cost per token (``server_usd``: servers' price per GPU)."""
    if not 0 < mfu <= 1:
        raise InputError("must be in (0, 1]", field="--mfu", value=mfu, allowed="e.g. 0.4")
    tick = progress or (lambda msg: None)
    out = []
    for fd in design.fabrics:
        if workload.is_training_step:
            tick(f"training iteration on {fd.key}")
        out.append(
            fabric_performance(
                workload,
                network.fabric(fd.key),
                peak_tflops,
                fd.capex_usd,
                mfu,
                server_usd_per_gpu=server_usd,
            )
        )
    return PerformanceEvidence(mfu, TRAIN_TOKENS, server_usd, tuple(out))


def iteration_slowdown(
    workload, base: FabricPerformance, perturbed_network, peak_tflops: float, mfu: float
) -> float:
    """Relative iteration slowdown on ``perturbed_network`` against ``base``."""
    slow = step_time(workload, perturbed_network, peak_tflops, mfu)
    return slow.iteration_s / base.iteration.iteration_s - 1


__all__ = [
    "MFU",
    "SERVER_USD_PER_GPU",
    "TRAIN_TOKENS",
    "FabricPerformance",
    "PerformanceEvidence",
    "fabric_performance",
    "iteration_slowdown",
    "performance",
    "server_usd_per_gpu",
    "step_time",
]
