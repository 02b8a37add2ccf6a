"""Where the ranks sit: GPUs grouped into servers, GPU ``g`` of every server on rail ``g``; the
NIC rate that caps a collective's steps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aifabric.errors import InputError
from aifabric.topology.core import Topology


@dataclass(frozen=True)
class Layout:
    hosts: np.ndarray  # (N, G) host ids: row = server, column = local rank (rail)

    @property
    def servers(self) -> int:
        return self.hosts.shape[0]

    @property
    def local(self) -> int:
        return self.hosts.shape[1]

    @property
    def n(self) -> int:
        return self.hosts.size


def rank_layout(topology: Topology, ranks=None, gpus_per_node: int | None = None) -> Layout:
    """Ranks → ``(servers, local ranks)`` host grid. ``ranks``: None (all hosts), a count (the
    first hosts) or host ids. ``gpus_per_node`` defaults to the rail-optimised design's, else 1."""
    hosts = topology.hosts
    if ranks is None:
        sel = hosts
    elif isinstance(ranks, int | np.integer):
        if not 1 <= int(ranks) <= len(hosts):
            raise InputError(
                "rank count out of range",
                field="workload.hosts",
                value=int(ranks),
                allowed=f"1..{len(hosts)}",
            )
        sel = hosts[: int(ranks)]
    else:
        sel = np.asarray(ranks, dtype=np.int64)
        if not np.isin(sel, hosts).all() or len(np.unique(sel)) != len(sel):
            raise InputError("ranks must be distinct host ids", field="ranks", value=list(sel[:4]))
    if gpus_per_node is None:
        design = topology.meta.get("design")
        gpus_per_node = int(getattr(design, "gpus_per_node", 1)) if topology.kind == "rail-optimized" else 1
    g = int(gpus_per_node)
    if g < 1:
        raise InputError("gpus_per_node must be ≥ 1", field="gpus_per_node", value=g)
    if g == 1:
        return Layout(np.asarray(sel, dtype=np.int64)[:, None])
    server = np.asarray(sel) // g  # builders number GPU NICs server by server
    uniq, counts = np.unique(server, return_counts=True)
    if (counts != counts[0]).any():
        raise InputError(
            "ranks must cover the same number of GPUs in every server",
            field="workload.hosts",
            value=len(sel),
            allowed=f"a multiple of {g} (whole servers)",
        )
    order = np.lexsort((np.asarray(sel), server))
    return Layout(np.asarray(sel, dtype=np.int64)[order].reshape(len(uniq), counts[0]))


def host_nic_rate_bps(topology, hosts) -> float:
    """The slowest NIC among ``hosts`` (the rate a collective's steps are capped by): a host's NIC
    rate is the sum of its links' rates — its one link, or one link per plane on a multi-plane
    fabric (each NIC port to its own plane at ``link_rate / planes``)."""
    h = np.asarray(hosts).ravel()
    rate = topology.link_rate_bps.astype(np.float64)
    n = topology.num_nodes
    per_node = np.bincount(topology.link_a, weights=rate, minlength=n)
    per_node += np.bincount(topology.link_b, weights=rate, minlength=n)
    return float(per_node[h].min())
