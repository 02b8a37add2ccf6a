"""The *measure* stage's in-network reduction: SHARP on the InfiniBand designs whose switches have it
(the catalog's ``in_network_reduction``: SHARPv3 on Quantum-2 QM9700/QM9790, SHARPv4 on Quantum-X800),
with the limits the ``collective`` command applies (:mod:`aifabric.workload.collectives`):

* **operations** — all-reduce only (NCCL's CollNet). In a training step that is the data-parallel
  gradient all-reduce of ZeRO-0 (DDP); Megatron's distributed optimizer reduce-scatters gradients and
  all-gathers parameters, which stay on the ring: an in-network reduce-scatter sends the whole buffer
  into the switch (S, against the ring's (n−1)/n·S per NIC), so it would not cut a NIC's bytes (the
  same arithmetic as NVLink SHARP's, NVIDIA/nccl issue #1506, maintainer's answer);
* **groups** — at most :data:`~aifabric.workload.collectives.SHARP_TREES_PER_SWITCH` concurrent
  streaming-aggregation trees per switch (hardware-facts §F [S78][S79]): every data-parallel group
  whose ranks span more than one NVLink domain needs one on each leaf it reaches; when a leaf would
  need more, SHARP is not granted and NCCL runs the ring (the step ends with its slowest group);
* **message sizes** — none modelled (the ``collective`` model has none either).

When granted, a network all-reduce of S bytes costs each NIC S out and S back (instead of the ring's
2(n−1)/n · S) at the fabric's measured bandwidth, after NCCL's CollNet-Direct network latency (31 µs,
[S16]) and the path latency (:class:`aifabric.stages.measure.network.FabricComm`).

Ethernet designs get none: no shipping Ethernet switch has an in-network reduction NCCL uses with a
public source (the ``collective`` model's note), said in the assumption register.
"""

from __future__ import annotations

import numpy as np

SHARP_SOURCE = (
    "switch catalog in_network_reduction (QM9700: SHARPv3, S21; Quantum-X800: SHARPv4, S25); NCCL CollNet "
    "with the NCCL-RDMA-SHARP plugin (S78): all-reduce only in this model, at most 2 streaming-aggregation "
    "trees per switch (S78, S79); each NIC sends and receives the buffer once (hardware-facts §F)"
)
NO_ETHERNET = (
    "none: no shipping Ethernet switch has an in-network reduction that NCCL uses with a public source "
    "(the collective model's note); Ethernet all-reduces stay on the ring / tree"
)


def trees_per_leaf(lay, gpus: int, gpus_per_node: int, radix: int, domain: int, etp: int) -> int:
    """The most SHARP trees one leaf switch would hold at once: the data-parallel groups (dense DP × CP
    and, for MoE, expert DP) with a rank under it whose ranks span more than one NVLink domain of
    ``domain`` GPUs (a rail-optimised leaf = one rail of one scalable unit, as the measured topology)."""
    from aifabric.topology.builders import rail_sizing
    from aifabric.workload.llm.layout import dense_sizes, expert_sizes, group_ranks

    g = gpus_per_node
    d = rail_sizing(gpus, g, radix)
    per_leaf = d.nodes_per_su if d.tiers > 1 else max(1, gpus // g)
    rows = [group_ranks(dense_sizes(lay), lay.order, ("cp", "dp"))]
    if lay.ep > 1:
        rows.append(group_ranks(expert_sizes(lay, etp), lay.order, ("dp",)))
    units = -(-gpus // g // per_leaf)
    keys = []
    for i, r in enumerate(rows):
        r = r[(r // domain != (r[:, :1] // domain)).any(axis=1)]  # groups that use the network
        leaf = (r % g) * units + (r // g) // per_leaf
        group = np.arange(len(r))[:, None] + i * (len(rows[0]) + 1)
        keys.append((group * g * units + leaf).ravel())
    if not any(len(k) for k in keys):
        return 0
    leaves = np.unique(np.concatenate(keys)) % (g * units)
    return int(np.bincount(leaves).max())


def sharp_grant(fd, workload) -> dict | None:
    """SHARP on this fabric for the job's reference layout (module docstring), or None where the
    switch has no in-network reduction or the job no data-parallel traffic on the network."""
    from aifabric.workload.collectives import SHARP_TREES_PER_SWITCH

    lay = workload.parallelism
    if (
        not getattr(fd, "in_network_reduction", None)
        or lay is None
        or workload.gpus <= workload.gpus_per_node
    ):
        return None
    etp = workload.spec.framework.to_framework().etp(lay.tp)
    domain = _job_domain_of(workload)
    trees = trees_per_leaf(lay, workload.gpus, workload.gpus_per_node, fd.radix, domain, etp)
    granted = trees <= SHARP_TREES_PER_SWITCH
    return {
        "generation": fd.in_network_reduction,
        "granted": granted,
        "trees_per_leaf": trees,
        "trees_per_switch_limit": SHARP_TREES_PER_SWITCH,
        "operations": ["all-reduce"],
        "applies_to": "the data-parallel gradient all-reduce (ZeRO-0) and any other network all-reduce; "
        "reduce-scatter and all-gather stay on the ring",
        "note": "granted"
        if granted
        else f"not granted: a leaf would hold {trees} trees, at most "
        f"{SHARP_TREES_PER_SWITCH}; NCCL falls back to the ring",
        "source": SHARP_SOURCE,
    }


def _job_domain_of(workload) -> int:
    """The NVLink domain the job's ranks are laid over (the measured patterns' own)."""
    ring = workload.pattern("dp-ring-step")
    return max(workload.gpus_per_node, getattr(ring, "domain", 0) or 0)


__all__ = ["NO_ETHERNET", "SHARP_SOURCE", "sharp_grant", "trees_per_leaf"]
