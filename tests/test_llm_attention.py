"""Attention throughput of the step-time model: each GPU generation at its own measured fractions.

Blackwell's come from NVIDIA's cuDNN SDPA benchmark on B200 (gpus.py [CUDNN-B200]); the fitted
``blackwell_gemm_scale`` applies to GEMMs only.
"""

import dataclasses

import pytest

from aifabric.workload.llm.compute import CALIBRATION, layer_time
from aifabric.workload.llm.gpus import (
    ATTENTION_SEQ,
    BLACKWELL_ATTENTION,
    BLACKWELL_ULTRA_SCALE,
    CUDNN_SDPA_B200,
    CUDNN_SDPA_GB200,
    CUDNN_SDPA_GB300,
    CUDNN_SDPA_H200,
    attention_fractions,
    get_gpu,
)
from aifabric.workload.llm.models import get_model


def _attention_rates(gpu_name: str, seq: int, cal=CALIBRATION) -> tuple[float, float]:
    """(forward, backward) attention TFLOPS the model runs one dense layer at (FLOPs as the cuDNN
    benchmark counts them: causal 4·s²·heads·d/2 forward, 2.5× backward)."""
    model = get_model("llama3-70b")
    gpu = get_gpu(gpu_name)
    lt = layer_time(model, gpu, "bf16", tokens=seq, seq_len=seq, tp=1, moe=False, cal=cal)
    d = model.qk_head_dim  # 128, = v_head_dim
    flops = 4 * seq * seq * model.heads * d / 2
    return flops / lt.attn_fwd_s / 1e12, 2.5 * flops / lt.attn_bwd_s / 1e12


def test_blackwell_fractions_are_the_cudnn_b200_measurement():
    """B200 and GB200 run attention at the mean of cuDNN 9.10.2's 8K and 16K causal throughput / 2,250."""
    fwd = (CUDNN_SDPA_B200[8192][0] + CUDNN_SDPA_B200[16384][0]) / 2 / 2250
    bwd = (CUDNN_SDPA_B200[8192][1] + CUDNN_SDPA_B200[16384][1]) / 2 / 2250
    assert BLACKWELL_ATTENTION[0] == pytest.approx(fwd, abs=5e-4)
    assert BLACKWELL_ATTENTION[1] == pytest.approx(bwd, abs=5e-4)
    assert BLACKWELL_ATTENTION == (0.571, 0.449)
    for name in ("b200", "gb200"):
        gpu = get_gpu(name)
        assert (gpu.attention_fwd_fraction, gpu.attention_bwd_fraction) == BLACKWELL_ATTENTION


def test_b200_attention_rate_lies_within_the_measured_points():
    """The rate the model runs B200 attention at is between cuDNN's measured 8K and 16K throughputs."""
    fwd, bwd = _attention_rates("b200", 8192)
    (f8, b8), (f16, b16) = CUDNN_SDPA_B200[8192], CUDNN_SDPA_B200[16384]
    assert f8 < fwd < f16 and b8 < bwd < b16
    assert fwd == pytest.approx((f8 + f16) / 2, rel=2e-3)


def test_blackwell_gemm_scale_leaves_attention_alone():
    """Changing the fitted Blackwell GEMM scale moves GEMM time, not attention time (B200), and nothing on H100."""
    model = get_model("llama3-70b")
    low = dataclasses.replace(CALIBRATION, blackwell_gemm_scale=0.5)
    high = dataclasses.replace(CALIBRATION, blackwell_gemm_scale=1.0)
    kw = dict(tokens=8192, seq_len=8192, tp=4, moe=False)
    a = layer_time(model, get_gpu("b200"), "bf16", cal=low, **kw)
    b = layer_time(model, get_gpu("b200"), "bf16", cal=high, **kw)
    assert a.attn_fwd_s == b.attn_fwd_s and a.attn_bwd_s == b.attn_bwd_s
    assert a.gemm_fwd_s > 1.5 * b.gemm_fwd_s
    h_a = layer_time(model, get_gpu("h100"), "bf16", cal=low, **kw)
    h_b = layer_time(model, get_gpu("h100"), "bf16", cal=high, **kw)
    assert h_a == h_b


