"""Redundancy options (issue 14, item 3): dual-ToR and spine spares in ``plan`` (design/redundancy.py),
their value in the risk stage (stages/risk/redundancy.py), and the ConnectX-8 C8240 split on IB."""

import math

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.design.cost import bom_cage_violations
from aifabric.design.plan import plan, plan_fabric
from aifabric.design.redundancy import spine_failures_tolerated
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog
from aifabric.stages.risk.rates import HOURS_PER_YEAR, LINK_FAULTS_PER_1000_YEAR
from aifabric.stages.risk.redundancy import SWITCH_REPAIR_HOURS, switch_failures

runner = CliRunner()
CAT = load_catalog()
IH = (0.25, 0.1, 0.67)


def test_dual_tor_bom_hand_checked():
    """256 H100 on SN5600: single-homed 8 leaves (128 × 400G) + 2 spines; dual-ToR keeps 400G per GPU
    as 2 × 200G legs on the 256 × 200G mode: 512 host legs on 16 leaves (one leaf per rail-leg),
    512 uplinks, 2 spines."""
    one = plan_fabric(256, "roce", CAT, gpu="h100")
    two = plan_fabric(256, "roce", CAT, gpu="h100", dual_tor=True)
    assert (one.radix, one.link_rate_gbps, one.design.switches) == (128, 400, {"leaf": 8, "spine": 2})
    assert (two.radix, two.link_rate_gbps) == (256, 200)
    assert two.design.switches == {"leaf": 16, "spine": 2}
    assert two.design.links == {"host-leaf": 512, "leaf-spine": 512}
    assert two.to_dict()["dual_tor"] is True and two.to_dict()["legs_per_nic"] == 2
    assert two.nic_rate_gbps == one.nic_rate_gbps  # the rate per GPU is unchanged
    assert two.capex_usd > one.capex_usd
    assert bom_cage_violations(CAT, two) == []
    assert "dual_tor" not in one.to_dict()  # the default plan's JSON keeps its keys
    # the DGX twin-port cage holds 2 NIC ports = 4 legs: one server module per cage either way (128
    # for 32 servers), not twice as many (the cages are not there); no straight copper cable, which would
    # land every leg of a cage on one leaf (issue 25: the build's cable plan found it)
    assert one.count_of("tp-osfp-800g-2xsr4-flt") == two.count_of("tp-osfp-800g-2xsr4-flt") == 128
    assert one.count_of("aec-800g") == two.count_of("aec-800g") == 0


def test_spine_spares_bom_hand_checked():
    """256 H100 on SN5600, 1 spare spine: each leaf's 32 uplinks × 3/2 = 48 (32 hosts + 48 ≤ 128
    ports, so no leaf is added): 8 leaves, 384 uplinks, 3 spines; one spine may fail at no cost
    (48 × 2/3 = 32 uplinks still)."""
    one = plan_fabric(256, "roce", CAT, gpu="h100")
    p = plan_fabric(256, "roce", CAT, gpu="h100", spine_spares=1)
    assert p.design.switches == {"leaf": 8, "spine": 3}
    assert p.design.links["leaf-spine"] == 384 and p.design.leaf_up == 48
    assert p.spine_failures_tolerated == 1
    assert p.count_of("sn5600") == one.count_of("sn5600") + 1
    assert p.capex_usd > one.capex_usd and p.tco.to_dict()["tco_usd"] > one.tco.to_dict()["tco_usd"]


def test_spine_spares_take_leaf_ports_when_none_are_free():
    """256 H100 on QM9700 (64 ports): 8 leaves × 32 hosts + 32 uplinks, 4 spines. One spare needs
    40 uplinks per leaf: 32 + 40 > 64, so 28 hosts per leaf (28 + 35 ≤ 64): 2 SUs, 16 leaves,
    (35 + 5) × 8 = 320 uplinks, 5 spines."""
    p = plan_fabric(256, "infiniband", CAT, gpu="h100", spine_spares=1)
    assert p.design.switches == {"leaf": 16, "spine": 5}
    assert p.design.links["leaf-spine"] == 320
    assert p.spine_failures_tolerated == spine_failures_tolerated(35, 28, 5) == 1


