"""`compare --workload inference | storage` end to end: the workload stage says whether the back-end
fabric carries anything, *performance* times it on each fabric, the objective counts served tokens
(inference), the risk stage takes the storage burst's share, and the outputs and charts show it."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from aifabric.api import compare_advisor
from aifabric.cli import app
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import AdvisorSpec
from aifabric.stages.measure.network import FabricNetwork
from aifabric.stages.performance import LIFETIME_YEARS, inference_performance, storage_performance
from aifabric.stages.workload import WorkloadInput, workload
from aifabric.workload.llm.inference import InferenceSpec, inference_step, serve
from aifabric.workload.llm.network import AlphaBetaNetwork
from aifabric.workload.llm.storage import default_storage_nodes

runner = CliRunner()
CAT = load_catalog()
NET = AlphaBetaNetwork()
WIDE_EP = {"model": "deepseek-v3", "precision": "fp8", "batch": 256, "gpus_per_instance": 16}


def _net(tech: str, eff: float, key: str) -> FabricNetwork:
    return FabricNetwork.from_measured(tech, 400e9, eff, 2.0, key=key)


def _wl(kind: str, gpus: int = 64, **sections):
    return workload(WorkloadInput(kind, gpus, 8, 80.0, gpu="h100", **sections))


# ---- workload + performance stages, called alone (fast) ----------------------------------------------
def test_inference_inside_a_node_is_the_same_on_every_fabric():
    """Llama 3.1 70B FP8 fits a 4-GPU instance: nothing on the back-end, so a fabric with half the
    all-to-all efficiency serves exactly the same tokens; only the capex moves the cost."""
    wl = _wl("inference")
    assert wl.serving["needs_backend"] is False and wl.serving["gpus_per_instance"] == 4
    good = inference_performance(wl, _net("infiniband", 1.0, "ib"), 1e6, 40_000)
    bad = inference_performance(wl, _net("roce", 0.3, "roce"), 2e6, 40_000)
    assert good["decode_network_s"] == bad["decode_network_s"] == 0.0
    # TP 4 inside the node: two NVLink all-reduces per layer, the same on both fabrics
    assert good["decode_nvlink_s"] == bad["decode_nvlink_s"] > 0
    assert good["itl_s"] == pytest.approx(good["decode_compute_s"] + good["decode_nvlink_s"])
    assert good["tokens_per_s"] == bad["tokens_per_s"] > 0
    ratio = bad["cost_per_million_served_tokens_usd"] / good["cost_per_million_served_tokens_usd"]
    assert ratio == pytest.approx((64 * 40_000 + 2e6) / (64 * 40_000 + 1e6))


def test_wide_ep_decode_time_depends_on_the_fabric():
    """DeepSeek-V3 over 16 H100 (2 nodes): each decode step pays the dispatch + combine all-to-all per
    MoE layer on the back-end; a fabric at half the all-to-all efficiency pays more network time and
    serves fewer tokens; ITL = compute + exposed network."""
    wl = _wl("inference", inference=WIDE_EP)
    assert wl.serving["needs_backend"] is True
    fast = inference_performance(wl, _net("infiniband", 1.0, "ib"), 1e6)
    slow = inference_performance(wl, _net("infiniband", 0.5, "ib"), 1e6)
    assert 0 < fast["decode_network_s"] < slow["decode_network_s"]
    assert fast["decode_compute_s"] == slow["decode_compute_s"]
    for d in (fast, slow):
        assert d["decode_nvlink_s"] == 0.0  # the expert all-to-all spans nodes: all of it on the network
        assert d["itl_s"] == pytest.approx(d["decode_compute_s"] + d["decode_network_s"])
    assert fast["tokens_per_s"] > slow["tokens_per_s"] > 0


def test_served_tokens_at_the_latency_target_by_hand():
    """Served tokens/s = gpus · out / (n · (prefill + out · ITL / batch)) at the largest batch (halving)
    that meets the budgets; a budget no batch meets serves 0 tokens."""
    spec = InferenceSpec(model="deepseek-v3", precision="fp8", batch=512, gpus_per_instance=32)
    loose = serve(spec, "h100", NET, 256)
    r = loose.step
    assert loose.batch == 512 and loose.meets_budget
    want = 256 * spec.output_tokens / (32 * (r.prefill_s + spec.output_tokens * r.itl_s / 512))
    assert loose.tokens_per_s == pytest.approx(want)
    # an ITL budget between the batch-64 and batch-128 ITLs: the batch halves to 64
    itl64 = inference_step(replace(spec, batch=64), "h100", NET).itl_s
    itl128 = inference_step(replace(spec, batch=128), "h100", NET).itl_s
    tight = serve(replace(spec, itl_budget_s=(itl64 + itl128) / 2), "h100", NET, 256)
    assert tight.batch == 64 and tight.meets_budget and tight.step.itl_s == pytest.approx(itl64)
    never = serve(replace(spec, itl_budget_s=1e-6), "h100", NET, 256)
    assert not never.meets_budget and never.tokens_per_s == 0.0 and never.batch == 512


def test_storage_off_the_backend_is_the_same_on_both_fabrics():
    """By default (reference designs) checkpoints go over the servers' own storage NICs: the same
    write time on both fabrics and no back-end share; 14 bytes per parameter of the model."""
    wl = _wl("storage", 1024)
    ib = storage_performance(wl, _net("infiniband", 1.0, "ib"))
    roce = storage_performance(wl, _net("roce", 0.3, "roce"))
    assert ib["burst_s"] == roce["burst_s"] > 0
    assert ib["backend_busy_share"] == roce["backend_busy_share"] == 0.0 and not ib["on_backend"]
    assert ib["checkpoint_bytes"] == pytest.approx(wl.storage.model.total_params * 14)
    assert wl.storage.storage_nodes == default_storage_nodes(1024) == 2  # 2 TB/s per 16K GPUs (Llama 3)


def test_storage_on_the_backend_shares_it_for_burst_over_period():
    """With storage on the back-end the write goes at the storage ports' rate × the fabric's payload
    share (RoCE's 64-byte header costs more than IB's 26), and the back-end carries it burst/period
    of the time; a shorter period (--checkpoint-period) raises that share in proportion."""
    sec = {"model": "llama3.1-405b", "on_backend": True, "checkpoint_period_s": 1800}
    wl = _wl("storage", 1024, storage=sec)
    ib = storage_performance(wl, _net("infiniband", 1.0, "ib"))
    roce = storage_performance(wl, _net("roce", 1.0, "roce"))
    assert ib["on_backend"] and ib["bottleneck"] == "storage nodes"
    assert ib["burst_s"] == pytest.approx(ib["checkpoint_bytes"] / (2 * 100e9 * 4096 / 4122))
    assert roce["burst_s"] / ib["burst_s"] == pytest.approx((4096 + 64) / (4096 + 26))
    assert ib["backend_busy_share"] == pytest.approx(ib["burst_s"] / 1800)
    half = storage_performance(
        _wl("storage", 1024, storage={**sec, "checkpoint_period_s": 900}), _net("infiniband", 1.0, "ib")
    )
    assert half["backend_busy_share"] == pytest.approx(2 * ib["backend_busy_share"])


# ---- compare end to end ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wide_ep():
    """128 H100 serving DeepSeek-V3 over 16-GPU instances (2 nodes each)."""
    return compare_advisor(AdvisorSpec(gpus=128, workload="inference"), CAT, inference=WIDE_EP)


@pytest.fixture(scope="module")
def storage_on():
    return compare_advisor(
        AdvisorSpec(gpus=128, workload="storage"), CAT, storage={"model": "llama3.1-405b", "on_backend": True}
    )


def test_compare_inference_json_and_objective(wide_ep):
    """compare --json gains fabrics[].inference per fabric and a top-level placement; the objective is
    cost per million served tokens, and the reasons say what goes on the back-end."""
    assert wide_ep["inference"]["needs_backend"] is True and wide_ep["inference"]["model"] == "deepseek-v3"
    rec = wide_ep["recommendation"]
    assert rec["objective"] == "risk-adjusted USD per million served tokens"
    assert any(r["rule"] == "workload" and "needs the back-end fabric" in r["text"] for r in rec["reasons"])
    for f in wide_ep["fabrics"]:
        d = f["inference"]
        assert d["decode_network_s"] > 0 and d["tokens_per_s"] > 0
        per_s = (128 * wide_ep["evidence"]["performance"]["server_usd_per_gpu"] + f["capex_usd"]) / (
            LIFETIME_YEARS * 365.25 * 86400
        )
        assert d["cost_per_million_served_tokens_usd"] == pytest.approx(per_s / d["tokens_per_s"] * 1e6)
        ev = wide_ep["evidence"]["decide"]["fabrics"][f["fabric"]]
        assert ev["objective"] == pytest.approx(
            d["cost_per_million_served_tokens_usd"] / (1 - f["expected_loss"])
        )
        # the risks act on the decode step through its network share
        for x in f["risk"]:
            if x["comm_slowdown"] is not None and x["scenario"] != "job-interruptions":
                assert x["iteration_slowdown"] == pytest.approx(
                    x["comm_slowdown"] * d["network_share_of_itl"]
                )


def test_compare_storage_on_backend_feeds_the_risk(storage_on):
    """On the back-end, the storage-incast risk's share of time is the checkpoint burst / period."""
    assert storage_on["storage"]["on_backend"] is True
    for f in storage_on["fabrics"]:
        inc = next(x for x in f["risk"] if x["scenario"] == "storage-incast")
        assert (
            inc["persistence"] == pytest.approx(f["storage"]["backend_busy_share"]) and inc["persistence"] > 0
        )


