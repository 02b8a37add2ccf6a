"""A simulated run's counters in the formats operators collect (``aifabric simulate --counters``).

Only what the packet engine tracks is written (``ports.parquet``, ``flows.parquet``, the run's
injected PAUSE schedule), each as the device that would count it reports it, over the whole run
(``# interval:`` = the simulated time):

==============================  ===========================================================
engine result                   written as
==============================  ===========================================================
ports ``tx_bytes`` / packets    the sender's tx and the receiver's rx bytes / packets
``pause_received``,             PFC priority 3 (RoCE lossless class, NVIDIA default) PAUSE
``paused_time_us``              frames / duration received by the sender, sent by its peer
``injected_pause_us``           PAUSE from a stalled NIC or a storming switch: its frames
                                (one per injected pause, more where a pause outlasts one
                                frame's 65,535 quanta) and duration, like real PAUSE
``credit_stall_us`` (+ injected) IB PortXmitWait ticks (8 bytes of port time per tick)
``ecn_marks`` / ``drops``       the egress's ECN-marked packets / discards
``max_queue_bytes``             the egress queue watermark
watchdog cut (``pfc_watchdog``) one PFC-watchdog storm per cut pause on that egress
``fabric.failures``             the link's operational state: down
flows ``cnps`` / retransmissions NIC CNPs handled (sender) / sent (receiver); NAK sequence
                                errors (sender) and out-of-sequence arrivals (receiver), one
                                per go-back-N rewind (a lower bound)
==============================  ===========================================================

Formats: ``prometheus`` — host NICs as node_exporter's infiniband and ethtool collectors,
InfiniBand switch ports as guilbaults/infiniband-exporter, Ethernet switch ports as
``sai_port_stat{stat="<SONiC COUNTERS_DB name>"}`` (no public SONiC exporter publishes
per-priority PFC: a convention of this tool, read back by :mod:`aifabric.diagnose.readers`);
``sonic`` — per device ``show pfc counters`` and ``show queue counters`` (frames and packets only:
SONiC's show commands give no PAUSE durations), hosts as ``ethtool -S``; ``perfquery`` — one
``# Port counters`` block per InfiniBand port.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from aifabric.diagnose.counters import XMIT_WAIT_BYTES_PER_TICK
from aifabric.diagnose.fabric import from_topology

FORMATS = ("prometheus", "sonic", "perfquery")
LOSSLESS_PRIORITY = 3  # NVIDIA / SONiC RoCE default lossless priority (formats.md, Cumulus 'nv set qos roce')
PAUSE_QUANTA_BITS = 65535 * 512  # the longest PAUSE one frame asks for (802.1Qbb: quanta of 512 bit times)


def port_counters(res, scenario, topo) -> tuple[dict, float]:
    """``{(device, port label): {counter: value}}`` and the interval (s) of a simulated run."""
    tech = scenario.fabric.technology
    fm = from_topology(topo, tech, scenario.name)
    names = topo.node_names
    p = res.ports
    t_s = float(res.engine.get("sim_time_us", 0.0)) * 1e-6
    label = {}
    for (dev, lab), port in fm.ports.items():
        label[(dev, port.link)] = lab
    inj_frames, wd = _injected(scenario, topo, res)
    out: dict = defaultdict(dict)
    ib = tech == "infiniband"
    for r in p.itertuples(index=False):
        me, peer, link = names[int(r.node)], names[int(r.peer)], int(r.link)
        mine, theirs = out[(me, label[(me, link)])], out[(peer, label[(peer, link)])]
        rate = float(r.rate_gbps) * 1e9
        _add(mine, "tx_bytes", r.tx_bytes)
        _add(mine, "tx_packets", r.tx_packets)
        _add(theirs, "rx_bytes", r.tx_bytes)
        _add(theirs, "rx_packets", r.tx_packets)
        _add(mine, "tx_drops", r.drops)
        _add(mine, "ecn_marked_packets", r.ecn_marks)
        mine["queue_watermark_bytes"] = float(r.max_queue_bytes)
        injected = float(getattr(r, "injected_pause_us", 0.0) or 0.0)
        if ib:
            wait_us = float(r.credit_stall_us) + injected
            _add(mine, "xmit_wait_ticks", round(wait_us * 1e-6 * rate / (8 * XMIT_WAIT_BYTES_PER_TICK)))
        else:
            frames = float(r.pause_received) + inj_frames.get((int(r.node), link), 0)
            held = float(r.paused_time_us) + injected
            _add(mine, "pfc_rx_frames", frames)
            _add(mine, "pfc_rx_pause_us", held)
            _add(theirs, "pfc_tx_frames", frames)
            _add(theirs, "pfc_tx_pause_us", held)
            _add(mine, "pfcwd_storms", wd.get((int(r.node), link), 0))
        mine["rate_gbps"] = float(r.rate_gbps)
        mine["oper_up"] = 1.0
    for link in _failed_links(scenario, topo):
        for node in (int(topo.link_a[link]), int(topo.link_b[link])):
            out[(names[node], label[(names[node], link)])]["oper_up"] = 0.0
            out[(names[node], label[(names[node], link)])]["link_downed"] = 1.0
    _nic_counters(res, topo, fm, out)
    return dict(out), t_s


def _add(d: dict, k: str, v) -> None:
    d[k] = d.get(k, 0.0) + float(v)


def _injected(scenario, topo, res) -> tuple[dict, dict]:
    """Injected PAUSE frames and watchdog storms per egress ``(sender node, link)``."""
    fab = scenario.fabric
    if not (fab.pause_storms or getattr(fab, "receiver_stalls", ())):
        return {}, {}
    from aifabric.sim.misconfig import pause_storms

    until = int(float(res.engine.get("sim_time_us", 0.0)) * 1e6)
    frames, wd = defaultdict(int), defaultdict(int)
    for s in pause_storms(fab, topo, until):
        for port in s["ports"]:
            link = port // 2
            sender = int(topo.link_a[link] if port % 2 == 0 else topo.link_b[link])
            rate = float(topo.link_rate_bps[link])
            per_pause = max(1, math.ceil(s["duration_ps"] * 1e-12 * rate / PAUSE_QUANTA_BITS))
            frames[(sender, link)] += s["pauses"] * per_pause
            if s["watchdog_cut"]:
                wd[(sender, link)] += s["pauses"]
    return dict(frames), dict(wd)


def _failed_links(scenario, topo) -> list[int]:
    if not scenario.fabric.failures:
        return []
    from aifabric.sim.engine import _failure_events

    return sorted({int(link) for _, link in _failure_events(scenario.fabric, topo)})


def _nic_counters(res, topo, fm, out: dict) -> None:
    f = res.flows
    if "cnps" not in f or not len(f):
        return
    names = topo.node_names
    host_label = {p.device: lab for (_, lab), p in fm.ports.items() if p.tier == 0}
    for col, by, counter in (
        ("cnps", "src", "rp_cnp_handled"),
        ("cnps", "dst", "np_cnp_sent"),
        ("retransmissions", "src", "packet_seq_err"),
        ("retransmissions", "dst", "out_of_sequence"),
    ):
        if col not in f:
            continue
        sums = f.groupby(by)[col].sum()
        for node, v in sums.items():
            host = names[int(node)]
            if host in host_label and v:
                _add(out[(host, host_label[host])], counter, v)


# ---- writers --------------------------------------------------------------------------------------
def write(fmt: str, counters: dict, interval_s: float, tiers: dict[str, int], technology: str) -> str:
    """The counters as ``fmt`` text (see the module doc)."""
    head = [f"# interval: {interval_s:.9g}", "# written by aifabric simulate --counters (a simulated run)"]
    if fmt == "prometheus":
        return "\n".join(head + _prometheus(counters, tiers, technology)) + "\n"
    if fmt == "sonic":
        return "\n".join(head + _sonic(counters, tiers)) + "\n"
    return "\n".join(head + _perfquery(counters, tiers)) + "\n"


_NODE_IB = {
    "tx_bytes": "node_infiniband_port_data_transmitted_bytes_total",
    "rx_bytes": "node_infiniband_port_data_received_bytes_total",
    "tx_packets": "node_infiniband_port_packets_transmitted_total",
    "rx_packets": "node_infiniband_port_packets_received_total",
    "xmit_wait_ticks": "node_infiniband_port_transmit_wait_total",
    "link_downed": "node_infiniband_link_downed_total",
    "np_cnp_sent": "node_infiniband_np_cnp_packets_sent_total",
    "rp_cnp_handled": "node_infiniband_rp_cnp_handled_total",
    "out_of_sequence": "node_infiniband_out_of_sequence_packets_received_total",
    "packet_seq_err": "node_infiniband_packet_sequence_errors_total",
}
_IB_SWITCH = {
    "tx_bytes": ("infiniband_portxmitdata_total", 4),
    "rx_bytes": ("infiniband_portrcvdata_total", 4),
    "tx_packets": ("infiniband_portxmitpkts_total", 1),
    "rx_packets": ("infiniband_portrcvpkts_total", 1),
    "xmit_wait_ticks": ("infiniband_portxmitwait_total", 1),
    "tx_drops": ("infiniband_portxmitdiscards_total", 1),
    "link_downed": ("infiniband_linkdownedcounter_total", 1),
}
_SAI = {
    "tx_bytes": "SAI_PORT_STAT_IF_OUT_OCTETS",
    "rx_bytes": "SAI_PORT_STAT_IF_IN_OCTETS",
    "tx_packets": "SAI_PORT_STAT_IF_OUT_UCAST_PKTS",
    "rx_packets": "SAI_PORT_STAT_IF_IN_UCAST_PKTS",
    "tx_drops": "SAI_PORT_STAT_IF_OUT_DISCARDS",
}
_SAI_EXTRA = {
    "queue_watermark_bytes": "sai_queue_watermark_bytes",
    "ecn_marked_packets": "sai_queue_ecn_marked_packets",
    "pfcwd_storms": "sai_pfcwd_storm_detected",
    "oper_up": "sai_port_oper_status",
    "rate_gbps": "sai_port_speed_gbps",
}


def _g(v: float) -> str:
    return f"{v:.12g}"


def _prometheus(counters: dict, tiers: dict, technology: str) -> list[str]:
    lines = []
    for (dev, label), c in sorted(counters.items()):
        if tiers.get(dev, 1) == 0:
            nic, port = label.split("/")
            lab = f'instance="{dev}",device="{nic}",port="{port}"'
            for k, name in _NODE_IB.items():
                if k in c:
                    lines.append(f"{name}{{{lab}}} {_g(c[k])}")
            if "rate_gbps" in c:
                lines.append(f"node_infiniband_rate_bytes_per_second{{{lab}}} {_g(c['rate_gbps'] * 1e9 / 8)}")
            if "oper_up" in c:
                lines.append(f"node_infiniband_physical_state_id{{{lab}}} {5 if c['oper_up'] else 3}")
            if technology != "infiniband":
                elab = f'instance="{dev}",device="{nic}"'
                for k, stat in (
                    ("pfc_tx_frames", "tx_prio3_pause"),
                    ("pfc_rx_frames", "rx_prio3_pause"),
                    ("pfc_tx_pause_us", "tx_prio3_pause_duration"),
                    ("pfc_rx_pause_us", "rx_prio3_pause_duration"),
                ):
                    if k in c:
                        lines.append(f"node_ethtool_{stat}{{{elab}}} {_g(c[k])}")
        elif technology == "infiniband":
            lab = f'component="switch",local_name="{dev}",local_port="{label}"'
            for k, (name, scale) in _IB_SWITCH.items():
                if k in c:
                    lines.append(f"{name}{{{lab}}} {_g(round(c[k] / scale))}")
        else:
            lab = f'device="{dev}",interface="{label}"'
            for k, stat in _SAI.items():
                if k in c:
                    lines.append(f'sai_port_stat{{{lab},stat="{stat}"}} {_g(c[k])}')
            for k, what in (
                ("pfc_rx_frames", "RX_PKTS"),
                ("pfc_tx_frames", "TX_PKTS"),
                ("pfc_rx_pause_us", "RX_PAUSE_DURATION_US"),
                ("pfc_tx_pause_us", "TX_PAUSE_DURATION_US"),
            ):
                if k in c:
                    stat = f"SAI_PORT_STAT_PFC_{LOSSLESS_PRIORITY}_{what}"
                    lines.append(f'sai_port_stat{{{lab},stat="{stat}"}} {_g(c[k])}')
            for k, name in _SAI_EXTRA.items():
                if k in c:
                    extra = (
                        f',priority="{LOSSLESS_PRIORITY}"'
                        if k in ("pfcwd_storms", "ecn_marked_packets")
                        else ""
                    )
                    lines.append(f"{name}{{{lab}{extra}}} {_g(c[k])}")
    return lines


def _by_device(counters: dict) -> dict[str, list[tuple[str, dict]]]:
    out: dict = defaultdict(list)
    for (dev, label), c in counters.items():
        out[dev].append((label, c))
    for v in out.values():
        v.sort(key=lambda x: _port_key(x[0]))
    return dict(sorted(out.items()))


def _port_key(label: str):
    digits = "".join(ch if ch.isdigit() else " " for ch in label).split()
    return (int(digits[-1]) if digits else 0, label)


def _sonic(counters: dict, tiers: dict) -> list[str]:
    lines = []
    for dev, ports in _by_device(counters).items():
        if tiers.get(dev, 1) == 0:
            nic = ports[0][0].split("/")[0]
            lines.append(f"admin@{dev}:~$ ethtool -S {nic}")
            lines.append("NIC statistics:")
            c = ports[0][1]
            for k, stat in (
                ("tx_bytes", "tx_bytes_phy"),
                ("rx_bytes", "rx_bytes_phy"),
                ("tx_packets", "tx_packets_phy"),
                ("rx_packets", "rx_packets_phy"),
                ("pfc_tx_frames", "tx_prio3_pause"),
                ("pfc_rx_frames", "rx_prio3_pause"),
                ("pfc_tx_pause_us", "tx_prio3_pause_duration"),
                ("pfc_rx_pause_us", "rx_prio3_pause_duration"),
            ):
                if k in c:
                    lines.append(f"     {stat}: {int(round(c[k]))}")
            continue
        lines.append(f"admin@{dev}:~$ show pfc counters")
        for direction, key in (("Rx", "pfc_rx_frames"), ("Tx", "pfc_tx_frames")):
            lines.append(f"  Port {direction}    " + "    ".join(f"PFC{i}" for i in range(8)))
            lines.append("---------  " + "  ".join(["------"] * 8))
            for label, c in ports:
                row = ["0"] * 8
                row[LOSSLESS_PRIORITY] = f"{int(round(c.get(key, 0))):,}"
                lines.append(f"{label:>9}  " + "  ".join(f"{v:>6}" for v in row))
            lines.append("")
        lines.append(f"admin@{dev}:~$ show queue counters")
        lines.append("     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes")
        lines.append("---------  -----  --------------  ---------------  -----------  ------------")
        for label, c in ports:
            pk, by, dr = (int(round(c.get(k, 0))) for k in ("tx_packets", "tx_bytes", "tx_drops"))
            lines.append(f"{label:>9}    UC{LOSSLESS_PRIORITY}  {pk:>14,}  {by:>15,}  {dr:>11,}  {'N/A':>12}")
        lines.append("")
    return lines


def _perfquery(counters: dict, tiers: dict) -> list[str]:
    lines = []
    for lid, (dev, ports) in enumerate(_by_device(counters).items(), 1):
        for label, c in ports:
            port = label.split("/")[-1] if tiers.get(dev, 1) == 0 else label
            lines.append(f"# device: {dev}" + (f" {label.split('/')[0]}" if tiers.get(dev, 1) == 0 else ""))
            lines.append(f"# Port counters: Lid {lid} port {port} (CapMask: 0x5A00)")
            for k, name, scale in (
                ("symbol_errors", "SymbolErrorCounter", 1),
                ("link_downed", "LinkDownedCounter", 1),
                ("tx_drops", "PortXmitDiscards", 1),
                ("tx_bytes", "PortXmitData", 4),
                ("rx_bytes", "PortRcvData", 4),
                ("tx_packets", "PortXmitPkts", 1),
                ("rx_packets", "PortRcvPkts", 1),
                ("xmit_wait_ticks", "PortXmitWait", 1),
            ):
                v = int(round(c.get(k, 0) / scale))
                lines.append(f"{name + ':':.<33}{v}")
    return lines


def export_run(res, scenario, topo, fmt: str) -> str:
    """``aifabric simulate --counters FMT``: the run's counters as text."""
    counters, t_s = port_counters(res, scenario, topo)
    tiers = {n: int(t) for n, t in zip(topo.node_names, np.asarray(topo.node_tier), strict=True)}
    return write(fmt, counters, t_s, tiers, scenario.fabric.technology)