def test_spine_failures_tolerated():
    assert spine_failures_tolerated(32, 32, 2) == 0  # no spares: any failure costs
    assert spine_failures_tolerated(48, 32, 3) == 1
    assert spine_failures_tolerated(64, 32, 4) == 2


def test_dual_tor_refused_on_infiniband_alone():
    with pytest.raises(InputError) as e:
        plan_fabric(256, "infiniband", CAT, dual_tor=True)
    assert e.value.field == "--dual-tor" and "multi-chassis" in e.value.problem
    r = runner.invoke(app, ["plan", "--gpus", "256", "--technology", "ib", "--dual-tor"])
    assert r.exit_code == 2
    err = r.output.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --dual-tor:")


def test_dual_tor_asked_of_both_plans_ib_without_it_and_says_why():
    ib, roce = plan(256, ("infiniband", "roce"), CAT, dual_tor=True)
    assert not ib.dual_tor and any("dual-ToR not applied" in n for n in ib.notes)
    assert roce.dual_tor


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--spine-spares", "-1"], "--spine-spares"),
        (["--gpus", "65536", "--spine-spares", "1", "--technology", "ib"], "--spine-spares"),
    ],
)
def test_bad_spine_spares_exit_2_one_line(args, flag):
    r = runner.invoke(app, ["plan", *args])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0]


def test_spine_spares_on_one_switch_is_a_note():
    p = plan_fabric(64, "roce", CAT, spine_spares=2)
    assert p.design.tiers == 1 and p.spine_failures_tolerated == 0
    assert any("no spine tier" in n for n in p.notes)


def test_connectx8_split_into_two_ndr_planes_on_infiniband():
    """The C8240 runs 2 × 400GbE or 2 × NDR 400G (Lenovo 4XC7B03668 = 900-9X81Q-00CN-ST0): an 800G IB
    plan asked for 2 planes uses it on Quantum-2, as the Ethernet plan uses it on SN5600."""
    ib = plan_fabric(1024, "infiniband", CAT, gpu="b300", planes=2)
    eth = plan_fabric(1024, "roce", CAT, gpu="b300", planes=2)
    assert (ib.nic_id, ib.switch_id, ib.link_rate_gbps) == ("cx8-ib-2x400", "qm9700", 400)
    assert (eth.nic_id, eth.link_rate_gbps) == ("cx8-eth", 400)
    assert CAT.nics["cx8-ib-2x400"].price_range_usd == CAT.nics["cx8-eth"].price_range_usd  # one card
    assert bom_cage_violations(CAT, ib) == []
    # unchanged without planes: one XDR port
    assert plan_fabric(1024, "infiniband", CAT, gpu="b300").nic_id == "cx8-ib"


def _plan_dict(leaves, spines, planes=1, dual=False, tolerated=0, host_links=256, nodes=32):
    return {
        "switches": {"leaf": leaves, "spine": spines},
        "planes": planes,
        "dual_tor": dual,
        "spine_failures_tolerated": tolerated,
        "links": {"host-leaf": host_links},
        "nodes": nodes,
    }


