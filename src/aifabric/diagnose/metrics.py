"""Counter names: what each exporter or tool calls a port counter, and the canonical name
:mod:`aifabric.diagnose` uses for it.

Canonical counters are per port and seen from the port's owner (``tx_*`` leaves this port).
Per-priority counters (Ethernet PFC) carry the priority apart, as ``Sample.prio``.

==========================  ====================================================================
canonical name              meaning (unit)
==========================  ====================================================================
tx_bytes / rx_bytes         data bytes sent / received on the port
tx_packets / rx_packets     packets sent / received
pfc_tx_frames               PFC PAUSE frames this port sent to its peer (per priority)
pfc_rx_frames               PFC PAUSE frames this port received (per priority)
pfc_rx_pause_us             time this port's transmitter was held by the peer's PAUSE (µs)
pfc_tx_pause_us             time this port asked its peer to pause (µs)
pfcwd_storms                PFC-watchdog storms detected on the port's queue (SONiC pfcwd)
ecn_marked_packets          packets ECN-marked at this switch egress (WRED / ECN)
np_ecn_marked_packets       RoCE packets that arrived ECN-marked at this NIC (notification point)
np_cnp_sent                 CNPs this NIC sent (notification point)
rp_cnp_handled              CNPs this NIC handled (reaction point: it slowed down)
tx_drops / rx_drops         packets discarded on the way out / in
rx_errors                   received packets with errors (CRC, physical)
symbol_errors               IB symbol errors / Ethernet FEC-uncorrectable class errors
link_downed                 times the link went down
link_error_recovery         times the link retrained successfully
xmit_wait_ticks             IB PortXmitWait: ticks with data to send and no credit / arbitration
out_of_sequence             RoCE out-of-sequence packets received (go-back-N / loss)
packet_seq_err              NAK sequence errors received (the sender rewound)
local_ack_timeout_err       ACK timeouts at the sender (retransmission)
queue_watermark_bytes       largest egress queue seen (gauge)
rate_gbps                   the link's current rate (gauge, Gb/s)
width_lanes                 the link's current width (gauge)
oper_up                     1 when the link is up, 0 when down (gauge)
==========================  ====================================================================
"""

from __future__ import annotations

import re

GAUGES = frozenset({"queue_watermark_bytes", "rate_gbps", "width_lanes", "oper_up"})

# node_exporter infiniband collector (/sys/class/infiniband counters, hw_counters; bytes already ×4)
NODE_INFINIBAND = {
    "node_infiniband_port_data_transmitted_bytes_total": "tx_bytes",
    "node_infiniband_port_data_received_bytes_total": "rx_bytes",
    "node_infiniband_port_packets_transmitted_total": "tx_packets",
    "node_infiniband_port_packets_received_total": "rx_packets",
    "node_infiniband_port_transmit_wait_total": "xmit_wait_ticks",
    "node_infiniband_port_discards_transmitted_total": "tx_drops",
    "node_infiniband_port_errors_received_total": "rx_errors",
    "node_infiniband_symbol_error_total": "symbol_errors",
    "node_infiniband_link_downed_total": "link_downed",
    "node_infiniband_link_error_recovery_total": "link_error_recovery",
    "node_infiniband_np_ecn_marked_roce_packets_received_total": "np_ecn_marked_packets",
    "node_infiniband_np_cnp_packets_sent_total": "np_cnp_sent",
    "node_infiniband_rp_cnp_handled_total": "rp_cnp_handled",
    "node_infiniband_out_of_sequence_packets_received_total": "out_of_sequence",
    "node_infiniband_packet_sequence_errors_total": "packet_seq_err",
    "node_infiniband_local_ack_timeout_errors_total": "local_ack_timeout_err",
}
NODE_INFINIBAND_RATE = "node_infiniband_rate_bytes_per_second"  # gauge, bytes/s → rate_gbps
NODE_INFINIBAND_STATE = "node_infiniband_physical_state_id"  # 5 = LinkUp → oper_up

# guilbaults/infiniband-exporter (ibqueryerrors): names are the counter in lower case + _total;
# PortXmitData / PortRcvData count 4-byte words
IB_EXPORTER = {
    "infiniband_portxmitdata_total": ("tx_bytes", 4.0),
    "infiniband_portrcvdata_total": ("rx_bytes", 4.0),
    "infiniband_portxmitpkts_total": ("tx_packets", 1.0),
    "infiniband_portrcvpkts_total": ("rx_packets", 1.0),
    "infiniband_portxmitwait_total": ("xmit_wait_ticks", 1.0),
    "infiniband_portxmitdiscards_total": ("tx_drops", 1.0),
    "infiniband_portrcverrors_total": ("rx_errors", 1.0),
    "infiniband_symbolerrorcounter_total": ("symbol_errors", 1.0),
    "infiniband_linkdownedcounter_total": ("link_downed", 1.0),
    "infiniband_linkerrorrecoverycounter_total": ("link_error_recovery", 1.0),
}

