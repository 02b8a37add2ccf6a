"""The risk library (aifabric.stages.risk.testbed) and the risk stage (aifabric.stages.risk.assess): baselines near
ideal, each scenario's physics on its shipped file, the loss combination, and compare's risk list."""

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.flow import simulate_flows
from aifabric.scenario import load_scenario
from aifabric.sim import simulate
from aifabric.stages.risk.assess import (
    DAYS_TO_FIND,
    DAYS_TO_FIND_AUDIT,
    RiskItem,
    RiskSpec,
    _attribute,
    _p_d,
    combine,
    lost_share,
)
from aifabric.stages.risk.scenario_files import shipped_files, shipped_testbed, write_scenarios
from aifabric.stages.risk.testbed import (
    LIBRARY,
    SCALING_TOLERANCE,
    _flows,
    _scenario,
    run_testbed,
    scaling_check,
)
from aifabric.stages.risk.testbed import testbed_for as make_testbed
from aifabric.topology import from_spec

RISK_DIR = Path(__file__).resolve().parents[1] / "scenarios" / "risk"


# ---- baselines ---------------------------------------------------------------------------------------
PRESETS = {
    "ib-adaptive": ("infiniband", "none", "adaptive", 130),
    "ib-adaptive-ib-cc": ("infiniband", "ib-cc", "adaptive", 130),
    "roce-ecmp-dcqcn": ("roce", "dcqcn", "ecmp", 600),
    "roce-ecmp-hpcc": ("roce", "hpcc", "ecmp", 600),
    "roce-ecmp-pfc-only": ("roce", "pfc-only", "ecmp", 600),
    "roce-adaptive-hpcc (Spectrum-X style)": ("roce", "hpcc", "adaptive", 600),
}


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_baseline_runs_the_quiet_ring_step_near_ideal(preset):
    """Each preset's tuned baseline runs the quiet ring step within 10 % of the flow model's max-min
    time on the same routing and hashes (ECMP collisions included; the ideal for adaptive routing),
    lossless. Adaptive + HPCC was 799-916 us against ~94 us before INT carried the egress port."""
    tech, base, routing, hop = PRESETS[preset]
    tb = make_testbed(400, None, hop, 40, routing, technology=tech, baseline=base, radix=64)
    flows, _ = _flows(tb, "quiet")
    sc = _scenario(tb, None, 1)
    topo = from_spec(sc.topology)
    flow_routing = {"ecmp": "ecmp", "static": "static", "adaptive": "adaptive"}[tb.routing]
    # HPCC: the same wire bytes (the INT stack is header on the wire, tests/test_hpcc_int.py) and
    # its target utilisation η — HPCC keeps links at η of line rate by design (Li et al. §3)
    hpcc = sc.fabric.congestion_control == "hpcc"
    int_bytes = sc.fabric.hpcc.int_bytes if sc.fabric.hpcc.int_bytes is not None else 42
    df = simulate_flows(
        topo,
        {c: flows[c].to_numpy() for c in ("src", "dst", "size_bytes")},
        routing=flow_routing,
        seed=1,
        switch_latency_ps=tb.switch_latency_ns * 1000,
        mtu_bytes=4096,
        header_bytes=(64 if tech == "roce" else 26) + (int_bytes if hpcc else 0),
    )
    ideal = float(df["fct_us"].max()) / (sc.fabric.hpcc.eta if hpcc else 1.0)
    packet = run_testbed(tb, None, "quiet", 1)
    assert packet.drops == 0
    assert packet.step_us == pytest.approx(ideal, rel=0.10)


# ---- the shipped scenario files -------------------------------------------------------------------------
def test_shipped_files_are_what_the_library_writes(tmp_path):
    """scenarios/risk/ holds exactly what write_scenarios() writes today (regenerate with
    ``python -c "from aifabric.stages.risk.scenario_files import write_scenarios; write_scenarios('scenarios/risk')"``)."""
    names = write_scenarios(tmp_path)
    shipped = sorted(p.name for p in RISK_DIR.iterdir())
    assert sorted([*names, "flows-quiet.txt", "flows-congested.txt", "flows-three-tier.txt"]) == shipped
    for n in shipped:
        assert (tmp_path / n).read_text() == (RISK_DIR / n).read_text(), n


def test_every_library_scenario_is_shipped_or_says_why_not():
    """Every scenario of the library has a shipped file on each of its fabrics, except those the
    testbed cannot measure (ECMP polarisation needs three tiers)."""
    shipped = {(tech, sid) for _, tech, sid, _, _ in shipped_files()}
    for sid, trig in LIBRARY.items():
        for tech in trig.fabrics:
            ok, why = trig.applies(
                shipped_testbed(tech, "pfc-only" if sid in ("pfc-watchdog-off",) else None)
            )
            assert (tech, sid) in shipped or (not ok and why), (tech, sid)


