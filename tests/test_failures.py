"""Failures that stop jobs (issue 25): link, NIC and switch faults counted from the bill of
materials, the same stop rule on both fabrics, the assumption register, and the check against the
Llama 3 paper's Table 5 (``aifabric validate --interruptions``)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.scenario import RiskSpec
from aifabric.stages.risk import assess as risk
from aifabric.stages.risk.rates import (
    HOURS_PER_YEAR,
    LINK_FAULTS,
    NCCL_RETRY_BUDGET_S,
    NIC_FAULTS,
    SWITCH_FAULTS_PER_1000_YEAR,
    failure_assumptions,
    poisson_interval,
)
from aifabric.stages.validate import failures as fv

runner = CliRunner()
# a 3-tier plan's bill of materials: 1,024 NICs, 1,024 links per tier, 32 leaves, 48 spines + cores
PLAN = {
    "nics": 1024,
    "links": {"host-leaf": 1024, "leaf-spine": 1024, "spine-core": 1024},
    "switches": {"leaf": 32, "spine": 32, "core": 16},
}


def _sum(components: dict) -> float:
    return sum(components.values())


def test_single_homed_faults_stop_the_job_and_fast_reroutes_do_not():
    """Every NIC fault, every host-link fault and every leaf fault stops a single-homed job; fabric
    links and spines / cores do not where re-route (RoCE ECMP: 0.2 s) is within NCCL's budget."""
    c = risk.interruption_events(PLAN, "roce", "ecmp")["by_component"][0]
    assert c["nic"] == pytest.approx(1024 * NIC_FAULTS[0] / 1000)
    assert c["host_link"] == pytest.approx(1024 * LINK_FAULTS[0] / 1000)
    assert c["leaf"] == pytest.approx(32 * SWITCH_FAULTS_PER_1000_YEAR[0] / 1000)
    assert c["fabric_link"] == 0 and c["spine_core"] == 0


def test_a_reroute_that_outlasts_nccls_budget_stops_the_job(monkeypatch):
    """When detection + re-route exceeds NCCL's retry budget, every fabric-link and spine / core
    fault is an interruption too (2,048 fabric links, 48 switches above the leaves)."""
    slow = NCCL_RETRY_BUDGET_S + 1.0
    monkeypatch.setitem(risk.REROUTE_S, ("infiniband", "static"), (slow, slow, slow))
    ev = risk.interruption_events(PLAN, "infiniband", "static")
    c = ev["by_component"][0]
    assert ev["stops"] == [True, True, True]
    assert c["fabric_link"] == pytest.approx(2048 * LINK_FAULTS[0] / 1000)
    assert c["spine_core"] == pytest.approx(48 * SWITCH_FAULTS_PER_1000_YEAR[0] / 1000)


def test_same_rule_on_both_fabrics():
    """The same bill of materials gives the same interruptions on InfiniBand (adaptive routing) and
    RoCE (ECMP): both re-route within NCCL's budget, and the rates are per component, not per fabric."""
    ib = risk.interruption_events(PLAN, "infiniband", "adaptive")["by_component"]
    roce = risk.interruption_events(PLAN, "roce", "ecmp")["by_component"]
    assert ib == roce


def test_dual_homed_host_links_and_leaves_do_not_stop_the_job():
    """With dual-ToR a host-link or leaf fault slows the job (valued in switch-failures) instead of
    stopping it: only NIC faults remain."""
    c = risk.interruption_events({**PLAN, "dual_tor": True}, "roce", "ecmp")["by_component"][0]
    assert c["host_link"] == 0 and c["leaf"] == 0 and c["nic"] > 0


def test_the_users_link_rate_reaches_the_interruptions():
    """``risk.probability.link-failure`` (faults per 1,000 links a year) replaces the link rate in the
    job-interruptions count as well, at every end of the range."""
    spec = RiskSpec(probability={"link-failure": 40.0})
    for c in risk.interruption_events(PLAN, "roce", "ecmp", spec)["by_component"]:
        assert c["host_link"] == pytest.approx(1024 * 40.0 / 1000)