# perfquery / ibqueryerrors field names (PortXmitData in 4-byte words)
PERFQUERY = {
    "PortXmitData": ("tx_bytes", 4.0),
    "PortRcvData": ("rx_bytes", 4.0),
    "PortXmitPkts": ("tx_packets", 1.0),
    "PortRcvPkts": ("rx_packets", 1.0),
    "PortXmitWait": ("xmit_wait_ticks", 1.0),
    "PortXmitDiscards": ("tx_drops", 1.0),
    "PortRcvErrors": ("rx_errors", 1.0),
    "SymbolErrorCounter": ("symbol_errors", 1.0),
    "LinkDownedCounter": ("link_downed", 1.0),
    "LinkErrorRecoveryCounter": ("link_error_recovery", 1.0),
    "XmitWait": ("xmit_wait_ticks", 1.0),  # ibqueryerrors' short names
    "XmtDiscards": ("tx_drops", 1.0),
    "RcvErrors": ("rx_errors", 1.0),
    "SymbolErrors": ("symbol_errors", 1.0),
    "LinkDowned": ("link_downed", 1.0),
    "LinkRecovers": ("link_error_recovery", 1.0),
}

# rdma-core / mlx5 hw_counters and port counters file names (rdma_exporter's `counter` label,
# /sys/class/infiniband/<dev>/ports/<p>/{counters,hw_counters}/<name>)
SYSFS = {
    "port_xmit_data": ("tx_bytes", 4.0),
    "port_rcv_data": ("rx_bytes", 4.0),
    "port_xmit_packets": ("tx_packets", 1.0),
    "port_rcv_packets": ("rx_packets", 1.0),
    "port_xmit_wait": ("xmit_wait_ticks", 1.0),
    "port_xmit_discards": ("tx_drops", 1.0),
    "port_rcv_errors": ("rx_errors", 1.0),
    "symbol_error": ("symbol_errors", 1.0),
    "link_downed": ("link_downed", 1.0),
    "link_error_recovery": ("link_error_recovery", 1.0),
    "np_ecn_marked_roce_packets": ("np_ecn_marked_packets", 1.0),
    "np_cnp_sent": ("np_cnp_sent", 1.0),
    "rp_cnp_handled": ("rp_cnp_handled", 1.0),
    "out_of_sequence": ("out_of_sequence", 1.0),
    "packet_seq_err": ("packet_seq_err", 1.0),
    "local_ack_timeout_err": ("local_ack_timeout_err", 1.0),
}

# mlx5 `ethtool -S` names (NVIDIA "Understanding mlx5 ethtool counters"); also node_exporter's
# ethtool collector as node_ethtool_<name>. Per priority: rx_prio<p>_pause etc.
ETHTOOL = {
    "tx_bytes_phy": ("tx_bytes", 1.0),
    "rx_bytes_phy": ("rx_bytes", 1.0),
    "tx_packets_phy": ("tx_packets", 1.0),
    "rx_packets_phy": ("rx_packets", 1.0),
    "tx_discards_phy": ("tx_drops", 1.0),
    "rx_discards_phy": ("rx_drops", 1.0),
    "rx_crc_errors_phy": ("rx_errors", 1.0),
    "rx_out_of_buffer": ("rx_drops", 1.0),
    "link_down_events_phy": ("link_downed", 1.0),
}
ETHTOOL_PRIO = re.compile(r"^(rx|tx)_prio(\d)_pause(_duration)?$")

# SONiC COUNTERS_DB (SAI stat names); per-priority PFC as SAI_PORT_STAT_PFC_<p>_...
SAI_PORT = {
    "SAI_PORT_STAT_IF_OUT_OCTETS": "tx_bytes",
    "SAI_PORT_STAT_IF_IN_OCTETS": "rx_bytes",
    "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": "tx_packets",
    "SAI_PORT_STAT_IF_IN_UCAST_PKTS": "rx_packets",
    "SAI_PORT_STAT_IF_OUT_DISCARDS": "tx_drops",
    "SAI_PORT_STAT_IF_IN_DISCARDS": "rx_drops",
    "SAI_PORT_STAT_IF_IN_ERRORS": "rx_errors",
}
SAI_PFC = re.compile(r"^SAI_PORT_STAT_PFC_(\d)_(RX|TX)_(PKTS|PAUSE_DURATION_US|PAUSE_DURATION)$")


def ethtool_counter(name: str) -> tuple[str, float, int | None] | None:
    """An ``ethtool -S`` statistic → (canonical, scale, priority) or None when not one we use."""
    m = ETHTOOL_PRIO.match(name)
    if m:
        direction, prio, dur = m.groups()
        if dur:
            return f"pfc_{direction}_pause_us", 1.0, int(prio)
        return f"pfc_{direction}_frames", 1.0, int(prio)
    if name in ETHTOOL:
        c, s = ETHTOOL[name]
        return c, s, None
    return None


def sai_counter(name: str) -> tuple[str, float, int | None] | None:
    """A SONiC COUNTERS_DB SAI stat → (canonical, scale, priority) or None."""
    m = SAI_PFC.match(name)
    if m:
        prio, direction, what = m.groups()
        d = direction.lower()
        if what == "PKTS":
            return f"pfc_{d}_frames", 1.0, int(prio)
        return f"pfc_{d}_pause_us", 1.0, int(prio)
    if name in SAI_PORT:
        return SAI_PORT[name], 1.0, None
    return None