_RUNS: dict = {}


def run(name: str):
    """Simulate one shipped file (cached per test session): (ring step us or inf, summary)."""
    if name not in _RUNS:
        sc = load_scenario(RISK_DIR / name)
        res = simulate(sc)
        f = res.flows
        n_ring = 128 if ("three-tier" in name or "polarisation" in name) else 30
        done = f["completed"].to_numpy()[:n_ring]
        step = float(f["fct_us"].to_numpy()[:n_ring].max()) if done.all() else math.inf
        _RUNS[name] = (step, res.summary)
    return _RUNS[name]


def test_pfc_storm_from_a_stuck_nic_spreads_without_the_watchdog_and_is_contained_with_it():
    """A stuck NIC (the incast target stops draining) on PFC-only RoCE: without the watchdog its
    PAUSE holds the leaf's buffer and the ring, which never sends to it, does not finish (a hang);
    with the watchdog the pause ends at the detection time and the ring finishes near the baseline."""
    assert run("roce-pfc-watchdog-off.yaml")[0] == math.inf
    contained, _ = run("roce-stuck-receiver.yaml")
    base, _ = run("roce-baseline-congested-pfc-only.yaml")
    assert contained < 1.1 * base


def test_the_same_slow_receiver_spreads_congestion_on_both_fabrics():
    """A receiver draining at half rate under the incast: PFC-only RoCE pauses and InfiniBand without
    congestion control withholds credits; both slow the ring (victim flows that never touch the
    slow host) by more than 30 % against the same traffic without it."""
    roce, s = run("roce-slow-receiver.yaml")
    assert roce > 1.3 * run("roce-baseline-congested-pfc-only.yaml")[0]
    assert s["pause_frames"] > 100
    ib, _ = run("infiniband-slow-receiver.yaml")
    assert ib > 1.3 * run("infiniband-baseline-congested.yaml")[0]


def test_dcqcn_and_ib_congestion_control_each_reduce_the_victims_slowdown():
    """The same trigger with the congestion control on: DCQCN (RoCE) and IB congestion control
    (FECN/BECN) each cut the victim ring step to less than half its time without."""
    assert run("roce-slow-receiver-dcqcn.yaml")[0] < 0.5 * run("roce-slow-receiver.yaml")[0]
    assert run("infiniband-slow-receiver-ib-cc.yaml")[0] < 0.5 * run("infiniband-slow-receiver.yaml")[0]


def test_ib_credit_congestion_spreading_slows_victim_flows():
    """Storage incast next to training on InfiniBand without congestion control: credit back-pressure
    from the incast target's leaf slows the ring (which shares only the spines) many times over
    (the placeholder per-VL buffer makes the factor a range, not a point)."""
    assert run("infiniband-storage-incast.yaml")[0] > 5 * run("infiniband-baseline-quiet.yaml")[0]


def test_link_failure_reroutes_without_loss():
    """A failed leaf-spine link: routes are recomputed around it, no packet is lost and every flow
    finishes, on both fabrics (the state until repair)."""
    for tech in ("roce", "infiniband"):
        step, s = run(f"{tech}-link-failure.yaml")
        assert step < math.inf and s["drops"] == 0 and s["completed_flows"] == s["flows"]


def test_ib_link_failure_mid_step_recovers():
    """A link failing while the ring runs on InfiniBand (static routes): in-flight packets are lost,
    go-back-N resends them and the credits of dropped or discarded packets come back, so the step
    finishes (it hung before credits were returned)."""
    tb = shipped_testbed("infiniband")
    from dataclasses import replace

    from aifabric.scenario import scenario_from_dict
    from aifabric.stages.risk.testbed import scenario_dict

    tb = replace(tb, routing="static")
    d = scenario_dict(tb, None, 1)
    d["fabric"]["failures"] = [{"link": "leaf0-spine0", "at": "10us"}]
    sc = scenario_from_dict(d)
    flows, _ = _flows(tb, "quiet")
    res = simulate(sc, flows=flows, topology=from_spec(sc.topology))
    assert res.summary["drops"] > 0
    assert res.flows["completed"].all()


