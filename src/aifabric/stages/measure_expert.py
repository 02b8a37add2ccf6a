"""The *measure* stage's MoE expert all-to-all: the DeepEP-style dispatch of every expert-parallel
group at once on the design's topology, with the fabric's routing and the job's placement
(:func:`expert_a2a_efficiency_for`; :mod:`aifabric.workload.expert_parallel` is the same code the
``collective`` command and the risk testbed use)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from aifabric.stages.measure import HEADER_BYTES, MTU_BYTES, _topology_key, rail_topology

#: tokens per GPU of the expert all-to-all *measure* runs: enough for the traffic's shape (the
#: efficiency is a ratio), fewer than DeepEP's 4096 to keep 1k-GPU designs quick
EP_TOKENS_PER_GPU = 512


def expert_a2a_efficiency_for(fd, workload, gpus_per_node: int, seed: int, routing: str) -> float | None:
    """A MoE workload whose expert-parallel group spans servers: the DeepEP-style dispatch
    (:func:`aifabric.workload.expert_parallel.expert_alltoall`: node-limited routing, RDMA to the
    same-rail GPU of each target node, then NVLink) of every EP group at once on the design's
    topology with the fabric's routing, as a fraction of an ideal NIC (``nic_efficiency`` 1: like
    the ring step's, the NIC's own efficiency is the risk stage's input), on the job's placement: the
    EP groups are consecutive ranks, so on a fragmented or shared placement their servers are the
    job's random free nodes (the background jobs' own traffic is not added to this pattern). None
    when the workload has no such group (dense model, EP inside a server, or experts not spread
    evenly)."""
    model, lay, spec = workload.model, workload.parallelism, workload.spec
    if model is None or not getattr(model, "is_moe", False) or lay is None or lay.ep < 2 or spec is None:
        return None
    fw = spec.framework.to_framework()
    stride = fw.etp(lay.tp)
    span = lay.ep * stride
    nodes = workload.gpus // gpus_per_node
    if span <= gpus_per_node or span % gpus_per_node or nodes % (span // gpus_per_node):
        return None
    ep_gpus = span  # the EP group's servers take part whole (each GPU is a rank of some group)
    if model.experts % ep_gpus:
        return None
    groups, hosts = nodes // (span // gpus_per_node), None
    pl = getattr(workload, "placement", None)
    if pl is not None and pl.kind != "ideal":
        from aifabric.workload.placement import rank_hosts

        groups = pl.job_nodes // (span // gpus_per_node)  # whole groups on the job's nodes
        if groups < 1:
            return None
        hosts = tuple(int(h) for h in rank_hosts(pl, gpus_per_node)[: groups * span])
    return _expert_a2a_efficiency(
        _topology_key(fd, gpus_per_node),
        fd.technology,
        routing,
        seed,
        groups,
        int(model.hidden),
        int(model.experts_per_token),
        int(model.experts),
        int(fw.a2a_node_limit or 0),
        fd.switch_hop_ns * 1000,
        hosts,
    )


@lru_cache(maxsize=16)
def _expert_a2a_efficiency(
    topo_key, technology, routing, seed, groups, hidden, topk, experts, node_limit, hop_ps, hosts=None
):
    from aifabric.workload.expert_parallel import expert_a2a_efficiency, expert_alltoall

    topo = rail_topology(*topo_key)
    r = expert_alltoall(
        topo,
        None if hosts is None else np.asarray(hosts, dtype=np.int64),
        tokens_per_gpu=EP_TOKENS_PER_GPU,
        hidden=hidden,
        topk=topk,
        experts=experts,
        node_limit=node_limit or 10**9,
        routing=routing,
        seed=seed,
        gpus_per_node=topo_key[2],
        switch_latency_ps=hop_ps,
        mtu_bytes=MTU_BYTES[technology],
        header_bytes=HEADER_BYTES[technology],
        nic_efficiency=1.0,
        groups=groups,
    )
    return expert_a2a_efficiency(r)


__all__ = ["EP_TOKENS_PER_GPU", "expert_a2a_efficiency_for"]
