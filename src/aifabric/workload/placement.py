"""Where a job's ranks land on the cluster: rank → node → rail, and which nodes other jobs hold.

Rank order
----------
Megatron-Core orders a job's ranks ``tp-cp-ep-dp-pp`` by default (TP innermost; ``RankGenerator`` in
``megatron/core/parallel_state.py``, ``order="tp-cp-ep-dp-pp"``); the layout may name another order
(``parallelism.order``, e.g. ``tp-cp-ep-pp-dp``: see :mod:`aifabric.workload.llm.layout`), and a launcher (torchrun, Slurm's default ``block``
distribution) gives node ``i`` of the job's node list ranks ``i·g … i·g + g − 1``, local rank =
GPU = rail (one NIC per GPU, GPU ``r`` on rail ``r``). So rank ``r`` runs on the job's node
``r // g``, rail ``r % g``; the job's node ``i`` is the cluster's node ``Placement.nodes[i]``; its
host id on the rail-optimised topology is ``node · g + rail``.

The data-parallel gradient all-reduce runs over the DP × CP group (Megatron reduces gradients over
context-parallel ranks too, ``with_context_parallel=True``): the ranks sharing a TP index and a
pipeline stage, ``pp_index · tp·cp·dp + tp_index + tp · j``. NCCL's ring visits the group's nodes in
rank order; each cross-node hop leaves on the NIC of the GPU that sends it and arrives on the same
rail of the next node (NCCL builds rail-local rings on rail-optimised fabrics, and PXN moves data
over NVLink to the GPU on the destination's rail), one channel per rail the group holds on a node.

Placements (:data:`PLACEMENTS`)
-------------------------------
* ``ideal`` — the job holds the whole cluster, node ``i`` of the job = node ``i`` of the fabric
  (what ``compare`` measured before placement was a choice; the default).
* ``fragmented`` — other jobs hold a share ``occupancy`` of the cluster's nodes, drawn at random
  (seeded); the job gets the free nodes, in an order that is not the fabric's (a scheduler that is
  not topology-aware: random). The other jobs' traffic is not put on the fabric (their
  nodes are busy computing, or their traffic is elsewhere): the job sees the cost of its own
  scattered rings only.
* ``shared`` — the same allocation, and the other jobs' nodes run ``background_jobs`` jobs of equal
  size, each doing its own data-parallel ring step at the same moment on all rails (the worst
  alignment), sharing the fabric's links with the measured job.

Defaults: :data:`DEFAULT_OCCUPANCY` and :data:`DEFAULT_BACKGROUND_JOBS` have no public source (see
their comments).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aifabric.errors import InputError
from aifabric.workload.llm.layout import DEFAULT_ORDER

PLACEMENTS = ("ideal", "fragmented", "shared")
# ASSUMPTION (no public source for the occupancy a job meets when it starts): half the cluster's
# nodes held by other jobs. Half maximises the number of ways the free nodes can be scattered
# (C(n, n/2)); near 0 there is nothing to scatter around, near 1 the job is a handful of nodes.
DEFAULT_OCCUPANCY = 0.5
# ASSUMPTION (no public source): the other jobs are 4 jobs of equal size.
DEFAULT_BACKGROUND_JOBS = 4
PLACEMENT_STREAM = (
    0x9E3779B9  # a separate random stream from the seed's other draws (hash seeds, permutations)
)


@dataclass(frozen=True)
class Placement:
    """The job's nodes in rank order (cluster node ids) and the background jobs' nodes (``shared``)."""

    kind: str
    cluster_nodes: int
    nodes: tuple[int, ...]
    background: tuple[tuple[int, ...], ...] = ()
    occupancy: float = 0.0
    seed: int = 0

    @property
    def job_nodes(self) -> int:
        return len(self.nodes)

    def to_dict(self) -> dict:
        d = {
            "kind": self.kind,
            "cluster_nodes": self.cluster_nodes,
            "job_nodes": self.job_nodes,
            "occupancy": self.occupancy,
        }
        if self.kind != "ideal":
            d["seed"] = self.seed
            d["rank_order"] = "random free nodes, not in the fabric's order"
        if self.kind == "shared":
            d["background_jobs"] = len(self.background)
            d["background_job_nodes"] = [len(b) for b in self.background]
        return d


def check_placement(kind: str, occupancy: float, background_jobs: int, field: str = "advisor") -> None:
    """One-line errors for a placement's inputs (``field`` names where they came from)."""
    if kind not in PLACEMENTS:
        raise InputError(
            "unknown placement", field=f"{field}.placement", value=kind, allowed=", ".join(PLACEMENTS)
        )
    if isinstance(occupancy, bool) or not isinstance(occupancy, int | float) or not 0 <= occupancy < 1:
        raise InputError(
            "must be a fraction in [0, 1)", field=f"{field}.occupancy", value=occupancy, allowed="e.g. 0.5"
        )
    if isinstance(background_jobs, bool) or not isinstance(background_jobs, int) or background_jobs < 1:
        raise InputError(
            "must be an integer ≥ 1",
            field=f"{field}.background_jobs",
            value=background_jobs,
            allowed="e.g. 4",
        )


