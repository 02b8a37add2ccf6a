"""Per-shape GEMM throughput: how fast one M × N × K matrix multiply runs on a GPU.

One GEMM ``C[M, N] = A[M, K] · B[K, N]`` takes

    t = t₀ + 2·M·N·K / (rate · W(M·N) · K / (K + K½(precision)))

* ``rate`` = dense peak × ``e_max`` — ``e_max`` is the fraction of the peak that large GEMMs reach
  *inside a training step*: the step model's fitted ``gemm_efficiency`` / ``fp8_gemm_efficiency``
  (compute.py), one value per precision for every shape and every case.
* ``W`` — **wave quantization**: ``w / (w + ½)`` with ``w = M·N / (tile_area · SMs)`` output tiles
  per SM, the expected half wave left idle (smooth; cuBLAS picks its tile per shape, so the
  effective tile area is fitted, not assumed).
* ``K / (K + K½)`` — **K saturation**: each output tile pays a fixed prologue/epilogue against a
  main loop proportional to K, so short-K GEMMs reach less of the rate. FP8's main loop runs twice
  as fast per K step for the same fixed cost, so its ``K½`` is larger.
* ``t₀`` — fixed time per GEMM kernel (fill and drain of the GPU; measured back to back, so no
  host launch gap).

**Fitted on public microbenchmarks only, never on training steps** (:func:`fit_shape_model`,
least squares on log throughput, reproduced by tests/test_llm_gemm.py):

* ``tile_area``, ``t₀``, BF16 ``K½`` (and a level, not used: ``e_max`` replaces it) on
  :data:`XLA_H100_BF16` — OpenXLA's measured H100 matmul table, the 64 shapes with M, N, K in
  512…4096: 3.6 % RMS error over 41–783 TFLOPS, worst point 9 %;
* FP8 ``K½`` on :data:`DEEPGEMM_H800_FP8` (tile area and ``t₀`` kept from BF16): DeepGEMM's
  published M = 4096 shapes on H800, 5 % RMS.

In training, every linear layer runs three GEMMs with the same FLOPs and different shapes
(``M`` = tokens, ``N`` = output width, ``K`` = input width on this GPU): forward ``M × N × K``,
data gradient ``M × K`` reducing over ``N``, weight gradient ``N × K`` reducing over the tokens
``M``. So TP splits (smaller ``N`` or ``K``) and short micro-batches or context-parallel shards
(smaller ``M``: the weight gradient's reduction) cost throughput; big hidden sizes and long
sequences gain it. MoE experts run as one grouped kernel per linear layer (TE's grouped GEMM): the
output tiles of all local experts share the waves, but each expert's weight gradient reduces over
its own tokens only. Blackwell reuses Hopper's shape constants (estimate: no public Blackwell shape
sweep was read; its level is the fitted ``blackwell_gemm_scale``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# [XLA-H100] OpenXLA's default matmul performance table, key "sm_90" (H100 SXM), bf16×bf16→bf16,
# batch 1, every shape with M, N, K in {512, 1024, 2048, 4096}, as (M, N, K, TFLOPS):
# tensorflow/tensorflow third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h @372d578b
# (FLOP/s values rounded to 0.1 TFLOPS).
XLA_H100_BF16: tuple[tuple[int, int, int, float], ...] = (
    (512, 512, 512, 40.7),
    (512, 1024, 512, 80.5),
    (512, 2048, 512, 143.4),
    (512, 4096, 512, 236.3),
    (1024, 512, 512, 82.2),
    (1024, 1024, 512, 145.6),
    (1024, 2048, 512, 237.6),
    (1024, 4096, 512, 338.9),
    (2048, 512, 512, 142.8),
    (2048, 1024, 512, 238.4),
    (2048, 2048, 512, 345.5),
    (2048, 4096, 512, 450.4),
    (4096, 512, 512, 238.8),
    (4096, 1024, 512, 343.7),
    (4096, 2048, 512, 447.0),
    (4096, 4096, 512, 543.1),
    (512, 512, 1024, 71.2),
    (512, 1024, 1024, 138.7),
    (512, 2048, 1024, 232.6),
    (512, 4096, 1024, 373.3),
    (1024, 512, 1024, 141.3),
    (1024, 1024, 1024, 236.3),
    (1024, 2048, 1024, 373.3),
    (1024, 4096, 1024, 490.3),
    (2048, 512, 1024, 235.9),
    (2048, 1024, 1024, 373.3),
    (2048, 2048, 1024, 493.9),
    (2048, 4096, 1024, 594.2),
    (4096, 512, 1024, 370.8),
    (4096, 1024, 1024, 488.1),
    (4096, 2048, 1024, 593.2),
    (4096, 4096, 1024, 677.4),
    (512, 512, 2048, 114.7),
    (512, 1024, 2048, 216.5),
    (512, 2048, 2048, 342.4),
    (512, 4096, 2048, 522.2),
    (1024, 512, 2048, 220.0),
    (1024, 1024, 2048, 350.0),
    (1024, 2048, 2048, 524.3),
    (1024, 4096, 2048, 634.2),
    (2048, 512, 2048, 347.7),
    (2048, 1024, 2048, 523.3),
    (2048, 2048, 2048, 632.0),
    (2048, 4096, 2048, 715.4),
    (4096, 512, 2048, 521.7),
    (4096, 1024, 2048, 632.0),
    (4096, 2048, 2048, 716.1),
    (4096, 4096, 2048, 738.7),
    (512, 512, 4096, 174.5),
    (512, 1024, 4096, 309.6),
    (512, 2048, 4096, 430.5),
    (512, 4096, 4096, 644.1),
    (1024, 512, 4096, 298.9),
    (1024, 1024, 4096, 470.1),
    (1024, 2048, 4096, 653.5),
    (1024, 4096, 4096, 738.5),
    (2048, 512, 4096, 451.2),
    (2048, 1024, 4096, 653.1),
    (2048, 2048, 4096, 738.0),
    (2048, 4096, 4096, 753.6),
    (4096, 512, 4096, 650.0),
    (4096, 1024, 4096, 738.5),
    (4096, 2048, 4096, 758.4),
    (4096, 4096, 4096, 783.3),
)
# [DEEPGEMM] deepseek-ai/DeepGEMM README.md @a6d97a1c (2025-02-25), "Normal GEMMs for dense models":
# block-scaled FP8 on H800 (H100's SMs and clocks), NVCC 12.8 — the M = 4096 rows (the M = 64/128
# rows are memory-bound decode shapes), as (M, N, K, TFLOPS):
DEEPGEMM_H800_FP8: tuple[tuple[int, int, int, float], ...] = (
    (4096, 2112, 7168, 1058.0),
    (4096, 24576, 1536, 990.0),
    (4096, 32768, 512, 590.0),
    (4096, 7168, 16384, 1358.0),
    (4096, 4096, 7168, 1304.0),
    (4096, 7168, 2048, 1025.0),
)
H100_SMS = 132
# the largest M·N and K each table measured: beyond them the model does not extrapolate
MEASURED_RANGE = {"bf16": (4096.0 * 4096.0, 4096.0), "fp8": (4096.0 * 32768.0, 16384.0)}


@dataclass(frozen=True)
class GemmShapeModel:
    """The shape constants (fitted on the microbenchmarks above by :func:`fit_shape_model`)."""

    tile_area: float = 6890.0  # effective output elements per CTA tile (≈ 83 × 83)
    t0_s: float = 5.17e-6  # fixed time per GEMM kernel
    k_half_bf16: float = 232.0
    k_half_fp8: float = 672.0

    def k_half(self, precision: str) -> float:
        return self.k_half_fp8 if precision == "fp8" else self.k_half_bf16


SHAPE = GemmShapeModel()


def waves_eff(m: float, n: float, sms: int, shape: GemmShapeModel = SHAPE) -> float:
    """Smooth wave-quantization efficiency of an M × N output (expected half a wave idle)."""
    w = max(m, 1.0) * max(n, 1.0) / (shape.tile_area * sms)
    return w / (w + 0.5)


def k_saturation(k: float, k_half: float) -> float:
    """Share of the asymptotic rate reached with reduction depth ``k``."""
    return k / (k + k_half)


def shape_eff(m: float, n: float, k: float, precision: str, sms: int, shape: GemmShapeModel = SHAPE) -> float:
    """Throughput of an M × N × K GEMM relative to the large-GEMM rate (wave × K saturation, ≤ 1; no
    extrapolation past the measured range)."""
    mn_max, k_max = MEASURED_RANGE["fp8" if precision == "fp8" else "bf16"]
    return waves_eff(min(m * n, mn_max), 1.0, sms, shape) * k_saturation(
        min(k, k_max), shape.k_half(precision)
    )


def gemm_time(
    m: float,
    n: float,
    k: float,
    precision: str,
    sms: int,
    rate: float,
    shape: GemmShapeModel = SHAPE,
    groups: int = 1,
) -> float:
    """Seconds of one M × N × K GEMM at ``rate`` FLOP/s for large shapes — or of ``groups`` of them
    in one grouped kernel (MoE experts): the output tiles of all groups share the waves, each tile
    reduces over its own K, one fixed time."""
    if m <= 0 or n <= 0 or k <= 0:
        return 0.0
    eff = shape_eff(groups * m, n, k, precision, sms, shape)
    return shape.t0_s + 2.0 * groups * m * n * k / (rate * eff)


def linear_times(
    m: float,
    n: float,
    k: float,
    precision: str,
    sms: int,
    rate: float,
    shape: GemmShapeModel = SHAPE,
    groups: int = 1,
) -> tuple[float, float]:
    """(forward, backward) seconds of one linear layer with ``m`` tokens, output width ``n`` and input
    width ``k`` on this GPU (``groups`` such layers in grouped kernels: MoE experts with ``m`` tokens
    each). Backward = data gradient (M × K, reducing over N) + weight gradient (N × K, reducing over
    the M tokens)."""
    fwd = gemm_time(m, n, k, precision, sms, rate, shape, groups)
    dgrad = gemm_time(m, k, n, precision, sms, rate, shape, groups)
    wgrad = gemm_time(n, k, m, precision, sms, rate, shape, groups)
    return fwd, dgrad + wgrad


def _nelder_mead(f, x0: list[float], steps: list[float], iters: int = 1500) -> list[float]:
    """Minimise ``f`` from ``x0`` (plain Nelder-Mead; deterministic)."""
    pts = [list(x0)] + [[x + (s if j == i else 0.0) for j, x in enumerate(x0)] for i, s in enumerate(steps)]
    vals = [f(p) for p in pts]
    dim = len(x0)
    for _ in range(iters):
        order = sorted(range(len(pts)), key=vals.__getitem__)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in pts[:-1]) / dim for j in range(dim)]
        xr = [c[j] + (c[j] - pts[-1][j]) for j in range(dim)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(dim)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(dim)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, len(pts)):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(dim)]
                    vals[i] = f(pts[i])
    return pts[min(range(len(pts)), key=vals.__getitem__)]


def _log_rms(points, level: float, shape: GemmShapeModel, precision: str) -> float:
    err = 0.0
    for m, n, k, tflops in points:
        t = gemm_time(m, n, k, precision, H100_SMS, level * 1e12, shape)
        err += (math.log(2.0 * m * n * k / t / 1e12) - math.log(tflops)) ** 2
    return math.sqrt(err / len(points))


def fit_shape_model() -> tuple[GemmShapeModel, dict[str, float]]:
    """Fit the shape constants on the public microbenchmarks: (model, RMS log errors and levels)."""

    def bf16(p: list[float]) -> float:
        level, kh, area, t0_us = p
        if kh <= 0 or area <= 100 or t0_us < 0 or level <= 0:
            return 1e9
        return _log_rms(XLA_H100_BF16, level, GemmShapeModel(area, t0_us * 1e-6, kh, kh), "bf16")

    level, kh, area, t0_us = _nelder_mead(bf16, [900.0, 200.0, 8000.0, 4.0], [50.0, 50.0, 2000.0, 1.0])
    base = GemmShapeModel(area, t0_us * 1e-6, kh, kh)

    def fp8(p: list[float]) -> float:
        if p[1] <= 0 or p[0] <= 0:
            return 1e9
        return _log_rms(DEEPGEMM_H800_FP8, p[0], GemmShapeModel(area, t0_us * 1e-6, kh, p[1]), "fp8")

    level8, kh8 = _nelder_mead(fp8, [1500.0, 700.0], [100.0, 100.0])
    model = GemmShapeModel(area, t0_us * 1e-6, kh, kh8)
    stats = {
        "bf16_rms": _log_rms(XLA_H100_BF16, level, base, "bf16"),
        "bf16_level_tflops": level,
        "fp8_rms": _log_rms(DEEPGEMM_H800_FP8, level8, model, "fp8"),
        "fp8_level_tflops": level8,
    }
    return model, stats


# Held-out check (not used in any fit): DeepGEMM README @a6d97a1c, "Grouped GEMMs for MoE models
# (contiguous layout)" — the layout MoE training uses — on H800, as (groups, M per group, N, K,
# TFLOPS); one kernel over groups × M rows.
DEEPGEMM_H800_FP8_GROUPED: tuple[tuple[int, int, int, int, float], ...] = (
    (4, 8192, 4096, 7168, 1297.0),
    (4, 8192, 7168, 2048, 1099.0),
    (8, 4096, 4096, 7168, 1288.0),
    (8, 4096, 7168, 2048, 1093.0),
)
GEMM_TOLERANCE = 0.05


def gemm_validation_table() -> list[dict]:
    """The shape model against DeepGEMM's grouped GEMMs, which no constant was fitted on (at the FP8
    level fitted on the dense table): rows ``case, published, model, error, within_tolerance``."""
    _, stats = fit_shape_model()
    rows = []
    for g, m, n, k, tflops in DEEPGEMM_H800_FP8_GROUPED:
        t = gemm_time(m, n, k, "fp8", H100_SMS, stats["fp8_level_tflops"] * 1e12, groups=g)
        model = 2.0 * g * m * n * k / t / 1e12
        err = model / tflops - 1
        rows.append(
            {
                "case": f"DeepGEMM grouped FP8 {g}×{m}×{n}×{k} (H800)",
                "published": tflops,
                "model": model,
                "error": err,
                "within_tolerance": abs(err) <= GEMM_TOLERANCE,
                "source": "deepseek-ai/DeepGEMM README.md @a6d97a1c (contiguous layout)",
            }
        )
    return rows