def test_goodput_loss_is_events_times_hours_and_honours_interrupt_hours():
    """goodput loss = interruptions a year × hours per interruption / 8,760 h; ``risk.interrupt_hours``
    replaces the 15 min."""
    fd = SimpleNamespace(plan=SimpleNamespace(to_dict=lambda: PLAN), technology="roce", routing="ecmp")
    mid, low, high, d = risk.interruptions(fd, RiskSpec())
    n = _sum(risk.interruption_events(PLAN, "roce", "ecmp")["by_component"][0])
    assert d["interruptions_per_year"] == pytest.approx(n)
    assert mid == pytest.approx(n * 0.25 / HOURS_PER_YEAR) and low < mid < high
    assert risk.interruptions(fd, RiskSpec(interrupt_hours=2.0))[0] == pytest.approx(n * 2.0 / HOURS_PER_YEAR)


def test_poisson_interval_matches_the_published_garwood_table():
    """The exact 95 % Poisson interval (Garwood 1936: ½χ²(0.025; 2k), ½χ²(0.975; 2k + 2)):
    0 events → (0, 3.689), 40 events → (28.58, 54.47)."""
    assert poisson_interval(0) == pytest.approx((0.0, 3.689), abs=1e-3)
    assert poisson_interval(40) == pytest.approx((28.58, 54.47), abs=1e-2)


def test_link_and_nic_rates_come_from_the_trace_counts():
    """40 back-end link-down and 19 NIC-lost / GID-error events on 400 servers × 8 NICs in 348 days."""
    per = 400 * 8 / 1000 * 348 / 365
    assert LINK_FAULTS[0] == pytest.approx(40 / per)
    assert NIC_FAULTS[0] == pytest.approx(19 / per)


def test_failure_assumptions_are_registered_with_source_and_range():
    """Every entry has the register's keys, a source, a range around its value (or none), a kind,
    decides False; the names are unique and name the link, NIC and switch rates and NCCL's budget."""
    rows = failure_assumptions()
    keys = {"name", "value", "unit", "applies_to", "source", "range", "alternatives", "kind", "decides"}
    names = [r["name"] for r in rows]
    assert len(set(names)) == len(names)
    assert {
        "failures.link_per_1000_per_year",
        "failures.nic_per_1000_per_year",
        "failures.switch_per_1000_per_year",
        "failures.nccl_retry_budget_s",
    } <= set(names)
    for r in rows:
        assert set(r) == keys and r["source"] and r["alternatives"] is None and r["decides"] is False
        assert r["kind"] in ("probability", "physics")
        assert set(r["applies_to"]) <= {"infiniband", "roce"} and r["applies_to"]
        assert r["range"] is None or r["range"][0] <= r["value"] <= r["range"][1]


@pytest.mark.validation
def test_roce_interruptions_within_30pct_of_the_llama3_paper():
    """16,384 H100 on the default RoCE plan for 54 days: network-caused interruptions within ±30 % of
    Table 5's switch/cable 35 + NIC 7 = 42; InfiniBand is reported as the prediction, not checked."""
    t = fv.interruption_table()
    roles = {r["technology"]: r["role"] for r in t["fabrics"]}
    assert roles == {"roce": "check", "infiniband": "prediction"}
    roce = next(r for r in t["fabrics"] if r["technology"] == "roce")
    assert roce["counts"]["nics"] == 16_384 and roce["counts"]["host_links"] == 16_384
    assert abs(roce["predicted"] / 42 - 1) <= 0.30
    assert t["holds"] and t["reference"]["counted"] == 42


@pytest.mark.validation
def test_validate_interruptions_cli_json_and_exit_code():
    """``validate --interruptions --json`` prints one JSON object with the reference, the tolerance and
    both fabrics, exit 0 when the check holds; the table form prints the verdict."""
    r = runner.invoke(app, ["validate", "--interruptions", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["tolerance"] == 0.30 and d["holds"] is True and len(d["fabrics"]) == 2
    r = runner.invoke(app, ["validate", "--interruptions"])
    assert r.exit_code == 0 and "holds" in r.stdout
