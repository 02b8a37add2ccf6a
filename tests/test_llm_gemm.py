"""Per-shape GEMM throughput (aifabric.workload.llm.gemm): fitted on public microbenchmarks only."""

import math

import pytest

from aifabric.workload.llm.compute import CALIBRATION, Calibration, layer_time
from aifabric.workload.llm.gemm import (
    DEEPGEMM_H800_FP8,
    H100_SMS,
    SHAPE,
    XLA_H100_BF16,
    fit_shape_model,
    gemm_time,
    linear_times,
)
from aifabric.workload.llm.gpus import get_gpu
from aifabric.workload.llm.models import get_model

H100 = get_gpu("h100")


@pytest.fixture(scope="module")
def fit():
    return fit_shape_model()


def test_shape_constants_are_the_fit_on_the_microbenchmarks(fit):
    """fit_shape_model() on the XLA H100 BF16 table and the DeepGEMM FP8 table returns the packaged
    constants (to 1 %), with small errors: 3.6 % RMS (BF16, 64 shapes) and 5 % RMS (FP8, 6 shapes)."""
    model, stats = fit
    for key in ("tile_area", "t0_s", "k_half_bf16", "k_half_fp8"):
        assert getattr(model, key) == pytest.approx(getattr(SHAPE, key), rel=0.01), key
    assert stats["bf16_rms"] < 0.04 and stats["fp8_rms"] < 0.06
    assert len(XLA_H100_BF16) == 64 and len(DEEPGEMM_H800_FP8) == 6


def test_every_microbenchmark_shape_within_ten_percent(fit):
    """Every published shape (41 … 783 TFLOPS BF16, 590 … 1,358 FP8) is within 10 % (BF16) / 12 % (FP8:
    the worst is N = 2112, +11 %) of the model at the fitted level: the shape terms carry the spread."""
    _, stats = fit
    for table, prec, level, tol in (
        (XLA_H100_BF16, "bf16", stats["bf16_level_tflops"], 0.10),
        (DEEPGEMM_H800_FP8, "fp8", stats["fp8_level_tflops"], 0.12),
    ):
        for m, n, k, tflops in table:
            model = 2.0 * m * n * k / gemm_time(m, n, k, prec, H100_SMS, level * 1e12) / 1e12
            assert abs(model / tflops - 1) < tol, (prec, m, n, k, tflops, model)


def test_short_k_and_small_outputs_cost_throughput_but_not_beyond_the_measured_range():
    """Per FLOP, a short reduction (K 512 vs 4096) and a small output (512² vs 4096²) are slower; FP8
    saturates later in K than BF16; beyond the largest measured K / M·N the model does not extrapolate."""
    rate = 1e15

    def per_flop(m, n, k, prec="bf16"):
        return gemm_time(m, n, k, prec, H100_SMS, rate) / (2.0 * m * n * k)

    assert per_flop(4096, 4096, 512) > 1.3 * per_flop(4096, 4096, 4096)
    assert per_flop(512, 512, 4096) > 2 * per_flop(4096, 4096, 4096)
    bf16_gap = per_flop(4096, 4096, 1024) / per_flop(4096, 4096, 4096)
    fp8_gap = per_flop(4096, 4096, 1024, "fp8") / per_flop(4096, 4096, 4096, "fp8")
    assert fp8_gap > bf16_gap
    big, bigger = per_flop(8192, 8192, 4096), per_flop(16384, 16384, 16384)
    assert bigger == pytest.approx(big, rel=0.01)  # only t₀'s share differs


def test_linear_backward_is_data_plus_weight_gradient():
    """Backward of a linear layer = M × K reducing over N (data gradient) + N × K reducing over M
    (weight gradient), each a GEMM of the forward's FLOPs."""
    m, n, k, rate = 4096, 2560, 8192, 5e14
    fwd, bwd = linear_times(m, n, k, "fp8", H100_SMS, rate)
    assert fwd == gemm_time(m, n, k, "fp8", H100_SMS, rate)
    assert bwd == gemm_time(m, k, n, "fp8", H100_SMS, rate) + gemm_time(n, k, m, "fp8", H100_SMS, rate)