def test_congestion_control_off_spreads_pfc():
    """ECN / HPCC off on RoCE: the incast fills the PFC thresholds and the pauses reach the ring: the
    congested step is more than twice as slow, with PAUSE frames."""
    step, s = run("roce-ecn-off.yaml")
    assert step > 2 * run("roce-baseline-congested.yaml")[0] and s["pause_frames"] > 100


def test_dcqcn_defaults_and_threshold_mismatch_and_storm():
    """DCQCN at firmware defaults slows the ring (cuts on marks, slow recovery); the second PFC batch
    pauses where the tuned fabric never does; the spine's spurious PAUSE is injected and the step is
    no faster than the baseline."""
    base = run("roce-baseline-congested.yaml")[0]
    assert run("roce-dcqcn-defaults.yaml")[0] > 1.5 * base
    assert (
        run("roce-pfc-threshold-mismatch.yaml")[1]["pause_frames"]
        > run("roce-baseline-congested.yaml")[1]["pause_frames"]
    )
    step, s = run("roce-pfc-storm.yaml")
    assert s["injected_pauses"] > 0 and step >= base * 0.99


def test_lossy_operation():
    """RoCE in a lossy class without ECN (DSCP / trust mismatch) drops under the incast and go-back-N
    recovers at a large cost; lossy RoCE with HPCC keeps its queues short and drops nothing here."""
    step, s = run("roce-lossy-class.yaml")
    assert s["drops"] > 1000 and step < math.inf and step > 2 * run("roce-baseline-congested.yaml")[0]
    step, s = run("roce-lossy-go-back-n.yaml")
    assert s["drops"] == 0 and step == pytest.approx(run("roce-baseline-congested.yaml")[0], rel=0.05)


def test_ib_without_adaptive_routing_and_stragglers():
    """Static linear forwarding confines the incast's congestion tree to fewer spines than adaptive
    routing spreads it over (the ring, with its same-index pattern, routes without collision); a
    straggler NIC at 75 % stretches IB's ideal ring step by ~1/0.75, while RoCE/ECMP's collision slack
    absorbs it."""
    assert run("infiniband-ib-no-ar.yaml")[0] < run("infiniband-baseline-congested.yaml")[0]
    ib = run("infiniband-straggler-nic.yaml")[0] / run("infiniband-baseline-quiet.yaml")[0]
    assert ib == pytest.approx(1 / 0.75, rel=0.1)
    assert run("roce-straggler-nic.yaml")[0] < 1.05 * run("roce-baseline-quiet.yaml")[0]


def test_ecmp_polarisation_on_three_tiers():
    """One hash seed on every switch of a three-tier fat-tree: the aggregation tier repeats the ToR's
    choice, so each aggregation switch sends the cross-pod ring over a quarter of its core uplinks and
    the step takes more than 1.5 times as long as with per-switch seeds."""
    assert run("roce-ecmp-polarisation.yaml")[0] > 1.5 * run("roce-baseline-three-tier.yaml")[0]


def test_same_seed_same_step():
    """Two runs of the same scenario and seed give the same step time to the picosecond."""
    tb = shipped_testbed("roce")
    assert (
        run_testbed(tb, "pfc-storm", "quiet", 3).step_us == run_testbed(tb, "pfc-storm", "quiet", 3).step_us
    )


# ---- the seed's jitter story and the scaling rule ----------------------------------------------------------
def test_small_jitter_costs_twenty_percent_through_straggler_amplification():
    """The seed's story: on a well-routed (adaptive) RoCE fabric, PAUSE 2 % of the time in 20 us bursts
    on a quarter of the NICs slows every synchronous ring step by ~20 % (each step waits for whichever
    rank is paused); the same 2 % in 2 us bursts on one NIC costs under 5 %."""
    from dataclasses import replace

    tb = make_testbed(400, None, 600, 40, "adaptive", radix=64)
    base = run_testbed(tb, None, "quiet", 1).step_us
    long = run_testbed(replace(tb, storm_pause_us=20.0), "jitter", "quiet", 1, 0.02, 0.25).step_us
    short = run_testbed(tb, "jitter", "quiet", 1, 0.02, 1 / 32).step_us
    assert 0.15 < long / base - 1 < 0.35
    assert short / base - 1 < 0.05


def test_scaling_rule_two_pod_sizes_agree():
    """The straggler on InfiniBand measured on the 4 x 8 pod and on a pod twice as wide (per-port
    buffer kept) agrees within the stated tolerance."""
    tb = shipped_testbed("infiniband")
    from dataclasses import replace

    tb = replace(tb, seeds=(1,))
    out = scaling_check(tb, ("straggler-nic",))["straggler-nic"]
    assert out["agree"], out
    assert abs(out["small"] - out["large"]) <= SCALING_TOLERANCE and out["use"] == max(
        out["small"], out["large"]
    )


