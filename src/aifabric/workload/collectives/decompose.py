"""A collective into its steps: the op and algorithm checked against what NCCL allows, then
decomposed by the algorithm's module (ring, PAT, tree, NVLS / SHARP, all-to-all, broadcast)."""

from __future__ import annotations

import math

from aifabric.errors import InputError
from aifabric.topology.core import Topology
from aifabric.workload.collectives.all_to_all import _pxn_all_to_all
from aifabric.workload.collectives.base import ALGORITHMS, NVLS_ALGORITHMS, OPS, Step
from aifabric.workload.collectives.broadcast import _chain_broadcast
from aifabric.workload.collectives.layout import Layout, rank_layout
from aifabric.workload.collectives.nvls import _decompose_nvls, _sharp_step
from aifabric.workload.collectives.pat import _pat
from aifabric.workload.collectives.ring import _flat_ring, _nvl_ring
from aifabric.workload.collectives.tree import _rail_tree


def collective_flows(
    op: str,
    size_bytes: int,
    topology: Topology,
    ranks=None,
    algorithm: str = "ring",
    gpus_per_node: int | None = None,
    sharp: bool = False,
    root: int = 0,
) -> list[Step]:
    """The steps of ``op`` on ``size_bytes`` (nccl-tests' S, see the module docstring)."""
    if op not in OPS:
        raise InputError("unknown collective", field="workload.op", value=op, allowed=", ".join(OPS))
    if algorithm == "auto":
        raise InputError(
            "algorithm auto is chosen by run_collective / nccl_sweep (it needs the GPU)",
            field="workload.algorithm",
            value=algorithm,
            allowed=", ".join(ALGORITHMS),
        )
    if algorithm not in ALGORITHMS:
        raise InputError(
            "unknown algorithm",
            field="workload.algorithm",
            value=algorithm,
            allowed=", ".join((*ALGORITHMS, "auto")),
        )
    size = int(size_bytes)
    if size <= 0:
        raise InputError("collective size must be positive", field="workload.size", value=size)
    lay = rank_layout(topology, ranks, gpus_per_node)
    check_algorithm(op, algorithm, lay, sharp)
    return _decompose(op, size, lay, algorithm, sharp, root)


def check_algorithm(op: str, algorithm: str, lay: Layout, sharp: bool = False) -> None:
    """InputError unless ``algorithm`` runs ``op`` on this layout as NCCL allows it: NVLS for
    all-reduce / reduce-scatter / all-gather inside one server of ≥ 2 GPUs (multi-server only
    all-reduce with SHARP = NCCL's NVLS+CollNet), NVLSTree for all-reduce across ≥ 2 servers."""
    field_ = "workload.algorithm"
    if algorithm == "tree" and op != "all-reduce":
        raise InputError(
            f"NCCL runs the tree for all-reduce only, not {op}",
            field=field_,
            value=algorithm,
            allowed="ring, auto",
        )
    if algorithm == "pat":
        if op not in ("all-gather", "reduce-scatter"):
            raise InputError(
                f"NCCL runs PAT for all-gather and reduce-scatter only, not {op}",
                field=field_,
                value=algorithm,
                allowed="ring, tree",
            )
        if lay.local != 1:
            raise InputError(
                "NCCL runs PAT with one GPU per node only",
                field=field_,
                value=algorithm,
                allowed="ring (or gpus_per_node 1)",
            )
        if sharp:
            raise InputError("PAT does not use SHARP", field=field_, value=algorithm, allowed="ring")
        return
    if algorithm not in NVLS_ALGORITHMS:
        return
    if op not in ("all-reduce", "reduce-scatter", "all-gather"):
        raise InputError(
            f"NCCL runs NVLS for all-reduce, reduce-scatter and all-gather only, not {op}",
            field=field_,
            value=algorithm,
            allowed="ring",
        )
    if algorithm == "nvls-tree" and op != "all-reduce":
        raise InputError(
            f"NCCL's NVLSTree is all-reduce only, not {op}",
            field=field_,
            value=algorithm,
            allowed="ring, nvls (one server)",
        )
    if lay.local < 2:
        raise InputError(
            "NVLS needs ≥ 2 GPUs per server on one NVSwitch",
            field=field_,
            value=algorithm,
            allowed="ring, tree",
        )
    if algorithm == "nvls-tree" and sharp:
        raise InputError(
            "NVLSTree does not use SHARP (NCCL's NVLS+SHARP is algorithm nvls with sharp)",
            field=field_,
            value=algorithm,
            allowed="nvls (with sharp), nvls-tree (without)",
        )
    if algorithm == "nvls-tree" and lay.servers < 2:
        raise InputError(
            "NVLSTree needs ≥ 2 servers (NCCL disables it on one node)",
            field=field_,
            value=algorithm,
            allowed="nvls, ring, tree",
        )
    if algorithm == "nvls" and lay.servers > 1 and op != "all-reduce":
        raise InputError(
            f"multi-server NVLS {op} needs NCCL's CollNet (not modelled)",
            field=field_,
            value=algorithm,
            allowed="ring",
        )
    if algorithm == "nvls" and lay.servers > 1 and not sharp:
        raise InputError(
            "multi-server NVLS all-reduce needs SHARP (NCCL's NVLS+CollNet)",
            field=field_,
            value=algorithm,
            allowed="nvls-tree, or nvls with sharp on InfiniBand",
        )


def _decompose(op, size, lay: Layout, algorithm: str, sharp: bool, root: int) -> list[Step]:
    if algorithm in NVLS_ALGORITHMS:
        return _decompose_nvls(op, size, lay, algorithm, sharp)
    nsrv, g, n = lay.servers, lay.local, lay.n
    if algorithm == "pat":
        return _pat(lay, size, op)
    if (
        algorithm == "ring"
        and nsrv > 1
        and not sharp
        and op in ("all-reduce", "reduce-scatter", "all-gather")
    ):
        steps_, inter = (2 * (n - 1), 2 * (nsrv - 1)) if op == "all-reduce" else (n - 1, nsrv - 1)
        return _flat_ring(lay, size, steps_, inter, f"ring {op}")
    shard = math.ceil(size / g)
    steps: list[Step] = []
    if op == "all-reduce":
        steps += _nvl_ring(lay, shard, "nvlink reduce-scatter")
        if nsrv > 1:
            if sharp:
                steps.append(_sharp_step(lay, shard, "SHARP in-network all-reduce"))
            elif algorithm == "tree":
                steps.append(_rail_tree(lay, shard))
            # (the multi-server ring is NCCL's flat ring, returned above)
        steps += _nvl_ring(lay, shard, "nvlink all-gather")
    elif op == "reduce-scatter":  # one server (several: the flat ring above)
        steps += _nvl_ring(lay, shard, "nvlink reduce-scatter")
    elif op == "all-gather":
        steps += _nvl_ring(lay, shard, "nvlink all-gather")
    elif op == "all-to-all":
        steps += _pxn_all_to_all(lay, size)
    else:  # broadcast
        steps += _chain_broadcast(lay, shard, root)
    return steps
