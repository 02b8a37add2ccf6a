"""Issue 25: a like-for-like comparison — one assumption register, storage as one setting (off the
compute fabric by default), the same tuning state on both fabrics, risk slowdowns against each
fabric's own ideal step, a verdict that says what it hinges on, no fabric where none is needed.
End-to-end runs use the on-disk measurement cache (a first run simulates)."""

from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from aifabric.api import compare_advisor, run_comparison
from aifabric.cli import app
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import AdvisorSpec
from aifabric.stages import deployment as A
from aifabric.stages.decide.assumptions import KINDS
from aifabric.stages.decide.objective import UncertainInput, monte_carlo
from aifabric.stages.measure.network import FabricNetwork
from aifabric.stages.risk.testbed import _rel

CAT = load_catalog()
KEYS = {"name", "value", "unit", "applies_to", "source", "range", "alternatives", "kind", "decides"}


@pytest.fixture(scope="module")
def default():
    """The built-in default comparison (1,024 H100, Llama 3.1 70B)."""
    return run_comparison(AdvisorSpec(), CAT)


@pytest.fixture(scope="module")
def default_json(default):
    from aifabric.report.result import comparison_dict

    return comparison_dict(default)


# ---- the register ---------------------------------------------------------------------------------
def test_assumptions_are_objects_with_every_key(default_json):
    """``assumptions[]`` is a list of objects with name, value, unit, applies_to, source, range,
    alternatives, kind (price | physics | deployment | probability) and decides; names are unique."""
    reg = default_json["assumptions"]
    assert reg and all(set(a) == KEYS for a in reg)
    assert all(a["kind"] in KINDS for a in reg)
    names = [a["name"] for a in reg]
    assert len(names) == len(set(names))
    for must in ("storage.placement", "storage.share", "tuning", "misconfiguration_probability"):
        assert must in names


def test_storage_is_off_the_compute_fabric_by_default_with_its_source(default_json):
    """Storage placement defaults to separate, sourced from the reference designs; its share is 0 and
    the storage-incast scenario costs nothing on either fabric."""
    a = next(x for x in default_json["assumptions"] if x["name"] == "storage.placement")
    assert a["value"] == "separate" and "SuperPOD" in a["source"] and "Llama 3" in a["source"]
    assert a["alternatives"] == ["separate", "on-fabric"]
    assert default_json["deployment"]["storage_share"] == 0.0
    for f in default_json["fabrics"]:
        inc = next(r for r in f["risk"] if r["scenario"] == "storage-incast")
        assert inc["expected_loss"] == 0.0


def test_both_fabrics_run_the_same_tuning_state(default):
    """As shipped (the default): InfiniBand without congestion control, RoCE with PFC + DCQCN at the
    vendor defaults; the RoCE mistake 'dcqcn-defaults' does not apply (it is the baseline)."""
    tb = {f.key: f.testbed.testbed.baseline for f in default.risk.fabrics}
    assert tb == {"infiniband": "none", "roce-400g": "dcqcn-vendor"}
    roce = default.risk.fabric("roce-400g").testbed
    assert "dcqcn-defaults" in roce.not_applicable


def test_tuned_state_turns_congestion_control_on_for_both():
    """``tuned``: IB congestion control on, RoCE DCQCN tuned; Spectrum-X's own CC in both states."""
    assert A.baseline_for("tuned", "infiniband") == "ib-cc"
    assert A.baseline_for("tuned", "roce") == "dcqcn"
    assert A.baseline_for("as-shipped", "roce", "spectrum-x") == "hpcc"
    assert A.baseline_for("tuned", "roce", "spectrum-x") == "hpcc"


