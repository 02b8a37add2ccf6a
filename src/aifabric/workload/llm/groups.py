"""Collective time of a parallel group laid over NVLink domains, and the MoE expert-parallel
dispatch / combine — the one code the training step model (:mod:`~aifabric.workload.llm.step`), the
inference decode model (:mod:`~aifabric.workload.llm.inference`) and the DeepEP validation
(:mod:`~aifabric.workload.llm.validation_collectives`) time an all-to-all with.

**Group time** (:func:`group_time`): a group of ``ranks`` ranks ``stride`` apart, on NVLink domains
of ``domain`` GPUs, is timed hierarchically: inside one domain over NVLink; one rank per domain over
the network; otherwise the NVLink part over the ``L`` ranks of a domain plus the network part over
the ``N`` domains with 1/L of the bytes (all-reduce, reduce-scatter, all-gather — each of the L NICs
carries its share), or, for an all-to-all, the larger of the NVLink part and the network part with
the full per-GPU bytes (the two run at once: DeepEP's NVLink forwarding and RDMA overlap).

**Expert all-to-all** (:func:`ep_dispatch_combine`): per MoE layer, each GPU dispatches its
``tokens`` × top-k copies of a hidden-size activation and combines as many back:

* bytes: dispatch ``tokens · k · hidden`` × 2 (BF16) or × (1 + 4/128) (FP8 with one FP32 scale per
  1 × 128 tile: DeepSeek-V3, arXiv 2412.19437 §3.3.2; DeepEP counts the same, ``fp8_factor =
  (1 + 4/128) / 2`` of BF16 in tests/test_internode.py and ``hidden + hidden/128·4`` bytes a token
  in tests/test_low_latency.py, deepseek-ai/DeepEP @3b1045d); combine ``tokens · k · hidden · 2``
  (BF16);
* node-limited routing (DeepSeek-V3 §2.1.2 / §3.4.1: a token is sent over the network at most once
  per target node, to ≤ M nodes, and forwarded over NVLink inside it): the network carries
  ``min(k, M, N)/k`` of the bytes, ``N`` the nodes the group spans — a token cannot reach more nodes
  than there are; the all-to-all's (N − 1)/N then leaves the copies to other nodes;
* without a node limit (DeepEP's low-latency kernels send every top-k copy as its own message)
  the network carries all the bytes to other nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

#: FP32 scale bytes per FP8 value: one 4-byte scale per 1 × 128 activation tile (DeepSeek-V3 §3.3.2)
FP8_SCALE_BYTES_PER_VALUE = 4 / 128


def group_domains(ranks: int, stride: int, domain: int) -> tuple[int, int]:
    """(ranks of the group inside one NVLink domain, domains the group spans) for ``ranks`` ranks
    ``stride`` apart on ``domain``-GPU domains."""
    local = max(1, domain // stride) if stride < domain else 1
    return local, -(-ranks // local)


def group_time(
    comm, op: str, size_bytes: float, ranks: int, stride: int, domain: int, net_share: float = 1.0
) -> tuple[float, str]:
    """Seconds of one collective of a group of ``ranks`` ranks ``stride`` apart (see module doc).
    ``net_share`` scales the bytes an all-to-all puts on the network (node-limited routing)."""
    if ranks < 2 or size_bytes <= 0:
        return 0.0, "none"
    if stride * ranks <= domain:
        return comm.collective_s(op, size_bytes, ranks, "nvlink"), "nvlink"
    if stride >= domain:
        share = net_share if op == "all-to-all" else 1.0
        return comm.collective_s(op, size_bytes * share, ranks, "network"), "network"
    local, nodes = group_domains(ranks, stride, domain)
    if op in ("all-reduce", "reduce-scatter", "all-gather"):
        t = comm.collective_s(op, size_bytes, local, "nvlink") + comm.collective_s(
            op, size_bytes / local, nodes, "network"
        )
    elif op == "all-to-all":
        t = max(
            comm.collective_s(op, size_bytes, local, "nvlink"),
            comm.collective_s(op, size_bytes * net_share, nodes, "network"),
        )
    else:
        t = comm.collective_s(op, size_bytes, ranks, "network")
    return t, "nvlink+network"


def moe_a2a_bytes(tokens: float, topk: int, hidden: int, fp8_dispatch: bool) -> tuple[float, float]:
    """Per-GPU bytes of one dispatch and one combine (module doc): FP8 dispatch carries its scales."""
    copies = tokens * topk * hidden
    per_value = 1.0 + FP8_SCALE_BYTES_PER_VALUE if fp8_dispatch else 2.0
    return copies * per_value, copies * 2.0


def node_limit_share(topk: int, node_limit: int | None, nodes: int) -> float:
    """The share of the top-k copies a token puts on the network under node-limited routing: it
    crosses to at most ``min(k, node_limit, nodes)`` nodes, once each (1 without a limit)."""
    if not node_limit:
        return 1.0
    return min(topk, node_limit, max(1, nodes)) / topk


@dataclass(frozen=True)
class EpAllToAll:
    """One MoE layer's dispatch and combine on one GPU."""

    dispatch_s: float
    combine_s: float
    dispatch_bytes: float  # per GPU, all top-k copies (what the all-to-all moves before node limiting)
    combine_bytes: float
    net_share: float  # of those bytes, the share routed over the network (node-limited routing)
    span: str  # nvlink | network | nvlink+network | none
    dispatch_bound: str = ""  # the part that sets the dispatch time (nvlink | network), else the span
    combine_bound: str = ""


def ep_dispatch_combine(
    comm,
    tokens: float,
    topk: int,
    hidden: int,
    ep: int,
    stride: int,
    domain: int,
    fp8_dispatch: bool,
    node_limit: int | None = None,
) -> EpAllToAll:
    """Dispatch and combine of ``tokens`` tokens per GPU over an EP group of ``ep`` ranks ``stride``
    apart on ``domain``-GPU NVLink domains, on the fabric ``comm`` times (module doc)."""
    disp, comb = moe_a2a_bytes(tokens, topk, hidden, fp8_dispatch)
    local, nodes = group_domains(ep, stride, domain)
    share = node_limit_share(topk, node_limit, nodes)
    t_d, span = group_time(comm, "all-to-all", disp, ep, stride, domain, share)
    t_c, _ = group_time(comm, "all-to-all", comb, ep, stride, domain, share)
    bounds = (span, span)
    if span == "nvlink+network":  # which part sets each time: the NVLink part alone, timed the same way
        bounds = tuple(
            "nvlink" if group_time(comm, "all-to-all", b, local, stride, domain)[0] >= t else "network"
            for b, t in ((disp, t_d), (comb, t_c))
        )
    return EpAllToAll(t_d, t_c, disp, comb, share, span, *bounds)


__all__ = [
    "FP8_SCALE_BYTES_PER_VALUE",
    "EpAllToAll",
    "ep_dispatch_combine",
    "group_domains",
    "group_time",
    "moe_a2a_bytes",
    "node_limit_share",
]