def test_terminal_and_report_show_them(wide_ep, storage_on, capsys):
    """The terminal table has the inference/storage rows; the report has a chart of each with data and
    a titled value axis."""
    from aifabric.report.html import WORKLOAD_CHART_IDS, figures, render_report
    from aifabric.report.terminal import print_comparison

    figs = figures(wide_ep)
    assert "chart-inference" in figs and "chart-storage" not in figs
    fig = figs["chart-inference"]
    assert {t.name for t in fig.data} >= {"network per decode step", "ITL budget", "KV-cache transfer"}
    assert fig.layout.yaxis.title.text == "ms"
    sfig = figures(storage_on)["chart-storage"]
    assert list(sfig.data[0].y) == [f["storage"]["burst_s"] for f in storage_on["fabrics"]]
    assert sfig.layout.yaxis.title.text == "seconds"
    assert set(WORKLOAD_CHART_IDS) == {"chart-inference", "chart-storage"}
    assert 'id="chart-inference"' in render_report(wide_ep)
    print_comparison({**wide_ep, "wall_s": 0.0})
    print_comparison({**storage_on, "wall_s": 0.0})
    out = capsys.readouterr().out
    assert "network per decode step" in out and "served tokens / s in budget" in out
    assert "checkpoint write (period)" in out


