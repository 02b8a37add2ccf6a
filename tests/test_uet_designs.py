"""Ultra Ethernet as a design a buyer can choose: UEC parts in the catalog, the uec-* designs in
``plan`` and ``compare`` (priced, measured on the UET transport, risk-weighted), the UET risk
scenarios on the packet-level testbed, and the symmetric ask of the risk library."""

import json

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.design.plan import DESIGNS, plan_design
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import scenario_from_dict
from aifabric.stages.risk import testbed as T
from aifabric.stages.risk.library import LIBRARY, perturb

CAT = load_catalog()
UET_SCENARIOS = (
    "uet-trimming-off",
    "uet-spraying-off",
    "uet-nscc-off",
    "uet-nscc-misset",
    "uet-roce-fallback",
)


def _uet_testbed(**kw):
    return T.testbed_for(400, 165_000_000, 600, 40, "adaptive-packet", technology="uet", radix=256, **kw)


# ---- parts and designs -------------------------------------------------------------------------------
def test_uec_parts_say_what_they_support_with_a_source():
    """Every part with a uet record names its source; NICs that run UET say so, the switches trim or
    carry LLR / CBFC as their sources state (None where a source is silent, never a guessed no)."""
    with_uet = [r for r in [*CAT.switches.values(), *CAT.nics.values()] if r.uet is not None]
    assert {"pollara400", "thor-ultra", "tomahawk6-100g", "dell-z9964f", "tomahawk-ultra"} <= {
        r.id for r in with_uet
    }
    for r in with_uet:
        assert r.uet_source and r.uet_basis, r.id
    assert CAT.nics["thor-ultra"].uet.transport and CAT.nics["pollara400"].uet.transport
    assert CAT.switches["tomahawk6-100g"].uet.trimming
    assert CAT.switches["tomahawk-ultra"].uet.llr and CAT.switches["tomahawk-ultra"].uet.cbfc
    assert CAT.switches["tomahawk6-100g"].uet.llr is None  # not in the sources
    # quote-only parts are input ranges
    for pid in ("thor-ultra",):
        assert CAT.nics[pid].price_input and CAT.nics[pid].price_range_usd
    assert CAT.switches["tomahawk6-100g"].price_input


@pytest.mark.parametrize(
    ("label", "nic", "rate"), [("uec-400g", "pollara400", 400), ("uec-800g", "thor-ultra", 800)]
)
def test_uec_designs_plan_priced_with_transport_uet(label, nic, rate):
    p = plan_design(label, 1024, CAT)
    d = p.to_dict()
    assert d["transport"] == "uet" and d["technology"] == "roce"
    assert d["nic"] == nic and d["nic_rate_gbps"] == rate and d["capex_usd"] > 0
    assert d["input_lines"] > 0  # quote-only switch and NIC: priced by input ranges
    assert any("Ultra Ethernet" in n for n in d["notes"])
    # the optics and cage rules of Ethernet hold: every host link has a module at both ends
    assert any(x["where"] == "host-leaf @NIC" for x in d["bom"])


def test_every_design_states_its_transport_and_pollara_as_roce_says_so():
    for label in DESIGNS:
        d = plan_design(label, 256, CAT).to_dict()
        want = "uet" if label.startswith("uec-") else DESIGNS[label]["technology"]
        assert d["transport"] == want, label
    notes = plan_design("th5-pollara-400g", 256, CAT).to_dict()["notes"]
    assert any("UEC-capable" in n and "plain RoCE" in n for n in notes)


def test_a_uet_design_refuses_a_nic_without_uet():
    with pytest.raises(InputError) as e:
        plan_design("uec-400g", 256, CAT, nic_id="cx7-eth")
    assert e.value.field == "--nic" and "pollara400" in e.value.allowed


