"""The advisor: each decision rule of mission.md has a scenario that triggers it, and changing one
input moves the recommendation the way the rules say. Runs the full compare pipeline."""

import pytest

from aifabric.api import compare_advisor as compare
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import AdvisorSpec

CAT = load_catalog()


def rec(**kw):
    r = compare(AdvisorSpec(**kw), CAT)
    return r["recommendation"]


def rules(r):
    return {x["rule"] for x in r["reasons"]}


def test_rule1_single_node_needs_no_fabric():
    """≤ 8 GPUs in one node: 'none' (NVLink domain)."""
    r = rec(gpus=8)
    assert r["fabric"] == "none" and rules(r) == {"1"}


def test_rule1_few_nodes_inference_ordinary_network():
    """2–4 nodes of inference: 'none' (ordinary network); the same 4 nodes training need a fabric."""
    assert rec(gpus=32, workload="inference")["fabric"] == "none"
    assert rec(gpus=32, workload="training")["fabric"] != "none"


def test_rule2_low_budget_roce_400g():
    """Multi-node and budget-sensitive: RoCEv2 at 400G."""
    r = rec(gpus=256, budget="low")
    assert r["fabric"] == "roce-400g" and "2" in rules(r)


def test_rule3_thousand_gpu_training_decided_by_numbers():
    """Thousand-GPU training: the risk-adjusted cost per trained token decides, and says so."""
    r = rec(gpus=1024)
    assert r["fabric"] in ("roce-400g", "infiniband", "hybrid")
    assert any("risk-adjusted cost per million trained tokens" in x["text"] for x in r["reasons"])


def test_rule4_trading_and_high_jitter_choose_ib():
    """High-frequency trading or strong determinism: InfiniBand, with the latency evidence."""
    r = rec(gpus=256, workload="trading")
    assert r["fabric"] == "infiniband" and "4" in rules(r)
    r = rec(gpus=256, jitter_sensitivity="high")
    assert r["fabric"] == "infiniband"
    assert any("small_message_latency" in x["evidence"] for x in r["reasons"])


def test_rule5_expertise_moves_toward_ib_with_high_budget():
    """No RDMA expertise + high budget favours IB; an expert team with the same budget gets RoCE."""
    assert rec(gpus=1024, budget="high", team_expertise="none")["fabric"] == "infiniband"
    assert rec(gpus=1024, budget="high", team_expertise="expert")["fabric"].startswith("roce")


def test_rule6_hybrid_when_ib_wins_on_medium_budget():
    """IB chosen for the training core on a medium budget → hybrid (IB core + RoCE storage);
    on a high budget all-IB."""
    r = rec(gpus=1024, budget="medium", team_expertise="none")
    assert r["fabric"] == "hybrid" and "6" in rules(r)
    assert rec(gpus=1024, budget="high", team_expertise="none")["fabric"] == "infiniband"


def test_rule5_growth_beyond_ib_reach_picks_roce():
    """10× growth of 16,384 GPUs (163,840) exceeds QM9700's 65,536 in 3 tiers: RoCE, with that reason."""
    r = rec(gpus=16384, budget="medium", team_expertise="none", growth="10x")
    assert r["fabric"] == "roce-400g"
    assert any(x["rule"] == "5" and "not enough" in x["text"] for x in r["reasons"])


def test_rule7_b200_gets_800g():
    """B200 (1.8 TB/s NVLink5) pairs with 800G NICs; H100 with 400G."""
    assert rec(gpus=256, gpu="b200", budget="low")["fabric"] == "roce-800g"
    assert rec(gpus=256, gpu="h100", budget="low")["nic_rate_gbps"] == 400


def test_budget_moves_recommendation():
    """Raising the budget (with no expertise) moves RoCE → IB; lowering it moves back."""
    low = rec(gpus=1024, budget="low", team_expertise="none")["fabric"]
    high = rec(gpus=1024, budget="high", team_expertise="none")["fabric"]
    assert low == "roce-400g" and high == "infiniband"


def test_jitter_moves_recommendation():
    """Raising jitter sensitivity from low to high moves the recommendation to InfiniBand."""
    assert rec(gpus=1024, jitter_sensitivity="low")["fabric"] != "infiniband"
    assert rec(gpus=1024, jitter_sensitivity="high")["fabric"] == "infiniband"


def test_size_moves_recommendation():
    """Growing from one node to many moves 'none' to a real fabric."""
    assert rec(gpus=8)["fabric"] == "none"
    assert rec(gpus=64)["fabric"] != "none"


@pytest.mark.parametrize(
    "kw", [dict(gpus=1024), dict(gpus=256, workload="trading"), dict(gpus=64, budget="low")]
)
def test_every_reason_carries_evidence(kw):
    """Every printed reason has at least one evidence value."""
    for r in rec(**kw)["reasons"]:
        assert r["evidence"] and all(str(v) for v in r["evidence"].values())


EXPECTED = {
    "rule1-single-node": "none",
    "rule1-few-nodes-inference": "none",
    "rule2-budget": "roce-400g",
    "rule3-thousand-gpu": "roce-400g",
    "rule4-trading": "infiniband",
    "rule5-no-expertise-high-budget": "infiniband",
    "rule5-growth": "roce-400g",
    "rule6-hybrid": "hybrid",
    "rule6-storage": "roce-400g",
    "rule7-800g": "roce-800g",
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rule_scenario_files(name):
    """Each shipped scenarios/advisor/ file triggers its rule: `aifabric compare FILE --json`."""
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from aifabric.cli import app

    path = Path(__file__).parent.parent / "scenarios" / "advisor" / f"{name}.yaml"
    r = CliRunner().invoke(app, ["compare", str(path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["recommendation"]["fabric"] == EXPECTED[name]