def test_leaf_failure_interrupts_single_homed_and_slows_dual_homed():
    """8 leaves × 50 failures per 1,000 a year = 0.4 a year. Single-homed, every server on a leaf
    (32 of 32): 0.4 × (0.25 h + 4 h) / 8760. Dual-homed with a half-bandwidth iteration slowdown
    s = 0.5 (ℓ = 1/3): 0.4 × 4 h / 3 / 8760 from leaves, plus each of the 512 legs' faults at the
    cheaper of half rate until repair and a restart (0.25 h). Like for like, the single-homed total
    adds its 256 host-link interruptions (counted in the job-interruptions item): dual-ToR loses less."""
    slow = lambda c: 0.5 * c  # noqa: E731  (comm 1.0 → iteration 0.5)
    single = switch_failures(_plan_dict(8, 0), IH, slow, False)
    dual = switch_failures(_plan_dict(8, 0, dual=True, host_links=512), IH, slow, False)
    rep = SWITCH_REPAIR_HOURS[0]
    assert single["interrupt_loss"] == pytest.approx(0.4 * 0.25 / HOURS_PER_YEAR)
    assert single["loss"] == pytest.approx(0.4 * (0.25 + rep) / HOURS_PER_YEAR)
    assert single["interruptions_per_year"] == pytest.approx(0.4)
    leaf = 0.4 * rep / 3 / HOURS_PER_YEAR
    link = 512 * LINK_FAULTS_PER_1000_YEAR / 1000 * min(rep / 3, 0.25) / HOURS_PER_YEAR
    assert dual["interrupt_loss"] == 0 and dual["interruptions_per_year"] == 0
    assert dual["loss"] == pytest.approx(leaf + link)
    single_host_links = 256 * LINK_FAULTS_PER_1000_YEAR / 1000 * 0.25 / HOURS_PER_YEAR
    assert dual["loss"] < single["loss"] + single_host_links
    for d in (single, dual):
        assert d["loss_low"] <= d["loss"] <= d["loss_high"]


def test_dual_tor_never_loses_when_a_slow_job_is_worse_than_a_restart():
    """A job that stalls at half bandwidth (s = ∞) is restarted without the leaf's servers instead:
    the loss per leaf event is then the single-homed one, not more."""
    stall = lambda c: float("inf")  # noqa: E731
    single = switch_failures(_plan_dict(8, 0), IH, stall, False)
    dual = switch_failures(_plan_dict(8, 0, dual=True, host_links=256), IH, stall, False)
    assert dual["loss"] <= single["loss"] + 256 * LINK_FAULTS_PER_1000_YEAR / 1000 * 1.0 / HOURS_PER_YEAR


def test_spine_failure_costs_bisection_without_spares_and_nothing_with_one():
    """S = 2 spines, comm slowdown taken as the iteration slowdown: one down → 1/(S − 1) = 100 %
    slower (ℓ = 1/2), two down → a hang (ℓ = 1); Poisson mean 2 × 0.05 × 4 / 8760. With one spare
    (3 spines, 1 tolerated) a single failure costs nothing: only two down (comm 2/1 − 1) counts."""
    ident = lambda c: c  # noqa: E731
    m = 2 * 0.05 * SWITCH_REPAIR_HOURS[0] / HOURS_PER_YEAR
    none = switch_failures(_plan_dict(0, 2), IH, ident, False)
    pois = lambda mean, j: math.exp(-mean) * mean**j / math.factorial(j)  # noqa: E731
    assert none["loss"] == pytest.approx(pois(m, 1) * 0.5 + pois(m, 2) * 1.0)
    m3 = 3 * 0.05 * SWITCH_REPAIR_HOURS[0] / HOURS_PER_YEAR
    spare = switch_failures(_plan_dict(0, 3, tolerated=1), IH, ident, False)
    assert spare["loss"] == pytest.approx(pois(m3, 2) * 0.5 + pois(m3, 3) * 1.0)
    assert spare["loss"] < none["loss"] / 100  # the spare removes the first-order term


def test_spine_failure_interrupts_where_reconvergence_outlasts_nccl():
    """4 spines over 2 planes (the plan counts all planes): 4 × 0.05 = 0.2 failures a year, each an
    interruption when re-convergence outlasts NCCL's retry budget (static IB routing)."""
    sf = switch_failures(_plan_dict(0, 4, planes=2), IH, lambda c: c, True)
    assert sf["interruptions_per_year"] == pytest.approx(4 * 0.05)
    assert sf["interrupt_loss"] == pytest.approx(4 * 0.05 * 0.25 / HOURS_PER_YEAR)
    assert switch_failures(_plan_dict(0, 4, planes=2), IH, lambda c: c, False)["interrupt_loss"] == 0