def place(
    kind: str,
    cluster_nodes: int,
    occupancy: float = DEFAULT_OCCUPANCY,
    background_jobs: int = DEFAULT_BACKGROUND_JOBS,
    seed: int = 1,
    field: str = "advisor",
) -> Placement:
    """The job's placement on a cluster of ``cluster_nodes`` nodes (a function of its arguments:
    the same seed gives the same placement)."""
    check_placement(kind, occupancy, background_jobs, field)
    if kind == "ideal":
        return Placement("ideal", cluster_nodes, tuple(range(cluster_nodes)))
    taken = int(round(occupancy * cluster_nodes))
    job = cluster_nodes - taken
    if job < 2:
        top = (cluster_nodes - 2.5) / cluster_nodes  # round() keeps ≥ 2 free nodes below this
        raise InputError(
            f"leaves the job {job} of the cluster's {cluster_nodes} nodes (it needs 2 to use the network)",
            field=f"{field}.occupancy",
            value=occupancy,
            allowed=f"0..{top:.3f}" if top > 0 else "0 (a cluster this small has no room for other jobs)",
        )
    rng = np.random.default_rng([int(seed), PLACEMENT_STREAM])
    order = rng.permutation(cluster_nodes)
    nodes = tuple(int(x) for x in order[:job])
    background: tuple[tuple[int, ...], ...] = ()
    if kind == "shared" and taken:
        parts = np.array_split(order[job:], min(background_jobs, taken))
        background = tuple(tuple(int(x) for x in p) for p in parts)
    return Placement(kind, cluster_nodes, nodes, background, float(occupancy), int(seed))


def rank_hosts(placement: Placement, gpus_per_node: int) -> np.ndarray:
    """Host id of every rank of the job: rank ``r`` on the job's node ``r // g``, rail ``r % g``."""
    r = np.arange(placement.job_nodes * gpus_per_node)
    return np.asarray(placement.nodes, dtype=np.int64)[r // gpus_per_node] * gpus_per_node + r % gpus_per_node


def dp_ring_hops(
    tp: int,
    cp: int,
    dp: int,
    pp: int,
    gpus_per_node: int,
    job_nodes: int | None = None,
    order: str = DEFAULT_ORDER,
    domain_nodes: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cross-node hops of one ring step of the DP × CP gradient all-reduce of every group at once,
    in the job's own node numbering: (src node, dst node, rail) arrays. Ranks in the layout's rank
    ``order`` (Megatron's ``tp-cp-ep-dp-pp`` by default; :func:`aifabric.workload.llm.layout.
    group_ranks`); a group whose ranks share one node has no hop, and neither has a hop between two
    nodes of one NVLink domain of ``domain_nodes`` nodes (an NVL72 rack: NCCL rings over NVLink there).
    ``job_nodes``: keep only the groups that lie inside the job's first ``job_nodes`` nodes (a
    fragmented job smaller than the layout)."""
    from aifabric.workload.llm.layout import group_ranks

    g = gpus_per_node
    rows = group_ranks({"tp": tp, "cp": cp, "ep": 1, "dp": dp, "pp": pp}, order, ("cp", "dp"))
    src, dst, rail = [], [], []
    for ranks in rows:
        nodes = ranks // g
        if job_nodes is not None and nodes.max() >= job_nodes:
            continue
        seq, first = np.unique(nodes, return_index=True)
        seq = seq[np.argsort(first)]  # the group's nodes in rank order
        if len(seq) < 2:
            continue
        nxt = dict(zip(seq.tolist(), np.roll(seq, -1).tolist(), strict=True))
        to = np.array([nxt[n] for n in nodes.tolist()], dtype=np.int64)
        net = nodes // domain_nodes != to // domain_nodes
        src.append(nodes[net])
        dst.append(to[net])
        rail.append(ranks[net] % g)
    if not src:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(src), np.concatenate(dst), np.concatenate(rail)


def node_ring_hops(nodes: int, group_nodes: int, gpus_per_node: int) -> tuple[np.ndarray, ...]:
    """Ring hops of groups of ``group_nodes`` consecutive nodes on every rail (a job without a
    layout, or a layout whose DP group fits in one node: measured as 2-node rings)."""
    node = np.arange(nodes)
    start = (node // group_nodes) * group_nodes
    size = np.minimum(group_nodes, nodes - start)
    nxt = start + (node - start + 1) % size
    src = np.repeat(node, gpus_per_node)
    dst = np.repeat(nxt, gpus_per_node)
    rail = np.tile(np.arange(gpus_per_node), nodes)
    keep = src != dst
    return src[keep], dst[keep], rail[keep]


def stage_pairs(stride: int, span: int, ranks: int) -> tuple[np.ndarray, np.ndarray]:
    """(sending rank, receiving rank) of every pipeline hop at once: rank ``r`` sends to ``r + stride``
    when both lie in the same group of ``span`` consecutive ranks (its next stage). Training: stride
    = the product of the group sizes inside pp in the rank order (tp·cp·dp in Megatron's
    ``tp-cp-ep-dp-pp``, span = the job; tp·cp in ``tp-cp-ep-pp-dp``, span = one pipeline); a pipelined inference instance: stride = one NVLink domain, span = the
    instance. Only the first ``ranks`` ranks (a fragmented job smaller than its layout) take part."""
    r = np.arange(max(0, int(ranks)), dtype=np.int64)
    r = r[((r % span) + stride < span) & (r + stride < len(r))]
    return r, r + stride


def ring_over(nodes: tuple[int, ...], gpus_per_node: int) -> tuple[np.ndarray, np.ndarray]:
    """Host ids (src, dst) of one ring step over ``nodes`` (cluster ids, ring order) on every rail."""
    n = np.asarray(nodes, dtype=np.int64)
    if len(n) < 2:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    nxt = np.roll(n, -1)
    rails = np.arange(gpus_per_node)
    return (n[:, None] * gpus_per_node + rails).ravel(), (nxt[:, None] * gpus_per_node + rails).ravel()


__all__ = [
    "DEFAULT_BACKGROUND_JOBS",
    "DEFAULT_OCCUPANCY",
    "PLACEMENTS",
    "Placement",
    "check_placement",
    "dp_ring_hops",
    "node_ring_hops",
    "place",
    "rank_hosts",
    "ring_over",
    "stage_pairs",
]