def test_tensor_parallel_split_costs_gemm_throughput():
    """Llama 3.1 70B: the same layer split 8 ways runs its GEMM FLOPs slower than unsplit (narrower
    outputs, shorter reductions), and fewer tokens per GPU (context parallel 2) slow the weight
    gradient; a flat-rate calibration has neither effect."""
    m70 = get_model("llama3.1-70b")

    def per_flop(tokens, tp, cal=CALIBRATION):
        lt = layer_time(m70, H100, "bf16", tokens, 8192, tp, moe=False, cal=cal)
        return (lt.gemm_fwd_s + lt.gemm_bwd_s) * tp / tokens

    assert per_flop(8192, 8) > 1.01 * per_flop(8192, 1)
    assert per_flop(4096, 4) > per_flop(8192, 4)
    flat = Calibration(**{**CALIBRATION.__dict__, "per_shape_gemm": False})
    assert per_flop(8192, 8, flat) == pytest.approx(per_flop(8192, 1, flat), rel=1e-12)


def test_flat_calibration_runs_gemms_at_the_given_efficiency():
    """With ``per_shape_gemm`` off, a dense layer's GEMM forward is its FLOPs at efficiency × peak,
    backward twice that; on (the default), the shape factors make it slower."""
    m8 = get_model("llama3.1-8b")
    cal = Calibration(**{**CALIBRATION.__dict__, "gemm_efficiency": 0.5, "per_shape_gemm": False})
    lt = layer_time(m8, H100, "bf16", 4096, 8192, 1, moe=False, cal=cal)
    flops = 2.0 * 4096 * (m8.attention_params + m8.dense_mlp_params)
    assert lt.gemm_fwd_s == pytest.approx(flops / (H100.bf16_dense_tflops * 1e12 * 0.5), rel=1e-12)
    assert lt.gemm_bwd_s == pytest.approx(2 * lt.gemm_fwd_s, rel=1e-12)
    assert not math.isclose(layer_time(m8, H100, "bf16", 4096, 8192, 1, moe=False).gemm_fwd_s, lt.gemm_fwd_s)


def test_compute_efficiency_override_keeps_the_shape_factors():
    """``compute_efficiency`` equal to the fitted value reproduces the default step exactly (the
    objective's uncertainty range is centred on the model's step), and a lower one is slower."""
    from aifabric.workload.llm.layout import Layout
    from aifabric.workload.llm.network import AlphaBetaNetwork
    from aifabric.workload.llm.step import step_time

    args = (get_model("llama3.1-8b"), H100, 8, Layout(tp=1, pp=1, cp=2, dp=4), 8192, 128, AlphaBetaNetwork())
    base = step_time(*args).iteration_s
    same = step_time(*args, compute_efficiency=CALIBRATION.gemm_efficiency).iteration_s
    assert same == base
    assert step_time(*args, compute_efficiency=0.5).iteration_s > base


@pytest.mark.validation
def test_held_out_grouped_gemms_within_five_percent():
    """DeepGEMM's grouped FP8 GEMMs (contiguous layout, MoE training's), which no constant was fitted
    on, are within 5 % of the shape model at the level fitted on the dense table."""
    from aifabric.workload.llm.gemm import gemm_validation_table

    rows = gemm_validation_table()
    assert len(rows) == 4
    for r in rows:
        assert r["within_tolerance"], (r["case"], r["published"], r["model"])


def test_grouped_experts_share_the_waves_but_reduce_over_their_own_tokens():
    """64 local experts with 128 tokens each, in one grouped kernel, run faster than 64 separate
    GEMMs (the tiles of all experts fill the SMs, one fixed time) and slower than one GEMM over all
    8,192 tokens in the weight gradient (each expert reduces over its own 128 tokens)."""
    rate = 1e15
    g, m, n, k = 64, 128, 2048, 7168
    grouped = gemm_time(m, n, k, "bf16", H100_SMS, rate, groups=g)
    assert grouped < g * gemm_time(m, n, k, "bf16", H100_SMS, rate)
    assert grouped == pytest.approx(gemm_time(g * m, n, k, "bf16", H100_SMS, rate), rel=1e-12)
    wgrad_grouped = gemm_time(n, k, m, "bf16", H100_SMS, rate, groups=g)
    assert wgrad_grouped > 1.5 * gemm_time(n, k, g * m, "bf16", H100_SMS, rate)
