"""The *measure* stage's MoE expert all-to-all: the DeepEP-style dispatch of every expert-parallel
group at once on the design's topology, with the fabric's routing and the job's placement
(:func:`expert_a2a_efficiency_for`; :mod:`aifabric.workload.expert_parallel` is the same code the
``collective`` command and the risk testbed use)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from aifabric.stages.measure.flows import HEADER_BYTES, MTU_BYTES, rail_topology, topology_key

#: tokens per GPU of the expert all-to-all *measure* runs: enough for the traffic's shape (the
#: efficiency is a ratio), fewer than DeepEP's 4096 to keep 1k-GPU designs quick
EP_TOKENS_PER_GPU = 512


def expert_a2a_efficiency_for(fd, workload, gpus_per_node: int, seed: int, routing: str) -> float | None:
    """The MoE all-to-all's efficiency on this fabric (:func:`expert_a2a_for`), or None."""
    ev = expert_a2a_for(fd, workload, gpus_per_node, seed, routing)
    return None if ev is None else ev["efficiency"]


def _ep_geometry(workload, gpus_per_node: int) -> tuple[int, int, int, int] | None:
    """(GPUs of one EP group, groups at once, node limit (0: none), tokens per GPU) of the job's
    expert all-to-all across servers, or None. Training: the reference layout's EP × expert-TP
    ranks, node-limited as the framework says. Inference (wide EP): an instance beyond one node is
    one EP group, every top-k copy its own message (no node limit; the decode model's)."""
    model, g = workload.model, gpus_per_node
    inf, serving = getattr(workload, "inference", None), getattr(workload, "serving", None)
    if inf is not None and serving and serving.get("needs_backend"):
        from aifabric.workload.llm.models import resolve_model

        model = resolve_model(inf.model)
        span = int(serving["gpus_per_instance"])
        if not model.is_moe or span <= g or span % g:
            return None
        return span, workload.gpus // span, 0, EP_TOKENS_PER_GPU
    lay, spec = workload.parallelism, workload.spec
    if model is None or not getattr(model, "is_moe", False) or lay is None or lay.ep < 2 or spec is None:
        return None
    fw = spec.framework.to_framework()
    span = lay.ep * fw.etp(lay.tp)
    if span <= g or span % g:
        return None
    return span, workload.gpus // span, int(fw.a2a_node_limit or 0), EP_TOKENS_PER_GPU


def expert_a2a_for(fd, workload, gpus_per_node: int, seed: int, routing: str) -> dict | None:
    """A MoE workload whose expert-parallel group spans servers: the DeepEP-style dispatch
    (:func:`aifabric.workload.expert_parallel.expert_alltoall`: RDMA to the same-rail GPU of each
    target node, then NVLink) of every EP group at once (training: the layout's EP groups; inference:
    every instance) on the design's topology with the fabric's routing, as a fraction of an ideal NIC
    (``nic_efficiency`` 1: like the ring step's, the NIC's own efficiency is the risk stage's input),
    on the job's placement: the EP groups are consecutive ranks, so on a fragmented or shared
    placement their servers are the job's random free nodes (the background jobs' own traffic is not
    added to this pattern). ``{"efficiency", "in_leaf_share", "groups", "ranks_per_group",
    "node_limit"}``, or None when the workload has no such group (dense model, EP inside a server,
    or experts not spread evenly)."""
    geo = _ep_geometry(workload, gpus_per_node)
    model = workload.model
    if getattr(workload, "inference", None) is not None:
        from aifabric.workload.llm.models import resolve_model

        model = resolve_model(workload.inference.model)
    if geo is None or model.experts % geo[0]:
        return None
    span, groups, node_limit, tokens = geo
    hosts = None
    if workload.gpus % span:  # whole groups only: the first groups x span hosts (ideal placement)
        hosts = tuple(range(groups * span))
    pl = getattr(workload, "placement", None)
    if pl is not None and pl.kind != "ideal":
        from aifabric.workload.placement import rank_hosts

        groups = pl.job_nodes // (span // gpus_per_node)  # whole groups on the job's nodes
        hosts = tuple(int(h) for h in rank_hosts(pl, gpus_per_node)[: groups * span])
    if groups < 1:
        return None
    eff, in_leaf = _expert_a2a_efficiency(
        topology_key(fd, gpus_per_node),
        fd.technology,
        routing,
        seed,
        groups,
        int(model.hidden),
        int(model.experts_per_token),
        int(model.experts),
        node_limit,
        fd.switch_hop_ns * 1000,
        hosts,
        tokens,
    )
    return {
        "efficiency": eff,
        "in_leaf_share": in_leaf,
        "groups": groups,
        "ranks_per_group": span,
        "node_limit": node_limit or None,
    }


@lru_cache(maxsize=16)
def _expert_a2a_efficiency(
    topo_key,
    technology,
    routing,
    seed,
    groups,
    hidden,
    topk,
    experts,
    node_limit,
    hop_ps,
    hosts=None,
    tokens=0,
) -> tuple[float, float | None]:
    from aifabric.workload.expert_parallel import expert_a2a_efficiency, expert_alltoall

    topo = rail_topology(*topo_key)
    r = expert_alltoall(
        topo,
        None if hosts is None else np.asarray(hosts, dtype=np.int64),
        tokens_per_gpu=tokens or EP_TOKENS_PER_GPU,
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
    return expert_a2a_efficiency(r), r.in_leaf_share


__all__ = ["EP_TOKENS_PER_GPU", "expert_a2a_efficiency_for", "expert_a2a_for"]