def test_ib_cc_off_is_the_twin_of_ecn_off():
    """A tuned InfiniBand fabric carries the 'IB congestion control off' mistake as a tuned RoCE
    fabric carries 'ecn-off'; neither applies where the baseline has no congestion control."""
    from aifabric.stages.risk.library import LIBRARY
    from aifabric.stages.risk.testbed import Testbed

    ib = Testbed(technology="infiniband", baseline="ib-cc", routing="adaptive")
    assert LIBRARY["ib-cc-off"].applies(ib)[0]
    assert not LIBRARY["ib-cc-off"].applies(replace(ib, baseline="none"))[0]
    roce = Testbed(technology="roce", baseline="dcqcn")
    assert LIBRARY["ecn-off"].applies(roce)[0]
    assert not LIBRARY["ecn-off"].applies(replace(roce, baseline="pfc-only"))[0]


# ---- slowdowns against the ideal step --------------------------------------------------------------
def test_slowdown_is_added_time_over_the_ideal_step():
    """(t − t_base) / t_ideal: two fabrics whose scenario adds the same time report the same slowdown,
    whatever their baselines (a baseline slowed by hashing is not a bigger denominator)."""
    ideal = 90.0
    ib = _rel(np.array([1411.0]), np.array([90.0]), ideal)
    roce = _rel(np.array([1591.0]), np.array([270.0]), ideal)
    assert ib == pytest.approx(1321 / 90)
    assert roce == pytest.approx(1321 / 90)


def test_extra_time_adds_to_the_measured_step():
    """An efficiency e under x extra ideal steps becomes 1 / (1/e + x): the step takes x ideal steps
    longer on a fabric that hashes well and on one that does not."""
    net = FabricNetwork(
        key="k",
        technology="roce",
        routing="ecmp",
        source="test",
        link_rate_bps=400e9,
        ring_step_efficiency=0.5,
        permutation_efficiency=0.25,
        path_latency_us=2.0,
        nvlink_busbw_gbps=370.0,
    )
    slow = net.with_extra_time(1.0)
    assert 1 / slow.ring_step_efficiency == pytest.approx(1 / 0.5 + 1.0)
    assert 1 / slow.permutation_efficiency == pytest.approx(1 / 0.25 + 1.0)


# ---- storage as one setting ----------------------------------------------------------------------
def test_storage_on_fabric_share_comes_from_the_checkpoint_model(default):
    """On the fabric, a training job's share is its checkpoint burst / period (14 B per parameter at the
    storage system's ingest every 30 min), sampled ×0.5–×2; off it, 0 and fixed."""
    from aifabric.workload.llm import storage as stm

    wl, perf = default.workload, default.performance
    on = A.storage_share(A.Deployment("on-fabric"), wl, perf)
    nodes = stm.default_storage_nodes(wl.gpus)
    burst = wl.model.total_params * 14 / (nodes * stm.STORAGE_NODE_GBPS / 8 * 1e9)
    assert on.storage_share == pytest.approx(burst / stm.CHECKPOINT_PERIOD_S)
    assert on.storage_share_range == pytest.approx((on.storage_share / 2, on.storage_share * 2))
    off = A.storage_share(A.Deployment("separate"), wl, perf)
    assert off.storage_share == 0.0 and off.storage_share_range == (0.0, 0.0)


def test_the_storage_setting_moves_congestion_and_storage_incast_together():
    """With storage on the fabric the risk stage's congestion share is the storage share (one setting)
    and the storage-incast scenario's persistence is the same value."""
    c = run_comparison(AdvisorSpec(storage_placement="on-fabric"), CAT)
    share = c.deployment.storage_share
    assert share > 0
    assert c.risk.congestion_share == pytest.approx(share)
    for f in c.risk.fabrics:
        inc = next(r for r in f.items if r.scenario == "storage-incast")
        assert inc.persistence == pytest.approx(share)


# ---- the verdict and what it hinges on ------------------------------------------------------------
def test_verdict_names_what_it_hinges_on(default_json):
    """The verdict is one of three; ``hinges_on`` is a list, non-empty whenever it is not clear, each
    entry naming the assumption, its value now, where it flips and the recommendation then."""
    rec = default_json["recommendation"]
    assert rec["verdict"] in ("clear", "depends", "no material difference")
    assert isinstance(rec["hinges_on"], list)
    if rec["verdict"] != "clear":
        assert rec["hinges_on"]
    for h in rec["hinges_on"]:
        assert {"assumption", "value_now", "flips_at", "recommendation_then"} <= set(h)
    assert rec["reasons"][0]["rule"] == "verdict" and rec["summary"] == rec["reasons"][0]["text"]


