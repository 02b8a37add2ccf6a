"""The risk testbed's traffic (:mod:`aifabric.stages.risk.testbed`): the ring step, the incast and, on a
placed job, the other jobs' rings, as a flow table on the pod's hosts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from aifabric.stages.risk.testbed import Testbed

THREE_TIER_K = 8  # the three-tier pod: a k = 8 fat-tree (128 hosts in 8 pods of 16)


def _flows(tb: Testbed, traffic: str):
    """Ring-step flows (ids first), plus the incast for ``congested``; returns (table, ring flows).
    ``three-tier``: every host of the k = 8 fat-tree sends to the same-index host of the next pod."""
    from aifabric.workload.traffic import _table

    if traffic == "three-tier":
        n, pod = THREE_TIER_K**3 // 4, THREE_TIER_K**2 // 4
        src = np.arange(n)
        return _table(src, (src + pod) % n, tb.step_bytes, 0), n

    h, nl = tb.hosts_per_leaf, tb.leaves
    target = h - 1  # host h-1 of leaf 0: the incast target, outside the ring
    src, dst = [], []
    bsrc, bdst = [], []  # shared placement: the other jobs' ring steps (after the ring and the incast)
    if tb.placement == "ideal":
        for leaf in range(nl):
            for i in range(h):
                s, d = leaf * h + i, ((leaf + 1) % nl) * h + i
                if target in (s, d):
                    continue
                src.append(s)
                dst.append(d)
    else:
        src, dst, bsrc, bdst = _placed_rings(tb, target)
    n_ring = len(src)
    ring_t0 = 0 if traffic == "quiet" else int(tb.ring_start_us * 1e6)
    senders = []
    if traffic != "quiet":
        senders = [leaf * h + i for i in range(h) for leaf in range(1, nl)]
        if tb.placement != "ideal":  # as on the ideal ring: the job's own hosts, off the target's leaf
            members = set(src)
            senders = [x for x in senders if x in members]
        senders = senders[: tb.incast_senders]
    sizes = [tb.step_bytes] * n_ring + [tb.incast_bytes] * len(senders) + [tb.step_bytes] * len(bsrc)
    starts = [ring_t0] * n_ring + [0] * len(senders) + [ring_t0] * len(bsrc)
    table = _table(src + senders + bsrc, dst + [target] * len(senders) + bdst, sizes, starts)
    table.attrs["incast_end"] = n_ring + len(senders)
    return table, n_ring


def _placed_rings(tb: Testbed, target: int) -> tuple[list[int], list[int], list[int], list[int]]:
    """(src, dst) of the job's ring over the placement's hosts, then of the background jobs' rings
    (:func:`aifabric.stages.risk.library.placed_rings`)."""
    from aifabric.stages.risk.library import placed_rings

    job, background = placed_rings(tb)

    def ring(hosts) -> tuple[list[int], list[int]]:
        return (hosts.tolist(), np.roll(hosts, -1).tolist()) if len(hosts) >= 2 else ([], [])

    src, dst = ring(job)
    bsrc, bdst = [], []
    for b in background:
        s, d = ring(b)
        bsrc += s
        bdst += d
    return src, dst, bsrc, bdst
