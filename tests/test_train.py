"""`aifabric train` and the `training:` section: the interface keys, one fabric with --fabric,
layouts searched where the section leaves them open, bad input as one line, and `validate
--published`."""

import json

import pytest
from typer.testing import CliRunner

from aifabric.cli import app

runner = CliRunner()
SECTION = (
    "advisor: {gpus: 64, gpu: h100, workload: training}\n"
    "training: {model: llama3.1-70b, precision: bf16, seq_len: 8192, global_batch: 128, micro_batch: 1, "
    "parallelism: {tp: 4, pp: 4}}\n"
)


@pytest.fixture
def scenario(tmp_path):
    p = tmp_path / "train.yaml"
    p.write_text(SECTION)
    return p


def test_train_json_keys_and_one_fabric(scenario):
    """--fabric ib: fabrics holds InfiniBand alone, with iteration.iteration_s, mfu (0-1), layout and a
    breakdown whose parts add up to the step time; the given tp/pp are kept, the rest searched."""
    r = runner.invoke(app, ["train", str(scenario), "--fabric", "ib", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [f["technology"] for f in out["fabrics"]] == ["infiniband"]
    it = out["fabrics"][0]["iteration"]
    assert it["iteration_s"] > 0 and 0 < it["mfu"] < 1
    assert set(it["layout"]) == {"tp", "pp", "cp", "vp", "dp", "ep", "micro_batch", "order"}
    assert it["layout"]["tp"] == 4 and it["layout"]["pp"] == 4
    b = it["breakdown"]
    parts = (
        b["compute_s"] + b["bubble_s"] + b["optimizer_s"] + b["straggler_s"] + sum(b["exposed_s"].values())
    )
    assert parts == pytest.approx(it["iteration_s"], rel=1e-9)


def test_train_both_fabrics_same_job(scenario):
    """Without --fabric both fabrics are timed for the same job."""
    out = json.loads(runner.invoke(app, ["train", str(scenario), "--json"]).stdout)
    assert [f["technology"] for f in out["fabrics"]] == ["infiniband", "roce"]
    assert out["model"] == "llama3.1-70b"


def test_compare_accepts_the_training_section(scenario):
    """compare reads the same section: each fabric's iteration carries the mfu and the layout."""
    r = runner.invoke(app, ["compare", str(scenario), "--json"])
    assert r.exit_code == 0, r.output
    for f in json.loads(r.stdout)["fabrics"]:
        assert 0 < f["iteration"]["mfu"] < 1 and f["iteration"]["layout"]["tp"] == 4


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ("training: {model: llama9}", "training.model"),
        ("training: {model: llama3.1-70b, precision: fp4}", "training.precision"),
        ("training: {model: llama3.1-70b, colour: red}", "colour"),
        ("training: {model: llama3.1-405b, parallelism: {tp: 8, pp: 1}}", "GiB per GPU"),
        ("training: {model: llama3.1-70b, parallelism: {tp: 16}}", "training.parallelism"),
        ("training: {model: deepseek-v3, framework: {fp8_recipe: mxfp4}}", "fp8_recipe"),
        ("training: {model: deepseek-v3, framework: {recompute: mla}}", "recompute"),
    ],
)
def test_bad_training_section_is_one_line(tmp_path, section, needle):
    """Unknown models or keys, bad values, impossible layouts and memory that does not fit: one line
    naming the file and the field, exit 2, for train, compare and validate alike."""
    p = tmp_path / "bad.yaml"
    p.write_text("advisor: {gpus: 64}\n" + section + "\n")
    for cmd in (["train", str(p)], ["validate", str(p)]):
        r = runner.invoke(app, cmd)
        assert r.exit_code == 2, (cmd, r.output)
        assert needle in r.output and "Traceback" not in r.output


