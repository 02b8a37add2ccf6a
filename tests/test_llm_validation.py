"""The step-time model against published step times (validation group): one parameter set, ±10 %.

Cases that pass today are asserted; the ones that do not are listed as strict xfails with their
error, so a change that fixes (or breaks) one shows here. The fitted parameters are reproducible.
"""

import pytest

from aifabric.workload.llm.compute import CALIBRATION
from aifabric.workload.llm.gpus import get_gpu
from aifabric.workload.llm.validation import (
    CASES,
    MEGATRON_WEAK_SCALING,
    TOLERANCE,
    VALIDATION_MODELS,
    case_model,
    fit_calibration,
    format_table,
    validation_table,
)

pytestmark = pytest.mark.validation

# cases the model misses by more than 10 % today (honest list; the reasons, with evidence, are in the
# README section "The training step model": none of them is closed by per-case tuning)
KNOWN_MISSES = {  # error in step-time terms: + = model slower than published
    # published series non-monotonic at the same per-GPU work (5.92/5.96/6.44/6.72/6.24 s): the 512 and
    # 1024 runs are 0.5-0.8 s slower than the 2048 run; BF16 runs of the same release are flat
    "GPT-3 175B FP8 512 H100",  # −10.7 %
    "GPT-3 175B FP8 1024 H100",  # −14.4 %
    # newer software on the same GPUs and layout: NeMo 24.07 782 → 25.02 866 tok/s/GPU (+11 %)
    "GPT-3 175B FP8 512 H100 (NeMo 25.02)",  # +15.5 %
    "GPT-3 175B FP8 512 B200 (NeMo 25.02)",  # +15.6 %
    "GPT-3 175B FP8 128 GB200 (NeMo 25.04)",  # +17.6 %
    # 64K context, CP 8, attention-bound on Blackwell: attention at cuDNN 9.10's measured B200 throughput
    # (gpus.py [CUDNN-B200]); closing them would take attention at ≤ 0.7× that (fwd ≤ 0.40 of peak)
    "Mixtral 8x22B FP8 256 B200 seq 64K (NeMo 25.02)",  # −19.0 %
    "Mixtral 8x22B FP8 256 GB200 seq 64K (NeMo 25.04)",  # −23.5 %
    # NVIDIA's DeepSeek-V3 recipe (NeMo 25.04.01, NCCL all-to-all dispatcher, no CUDA graphs): host-bound
    # (Megatron-LM deepseek-v3-gb200-optimization.md); GB200 does the same per-GPU work as 512 H100
    # only 1.43x faster for 2.5x the peak
    "DeepSeek-V3 BF16 512 H100 (NVIDIA recipe)",  # −25.8 %
    "DeepSeek-V3 BF16 1024 H100 (NVIDIA recipe)",  # −29.6 %
    "DeepSeek-V3 BF16 128 GB200 (NVIDIA recipe)",  # −69.8 %
    "DeepSeek-V3 BF16 256 GB200 (NVIDIA recipe)",  # −70.0 %
    "DeepSeek-V3 BF16 512 GB200 (NVIDIA recipe)",  # −70.0 %
    # DeepSeek's own run (block-scaled FP8, §3.3.4 recompute): the published step lies between full and
    # no all-to-all overlap — DualPipe's full overlap is what the model takes on trust
    "DeepSeek-V3 FP8 2048 H800 (GPU-h per 1T tokens)",  # −19.4 %
    # Megatron-LM's weak-scaling table (r0.8.0). 1.7B and 7.1B (TP 1 / 2, PP 1): the model's step is all
    # compute (0.336 s; 0.631 s + 0.043 s TP, no exposed DP) and the published is 0.12 s longer in both
    # (0.452 s, 0.800 s). The model's compute rate rises 550 → 591 → 598 TFLOP/s from 1.7B to 16B (GEMM
    # shapes), the published 409 → 466 → 489 (the "superlinear" rise the source puts on GEMM size): the
    # model's small-GEMM penalty is weaker than the published one, or a per-step cost is not counted
    "GPT-like 1.7B BF16 48 H100 (Megatron-Core r0.8.0)",  # −25.6 %
    "GPT-like 7.1B BF16 96 H100 (Megatron-Core r0.8.0)",  # −15.6 %
    # TP 8, PP 1, 4 micro-batches: the model exposes 0.27 s of DP traffic (FP32 reduce-scatter of 3.9B
    # params/GPU over 48 nodes, 0.33 s, hidden only behind the last micro-batch's 0.14 s backward, + the
    # parameter all-gather) — more than the 0.20 s the published step (0.892 s) leaves above the
    # model's compute (0.693 s)
    "GPT-like 32B BF16 384 H100 (Megatron-Core r0.8.0)",  # +30.6 %
    # pipeline schedule not published: with one layer per virtual stage (the case's reading) the model
    # is faster, with Megatron's non-interleaved default it is slower (+9.8 % / +9.6 %); the published
    # step lies between the two readings
    "GPT-like 119B BF16 1536 H100 (Megatron-Core r0.8.0)",  # −10.4 %
}


