"""Memory estimate of a flow-mode collective on a rail-optimised design, before building it
(issue 19: ``aifabric collective OP --mode flow --gpus 100000 --planes 2``).

A collective's flow-mode run holds the topology, the path model (switch × leaf distances,
:func:`aifabric.flow.paths.path_model_bytes`) and one network step at a time: flow by flow (one
flow per GPU for a ring or tree step; paths, max-min work arrays, and with per-packet adaptive
routing every flow's split over its equal-cost links, checked as it is built) or, for an all-pairs step above
``max_flows``, the symmetry-reduced loads (:func:`aifabric.flow.symmetric.group_even_bytes`).
:func:`check_collective_memory` refuses (exit 2, one line) what the machine cannot hold.
"""

from __future__ import annotations

from aifabric.flow.engine import estimate_bytes
from aifabric.flow.paths import path_model_bytes
from aifabric.flow.symmetric import group_even_bytes

MAX_FLOWS = 1_000_000  # run_collective's default: an all-pairs step above it is symmetry-reduced
INTERPRETER_BYTES = 250 * 2**20  # python + numpy + numba + pandas before the first array (run 8)


def design_counts(design) -> tuple[int, int, int, int]:
    """``(nodes, links, switches, leaves)`` of ``rail_optimized`` for a :class:`RailDesign`."""
    planes = design.planes
    switches = (design.leaves + design.spines + design.cores) * planes
    links = (design.host_leaf_links + design.leaf_spine_links + design.spine_core_links) * planes
    return design.gpus + switches, links, switches, design.leaves * planes


def collective_bytes(op: str, design) -> int:
    """Peak bytes of one flow-mode collective on ``rail_optimized`` of ``design`` (an estimate)."""
    from aifabric.memory import LINK_BYTES, NODE_BYTES

    nodes, links, switches, leaves = design_counts(design)
    need = INTERPRETER_BYTES + nodes * NODE_BYTES + links * LINK_BYTES
    need += path_model_bytes(switches, leaves, links)
    servers = max(design.gpus // design.gpus_per_node, 1)
    hops = 2 * design.tiers + 1
    # an all-pairs step: every GPU to its rail peer on every other server; ring / tree steps:
    # about one flow per GPU
    flows = design.gpus * (servers - 1) if op == "all-to-all" else design.gpus
    if flows > MAX_FLOWS:
        return need + group_even_bytes(switches, leaves, links)
    # per-packet adaptive routing also splits every flow over its equal-cost links: that part
    # depends on how many flows leave their pod, so PathModel.split checks it as it goes
    # (aifabric.flow.paths._check_split_memory)
    step = estimate_bytes(flows, hops, json_flows=False)
    return need + step


def check_collective_memory(op: str, design) -> None:
    """Refuse (:class:`aifabric.memory.MemoryLimitError`, exit 2) a flow-mode collective that
    would not fit in the memory available."""
    from aifabric import memory

    need = collective_bytes(op, design)
    memory.check(
        need,
        f"a flow-mode {op} on {design.gpus:,} GPUs ({design.tiers} tiers × {design.planes} planes)",
        field="--gpus",
        hint="fewer GPUs, or --engine analytic",
    )


__all__ = ["check_collective_memory", "collective_bytes", "design_counts"]