def test_sensitivity_covers_the_categorical_assumptions(default_json):
    """Sensitivity rows for storage placement, tuning state and host-link media report the design and
    verdict under the alternative (media: run again where auto picked a part one protocol lacks, else a
    row saying every fabric got the same media)."""
    rows = {r["input"]: r for r in default_json["sensitivity"] if r.get("kind") == "categorical"}
    assert {"storage.placement", "tuning", "media.host_link"} <= set(rows)
    for r in rows.values():
        assert r["verdict_then"] in ("clear", "depends", "no material difference")
        assert r["flips"] == (r["design_then"] != default_json["recommendation"]["design"])


def test_a_tie_is_shared_in_the_monte_carlo():
    """Two designs with the same objective each win half the samples, not the first listed."""

    class Twin:
        def value(self, key, x=None):
            return 1.0 + (x or {}).get("u", 0.0)

    inp = UncertainInput("u", "u", 0.0, 0.0, 1.0, "test")
    p, _ = monte_carlo(Twin(), [inp], ["a", "b"], seed=1, n=10)
    assert p == {"a": 0.5, "b": 0.5}


# ---- the scenario's assumptions: section ---------------------------------------------------------
def test_unknown_or_bad_assumptions_are_one_line_errors():
    """Unknown names and values out of range are refused with the field named."""
    with pytest.raises(InputError, match="assumptions.storage.placment"):
        A.check_overrides({"storage.placment": "on-fabric"}, "s.yaml")
    with pytest.raises(InputError, match="separate, on-fabric"):
        A.check_overrides({"storage.placement": "maybe"})
    with pytest.raises(InputError, match="fraction"):
        A.check_overrides({"storage.share": 2})
    with pytest.raises(InputError, match="multiplier"):
        A.check_overrides({"price.switch.roce-400g": -1})
    assert A.check_overrides({"tuning": "tuned", "price.switch.infiniband": 0.5}) == {
        "tuning": "tuned",
        "price.switch.infiniband": 0.5,
    }


def test_validate_checks_the_assumptions_section(tmp_path):
    """``aifabric validate`` refuses an unknown assumption with exit 2 and one line naming it."""
    f = tmp_path / "s.yaml"
    f.write_text("advisor: {gpus: 1024}\nassumptions: {tunning: tuned}\n")
    r = CliRunner().invoke(app, ["validate", str(f)])
    assert r.exit_code == 2 and "assumptions.tunning" in r.output


def test_an_assumption_override_reaches_the_objective(default):
    """``assumptions: {price.switch.roce-400g: 3}`` prices the RoCE switches at three times the catalog:
    the RoCE design's risk-adjusted cost rises and the input is held fixed (not sampled)."""
    c = run_comparison(AdvisorSpec(), CAT, assumptions={"price.switch.roce-400g": 3.0})
    base = default.decision.evidence["roce-400g"].objective
    assert c.decision.evidence["roce-400g"].objective > base
    row = next(s for s in c.decision.sensitivity if s["input"] == "price.switch.roce-400g")
    assert row["range"] == [3.0, 3.0]


# ---- no fabric where none is needed ------------------------------------------------------------
def test_inference_inside_nvlink_domains_needs_no_backend_fabric():
    """64 H100 serving a 70B model in 8-GPU-or-smaller instances: ``fabric`` = none with the reason and
    the front-end note."""
    r = compare_advisor(AdvisorSpec(gpus=64, workload="inference", model="llama3.1-70b"), CAT)
    rec = r["recommendation"]
    assert rec["fabric"] == "none"
    assert "NVLink domain" in rec["summary"] and "front end" in rec["reasons"][0]["text"]


