"""PFC trigger points of the packet engine against the peers' own rules (``aifabric validate --pfc``).

One sender → one switch → one receiver at 100G, 1 µs links, 4000 B payload + 64 B header. The
receiver's NIC holds the switch's egress with an injected PAUSE (``fabric.pause_storms``), so every
packet the sender puts on the wire stays charged to the switch ingress; the sender receives the
real PAUSE one PAUSE-frame serialisation and one link delay after the packet that fired it arrived,
which tells which packet that was. The references evaluate the peers' comparisons as their code
writes them (:mod:`aifabric.pfc` cites the lines):

* htsim, static (``queue_lossless_input.cpp``): PAUSE on the first packet that makes the ingress
  hold more than 15 × 4000 B; RESUME when it holds less than 12 × 4000 B.
* ns-3 HPCC, dynamic (``switch-mmu.cc``): PAUSE on the first packet with
  held − 4 KiB ≥ (buffer − Σheadroom − Σreserve − shared) / 8, where each of the switch's ports
  carves out headroom 3 × rate × delay and a 4 KiB reserve, and shared = held − 4 KiB.
  The engine has no carve-out (its free pool is the buffer less everything held), so it may pause
  a few packets later; the table says by how many.
"""

from __future__ import annotations

from aifabric import pfc

PKT = 4064
SER_PS = PKT * 8 * 10**12 // (100 * 10**9)
PAUSE_SER_PS = 64 * 8 * 10**12 // (100 * 10**9)
DELAY_PS = 10**6
RATE_BPS = 100 * 10**9


def _run(pfc_spec: dict, buffer: int, hold_us: int, flow_bytes: int) -> tuple[int, int, int]:
    """(packet that fired PAUSE, packets held when RESUME went, max bytes held) in the engine."""
    from aifabric.scenario import scenario_from_dict
    from aifabric.sim import simulate

    sc = scenario_from_dict(
        {
            "name": "pfc-trigger",
            "seed": 1,
            "topology": {"kind": "star", "hosts": 2, "link_rate": "100Gbps", "link_delay": "1us"},
            "fabric": {
                "technology": "roce",
                "mtu": "4000B",
                "header": "64B",
                "switch_latency": "0ns",
                "switch_buffer": f"{buffer}B",
                "pfc": pfc_spec,
                "ecn": {"enabled": False},
                "congestion_control": "none",
                "routing": "ecmp",
                "pause_storms": [{"node": "h1", "start": "0us", "duration": f"{hold_us}us"}],
            },
            "workload": {"kind": "incast", "senders": 1, "receiver": 1, "flow_size": f"{flow_bytes}B"},
            "sim": {"until": "100ms", "progress": False},
        }
    )
    r = simulate(sc)
    log = r.pfc_log
    rx = log[log["node"] == 0].sort_values("time_ns")
    t_pause = int(rx[rx["type"] == 1]["time_ns"].iloc[0]) * 1000
    k = round((t_pause - PAUSE_SER_PS - 2 * DELAY_PS) / SER_PS)
    ports = r.ports
    max_in = int(ports[(ports["node_name"] == "sw0") & (ports["peer"] == 0)]["max_ingress_bytes"].iloc[0])
    t_resume = int(rx[rx["type"] == 0]["time_ns"].iloc[0]) * 1000
    # packets that left before RESUME: one per serialisation time from the end of the hold
    left = round((t_resume - hold_us * 10**6 - PAUSE_SER_PS - DELAY_PS) / SER_PS) + 1
    return k, max_in // PKT - left, max_in


def ns3_trigger_packets(buffer: int, ports: int, alpha_shift: int = 3) -> int:
    """ns-3 HPCC's PAUSE packet for one ingress filling a switch with ``ports`` ports."""
    hdrm = ports * pfc.ns3_headroom(RATE_BPS, DELAY_PS / 1e12)
    rsrv = ports * pfc.NS3_RESERVE_BYTES
    n = 0
    while True:
        n += 1
        shared = max(n * PKT - pfc.NS3_RESERVE_BYTES, 0)
        if shared >= (buffer - hdrm - rsrv - shared) >> alpha_shift:
            return n


def pfc_trigger_table() -> list[dict]:
    """One row per peer rule: the packet the peer's rule pauses on, the engine's, and RESUME."""
    rows = []
    k, resume_held, _ = _run({"enabled": True, "mode": "static"}, 32 * 2**20, 50, 400_000)
    rows.append(
        {
            "case": "htsim static 15/12 x 4000 B MTU (engine defaults)",
            "reference": "htsim queue_lossless_input.cpp l. 66-70, 100",
            "peer_pause_packet": pfc.static_trigger_packets(60000, PKT),
            "engine_pause_packet": k,
            "peer_resume_held": pfc.static_resume_packets(48000, PKT),
            "engine_resume_held": resume_held,
        }
    )
    buf = 32 * 2**20
    k, _, _ = _run(
        {"enabled": True, "mode": "dynamic", "alpha": 0.125, "reserve": f"{pfc.NS3_RESERVE_BYTES}B"},
        buf,
        400,
        4_000_000,
    )
    rows.append(
        {
            "case": "ns-3 HPCC dynamic alpha 1/8, 4 KiB reserve, 32 MiB (2-port switch)",
            "reference": "ns-3 switch-mmu.cc l. 77, 93-97; third.cc l. 836-843",
            "peer_pause_packet": ns3_trigger_packets(buf, 2),
            "engine_pause_packet": k,
            "peer_resume_held": None,
            "engine_resume_held": None,
        }
    )
    for r in rows:
        r["difference_packets"] = r["engine_pause_packet"] - r["peer_pause_packet"]
    return rows


def format_table(rows: list[dict]) -> str:
    out = ["case | peer PAUSE on packet | engine | difference | RESUME held peer / engine | reference"]
    for r in rows:
        res = (
            f"{r['peer_resume_held']} / {r['engine_resume_held']}"
            if r["peer_resume_held"] is not None
            else "—"
        )
        out.append(
            f"{r['case']} | {r['peer_pause_packet']} | {r['engine_pause_packet']} | "
            f"{r['difference_packets']:+d} | {res} | {r['reference']}"
        )
    return "\n".join(out)
