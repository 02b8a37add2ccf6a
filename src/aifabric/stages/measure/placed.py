"""The *measure* stage's traffic placed by the layout: the job's pipeline sends (every stage boundary
at once, :func:`aifabric.stages.workload.stage_hops`) on the design's topology with the fabric's
routing and the job's placement (:func:`pipeline_efficiency`), the evidence of the placed patterns
(:func:`placed_evidence`, ``placed_patterns`` in ``compare --json``) and its note (:func:`placed_note`).
The expert all-to-all is :mod:`aifabric.stages.measure.expert`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from aifabric.stages.measure.flows import RING_SEEDS, measure_pattern, rail_topology, topology_key

if TYPE_CHECKING:
    from aifabric.stages.measure.network import NetworkEvidence


def pipeline_efficiency(fd, workload, gpus_per_node: int, seed: int, routing: str) -> dict | None:
    """The job's pipeline sends placed by its layout (the ``pp-send-recv`` pattern: every stage
    boundary at once, :func:`aifabric.stages.workload.stage_hops`) on this fabric and routing: the
    efficiency averaged over :data:`RING_SEEDS` hash seeds like the ring step's, the share of the
    network hops whose two ends hang under one leaf, and the share of stage pairs inside one node
    (NVLink, no network hop). None when the job has no pipeline hop across nodes."""
    from aifabric.stages.workload import stage_hops

    p = workload.pattern("pp-send-recv")
    if p is None:
        return None
    key, hop_ps = topology_key(fd, gpus_per_node), fd.switch_hop_ns * 1000
    effs = [measure_pattern(key, fd.technology, p, seed + s, hop_ps, routing)[0] for s in range(RING_SEEDS)]
    src, dst, pairs = stage_hops(p)
    return {
        "efficiency": float(np.mean(effs)),
        "in_leaf_share": rail_topology(*key).in_leaf_share(src, dst),
        "nvlink_pair_share": 1 - len(src) / pairs if pairs else None,
        "stage_pairs": pairs,
        "stride_ranks": p.stride,
        "pipeline_ranks": p.span,
    }


def _placed_part(name: str, x: dict | None) -> str | None:
    if x is None:
        return None
    leaf = x["in_leaf_share"]
    return f"{name} {x['efficiency']:.3f}" + (
        "" if leaf is None else f" with {leaf:.0%} of its bytes inside one leaf"
    )


def placed_note(evidence: NetworkEvidence) -> str | None:
    """The measure stage's note on the traffic placed by the layout (None when nothing was placed)."""
    parts = []
    for f in evidence.fabrics:
        pl = f.placed or {}
        got = [
            p
            for p in (
                _placed_part("pipeline sends", pl.get("pp_send_recv")),
                _placed_part("expert all-to-all", pl.get("expert_all_to_all")),
            )
            if p
        ]
        if got:
            parts.append(
                f"{f.key}: " + ", ".join(got) + f"; random permutation {f.permutation_efficiency:.3f}"
            )
    if not parts:
        return None
    return (
        "traffic placed by the layout (flow model, the job's placement and each fabric's routing; efficiency = "
        "ideal / slowest flow): pipeline sends = every stage boundary at once (training: rank r to r + tp x cp x "
        "dp of the reference layout in Megatron's default tp-cp-ep-dp-pp order, r to r + tp x cp in tp-cp-ep-pp-dp; inference: one NVLink domain to the next "
        "inside an instance; on the receiver's rail, NCCL PXN), the MoE / wide-EP all-to-all = every EP group's "
        "DeepEP-style dispatch at once; "
        + " | ".join(parts)
        + "; other sends (context parallel, KV cache) keep "
        "the random same-rail permutation's efficiency"
    )


def placed_evidence(pp: dict | None, ep: dict | None, permutation: float) -> dict:
    """``placed_patterns`` of the measure stage's evidence: the pipeline and expert all-to-all
    patterns placed by the job's layout, what each replaces (the random same-rail permutation's
    efficiency, ``permutation``, still used for the rest: context-parallel and KV-cache sends)."""
    return {
        "pp_send_recv": pp,
        "expert_all_to_all": ep,
        "permutation_efficiency": permutation,
        "uses": "pipeline send-recv at pp_send_recv.efficiency, the expert all-to-all at "
        "expert_all_to_all.efficiency; other sends (context parallel, KV cache) and all-to-alls at the "
        "random same-rail permutation's",
    }


__all__ = ["pipeline_efficiency", "placed_evidence", "placed_note"]
