"""Expert-parallel (MoE) all-to-all as DeepEP-style kernels move it: dispatch and combine with
node-limited routing, timed by the same step machinery as every collective
(:mod:`aifabric.workload.collectives`: routed flows through :mod:`aifabric.flow` with the fabric's
routing, or α-β, and the per-NIC efficiency cap).

Routing of tokens (DeepSeek-V3, arXiv 2412.19437 §2.1.2 / §3.4.1): ``experts`` routed experts
spread evenly over the ``ep`` ranks (``experts / ep`` per GPU, a node holding ``G`` GPUs' worth),
each token goes to its ``topk`` experts chosen among at most ``node_limit`` nodes (V3: top-8 of
256, ≤ 4 nodes). Affinities are modelled as uniform random (balanced experts, what the auxiliary-
loss-free balancing aims at): a token picks ``min(node_limit, N)`` of the ``N`` nodes uniformly,
then ``topk`` distinct experts uniformly among those nodes' experts (a multivariate
hypergeometric draw of how many land on each node). Seeded: the same seed gives the same traffic.

Data movement (DeepEP "normal" kernels, deepseek-ai/DeepEP README): *dispatch* sends each token
**once per target node** over RDMA to the GPU with the same local index on that node (its rail:
the inter-node traffic stays rail-aligned), which forwards it over NVLink to the GPUs holding its
experts on that node; a token whose experts are on its own node moves over NVLink only. *Combine*
is the reverse (the expert outputs reduced per node over NVLink, then one RDMA transfer back per
node). Dispatch in FP8 (1 byte per element, plus scales, not modelled), combine in BF16.
NCCL's own all-to-all (grouped send/recv to every peer with PXN) is
``run_collective("all-to-all", …)``; this module is the MoE path the training model and
``compare`` use.

Timing: one network step (every source GPU's RDMA flows at once, routed, max-min) and one NVLink
step, pipelined as in :func:`~aifabric.workload.collectives.run_collective`
(``max(network, NVLink)``), with only the physical latency (DeepEP is not NCCL: NCCL's per-step
constants do not apply; its kernel launch and notify overheads are not modelled). No NIC moves
more than line rate × ``nic_efficiency`` (:data:`~aifabric.workload.collectives.NIC_EFFICIENCY`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from aifabric.errors import InputError
from aifabric.topology.core import Topology
from aifabric.workload.collectives import (
    NIC_EFFICIENCY,
    NvlinkDomain,
    Step,
    host_nic_rate_bps,
    nccl_constants,
    rank_layout,
)
from aifabric.workload.collectives.timing import _Ctx, _time_steps

#: DeepSeek-V3's MoE routing (arXiv 2412.19437 §2.1.2, §3.4.1): 256 routed experts, top-8, each
#: token sent to at most 4 nodes; hidden size 7168 (its config.json). DeepEP's normal-kernel
#: benchmark uses 4096 tokens per batch, FP8 dispatch, BF16 combine (DeepEP README).
DEEPSEEK_V3 = {"experts": 256, "topk": 8, "node_limit": 4, "hidden": 7168, "tokens_per_gpu": 4096}


@dataclass
class ExpertA2AResult:
    """One dispatch + combine. Times in seconds, bandwidths GB/s (1e9 B/s), bytes payload."""

    ep: int
    servers: int
    gpus_per_node: int
    tokens_per_gpu: int
    topk: int
    experts: int
    node_limit: int
    routing: str
    engine: str
    model: str
    dispatch_s: float
    combine_s: float
    dispatch_rdma_bytes: float  # busiest NIC, dispatch (send or receive)
    combine_rdma_bytes: float
    nvlink_bytes_per_gpu: float  # busiest GPU, dispatch
    remote_nodes_per_token: float  # mean distinct other nodes a token is sent to
    nic_line_gbps: float
    nic_efficiency: float
    notes: list[str] = field(default_factory=list)
    in_leaf_share: float | None = None  # of the dispatch's RDMA bytes, the share under one leaf

    @property
    def dispatch_rdma_gbps(self) -> float:
        """The busiest NIC's RDMA bytes over the dispatch time (DeepEP's 'RDMA bandwidth')."""
        return self.dispatch_rdma_bytes / self.dispatch_s / 1e9 if self.dispatch_s > 0 else 0.0

    @property
    def combine_rdma_gbps(self) -> float:
        return self.combine_rdma_bytes / self.combine_s / 1e9 if self.combine_s > 0 else 0.0

    @property
    def nic_fraction(self) -> float:
        """Dispatch RDMA bandwidth over the NIC line rate."""
        return self.dispatch_rdma_gbps / self.nic_line_gbps if self.nic_line_gbps else 0.0

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d.update(
            dispatch_rdma_gbps=self.dispatch_rdma_gbps,
            combine_rdma_gbps=self.combine_rdma_gbps,
            nic_fraction=self.nic_fraction,
        )
        return d


def route_tokens(
    servers: int, gpus_per_node: int, tokens_per_gpu: int, topk: int, experts: int, node_limit: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Node-limited top-k routing of every GPU's tokens (module docstring). Returns
    ``(tokens, gpus_hit)``: ``tokens[s, b]`` how many of source GPU ``s``'s tokens go to node ``b``
    (at least one expert there), ``gpus_hit[s, b]`` the expected number of distinct GPUs of node
    ``b`` those tokens reach, summed over the tokens."""
    n_gpus = servers * gpus_per_node
    if experts % n_gpus:
        raise InputError(
            "experts must spread evenly over the EP ranks",
            field="experts",
            value=experts,
            allowed=f"a multiple of ep = {n_gpus}",
        )
    per_gpu = experts // n_gpus
    per_node = per_gpu * gpus_per_node
    m = min(int(node_limit), servers) if node_limit else servers
    if topk > m * per_node:
        raise InputError(
            "top-k exceeds the experts on the allowed nodes",
            field="topk",
            value=topk,
            allowed=f"≤ {m * per_node} (node_limit × experts per node)",
        )
    rng = np.random.default_rng(seed)
    t_all = n_gpus * tokens_per_gpu
    nodes = np.argsort(rng.random((t_all, servers)), axis=1)[:, :m]  # the token's allowed nodes
    counts = rng.multivariate_hypergeometric([per_node] * m, topk, size=t_all)  # experts per node
    src = np.repeat(np.arange(n_gpus), tokens_per_gpu)
    tokens = np.zeros((n_gpus, servers))
    hit = np.zeros((n_gpus, servers))
    # expected distinct GPUs of a node hit by c of its experts: G·(1 − C(X−e, c)/C(X, c))
    miss = np.array(
        [math.comb(per_node - per_gpu, c) / math.comb(per_node, c) for c in range(topk + 1)], dtype=np.float64
    )
    gpus_for = gpus_per_node * (1.0 - miss)
    for j in range(m):
        c = counts[:, j]
        sel = c > 0
        np.add.at(tokens, (src[sel], nodes[sel, j]), 1.0)
        np.add.at(hit, (src[sel], nodes[sel, j]), gpus_for[c[sel]])
    return tokens, hit


