"""The misconfiguration risk model (aifabric.stages.testbed): the packet-level testbed and its wiring into
compare, the advisor and the jitter claim."""

import numpy as np
import pytest
from typer.testing import CliRunner

from aifabric.api import compare_advisor as compare
from aifabric.cli import app
from aifabric.flow import simulate_flows
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import AdvisorSpec
from aifabric.stages.measure import FabricNetwork
from aifabric.stages.risk import MISCONFIG_PROBABILITY
from aifabric.stages.testbed import (
    JITTER_SWEEP_DUTY,
    MISCONFIGS,
    _flows,
    _scenario,
    measure_testbed,
    run_testbed,
)
from aifabric.stages.testbed import Testbed as _Testbed
from aifabric.topology import from_spec

TB = _Testbed()


@pytest.fixture(scope="module")
def rm():
    return measure_testbed(TB)


def test_tuned_testbed_matches_the_flow_model():
    """The tuned baseline (PFC dynamic + HPCC) reaches the max-min sharing compare's RoCE numbers
    assume: the quiet ring step is within 10 % of the flow model's on the same flows and hashes."""
    flows, n = _flows(TB, "quiet")
    topo = from_spec(_scenario(TB, None, 1).topology)
    df = simulate_flows(
        topo,
        {c: flows[c].to_numpy() for c in ("src", "dst", "size_bytes")},
        routing="ecmp",
        seed=1,
        switch_latency_ps=TB.switch_latency_ns * 1000,
        mtu_bytes=4096,
        header_bytes=64,
    )
    packet = run_testbed(TB, None, "quiet", 1)
    assert packet.drops == 0
    assert packet.step_us == pytest.approx(float(df["fct_us"].max()), rel=0.10)


def test_every_run_is_lossless_and_tuned_never_pauses(rm):
    """PFC on everywhere: no run drops a packet; the tuned fabric holds its queues below the PFC
    thresholds (0 PAUSE) in both traffic mixes."""
    for traffic, per in rm.counters.items():
        assert per["tuned"]["pause_frames"] == 0, traffic
        for cfg, c in per.items():
            assert c["drops"] == 0, (traffic, cfg)


def test_ecn_off_spreads_congestion(rm):
    """Without congestion control the sustained incast fills the PFC thresholds and the pauses
    spread to the ring (the DCQCN paper's victim-flow story): the congested ring step is at least
    twice as slow, with PAUSE frames; on the quiet fabric PFC never fires and nothing is lost."""
    assert rm.counters["congested"]["ecn-off"]["pause_frames"] > 100
    assert rm.comm_slowdown["congested"]["ecn-off"] > 1.0
    assert abs(rm.comm_slowdown["quiet"]["ecn-off"]) < 0.10
    assert rm.counters["quiet"]["ecn-off"]["pause_frames"] == 0


def test_congestion_spreading_hurts_bystanders_not_the_incast(rm):
    """Without congestion control the incast itself runs at the target's line rate (its completion
    within 5 % of tuned) while the ring flows that share its paths pay (the victim-flow story);
    DCQCN at firmware defaults slows the incast too."""
    assert abs(rm.storage_slowdown["ecn-off"]) < 0.05
    assert rm.comm_slowdown["congested"]["ecn-off"] > 1.0
    assert rm.storage_slowdown["dcqcn-defaults"] > 0.05
    assert set(rm.incast_us) == {"tuned", *MISCONFIGS}


def test_dcqcn_defaults_cut_colliding_flows(rm):
    """DCQCN at the ConnectX firmware defaults: ECMP collisions alone (quiet traffic) mark, cut
    and park the colliding flows until the 300 µs increase timer — the ring step is at least 1.5×
    the tuned one, with ECN marks and no PAUSE."""
    q = rm.counters["quiet"]["dcqcn-defaults"]
    assert q["ecn_marks"] > 1000 and q["pause_frames"] == 0
    assert rm.comm_slowdown["quiet"]["dcqcn-defaults"] > 0.5


def test_threshold_mismatch_pauses_in_the_second_batch(rm):
    """Half the switches pausing at a static 75 KB: PAUSE frames appear where the tuned fabric has
    none, and the ring step is not faster than tuned."""
    assert rm.counters["congested"]["pfc-threshold-mismatch"]["pause_frames"] > 0
    assert rm.comm_slowdown["congested"]["pfc-threshold-mismatch"] > -0.02


def test_pause_storm_slowdown_grows_with_duty(rm):
    """Spurious PAUSE from one spine: the ring step slows more the longer the spine is paused, and
    at least by about the paused share of the flows it carries."""
    slow = [r["comm_slowdown"] for r in rm.jitter_sweep]
    assert [r["duty"] for r in rm.jitter_sweep] == list(JITTER_SWEEP_DUTY)
    assert all(b >= a - 0.01 for a, b in zip(slow, slow[1:], strict=False))
    assert slow[-1] > 0.05  # 20 % of the time paused costs a ring step more than 5 %
    assert rm.comm_slowdown["quiet"]["pfc-storm"] > 0


def test_same_seed_same_step():
    a = run_testbed(TB, "ecn-off", "congested", 2)
    b = run_testbed(TB, "ecn-off", "congested", 2)
    assert (a.step_us, a.pause_frames, a.drops, a.ecn_marks) == (
        b.step_us,
        b.pause_frames,
        b.drops,
        b.ecn_marks,
    )


