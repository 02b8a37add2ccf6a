"""Storage traffic of a training job: checkpoint writes and data loading.

* **Checkpoint** = the model state: BF16 weights (2 bytes per parameter) + FP32 master weights and
  Adam moments (12 bytes per parameter) — 14 bytes per parameter, written every
  ``checkpoint_period_s``. Written at min(the storage system's ingest, the writers' NIC bandwidth);
  Llama 3 reports 1 MB–4 GB of state per GPU and a 2 TB/s sustained / 7 TB/s peak storage system for
  16K GPUs (Llama 3 paper §3.3.1, via hardware-facts [S96]).
* **Data loading**: tokens/s × ``bytes_per_token`` (4: 32-bit token ids; estimate) — tiny next to
  checkpoints.
* **On the back-end fabric or not**: reference designs give storage its own NICs and network; only
  when the design puts storage on the back-end (``on_backend``) is it *victim traffic* next to
  training: the checkpoint burst then shares the GPUs' NICs for ``burst_s`` out of every period.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from aifabric.errors import InputError
from aifabric.workload.llm.models import ModelConfig

STATE_BYTES_PER_PARAM = 14.0  # 2 (bf16 weights) + 4 (fp32 master) + 8 (Adam m, v)
# Llama 3 paper §3.3.1 (via hardware-facts [S96]): 2 TB/s sustained storage for 16K H100 — the
# default storage system is sized to the same bandwidth per GPU.
STORAGE_BYTES_PER_S_PER_GPU = 2e12 / 16384
# ASSUMPTION (no public per-node figure): a storage node's network ports, 2 × 400 Gb/s.
STORAGE_NODE_GBPS = 800.0
# Each GPU server's own storage NICs when storage has its own network: DGX H100/H200 and DGX B200
# carry 2 dual-port ConnectX-7 / BlueField-3 cards for storage and in-band management next to the 8
# compute NICs (shared/reference/prices-and-hardware.md §5a, DGX BasePOD RA and DGX B200 user guide);
# ASSUMPTION: one 400 Gb/s port of each carries storage → 800 Gb/s per server.
HOST_STORAGE_GBPS = 800.0
CHECKPOINT_PERIOD_S = 1800.0  # ASSUMPTION: a checkpoint every 30 min (no public default)
BYTES_PER_TOKEN = 4.0  # 32-bit token ids (estimate)


def default_storage_nodes(gpus: int, node_gbps: float = STORAGE_NODE_GBPS) -> int:
    """Storage nodes whose ports carry Llama 3's storage bandwidth per GPU for ``gpus`` GPUs."""
    return max(1, math.ceil(gpus * STORAGE_BYTES_PER_S_PER_GPU / (node_gbps / 8 * 1e9)))


@dataclass(frozen=True)
class StorageTraffic:
    checkpoint_bytes: float
    checkpoint_period_s: float
    burst_s: float  # time one checkpoint write takes
    checkpoint_mean_bps: float  # averaged over the period, bit/s
    data_loading_bps: float
    on_backend: bool
    backend_busy_share: float  # share of time the back-end carries a checkpoint burst (0 when off it)
    per_gpu_bytes: float

    def to_dict(self) -> dict:
        return asdict(self)


def storage_traffic(
    model: ModelConfig,
    gpus: int,
    tokens_per_s: float,
    checkpoint_period_s: float = 1800.0,
    storage_ingest_bytes_per_s: float = 2e12,
    writer_nic_bytes_per_s: float = 47e9,
    bytes_per_token: float = 4.0,
    on_backend: bool = False,
) -> StorageTraffic:
    """Checkpoint and data-loading traffic of a training job (see module docstring)."""
    if checkpoint_period_s <= 0 or gpus < 1:
        raise InputError(
            "must be positive", field="storage.checkpoint_period_s", value=checkpoint_period_s, allowed="> 0"
        )
    size = model.total_params * STATE_BYTES_PER_PARAM
    rate = min(storage_ingest_bytes_per_s, gpus * writer_nic_bytes_per_s)
    burst = size / rate
    return StorageTraffic(
        checkpoint_bytes=size,
        checkpoint_period_s=checkpoint_period_s,
        burst_s=burst,
        checkpoint_mean_bps=size * 8 / checkpoint_period_s,
        data_loading_bps=tokens_per_s * bytes_per_token * 8,
        on_backend=on_backend,
        backend_busy_share=min(1.0, burst / checkpoint_period_s) if on_backend else 0.0,
        per_gpu_bytes=size / gpus,
    )