def expert_alltoall(
    topology: Topology,
    ranks=None,
    tokens_per_gpu: int = DEEPSEEK_V3["tokens_per_gpu"],
    hidden: int = DEEPSEEK_V3["hidden"],
    topk: int = DEEPSEEK_V3["topk"],
    experts: int = DEEPSEEK_V3["experts"],
    node_limit: int = DEEPSEEK_V3["node_limit"],
    dispatch_bytes_per_elem: float = 1.0,
    combine_bytes_per_elem: float = 2.0,
    engine: str = "flow",
    routing: str = "adaptive",
    seed: int = 1,
    gpus_per_node: int | None = None,
    gpu: str = "h100",
    switch_latency_ps: float = 0,
    mtu_bytes: int = 4096,
    header_bytes: int = 26,
    nic_efficiency: float | None = None,
    groups: int = 1,
) -> ExpertA2AResult:
    """Time one MoE dispatch and one combine over ``ranks`` (the EP group(s): None = every host,
    a count = the first hosts, or host ids) — see the module docstring. ``groups`` splits the
    ranks into that many EP groups of consecutive whole servers running at once (each group
    routes only among its own nodes); the result describes the busiest NIC of all of them."""
    from aifabric.flow.engine import _path_model  # noqa: F401  (fails early if the flow engine is absent)

    if engine not in ("flow", "analytic"):
        raise InputError("unknown engine", field="engine", value=engine, allowed="flow, analytic")
    for name, v in (
        ("tokens_per_gpu", tokens_per_gpu),
        ("hidden", hidden),
        ("topk", topk),
        ("experts", experts),
    ):
        if int(v) < 1:
            raise InputError("must be ≥ 1", field=name, value=v)
    eta = NIC_EFFICIENCY if nic_efficiency is None else float(nic_efficiency)
    if not 0 < eta <= 1:
        raise InputError(
            "NIC efficiency must be in (0, 1]", field="nic_efficiency", value=eta, allowed="(0, 1]"
        )
    lay = rank_layout(topology, ranks, gpus_per_node)
    if groups < 1 or lay.servers % groups:
        raise InputError(
            "EP groups must split the servers evenly",
            field="groups",
            value=groups,
            allowed=f"a divisor of {lay.servers}",
        )
    g = lay.local
    per = lay.servers // groups
    rows_net, rows_nvl, remote = [], [], []
    hosts = lay.hosts
    for k in range(groups):
        sub = hosts[k * per : (k + 1) * per]  # (per, G)
        tok, hit = route_tokens(
            per, g, int(tokens_per_gpu), int(topk), int(experts), int(node_limit), seed + k
        )
        src_node = np.arange(per * g) // g
        rail = np.arange(per * g) % g
        other = np.arange(per)[None, :] != src_node[:, None]
        remote.append(float((tok * other).sum()) / (per * g * tokens_per_gpu))
        s_i, b_i = np.nonzero((tok > 0) & other)
        src_h = sub.ravel()[s_i]
        dst_h = sub[b_i, rail[s_i]]
        rows_net.append(np.stack([src_h, dst_h, np.rint(tok[s_i, b_i] * hidden).astype(np.int64)], axis=1))
        # NVLink: every GPU forwards what it receives (and its own tokens for its own node) to the
        # expert GPUs of its node, other than itself
        fwd = np.zeros(per * g)
        for b in range(per):
            for r in range(g):
                recv_from = rail == r  # the same-rail GPUs of every node send to (b, r)
                share = hit[recv_from, b].sum() / g  # distinct expert GPUs hit, this rail's share
                fwd[b * g + r] = share * (g - 1) / g * hidden
        rows_nvl.append(
            np.stack([sub.ravel(), np.roll(sub, -1, axis=1).ravel(), np.rint(fwd).astype(np.int64)], axis=1)
        )
    net_pairs = np.concatenate(rows_net) if rows_net else np.zeros((0, 3), dtype=np.int64)
    net_pairs = net_pairs[net_pairs[:, 2] > 0]
    nvl_pairs = np.concatenate(rows_nvl)
    host_index = np.full(topology.num_nodes, -1, dtype=np.int64)
    host_index[topology.hosts] = np.arange(len(topology.hosts))
    nic = host_nic_rate_bps(topology, hosts)
    ctx = _Ctx(
        topology,
        lay,
        routing,
        seed,
        switch_latency_ps,
        mtu_bytes,
        header_bytes,
        NvlinkDomain.for_gpu(gpu),
        nccl_constants(),
        engine,
        10_000_000,
        nic,
        host_index,
        cache={},
        nic_efficiency=eta,
    )

    def timed(scale: float, reverse: bool) -> tuple[float, float, float, str]:
        pr = net_pairs.copy()
        if reverse:
            pr[:, [0, 1]] = pr[:, [1, 0]]
        pr[:, 2] = np.maximum(np.rint(pr[:, 2] * scale), 1)
        nv = nvl_pairs.copy()
        nv[:, 2] = np.rint(nv[:, 2] * scale)
        steps = []
        if len(pr):
            steps.append(
                Step("network", "expert all-to-all: RDMA to the same-rail GPU of each target node", pairs=pr)
            )
        if g > 1:
            steps.append(Step("nvlink", "expert all-to-all: NVLink forward to the expert GPUs", pairs=nv))
        r = _time_steps(ctx, "all-to-all", steps, "ring", "simple", False, True, False)
        busiest = 0.0
        if len(pr):
            tx, rx = steps[0].host_bytes(len(topology.hosts), host_index)
            busiest = max(float(tx.max()), float(rx.max()))
        nvl = float(nv[:, 2].max()) if g > 1 else 0.0
        return r["time"], busiest, nvl, r["model"]

    t_d, b_d, nvl_d, model = timed(dispatch_bytes_per_elem, False)
    t_c, b_c, _, _ = timed(combine_bytes_per_elem, True)
    notes = [
        f"node-limited routing: top-{topk} of {experts} experts on ≤ {node_limit} nodes (uniform affinities, seed {seed})",
        "physical latency only (DeepEP kernel overheads not modelled)",
    ]
    return ExpertA2AResult(
        ep=lay.n // groups,
        servers=lay.servers,
        gpus_per_node=g,
        tokens_per_gpu=int(tokens_per_gpu),
        topk=int(topk),
        experts=int(experts),
        node_limit=int(node_limit),
        routing=routing,
        engine=engine,
        model=model if engine == "flow" else "alpha-beta",
        dispatch_s=t_d,
        combine_s=t_c,
        dispatch_rdma_bytes=b_d,
        combine_rdma_bytes=b_c,
        nvlink_bytes_per_gpu=nvl_d,
        remote_nodes_per_token=float(np.mean(remote)),
        nic_line_gbps=nic / 8e9,
        nic_efficiency=eta,
        notes=notes,
        in_leaf_share=topology.in_leaf_share(net_pairs[:, 0], net_pairs[:, 1], net_pairs[:, 2]),
    )


def expert_a2a_efficiency(result: ExpertA2AResult) -> float:
    """Dispatch's achieved fraction of an ideal NIC: the busiest NIC's wire bytes at line rate over
    the dispatch time (what ``compare``'s α-β model multiplies the NIC rate by for all-to-all)."""
    if result.dispatch_s <= 0 or result.dispatch_rdma_bytes <= 0:
        return 1.0
    return min(1.0, result.dispatch_rdma_bytes / (result.nic_line_gbps * 1e9) / result.dispatch_s)


__all__ = ["DEEPSEEK_V3", "ExpertA2AResult", "expert_a2a_efficiency", "expert_alltoall", "route_tokens"]
