"""Broadcast: an NVLink scatter from the root, a per-rail pipelined chain of servers, an NVLink
all-gather."""

from __future__ import annotations

import numpy as np

from aifabric.workload.collectives.base import Step
from aifabric.workload.collectives.layout import Layout
from aifabric.workload.collectives.ring import _nvl_ring


def _chain_broadcast(lay: Layout, shard: int, root: int) -> list[Step]:
    """The root's server scatters ``shard`` (S/G) per GPU over NVLink, a per-rail pipelined chain
    of the servers carries it, an NVLink all-gather completes it."""
    nsrv, g, n = lay.servers, lay.local, lay.n
    steps: list[Step] = []
    r_srv = int(root) // g if 0 <= int(root) < n else 0
    if g > 1:
        rh = lay.hosts[r_srv, int(root) % g]
        peers = lay.hosts[r_srv][lay.hosts[r_srv] != rh]
        steps.append(
            Step(
                "nvlink",
                "nvlink scatter from the root",
                pairs=np.stack([np.full(len(peers), rh), peers, np.full(len(peers), shard)], axis=1),
            )
        )
    if nsrv > 1:
        order = np.roll(np.arange(nsrv), -r_srv)
        chain = lay.hosts[order]  # (N, G)
        pr = np.stack([chain[:-1].ravel(), chain[1:].ravel(), np.full((nsrv - 1) * g, shard)], axis=1)
        steps.append(Step("network", "per-rail pipelined chain", latency_hops=nsrv - 1, pairs=pr))
    steps += _nvl_ring(lay, shard, "nvlink all-gather")
    return steps
