"""A simple, sourced α-β network model of a *published* cluster — for validation only.

The performance stage passes each fabric's measured network model to the step-time model; this
module is the stand-in used when checking the step-time model against published step times
(:mod:`aifabric.workload.llm.validation`), where the cluster is described only by its link rate.

**Validation network (α-β, NCCL-style)** — one GPU ↔ one NIC on its own rail:

* network bandwidth = link rate / 8 × NIC efficiency 0.94 (nccl-tests, two nodes, NCCL_ALGO=RING:
  46–48 GB/s per NDR 400 Gb/s NIC = 0.92–0.96 of 50 GB/s, hardware-facts §G.3 [S4]);
* NVLink bandwidth = per-direction NVLink bandwidth × 0.82 (8 × H100 ring busbw ≈ 370 GB/s of
  450 GB/s, [S3]/[S80]);
* latency per step: NCCL's own tuner constants, Simple protocol (hardware-facts §D [S16]): network
  14 µs, NVLink 3.4 µs, base 8.4 µs; ring bandwidth terms, and a log₂(n) (tree) latency term for
  all-reduce, as NCCL switches to trees at scale.

Times: all-reduce 2(n−1)/n · S/β; all-gather, reduce-scatter, all-to-all (n−1)/n · S/β; send-recv
and broadcast S/β (S = the full buffer, nccl-tests convention, hardware-facts §G.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aifabric.errors import InputError
from aifabric.workload.nic import NIC_EFFICIENCY  # [S4] 46–48 GB/s per 400 Gb/s NIC

NVLINK_EFFICIENCY = 0.82  # [S3]/[S80] 370 of 450 GB/s
NCCL_BASE_S = 8.4e-6  # [S16] base latency, Simple
NCCL_NET_STEP_S = 14.0e-6  # [S16] per-step network latency, Simple
NCCL_NVLINK_STEP_S = 3.4e-6  # [S16] per-step NVLink latency, Simple

#: a pipeline stage's send to the next stage: timed as a send-recv; a measured fabric gives it the
#: efficiency of the job's placed stage-boundary pattern (aifabric.stages.measure.network), not the random
#: permutation's
PIPELINE_SEND_RECV = "pp-send-recv"
OPS = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "send-recv",
    "broadcast",
    PIPELINE_SEND_RECV,
)


@dataclass(frozen=True)
class AlphaBetaNetwork:
    """α-β collective times for a cluster with ``link_gbps`` per GPU NIC (validation network)."""

    link_gbps: float = 400.0
    nvlink_bytes_per_s: float = 450e9  # per GPU per direction (from the GPU table)
    nic_efficiency: float = NIC_EFFICIENCY
    nvlink_efficiency: float = NVLINK_EFFICIENCY
    label: str = "validation α-β network"

    def bandwidth_bytes_per_s(self, span: str) -> float:
        if span == "nvlink":
            return self.nvlink_bytes_per_s * self.nvlink_efficiency
        return self.link_gbps * 1e9 / 8 * self.nic_efficiency

    def collective_s(self, op: str, size_bytes: float, ranks: int, span: str) -> float:
        """Seconds for one collective of ``size_bytes`` among ``ranks`` ranks over ``span``."""
        n = int(ranks)
        if n < 2 or size_bytes <= 0:
            return 0.0
        beta = self.bandwidth_bytes_per_s(span)
        step = NCCL_NVLINK_STEP_S if span == "nvlink" else NCCL_NET_STEP_S
        if op == "all-reduce":
            return NCCL_BASE_S + 2 * math.ceil(math.log2(n)) * step + size_bytes * 2 * (n - 1) / n / beta
        if op in ("all-gather", "reduce-scatter"):
            return (
                NCCL_BASE_S + min(n - 1, 2 * math.ceil(math.log2(n))) * step + size_bytes * (n - 1) / n / beta
            )
        if op == "all-to-all":
            return NCCL_BASE_S + step + size_bytes * (n - 1) / n / beta
        if op in ("send-recv", "broadcast", PIPELINE_SEND_RECV):
            return NCCL_BASE_S + step + size_bytes / beta
        raise InputError("unknown collective", field="op", value=op, allowed=", ".join(OPS))
