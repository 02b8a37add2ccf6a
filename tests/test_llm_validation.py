"""The step-time model against published step times (validation group): one parameter set, ±10 %.

Cases that pass today are asserted; the ones that do not are listed as strict xfails with their
error, so a change that fixes (or breaks) one shows here. The fitted parameters are reproducible.
"""

import pytest

from aifabric.workload.llm.compute import CALIBRATION
from aifabric.workload.llm.validation import CASES, TOLERANCE, fit_calibration, format_table, validation_table

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
}


def test_fitted_parameters_are_reproducible():
    """fit_calibration() on the fit cases returns the packaged CALIBRATION values (to 0.005)."""
    fit = fit_calibration()
    for key in ("gemm_efficiency", "fp8_gemm_efficiency", "tp_overlap_fraction", "blackwell_gemm_scale"):
        assert getattr(fit, key) == pytest.approx(getattr(CALIBRATION, key), abs=0.005), key


def test_case_set_covers_what_the_issue_asks():
    """≥ 4 public cases: dense ≥ 1,000 GPUs, a weak-scaling series, InfiniBand and RoCE runs, DeepSeek-V3."""
    assert any("dense-1000" in c.tags and c.fabric == "infiniband" for c in CASES)
    assert any("dense-1000" in c.tags and c.fabric == "roce" for c in CASES)
    assert sum("weak-scaling" in c.tags for c in CASES) >= 5
    assert any(c.model == "deepseek-v3" and c.gpus == 2048 and c.gpu == "h800" for c in CASES)
    fits = [c for c in CASES if c.role == "fit"]
    assert len(fits) == 4 and len(CASES) - len(fits) >= 40


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
