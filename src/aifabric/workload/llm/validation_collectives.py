"""The expert-parallel dispatch / combine model against DeepEP's published numbers
(``aifabric validate --published``, section "Expert all-to-all").

The model is :func:`aifabric.workload.llm.groups.ep_dispatch_combine` — the code the training step
model and the inference decode model time every MoE all-to-all with — on the validation α-β network
(:mod:`aifabric.workload.llm.network`: 400 Gb/s × NIC efficiency 0.94 per GPU, NCCL's latency
constants; NVLink from the GPU table, H800 200 GB/s per direction × 0.82). One parameter set, no
per-case term.

Published figures (deepseek-ai/DeepEP; H800, one CX7 400 Gb/s InfiniBand NIC per GPU, 8 GPUs per
node, DeepSeek-V3 shapes: hidden 7168, top-8, FP8 dispatch, BF16 combine; published-training.md
rows 3.3–3.5):

* **low-latency kernels, NVLink inside the node** (docs/legacy.md @dd758ca = README since d8dd185,
  2025-06-05, PR #173 "low-latency kernels now leverage NVLink as much as possible"): 128 tokens per
  GPU, EP 8–256, dispatch / combine kernel time (µs). Modelled with ``domain`` 8 (the NVLink part and
  the network part of the all-to-all at once), no node limit (every top-k copy is its own message) —
  the inference model's setting.
* **low-latency kernels, pure RDMA** (README @ebfe47e, 2025-02-24, until 2025-06-05): the same
  benchmark before NVLink was used, every copy over the NIC. Modelled with ``domain`` 1 (each GPU its
  own domain: no NVLink). EP 128 / 256 read the same in both tables.
* **normal kernels** (README @3b1045d, 2025-04-22, = docs/legacy.md): 4096 tokens per GPU, top-8 of
  256 experts on ≤ 4 nodes (``num_topk_groups = min(nodes, 4)``), EP 16 / 32 / 64: "bottleneck
  bandwidth (RDMA)" in GB/s. Modelled with ``domain`` 8 and node limit 4 — the training model's
  setting for DeepSeek-V3.

What DeepEP counts (its benchmarks, tests/test_low_latency.py and tests/test_internode.py):

* low-latency: the CUDA kernel's own time (``bench_kineto``, 30 runs); "RDMA bandwidth" = every
  top-k copy × (hidden + hidden/128 · 4 + 16) bytes FP8, hidden · 2 BF16, over that time — copies to
  the GPU's own node and to itself included. We compare **time**.
* normal: the whole dispatch / combine call (``bench``, CUDA events, best of a tuning sweep); "RDMA
  bandwidth" = ``num_rdma_token_sent`` × hidden × (1 + 4/128) (FP8) or × 2 (BF16) over that time,
  ``num_rdma_token_sent`` = (token, node) pairs with ≥ 1 of the token's experts on the node — **its
  own node included** (those bytes never cross the network). We compare **bandwidth as DeepEP
  counts it**: the same counted bytes over the model's time; the counted bytes come from DeepEP's
  own routing (scores |N(0, 1)| + 1, the ``min(nodes, 4)`` nodes with the largest expert score, the
  top-8 experts among theirs), drawn here with a fixed seed (:func:`deepep_nodes_per_token`).

Tolerance ±15 % (the brief of issue 11); misses are listed with their reason in
:data:`KNOWN_MISSES`, not tuned away.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from aifabric.workload.llm.gpus import get_gpu
from aifabric.workload.llm.groups import ep_dispatch_combine, moe_a2a_bytes
from aifabric.workload.llm.network import AlphaBetaNetwork

TOLERANCE = 0.15
HIDDEN, TOPK, EXPERTS, GPUS_PER_NODE = 7168, 8, 256, 8

SRC_LL_NVL = (
    "deepseek-ai/DeepEP docs/legacy.md @dd758ca (README since d8dd185, 2025-06-05): low-latency kernels, "
    "NVLink inside the node; published-training.md 3.3/3.4"
)
SRC_LL_RDMA = (
    "deepseek-ai/DeepEP README.md @ebfe47e (2025-02-24, until 2025-06-05): low-latency kernels, pure RDMA; "
    "published-training.md 3.3/3.4"
)
SRC_NORMAL = (
    "deepseek-ai/DeepEP README.md @3b1045d (2025-04-22) = docs/legacy.md: normal kernels, bottleneck "
    "bandwidth (RDMA); published-training.md 3.5"
)

#: published kernel times (µs): EP → (dispatch, combine)
LL_NVL_US = {8: (77, 114), 16: (118, 195), 32: (155, 273), 64: (173, 314), 128: (192, 369), 256: (194, 360)}
LL_RDMA_US = {8: (163, 318), 16: (173, 329), 32: (182, 350), 64: (186, 353), 128: (192, 369), 256: (194, 360)}
#: published normal-kernel RDMA bandwidth (GB/s): EP → (dispatch, combine)
NORMAL_GBPS = {16: (43, 43), 32: (58, 57), 64: (51, 50)}

#: cases the model misses by more than the tolerance, with the reason (the tests xfail them strictly)
KNOWN_MISSES = {
    "deepep-ll-nvl-ep8-dispatch": "EP 8 is one node, NVLink only (no network): the kernel moves DeepEP's counted "
    "98 GB/s, 60 % of the 164 GB/s NVLink rate the model uses (200 GB/s × 0.82); no public figure gives the "
    "low-latency kernel's own cost over NVLink, so nothing is fitted",
    "deepep-ll-nvl-ep8-combine": "as the EP 8 dispatch: NVLink only, 127 GB/s counted = 77 % of the model's "
    "NVLink rate; no public source for the kernel's own cost",
}


@dataclass(frozen=True)
class Case:
    case: str
    kernel: str  # low-latency-nvlink | low-latency-rdma | normal
    ep: int
    phase: str  # dispatch | combine
    published: float
    unit: str  # µs | GB/s
    source: str


def _cases() -> tuple[Case, ...]:
    out = []
    for kernel, table, src in (
        ("low-latency-nvlink", LL_NVL_US, SRC_LL_NVL),
        ("low-latency-rdma", LL_RDMA_US, SRC_LL_RDMA),
    ):
        tag = "nvl" if kernel.endswith("nvlink") else "rdma"
        for ep, (d, c) in table.items():
            out.append(Case(f"deepep-ll-{tag}-ep{ep}-dispatch", kernel, ep, "dispatch", float(d), "µs", src))
            out.append(Case(f"deepep-ll-{tag}-ep{ep}-combine", kernel, ep, "combine", float(c), "µs", src))
    for ep, (d, c) in NORMAL_GBPS.items():
        out.append(
            Case(f"deepep-normal-ep{ep}-dispatch", "normal", ep, "dispatch", float(d), "GB/s", SRC_NORMAL)
        )
        out.append(
            Case(f"deepep-normal-ep{ep}-combine", "normal", ep, "combine", float(c), "GB/s", SRC_NORMAL)
        )
    return tuple(out)


CASES = _cases()


@lru_cache(maxsize=8)
def deepep_nodes_per_token(nodes: int, tokens: int = 4096, ranks: int = 8, seed: int = 0) -> float:
    """Mean number of distinct nodes (own node included) a token's top-8 experts lie on, under the
    routing of DeepEP's normal-kernel benchmark (tests/test_internode.py @3b1045d lines 25–43): scores
    |N(0,1)| + 1 over 256 experts in ``nodes`` groups, the ``min(nodes, 4)`` groups with the largest
    score kept, the top-8 experts among them. ``ranks`` GPUs × ``tokens`` tokens drawn, seeded."""
    rng = np.random.default_rng(seed)
    per_node = EXPERTS // nodes
    scores = np.abs(rng.standard_normal((ranks * tokens, EXPERTS))) + 1.0
    grouped = scores.reshape(-1, nodes, per_node)
    keep = min(nodes, 4)
    top_groups = np.argpartition(-grouped.max(axis=2), keep - 1, axis=1)[:, :keep]
    mask = np.zeros((scores.shape[0], nodes), dtype=bool)
    np.put_along_axis(mask, top_groups, True, axis=1)
    masked = (grouped * mask[:, :, None]).reshape(-1, EXPERTS)
    experts = np.argpartition(-masked, TOPK - 1, axis=1)[:, :TOPK]
    hit = np.zeros((scores.shape[0], nodes), dtype=bool)
    np.put_along_axis(hit, experts // per_node, True, axis=1)
    return float(hit.sum(axis=1).mean())


def network() -> AlphaBetaNetwork:
    """The validation α-β network of DeepEP's cluster: H800, one 400 Gb/s NIC per GPU."""
    return AlphaBetaNetwork(
        link_gbps=400.0,
        nvlink_bytes_per_s=get_gpu("h800").nvlink_bytes_per_s,
        label="validation α-β network (H800, 400 Gb/s InfiniBand per GPU)",
    )