# ---- validate --symmetry ---------------------------------------------------------------------------
@pytest.mark.validation
def test_every_stage_treats_a_design_and_its_twin_alike():
    """``validate --symmetry`` (five jobs here; the 16,384-GPU one in the slow group): each design against
    its own twin has iteration times within 0.5 %, expected losses within 0.5 points and the verdict
    'no material difference' — any asymmetry is a bug."""
    from aifabric.symmetry import symmetry

    checks = symmetry(include_slow=False)
    assert len(checks) == 10
    assert [c.to_dict() for c in checks if not c.holds] == []


@pytest.mark.slow
def test_the_16384_gpu_mirror_holds():
    """The 16,384-GPU job's mirrors hold too (slow: the three-tier fabric's flow model)."""
    from aifabric.symmetry import JOBS, mirror_check

    name, adv, _ = JOBS[-1]
    for fam in ("infiniband", "roce"):
        c = mirror_check(name, adv, fam)
        assert c.holds, c.to_dict()


def test_a_mirror_that_differs_fails():
    """The check can fail: a twin whose expected loss differs by a point is reported as not holding."""
    from aifabric.symmetry import MirrorCheck

    c = MirrorCheck("j", "roce", ("a", "b"), (1.0, 1.0), (0.0, 0.01), "no material difference", {}, 0.0)
    assert not c.holds
    c = MirrorCheck("j", "roce", ("a", "b"), (1.0, 1.0), (0.0, 0.0), "clear", {}, 0.0)
    assert not c.holds


def test_default_host_links_get_the_same_media_on_both_fabrics():
    """At the default 5 m both fabrics' host links are the same optics: a straight multi-link copper
    cable (the AEC one protocol has) would put two rails' NICs on one leaf, so it is not offered."""
    from aifabric.design.cost import cable_fits, server_cage
    from aifabric.design.plan import plan_fabric

    ib = plan_fabric(1024, "infiniband", CAT).media["host-leaf"]
    roce = plan_fabric(1024, "roce", CAT).media["host-leaf"]
    assert (ib.kind, ib.cable_id, ib.switch_optic, ib.nic_optic) == (
        roce.kind,
        roce.cable_id,
        roce.switch_optic,
        roce.nic_optic,
    )
    aec = CAT.cables["aec-800g"]
    assert aec.technology == "ethernet"
    from aifabric.design.cost import switch_cage

    server = server_cage(CAT.get("nic", "cx7-eth"), "twin-port")
    switch = switch_cage(CAT.get("switch", "sn5600"), 400)
    why = cable_fits(aec, (switch, server), 400)
    assert any("one switch cage" in w for w in why)


def test_a_one_switch_plan_is_measured_on_one_switch():
    """A plan of one switch gets a one-switch testbed (a star of the same hosts): what needs a second
    switch (adaptive routing, a fabric link, a second PFC batch) is not applicable, on both fabrics,
    and the ring step runs on it."""
    from aifabric.stages.risk.testbed import LIBRARY, run_testbed, scenario_dict, testbed_for

    for tech, route, hop in (("infiniband", "adaptive", 130), ("roce", "ecmp", 600)):
        one = testbed_for(400, None, hop, 5, route, technology=tech, tiers=1)
        two = testbed_for(400, None, hop, 5, route, technology=tech, tiers=2)
        topo = scenario_dict(one, None, 1)["topology"]
        assert topo["kind"] == "star" and topo["hosts"] == one.leaves * one.hosts_per_leaf
        assert scenario_dict(two, None, 1)["topology"]["kind"] == "leaf-spine"
        assert "one switch" in one.describe()["topology"]
        for sid in ("link-failure", "ib-no-ar", "pfc-threshold-mismatch"):
            ok, why = LIBRARY[sid].applies(one)
            assert not ok and ("one switch" in why or "not a" in why)
        assert LIBRARY["link-failure"].applies(two)[0]
        quiet = run_testbed(one, None, "quiet", 1)
        assert np.isfinite(quiet.step_us) and quiet.step_us >= quiet.ideal_us > 0
