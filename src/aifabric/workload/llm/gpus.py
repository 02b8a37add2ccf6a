"""GPU compute, memory and NVLink figures for the step-time model, one sourced table per GPU.

Every number carries a source, or says ``estimate`` with its basis. Tags ``[Sxx]`` are the
numbered sources of ../shared/reference/hardware-facts.md (repeated in :data:`SOURCES`).

*Sustained* throughputs (what kernels reach, as opposed to the datasheet peak) are given as
fractions of the dense peak, because the published microbenchmarks are:

* large BF16/FP8 GEMM: a fitted parameter of the step-time model
  (:data:`aifabric.workload.llm.compute.CALIBRATION` ``gemm_efficiency``), times a per-shape factor
  fitted on microbenchmarks ([XLA-H100], [DEEPGEMM]; :mod:`aifabric.workload.llm.gemm`), cross-checked against a
  cuBLASLt FP8 8192³ benchmark on Hopper at ≈1,600 TFLOPS = 0.81 of the 1,979 TFLOPS FP8 peak
  [GEMM-FP8] (fitted value: see compute.py);
* attention forward: FlashAttention-3 BF16, head dim 128, seq 8k–16k on H100: 614–621 TFLOPS
  [FA3-BENCH] = 0.62 of 989 TFLOPS; the FA3 paper's best case is 740 TFLOPS (75 %) [FA3];
* attention backward: estimate 0.50 of peak (basis: the FA3 paper reports the backward pass
  1.5–1.75× faster than FA2's ≈ 300–330 TFLOPS on H100, i.e. ≈ 450–560 TFLOPS) [FA3];
* HBM: 0.92 of the datasheet bandwidth (STREAM triad 3,089 GB/s on H100 SXM 3.35 TB/s) [HBM-BENCH].

Blackwell: its GEMM fraction is Hopper's times ``blackwell_gemm_scale`` (compute.py), fitted on one
GB200 case; its HBM fraction reuses Hopper's (estimate: no public microbenchmark read). Its
**attention fractions are its own, measured** (:data:`CUDNN_SDPA_B200`): NVIDIA's cuDNN SDPA training
benchmark on B200 (cuDNN 9.10.2, NGC PyTorch 25.05, June 2025 — the release nearest the NeMo 25.02–25.04
cases that publishes Blackwell attention; NeMo runs cuDNN fused attention through Transformer Engine),
BF16, head dim 128, causal, over the same 8k–16k range as Hopper's: forward 1,211–1,359 TFLOPS = 0.571
and backward 945–1,074 TFLOPS = 0.449 of the 2,250 TFLOPS peak [CUDNN-B200]. Blackwell Ultra
(B300/GB300) takes B200's fractions × the GB300/GB200 ratio that one later cuDNN release (9.22) measures
on both: 1.150 forward, 1.106 backward [CUDNN-GB]. Cross-check on Hopper with the same benchmark family:
cuDNN 9.1 on H200 (2024), causal 8k–16k: forward 646–650 = 0.65, backward 462–489 = 0.48 of 989 TFLOPS
[CUDNN-H200] — the Hopper fractions above (0.62 / 0.50) agree within 6 % (tested).
Read, not used: FlashAttention-4 (Zadouri et al., arXiv 2603.05451, March 2026) reaches 1,613 TFLOPS
forward on B200 (71 %), up to 1.3× cuDNN 9.13 — a 2026 kernel, not what the NeMo 25.x cases ran.
Public cross-checks for Hopper GEMMs: 780 TFLOPS BF16 on H100 (torch.compile/CUTLASS, 4224×8192×2048,
gist Chillee/2ec89696) [GEMM-BF16]; cuBLASLt 853 BF16 / 1,630 FP8 TFLOPS on H200 NVL
(xzwgit/gpu-flops-bench) [GEMM-H200].
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.errors import InputError

GIB = 2**30

SOURCES: dict[str, str] = {
    "S3": "NVIDIA/nccl-tests issues #212/#366 (H100 NVLink 450 GB/s per direction, ring busbw ~370 GB/s)",
    "S82": "NVIDIA/nccl issue #1374 (H800 NVLink 400 GB/s bidirectional, all-reduce busbw ~215 GB/s)",
    "S86": "Glenn Lockwood, H100 notes (989.4 / 1978.9 TFLOPS dense BF16 / FP8; 80 GB HBM3 3.35 TB/s)",
    "S88": "H200 spec pages (141 GB HBM3e, 4.8 TB/s, compute as H100)",
    "S89": "Glenn Lockwood, B200 notes (HGX 1000 W: 2250 / 4500 dense BF16 / FP8; GB200 1200 W: 2500 BF16)",
    "S90": "Vultr HGX B200 hardware overview (192 GB HBM3e, 8 TB/s)",
    "S91": "NVIDIA DGX B200 summary (NVLink5 1.8 TB/s per GPU)",
    "DS-V3": "DeepSeek-V3 report arXiv 2412.19437 §3.1 (H800 NVLink ~160 GB/s achieved, IB 50 GB/s)",
    "B300": "NVIDIA Blackwell Ultra (B300/GB300) announcement, GTC 2025: 288 GB HBM3e, NVLink5",
    "FA3": "Shah et al., FlashAttention-3, arXiv 2407.08608 (BF16 up to 740 TFLOPS on H100)",
    "FA3-BENCH": "pytorch/benchmark commit ff65cb67 (PR #2391): FA3 BF16 hd128 (2,16,8192) 614 TFLOPS",
    "GEMM-FP8": "cuBLASLt FP8 8192³ cross-check report (gitea.d-robotics.cc test_gpu_scripts, 2026-05-24): "
    "mean 1,609 TFLOPS on a Hopper node",
    "GEMM-BF16": "gist Chillee/2ec89696db8b7ed1c24461159e325405: H100 BF16 matmul 780 TFLOPS",
    "GEMM-H200": "github.com/xzwgit/gpu-flops-bench README: H200 NVL cuBLASLt BF16 853, FP8 1,630 TFLOPS",
    "DEEPGEMM": "deepseek-ai/DeepGEMM README.md @a6d97a1 (2025-02-25): block-scaled FP8 GEMMs on H800, "
    "1,358 TFLOPS at M×N×K 4096×7168×16384 (largest listed), grouped 4×8192×4096×7168 1,297",
    "XLA-H100": "tensorflow/tensorflow third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h "
    "@372d578b: OpenXLA's measured sm_90 (H100) bf16 matmul table, M, N, K 256-4096",
    "HBM-BENCH": "H100 80GB HBM3 STREAM triad 3,089 GB/s, d2d copy 3,024 GB/s (public benchmark JSON)",
    "CUDNN-B200": "NVIDIA/cudnn-frontend @f937055 (2025-06-12) benchmark/sdpa_benchmark_bf16_training/artifacts/"
    "sdpa_benchmark_results_NVIDIA_B200.csv: cuDNN 9.10.2 SDPA on B200, BF16, d 128, causal, 128 Q / 8 KV heads",
    "CUDNN-GB": "NVIDIA/cudnn-frontend @3929da2 (2026-04-24) benchmark/sdpa_benchmark_training/results/llama3.1/"
    "{gb200,gb300}/*.csv: cuDNN 9.22 SDPA, BF16, d 128, causal (top_left), 64 Q / 8 KV heads, batch 2",
    "CUDNN-H200": "NVIDIA/cudnn-frontend @7606332 benchmark/sdpa_benchmark/benchmark_results.csv (first added "
    "@b740542, 2024-05-07): cuDNN 9.1.0 SDPA on H200 (the README's clock example), BF16, d 128, 16 heads",
}

# Measured attention throughput, TFLOPS (forward, backward), by sequence length. FLOPs counted as the
# model counts them (causal: 4·s²·heads·d / 2 forward, 2.5× that backward).
CUDNN_SDPA_B200: dict[int, tuple[float, float]] = {  # [CUDNN-B200], batch 1
    8192: (1211.140, 945.440),
    16384: (1358.566, 1074.499),
    32768: (1435.072, 1132.387),
    65536: (1428.973, 1074.456),
}
CUDNN_SDPA_GB200: dict[int, tuple[float, float]] = {
    8192: (1574.0, 1332.0),
    16384: (1708.0, 1328.0),
}  # [CUDNN-GB]
CUDNN_SDPA_GB300: dict[int, tuple[float, float]] = {
    8192: (1856.0, 1435.0),
    16384: (1915.0, 1507.0),
}  # [CUDNN-GB]
CUDNN_SDPA_H200: dict[int, tuple[float, float]] = {
    8192: (645.95, 461.89),
    16384: (649.99, 488.56),
}  # [CUDNN-H200]
# the sequence lengths a fraction is read at: Hopper's [FA3-BENCH] range, 8k–16k, for both generations
ATTENTION_SEQ = (8192, 16384)


def attention_fractions(table: dict[int, tuple[float, float]], peak_tflops: float) -> tuple[float, float]:
    """(forward, backward) attention throughput as fractions of ``peak_tflops``: the mean of ``table``
    over :data:`ATTENTION_SEQ`, rounded to 0.001."""
    fwd = sum(table[s][0] for s in ATTENTION_SEQ) / len(ATTENTION_SEQ)
    bwd = sum(table[s][1] for s in ATTENTION_SEQ) / len(ATTENTION_SEQ)
    return round(fwd / peak_tflops, 3), round(bwd / peak_tflops, 3)


def _ratio(new: dict[int, tuple[float, float]], old: dict[int, tuple[float, float]]) -> tuple[float, float]:
    """Mean (forward, backward) throughput ratio new/old over :data:`ATTENTION_SEQ`."""
    n = len(ATTENTION_SEQ)
    fwd = sum(new[s][0] / old[s][0] for s in ATTENTION_SEQ) / n
    bwd = sum(new[s][1] / old[s][1] for s in ATTENTION_SEQ) / n
    return round(fwd, 3), round(bwd, 3)


BLACKWELL_ATTENTION = attention_fractions(CUDNN_SDPA_B200, 2250.0)  # (0.571, 0.449), of the B200 peak [S89]
BLACKWELL_ULTRA_SCALE = _ratio(CUDNN_SDPA_GB300, CUDNN_SDPA_GB200)  # (1.150, 1.106)
BLACKWELL_ULTRA_ATTENTION = (
    round(BLACKWELL_ATTENTION[0] * BLACKWELL_ULTRA_SCALE[0], 3),
    round(BLACKWELL_ATTENTION[1] * BLACKWELL_ULTRA_SCALE[1], 3),
)


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model. Bandwidths per GPU per direction; memory as usable bytes."""

    name: str
    bf16_dense_tflops: float
    fp8_dense_tflops: float
    hbm_bytes: float
    hbm_bytes_per_s: float
    nvlink_bytes_per_s: float  # per GPU, per direction
    nvlink_domain_gpus: int  # GPUs that reach each other over NVLink (a node, or an NVL72 rack)
    sms: int
    attention_fwd_fraction: float = 0.62  # of the BF16 dense peak [FA3-BENCH] (Blackwell: [CUDNN-B200])
    attention_bwd_fraction: float = 0.50  # estimate, see module docstring [FA3] (Blackwell: [CUDNN-B200])
    hbm_sustained_fraction: float = 0.92  # [HBM-BENCH]
    generation: str = "hopper"  # hopper | blackwell (Blackwell's GEMM fraction is fitted separately)
    sources: str = ""

    def peak_tflops(self, precision: str) -> float:
        return self.fp8_dense_tflops if precision == "fp8" else self.bf16_dense_tflops

    @property
    def hbm_sustained_bytes_per_s(self) -> float:
        return self.hbm_bytes_per_s * self.hbm_sustained_fraction

    @property
    def placement_domain_gpus(self) -> int:
        """GPUs per NVLink domain that jobs lay out ranks over: the largest power of two in the domain
        (an NVL72 rack runs 64-GPU layouts, as the published GB200 recipes do; 8 on HGX)."""
        p = 1
        while p * 2 <= self.nvlink_domain_gpus:
            p *= 2
        return p