def test_fitted_parameters_are_reproducible():
    """fit_calibration() on the fit cases returns the packaged CALIBRATION values (to 0.005; the
    straggler spread, fitted on the NeMo 24.09 weak-scaling series, to 0.0005)."""
    fit = fit_calibration()
    for key in ("gemm_efficiency", "fp8_gemm_efficiency", "tp_overlap_interference", "blackwell_gemm_scale"):
        assert getattr(fit, key) == pytest.approx(getattr(CALIBRATION, key), abs=0.005), key
    assert fit.straggler_spread == pytest.approx(CALIBRATION.straggler_spread, abs=0.0005)


def test_case_set_covers_what_the_issue_asks():
    """≥ 4 public cases: dense ≥ 1,000 GPUs, a weak-scaling series, InfiniBand and RoCE runs, DeepSeek-V3."""
    assert any("dense-1000" in c.tags and c.fabric == "infiniband" for c in CASES)
    assert any("dense-1000" in c.tags and c.fabric == "roce" for c in CASES)
    assert sum("weak-scaling" in c.tags for c in CASES) >= 5
    assert any(c.model == "deepseek-v3" and c.gpus == 2048 and c.gpu == "h800" for c in CASES)
    fits = [c for c in CASES if c.role == "fit"]
    assert len(fits) == 4 and len(CASES) - len(fits) >= 60
    megatron = [c for c in CASES if "Megatron-Core r0.8.0" in c.case]
    assert len(megatron) == 9 and {c.gpus for c in megatron} >= {48, 6144}
    assert all(
        "weak-scaling" in c.tags and c.fabric == "infiniband" and c.role == "validate" for c in megatron
    )


@pytest.fixture(scope="module")
def rows():
    return {r["case"]: r for r in validation_table()}


@pytest.mark.parametrize("case", [c.case for c in CASES])
def test_case_within_ten_percent(case, rows):
    """Model vs published within ±10 % (strict xfail for the known misses)."""
    row = rows[case]
    if case in KNOWN_MISSES:
        if abs(row["error"]) > TOLERANCE:
            pytest.xfail(f"known miss: {row['error']:+.1%}")
        pytest.fail(f"{case} now passes ({row['error']:+.1%}): remove it from KNOWN_MISSES")
    assert abs(row["error"]) <= TOLERANCE, f"{case}: model {row['model']:.4g} vs {row['published']:.4g}"


def test_table_formats_as_markdown(rows):
    """format_table gives one Markdown row per case with the signed error."""
    text = format_table(list(rows.values()))
    assert text.count("\n") == len(CASES) + 1 and "%" in text


def _megatron_flops_per_sample(m, seq: int) -> float:
    """Megatron-LM's num_floating_point_operations (megatron/training/training.py @f2e5db402c, the
    commit that published the scaling table) for one sequence of a dense model without GQA/SwiGLU:
    12·s·L·h²·((1 + groups/heads + s/h)·q/h + ffn/h + V/(2·L·h)) — non-causal attention, logit layer in."""
    h, n, q = m.hidden, m.layers, m.heads * m.head_dim_eff
    attention = (1 + m.kv_heads / m.heads + seq / h) * q / h
    return 12 * seq * n * h * h * (attention + m.ffn_hidden / h + m.vocab / (2 * n * h))


