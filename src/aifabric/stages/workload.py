"""Stage 2 — *workload*: what the job puts on the network.

Input: :class:`WorkloadInput` (the job kind, the model, the cluster's GPUs). Output:
:class:`Workload` — for training, the model, its parallel layout and each parallel group's
collectives with sizes, counts per step and the compute window each may overlap with
(:class:`aifabric.workload.training.CollectiveDemand`), plus the traffic patterns the *measure*
stage runs on each fabric, with their endpoints placed on the topology
(:class:`TrafficPattern`: rank → node → rail, host id = node · GPUs per node + rail).

Add a traffic pattern here: a name in :data:`PATTERNS` with a function returning its flows;
*measure* runs every pattern the workload lists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aifabric.workload.training import (
    CollectiveDemand,
    ModelSpec,
    Parallelism,
    default_parallelism,
    get_model,
    step_demands,
)

DEFAULT_MODEL = "llama3-70b"
STEP_BYTES = 16 * 2**20  # per flow of a measured step: large enough to be bandwidth-bound at 400/800G


def ring_step_flows(gpus: int, gpus_per_node: int, group_nodes: int, size_bytes: int) -> dict:
    """Flows of one ring step of the DP all-reduce on every rail at once: node i → i+1 inside each
    group of ``group_nodes`` consecutive nodes (host id = node · g + rail)."""
    nodes = gpus // gpus_per_node
    node = np.arange(nodes)
    group_start = (node // group_nodes) * group_nodes
    nxt = group_start + (node - group_start + 1) % group_nodes
    src = (node[:, None] * gpus_per_node + np.arange(gpus_per_node)[None, :]).ravel()
    dst = (nxt[:, None] * gpus_per_node + np.arange(gpus_per_node)[None, :]).ravel()
    keep = src != dst
    return {"src": src[keep], "dst": dst[keep], "size_bytes": np.full(int(keep.sum()), size_bytes)}


def rail_permutation_flows(gpus: int, gpus_per_node: int, size_bytes: int, seed: int) -> dict:
    """Every GPU sends to the same-rail GPU of a random other node (a seeded node derangement per
    rail): the all-to-all-like pattern where hash collisions on leaf uplinks show."""
    nodes = gpus // gpus_per_node
    rng = np.random.default_rng(seed)
    src, dst = [], []
    for rail in range(gpus_per_node):
        perm = rng.permutation(nodes)
        while nodes > 1 and np.any(perm == np.arange(nodes)):
            perm = rng.permutation(nodes)
        src.append(np.arange(nodes) * gpus_per_node + rail)
        dst.append(perm * gpus_per_node + rail)
    src_a, dst_a = np.concatenate(src), np.concatenate(dst)
    return {"src": src_a, "dst": dst_a, "size_bytes": np.full(len(src_a), size_bytes)}


@dataclass(frozen=True)
class TrafficPattern:
    """A traffic pattern with its endpoints on the topology; hashable, so measurements cache on it.

    ``dp-ring-step``: one ring step of the data-parallel all-reduce, every node sending to the next
    inside its DP group of ``group_nodes`` nodes, on every rail at once. ``rail-permutation``: every
    GPU to the same-rail GPU of a random other node (seeded)."""

    name: str  # dp-ring-step | rail-permutation
    gpus: int
    gpus_per_node: int
    size_bytes: int
    group_nodes: int = 0  # dp-ring-step
    seed: int = 0  # rail-permutation

    def flows(self) -> dict:
        return PATTERNS[self.name](self)

    def to_dict(self) -> dict:
        d = {"name": self.name, "gpus": self.gpus, "size_bytes": self.size_bytes}
        if self.name == "dp-ring-step":
            d["group_nodes"] = self.group_nodes
        else:
            d["seed"] = self.seed
        return d


PATTERNS = {
    "dp-ring-step": lambda p: ring_step_flows(p.gpus, p.gpus_per_node, p.group_nodes, p.size_bytes),
    "rail-permutation": lambda p: rail_permutation_flows(p.gpus, p.gpus_per_node, p.size_bytes, p.seed),
}


@dataclass(frozen=True)
class WorkloadInput:
    kind: str  # training | inference | storage | trading
    gpus: int
    gpus_per_node: int
    hbm_gbytes: float
    model: str | None = None  # training: a built-in model name
    seed: int = 1


@dataclass(frozen=True)
class Workload:
    kind: str
    gpus: int
    gpus_per_node: int
    model: ModelSpec | None
    parallelism: Parallelism | None
    collectives: tuple[CollectiveDemand, ...]
    patterns: tuple[TrafficPattern, ...]

    @property
    def is_training_step(self) -> bool:
        """A training iteration to time (training on more than one node)."""
        return self.model is not None and self.parallelism is not None

    def pattern(self, name: str) -> TrafficPattern | None:
        return next((p for p in self.patterns if p.name == name), None)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "model": self.model.name if self.model else None,
            "parallelism": self.parallelism.to_dict() if self.parallelism else None,
            "collectives": [c.to_dict() for c in self.collectives],
            "patterns": [p.to_dict() for p in self.patterns],
        }


def workload(inp: WorkloadInput) -> Workload:
    """The job's model, layout, per-group collectives and the patterns to measure."""
    model = par = None
    gpn = inp.gpus_per_node
    if inp.kind == "training":
        model = get_model(inp.model or DEFAULT_MODEL)
        if inp.gpus > gpn:
            par = default_parallelism(model, inp.gpus, gpn, inp.hbm_gbytes)
    demands = tuple(step_demands(model, par, gpn)) if par is not None else ()
    patterns: tuple[TrafficPattern, ...] = ()
    if inp.gpus > gpn:
        nodes = inp.gpus // gpn
        group = par.dp if par else nodes
        group = max(2, min(group, nodes))
        patterns = (TrafficPattern("dp-ring-step", inp.gpus, gpn, STEP_BYTES, group_nodes=group),)
        if nodes > 1:
            patterns += (TrafficPattern("rail-permutation", inp.gpus, gpn, STEP_BYTES, seed=inp.seed),)
    return Workload(inp.kind, inp.gpus, gpn, model, par, demands, patterns)


__all__ = [
    "TrafficPattern",
    "Workload",
    "WorkloadInput",
    "rail_permutation_flows",
    "ring_step_flows",
    "workload",
]
