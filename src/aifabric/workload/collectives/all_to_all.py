"""All-to-all as NCCL runs it with PXN: an NVLink gather to the destination rail, then per-rail
all-pairs."""

from __future__ import annotations

import math

from aifabric.workload.collectives.base import Step
from aifabric.workload.collectives.layout import Layout


def _pxn_all_to_all(lay: Layout, size: int) -> list[Step]:
    """NCCL's all-to-all with PXN: an NVLink step moving each GPU's data for rail r to local GPU r,
    then one per-rail all-pairs step (every server pair exchanges G·S/n)."""
    nsrv, g, n = lay.servers, lay.local, lay.n
    per_pair = math.ceil(size / n)  # each rank sends S/n to every rank (S = count × n × type)
    steps: list[Step] = []
    if g > 1:
        steps.append(
            Step(
                "nvlink",
                "PXN: NVLink gather to the destination rail",
                groups=lay.hosts,
                pair_bytes=nsrv * per_pair,
            )
        )
    if nsrv > 1:
        steps.append(Step("network", "per-rail all-pairs", groups=lay.hosts.T, pair_bytes=g * per_pair))
    return steps
