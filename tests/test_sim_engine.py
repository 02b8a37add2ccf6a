"""Packet engine: closed-form latency, line rate, conservation, determinism, JIT parity, PFC."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aifabric.sim import simulate
from test_sim_support import ACK_100G_PS, PKT, SER_100G_PS, fat_tree, run_parity_snippet, scenario, star

ROOT = Path(__file__).resolve().parents[1]
D_PS = 1_000_000  # 1 µs links


TECHNOLOGIES = ["roce", "infiniband"]  # same 64 B header in these tests, so the same closed forms


def _one_flow(size: int, switch_latency: str = "0ns", technology: str = "roce"):
    # fat-tree k=4: host 0 -> host 15 crosses tor, agg, core, agg, tor (6 links, 5 switches)
    sc = scenario(
        fat_tree(4),
        {"kind": "incast", "senders": 1, "receiver": 15, "flow_size": f"{size}B"},
        fabric={"switch_latency": switch_latency, "technology": technology},
    )
    return simulate(sc)


@pytest.mark.validation
@pytest.mark.parametrize("technology", TECHNOLOGIES)
def test_one_packet_latency_is_store_and_forward_per_hop(technology):
    """A one-packet flow arrives after 6 × (serialisation + propagation) + 5 switch latencies, and
    completes when its 64 B ACK has come back the same way (RoCE and InfiniBand alike)."""
    r = _one_flow(4000, "100ns", technology)
    f = r.flows.iloc[0]
    assert f["hops"] == 6
    rx = 6 * (SER_100G_PS + D_PS) + 5 * 100_000
    assert f["rx_fct_us"] * 1e6 == pytest.approx(rx, abs=1)
    ack = 6 * (ACK_100G_PS + D_PS) + 5 * 100_000
    assert f["fct_us"] * 1e6 == pytest.approx(rx + ack, abs=1)
    assert f["fct_us"] == pytest.approx(f["ideal_fct_us"], abs=1e-6)


@pytest.mark.validation
@pytest.mark.parametrize("technology", TECHNOLOGIES)
def test_one_flow_fct_matches_pipeline_closed_form(technology):
    """A lone 2 MB flow (500 packets) finishes at 500 serialisations + 5 more hops of one packet +
    propagation + ACK return: exactly its ideal FCT, slowdown 1 (IB credits never stall a lone flow)."""
    r = _one_flow(2_000_000, technology=technology)
    f = r.flows.iloc[0]
    expect = 500 * SER_100G_PS + 5 * SER_100G_PS + 6 * D_PS + 6 * (ACK_100G_PS + D_PS)
    assert f["fct_us"] * 1e6 == pytest.approx(expect, abs=1)
    assert f["slowdown"] == pytest.approx(1.0, abs=1e-9)
    assert r.summary["pause_frames"] == 0


@pytest.mark.validation
@pytest.mark.parametrize("technology", TECHNOLOGIES)
def test_single_flow_reaches_line_rate_minus_headers(technology):
    """Payload throughput of a lone long flow = 100 Gb/s × 4000/4064 (header overhead), within 0.5 %."""
    r = _one_flow(8_000_000, technology=technology)
    f = r.flows.iloc[0]
    path_us = 5 * SER_100G_PS / 1e6 + 6  # pipeline fill
    gbps = f["size_bytes"] * 8 / ((f["rx_fct_us"] - path_us) * 1e3)
    assert gbps == pytest.approx(100 * 4000 / 4064, rel=0.005)


def test_bytes_are_conserved_mid_run():
    """Stopped mid-transfer: injected payload = delivered + in flight + dropped, and the lossless
    fabric dropped nothing."""
    sc = scenario(
        star(5), {"kind": "incast", "senders": 4, "receiver": 0, "flow_size": "400KB"}, until="20us"
    )
    r = simulate(sc)
    e = r.engine
    assert e["status"] == "time limit"
    assert e["in_flight_bytes"] > 0
    assert e["injected_bytes"] == e["delivered_bytes"] + e["in_flight_bytes"] + e["dropped_bytes"]
    assert r.summary["drops"] == 0


def test_same_seed_same_output_other_seed_other_ecmp():
    """Two runs with one seed are identical; another seed changes ECMP draws (and so the FCTs)."""
    wl = {"kind": "permutation", "flow_size": "100KB"}
    a = simulate(scenario(fat_tree(4), wl, seed=3))
    b = simulate(scenario(fat_tree(4), wl, seed=3))
    c = simulate(scenario(fat_tree(4), wl, seed=4))
    assert a.flows.equals(b.flows)
    assert a.ports.equals(b.ports)
    assert a.summary == b.summary
    assert not a.flows["fct_us"].equals(c.flows["fct_us"])


_PARITY = r"""
import json, sys
sys.path.insert(0, {tests!r})
from test_sim_support import scenario, star, fat_tree
from aifabric.sim import simulate
out = {{}}
cases = {{
    "pfc": scenario(star(4), {{"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "60KB"}},
                    fabric={{"pfc": {{"enabled": True, "mode": "static", "xoff": "12192B", "xon": "8128B"}}}}),
    "dcqcn": scenario(star(4), {{"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "60KB"}},
                      fabric={{"pfc": {{"enabled": True, "mode": "dynamic"}},
                              "ecn": {{"enabled": True, "kmin": "5KB", "kmax": "20KB", "pmax": 0.5}},
                              "congestion_control": "dcqcn"}}),
    "ib": scenario(fat_tree(4), {{"kind": "permutation", "flow_size": "20KB"}}, fabric={{"technology": "infiniband"}}),
    "lossy": scenario(star(4), {{"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "100KB"}},
                      fabric={{"pfc": {{"enabled": False}}, "switch_buffer": "30KB"}}),
    "failure": scenario(fat_tree(4), {{"kind": "permutation", "flow_size": "200KB"}},
                        fabric={{"failures": [{{"link": "tor0-agg0", "at": "5us"}}]}}),
    "adaptive": scenario(fat_tree(4), {{"kind": "permutation", "flow_size": "20KB"}},
                         fabric={{"routing": "adaptive", "adaptive": {{"granularity": "packet"}}}}),
    "flowlet": scenario(fat_tree(4), {{"kind": "permutation", "flow_size": "20KB"}},
                        fabric={{"routing": "adaptive", "adaptive": {{"granularity": "flowlet"}}}}),
    "hpcc": scenario(star(5), {{"kind": "incast", "senders": 4, "receiver": 0, "flow_size": "200KB"}},
                     fabric={{"congestion_control": "hpcc"}}),
}}
for name, sc in cases.items():
    r = simulate(sc)
    out[name] = {{"flows": r.flows.drop(columns=["throughput_gbps"]).to_json(),
                  "ports": r.ports.to_json(), "summary": r.summary, "events": r.engine["events"]}}
print(json.dumps(out))
"""


def test_kernel_parity_with_numba_disabled():
    """The kernel gives bit-identical results compiled and as plain Python (NUMBA_DISABLE_JIT=1),
    with PFC, DCQCN, HPCC, InfiniBand credits, lossy go-back-N, a link failure and adaptive routing exercised."""
    jit = run_parity_snippet(_PARITY, False)
    nojit = run_parity_snippet(_PARITY, True)
    assert jit["pfc"]["summary"]["pause_frames"] > 0
    assert jit["lossy"]["summary"]["drops"] > 0
    assert jit["dcqcn"]["summary"]["ecn_marks"] > 0
    assert jit["hpcc"]["summary"]["completed_flows"] == 4
    assert jit == nojit


def test_pfc_pauses_upstream_in_small_incast():
    """Three line-rate senders into one port overflow a 3-packet xoff: PAUSE frames flow, nothing is
    dropped, every byte arrives."""
    sc = scenario(
        star(4),
        {"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "200KB"},
        fabric={"pfc": {"enabled": True, "mode": "static", "xoff": "12192B", "xon": "8128B"}},
    )
    r = simulate(sc)
    assert r.summary["pause_frames"] > 0
    assert r.summary["drops"] == 0
    assert r.summary["completed_flows"] == 3
    assert r.engine["delivered_bytes"] == 3 * 200_000
    assert (r.ports["pause_received"] > 0).sum() >= 1


def test_dynamic_pfc_threshold_is_lossless():
    """Dynamic (alpha × free buffer) thresholds on a small buffer still lose nothing."""
    sc = scenario(
        star(5),
        {"kind": "incast", "senders": 4, "receiver": 0, "flow_size": "500KB"},
        fabric={"switch_buffer": "400KB", "pfc": {"enabled": True, "mode": "dynamic", "alpha": 0.25}},
    )
    r = simulate(sc)
    assert r.summary["drops"] == 0
    assert r.summary["pause_frames"] > 0
    assert r.summary["completed_flows"] == 4


def test_incast_fct_order_and_drain_small():
    """Incast through one switch: the receiver link stays busy, so the last flow ends at the drain
    bound (all packets serialised once on the receiver link) plus one path."""
    sc = scenario(star(5), {"kind": "incast", "senders": 4, "receiver": 0, "flow_size": "400KB"})
    r = simulate(sc)
    drain = 4 * 100 * SER_100G_PS  # every packet once on the receiver link
    path = SER_100G_PS + 2 * D_PS + 2 * (ACK_100G_PS + D_PS)  # first hop, propagation, ACK return
    assert r.summary["fct_max_us"] * 1e6 == pytest.approx(drain + path, abs=1)
    assert np.all(r.flows["completed"])


def _peer(name):
    from aifabric.scenario import load_scenario

    return load_scenario(ROOT / "scenarios" / f"{name}.yaml")


@pytest.mark.validation
def test_incast32_drains_at_receiver_bound_losslessly():
    """incast32 (peer-baselines): every byte delivered, zero drops, PAUSE frames > 0, last flow within
    1 % of 32 × 500 × 4064 B × 8 / 100 Gb/s = 5.20 ms; senders in the receiver's pod finish first."""
    r = simulate(_peer("incast32"))
    s = r.summary
    assert r.engine["delivered_bytes"] == 32 * 2_000_000
    assert s["drops"] == 0 and s["completed_flows"] == 32
    assert s["pause_frames"] > 0
    bound_us = 32 * 500 * PKT * 8 / 100e9 * 1e6
    assert s["fct_max_us"] == pytest.approx(bound_us, rel=0.01)
    f = r.flows
    k8_pod_hosts = 16
    near = f[f["src"] < k8_pod_hosts]["fct_us"]
    far = f[f["src"] >= k8_pod_hosts]["fct_us"]
    assert len(near) and near.mean() < far.mean()


@pytest.mark.validation
def test_incast32_ib_credits_no_pause_no_drop():
    """incast32 on InfiniBand: credit flow control delivers everything with no PAUSE frames and no
    drops, some ports stall on credits, and the drain bound holds within 1 %."""
    r = simulate(_peer("incast32-ib"))
    s = r.summary
    assert r.engine["delivered_bytes"] == 32 * 2_000_000
    assert s["drops"] == 0 and s["pause_frames"] == 0
    assert r.ports["credit_stall_us"].sum() > 0
    bound_us = 32 * 500 * PKT * 8 / 100e9 * 1e6
    assert s["fct_max_us"] == pytest.approx(bound_us, rel=0.01)


def test_ib_small_incast_credit_stalls():
    """A 3→1 InfiniBand incast with a 2-packet VL buffer: no drops, no pauses, credit stalls."""
    sc = scenario(
        star(4),
        {"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "100KB"},
        fabric={"technology": "infiniband", "ib": {"vl_buffer": "8192B"}},
    )
    r = simulate(sc)
    assert r.summary["drops"] == 0 and r.summary["pause_frames"] == 0
    assert r.summary["completed_flows"] == 3
    assert r.ports["credit_stall_us"].sum() > 0
    assert r.engine["ib_vl_buffer_bytes"] == 8192


def test_lossy_roce_drops_and_recovers_with_go_back_n():
    """PFC off, small buffer: the incast drops packets, go-back-N (NACK or timeout) resends them,
    every flow completes with exactly its bytes delivered in order, and bytes are conserved
    (injected = delivered + in flight + dropped + discarded by the receiver)."""
    sc = scenario(
        star(5),
        {"kind": "incast", "senders": 4, "receiver": 0, "flow_size": "1MB"},
        fabric={"pfc": {"enabled": False}, "switch_buffer": "100KB"},
    )
    r = simulate(sc)
    e = r.engine
    assert r.summary["drops"] > 0 and r.summary["pause_frames"] == 0
    assert r.summary["completed_flows"] == 4
    assert e["delivered_bytes"] == 4 * 1_000_000
    assert e["retransmissions"] > 0 and r.flows["retransmissions"].sum() == e["retransmissions"]
    assert e["injected_bytes"] == (
        e["delivered_bytes"] + e["in_flight_bytes"] + e["dropped_bytes"] + e["discarded_bytes"]
    )
    assert (r.ports["drops"] > 0).sum() == 1


_LS = {
    "kind": "leaf-spine",
    "leaves": 2,
    "spines": 2,
    "hosts_per_leaf": 4,
    "link_rate": "100Gbps",
    "link_delay": "1us",
}


@pytest.mark.parametrize("routing", ["ecmp", "adaptive"])
def test_link_failure_reroutes_and_recovers(routing):
    """leaf0-spine0 fails at 50 µs: it carries nothing afterwards (≤ 50 µs of line rate in total),
    the packets caught on it are dropped and resent (go-back-N), flows are rehashed onto the
    surviving spine, and every flow completes with bytes conserved."""
    fab = {"failures": [{"link": "leaf0-spine0", "at": "50us"}], "routing": routing}
    if routing == "adaptive":
        fab["adaptive"] = {"granularity": "packet"}
    r = simulate(scenario(_LS, {"kind": "permutation", "flow_size": "2MB"}, fabric=fab))
    e = r.engine
    assert r.summary["completed_flows"] == 8
    assert r.summary["drops"] > 0 and e["retransmissions"] > 0
    assert e["delivered_bytes"] == 8 * 2_000_000
    assert e["injected_bytes"] == (
        e["delivered_bytes"] + e["in_flight_bytes"] + e["dropped_bytes"] + e["discarded_bytes"]
    )
    p = r.ports
    failed = p[(p["node_name"] == "leaf0") & (p["peer"] == 10)]  # node 10 = spine0
    assert failed["tx_bytes"].iloc[0] <= 50e-6 * 100e9 / 8 + 4064


def test_unknown_failure_link_is_an_input_error():
    """A failure naming a link that does not exist is an InputError naming the field."""
    from aifabric.errors import InputError

    with pytest.raises(InputError, match="fabric.failures.0.link"):
        simulate(
            scenario(
                _LS,
                {"kind": "permutation", "flow_size": "2MB"},
                fabric={"failures": [{"link": "leaf0-leaf1", "at": "1us"}]},
            )
        )