def test_compare_refuses_the_old_mfu_flag():
    """--mfu (MFU as an input) is refused with a pointer to --compute-efficiency."""
    r = runner.invoke(app, ["compare", "--mfu", "0.4"])
    assert r.exit_code == 2 and "--compute-efficiency" in r.output


def test_compute_efficiency_slows_compute():
    """A lower measured GEMM efficiency makes the step slower (compute is computed, not an input MFU)."""
    fast = json.loads(runner.invoke(app, ["train", "--gpus", "64", "--fabric", "ib", "--json"]).stdout)
    slow = json.loads(
        runner.invoke(
            app, ["train", "--gpus", "64", "--fabric", "ib", "--compute-efficiency", "0.4", "--json"]
        ).stdout
    )
    assert slow["fabrics"][0]["iteration_time_s"] > fast["fabrics"][0]["iteration_time_s"]


def test_validate_published_table():
    """`aifabric validate --published --json` lists the published cases with source, published and model
    values and an error; most cases not used in the fit are within ±10 %."""
    r = runner.invoke(app, ["validate", "--published", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["checked"] >= 20 and out["within_tolerance"] / out["checked"] > 0.6
    assert all({"case", "source", "published", "model", "error"} <= set(c) for c in out["cases"])
    gemm = out["gemm_shapes"]  # the GEMM shape model against held-out microbenchmarks
    assert gemm["checked"] == 4 and all(
        {"case", "published", "model", "error"} <= set(c) for c in gemm["cases"]
    )
    assert gemm["fit"]["bf16_rms"] < 0.04
    ep = out["expert_alltoall"]  # the training / inference models' dispatch + combine against DeepEP
    assert ep["checked"] == 30 and ep["within_tolerance"] == 28 and ep["tolerance"] == 0.15
    assert sorted(ep["known_misses"]) == ["deepep-ll-nvl-ep8-combine", "deepep-ll-nvl-ep8-dispatch"]
    assert all({"case", "source", "published", "model", "error", "unit"} <= set(c) for c in ep["cases"])


def test_training_section_takes_the_deepseek_recipe_options(tmp_path):
    """framework: recompute mla_up_proj and fp8_recipe blockwise (DeepSeek-V3's own recipe) are
    accepted, and block-scaled FP8 on H100 is slower than per-tensor FP8."""
    base = (
        "advisor: {gpus: 512, gpu: h100, workload: training}\n"
        "training: {model: deepseek-v3, precision: fp8, seq_len: 4096, global_batch: 4096, micro_batch: 1, "
        "parallelism: {tp: 2, pp: 8, cp: 1, vp: 1, ep: 64}, framework: {expert_tp: 1, recompute: mla_up_proj%s}}\n"
    )
    times = []
    for extra in ("", ", fp8_recipe: blockwise"):
        p = tmp_path / "ds.yaml"
        p.write_text(base % extra)
        r = runner.invoke(app, ["train", str(p), "--fabric", "ib", "--json"])
        assert r.exit_code == 0, r.output
        times.append(json.loads(r.stdout)["fabrics"][0]["iteration"]["iteration_s"])
    assert times[1] > times[0]


def test_train_runs_the_named_designs_of_the_scenario(tmp_path):
    """train shares compare's design → performance chain: advisor.designs is honoured, and a
    --fabric family that none of them has is one error line, exit 2."""
    p = tmp_path / "d.yaml"
    p.write_text("advisor: {gpus: 64, designs: [spectrum-x-400g]}\ntraining: {model: llama3.1-8b}\n")
    r = runner.invoke(app, ["train", str(p), "--fabric", "roce", "--json"])
    assert r.exit_code == 0, r.output
    assert [f["label"].split()[0] for f in json.loads(r.stdout)["fabrics"]] == ["spectrum-x-400g"]
    r = runner.invoke(app, ["train", str(p), "--fabric", "ib", "--json"])
    assert r.exit_code == 2
    assert "--fabric" in r.stderr and "Traceback" not in r.output