# ---- the risk arithmetic ----------------------------------------------------------------------------------
def test_combined_loss_cannot_exceed_one():
    """1 - prod(1 - p d l) stays in [0, 1] whatever the inputs (even shares above 1 or hangs), grows
    with each scenario, and equals the sum for small independent losses."""
    assert combine([1.0, 1.0, 0.7]) == 1.0
    assert combine([2.0, 0.5]) == 1.0
    assert 0.0 <= combine([0.3] * 50) <= 1.0
    assert combine([0.1, 0.2]) > combine([0.1])
    assert combine([1e-4, 2e-4]) == pytest.approx(3e-4, rel=1e-3)
    assert lost_share(math.inf) == 1.0 and lost_share(1.0) == 0.5 and lost_share(-0.2) == 0.0


def test_per_scenario_shares_add_up_to_the_total():
    """by_scenario splits the combined loss in proportion to p d l: its values add up to the total
    (what the decide stage sums)."""
    items = [
        RiskItem(f"s{i}", "", 1.0, None, 0.0, 0.0, "x", own_loss=x, own_loss_range=(x, x))
        for i, x in enumerate((0.6, 0.5, 0.0))
    ]
    out = _attribute(items)
    assert sum(r.expected_loss for r in out) == pytest.approx(combine([0.6, 0.5, 0.0]))
    assert out[2].expected_loss == 0.0


def test_expertise_and_audit_shift_mistake_rates_and_time_to_find():
    """A mistake's probability falls with expertise and its persistence with expertise and with the
    audit in CI; a user's own probability replaces the default."""
    plan = {"links": {"host-leaf": 1024, "leaf-spine": 1024}, "nics": 1024}
    none = _p_d("ecn-off", "mistake", plan, "none", RiskSpec())
    expert = _p_d("ecn-off", "mistake", plan, "expert", RiskSpec())
    audit = _p_d("ecn-off", "mistake", plan, "none", RiskSpec(audit_in_ci=True))
    assert none[0] > expert[0] and none[3] > expert[3] > audit[3]
    assert none[3] == pytest.approx(DAYS_TO_FIND["none"][0] / 365)
    assert audit[3] == pytest.approx(DAYS_TO_FIND_AUDIT[0] / 365)
    assert _p_d("ecn-off", "mistake", plan, "none", RiskSpec(probability={"ecn-off": 0.9}))[0] == 0.9


def test_fault_persistence_counts_components_from_the_plan():
    """A fault's share of the year scales with the components the plan counts (links, NICs)."""
    small = {"links": {"host-leaf": 512, "leaf-spine": 512}, "nics": 512}
    big = {"links": {"host-leaf": 1024, "leaf-spine": 1024}, "nics": 1024}
    assert _p_d("link-failure", "fault", big, "some", RiskSpec())[3] == pytest.approx(
        2 * _p_d("link-failure", "fault", small, "some", RiskSpec())[3]
    )


