"""HPCC's INT stack is on the wire: every data packet and ACK carries 42 B (ns-3 HPCC IntHeader:
5 hop records × 8 B + 2 B hop count), serialised like header bytes and never counted as payload."""

from __future__ import annotations

import pytest

from aifabric.scenario import default
from aifabric.sim import simulate
from test_sim_support import scenario, star

SIZE = 400_000  # 100 packets of 4000 B
NPK = SIZE // 4000


def _one_flow(fabric: dict):
    sc = scenario(
        star(2),
        {"kind": "incast", "senders": 1, "receiver": 1, "flow_size": f"{SIZE}B"},
        fabric={"pfc": {"enabled": True, "mode": "dynamic"}, **fabric},
    )
    r = simulate(sc)
    ports = r.ports
    tx = {
        row.node_name: int(row.tx_bytes)
        for row in ports.itertuples()
        if row.node_name in ("h0", "h1")  # host NIC egress: h0 sends data, h1 sends ACKs
    }
    return r, tx


def test_int_default_is_ns3s_header():
    assert default("hpcc.int_bytes") == 5 * 8 + 2


@pytest.mark.parametrize("int_bytes", [None, 0, 100])
def test_int_bytes_are_serialised_not_delivered(int_bytes):
    hp = {"congestion_control": "hpcc"}
    if int_bytes is not None:
        hp["hpcc"] = {"int_bytes": f"{int_bytes}B"}
    want = 42 if int_bytes is None else int_bytes
    r, tx = _one_flow(hp)
    assert r.summary["completed_flows"] == 1
    e = r.engine
    # byte conservation counts payload only: INT is overhead
    assert e["injected_bytes"] == e["delivered_bytes"] == SIZE and e["in_flight_bytes"] == 0
    assert tx["h0"] == NPK * (4000 + 64 + want)  # every data packet carries the stack
    assert tx["h1"] == NPK * (64 + want)  # and every ACK echoes it
    assert r.engine.get("hpcc_int_bytes", 0) == want
    # the lone flow's FCT is its wire bytes at 100G plus the path: INT makes it longer
    wire_ps = NPK * (4064 + want) * 8 * 10**12 // (100 * 10**9)
    assert r.flows["fct_us"].iloc[0] * 1e6 >= wire_ps


def test_no_int_without_hpcc():
    """Symmetry: other congestion controls carry no INT (DCQCN reacts to ECN, not telemetry)."""
    r, tx = _one_flow({"congestion_control": "none"})
    assert tx["h0"] == NPK * 4064 and tx["h1"] == NPK * 64
    assert "hpcc_int_bytes" not in r.engine


def test_int_lengthens_the_uncontended_fct_by_its_share():
    """FCT with 42 B of INT over FCT with none ≈ 4106 / 4064 (the serialisation share)."""
    a, _ = _one_flow({"congestion_control": "hpcc"})
    b, _ = _one_flow({"congestion_control": "hpcc", "hpcc": {"int_bytes": "0B"}})
    ratio = a.flows["fct_us"].iloc[0] / b.flows["fct_us"].iloc[0]
    assert ratio == pytest.approx(4106 / 4064, rel=2e-3)