# ---- bad input: one line, exit 2 -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("yaml_text", "flags", "says"),
    [
        ("advisor: {gpus: 64}\n", ["--ttft-ms", "300"], "--ttft-ms"),
        ("advisor: {gpus: 64, workload: inference}\n", ["--checkpoint-period", "60"], "--checkpoint-period"),
        ("advisor: {gpus: 64, workload: inference}\n", ["--itl-ms", "-1"], "--itl-ms"),
        ("advisor: {gpus: 64}\ninference: {batch: 8}\n", [], "inference"),
        ("advisor: {gpus: 64, workload: inference}\ninference: {batchsize: 8}\n", [], "inference.batchsize"),
        ("advisor: {gpus: 64, workload: inference}\ninference: {model: gpt-9}\n", [], "inference.model"),
        ("advisor: {gpus: 64, workload: storage}\nstorage: {model: gpt-9}\n", [], "storage.model"),
        (
            "advisor: {gpus: 64, workload: storage}\nstorage: {checkpoint_period_s: 0}\n",
            [],
            "checkpoint_period_s",
        ),
        (
            "advisor: {gpus: 16, workload: inference}\ninference: {model: deepseek-v3, gpus_per_instance: 32}\n",
            [],
            "inference.gpus_per_instance",
        ),
    ],
)
def test_bad_workload_input_is_one_line(tmp_path, yaml_text, flags, says):
    p = tmp_path / "s.yaml"
    p.write_text(yaml_text)
    r = runner.invoke(app, ["compare", str(p), *flags, "--json"])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in r.output


