"""PFC semantics (aifabric.pfc): the pause trigger and resume point as htsim and ns-3 run them,
the SONiC profile translation, and the headroom vocabulary the audit shares.

The trigger tests hold the switch's egress toward the receiver with an injected PAUSE (the
receiver NIC "sends" it), so every packet the sender puts on the wire stays charged to the
switch ingress: after k back-to-back packets that ingress holds k × 4,064 B, and the time the
sender receives the real PAUSE tells which packet fired it."""

from __future__ import annotations

import pytest

from aifabric import pfc
from aifabric.errors import InputError
from aifabric.sim import simulate
from test_sim_support import PKT, SER_100G_PS, scenario, star

DELAY_PS = 10**6  # 1 us links
PAUSE_SER_PS = 64 * 8 * 10**12 // (100 * 10**9)  # the 64 B PAUSE frame at 100G
HOLD_US = 50


def _held(fabric_pfc: dict, buffer: str = "32MiB"):
    sc = scenario(
        star(2),
        {"kind": "incast", "senders": 1, "receiver": 1, "flow_size": "400000B"},
        fabric={
            "pfc": fabric_pfc,
            "switch_buffer": buffer,
            "pause_storms": [{"node": "h1", "start": "0us", "duration": f"{HOLD_US}us"}],
        },
        until="1ms",
    )
    r = simulate(sc)
    log = r.pfc_log
    sender_rx = log[(log["node"] == 0)].sort_values("time_ns")
    first_pause_ps = int(sender_rx[sender_rx["type"] == 1]["time_ns"].iloc[0]) * 1000
    # PAUSE left the switch when packet k arrived (k × SER + delay), then crossed the link
    k = (first_pause_ps - PAUSE_SER_PS - 2 * DELAY_PS) / SER_100G_PS
    ports = r.ports
    max_in = int(ports[(ports["node_name"] == "sw0") & (ports["peer"] == 0)]["max_ingress_bytes"].iloc[0])
    return round(k), k, max_in, sender_rx


def test_static_trigger_is_htsims():
    """htsim PAUSEs when the ingress holds more than 15 × its 4,000 B MTU = 60,000 B after adding
    the packet (queue_lossless_input.cpp l. 66-70): the 15th 4,064 B packet (60,960 B). The
    default thresholds (no xoff given) and the shipped 60000B give that; the old 60,960 B fired
    one packet later."""
    assert pfc.static_trigger_packets(60000, PKT) == 15
    k, exact, _, _ = _held({"enabled": True, "mode": "static"})
    assert abs(exact - k) < 0.01  # the PAUSE left exactly when a packet arrived
    assert k == 15 and k * PKT == 60960
    k_old, _, _, _ = _held({"enabled": True, "mode": "static", "xoff": "60960B", "xon": "48768B"})
    assert k_old == 16


def test_static_resume_and_headroom():
    """After the hold ends the egress drains one packet per 325 ns; RESUME goes when the ingress
    holds fewer than 48,000 B (11 packets, htsim l. 100). What arrived after the PAUSE stays
    within the engine's headroom floor (one link round trip + one packet + the PAUSE frame)."""
    k, _, max_in, rx = _held({"enabled": True, "mode": "static", "xoff": "60000B", "xon": "48000B"})
    assert max_in % PKT == 0
    held = max_in // PKT
    after_pause = max_in - k * PKT
    floor = pfc.engine_headroom_floor(100e9, 1e-6, PKT)
    assert 0 < after_pause <= floor
    resume_ps = int(rx[rx["type"] == 0]["time_ns"].iloc[0]) * 1000
    left = held - pfc.static_resume_packets(48000, PKT)  # packets that left when RESUME went
    assert pfc.static_resume_packets(48000, PKT) == 11
    expect = HOLD_US * 10**6 + (left - 1) * SER_100G_PS + PAUSE_SER_PS + DELAY_PS
    assert abs(resume_ps - expect) <= 1000  # the log is in whole ns