def _model(case: Case) -> dict:
    net = network()
    fp8 = case.phase == "dispatch"
    if case.kernel == "normal":
        tokens, domain, limit = 4096, GPUS_PER_NODE, 4
    else:
        tokens, domain, limit = 128, GPUS_PER_NODE if case.kernel == "low-latency-nvlink" else 1, None
    r = ep_dispatch_combine(net, tokens, TOPK, HIDDEN, case.ep, 1, domain, True, limit)
    t = r.dispatch_s if fp8 else r.combine_s
    out = {
        "model_time_us": t * 1e6,
        "span": r.span,
        "bound": r.dispatch_bound if fp8 else r.combine_bound,
        "net_share": r.net_share,
    }
    if case.kernel == "normal":
        d = deepep_nodes_per_token(case.ep // GPUS_PER_NODE)
        # DeepEP's num_rdma_token_sent × bytes per token: one copy per node a token reaches
        counted = moe_a2a_bytes(tokens, d, HIDDEN, True)[0 if fp8 else 1]
        out.update(model=counted / t / 1e9, counted_bytes=counted, nodes_per_token=d)
    else:
        out.update(model=t * 1e6)
    return out


def collective_validation_table() -> list[dict]:
    """One row per :data:`CASES` entry: model vs published, signed error (+ = model larger), whether
    within ±15 %, and the known-miss reason where there is one."""
    rows = []
    for c in CASES:
        m = _model(c)
        err = m["model"] / c.published - 1
        rows.append(
            {
                "case": c.case,
                "kernel": c.kernel,
                "ep": c.ep,
                "nodes": max(1, c.ep // GPUS_PER_NODE),
                "phase": c.phase,
                "unit": c.unit,
                "published": c.published,
                **m,
                "error": err,
                "tolerance": TOLERANCE,
                "within_tolerance": bool(abs(err) <= TOLERANCE),
                "known_miss": KNOWN_MISSES.get(c.case),
                "source": c.source,
            }
        )
    return rows


def format_table(rows: list[dict]) -> str:
    """Markdown: one row per case."""
    lines = [
        "| case | kernels | EP | phase | published | model | error | ±15 % | model: set by |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['kernel']} | {r['ep']} | {r['phase']} | {r['published']:g} {r['unit']} | "
            f"{r['model']:.1f} {r['unit']} | {r['error']:+.1%} | "
            f"{'ok' if r['within_tolerance'] else 'known miss' if r['known_miss'] else 'OUT'} | {r['bound']} |"
        )
    return "\n".join(lines)


__all__ = [
    "CASES",
    "KNOWN_MISSES",
    "TOLERANCE",
    "collective_validation_table",
    "deepep_nodes_per_token",
    "format_table",
    "network",
]
