"""The collective model against published NCCL / DeepEP figures (``aifabric validate --published``).

One parameter set: NCCL's own tuner constants ([S16]), the NVLink / NVLS rates calibrated on the
8 × H100 figures, and the per-NIC efficiency 0.94 ([S4]). Rows whose figure *is* the source of a
parameter are listed with role ``source`` (they agree by construction and are not counted);
the others are checks, each with its tolerance.

=================== ========================================================= ==========================
case                published figure                                          source
=================== ========================================================= ==========================
nvls-tree-2x8       2 × 8 H100, 8 × 400G: all-reduce busbw ~470 GB/s          hardware-facts §G.3 [S85]
                    "expected" with NVLSTree                                  (NVIDIA/nccl#2409, citing
                                                                              nccl-tests#309)
nvlink-ring-8       8 × H100 NVLink ring busbw ~370 GB/s                      §G.3 [S3][S80]
ring-2x8-per-nic    NCCL_ALGO=RING, 2 nodes: 46–48 GB/s per NDR NIC           §G.3 [S4] (source of η)
nvls-8              8 × H100 NVLS all-reduce busbw ~480 GB/s                  §G.3 [S3][S80] (source of
                                                                              the NVLS rate)
deepep-ep16/32/64   DeepEP normal kernels, H800 + CX7 400G IB, EP 16/32/64:   published-training.md 3.5
                    dispatch 43 / 58 / 51 GB/s RDMA per GPU — ≥ 80 % of the   (deepseek-ai/DeepEP README)
                    50 GB/s NIC; model ≥ 0.8 × line rate (and ≤ line rate)
=================== ========================================================= ==========================
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30


@dataclass(frozen=True)
class Case:
    case: str
    setup: str
    measured: float
    unit: str
    source: str
    role: str  # check | source
    tolerance: float = 0.10  # relative; for kind "at-least" the floor's fraction
    kind: str = "within"  # within | at-least


CASES = (
    Case(
        "nvls-tree-2x8",
        "all-reduce 8 GiB, 2 × 8 H100, 8 × 400G InfiniBand, NVLSTree (NCCL's choice)",
        470.0,
        "GB/s busbw",
        "hardware-facts §G.3 [S85]: NVIDIA/nccl#2409 (citing nccl-tests#309)",
        "check",
    ),
    Case(
        "nvlink-ring-8",
        "all-reduce 8 GiB, 8 × H100 one server, ring",
        370.0,
        "GB/s busbw",
        "hardware-facts §G.3 [S3][S80]: nccl-tests#212, nccl#1455",
        "check",
        0.05,
    ),
    Case(
        "ring-2x8-per-nic",
        "all-reduce 8 GiB, 2 × 8 H100, 8 × 400G, NCCL_ALGO=RING: busbw per NIC",
        47.0,
        "GB/s per NIC",
        "hardware-facts §G.3 [S4]: nccl-tests#290 (46–48 GB/s; source of the NIC efficiency 0.94)",
        "source",
        0.03,
    ),
    Case(
        "nvls-8",
        "all-reduce 8 GiB, 8 × H100 one server, NVLS",
        480.0,
        "GB/s busbw",
        "hardware-facts §G.3 [S3][S80] (source of the NVLS rate)",
        "source",
        0.02,
    ),
    *(
        Case(
            f"deepep-ep{ep}",
            f"MoE dispatch, EP {ep} ({ep // 8} nodes × 8), 400G InfiniBand, adaptive routing, 4096 tokens, "
            "hidden 7168, top-8 of 256 experts on ≤ 4 nodes, FP8",
            40.0,
            "GB/s RDMA per GPU",
            f"published-training.md 3.5: deepseek-ai/DeepEP README, normal kernels, dispatch {bw} GB/s at EP {ep}; "
            "issue #12: ≥ 80 % of the 50 GB/s NIC",
            "check",
            0.0,
            "at-least",
        )
        for ep, bw in ((16, 43), (32, 58), (64, 51))
    ),
)


def _model(case: str) -> tuple[float, str]:
    from aifabric.topology import rail_optimized
    from aifabric.workload.collectives import run_collective

    r400 = 400 * 10**9
    kw = dict(engine="flow", routing="adaptive", technology="infiniband", header_bytes=26, mtu_bytes=4096)
    if case == "nvls-tree-2x8":
        r = run_collective("all-reduce", 8 * GIB, rail_optimized(16, r400), algorithm="auto", **kw)
        return r.busbw_gbps, f"{r.algorithm} (NCCL's choice {r.nccl_choice})"
    if case == "ring-2x8-per-nic":
        r = run_collective("all-reduce", 8 * GIB, rail_optimized(16, r400), algorithm="ring", **kw)
        return r.busbw_gbps / 8, r.algorithm
    if case in ("nvlink-ring-8", "nvls-8"):
        algo = "ring" if case == "nvlink-ring-8" else "nvls"
        r = run_collective("all-reduce", 8 * GIB, rail_optimized(8, r400), algorithm=algo, **kw)
        return r.busbw_gbps, r.algorithm
    if case.startswith("deepep-ep"):
        from aifabric.workload.expert_parallel import expert_alltoall

        ep = int(case.removeprefix("deepep-ep"))
        r = expert_alltoall(rail_optimized(ep, r400), routing="adaptive")
        return (
            r.dispatch_rdma_gbps,
            f"DeepEP-style dispatch ({r.remote_nodes_per_token:.2f} remote nodes / token)",
        )
    raise KeyError(case)


def collective_validation_table() -> list[dict]:
    """One row per :data:`CASES` entry: model vs published figure, error, within tolerance."""
    rows = []
    for c in CASES:
        model, how = _model(c.case)
        err = model / c.measured - 1
        ok = model >= c.measured * (1 - c.tolerance) if c.kind == "at-least" else abs(err) <= c.tolerance
        rows.append(
            {
                "case": c.case,
                "setup": c.setup,
                "measured": c.measured,
                "model": model,
                "unit": c.unit,
                "error": err,
                "tolerance": c.tolerance,
                "kind": c.kind,
                "within_tolerance": bool(ok),
                "role": c.role,
                "algorithm": how,
                "source": c.source,
            }
        )
    return rows


def format_collective_table(rows: list[dict]) -> str:
    lines = [
        "| case | published | model | error | check | role | algorithm | source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        check = f"≥ {r['measured']:g}" if r["kind"] == "at-least" else f"±{r['tolerance']:.0%}"
        lines.append(
            f"| {r['case']} | {r['measured']:g} {r['unit']} | {r['model']:.1f} | {r['error']:+.1%} | {check} "
            f"{'ok' if r['within_tolerance'] else 'OUT'} | {r['role']} | {r['algorithm']} | {r['source']} |"
        )
    return "\n".join(lines)


__all__ = ["CASES", "collective_validation_table", "format_collective_table"]