def test_dynamic_trigger_is_ns3s():
    """ns-3 HPCC (switch-mmu.cc l. 77, 93-97) PAUSEs when ingress − reserve >= α × free buffer.
    With a 332,992 B buffer, α = 1/8 and a 4 KiB reserve, the 10th packet makes both sides equal
    (10 × 4064 − 4096 = (332992 − 40640) / 8 = 36544): ``>=`` fires there, ``>`` would not."""
    buf, alpha, reserve = 332992, 0.125, 4096
    ks = [n for n in range(1, 80) if n * PKT - reserve >= alpha * (buf - n * PKT)]
    assert ks[0] == 10 and 10 * PKT - reserve == alpha * (buf - 10 * PKT)
    k, exact, _, _ = _held(
        {"enabled": True, "mode": "dynamic", "alpha": alpha, "reserve": f"{reserve}B"}, buffer=f"{buf}B"
    )
    assert abs(exact - k) < 0.01
    assert k == 10
    # without the reserve the trigger comes earlier: n × 4064 >= (332992 − n × 4064) / 8 at n = 10
    # as well, so take a reserve of 3 packets to see it move
    k3, _, _, _ = _held(
        {"enabled": True, "mode": "dynamic", "alpha": alpha, "reserve": f"{3 * PKT}B"}, buffer=f"{buf}B"
    )
    assert k3 == next(n for n in range(1, 80) if n * PKT - 3 * PKT >= alpha * (buf - n * PKT))
    assert k3 > k


NS3_LIKE = {"dynamic_th": "-3", "xoff": "78848", "xon": "19456", "xon_offset": "2496", "size": "4096"}


def test_sonic_profile_translation_round_trip():
    p = pfc.from_sonic(NS3_LIKE)
    assert p.mode == "dynamic" and p.alpha == 0.125
    assert p.headroom == 78848 and p.reserve == 4096 and p.xon == 19456 and p.resume_offset == 2496
    assert pfc.to_sonic(p) == NS3_LIKE
    s = pfc.from_sonic({"static_th": "60000", "xon_offset": "12000", "xoff": "30000"})
    assert (s.mode, s.xoff, s.xon, s.headroom) == ("static", 60000, 48000, 30000)
    assert pfc.from_sonic(pfc.to_sonic(s)) == s
    for bad, field in (
        ({"dynamic_th": "9"}, "dynamic_th"),
        ({"xoff": "100"}, "exactly one"),
        ({"dynamic_th": "0", "static_th": "1"}, "exactly one"),
        ({"dynamic_th": "0", "xoff": "-5"}, "xoff"),
        ({"static_th": "0"}, "static_th"),
    ):
        with pytest.raises(InputError, match=field):
            pfc.from_sonic(bad)
    with pytest.raises(InputError, match="power"):
        pfc.to_sonic(pfc.PfcProfile(mode="dynamic", alpha=0.3))


def test_scenario_takes_a_sonic_profile():
    """``fabric.pfc.sonic_profile`` sets the native fields; the run equals the native spelling."""
    wl = {"kind": "incast", "senders": 3, "flow_size": "300KB"}
    a = scenario(
        star(4), wl, fabric={"pfc": {"enabled": True, "sonic_profile": NS3_LIKE}, "switch_buffer": "1MiB"}
    )
    assert a.fabric.pfc.mode == "dynamic" and a.fabric.pfc.alpha == 0.125
    assert (a.fabric.pfc.reserve, a.fabric.pfc.resume_offset, a.fabric.pfc.headroom) == (4096, 2496, 78848)
    b = scenario(
        star(4),
        wl,
        fabric={
            "pfc": {
                "enabled": True,
                "mode": "dynamic",
                "alpha": 0.125,
                "xon": "19456B",
                "resume_offset": "2496B",
                "reserve": "4096B",
                "headroom": "78848B",
            },
            "switch_buffer": "1MiB",
        },
    )
    ra, rb = simulate(a), simulate(b)
    assert ra.summary["pause_frames"] > 0
    assert ra.flows["fct_us"].tolist() == rb.flows["fct_us"].tolist()
    assert ra.summary["pause_frames"] == rb.summary["pause_frames"]