#: H100/H800 80 GB usable memory as nvidia-smi reports it: 81,559 MiB (79.65 GiB)
H100_HBM = 81559 * 2**20
_H = "[S86] peaks, HBM 80 GB (nvidia-smi: 81,559 MiB = 79.65 GiB); [S3] NVLink 450 GB/s per direction, 8 per HGX node; 132 SMs"
GPUS: dict[str, GpuSpec] = {
    "h100": GpuSpec("h100", 989.4, 1978.9, H100_HBM, 3.35e12, 450e9, 8, 132, sources=_H),
    "h800": GpuSpec(
        "h800",
        989.4,
        1978.9,
        H100_HBM,
        3.35e12,
        200e9,
        8,
        132,
        sources="compute and HBM as H100 [S86]; NVLink 400 GB/s bidirectional = 200 GB/s per direction "
        "[S82]; DeepSeek measured ~160 GB/s [DS-V3]",
    ),
    "h200": GpuSpec(
        "h200",
        989.4,
        1978.9,
        140.4 * GIB,
        4.8e12,
        450e9,
        8,
        132,
        sources="[S88] 141 GB, 4.8 TB/s, compute as H100; NVLink as H100 [S3]",
    ),
    "b200": GpuSpec(
        "b200",
        2250.0,
        4500.0,
        179 * GIB,
        8.0e12,
        900e9,
        8,
        148,
        attention_fwd_fraction=BLACKWELL_ATTENTION[0],
        attention_bwd_fraction=BLACKWELL_ATTENTION[1],
        generation="blackwell",
        sources="[S89] HGX 1000 W peaks; [S90] 192 GB (≈180 GB usable), 8 TB/s; [S91] NVLink5 1.8 TB/s "
        "bidirectional; 148 SMs",
    ),
    "b300": GpuSpec(
        "b300",
        2250.0,
        4500.0,
        270 * GIB,
        8.0e12,
        900e9,
        8,
        148,
        attention_fwd_fraction=BLACKWELL_ULTRA_ATTENTION[0],
        attention_bwd_fraction=BLACKWELL_ULTRA_ATTENTION[1],
        generation="blackwell",
        sources="[B300] 288 GB HBM3e (270 GB usable: estimate, same 94 % as B200), NVLink5 as B200; "
        "dense BF16/FP8 estimate = B200 (Blackwell Ultra raised FP4, not BF16/FP8); attention "
        "[CUDNN-B200] × GB300/GB200 [CUDNN-GB]",
    ),
    "gb200": GpuSpec(
        "gb200",
        2500.0,
        5000.0,
        179 * GIB,
        8.0e12,
        900e9,
        72,
        148,
        attention_fwd_fraction=BLACKWELL_ATTENTION[0],
        attention_bwd_fraction=BLACKWELL_ATTENTION[1],
        generation="blackwell",
        sources="[S89] GB200 1200 W: 2500 BF16 dense (dgxc uses 2450/4900 for its MFU); HBM as B200 "
        "[S90]; NVL72: 72 GPUs in one NVLink domain across trays [S91]",
    ),
    "gb300": GpuSpec(
        "gb300",
        2500.0,
        5000.0,
        270 * GIB,
        8.0e12,
        900e9,
        72,
        148,
        attention_fwd_fraction=BLACKWELL_ULTRA_ATTENTION[0],
        attention_bwd_fraction=BLACKWELL_ULTRA_ATTENTION[1],
        generation="blackwell",
        sources="estimate: GB200 peaks; 288 GB HBM3e [B300]; NVL72 domain; attention [CUDNN-B200] × "
        "GB300/GB200 [CUDNN-GB]",
    ),
}


def get_gpu(name: str | GpuSpec) -> GpuSpec:
    """A GPU by name (case-insensitive; ``h100-sxm`` etc. accepted)."""
    if isinstance(name, GpuSpec):
        return name
    key = str(name).strip().lower().replace("-sxm", "").replace("_", "")
    if key not in GPUS:
        raise InputError("unknown GPU", field="advisor.gpu", value=name, allowed=", ".join(GPUS))
    return GPUS[key]
