"""NCCL's PAT (Parallel Aggregated Trees): all-gather / reduce-scatter with one GPU per node."""

from __future__ import annotations

import math

import numpy as np

from aifabric.workload.collectives.base import Step
from aifabric.workload.collectives.layout import Layout


def _pat(lay: Layout, total: int, op: str) -> list[Step]:
    """NCCL's PAT (Parallel Aggregated Trees, NCCL ≥ 2.23; all-gather / reduce-scatter, Simple,
    one GPU per node): ⌈log2 n⌉ network steps, Bruck-like — step k moves min(2^k, n − 2^k) blocks
    of ``total / n`` to the rank 2^k away — so each NIC moves the ring's (n−1)/n · S in
    log2(n) latencies instead of n − 1. Reduce-scatter runs the same steps in reverse."""
    hosts = lay.hosts.ravel()
    n = len(hosts)
    block = math.ceil(total / n)
    out, d = [], 1
    while d < n:
        blocks = min(d, n - d)
        dst = np.roll(hosts, -d)
        out.append(
            Step(
                "network",
                f"PAT {op} step (distance {d})",
                pairs=np.stack([hosts, dst, np.full(n, blocks * block, dtype=np.int64)], axis=1),
            )
        )
        d *= 2
    return out if op == "all-gather" else out[::-1]
