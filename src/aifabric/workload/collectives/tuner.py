"""NCCL's tuner: the algorithms it weighs for an op and layout, and its choice by the α-β model."""

from __future__ import annotations

import math

from aifabric.workload.collectives.base import NVLS_ALGORITHMS, NVLS_GPUS, PROTOCOLS
from aifabric.workload.collectives.decompose import _decompose
from aifabric.workload.collectives.layout import Layout
from aifabric.workload.collectives.nvlink import NvlsDomain
from aifabric.workload.collectives.timing import _Ctx, _time_steps


def candidate_algorithms(
    op: str, lay: Layout, gpu: str = "h100", sharp: bool = False, protocol: str = "auto"
) -> tuple[str, ...]:
    """The algorithms NCCL's tuner weighs for ``op`` on this layout: ring always; the double
    binary tree for multi-server all-reduce; NVLS (one server; multi-server with SHARP) and
    NVLSTree (multi-server all-reduce) on NVSwitch GPUs of Hopper or later with ≥ 2 GPUs per
    server and the Simple protocol."""
    out = ["ring"]
    if op == "all-reduce" and lay.servers > 1 and not sharp:
        out.append("tree")
    if (
        op in ("all-gather", "reduce-scatter")
        and lay.local == 1
        and lay.n > 1
        and protocol in ("auto", "simple")
    ):
        out.append("pat")
    if gpu in NVLS_GPUS and lay.local >= 2 and protocol in ("auto", "simple"):
        if op in ("reduce-scatter", "all-gather") and lay.servers == 1:
            out.append("nvls")
        elif op == "all-reduce":
            out.append("nvls-tree" if lay.servers > 1 and not sharp else "nvls")
    return tuple(out)


def _label(algo: str, sharp: bool, lay: Layout, op: str = "") -> str:
    """The name a result carries: NCCL's all-to-all is grouped send/recv to every peer with PXN
    (``pxn``), not a ring."""
    if op == "all-to-all":
        return "pxn"
    if algo in NVLS_ALGORITHMS:
        return "nvls+sharp" if sharp and lay.servers > 1 else algo
    return "sharp" if sharp else algo


def nccl_choice(
    op: str, size_bytes: int, lay: Layout, gpu: str, sharp: bool, actx: _Ctx, pipelined: bool = True
) -> str:
    """NCCL's tuner choice for ``op`` of ``size_bytes`` on ``lay``: the fastest (algorithm,
    protocol) of :func:`candidate_algorithms` by the α-β model with NCCL's constants."""
    best, best_t = "ring", math.inf
    for a in candidate_algorithms(op, lay, gpu, sharp):
        if a in NVLS_ALGORITHMS and actx.nvls is None:
            actx = _Ctx(**{**actx.__dict__, "nvls": NvlsDomain.for_gpu(gpu)})
        st = _decompose(op, int(size_bytes), lay, a, sharp, 0)
        protos = ("simple",) if sharp or a in NVLS_ALGORITHMS or a == "pat" else PROTOCOLS
        for p in protos:
            t = _time_steps(actx, op, st, a, p, sharp, pipelined, True)["time"]
            if t < best_t:
                best, best_t = a, t
    return best
