"""DCQCN: fair convergence on one bottleneck, queue held by ECN instead of PFC, presets."""

from __future__ import annotations

import pytest

from aifabric.scenario import scenario_from_dict
from aifabric.sim import simulate
from aifabric.sim.dcqcn import DCQCN_PRESETS, dcqcn_params
from test_sim_support import scenario, star

KMIN, KMAX = 40_000, 160_000
WL = {"kind": "incast", "senders": 4, "receiver": 0, "flow_size": "20MB"}


def _run(cc: str, preset: str = "ns3-mellanox"):
    fab = {"pfc": {"enabled": True, "mode": "dynamic"}}
    if cc == "dcqcn":
        fab.update(ecn={"enabled": True, "kmin": f"{KMIN}B", "kmax": f"{KMAX}B", "pmax": 0.2},
                   congestion_control="dcqcn", dcqcn={"preset": preset})
    return simulate(scenario(star(5), WL, fabric=fab))


@pytest.mark.validation
@pytest.mark.parametrize("preset", sorted(DCQCN_PRESETS))
def test_dcqcn_long_flows_share_a_bottleneck_fairly(preset):
    """Four 20 MB flows into one 100G port converge to fair shares (Jain ≥ 0.95 over their
    throughputs), every byte arrives, CNPs were sent."""
    r = _run("dcqcn", preset)
    assert r.summary["completed_flows"] == 4 and r.summary["drops"] == 0
    assert r.summary["jain_fairness"] >= 0.95
    assert r.engine["cnps"] > 0 and r.summary["ecn_marks"] > 0


@pytest.mark.validation
def test_dcqcn_holds_queue_at_ecn_ramp_and_cuts_pauses():
    """With DCQCN the bottleneck queue stays on the ECN ramp's scale (mean below Kmax, peak far below
    PFC-only's) and PAUSE frames drop versus PFC alone."""
    dc = _run("dcqcn")
    pfc = _run("none")
    port = dc.ports.loc[dc.ports["mean_queue_bytes"].idxmax()]
    assert 0 < port["mean_queue_bytes"] < KMAX
    assert dc.summary["max_queue_bytes"] < pfc.summary["max_queue_bytes"] / 10
    assert pfc.summary["pause_frames"] > 0
    assert dc.summary["pause_frames"] < pfc.summary["pause_frames"]


def test_preset_scales_rates_and_applies_overrides():
    """ns3-mellanox at 100G gives RATE_AI 20 Mb/s and RATE_HAI 200 Mb/s; a scenario override wins."""
    sc = scenario_from_dict({"fabric": {"ecn": {"enabled": True}, "congestion_control": "dcqcn",
                                        "dcqcn": {"preset": "ns3-mellanox", "rate_ai": "40Mbps"}}})
    p = dcqcn_params(sc.fabric.dcqcn, 100 * 10**9)
    assert p["rate_hai"] == pytest.approx(200e6)
    assert p["rate_ai"] == 40e6
    assert p["g"] == 1 / 256
    for table in DCQCN_PRESETS.values():
        assert all(src for _, src in table.values())
