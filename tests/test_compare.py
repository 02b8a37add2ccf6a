"""`aifabric compare`: the JSON contract, the terminal summary, the HTML report, bad input."""

import json

import pytest
from typer.testing import CliRunner

from aifabric.api import compare_advisor as compare
from aifabric.cli import app
from aifabric.hardware.catalog import load_catalog
from aifabric.report.html import CHART_IDS, render_report
from aifabric.scenario import AdvisorSpec
from aifabric.stages.measure.network import FabricComm

runner = CliRunner()


@pytest.fixture(scope="module")
def default_result():
    return compare(AdvisorSpec(), load_catalog())


def test_json_contract():
    """--json prints one object with recommendation{fabric, reasons[{text, evidence}]}, fabrics[...] and claims."""
    r = runner.invoke(app, ["compare", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["recommendation"]["fabric"] in ("none", "roce-400g", "roce-800g", "infiniband", "hybrid")
    assert all({"text", "evidence"} <= set(x) for x in out["recommendation"]["reasons"])
    for f in out["fabrics"]:
        assert {"technology", "capex_usd", "iteration_time_s", "busbw_gbps", "risk"} <= set(f)
        assert f["capex_usd"] > 0 and f["iteration_time_s"] > 0 and f["busbw_gbps"] > 0
    assert all({"claim", "holds", "evidence"} <= set(c) for c in out["claims"])


def test_default_is_1024_h100_llama70b(default_result):
    """With no file: 1,024 H100 training Llama-3 70B, both fabrics planned."""
    assert default_result["inputs"]["gpus"] == 1024 and default_result["model"] == "llama3.1-70b"
    assert [f["technology"] for f in default_result["fabrics"]] == ["infiniband", "roce"]


def test_busbw_near_nic_bound(default_result):
    """At 8 GiB the all-reduce busbw approaches 8 NICs × 400G goodput (~385 GB/s, hardware-facts §G.3)."""
    for f in default_result["fabrics"]:
        gbytes = f["busbw_gbps"] / 8
        assert 300 < gbytes <= 400


def test_busbw_sweep_alpha_beta_shape(default_result):
    """The busbw sweep is latency-bound at small sizes (×4 size → ×4 busbw) and flattens near the
    NIC bound at large sizes (the last ×4 step gains < 25 %)."""
    for f in default_result["fabrics"]:
        bw = [r["busbw_gbps"] for r in f["busbw_sweep"]]
        assert bw[1] / bw[0] == pytest.approx(4, rel=0.05)
        assert bw[-1] / bw[-2] < 1.25
        assert {r["algorithm"] for r in f["busbw_sweep"]} <= {"ring", "tree"}


def test_ecmp_efficiency_enters_busbw():
    """The measured ring-step efficiency divides the bandwidth term: t = α·2(n−1) + β-term / efficiency."""
    full = FabricComm("roce", 400e9, 1.0, 2.0, 1e6)
    half = FabricComm("roce", 400e9, 0.5, 2.0, 1e6)
    alpha = 2 * 127 * (14.0 + 2.0) * 1e-6
    t_full = full.collective_s("all-reduce", 2**30, 128, "network")
    t_half = half.collective_s("all-reduce", 2**30, 128, "network")
    assert t_half - alpha == pytest.approx(2 * (t_full - alpha))


def test_terminal_summary():
    """The terminal output has the side-by-side table, the recommendation and the claims."""
    r = runner.invoke(app, ["compare", "--gpus", "256"])
    assert r.exit_code == 0, r.output
    assert "Recommendation:" in r.output and "brochure claims" in r.output


def test_report_written(tmp_path):
    """--report writes one self-contained HTML file with every chart container and plotly inlined."""
    out = tmp_path / "report.html"
    r = runner.invoke(app, ["compare", "--report", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    for cid in CHART_IDS:
        assert f'id="{cid}"' in text
    assert "Plotly.newPlot" in text and "<script src=" not in text  # nothing fetched from the network


def test_report_lists_estimates_and_sources(default_result):
    """The report names the estimated catalog values of the designs shown and their sources."""
    html = render_report(default_result)
    assert "Estimated values in these designs" in html and "S60" in html


def test_scenario_advisor_section(tmp_path):
    """A scenario's advisor: section feeds compare; flags override it."""
    p = tmp_path / "s.yaml"
    p.write_text("name: my-cluster\nadvisor: {gpus: 64, workload: trading}\n")
    r = runner.invoke(app, ["compare", str(p), "--json"])
    out = json.loads(r.stdout)
    assert out["inputs"]["gpus"] == 64 and out["inputs"]["workload"] == "trading"
    r = runner.invoke(app, ["compare", str(p), "--workload", "training", "--budget", "low", "--json"])
    out = json.loads(r.stdout)
    assert out["inputs"]["gpus"] == 64 and out["inputs"]["workload"] == "training"
    assert out["inputs"]["budget"] == "low"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--gpus", "1030"], "--gpus"),
        (["--gpu", "a100"], "--gpu"),
        (["--model", "llama9"], "llama3-70b"),
        (["--workload", "gaming"], "--workload"),
        (["--workload", "trading", "--model", "llama3-8b"], "--model"),  # inference/storage take a model
        (["--ttft-ms", "300"], "--ttft-ms"),  # an inference flag on a training run
        (["--team-expertise", "guru"], "--team-expertise"),
        (["--mfu", "1.5"], "--mfu"),
        (["--report", "/nonexistent/dir/r.html"], "--report"),
        (["/nonexistent.yaml"], "cannot read scenario file"),
    ],
)
def test_bad_input(args, needle):
    """Unknown model or GPU, contradictory flags, bad files: one clear line, exit 2."""
    r = runner.invoke(app, ["compare", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output and "Traceback" not in r.output


def test_impossible_parallelism_message(tmp_path):
    """A training: section asking for TP beyond the NVLink domain is one line naming the field, exit 2."""
    p = tmp_path / "tp16.yaml"
    p.write_text("advisor: {gpus: 1024}\ntraining: {model: llama3.1-70b, parallelism: {tp: 16}}\n")
    r = runner.invoke(app, ["compare", str(p)])
    assert r.exit_code == 2, r.output
    assert "tp" in r.output and "Traceback" not in r.output


def test_same_seed_same_result():
    """compare is deterministic."""
    a = compare(AdvisorSpec(gpus=256), load_catalog())
    b = compare(AdvisorSpec(gpus=256), load_catalog())
    for fa, fb in zip(a["fabrics"], b["fabrics"], strict=True):
        assert fa["fct_us"] == fb["fct_us"] and fa["iteration_time_s"] == fb["iteration_time_s"]


def test_collective_command_nccl_table():
    """`aifabric collective all-reduce` prints an nccl-tests-shaped table ending with the average busbw."""
    r = runner.invoke(app, ["collective", "all-reduce", "--gpus", "16", "--max-bytes", "1MiB"])
    assert r.exit_code == 0, r.output
    assert "#       size         count      type   redop    root     time   algbw   busbw #wrong" in r.output
    assert "# Avg bus bandwidth" in r.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["gather"], "OP"),
        (["all-reduce", "--technology", "fc"], "--technology"),
        (["all-reduce", "--technology", "roce", "--sharp"], "SHARP"),
        (["all-reduce", "--max-bytes", "x"], "--min-bytes"),
        (["all-reduce", "--algorithm", "nvls"], "--algorithm"),
        (["all-reduce", "--algorithm", "pat"], "--algorithm"),
    ],
)
def test_collective_command_bad_input(args, needle):
    """Unknown collectives, technologies, SHARP on RoCE and bad sizes: one line, exit 2."""
    r = runner.invoke(app, ["collective", *args])
    assert r.exit_code == 2 and needle in r.output


def test_roce_adaptive_routing_option():
    """--roce-routing adaptive (the old spelling of adaptive-packet, Spectrum-X class) routes RoCE
    adaptively per packet; the rail permutation's tail shrinks against ECMP on the same fabric."""
    ecmp = compare(AdvisorSpec(gpus=1024), load_catalog())  # 2 scalable units: traffic crosses spines
    ar = compare(AdvisorSpec(gpus=1024, roce_routing="adaptive"), load_catalog())
    assert ecmp["fabrics"][1]["routing"] == "ecmp" and ar["fabrics"][1]["routing"] == "adaptive-packet"
    assert ar["fabrics"][1]["permutation_fct_p99_us"] < ecmp["fabrics"][1]["permutation_fct_p99_us"]
    assert any("routes adaptively (Spectrum-X" in a for a in ar["assumption_notes"])


def test_adaptive_routing_off_is_a_computed_risk():
    """A RoCE plan that relies on adaptive routing carries the risk 'adaptive routing off': the
    iteration slowdown with the flow model's ECMP measurements × the team's misconfiguration
    probability (50 % for no expertise). MoE all-to-all across nodes makes it large; it enters the
    advisor's reasons."""
    r = compare(
        AdvisorSpec(gpus=2048, model="deepseek-moe", roce_routing="adaptive", team_expertise="none"),
        load_catalog(),
    )
    risk = {x["scenario"]: x for x in r["fabrics"][1]["risk"]}["adaptive-routing-off"]
    assert risk["iteration_slowdown"] > 0 and 0.0 < risk["expected_loss"] < 0.5
    assert any(
        x["rule"] == "5" and "no RDMA tuning expertise" in x["text"] for x in r["recommendation"]["reasons"]
    )
    ecmp_plan = compare(AdvisorSpec(gpus=2048, model="deepseek-moe"), load_catalog())
    assert "adaptive-routing-off" not in {x["scenario"] for x in ecmp_plan["fabrics"][1]["risk"]}


def test_report_figures_have_data_titles_and_units(default_result):
    """Every chart of the report has at least one non-empty trace and a titled value axis; sizes on the
    busbw chart read as bytes in binary units (not '10B'), percentages carry a % suffix."""
    from aifabric.report.html import figures

    figs = figures(default_result)
    assert set(figs) <= set(CHART_IDS) and {"chart-busbw", "chart-fct", "chart-tornado"} <= set(figs)
    for cid, fig in figs.items():
        assert fig.data and all(len(t.x if t.x is not None else t.y) > 0 for t in fig.data), cid
        horizontal = cid in ("chart-tornado", "chart-risk")  # bars sorted by size, drawn sideways
        value_axis = fig.layout.xaxis if horizontal else fig.layout.yaxis
        assert value_axis.title.text, cid
    ticks = list(figs["chart-busbw"].layout.xaxis.ticktext)
    assert "8 GiB" in ticks and "8 B" in ticks and not any(t.endswith("0B") for t in ticks)
    assert figs["chart-fct"].layout.yaxis.tickformat == ".0%"
    if "chart-jitter" in figs:
        assert all(t.endswith(" %") for t in figs["chart-jitter"].layout.xaxis.ticktext)


@pytest.mark.parametrize(
    ("kw", "chart"),
    [
        (
            {
                "adv": AdvisorSpec(gpus=64, workload="inference"),
                "inference": {"model": "deepseek-v3", "batch": 256, "gpus_per_instance": 16},
            },
            "chart-inference",
        ),
        (
            {"adv": AdvisorSpec(gpus=64, workload="storage"), "storage": {"on_backend": True}},
            "chart-storage",
        ),
    ],
)
def test_workload_report_figures(kw, chart):
    """--workload inference / storage reports get a chart of their own (per-token network time and
    TTFT against the budgets; checkpoint write time per fabric), with data for every fabric and a
    titled value axis; the training charts keep their checks."""
    from aifabric.report.html import WORKLOAD_CHART_IDS, figures

    kw = dict(kw)
    adv = kw.pop("adv")
    figs = figures(compare(adv, load_catalog(), **kw))
    assert chart in figs and set(figs) <= set(CHART_IDS) | set(WORKLOAD_CHART_IDS)
    other = set(WORKLOAD_CHART_IDS) - {chart}
    assert not other & set(figs)
    fig = figs[chart]
    assert fig.layout.yaxis.title.text and fig.layout.title.text
    for t in fig.data:
        assert len(t.x) == 2 and len(t.y) == 2  # one value per fabric


def test_risk_chart_says_when_nothing_is_lost():
    """A risk chart whose scenarios all cost nothing says so instead of drawing an empty plot."""
    from aifabric.report.html import _fig_risk

    fab = [{"label": "x", "risk_detail": {"a": {"expected_loss": 0.0, "loss_while_present": 0.0}}}]
    fig = _fig_risk(fab)
    assert fig.layout.annotations and "no measured loss" in fig.layout.annotations[0].text