# ---- compare and the CLI ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def default_compare():
    r = CliRunner().invoke(app, ["compare", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_compare_lists_risk_for_both_fabrics_in_the_same_terms(default_compare):
    """Both fabrics carry a risk list with the published keys; expected losses are shares in [0, 1]
    with a range around them; goodput loss from interruptions is reported for each."""
    keys = {
        "scenario",
        "probability",
        "probability_basis",
        "comm_slowdown",
        "iteration_slowdown",
        "expected_loss",
    }
    for f in default_compare["fabrics"]:
        assert f["risk"] and all(keys <= set(r) for r in f["risk"])
        assert 0.0 <= f["expected_loss"] <= 1.0
        lo, hi = f["expected_loss_range"]
        assert lo <= f["expected_loss"] <= hi <= 1.0
        assert 0.0 < f["goodput_loss"] < 0.05
        assert sum(r["expected_loss"] for r in f["risk"]) == pytest.approx(f["expected_loss"])


def test_infiniband_risk_is_measured(default_compare):
    """InfiniBand's list holds at least four measured scenarios, each with a non-zero measured
    communication slowdown where the physics has one, and its expected loss comes from them."""
    ib = next(f for f in default_compare["fabrics"] if f["technology"] == "infiniband")
    measured = [r for r in ib["risk"] if r["comm_slowdown"] is not None]
    assert len(measured) >= 4
    assert sum(1 for r in measured if abs(r["comm_slowdown"]) > 0.01) >= 3
    assert ib["expected_loss"] > ib["goodput_loss"]


def test_risk_list_names_every_library_scenario():
    """``aifabric risk --list --json`` lists the library with each scenario's shipped files, which exist."""
    r = CliRunner().invoke(app, ["risk", "--list", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["scenarios"]
    assert [x["scenario"] for x in rows] == list(LIBRARY)
    for x in rows:
        assert any((RISK_DIR.parent.parent / f).exists() for f in x["files"]), x["scenario"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--technology", "ethernet"], "--technology"),
        (["--technology", "infiniband", "--baseline", "dcqcn"], "--baseline"),
        (["--routing", "spray"], "--routing"),
        (["--seeds", "a"], "--seeds"),
    ],
)
def test_risk_command_bad_input(args, needle):
    """Bad flags give exit code 2 and a one-line message naming the flag."""
    r = CliRunner().invoke(app, ["risk", *args])
    assert r.exit_code == 2 and needle in r.output


def test_risk_section_of_a_scenario_file(tmp_path):
    """A scenario file's ``risk:`` section sets the baseline and replaces rates; unknown keys are
    input errors naming the field."""
    from aifabric.errors import InputError

    p = tmp_path / "s.yaml"
    p.write_text(
        "advisor: {gpus: 1024}\nrisk: {roce_baseline: pfc-only, audit_in_ci: true, probability: {ecn-off: 0.3}}\n"
    )
    spec = load_scenario(p).risk
    assert spec.roce_baseline == "pfc-only" and spec.audit_in_ci and spec.probability == {"ecn-off": 0.3}
    p.write_text("risk: {roce_baseline: lossless}\n")
    with pytest.raises(InputError, match="risk.roce_baseline"):
        load_scenario(p)
    from aifabric.stages.risk.assess import assess

    with pytest.raises(InputError, match="risk.probability.ecn-of"):
        assess(None, None, None, None, None, "some", spec=RiskSpec(probability={"ecn-of": 0.1}))


_PARITY = r"""
import json, sys
sys.path.insert(0, {tests!r})
from test_sim_support import scenario, star, fat_tree
from aifabric.scenario import scenario_from_dict
from aifabric.sim import simulate
ls = {{"kind": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2, "link_rate": "100Gbps",
       "link_delay": "100ns"}}
cases = {{
    "hpcc_spray": scenario(fat_tree(4), {{"kind": "permutation", "flow_size": "30KB"}},
        fabric={{"congestion_control": "hpcc", "routing": "adaptive", "adaptive": {{"granularity": "packet"}}}}),
    "ib_failure_stall": scenario(ls, {{"kind": "permutation", "flow_size": "60KB"}},
        fabric={{"technology": "infiniband", "routing": "static",
                 "failures": [{{"link": "leaf0-spine0", "at": "2us"}}],
                 "receiver_stalls": [{{"node": "h1", "start": "1us", "duration": "1us", "period": "3us", "count": 5}}]}}),
    "ib_cc": scenario_from_dict({{"topology": star(4),
        "workload": {{"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "60KB"}},
        "fabric": {{"technology": "infiniband", "congestion_control": "ib-cc", "mtu": "4000B",
                   "ecn": {{"enabled": True, "kmin": "8KB", "kmax": "32KB", "pmax": 0.2}}}}}}),
    "stall_watchdog": scenario(star(4), {{"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "40KB"}},
        fabric={{"receiver_stalls": [{{"node": "h0", "start": "1us", "duration": "50us"}}],
                 "pfc_watchdog": {{"detection": "5us"}}}}),
}}
out = {{}}
for name, sc in cases.items():
    r = simulate(sc)
    out[name] = {{"flows": r.flows.drop(columns=["throughput_gbps"]).to_json(), "summary": r.summary,
                  "events": r.engine["events"]}}
print(json.dumps(out))
"""


def test_kernel_parity_for_the_library_features():
    """HPCC under per-packet spraying (INT with port ids), an IB link failure mid-run with a receiver
    stall (credits returned for dropped and discarded packets), IB congestion control and a watchdog-cut
    stall give bit-identical results compiled and as plain Python (NUMBA_DISABLE_JIT=1)."""
    from test_sim_support import run_parity_snippet

    jit = run_parity_snippet(_PARITY, False)
    nojit = run_parity_snippet(_PARITY, True)
    for name, case in jit.items():
        assert case["summary"]["completed_flows"] == case["summary"]["flows"], name
    assert jit["ib_failure_stall"]["summary"]["injected_pauses"] > 0
    assert jit["ib_cc"]["summary"]["ecn_marks"] > 0
    assert jit == nojit