def test_plan_cli_json_and_text_show_the_transport():
    r = CliRunner().invoke(app, ["plan", "--design", "uec-400g", "--gpus", "256", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["fabrics"][0]["transport"] == "uet"
    r = CliRunner().invoke(app, ["plan", "--design", "uec-400g", "--gpus", "256"])
    assert r.exit_code == 0 and "Ultra Ethernet transport" in r.stdout


def test_default_compare_options_have_no_uet_design():
    from aifabric.scenario import AdvisorSpec
    from aifabric.stages.design.options import options_for

    opts = options_for(AdvisorSpec(), CAT.get("gpu", "h100"), CAT)
    assert [o.key for o in opts] == ["infiniband", "roce-400g"] and not any(o.transport for o in opts)


# ---- the risk library on the UET testbed ---------------------------------------------------------------
def test_uet_scenarios_apply_to_uet_only_and_pfc_scenarios_not_on_lossy_uet():
    uet, roce = _uet_testbed(), T.testbed_for(400, 165_000_000, 600, 40, "ecmp")
    for sid in UET_SCENARIOS:
        assert LIBRARY[sid].applies(uet)[0] and not LIBRARY[sid].applies(roce)[0], sid
    for sid in ("pfc-storm", "pfc-threshold-mismatch", "pfc-watchdog-off"):
        ok, why = LIBRARY[sid].applies(uet)
        assert not ok and "lossless" in why
    ok, why = LIBRARY["uet-llr-off"].applies(uet)
    assert not ok and "not measured" in why and "fabric.link_errors" in why
    for sid in ("slow-receiver", "stuck-receiver", "link-failure", "straggler-nic", "storage-incast"):
        assert LIBRARY[sid].applies(uet)[0], sid


def test_pfc_scenarios_apply_to_a_lossless_uet_class_and_run():
    """In the lossless class (baseline nscc-pfc: PFC on, the trim limit at the whole buffer) the PFC
    scenarios apply and are measured; two switch batches with different PFC thresholds pause."""
    tb = _uet_testbed(baseline="nscc-pfc")
    fab = perturb(tb, None)
    assert fab["pfc"]["enabled"] and fab["uet"]["queue_limit"] == f"{tb.buffer_bytes}B"
    for sid in ("pfc-storm", "pfc-threshold-mismatch", "pfc-watchdog-off"):
        assert LIBRARY[sid].applies(tb)[0], sid
    r = T.run_testbed(tb, "pfc-threshold-mismatch", "quiet", 1)
    assert r.pause_frames > 0 and r.drops == 0


def test_uet_scenarios_are_valid_simulate_files_changing_one_setting():
    tb = _uet_testbed()
    base = perturb(tb, None)
    assert base["transport"] == "uet" and base["uet"] == {"trimming": True, "ev_count": 64}
    assert perturb(tb, "uet-trimming-off")["uet"]["trimming"] is False
    assert perturb(tb, "uet-spraying-off")["uet"]["ev_count"] == 1
    assert perturb(tb, "uet-nscc-off")["congestion_control"] == "none"
    assert "base_rtt" in perturb(tb, "uet-nscc-misset")["uet"]["nscc"]
    fb = perturb(tb, "uet-roce-fallback")
    assert fb["transport"] == "rc" and fb["pfc"] == {"enabled": False} and "uet" not in fb
    assert "pfc_watchdog" not in perturb(tb, "stuck-receiver")
    for sid in (None, *UET_SCENARIOS, "stuck-receiver", "link-failure"):
        scenario_from_dict(
            {**T.scenario_dict(tb, sid, 1), "workload": {"kind": "permutation", "flow_size": "1MB"}}
        )


def test_trimming_off_drops_and_spraying_off_slows_the_ring_on_the_packet_engine():
    """Measured, not set: without trimming the congested mix drops packets (the baseline trims and
    drops none); one entropy value per flow makes the quiet ring step collide on ECMP."""
    tb = _uet_testbed()
    base_q, base_c = T.run_testbed(tb, None, "quiet", 1), T.run_testbed(tb, None, "congested", 1)
    off = T.run_testbed(tb, "uet-trimming-off", "congested", 1)
    assert base_c.drops == 0 and off.drops > 0 and base_c.pause_frames == 0
    spray_off = T.run_testbed(tb, "uet-spraying-off", "quiet", 1)
    assert spray_off.step_us > 1.5 * base_q.step_us
    assert base_q.step_us < 1.3 * base_q.ideal_us


# ---- compare with the UET design ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def compared():
    r = CliRunner().invoke(
        app, ["compare", "--designs", "ib-ndr-400g,roce-sn5600-cx7-400g,uec-400g", "--gpus", "128", "--json"]
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_compare_prices_measures_and_risk_weights_the_uet_design(compared):
    by = {f["design"]: f for f in compared["fabrics"]}
    u = by["uec-400g"]
    assert u["transport"] == "uet" and by["ib-ndr-400g"]["transport"] == "infiniband"
    assert by["roce-sn5600-cx7-400g"]["transport"] == "roce"
    assert u["capex_usd"] > 0 and u["iteration_time_s"] > 0 and 0 <= u["expected_loss"] <= 1
    assert u["risk_testbed"]["testbed"]["technology"] == "uet"
    scen = {r["scenario"] for r in u["risk"]}
    assert set(UET_SCENARIOS) <= scen and not scen & {"pfc-storm", "ecn-off", "lossy-class"}
    assert "uet-llr-off" in u["risk_testbed"]["not_applicable"]
    assert not {r["scenario"] for r in by["roce-sn5600-cx7-400g"]["risk"]} & set(UET_SCENARIOS)
    assert compared["recommendation"]["transport"] in ("roce", "infiniband", "uet")
    assert "uec-400g" in compared["probability_best"]
    assert any("Ultra Ethernet transport" in n for n in compared["assumption_notes"])


# ---- the symmetric ask ---------------------------------------------------------------------------------
def test_every_risk_scenario_is_asked_of_every_family():
    from aifabric.symmetry import FAMILIES, coverage_gaps, risk_coverage

    assert "uet" in FAMILIES
    cov = risk_coverage()
    assert set(cov) == set(LIBRARY)
    assert coverage_gaps(cov) == []
    for sid in UET_SCENARIOS:
        assert cov[sid]["on"]["uet"] == "measured" and {"roce", "infiniband"} <= set(cov[sid]["counterparts"])


def test_coverage_finds_a_scenario_without_counterpart():
    from aifabric.symmetry import coverage_gaps, risk_coverage

    cov = risk_coverage()
    cov["uet-trimming-off"] = {**cov["uet-trimming-off"], "counterparts": {}}
    assert "uet-trimming-off on roce" in coverage_gaps(cov)


def test_the_uet_mirror_holds_on_the_small_job():
    from aifabric.symmetry import JOBS, mirror_check

    name, adv, _ = next(j for j in JOBS if j[0] == "small-64")
    c = mirror_check(name, adv, "uet")
    assert c.designs == ("uec-400g", "uec-400g-mirror") and c.holds, c.to_dict()


# ---- the flow model's UET term in the measure stage ------------------------------------------------------
_KEY = (256, 400 * 10**9, 8, 32, (5.0, 40.0, 300.0))  # radix 32: a rail spans two leaves


class _Shift:
    """Every host sends 16 MiB to the host half the fabric away (crosses the spines)."""

    def __hash__(self):
        return 1

    def __eq__(self, other):
        return isinstance(other, _Shift)

    def flows(self):
        import numpy as np

        from aifabric.stages.measure.flows import rail_topology

        h = np.asarray(rail_topology(*_KEY).hosts)
        return {
            "src": h,
            "dst": h[(np.arange(len(h)) + len(h) // 2) % len(h)],
            "size_bytes": np.full(len(h), 16 << 20),
        }


def test_measure_caps_sprayed_flows_at_the_measured_uet_efficiency():
    """A UET design's pattern runs the even split plus the packet engine's per-flow efficiency: on
    flows that cross the spines it measures lower than the same split without it (the cap binds at
    the measured distribution's lowest quantiles, about 0.75)."""
    from aifabric.flow.uet import efficiency_table
    from aifabric.stages.measure.flows import flow_technology, measure_pattern

    uet = measure_pattern(_KEY, "uet", _Shift(), 1, 600e3, "adaptive-packet")[0]
    plain = measure_pattern(_KEY, "roce", _Shift(), 1, 600e3, "adaptive-packet")[0]
    low = min(efficiency_table()["efficiency"]["mixed"]["trimming"]["quantiles"])
    assert plain == pytest.approx(1.0) and low - 0.02 < uet < 0.9
    fd = type("FD", (), {"transport": "uet", "technology": "roce"})()
    assert flow_technology(fd) == "uet"