@pytest.mark.parametrize("row", MEGATRON_WEAK_SCALING, ids=[r[0] for r in MEGATRON_WEAK_SCALING])
def test_megatron_table_models_and_flops_convention(row):
    """The GPT-like configs reproduce the table's model size to 3 % (so: untied output layer, GELU MLP 4·h;
    tied embeddings would miss 1.7B by 13 %), and this package's model FLOPs equal Megatron's count, so
    the published TFLOP/s need no conversion."""
    size, heads, hidden, layers, *_ = row
    m = VALIDATION_MODELS[f"megatron-gpt-{size.lower()}"]
    assert (m.heads, m.hidden, m.layers, m.vocab) == (heads, hidden, layers, 131072)
    assert m.total_params / (float(size[:-1]) * 1e9) == pytest.approx(1.0, abs=0.03)  # label rounding
    assert m.model_flops_per_token(4096) * 4096 == pytest.approx(
        _megatron_flops_per_sample(m, 4096), rel=1e-12
    )


def test_megatron_table_is_bf16_and_self_consistent():
    """The MFU column (41 … 47 %) is TFLOP/s over the H100 dense BF16 peak (not FP8's), and each row's
    DP is the printed 48 with the case's global batch split into 4·pp micro-batches of 1."""
    mfu_printed = (41, 47, 49, 46, 42, 43, 44, 48, 47)
    peak = get_gpu("h100").bf16_dense_tflops
    for (*_, tflops), mfu in zip(MEGATRON_WEAK_SCALING, mfu_printed, strict=True):
        assert abs(100 * tflops / peak - mfu) <= 0.6
    for c in (c for c in CASES if "Megatron-Core r0.8.0" in c.case):
        assert c.layout.dp == 48 and c.layout.gpus == c.gpus
        assert c.layout.micro_batches(c.global_batch) == 4 * c.layout.pp
        assert case_model(c).layers % (c.layout.pp * c.layout.vp) == 0


# ---- weak scaling: the growth of the step with the GPU count at the same work per GPU -------------
@pytest.fixture(scope="module")
def weak():
    from aifabric.workload.llm.scaling_check import weak_scaling_table

    return weak_scaling_table()


def test_weak_scaling_fit_and_check_series_are_disjoint():
    """The straggler spread is fitted on series no step-time case and no checked series holds."""
    from aifabric.workload.llm.scaling_check import held_out_series
    from aifabric.workload.llm.validation import SCALING_FIT_SERIES

    fit = {(c.source, c.gpus, c.precision, c.model) for s in SCALING_FIT_SERIES for c in s}
    held = {(c.source, c.gpus, c.precision, c.model) for s in held_out_series() for c in s}
    table = {(c.source, c.gpus, c.precision, c.model) for c in CASES}
    assert fit and not fit & held and not fit & table
    assert len(held_out_series()) >= 8


def test_weak_scaling_growth_within_three_points(weak):
    """Held-out series: the model's growth (first → last GPU count) within ±3 points of the published
    one, except the GPT-3 175B FP8 series that is not monotonic in scale (known miss, above)."""
    checked = [r for r in weak if r["role"] == "check"]
    misses = {r["series"] for r in checked if not r["within_tolerance"]}
    assert misses == {"GPT-3 175B FP8 128 → 2048 H100"}, misses
    assert all(r["model_growth"] > 0 for r in checked)  # the direction: steps grow with scale


def test_straggler_spread_is_what_brings_the_growth(weak):
    """Without the straggler spread the model is flat (< 0.3 % growth on every series) and misses
    the held-out growth by more on average than with it."""
    checked = [r for r in weak if r["role"] == "check"]
    assert all(abs(r["flat_growth"]) < 0.003 for r in checked)
    err = sum(abs(r["error_points"]) for r in checked)
    flat = sum(abs(r["flat_growth"] - r["published_growth"]) for r in checked)
    assert err < 0.75 * flat, (err, flat)
