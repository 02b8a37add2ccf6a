"""Rings: NCCL's flat ring across servers (rail-aligned channels) and the NVLink ring inside one."""

from __future__ import annotations

import math

import numpy as np

from aifabric.workload.collectives.base import Step
from aifabric.workload.collectives.layout import Layout


def _ring_pairs(groups: np.ndarray, nbytes: int) -> np.ndarray:
    """Each row is a ring: member i sends ``nbytes`` to member i+1."""
    src = groups.ravel()
    dst = np.roll(groups, -1, axis=1).ravel()
    return np.stack([src, dst, np.full(len(src), nbytes, dtype=np.int64)], axis=1)


def _nvl_ring(lay: Layout, nbytes: int, label: str) -> list[Step]:
    g = lay.local
    if g < 2 or nbytes <= 0:
        return []
    return [Step("nvlink", label, repeat=g - 1, pairs=_ring_pairs(lay.hosts, nbytes))]


def _flat_ring(lay: Layout, total: int, steps: int, inter_steps: int, label: str) -> list[Step]:
    """NCCL's ring across servers: one flat ring through all ``n`` ranks per channel, its
    channels spread over the ``G`` NICs of a server (NCCL's graph search keeps a channel on one
    rail, in and out, with ``crossNic`` 0 on rail-optimised nodes), so channel ``c`` crosses from
    server ``k`` to ``k + 1`` on rail ``c`` and visits the other ``G − 1`` GPUs over NVLink.
    ``steps`` ring steps (2(n−1) all-reduce, n−1 reduce-scatter / all-gather), every rank sending
    one chunk ``total / (n·G)`` per channel group per step: per NIC ``steps × total / (n·G)``,
    i.e. 2(n−1)/n · S/G for all-reduce — busbw ≤ G × the NIC's rate, whatever N. NVLink: each
    GPU forwards ``G − 1`` of the ``G`` channel groups' chunks per step. Latency as NCCL's tuner
    counts it: ``inter_steps`` network steps (2(N−1) / N−1), the rest NVLink steps."""
    g = lay.local
    chunk = math.ceil(total / (lay.n * g))
    out = [
        Step(
            "network",
            f"{label}: flat ring, rail-aligned channels, inter-server hops",
            repeat=steps,
            latencies=inter_steps,
            pairs=_ring_pairs(lay.hosts.T, chunk),
        )
    ]
    if g > 1:
        out.append(
            Step(
                "nvlink",
                f"{label}: flat ring, NVLink hops inside each server",
                repeat=steps,
                latencies=steps - inter_steps,
                pairs=_ring_pairs(lay.hosts, (g - 1) * chunk),
            )
        )
    return out