def test_flags_reach_the_sections(tmp_path):
    """--ttft-ms / --itl-ms override the inference: section's budgets (stage-level check of the CLI's
    section building)."""
    from aifabric.cli.compare import build_advisor

    p = tmp_path / "s.yaml"
    p.write_text("advisor: {gpus: 64, workload: inference}\ninference: {itl_ms: 80, batch: 32}\n")
    asked = build_advisor(p, {}, {"ttft_ms": 300.0, "itl_ms": 25.0, "checkpoint_period": None})
    assert asked.inference == {"itl_ms": 25.0, "batch": 32, "ttft_ms": 300.0} and asked.storage is None
    wl = _wl("inference", inference=asked.inference)
    assert (
        wl.inference.itl_budget_s == 0.025 and wl.inference.ttft_budget_s == 0.3 and wl.inference.batch == 32
    )
    assert json.dumps(wl.to_dict())  # the evidence is JSON-ready


@settings(max_examples=40, deadline=None)
@given(
    itl_ms=st.floats(min_value=1.0, max_value=200.0),
    tighter=st.floats(min_value=0.1, max_value=1.0),
    batch=st.sampled_from([16, 64, 256, 1024]),
)
def test_a_tighter_itl_budget_never_serves_more(itl_ms, tighter, batch):
    """Whatever the budget: the batch served meets it (or nothing is served), and tightening the
    inter-token budget never raises the served tokens/s (a smaller batch amortises less)."""
    spec = InferenceSpec(
        model="deepseek-v3", precision="fp8", batch=batch, gpus_per_instance=32, itl_budget_s=itl_ms / 1e3
    )
    loose = serve(spec, "h100", NET, 256)
    tight = serve(replace(spec, itl_budget_s=itl_ms * tighter / 1e3), "h100", NET, 256)
    for r in (loose, tight):
        assert r.batch <= batch
        if r.tokens_per_s > 0:
            assert r.meets_budget and r.step.itl_s <= itl_ms / 1e3 * (1 if r is loose else tighter) + 1e-15
        else:
            assert not r.meets_budget
    assert tight.tokens_per_s <= loose.tokens_per_s * (1 + 1e-12)


def test_validate_checks_the_sections(tmp_path):
    """`aifabric validate` runs the workload stage's checks of inference: / storage: (one line, exit 2)
    and passes the shipped scenarios."""
    shipped = Path(__file__).resolve().parents[1] / "scenarios" / "advisor" / "inference-wide-ep.yaml"
    ok = runner.invoke(app, ["validate", str(shipped)])
    assert ok.exit_code == 0, ok.output
    p = tmp_path / "s.yaml"
    p.write_text("advisor: {gpus: 16}\nstorage: {on_backend: true}\n")
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2 and "storage: applies to --workload storage only" in r.output
    assert len(r.output.strip().splitlines()) == 1
