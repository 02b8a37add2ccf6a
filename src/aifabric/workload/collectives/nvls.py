"""NVLink SHARP (NVLS, NVLSTree) and SHARP in-network reduction steps."""

from __future__ import annotations

import math

import numpy as np

from aifabric.workload.collectives.base import Step
from aifabric.workload.collectives.layout import Layout
from aifabric.workload.collectives.tree import _rail_tree


def _nvls_step(lay: Layout, sent: int, received: int, label: str, latency_hops: int = 1) -> Step:
    hosts = lay.hosts.ravel()
    return Step(
        "nvls",
        label,
        latency_hops=latency_hops,
        recv_bytes=int(received),
        pairs=np.stack([hosts, hosts, np.full(len(hosts), int(sent))], axis=1),
    )


def _decompose_nvls(op, size, lay: Layout, algorithm: str, sharp: bool) -> list[Step]:
    """NVLS (one server, or with SHARP between servers) and NVLSTree, see the module docstring."""
    shard = math.ceil(size / lay.local)
    reduce = _nvls_step(lay, size, shard, "NVLS reduce-scatter (multimem.ld_reduce in the NVSwitch)")
    mcast = _nvls_step(
        lay,
        shard,
        size,
        "NVLS all-gather (multimem.st multicast)",
        latency_hops=0 if op == "all-reduce" else 1,
    )
    if op == "reduce-scatter":
        return [reduce]
    if op == "all-gather":
        return [mcast]
    steps = [reduce]
    if lay.servers > 1 and algorithm == "nvls-tree":
        steps.append(_rail_tree(lay, shard))
    elif lay.servers > 1:  # NVLS + SHARP: the heads' shards through the switch reduction once
        steps.append(_sharp_step(lay, shard, "SHARP in-network all-reduce of the NVLS shard"))
    return steps + [mcast]


def _sharp_step(lay: Layout, shard: int, label: str) -> Step:
    """Every NIC sends its ``shard`` once into the switch reduction tree and gets the result once."""
    hosts = lay.hosts.ravel()
    return Step("sharp", label, pairs=np.stack([hosts, hosts, np.full(len(hosts), shard)], axis=1))
