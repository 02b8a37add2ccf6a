"""Error bands: a step time carries the validation spread of published runs like it."""

import json
import math

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.workload.llm.band import MIN_CASES, SCALE_FACTOR, error_band, similar_cases
from aifabric.workload.llm.models import get_model
from aifabric.workload.llm.validation import CASES, case_model, validation_table

runner = CliRunner()


def _expected_spread(is_moe: bool, params: float) -> tuple[float, int]:
    """The p90 (nearest rank) of |error| of validation cases of the family within ×4, recomputed."""
    models = {c.case: case_model(c) for c in CASES}
    errs = [
        abs(r["error"])
        for r in validation_table()
        if r["role"] == "validate"
        and models[r["case"]].is_moe == is_moe
        and params / SCALE_FACTOR <= models[r["case"]].total_params <= params * SCALE_FACTOR
    ]
    errs.sort()
    return errs[math.ceil(0.9 * len(errs)) - 1], len(errs)


@pytest.mark.parametrize("name", ["llama3.1-405b", "llama3.1-70b", "llama3.1-8b"])
def test_band_is_the_p90_of_similar_validation_cases(name):
    """±spread = the 90th-percentile |error| of the dense validation cases within ×4 of the job's size."""
    m = get_model(name)
    spread, n = _expected_spread(False, m.total_params)
    assert n >= MIN_CASES
    band = error_band(m, 10.0)
    assert band["spread"] == pytest.approx(spread) and band["cases"] == n
    assert band["low_s"] == pytest.approx(10.0 * (1 - spread)) and band["high_s"] == pytest.approx(
        10.0 * (1 + spread)
    )
    assert band["text"] == f"±{spread * 100:.0f} %, p90 of {n} validation cases"
    assert "dense" in band["basis"]


def test_moe_jobs_get_the_moe_spread():
    """A mixture-of-experts job is banded by MoE cases only (their misses included), never by dense ones."""
    m = get_model("deepseek-v3")
    cases, similar = similar_cases(m)
    assert cases and all(c[0] for c in cases) and "mixture-of-experts" in similar
    moe_errors = [abs(c[2]) for c in cases]
    assert error_band(m, 1.0)["spread"] <= max(moe_errors)


def test_band_is_deterministic():
    m = get_model("llama3.1-405b")
    assert error_band(m, 7.02) == error_band(m, 7.02)


def test_train_json_and_terminal_carry_the_band(tmp_path):
    """`train --json` has fabrics[].iteration.band {low_s, high_s, basis} around the step time; the
    terminal prints it next to the step time."""
    p = tmp_path / "t.yaml"
    p.write_text(
        "advisor: {gpus: 64, gpu: h100, workload: training}\n"
        "training: {model: llama3.1-70b, seq_len: 8192, global_batch: 128, parallelism: {tp: 4, pp: 4}}\n"
    )
    r = runner.invoke(app, ["train", str(p), "--fabric", "ib", "--json"])
    assert r.exit_code == 0, r.output
    it = json.loads(r.stdout)["fabrics"][0]["iteration"]
    band = it["band"]
    assert {"low_s", "high_s", "basis"} <= set(band)
    assert band["low_s"] < it["iteration_s"] < band["high_s"]
    text = runner.invoke(app, ["train", str(p), "--fabric", "ib"])
    assert text.exit_code == 0 and f"p90 of {band['cases']} validation cases" in text.output
