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
        fab.update(
            ecn={"enabled": True, "kmin": f"{KMIN}B", "kmax": f"{KMAX}B", "pmax": 0.2},
            congestion_control="dcqcn",
            dcqcn={"preset": preset},
        )
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
    sc = scenario_from_dict(
        {
            "fabric": {
                "ecn": {"enabled": True},
                "congestion_control": "dcqcn",
                "dcqcn": {"preset": "ns3-mellanox", "rate_ai": "40Mbps"},
            }
        }
    )
    p = dcqcn_params(sc.fabric.dcqcn, 100 * 10**9)
    assert p["rate_hai"] == pytest.approx(200e6)
    assert p["rate_ai"] == 40e6
    assert p["g"] == 1 / 256
    for table in DCQCN_PRESETS.values():
        assert all(src for _, src in table.values())


def _star_400g(preset: str, n: int, size: int):
    """``n`` senders into host 0 of a 400G star (the ring step's ECMP collision on one spine port),
    ECN 150 KB / 1.5 MB / Pmax 1 as the risk testbed."""
    from aifabric.topology import from_spec
    from aifabric.workload.traffic import _table

    sc = scenario(
        star(n + 1, rate="400Gbps", delay="200ns"),
        WL,
        fabric={
            "mtu": "4096B",
            "switch_latency": "600ns",
            "switch_buffer": "128000000B",
            "pfc": {"enabled": True, "mode": "dynamic", "alpha": 0.125},
            "ecn": {"enabled": True, "kmin": "150000B", "kmax": "1500000B", "pmax": 1.0},
            "congestion_control": "dcqcn",
            "dcqcn": {"preset": preset},
        },
    )
    return sc, from_spec(sc.topology), _table(range(1, n + 1), [0] * n, size, 0)


def test_dcqcn_rate_limiter_applies_a_recovered_rate_at_once():
    """Four 4 MiB flows collide on one 400G port (nvidia-firmware). The burst cuts some of them to
    a few Mb/s; the rate limiter must apply the recovered rate to the packet it holds back (a token
    bucket), not keep the gap of one packet at the floor rate (4160 B at 1 Mb/s = 33 ms). Every flow
    ends within max-min + one rate-increase timer (300 µs) + slack, and all finish together."""
    sc, topo, flows = _star_400g("nvidia-firmware", 4, 4 * 2**20)
    r = simulate(sc, flows=flows, topology=topo)
    fct = r.flows["fct_us"]
    maxmin_us = 4 * 4 * 2**20 * 8 * (4160 / 4096) / 400e3  # 341 µs
    assert r.flows["completed"].all() and r.engine["cnps"] > 0
    assert fct.max() < maxmin_us + 300 + 400  # before the fix: 7.5 ms
    assert fct.max() < 1.5 * fct.min()


def test_dcqcn_first_cnp_starts_alpha_at_alpha0():
    """A flow that ran alone for 1 ms meets a second one. Its first CNP must start alpha at
    alpha0 (ConnectX INITIAL_ALPHA_VALUE, ns-3 cnp_received_mlx), not at a value that decayed since
    the flow started — else the old flow keeps most of the port and the newcomer is cut to ~0."""
    from aifabric.scenario import scenario_from_dict
    from aifabric.sim import engine
    from aifabric.sim import kernel as K
    from aifabric.topology import from_spec
    from aifabric.workload.traffic import _table

    for preset in ("nvidia-firmware", "ns3-mellanox"):
        sc = scenario_from_dict(
            {
                "name": "t",
                "seed": 1,
                "topology": star(3),
                "fabric": {
                    "technology": "roce",
                    "mtu": "4000B",
                    "header": "64B",
                    "switch_latency": "0ns",
                    "switch_buffer": "32MiB",
                    "pfc": {"enabled": True, "mode": "dynamic"},
                    "ecn": {"enabled": True, "kmin": f"{KMIN}B", "kmax": f"{KMAX}B", "pmax": 0.2},
                    "congestion_control": "dcqcn",
                    "dcqcn": {"preset": preset},
                },
                "sim": {"until": "10ms"},
            }
        )
        flows = _table([1, 2], [0, 0], 30_000_000, [0, 1_000_000_000])
        st = engine.compile_scenario(sc, from_spec(sc.topology), flows)
        engine.run_state(st, 1_100_000_000)  # the second flow has run 100 µs
        rate = st.fr[:, K.FR_RATE]
        assert (st.fl[:, K.FL_CNP_RX] > 0).all()
        assert rate[0] < 0.6 * 100e9, preset  # the old flow was cut like the new one
        assert rate.max() < 4 * rate.min(), preset  # before the fix: 76 vs 0.12 Gb/s


def test_presets_read_their_sources():
    """ns3-mellanox is HPCC run.py's dcqcn configuration (FAST_RECOVERY_TIMES 1, MIN_RATE 1000Mb/s, a
    CNP flag on every ACK of a marked packet); ConnectX RPG_AI_RATE / RPG_HAI_RATE are absolute Mb/s."""
    sc = scenario_from_dict(
        {
            "fabric": {
                "ecn": {"enabled": True},
                "congestion_control": "dcqcn",
                "dcqcn": {"preset": "ns3-mellanox"},
            }
        }
    )
    p = dcqcn_params(sc.fabric.dcqcn, 100 * 10**9)
    assert (p["fast_recovery_stages"], p["min_rate"], p["cnp_interval"]) == (1, 1e9, 0)
    sc = scenario_from_dict(
        {
            "fabric": {
                "ecn": {"enabled": True},
                "congestion_control": "dcqcn",
                "dcqcn": {"preset": "nvidia-firmware"},
            }
        }
    )
    for gbps in (100, 400):
        p = dcqcn_params(sc.fabric.dcqcn, gbps * 10**9)
        assert (p["rate_ai"], p["rate_hai"]) == (5e6, 50e6)


_PARITY = """
import json, sys
sys.path.insert(0, {tests!r})
from test_sim_dcqcn import _star_400g
from aifabric.sim import simulate
out = {{}}
for preset in ("nvidia-firmware", "ns3-mellanox", "paper"):
    sc, topo, flows = _star_400g(preset, 4, 2**20 if preset != "nvidia-firmware" else 4 * 2**20)
    r = simulate(sc, flows=flows, topology=topo)
    out[preset] = {{"fct": r.flows["fct_us"].tolist(), "summary": r.summary, "events": r.engine["events"],
                    "cnps": r.engine["cnps"]}}
print(json.dumps(out))
"""


def test_dcqcn_parity_with_numba_disabled_and_same_seed():
    """The DCQCN paths (cut to the floor, byte-counter and timer increases that move a held packet
    earlier and re-arm the port) give bit-identical results compiled, as plain Python
    (NUMBA_DISABLE_JIT=1) and on a second run with the same seed."""
    from test_sim_support import run_parity_snippet

    jit = run_parity_snippet(_PARITY, False)
    assert jit["nvidia-firmware"]["cnps"] > 0
    assert jit == run_parity_snippet(_PARITY, False)
    assert jit == run_parity_snippet(_PARITY, True)