@pytest.mark.parametrize(
    "pfc_spec, msg",
    [
        ({"sonic_profile": {"dynamic_th": 1}, "xoff": "1000B"}, "either sonic_profile or xoff"),
        ({"sonic_profile": {"dynamic_th": 8}}, "dynamic_th"),
        ({"sonic_profile": {"xon": 10}}, "exactly one"),
        ({"mode": "static", "reserve": "4KB"}, "dynamic only"),
    ],
)
def test_sonic_profile_errors_are_one_line(pfc_spec, msg):
    from aifabric.scenario import scenario_from_dict

    d = {
        "name": "t",
        "topology": star(2),
        "fabric": {"technology": "roce", "pfc": {"enabled": True, **pfc_spec}},
        "workload": {"kind": "incast", "senders": 1, "flow_size": "1KB"},
    }
    with pytest.raises(InputError) as e:
        scenario_from_dict(d)
    assert msg in str(e.value) and "\n" not in str(e.value).strip()
    assert "fabric.pfc" in str(e.value)


def test_audit_headroom_floor_is_the_shared_one():
    """The audit's physical headroom floor is aifabric.pfc's (one copy of the physics)."""
    from aifabric.audit import headroom as hr

    for speed, cable in ((100000, 5), (400000, 300), (10000, 40)):
        assert hr.minimum_xoff(speed, cable) == pfc.headroom_floor(speed, cable)
    assert hr.cable_bytes is pfc.cable_bytes
    # the floor covers the round trip: 400G over 300 m is 151,515 B of cable alone
    assert pfc.headroom_floor(400000, 300) > pfc.cable_bytes(400000, 300) > 150000


@pytest.mark.validation
def test_validate_pfc_table_matches_the_peers():
    """`aifabric validate --pfc`: htsim's PAUSE packet and RESUME point exactly; ns-3's dynamic
    PAUSE within 2 packets of 917 (the engine does not carve ns-3's per-port headroom and reserve
    out of the pool: 0.2 %)."""
    from aifabric.sim.pfc_validation import ns3_trigger_packets, pfc_trigger_table

    assert ns3_trigger_packets(32 * 2**20, 2) == 917
    ht, ns3 = pfc_trigger_table()
    assert ht["peer_pause_packet"] == ht["engine_pause_packet"] == 15
    assert ht["peer_resume_held"] == ht["engine_resume_held"] == 11
    assert 0 <= ns3["difference_packets"] <= 2


def test_real_sonic_lookup_rows_translate_and_cover_the_floor():
    """Every row of the three real pg_profile_lookup.ini tables (Arista TH2 with xon_offset,
    Mellanox SN2700, NVIDIA SN5600) becomes an engine profile — α = 2^threshold, headroom = xoff,
    reserve = size — translates back unchanged, and its headroom is above the shared physical
    floor at its speed and cable (with the lossless MTU the audit uses)."""
    from pathlib import Path

    from aifabric.audit.sonic import read_pg_lookup

    real = Path(__file__).parent / "fixtures" / "real" / "sonic-buildimage"
    n = 0
    for f in sorted(real.glob("pg_profile_lookup.*.ini")):
        for row in read_pg_lookup(f).rows.values():
            prof = row.profile()
            p = pfc.from_sonic(prof, f.name)
            assert p.mode == "dynamic" and p.alpha == 2.0**row.threshold
            assert (p.headroom, p.reserve, p.xon) == (row.xoff_bytes, row.size_bytes, row.xon_bytes)
            assert pfc.to_sonic(p) == prof
            floor = pfc.headroom_floor(int(row.speed), int(row.cable[:-1]), frame_bytes=1024)
            assert p.headroom >= floor, (f.name, row)
            n += 1
    assert n >= 40