def test_blended_clips_gains(rm):
    """A mistake that measured faster than tuned is counted as no loss, never as a gain."""
    for m in MISCONFIGS:
        assert rm.blended(m, 0.0) >= 0 and rm.blended(m, 1.0) >= 0
        assert rm.blended(m, 1.0) == pytest.approx(max(0.0, rm.comm_slowdown["congested"][m]))


def test_a_measured_slowdown_scales_the_bandwidth_term():
    """A fabric measured 100 % slower on bandwidth-bound steps doubles a large network all-reduce;
    NVLink collectives are untouched (the risk stage's perturbed measurement)."""
    n = FabricNetwork.from_measured("roce", 400e9, 0.9, 2.0, 3000.0, all_to_all_efficiency=0.8)
    c, s = n.comm(), n.with_slowdown(1.0).comm()
    big = 2**30
    t0 = c.collective_s("all-reduce", big, 8, "network")
    t1 = s.collective_s("all-reduce", big, 8, "network")
    assert t1 / t0 == pytest.approx(2.0, rel=0.01)
    assert s.collective_s("all-reduce", big, 8, "nvlink") == c.collective_s("all-reduce", big, 8, "nvlink")


@pytest.fixture(scope="module")
def moe_results():
    """A network-heavy case (MoE all-to-all over the network): risks are visible in the iteration."""
    cat = load_catalog()
    return {
        e: compare(AdvisorSpec(gpus=2048, model="deepseek-moe", team_expertise=e), cat)
        for e in ("none", "expert")
    }


def test_compare_carries_every_computed_risk(moe_results):
    r = moe_results["none"]
    ib, roce = r["fabrics"]
    assert ib["risk"] == {} and ib["risk_detail"] == {}
    assert set(MISCONFIGS) <= set(roce["risk"])
    p = MISCONFIG_PROBABILITY["none"]
    for mid, d in roce["risk_detail"].items():
        assert d["expected_loss"] == pytest.approx(p * d["slowdown"])
        assert roce["risk"][mid] == pytest.approx(d["expected_loss"])
        assert d["slowdown"] >= 0
    assert roce["expected_loss"] == pytest.approx(sum(roce["risk"].values()))
    assert roce["risk_detail"]["ecn-off"]["slowdown"] > 0  # the all-to-all is exposed: congestion costs time


def test_expertise_scales_expected_loss(moe_results):
    """Same simulated slowdowns, different probabilities: expected loss scales with P(expertise)."""
    none = moe_results["none"]["fabrics"][1]
    exp = moe_results["expert"]["fabrics"][1]
    ratio = MISCONFIG_PROBABILITY["expert"] / MISCONFIG_PROBABILITY["none"]
    assert exp["expected_loss"] == pytest.approx(none["expected_loss"] * ratio)


def test_congestion_share_moves_the_risk():
    cat = load_catalog()
    lo = compare(AdvisorSpec(gpus=2048, model="deepseek-moe"), cat, congestion_share=0.0)
    hi = compare(AdvisorSpec(gpus=2048, model="deepseek-moe"), cat, congestion_share=1.0)
    assert hi["fabrics"][1]["risk"]["ecn-off"] > lo["fabrics"][1]["risk"]["ecn-off"]
    assert lo["fabrics"][1]["risk"]["ecn-off"] == pytest.approx(0.0, abs=1e-9)


def test_jitter_claim_is_tested(moe_results):
    c = next(c for c in moe_results["none"]["claims"] if "jitter" in c["claim"])
    assert c["holds"] in (True, False)
    assert "of the time" in c["evidence"]
    j = moe_results["none"]["jitter"]
    assert [r["duty"] for r in j["sweep"]] == list(JITTER_SWEEP_DUTY)
    assert all(np.isfinite(r["slowdown"]) for r in j["sweep"])


def test_cli_prints_the_risk_table_and_rejects_bad_share():
    runner = CliRunner()
    r = runner.invoke(app, ["compare", "--gpus", "2048", "--model", "deepseek-moe"])
    assert r.exit_code == 0, r.output
    assert "misconfiguration risk" in r.output and "ecn-off" in r.output
    bad = runner.invoke(app, ["compare", "--congestion-share", "2"])
    assert bad.exit_code == 2
    assert "--congestion-share" in bad.output and "Traceback" not in bad.output


def test_risk_command_json_matches_the_testbed():
    """`aifabric risk --json`: the testbed compare uses, every configuration and the sweep."""
    import json

    r = CliRunner().invoke(app, ["risk", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out["step_us"]) == {"quiet", "congested"}
    assert set(out["comm_slowdown"]["congested"]) == set(MISCONFIGS)
    assert out["step_us"]["quiet"]["tuned"] > 0 and len(out["jitter_sweep"]) == len(JITTER_SWEEP_DUTY)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--rate", "40G"], "--rate"),
        (["--routing", "spray"], "--routing"),
        (["--incast-senders", "0"], "--incast-senders"),
        (["--storm-duty", "1.5"], "--storm-duty"),
        (["--seeds", "a,b"], "--seeds"),
        (["--buffer", "-1MB"], "--buffer"),
    ],
)
def test_risk_command_bad_input(args, needle):
    r = CliRunner().invoke(app, ["risk", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output and "Traceback" not in r.output