def test_symmetry_same_counts_same_value():
    """The valuation reads only counts and options: an IB and a RoCE plan with the same switch counts
    get the same loss (no technology term)."""
    a = plan_fabric(256, "infiniband", CAT).to_dict()
    b = dict(plan_fabric(256, "roce", CAT).to_dict())
    b.update(switches=a["switches"], links=a["links"], planes=a["planes"], nodes=a["nodes"])
    f = lambda c: 0.3 * c  # noqa: E731
    assert switch_failures(a, IH, f, False) == switch_failures(b, IH, f, False)


def test_compare_options_carry_redundancy_to_every_design():
    """advisor.dual_tor / spine_spares reach plan_fabric through DesignOption.plan_kw: the RoCE design
    is dual-homed with a spare spine, InfiniBand gets the spare and a note instead of dual-ToR."""
    from aifabric.scenario import AdvisorSpec
    from aifabric.stages.design.fabrics import DesignInput, design
    from aifabric.stages.design.options import options_for

    a = AdvisorSpec(gpus=256, dual_tor=True, spine_spares=1)
    ev = design(DesignInput(256, "h100", options_for(a, CAT.get("gpu", "h100"), CAT), CAT))
    ib, roce = ev.fabrics
    assert roce.plan.dual_tor and roce.plan.spine_spares == 1
    assert roce.design_name.endswith("-dual-tor-1spare-spines")
    assert not ib.plan.dual_tor and ib.plan.spine_spares == 1
    assert any("dual-ToR not applied" in n for n in ib.plan.notes)
    with pytest.raises(ValueError):  # a negative count is refused by the scenario schema
        AdvisorSpec(spine_spares=-1)


@pytest.mark.slow
def test_compare_values_switch_failures_only_when_asked():
    """compare --dual-tor adds the switch-failures item to both fabrics (like with like) and the
    dual-homed RoCE fabric has no leaf-failure interruptions; the item carries the switch failures'
    non-interrupting loss (its interruptions are in job-interruptions); the default output has no such item."""
    import json

    r = runner.invoke(app, ["compare", "--gpus", "256", "--dual-tor", "--json"])
    assert r.exit_code == 0, r.output
    fabrics = json.loads(r.stdout)["fabrics"]
    sf = {f["technology"]: f["goodput"]["switch_failures"] for f in fabrics}
    assert sf["roce"]["dual_tor"] and sf["roce"]["interruptions_per_year"] == 0
    assert not sf["infiniband"]["dual_tor"] and sf["infiniband"]["interruptions_per_year"] > 0
    assert all(any(x["scenario"] == "switch-failures" for x in f["risk"]) for f in fabrics)
    for f in fabrics:  # the objective re-derives p·d·ℓ from these fields: they must give the loss
        d = f["risk_detail"]["switch-failures"]
        assert d["slowdown"] is None and d["loss_while_present"] == 1.0
        sf_f = f["goodput"]["switch_failures"]
        assert d["probability"] * d["persistence"] == pytest.approx(sf_f["slowdown_loss"])
    base = json.loads(runner.invoke(app, ["compare", "--gpus", "256", "--json"]).stdout)["fabrics"]
    assert not any(x["scenario"] == "switch-failures" for f in base for x in f["risk"])


def test_dual_tor_never_puts_both_legs_on_one_switch():
    """64 H100 fit one SN5600 (1 tier): dual-homed they need the leaf pair, 2 switches; rail-only,
    each rail's single switch becomes a pair (8 → 16)."""
    assert plan_fabric(64, "roce", CAT).design.switches == {"leaf": 1}
    assert plan_fabric(64, "roce", CAT, dual_tor=True).design.switches == {"leaf": 2}
    one = plan_fabric(512, "roce", CAT, rail_only=True)
    two = plan_fabric(512, "roce", CAT, rail_only=True, dual_tor=True)
    assert (one.design.total_switches, two.design.total_switches) == (8, 16)
    assert two.design.links["host-leaf"] == 2 * one.design.links["host-leaf"]