def test_blackwell_ultra_scales_b200_by_the_gb300_over_gb200_ratio():
    """B300/GB300: B200's fractions × the GB300/GB200 ratio cuDNN 9.22 measures at 8K–16K (> 1: Blackwell
    Ultra doubles the exponential units softmax needs)."""
    ratio = [
        sum(CUDNN_SDPA_GB300[s][i] / CUDNN_SDPA_GB200[s][i] for s in ATTENTION_SEQ) / len(ATTENTION_SEQ)
        for i in (0, 1)
    ]
    assert BLACKWELL_ULTRA_SCALE[0] == pytest.approx(ratio[0], abs=5e-4)
    assert BLACKWELL_ULTRA_SCALE[1] == pytest.approx(ratio[1], abs=5e-4)
    assert 1.0 < BLACKWELL_ULTRA_SCALE[1] < BLACKWELL_ULTRA_SCALE[0] < 1.2
    for name in ("b300", "gb300"):
        gpu = get_gpu(name)
        assert gpu.attention_fwd_fraction == pytest.approx(BLACKWELL_ATTENTION[0] * ratio[0], abs=1e-3)
        assert gpu.attention_bwd_fraction == pytest.approx(BLACKWELL_ATTENTION[1] * ratio[1], abs=1e-3)


def test_blackwell_attention_is_faster_than_hopper_per_gpu_but_a_smaller_share_of_peak():
    """B200 attention: ≈ 2× H100's TFLOPS, at a lower fraction of its 2.25× larger peak (softmax's
    exponential units and shared memory did not scale with the tensor cores)."""
    b_f, b_b = _attention_rates("b200", 8192)
    h_f, h_b = _attention_rates("h100", 8192)
    assert 1.8 < b_f / h_f < 2.25 and 1.8 < b_b / h_b < 2.25
    assert get_gpu("b200").attention_fwd_fraction < get_gpu("h100").attention_fwd_fraction


def test_fractions_need_the_sequence_lengths_they_are_read_at():
    """attention_fractions reads only ATTENTION_SEQ; a table without them is a KeyError, not a guess."""
    with pytest.raises(KeyError):
        attention_fractions({32768: (1.0, 1.0)}, 1.0)


@pytest.mark.validation
def test_hopper_fractions_agree_with_cudnn_on_h200():
    """Cross-check (not a fit): Hopper's FlashAttention-3 forward 0.62 and estimated backward 0.50 lie
    within 6 % of cuDNN 9.1's causal 8K–16K throughput on H200 in NVIDIA's same benchmark family."""
    fwd, bwd = attention_fractions(CUDNN_SDPA_H200, 989.4)
    h100 = get_gpu("h100")
    assert h100.attention_fwd_fraction == pytest.approx(fwd, rel=0.06)
    assert h100.attention_bwd_fraction == pytest.approx(bwd, rel=0.06)


@pytest.mark.validation
def test_attention_table_of_validate_published():
    """The block ``aifabric validate --published`` prints: every H200 check within ±10 % through the
    model's own layer path; B200's source points within ±7 % of the 8K–16K mean they set."""
    from aifabric.workload.llm.attention_check import ATTENTION_TOLERANCE, attention_validation_table

    rows = attention_validation_table()
    checks = [r for r in rows if r["role"] == "check"]
    sources = [r for r in rows if r["role"] == "source"]
    assert len(checks) == 4 and len(sources) == 4
    assert all(r["within_tolerance"] and abs(r["error"]) <= ATTENTION_TOLERANCE for r in checks)
    assert all(abs(r["error"]) < 0.07 for r in sources)
    assert all(r["case"].startswith("H200") for r in checks)


def test_validate_published_json_has_the_attention_block():
    """``aifabric validate --published --json`` carries ``attention`` next to the existing keys."""
    import json

    from typer.testing import CliRunner

    from aifabric.cli import app

    res = CliRunner().invoke(app, ["validate", "--published", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"cases", "collectives", "gemm_shapes", "attention"} <= set(out)
    assert out["attention"]["checked"] == 4 and len(out["attention"]["cases"]) == 8
