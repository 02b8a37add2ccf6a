"""The data plane: one numba-compiled event loop over struct-of-arrays state.

Everything the loop touches lives in integer-indexed numpy tables built by
:mod:`aifabric.sim.compile`; the loop keeps no state of its own, so it can return to Python
(to grow a table, report progress, apply a control event) and resume where it stopped.

Tables (column names are the module constants below):

* ``g``   int64 scalars: clock, event counter, heap size, free packet list, totals.
* ``cfg`` int64 / ``cf`` float64 configuration (MTU, header, PFC thresholds, ECN, DCQCN ...).
* heap  ``h`` rows of (time ps, insertion sequence, payload = arg * 16 + kind):
  an array-backed binary min-heap ordered by (time, sequence) — ties break by insertion order,
  so runs are deterministic.
* ``pk``  packets (row per packet slot; a free list threads unused rows through ``PK_NEXT``).
* ``pt``  directed ports: row ``2*link + dir`` is the egress of ``link_a`` (dir 0) or
  ``link_b`` (dir 1); it holds the egress FIFOs (control and data), PFC / credit state of the
  ingress that packets *arriving through* this port are charged to (with that ingress's PFC
  thresholds: ``fabric.pfc_overrides`` give some switches other ones), the injected-pause state
  of ``fabric.pause_storms`` (``EV_XPAUSE`` events scheduled at compile time, kept apart from the
  real PFC state) and the statistics.
* ``fl`` / ``fr`` flows (int64 / float64 columns: progress, rate limiter, DCQCN state).
* HPCC widens ``pk`` by an INT stack (:data:`INT_W` columns per hop from ``PK_INT0``) and ``fl`` by
  the last INT sample per hop (:data:`HP_W` columns per hop from ``FL_HP0``); see :func:`hpcc_on_ack`.
* ``ue``: with ``fabric.transport: uet``, one row per packet of every flow (state bits, last send
  time); UET also widens ``pk``, ``fl`` and ``fr`` (``PK_UE_*``, ``FL_UE_*``, ``FR_UE_*``). Its
  rules — spraying, selective retransmission, trimming, NSCC — are :mod:`aifabric.sim.uet`.
* ``fpath`` / ``apath``: per flow the directed ports of the data path and of the ACK path
  (precomputed ECMP / static routes); adaptive routing picks ports at run time from the
  next-hop CSR ``nh_off`` / ``nh_links``.

Model (see the README, "Packet-level simulation"): store-and-forward, full-duplex links; a packet occupies its egress
for (payload + header) × 8 / rate and arrives ``delay`` later; switches are output-queued with a
shared buffer; data packets are charged to their ingress port until they leave the switch (start of
transmission on the egress). Control packets (ACK, CNP) use a strict-priority queue that PFC and
credits do not block.

The same code runs as plain Python under ``NUMBA_DISABLE_JIT=1``; it uses no integer arithmetic
that could overflow 64 bits, so both modes give identical results.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ---- event kinds (payload = arg * 16 + kind) --------------------------------------------------
EV_FLOW_START = 0
EV_TX_DONE = 1
EV_ARRIVE = 2
EV_PFC = 3  # arg = port * 2 + on
EV_WAKE = 4  # a host NIC port retries after its rate limiters
EV_CREDIT = 5  # arg = credits * num_ports + port
EV_DCQCN_INC = 6  # arg = flow: rate-increase timer
EV_RTO = 7  # arg = flow: retransmission timeout check (lossy mode)
EV_LINK_DOWN = 8  # arg = link: the link fails (both directions)
EV_XPAUSE = 9  # arg = port * 2 + on: an injected (spurious) PAUSE starts / ends (fabric.pause_storms)
EV_VOQ = 10  # arg = packet: scheduled fabric — the egress port's grant releases it from its ingress VOQ
EV_UE_PULL = 11  # arg = receiver host index: UET RCCC — its pull pacer grants the next credit

# ---- status codes returned by run() ------------------------------------------------------------
ST_DONE = 0  # every flow completed, or nothing left to do
ST_UNTIL = 1  # reached the time limit
ST_GROW_PKT = 2  # packet table full: Python grows it and resumes
ST_GROW_HEAP = 3
ST_GROW_LOG = 4
ST_QUOTA = 5  # processed the event quota (progress report); resume
ST_STALL = 6  # nothing moved for deadlock_timeout with packets queued
ST_CONTROL = 7  # a link failed: Python recomputes routes and resumes

# ---- g: global scalars --------------------------------------------------------------------------
G_NOW = 0
G_SEQ = 1
G_HEAPN = 2
G_FREE = 3  # head of the free packet list
G_PKT_LIVE = 4
G_EVENTS = 5
G_RNG = 6
G_FLOWS_DONE = 7
G_DATA_PKTS = 8
G_INJ_BYTES = 9  # payload bytes sent by senders
G_DELIV_BYTES = 10  # payload bytes received by receivers
G_DROP_BYTES = 11
G_DROPS = 12
G_PAUSES = 13
G_RESUMES = 14
G_ECN = 15
G_CNPS = 16
G_LOGN = 17  # PFC log entries
G_LAST_MOVE = 18  # time a data packet last started transmission
G_QUEUED = 19  # data packets queued in switches
G_ACKS = 20
G_DISCARD_BYTES = 21  # payload discarded by receivers (out of order / duplicate, go-back-N)
G_RETX = 22  # go-back-N rewinds (NACK or timeout)
G_NACKS = 23
G_BUF_DROPS = 24  # data packets dropped on a full shared buffer (with PFC on: a lossless violation)
G_XPAUSES = 25  # injected pause intervals applied (one per port and pause)
G_XACTIVE = 26  # ports under an injected pause now (the stall detector waits while any is)
# Ultra Ethernet transport (aifabric.sim.uet); G_RETX counts its retransmitted packets
G_UE_TRIMS = 27  # data packets trimmed to a header by a full switch queue
G_UE_TRIM_BYTES = 28  # payload those packets lost to trimming (sent again)
G_UE_TIMEOUTS = 29  # packets the sender declared lost on its retransmission timeout
G_UE_RTX_BYTES = 30  # payload bytes sent again (counted in G_INJ_BYTES as well)
G_UE_OOS_BYTES = 31  # UET ordered delivery: payload the receiver discarded out of sequence
G_UE_PULLS = 32  # UET RCCC: pull (credit) packets the receivers sent
# link frame errors (fabric.link_errors): frames lost to a corrupted FCS, and link-level retry
G_FER_DROPS = 33  # data frames a receiving port discarded as corrupted (recovered end to end)
G_FER_BYTES = 34  # their payload bytes
G_LLR_REPLAYS = 35  # corrupted data frames the link sender replayed (LLR: no end-to-end loss)
G_FER_RNG = 36  # Park–Miller state of the frame-error draws (its own stream: other draws unchanged)
G_NUM = 37

# ---- cfg: int64 configuration -------------------------------------------------------------------
C_MTU = 0
C_HDR = 1
C_ACK_BYTES = 2
C_ACK_EVERY = 3
C_PFC = 4  # 1 when PFC is on
C_PFC_DYN = 5  # fabric-wide PFC mode and thresholds; the kernel reads the per-port copies PT_PFC_DYN ...
C_XOFF = 6
C_XON = 7
C_RESUME_OFFSET = 8
C_ECN = 9
C_KMIN = 10
C_KMAX = 11
C_CC = 12  # 0 none, 1 dcqcn, 2 hpcc
C_ROUTING = 13  # 0 precomputed path (ecmp/static), 1 adaptive per packet, 2 flowlet, 3 spray, 4 scheduled
C_IB = 14
C_CREDIT_BYTES = 15
C_VL_CREDITS = 16
C_SW_LAT = 17
C_BUFFER = 18
C_NHOSTS = 19
C_FLOWLET_GAP = 20
C_NPORTS = 21
C_DEADLOCK_PS = 22
C_CNP_INTERVAL = 23
C_DC_T_ALPHA = 24
C_DC_T_DEC = 25
C_DC_T_INC = 26
C_DC_BYTES = 27
C_DC_F = 28
C_MAXHOP = 29
C_DC_CLAMP = (
    30  # 1: every cut sets target = rate (paper); 0: only after an increase (ns-3 CLAMP_TARGET_RATE 0)
)
C_DC_TIMER_ONLY = 31  # 1: stages counted by the timer alone (ns-3 Mellanox model, no byte counter)
C_LOSSY = 32  # 1: no PFC/credits; drops on a full buffer, go-back-N recovery
C_NACK_GAP = 33  # at most one NACK / rewind per expected byte within this time
C_RTO = 34  # retransmission timeout without ACK progress
C_INT_MAX = 35  # HPCC: INT records a packet can carry (pk columns PK_INT0 + 4 * hop)
C_HP_T = 36  # HPCC: base RTT T (ps) — the largest flow's base RTT (ns-3 GLOBAL_T 1)
C_HP_MAX_STAGE = 37  # HPCC: maxStage (MI_THRESH)
C_ROUTE_SALT = 38  # adaptive per packet: seed-derived salt of the per-flow round-robin phase
C_PFC_RESERVE = 40  # dynamic PFC: per-ingress bytes not charged to the shared pool (ns-3 reserve)
C_INT_BYTES = 41  # HPCC: INT stack bytes every data packet and ACK carries (ns-3: 42 B)
# Ultra Ethernet transport (aifabric.sim.uet, parameters from aifabric.sim.uet_setup)
C_UET = 44  # 1: the UET transport (RUD, spraying over entropy values, trimming, NSCC)
C_UE_TRIM = 45  # 1: a full switch queue trims a data packet to a header; 0: drops it
C_UE_QLIM = 46  # bytes an egress data queue holds before a packet is trimmed or dropped
C_UE_EVS = 47  # entropy values a sender sprays over
C_UE_TRIM_BYTES = 48  # size of a trimmed packet on the wire
C_UE_RTO = 49  # retransmission timeout of a packet (ps)
C_UE_NSCC = 50  # 1: NSCC window; 0: no congestion control (window unlimited)
C_UE_BASE_RTT = 51  # NSCC config_base_rtt (ps)
C_UE_TQD = 52  # NSCC target_qdelay (ps)
C_UE_ADJ_T = 53  # NSCC adjust_period_threshold (ps)
C_UE_ADJ_BYTES = 54  # NSCC adjust_bytes_threshold
C_UE_QA = 55  # 1: quick_adapt on
C_UE_QA_GATE = 56  # NSCC qa_gate (quick_adapt only when achieved < max_wnd >> qa_gate)
C_UE_QA_THRESH = 57  # NSCC qa_threshold (ps)
C_UE_FI_DELAY = 58  # NSCC fast_increase: a delay below this counts as "~0" (ps)
C_UE_LB = 59  # load balancer (aifabric.sim.uet_lb LB_*): how a sender picks entropy values
C_UE_ROD = 60  # 1: reliable ordered delivery (go-back at the sender); 0: unordered (RUD)
C_UE_RCCC = 61  # 1: RCCC, receiver credits (aifabric.sim.uet_rccc): a sender needs credit to send
C_UE_PULL_BYTES = 62  # RCCC: credit one pull grants (bytes on the wire)
C_UE_HOST0 = 63  # RCCC: first row of the per-receiver pull pacers in ``ue`` (two rows per host)
C_FER = (
    64  # data frames corrupted with probability CF_FER: 0 off, 1 on every link, 2 switch-to-switch links only
)
C_LLR = 65  # 1: link-level retry — the link sender replays a corrupted frame (no end-to-end loss)
C_LLR_DELAY = 66  # LLR: replay delay added to the link's round trip (ps)
C_NUM = 67

# ---- cf: float64 configuration ------------------------------------------------------------------
CF_PMAX = 0
CF_ALPHA = 1  # dynamic PFC: threshold = alpha × free shared buffer (fabric-wide; per port: PT_ALPHA_IDX)
CF_DC_G = 2
CF_DC_AI = 3  # bit/s
CF_DC_HAI = 4
CF_DC_MIN = 5
CF_DC_ALPHA0 = 6
CF_DC_MIN_DEC = 7  # largest single cut as a fraction (0.5 = halve at most)
CF_HP_ETA = 8  # HPCC: target utilisation η
CF_HP_WAI = 9  # HPCC: additive increase W_AI (bytes)
CF_HP_WMIN = 10  # HPCC: smallest window (bytes)
CF_UE_ALPHA = 12  # NSCC proportional_increase alpha (bytes per byte·ps of delay headroom)
CF_UE_FI = 13  # NSCC fair_increase fi (bytes)
CF_UE_ETA = 14  # NSCC eta (bytes added per adjust period)
CF_UE_FI_SCALE = 15  # NSCC fast_increase fi_scale
CF_UE_GAMMA = 16  # NSCC multiplicative_decrease gamma
CF_UE_MD_JUMP = 17  # NSCC max_md_jump: the smallest factor one decrease applies
CF_UE_DELAY_A = 18  # NSCC delay EWMA gain
CF_FER = 19  # frame error rate of every link (probability a data frame arrives corrupted)
CF_NUM = 20  # fabric.pfc_overrides append their dynamic alphas after this (slots PT_ALPHA_IDX points to)

# ---- pk: packets --------------------------------------------------------------------------------
PK_FLOW = 0
PK_KIND = 1  # 0 data, 1 ack, 2 cnp
PK_SIZE = 2  # bytes on the wire
PK_PAYLOAD = 3
PK_SEQ = 4  # data: end byte offset; ack: cumulative bytes received
PK_PORT = 5  # the port it is queued on / travelling through
PK_IN = 6  # ingress port it is charged to at the current switch (-1 none)
PK_NEXT = 7
PK_ECN = 8
PK_HOP = 9  # ports traversed so far
PK_ROW = 10  # row of fpath / apath it follows (a flow's route changes after a link failure)
PK_NINT = 11  # HPCC: INT records pushed so far (an ACK keeps its data packet's stack: the echo)
PK_NUM = 12
# HPCC INT stack: with congestion_control hpcc the table has INT_W more columns per hop from PK_INT0:
# (queue bytes, cumulative tx bytes, timestamp ps, link rate bit/s, egress port id) of each switch
# egress. The port id lets the sender compare a hop's sample only with an earlier one of the same
# port: with per-packet spraying consecutive ACKs cross different switches.
PK_INT0 = 12
INT_W = 5
# UET (fabric.transport uet) widens pk instead: PK_SEQ holds the packet sequence number (PSN)
PK_UE_EV = 12  # entropy value the sender gave the packet (the switches hash it with the flow)
PK_UE_RETX = 13  # 1: a retransmission (echoed in its ACK / NACK, UEC 1.0 §3.6.13.1)
PK_UE_LAST = 14  # 1: trimmed at the last hop (the switch port to the receiver)
PK_UE_PT = 15  # RCCC: the sender's pull target (cumulative credit it asks for), carried by data
PK_UE_W = 4
KIND_DATA = 0
KIND_ACK = 1
KIND_CNP = 2
KIND_NACK = 3
KIND_TRIM = 4  # UET: a data packet trimmed to its header by a switch (high priority, like control)
KIND_PULL = 5  # UET RCCC: a receiver's credit grant (PK_PAYLOAD: the cumulative bytes granted)

# ---- pt: directed ports -------------------------------------------------------------------------
PT_NODE = 0  # sending node
PT_PEER = 1  # receiving node
PT_RATE = 2  # bit/s
PT_DELAY = 3  # ps
PT_PEER_IS_SW = 4
PT_NODE_IS_HOST = 5
PT_BUSY = 6  # a TX_DONE event is pending for this port
PT_PAUSED = 7  # this egress has been paused by its peer
PT_CH = 8  # control FIFO head / tail
PT_CT = 9
PT_DH = 10  # data FIFO head / tail
PT_DT = 11
PT_QBYTES = 12  # data bytes queued at this egress
PT_MAXQ = 13
PT_INBYTES = 14  # bytes that arrived through this port and still sit in the peer switch
PT_PAUSE_SENT = 15  # the peer has this port paused (it sent PAUSE and no RESUME yet)
PT_PAUSE_GEN = 16  # PAUSE frames the peer sent about this port
PT_PAUSE_RX = 17  # PAUSE frames this egress received
PT_PAUSE_T0 = 18
PT_PAUSED_PS = 19
PT_ECN = 20
PT_DROPS = 21
PT_CREDITS = 22
PT_STALL_T0 = 23  # -1 when not stalled on credits
PT_STALL_PS = 24
PT_FH = 25  # host NIC: active-flow round-robin list head / tail
PT_FT = 26
PT_WAKE_T = 27  # pending wake-up time (-1 none)
PT_TX_BYTES = 28
PT_TX_PKTS = 29
PT_RESUME_RX = 30
PT_MAXIN = 31  # largest ingress occupancy seen
PT_BUSY_UNTIL = 32  # end of the current transmission
PT_QINT = 33  # ∫ queued data bytes dt (byte·ps), for the time-averaged queue
PT_QLAST = 34  # time of the last queue change
PT_DOWN = 35  # the link has failed
# PFC thresholds of the ingress this port feeds (evaluated by the receiving switch, PT_PEER): the
# fabric's values, or those of a fabric.pfc_overrides entry naming that switch
PT_XOFF = 36  # static: PAUSE above
PT_XON = 37  # static: RESUME below; dynamic: the RESUME floor (SONiC xon)
PT_PFC_DYN = 38  # 1: dynamic threshold cf[PT_ALPHA_IDX] × free shared buffer
PT_ALPHA_IDX = 39  # cf slot of this ingress's alpha (CF_ALPHA, or one appended for an override)
# injected PAUSE (fabric.pause_storms): separate from the real PFC state above, so a real RESUME
# does not lift an injected pause nor the reverse; a counter, as pauses of two storms may overlap
PT_XPAUSED = 40  # injected pauses in force on this egress
PT_XPAUSE_T0 = 41
PT_XPAUSED_PS = 42  # time spent under injected pause
PT_XPAUSE_RX = 43  # injected pause intervals applied to this egress
# scheduled fabric (routing 4): on a switch port toward a host (an egress port of the fabric), the
# time its credit scheduler's next grant is free — grants are paced at the port's rate
PT_GRANT_T = 44
PT_NUM = 45

# ---- fl: flows (int64) --------------------------------------------------------------------------
FL_SRC = 0
FL_DST = 1
FL_SIZE = 2
FL_START = 3
FL_PORT = 4  # first egress port (the sender NIC port)
FL_SENT = 5
FL_RCVD = 6
FL_ACKED = 7
FL_DONE_T = 8  # last byte acknowledged at the sender (-1 not yet)
FL_RX_T = 9  # last byte received at the receiver
FL_NEXT = 10  # round-robin list link
FL_NEXT_SEND = 11  # rate limiter: earliest time of the next packet
FL_LAST_CNP = 12  # notification point: time the last CNP was sent
FL_RX_PKTS = 13
FL_ACTIVE = 14  # on its port's round-robin list
FL_CNP_RX = 15
FL_ALPHA_T = 16  # DCQCN: time of the last alpha tick processed
FL_CNP_FLAG = 17  # a CNP arrived since the last alpha tick
FL_DEC_T = 18  # earliest time of the next rate decrease
FL_INC_STAGE = 19  # timer increase events since the last decrease
FL_BYTE_STAGE = 20  # byte-counter events since the last decrease
FL_BYTES_CNT = 21  # bytes sent since the last byte-counter event
FL_INC_PENDING = 22  # a rate-increase timer is scheduled
FL_INC_GEN = 23  # generation of the timer (stale timers are ignored)
FL_NACK_T = 24  # receiver: when it last sent a NACK
FL_NACK_SEQ = 25
FL_REWIND_T = 26  # sender: last go-back-N rewind
FL_REWIND_SEQ = 27
FL_RTO_PENDING = 28
FL_PROGRESS_T = 29  # sender: last time ACKED advanced
FL_RETX = 30  # rewinds of this flow
FL_ROW = 31  # current fpath row (new data packets) and apath row (new ACKs)
FL_AROW = 32
FL_HP_SEQ = 33  # HPCC: lastUpdateSeq (0: no INT stored yet)
FL_HP_STAGE = 34  # HPCC: incStage
FL_HP_NHOP = 35  # HPCC: hops in the stored INT samples
FL_NUM = 36
# HPCC: the previous INT sample per hop, HP_W columns per hop from FL_HP0 (qlen, tx bytes, ts, port)
FL_HP0 = 36
HP_W = 4
# UET (fabric.transport uet) widens fl by FL_UE_W columns from FL_UE0 (HPCC and UET exclude each other)
FL_UE0 = 36
FL_UE_OFF = 36  # first row of this flow's packets in the per-packet table ``ue``
FL_UE_NPK = 37  # packets of the flow (PSNs 0 .. NPK-1)
FL_UE_NEXT = 38  # next new PSN
FL_UE_INFL = 39  # bytes in flight (sent, not yet ACKed, NACKed or timed out)
FL_UE_RTXN = 40  # packets marked for retransmission
FL_UE_RTXP = 41  # no packet below this PSN is marked for retransmission
FL_UE_CACK = 42  # lowest PSN not yet ACKed
FL_UE_EV = 43  # entropy value of the next packet
FL_UE_QA_END = 44  # NSCC qa_endtime
FL_UE_TRIG_QA = 45  # NSCC trigger_qa
FL_UE_LAST_DEC = 46  # NSCC last_dec_time
FL_UE_LAST_ADJ = 47  # NSCC last_adjust_time
FL_UE_INCREASE = 48  # NSCC increase (fast_increase mode)
FL_UE_BASE_RTT = 49  # NSCC ccc.base_rtt (ps)
FL_UE_XOR = 50  # load balancer: this round's order of the entropy values
FL_UE_ROUND = 51  # load balancer: rounds (and random draws) so far
FL_UE_RQH = 52  # load balancer: head and size of the ring of recycled entropy values
FL_UE_RQN = 53
FL_UE_REXP = 54  # ordered delivery: the next PSN the receiver accepts
FL_UE_CREDIT = 55  # RCCC sender: credit (bytes it may still send; may go below 0 by one packet)
FL_UE_SPEC = 56  # RCCC sender: 1 while sending on its speculative first window
FL_UE_PULLED = 57  # RCCC sender: cumulative credit granted so far
FL_UE_HPT = 58  # RCCC receiver: highest pull target heard
FL_UE_LPULL = 59  # RCCC receiver: cumulative credit granted
FL_UE_OWED = 60  # RCCC receiver: credit owed for trimmed packets (their retransmissions)
FL_UE_INPULL = 61  # RCCC receiver: 1 while on its pull pacer's list
FL_UE_PNEXT = 62  # RCCC receiver: next flow on the pull pacer's list
FL_UE_W = 27
# from FL_UE_LB0 the load balancer's per-entropy-value state (aifabric.sim.uet_lb)
FL_UE_LB0 = 63

FR_RATE = 0
FR_TARGET = 1
FR_ALPHA = 2
FR_LINE = 3
FR_W = 4  # HPCC: window W (bytes); the pacing rate FR_RATE is W / T
FR_WC = 5  # HPCC: reference window W_c
FR_U = 6  # HPCC: EWMA of the normalised inflight U
FR_NUM = 7
# UET widens fr by FR_UE_W columns from FR_UE0: NSCC state (UEC 1.0 §3.6.13.4, Table 3-77)
FR_UE0 = 7
FR_UE_CWND = 7
FR_UE_MAXWND = 8
FR_UE_AVG_DELAY = 9
FR_UE_INC = 10  # inc_bytes
FR_UE_RECV = 11  # received_bytes
FR_UE_ACHIEVED = 12  # achieved_bytes
FR_UE_IGNORE = 13  # bytes_to_ignore
FR_UE_IGNORED = 14  # bytes_ignored
FR_UE_FI_COUNT = 15  # fi_count
FR_UE_W = 9

# ---- ue: UET per-packet state, one row per packet of every flow (flow f from fl[f, FL_UE_OFF]):
# column 0 the state bits below, column 1 the time it was last sent (ps)
UE_SENT = 1
UE_ACKED = 2
UE_RTX = 4  # marked for retransmission
UE_RCVD = 8  # the receiver holds it (each payload byte is delivered once)
UE_INFL = 16  # counted in FL_UE_INFL
UE_RETX1 = 32  # retransmitted at least once
UE_RETX2 = 64  # retransmitted more than once

PS_PER_S = 1_000_000_000_000
PARK_MILLER_M = 2147483647
# adaptive per packet: egress occupancy is compared in buckets of this many full packets (like the
# few queue-depth grades of a hardware AR engine), so a packet or two in service is not a reason
# to break the round robin
AR_BUCKET_PKTS = 4


# =================================================================================================
# heap
@njit(cache=True, inline="always")
def heap_push(h, g, t, kind, arg):
    """Insert an event; ``h`` rows are (time, sequence, payload) so a node is one cache line."""
    n = g[G_HEAPN]
    seq = g[G_SEQ]
    g[G_SEQ] = seq + 1
    v = arg * 16 + kind
    i = n
    while i > 0:
        p = (i - 1) >> 1
        tp = h[p, 0]
        if tp < t or (tp == t and h[p, 1] < seq):
            break
        h[i, 0] = tp
        h[i, 1] = h[p, 1]
        h[i, 2] = h[p, 2]
        i = p
    h[i, 0] = t
    h[i, 1] = seq
    h[i, 2] = v
    g[G_HEAPN] = n + 1


@njit(cache=True, inline="always")
def heap_pop(h, g):
    """Remove the root; the caller read it first."""
    n = g[G_HEAPN] - 1
    g[G_HEAPN] = n
    if n == 0:
        return
    t = h[n, 0]
    s = h[n, 1]
    v = h[n, 2]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (h[c + 1, 0] < h[c, 0] or (h[c + 1, 0] == h[c, 0] and h[c + 1, 1] < h[c, 1])):
            c += 1
        if t < h[c, 0] or (t == h[c, 0] and s < h[c, 1]):
            break
        h[i, 0] = h[c, 0]
        h[i, 1] = h[c, 1]
        h[i, 2] = h[c, 2]
        i = c
    h[i, 0] = t
    h[i, 1] = s
    h[i, 2] = v


# =================================================================================================
# small helpers
@njit(cache=True, inline="always")
def ser_ps(nbytes, rate_bps):
    return (nbytes * 8 * PS_PER_S) // rate_bps


@njit(cache=True, inline="always")
def rand01(g):
    x = (g[G_RNG] * 48271) % PARK_MILLER_M
    g[G_RNG] = x
    return x / PARK_MILLER_M


@njit(cache=True, inline="always")
def pkt_alloc(pk, g):
    i = g[G_FREE]
    g[G_FREE] = pk[i, PK_NEXT]
    pk[i, PK_NEXT] = -1
    pk[i, PK_IN] = -1
    pk[i, PK_ECN] = 0
    pk[i, PK_HOP] = 0
    pk[i, PK_NINT] = 0
    g[G_PKT_LIVE] += 1
    return i


@njit(cache=True, inline="always")
def pkt_free(pk, g, i):
    pk[i, PK_NEXT] = g[G_FREE]
    pk[i, PK_KIND] = -1
    g[G_FREE] = i
    g[G_PKT_LIVE] -= 1


@njit(cache=True, inline="always")
def fifo_push(pt, pk, p, head, tail, i):
    pk[i, PK_NEXT] = -1
    if pt[p, tail] < 0:
        pt[p, head] = i
    else:
        pk[pt[p, tail], PK_NEXT] = i
    pt[p, tail] = i


@njit(cache=True, inline="always")
def fifo_pop(pt, pk, p, head, tail):
    i = pt[p, head]
    nxt = pk[i, PK_NEXT]
    pt[p, head] = nxt
    if nxt < 0:
        pt[p, tail] = -1
    pk[i, PK_NEXT] = -1
    return i


@njit(cache=True, inline="always")
def pfc_threshold(pt, cfg, cf, swused, p, node):
    """PAUSE threshold of ingress ``p`` at switch ``node`` (per port: fabric.pfc or an override)."""
    if pt[p, PT_PFC_DYN] == 1:
        free = cfg[C_BUFFER] - swused[node]
        if free < 0:
            free = 0
        return np.int64(cf[pt[p, PT_ALPHA_IDX]] * free)
    return pt[p, PT_XOFF]


@njit(cache=True, inline="always")
def should_pause(pt, cfg, cf, swused, p, node):
    """PAUSE ingress ``p`` now (the arriving packet already charged; aifabric.pfc has the sources):
    static — held bytes ``>`` xoff (htsim queue_lossless_input.cpp l. 70); dynamic — held bytes
    minus the reserve ``>=`` alpha × free buffer (ns-3 HPCC switch-mmu.cc l. 77)."""
    if pt[p, PT_PFC_DYN] == 1:
        shared = pt[p, PT_INBYTES] - cfg[C_PFC_RESERVE]
        if shared < 0:
            shared = 0
        return shared >= pfc_threshold(pt, cfg, cf, swused, p, node)
    return pt[p, PT_INBYTES] > pt[p, PT_XOFF]


@njit(cache=True, inline="always")
def should_resume(pt, cfg, cf, swused, p, node):
    """RESUME ingress ``p`` now (the leaving packet already released): static — held bytes ``<``
    xon (htsim l. 100); dynamic — shared use 0 or ``<=`` max(xon, trigger − resume offset)
    (ns-3 switch-mmu.cc l. 83; SONiC/SAI's max(xon, limit − xon_offset), formats.md §1.5)."""
    if pt[p, PT_PFC_DYN] == 1:
        shared = pt[p, PT_INBYTES] - cfg[C_PFC_RESERVE]
        if shared <= 0:
            return True
        lim = pfc_threshold(pt, cfg, cf, swused, p, node) - cfg[C_RESUME_OFFSET]
        if pt[p, PT_XON] > lim:
            lim = pt[p, PT_XON]
        return shared <= lim
    return pt[p, PT_INBYTES] < pt[p, PT_XON]


@njit(cache=True, inline="always")
def egress_paused(pt, p):
    """Egress ``p`` may not send data: a real PFC PAUSE or an injected one is in force."""
    return pt[p, PT_PAUSED] == 1 or pt[p, PT_XPAUSED] > 0


@njit(cache=True, inline="always")
def send_pfc(pt, h, g, p, on, log):
    """The switch at the far end of ``p`` sends PAUSE (on=1) / RESUME (0) for ingress ``p``; the
    64-byte frame is serialised on the reverse port and arrives after the link delay."""
    rev = p ^ 1
    t = g[G_NOW] + ser_ps(64, pt[rev, PT_RATE]) + pt[p, PT_DELAY]
    heap_push(h, g, t, EV_PFC, p * 2 + on)
    if on == 1:
        pt[p, PT_PAUSE_SENT] = 1
        pt[p, PT_PAUSE_GEN] += 1
        g[G_PAUSES] += 1
    else:
        pt[p, PT_PAUSE_SENT] = 0
        g[G_RESUMES] += 1


# =================================================================================================
# DCQCN reaction point (the sender NIC)
@njit(cache=True)
def dcqcn_alpha_ticks(fl, fr, cfg, cf, f, now):
    """Apply the periodic alpha update (every t_alpha: alpha ← (1-g)·alpha + g·[CNP seen]) for the
    ticks elapsed since the last one — the same numbers as a real timer, computed lazily."""
    ta = cfg[C_DC_T_ALPHA]
    n = (now - fl[f, FL_ALPHA_T]) // ta
    if n <= 0:
        return
    gain = cf[CF_DC_G]
    a = fr[f, FR_ALPHA]
    a = (1.0 - gain) * a + gain * fl[f, FL_CNP_FLAG]
    fl[f, FL_CNP_FLAG] = 0
    k = n - 1
    while k > 0 and a > 1e-12:
        a *= 1.0 - gain
        k -= 1
    fr[f, FR_ALPHA] = a
    fl[f, FL_ALPHA_T] += n * ta


@njit(cache=True)
def dcqcn_set_rate(pt, fl, fr, h, g, f, r, wake):
    """Set flow ``f``'s DCQCN rate to ``r`` and apply it to the packet the rate limiter holds back
    now, as a hardware limiter (a token bucket refilled at the current rate) does: the wait still
    ahead, ``FL_NEXT_SEND - now``, is rescaled by old / new rate. Without this a flow cut to a
    rate near ``min_rate`` keeps the gap of one packet at that rate (4160 B at 1 Mb/s = 33 ms)
    however fast it recovers. With ``wake`` a next send moved earlier re-arms the port's wake-up."""
    now = g[G_NOW]
    old = fr[f, FR_RATE]
    fr[f, FR_RATE] = r
    ns = fl[f, FL_NEXT_SEND]
    if ns <= now or r == old:
        return
    ns = now + np.int64((ns - now) * (old / r))
    fl[f, FL_NEXT_SEND] = ns
    if wake and r > old and fl[f, FL_ACTIVE] == 1:
        p = fl[f, FL_PORT]
        if pt[p, PT_WAKE_T] < 0 or ns < pt[p, PT_WAKE_T] or pt[p, PT_WAKE_T] < now:
            pt[p, PT_WAKE_T] = ns
            heap_push(h, g, ns, EV_WAKE, p)


@njit(cache=True)
def dcqcn_on_cnp(pt, fl, fr, cfg, cf, h, g, f):
    """A CNP reaches flow ``f``'s sender. The first one starts the alpha timer with alpha0 (ConnectX
    INITIAL_ALPHA_VALUE "used when receiving the first CNP for a flow"; ns-3 cnp_received_mlx sets
    alpha = 1 and schedules the first update then). A cut happens at most once per t_dec
    (RATE_REDUCE_MONITOR_PERIOD): target ← rate when clamping (always with clamp_target 1; else
    only if the rate was increased since the last cut), rate ← rate·(1 − min(alpha/2, min_dec_fac))."""
    now = g[G_NOW]
    if fl[f, FL_CNP_RX] == 0:
        fr[f, FR_ALPHA] = cf[CF_DC_ALPHA0]
        fl[f, FL_ALPHA_T] = now
        fl[f, FL_CNP_FLAG] = 0
    dcqcn_alpha_ticks(fl, fr, cfg, cf, f, now)
    fl[f, FL_CNP_FLAG] = 1
    fl[f, FL_CNP_RX] += 1
    if now < fl[f, FL_DEC_T]:
        return
    fl[f, FL_DEC_T] = now + cfg[C_DC_T_DEC]
    r = fr[f, FR_RATE]
    if cfg[C_DC_CLAMP] == 1 or fl[f, FL_INC_STAGE] + fl[f, FL_BYTE_STAGE] > 0:
        fr[f, FR_TARGET] = r
    cut = fr[f, FR_ALPHA] / 2.0
    if cut > cf[CF_DC_MIN_DEC]:
        cut = cf[CF_DC_MIN_DEC]
    r = r * (1.0 - cut)
    if r < cf[CF_DC_MIN]:
        r = cf[CF_DC_MIN]
    dcqcn_set_rate(pt, fl, fr, h, g, f, r, False)
    fl[f, FL_INC_STAGE] = 0
    fl[f, FL_BYTE_STAGE] = 0
    fl[f, FL_BYTES_CNT] = 0
    # (re)start the increase timer from this decrease
    fl[f, FL_INC_GEN] += 1
    heap_push(h, g, now + cfg[C_DC_T_INC], EV_DCQCN_INC, f * 1024 + (fl[f, FL_INC_GEN] % 1024))


@njit(cache=True)
def dcqcn_increase(pt, fl, fr, cfg, cf, h, g, f, wake):
    """One increase event (timer or byte counter), after its counter was incremented. Paper rule
    (Zhu et al. 2015): fast recovery while both counters are below F, hyper increase when both
    reached F, additive otherwise. ns-3 Mellanox rule (timer only, rdma-hw.cc RateIncEventMlx, which
    tests the stage before incrementing it): fast recovery for the first F events, additive at the
    (F+1)-th, hyper after."""
    stage_f = cfg[C_DC_F]
    ti = fl[f, FL_INC_STAGE]
    bi = fl[f, FL_BYTE_STAGE]
    line = fr[f, FR_LINE]
    if cfg[C_DC_TIMER_ONLY] == 1:
        s = ti - 1  # ns-3's m_rpTimeStage when RateIncEventMlx runs
        if s > stage_f:
            fr[f, FR_TARGET] += cf[CF_DC_HAI]
        elif s == stage_f:
            fr[f, FR_TARGET] += cf[CF_DC_AI]
    elif ti >= stage_f and bi >= stage_f:
        step = ti - stage_f + 1 if ti < bi else bi - stage_f + 1
        fr[f, FR_TARGET] += cf[CF_DC_HAI] * step
    elif ti >= stage_f or bi >= stage_f:
        fr[f, FR_TARGET] += cf[CF_DC_AI]
    if fr[f, FR_TARGET] > line:
        fr[f, FR_TARGET] = line
    r = (fr[f, FR_RATE] + fr[f, FR_TARGET]) / 2.0
    if r > line:
        r = line
    dcqcn_set_rate(pt, fl, fr, h, g, f, r, wake)


# =================================================================================================
# HPCC reaction point (the sender NIC): Li et al., "HPCC: High Precision Congestion Control",
# SIGCOMM 2019, Algorithm 1; cross-checked with the authors' ns-3 code
# (github.com/alibaba-edu/High-Precision-Congestion-Control, rdma-hw.cc HandleAckHp /
# UpdateRateHp / FastReactHp) and htsim's sim/hpcc.cpp.
@njit(cache=True)
def hpcc_on_ack(pk, fl, fr, cfg, cf, f, i):
    """ACK ``i`` (carrying the echoed INT stack) reaches flow ``f``'s sender: MeasureInflight,
    then ComputeWind — updating W_c / incStage once per RTT (ack.seq > lastUpdateSeq, then
    lastUpdateSeq = snd_nxt) and reacting on every other ACK (fast react) with W_c unchanged."""
    n = pk[i, PK_NINT]
    if fl[f, FL_HP_SEQ] == 0 or n != fl[f, FL_HP_NHOP]:
        # first INT (or a path of another length after a reroute): store it, nothing to compare
        for j in range(n):
            c = PK_INT0 + INT_W * j
            s = FL_HP0 + HP_W * j
            fl[f, s] = pk[i, c]
            fl[f, s + 1] = pk[i, c + 1]
            fl[f, s + 2] = pk[i, c + 2]
            fl[f, s + 3] = pk[i, c + 4]
        fl[f, FL_HP_NHOP] = n
        if fl[f, FL_HP_SEQ] == 0:
            fl[f, FL_HP_SEQ] = fl[f, FL_SENT]
        return
    t_base = float(cfg[C_HP_T])
    u = 0.0
    tau = 0
    for j in range(n):
        c = PK_INT0 + INT_W * j
        s = FL_HP0 + HP_W * j
        dts = pk[i, c + 2] - fl[f, s + 2]
        # a sample of another port (per-packet spraying, flowlets): tx bytes and times of two
        # switches are not comparable; this ACK only refreshes the stored sample of hop j
        if dts > 0 and pk[i, c + 4] == fl[f, s + 3]:
            b = float(pk[i, c + 3])
            tx_rate = (pk[i, c + 1] - fl[f, s + 1]) * 8.0 * PS_PER_S / dts
            q = pk[i, c] if pk[i, c] < fl[f, s] else fl[f, s]
            uj = q * 8.0 * PS_PER_S / (b * t_base) + tx_rate / b
            if uj > u:
                u = uj
                tau = dts
        fl[f, s] = pk[i, c]
        fl[f, s + 1] = pk[i, c + 1]
        fl[f, s + 2] = pk[i, c + 2]
        fl[f, s + 3] = pk[i, c + 4]
    update = pk[i, PK_SEQ] > fl[f, FL_HP_SEQ]
    if tau > 0:
        if tau > cfg[C_HP_T]:
            tau = cfg[C_HP_T]
        w_t = tau / t_base
        big_u = (1.0 - w_t) * fr[f, FR_U] + w_t * u
        fr[f, FR_U] = big_u
        eta = cf[CF_HP_ETA]
        wc = fr[f, FR_WC]
        if big_u >= eta or fl[f, FL_HP_STAGE] >= cfg[C_HP_MAX_STAGE]:
            w = wc / (big_u / eta) + cf[CF_HP_WAI]
            stage = 0
        else:
            w = wc + cf[CF_HP_WAI]
            stage = fl[f, FL_HP_STAGE] + 1
        w_line = fr[f, FR_LINE] * t_base / (8.0 * PS_PER_S)  # the line-rate BDP, the initial window
        if w > w_line:
            w = w_line
        if w < cf[CF_HP_WMIN]:
            w = cf[CF_HP_WMIN]
        fr[f, FR_W] = w
        fr[f, FR_RATE] = w * 8.0 * PS_PER_S / t_base
        if fr[f, FR_RATE] > fr[f, FR_LINE]:
            fr[f, FR_RATE] = fr[f, FR_LINE]
        if update:
            fr[f, FR_WC] = w
            fl[f, FL_HP_STAGE] = stage
    if update:
        fl[f, FL_HP_SEQ] = fl[f, FL_SENT]


@njit(cache=True, inline="always")
def hpcc_window_full(fl, fr, cfg, f):
    """HPCC: the flow has a window of bytes in flight (sent, not yet acknowledged)."""
    return cfg[C_CC] == 2 and fl[f, FL_SENT] - fl[f, FL_ACKED] >= fr[f, FR_W]


# =================================================================================================
# transmission
@njit(cache=True, inline="always")
def start_tx(pt, pk, fl, cfg, cf, swused, h, g, log, p, i):
    now = g[G_NOW]
    size = pk[i, PK_SIZE]
    s = ser_ps(size, pt[p, PT_RATE])
    pt[p, PT_BUSY_UNTIL] = now + s
    pt[p, PT_TX_BYTES] += size
    pt[p, PT_TX_PKTS] += 1
    # a TX_DONE event only when something waits behind this packet; otherwise the next enqueue
    # (try_send) schedules it at PT_BUSY_UNTIL — most uncongested hops then cost one event
    if pt[p, PT_CH] >= 0 or (pt[p, PT_FH] >= 0 if pt[p, PT_NODE_IS_HOST] == 1 else pt[p, PT_DH] >= 0):
        pt[p, PT_BUSY] = 1
        heap_push(h, g, now + s, EV_TX_DONE, p)
    arrive = now + s + pt[p, PT_DELAY]
    if pt[p, PT_PEER_IS_SW] == 1:
        arrive += cfg[C_SW_LAT]
    pk[i, PK_PORT] = p
    pk[i, PK_HOP] += 1
    heap_push(h, g, arrive, EV_ARRIVE, i)
    if pk[i, PK_KIND] == KIND_DATA:
        g[G_LAST_MOVE] = now
        if cfg[C_CC] == 2 and pt[p, PT_NODE_IS_HOST] == 0:
            # HPCC INT (ns-3 SwitchNode::SwitchNotifyDequeue): the switch egress pushes, at
            # dequeue, its queue length left behind, its tx bytes (this packet included), the time
            # and its link rate
            n = pk[i, PK_NINT]
            if n < cfg[C_INT_MAX]:
                c = PK_INT0 + INT_W * n
                pk[i, c] = pt[p, PT_QBYTES]
                pk[i, c + 1] = pt[p, PT_TX_BYTES]
                pk[i, c + 2] = now
                pk[i, c + 3] = pt[p, PT_RATE]
                pk[i, c + 4] = p
                pk[i, PK_NINT] = n + 1
        if cfg[C_IB] == 1:
            pt[p, PT_CREDITS] -= (size + cfg[C_CREDIT_BYTES] - 1) // cfg[C_CREDIT_BYTES]


@njit(cache=True, inline="always")
def leave_switch(pt, pk, cfg, cf, swused, h, g, log, q, i):
    """Data packet ``i`` leaves the switch through egress ``q``: release its ingress charge
    (RESUME below xon, or return credits), and RED-mark on the egress queue left behind."""
    size = pk[i, PK_SIZE]
    node = pt[q, PT_NODE]
    now = g[G_NOW]
    pt[q, PT_QINT] += pt[q, PT_QBYTES] * (now - pt[q, PT_QLAST])
    pt[q, PT_QLAST] = now
    pt[q, PT_QBYTES] -= size
    swused[node] -= size
    g[G_QUEUED] -= 1
    inp = pk[i, PK_IN]
    if inp >= 0:
        pt[inp, PT_INBYTES] -= size
        pk[i, PK_IN] = -1
        if cfg[C_IB] == 1:
            n = (size + cfg[C_CREDIT_BYTES] - 1) // cfg[C_CREDIT_BYTES]
            heap_push(h, g, g[G_NOW] + pt[inp, PT_DELAY], EV_CREDIT, n * cfg[C_NPORTS] + inp)
        elif (
            cfg[C_PFC] == 1 and pt[inp, PT_PAUSE_SENT] == 1 and should_resume(pt, cfg, cf, swused, inp, node)
        ):
            send_pfc(pt, h, g, inp, 0, log)
    if cfg[C_ECN] == 1 and pk[i, PK_ECN] == 0:
        qb = pt[q, PT_QBYTES]
        kmin = cfg[C_KMIN]
        kmax = cfg[C_KMAX]
        mark = False
        if qb > kmax:
            mark = True
        elif qb > kmin:
            prob = cf[CF_PMAX] * (qb - kmin) / (kmax - kmin)
            mark = rand01(g) < prob
        if mark:
            pk[i, PK_ECN] = 1
            pt[q, PT_ECN] += 1
            g[G_ECN] += 1


@njit(cache=True, inline="always")
def buffer_admit(pt, pk, cfg, swused, g, p, node, i, dropq):
    """Data packet ``i`` arriving through ingress ``p`` takes buffer at switch ``node``. A full
    shared buffer drops it (RoCE; an InfiniBand switch never does: credits hold the sender back),
    counted at port ``dropq``: False. Otherwise it is charged to the buffer and to the ingress (whose
    high-water mark is kept) until :func:`leave_switch` releases it, and counted queued: True.

    One exit and the drop through :func:`drop_pkt` (a call, off the hot path): inlined this way the
    engine runs 1.2 % more instructions than with the admission written out at both callers
    (perm128, valgrind's instruction count; an early ``return False`` or the drop written inline cost
    2.2 %: numba's inliner copies the array arguments, some with a reference count)."""
    size = pk[i, PK_SIZE]
    ok = swused[node] + size <= cfg[C_BUFFER] or cfg[C_IB] != 0
    if ok:
        swused[node] += size
        pt[p, PT_INBYTES] += size
        if pt[p, PT_INBYTES] > pt[p, PT_MAXIN]:
            pt[p, PT_MAXIN] = pt[p, PT_INBYTES]
        pk[i, PK_IN] = p
        g[G_QUEUED] += 1
    else:
        g[G_BUF_DROPS] += 1
        drop_pkt(pk, pt, g, dropq, i)
    return ok


@njit(cache=True, inline="always")
def egress_enqueue(pt, pk, g, q, i):
    """Data packet ``i`` joins egress ``q``'s data FIFO: the queue's time integral is brought up to
    now, its length grows by the packet and its maximum is kept (:func:`leave_switch` takes it off)."""
    t = g[G_NOW]
    pt[q, PT_QINT] += pt[q, PT_QBYTES] * (t - pt[q, PT_QLAST])
    pt[q, PT_QLAST] = t
    pt[q, PT_QBYTES] += pk[i, PK_SIZE]
    if pt[q, PT_QBYTES] > pt[q, PT_MAXQ]:
        pt[q, PT_MAXQ] = pt[q, PT_QBYTES]
    fifo_push(pt, pk, q, PT_DH, PT_DT, i)


@njit(cache=True)
def activate(pt, fl, f):
    """Put flow ``f`` on the tail of its NIC port's round-robin list."""
    p = fl[f, FL_PORT]
    fl[f, FL_ACTIVE] = 1
    fl[f, FL_NEXT] = -1
    if pt[p, PT_FT] < 0:
        pt[p, PT_FH] = f
    else:
        fl[pt[p, PT_FT], FL_NEXT] = f
    pt[p, PT_FT] = f


@njit(cache=True)
def go_back(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f, seq):
    """Go-back-N: resend from byte ``seq`` (unless just done for the same byte)."""
    now = g[G_NOW]
    if fl[f, FL_SENT] <= seq or fl[f, FL_DONE_T] >= 0:
        return
    if fl[f, FL_REWIND_SEQ] == seq and now - fl[f, FL_REWIND_T] < cfg[C_NACK_GAP]:
        return
    fl[f, FL_REWIND_SEQ] = seq
    fl[f, FL_REWIND_T] = now
    fl[f, FL_SENT] = seq
    fl[f, FL_RETX] += 1
    g[G_RETX] += 1
    if fl[f, FL_ACTIVE] == 0:
        activate(pt, fl, f)
    try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, fl[f, FL_PORT])


@njit(cache=True, inline="always")
def nic_next_packet(pt, pk, fl, fr, cfg, cf, h, g, p):
    """Pick the next data packet of a sender NIC port: round-robin over its active flows, skipping
    flows whose rate limiter holds them; schedules a wake-up when all are held. -1 = none."""
    now = g[G_NOW]
    f = pt[p, PT_FH]
    prev = -1
    best_wake = -1
    while f >= 0:
        nxt = fl[f, FL_NEXT]
        if hpcc_window_full(fl, fr, cfg, f):
            # window-bound: the next ACK (host_receive) retries the port; in lossy mode a timeout
            # covers the case that no ACK comes back
            if cfg[C_LOSSY] == 1 and fl[f, FL_RTO_PENDING] == 0:
                fl[f, FL_RTO_PENDING] = 1
                heap_push(h, g, now + cfg[C_RTO], EV_RTO, f)
            prev = f
            f = nxt
            continue
        if fl[f, FL_NEXT_SEND] <= now:
            # unlink f
            if prev < 0:
                pt[p, PT_FH] = nxt
            else:
                fl[prev, FL_NEXT] = nxt
            if pt[p, PT_FT] == f:
                pt[p, PT_FT] = prev
            fl[f, FL_NEXT] = -1
            remaining = fl[f, FL_SIZE] - fl[f, FL_SENT]
            payload = cfg[C_MTU] if remaining > cfg[C_MTU] else remaining
            i = pkt_alloc(pk, g)
            pk[i, PK_FLOW] = f
            pk[i, PK_ROW] = fl[f, FL_ROW]
            pk[i, PK_KIND] = KIND_DATA
            pk[i, PK_PAYLOAD] = payload
            pk[i, PK_SIZE] = payload + cfg[C_HDR]
            fl[f, FL_SENT] += payload
            pk[i, PK_SEQ] = fl[f, FL_SENT]
            g[G_INJ_BYTES] += payload
            g[G_DATA_PKTS] += 1
            if cfg[C_CC] != 0:  # DCQCN's rate, or HPCC's pacing rate W / T
                fl[f, FL_NEXT_SEND] = now + np.int64((payload + cfg[C_HDR]) * 8 * PS_PER_S / fr[f, FR_RATE])
            if cfg[C_CC] == 1:
                fl[f, FL_BYTES_CNT] += payload
                if fl[f, FL_BYTES_CNT] >= cfg[C_DC_BYTES] and cfg[C_DC_TIMER_ONLY] == 0:
                    fl[f, FL_BYTES_CNT] = 0
                    if fr[f, FR_RATE] < fr[f, FR_LINE]:
                        fl[f, FL_BYTE_STAGE] += 1
                        dcqcn_increase(pt, fl, fr, cfg, cf, h, g, f, False)
            if fl[f, FL_SENT] < fl[f, FL_SIZE]:
                # back on the tail
                if pt[p, PT_FT] < 0:
                    pt[p, PT_FH] = f
                else:
                    fl[pt[p, PT_FT], FL_NEXT] = f
                pt[p, PT_FT] = f
            else:
                fl[f, FL_ACTIVE] = 0
                if cfg[C_LOSSY] == 1 and fl[f, FL_RTO_PENDING] == 0:
                    fl[f, FL_RTO_PENDING] = 1
                    heap_push(h, g, now + cfg[C_RTO], EV_RTO, f)
            return i
        if best_wake < 0 or fl[f, FL_NEXT_SEND] < best_wake:
            best_wake = fl[f, FL_NEXT_SEND]
        prev = f
        f = nxt
    if best_wake >= 0 and (pt[p, PT_WAKE_T] < 0 or best_wake < pt[p, PT_WAKE_T] or pt[p, PT_WAKE_T] < now):
        pt[p, PT_WAKE_T] = best_wake
        heap_push(h, g, best_wake, EV_WAKE, p)
    return -1


@njit(cache=True)
def try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, p):
    """Start the next transmission on port ``p`` if it is idle: control packets first; data only
    when the port is not paused (PFC, or an injected pause) and holds credits for a full packet
    (InfiniBand)."""
    if pt[p, PT_BUSY] == 1 or pt[p, PT_DOWN] == 1:
        return
    if g[G_NOW] < pt[p, PT_BUSY_UNTIL]:
        pt[p, PT_BUSY] = 1
        heap_push(h, g, pt[p, PT_BUSY_UNTIL], EV_TX_DONE, p)
        return
    if pt[p, PT_CH] >= 0:
        i = fifo_pop(pt, pk, p, PT_CH, PT_CT)
        start_tx(pt, pk, fl, cfg, cf, swused, h, g, log, p, i)
        return
    if egress_paused(pt, p):
        return
    is_host = pt[p, PT_NODE_IS_HOST] == 1
    if is_host:
        if pt[p, PT_FH] < 0:
            return
    elif pt[p, PT_DH] < 0:
        return
    if cfg[C_IB] == 1:
        need = cfg[C_MTU] + cfg[C_HDR] if is_host else pk[pt[p, PT_DH], PK_SIZE]
        need = (need + cfg[C_CREDIT_BYTES] - 1) // cfg[C_CREDIT_BYTES]
        if pt[p, PT_CREDITS] < need:
            if pt[p, PT_STALL_T0] < 0:
                pt[p, PT_STALL_T0] = g[G_NOW]
            return
        if pt[p, PT_STALL_T0] >= 0:
            pt[p, PT_STALL_PS] += g[G_NOW] - pt[p, PT_STALL_T0]
            pt[p, PT_STALL_T0] = -1
    if is_host:
        if cfg[C_UET] == 1:
            i = uet.uet_next_packet(pt, pk, fl, fr, cfg, h, g, ue, p)
        else:
            i = nic_next_packet(pt, pk, fl, fr, cfg, cf, h, g, p)
        if i < 0:
            return
    else:
        i = fifo_pop(pt, pk, p, PT_DH, PT_DT)
        leave_switch(pt, pk, cfg, cf, swused, h, g, log, p, i)
    start_tx(pt, pk, fl, cfg, cf, swused, h, g, log, p, i)


@njit(cache=True)
def drop_pkt(pk, pt, g, q, i):
    if pk[i, PK_KIND] == KIND_DATA:
        pt[q, PT_DROPS] += 1
        g[G_DROPS] += 1
        g[G_DROP_BYTES] += pk[i, PK_PAYLOAD]
    pkt_free(pk, g, i)


@njit(cache=True)
def frame_corrupted(pt, g, cfg, cf, p):
    """One draw of the frame-error stream for a frame sent on port ``p``: True with probability
    ``CF_FER`` (``C_FER`` 2: only on a link between two switches; other links draw nothing)."""
    if cfg[C_FER] == 2 and (pt[p, PT_PEER_IS_SW] == 0 or pt[p, PT_NODE_IS_HOST] == 1):
        return False
    x = (g[G_FER_RNG] * 48271) % PARK_MILLER_M
    g[G_FER_RNG] = x
    return x / PARK_MILLER_M < cf[CF_FER]


@njit(cache=True)
def link_error(pt, pk, cfg, h, g, p, i):
    """Data packet ``i`` arrived corrupted at port ``p``. With LLR the link sender replays it: it
    arrives again after the link's round trip (the receiver's NACK back, the frame again) plus the
    replay delay. Without LLR the receiving port discards it (InfiniBand: its credits go back) and
    the transport recovers it end to end."""
    if cfg[C_LLR] == 1:
        g[G_LLR_REPLAYS] += 1
        t = g[G_NOW] + 2 * pt[p, PT_DELAY] + ser_ps(pk[i, PK_SIZE], pt[p, PT_RATE]) + cfg[C_LLR_DELAY]
        heap_push(h, g, t, EV_ARRIVE, i)
        return
    if cfg[C_IB] == 1:
        n = (pk[i, PK_SIZE] + cfg[C_CREDIT_BYTES] - 1) // cfg[C_CREDIT_BYTES]
        heap_push(h, g, g[G_NOW] + pt[p, PT_DELAY], EV_CREDIT, n * cfg[C_NPORTS] + p)
    g[G_FER_DROPS] += 1
    g[G_FER_BYTES] += pk[i, PK_PAYLOAD]
    drop_pkt(pk, pt, g, p, i)


@njit(cache=True)
def link_down(pt, pk, fl, fr, cfg, cf, swused, h, g, log, link):
    """Both directions of ``link`` fail: queued packets are dropped (releasing their ingress
    charge, so upstream PAUSEs resume), packets on the wire are dropped on arrival."""
    for q in (2 * link, 2 * link + 1):
        pt[q, PT_DOWN] = 1
        if pt[q, PT_PAUSED] == 1:
            pt[q, PT_PAUSED] = 0
            pt[q, PT_PAUSED_PS] += g[G_NOW] - pt[q, PT_PAUSE_T0]
        while pt[q, PT_CH] >= 0:
            drop_pkt(pk, pt, g, q, fifo_pop(pt, pk, q, PT_CH, PT_CT))
        while pt[q, PT_DH] >= 0:
            i = fifo_pop(pt, pk, q, PT_DH, PT_DT)
            pk[i, PK_ECN] = 1  # no ECN mark for a packet that is lost
            leave_switch(pt, pk, cfg, cf, swused, h, g, log, q, i)
            drop_pkt(pk, pt, g, q, i)


@njit(cache=True, inline="always")
def tie_hash(salt, a, b, c):
    """A non-negative pseudo-random hash of (salt, a, b, c): Park–Miller steps mod 2³¹ − 1 with
    31-bit xor-shifts in between; every product stays below 2⁶³, so the plain-Python run
    (NUMBA_DISABLE_JIT=1) gives the same values."""
    x = salt % PARK_MILLER_M
    for v in (a, b, c):
        x = (x * 48271 + v % PARK_MILLER_M) % PARK_MILLER_M
        x ^= x >> 13
        x = (x * 69621) % PARK_MILLER_M
        x ^= x >> 11
    return x


@njit(cache=True, inline="always")
def egress_load(pt, q, now):
    """Bytes egress ``q`` still has to send: its data queue plus the rest of the packet in service."""
    rest = 0
    if pt[q, PT_BUSY_UNTIL] > now:
        rest = (pt[q, PT_BUSY_UNTIL] - now) * pt[q, PT_RATE] // (8 * PS_PER_S)
    return pt[q, PT_QBYTES] + rest


@njit(cache=True, inline="always")
def egress_of(lk, a, node):
    """The directed port by which switch ``node`` sends on link ``lk`` whose end a is node ``a``
    (``link_a[lk]``): row ``2*lk`` from end a, ``2*lk + 1`` from end b. (Scalars only: an inlined
    helper's array arguments can cost reference counting in the loops of :func:`route`.)"""
    return 2 * lk + (1 if a != node else 0)


@njit(cache=True, inline="always")
def rr_phase(flowlet, salt, f, hop, node, n):
    """Where flow ``f``'s round robin over ``n`` equal-cost egresses at hop ``hop`` starts for this
    packet: a seeded per-(flow, hop) phase on its first packet, one step further on each next one."""
    c = flowlet[f, 2 * hop]
    if c < 0:
        c = tie_hash(salt, f, hop, node) % n
    flowlet[f, 2 * hop] = (c + 1) % n
    return c


@njit(cache=True, inline="always")
def route(pk, fl, pt, cfg, fpath, apath, nh_off, nh_links, link_a, flowlet, g, i, node):
    """The egress port of packet ``i`` at switch ``node``."""
    f = pk[i, PK_FLOW]
    hop = pk[i, PK_HOP]
    row = pk[i, PK_ROW]
    if pk[i, PK_KIND] != KIND_DATA:
        return apath[row, hop]
    if cfg[C_ROUTING] == 0:
        return fpath[row, hop]
    # adaptive: least-occupied egress among the equal-cost next hops
    # a cached or precomputed port is used only if it is an egress of *this* switch: once a packet
    # has left its ECMP path, fpath[row, hop] (and a flowlet entry cached by an earlier packet
    # that took another way) belongs to another switch, and queueing there would charge the
    # packet's buffer to one switch and release it at another
    if cfg[C_ROUTING] == 2:
        last_t = flowlet[f, 2 * hop + 1]
        cached = flowlet[f, 2 * hop]
        if (
            last_t >= 0
            and g[G_NOW] - last_t < cfg[C_FLOWLET_GAP]
            and cached >= 0
            and pt[cached, PT_NODE] == node
            and pt[cached, PT_DOWN] == 0
        ):
            flowlet[f, 2 * hop + 1] = g[G_NOW]
            return cached
    d = fl[f, FL_DST]
    k = node * cfg[C_NHOSTS] + d
    j0 = nh_off[k]
    n = nh_off[k + 1] - j0
    if cfg[C_ROUTING] == 3 or cfg[C_ROUTING] == 4:
        # spray: oblivious per-packet round robin over the equal-cost egresses (queue state not
        # read), from a seeded per-(flow, hop) phase; a failed egress is skipped. A scheduled
        # fabric (4) sprays its cells the same way over every fabric link
        c = rr_phase(flowlet, cfg[C_ROUTE_SALT], f, hop, node, n)
        for jj in range(n):
            lk = nh_links[j0 + (c + jj) % n]
            q = egress_of(lk, link_a[lk], node)
            if pt[q, PT_DOWN] == 0:
                return q
        return -1
    if cfg[C_ROUTING] == 1:
        # per packet: the least-occupied egress (occupancy in buckets of AR_BUCKET_PKTS packets; a
        # paused egress counts as full). Ties — e.g. an idle fabric, where every egress is empty —
        # go round robin per (flow, hop) from a seeded per-flow phase, so a flow's packets spray
        # evenly over the equal-cost egresses; that also balances the downstream (spine-to-leaf)
        # links this switch cannot see, instead of every packet keeping the flow's ECMP port.
        qb = AR_BUCKET_PKTS * (cfg[C_MTU] + cfg[C_HDR])
        best_q = -1
        for jj in range(n):
            lk = nh_links[j0 + jj]
            q = egress_of(lk, link_a[lk], node)
            if pt[q, PT_DOWN] == 1:
                continue
            occ = pt[q, PT_QBYTES] // qb + (cfg[C_BUFFER] if egress_paused(pt, q) else 0)
            if best_q < 0 or occ < best_q:
                best_q = occ
        if best_q < 0:
            return -1
        c = rr_phase(flowlet, cfg[C_ROUTE_SALT], f, hop, node, n)
        for jj in range(n):
            lk = nh_links[j0 + (c + jj) % n]
            q = egress_of(lk, link_a[lk], node)
            if (
                pt[q, PT_DOWN] == 0
                and (pt[q, PT_QBYTES] // qb + (cfg[C_BUFFER] if egress_paused(pt, q) else 0)) == best_q
            ):
                return q
        return -1
    # flowlet: ties keep the ECMP choice (so flows starting on an idle fabric spread by hash, not
    # all on the first port); another port wins only when strictly less occupied. Off the ECMP
    # path the scan starts at a per-flow offset, so ties still spread over flows.
    # An egress's load is its queued bytes plus the unsent rest of the packet in service: a port
    # carrying a line-rate flow holds no queue but is never idle, and a new flowlet must not see it
    # as free (flowlet balancers weigh link utilisation — CONGA's DRE, a DLB's port-load term — not
    # only queue depth). Without it, flows that start together on an idle fabric all kept their
    # hashed port (issue 12: 0.653 against the flow model's 0.769 on the 8×8×8 permutation).
    now = g[G_NOW]
    best = fpath[row, hop]
    best_q = 8 * cfg[C_BUFFER]
    start = 0
    if best >= 0 and pt[best, PT_NODE] == node:
        best_q = egress_load(pt, best, now) + (cfg[C_BUFFER] if egress_paused(pt, best) else 0)
        if pt[best, PT_DOWN] == 1:
            best_q = 4 * cfg[C_BUFFER]
    else:
        best = -1
        if n > 0:
            start = (f + hop) % n
    for jj in range(n):
        j = j0 + (start + jj) % n
        lk = nh_links[j]
        q = egress_of(lk, link_a[lk], node)
        if pt[q, PT_DOWN] == 1:
            continue
        occ = egress_load(pt, q, now)
        if egress_paused(pt, q):
            occ += cfg[C_BUFFER]
        if occ < best_q:
            best = q
            best_q = occ
    if cfg[C_ROUTING] == 2:
        flowlet[f, 2 * hop] = best
        flowlet[f, 2 * hop + 1] = g[G_NOW]
    return best


@njit(cache=True, inline="always")
def host_receive(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, i, node):
    if cfg[C_UET] == 1:
        uet.uet_host_receive(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, i)
        return
    f = pk[i, PK_FLOW]
    kind = pk[i, PK_KIND]
    now = g[G_NOW]
    if kind == KIND_DATA:
        payload = pk[i, PK_PAYLOAD]
        if cfg[C_LOSSY] == 1 and pk[i, PK_SEQ] - payload != fl[f, FL_RCVD]:
            # go-back-N receiver: discard what is not the next expected byte; NACK a gap (at most
            # once per NACK gap for the same byte), re-ACK a duplicate
            g[G_DISCARD_BYTES] += payload
            if cfg[C_IB] == 1:  # the discarded packet frees its receive buffer: credits go back
                n = (pk[i, PK_SIZE] + cfg[C_CREDIT_BYTES] - 1) // cfg[C_CREDIT_BYTES]
                p = pk[i, PK_PORT]
                heap_push(h, g, now + pt[p, PT_DELAY], EV_CREDIT, n * cfg[C_NPORTS] + p)
            gap = pk[i, PK_SEQ] - payload > fl[f, FL_RCVD]
            if gap and fl[f, FL_NACK_SEQ] == fl[f, FL_RCVD] and now - fl[f, FL_NACK_T] < cfg[C_NACK_GAP]:
                pkt_free(pk, g, i)
                return
            if gap:
                fl[f, FL_NACK_SEQ] = fl[f, FL_RCVD]
                fl[f, FL_NACK_T] = now
                g[G_NACKS] += 1
            out = apath[fl[f, FL_AROW], 0]
            pk[i, PK_ROW] = fl[f, FL_AROW]
            pk[i, PK_KIND] = KIND_NACK if gap else KIND_ACK
            pk[i, PK_SIZE] = cfg[C_ACK_BYTES]
            pk[i, PK_PAYLOAD] = 0
            pk[i, PK_SEQ] = fl[f, FL_RCVD]
            pk[i, PK_HOP] = 0
            pk[i, PK_ECN] = 0
            fifo_push(pt, pk, out, PT_CH, PT_CT, i)
            try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, out)
            return
        fl[f, FL_RCVD] += payload
        fl[f, FL_RX_PKTS] += 1
        g[G_DELIV_BYTES] += payload
        last = fl[f, FL_RCVD] >= fl[f, FL_SIZE]
        if last:
            fl[f, FL_RX_T] = now
        ecn = pk[i, PK_ECN]
        if cfg[C_IB] == 1:
            n = (pk[i, PK_SIZE] + cfg[C_CREDIT_BYTES] - 1) // cfg[C_CREDIT_BYTES]
            p = pk[i, PK_PORT]
            heap_push(h, g, now + pt[p, PT_DELAY], EV_CREDIT, n * cfg[C_NPORTS] + p)
        out = apath[fl[f, FL_AROW], 0]
        if last or fl[f, FL_RX_PKTS] % cfg[C_ACK_EVERY] == 0:
            # reuse the slot as the ACK
            pk[i, PK_KIND] = KIND_ACK
            pk[i, PK_ROW] = fl[f, FL_AROW]
            pk[i, PK_SIZE] = cfg[C_ACK_BYTES]
            pk[i, PK_PAYLOAD] = 0
            pk[i, PK_SEQ] = fl[f, FL_RCVD]
            pk[i, PK_HOP] = 0
            pk[i, PK_ECN] = 0
            g[G_ACKS] += 1
            fifo_push(pt, pk, out, PT_CH, PT_CT, i)
            i = -1
        else:
            pkt_free(pk, g, i)
            i = -1
        if (
            cfg[C_CC] == 1
            and ecn == 1
            and (fl[f, FL_LAST_CNP] < 0 or now - fl[f, FL_LAST_CNP] >= cfg[C_CNP_INTERVAL])
        ):
            fl[f, FL_LAST_CNP] = now
            c = pkt_alloc(pk, g)
            pk[c, PK_FLOW] = f
            pk[c, PK_KIND] = KIND_CNP
            pk[c, PK_ROW] = fl[f, FL_AROW]
            pk[c, PK_SIZE] = cfg[C_ACK_BYTES]
            pk[c, PK_PAYLOAD] = 0
            pk[c, PK_SEQ] = 0
            g[G_CNPS] += 1
            fifo_push(pt, pk, out, PT_CH, PT_CT, c)
        try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, out)
        return
    if kind in (KIND_ACK, KIND_NACK):
        if pk[i, PK_SEQ] > fl[f, FL_ACKED]:
            fl[f, FL_ACKED] = pk[i, PK_SEQ]
            fl[f, FL_PROGRESS_T] = now
            if fl[f, FL_ACKED] >= fl[f, FL_SIZE] and fl[f, FL_DONE_T] < 0:
                fl[f, FL_DONE_T] = now
                g[G_FLOWS_DONE] += 1
        if cfg[C_CC] == 2:
            hpcc_on_ack(pk, fl, fr, cfg, cf, f, i)
        if kind == KIND_NACK:
            seq = pk[i, PK_SEQ]
            pkt_free(pk, g, i)
            go_back(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f, seq)
            return
        if cfg[C_CC] == 2 and fl[f, FL_ACTIVE] == 1:
            pkt_free(pk, g, i)
            # the window may have opened
            try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, fl[f, FL_PORT])
            return
    elif kind == KIND_CNP and cfg[C_CC] == 1:
        dcqcn_on_cnp(pt, fl, fr, cfg, cf, h, g, f)
    pkt_free(pk, g, i)


# =================================================================================================
# scheduled fabric (routing 4: Jericho3-AI + Ramon class, README "Routing modes"): the ingress
# switch keeps a virtual output queue per egress port and forwards a packet into the fabric only
# when that egress port's credit scheduler grants it; grants are paced at the egress port's rate,
# first come first served over all ingresses, so the fabric never carries more toward a port than
# it drains and no queue builds in the spines. The packet waits in the ingress switch's buffer
# (charged to the ingress port it came through: PFC toward the sending host is the only pause).
@njit(cache=True)
def voq_admit(pt, pk, cfg, cf, swused, fpath, h, g, log, p, i, node):
    """Data packet ``i`` from a host reaches its ingress switch ``node`` through port ``p``: take
    buffer (drop on a full buffer, as any RoCE switch), charge the ingress, and schedule its release
    (``EV_VOQ``) at the next grant of its egress port — the last port of its path, toward the host.
    (A drop is counted at the ingress: the packet has no egress yet. The scheduled fabric is RoCE
    only, :mod:`aifabric.scenario`.)"""
    if not buffer_admit(pt, pk, cfg, swused, g, p, node, i, p):
        return
    size = pk[i, PK_SIZE]
    # the same PAUSE rule as every switch arrival (static: > xoff; dynamic: held bytes less the
    # reserve >= alpha x free buffer)
    if cfg[C_PFC] == 1 and pt[p, PT_PAUSE_SENT] == 0 and should_pause(pt, cfg, cf, swused, p, node):
        send_pfc(pt, h, g, p, 1, log)
    row = pk[i, PK_ROW]
    e = -1
    for j in range(fpath.shape[1]):
        if fpath[row, j] >= 0:
            e = fpath[row, j]
    t = g[G_NOW]
    if pt[e, PT_GRANT_T] > t:
        t = pt[e, PT_GRANT_T]
    pt[e, PT_GRANT_T] = t + ser_ps(size, pt[e, PT_RATE])
    heap_push(h, g, t, EV_VOQ, i)


@njit(cache=True)
def voq_release(
    pk, fl, fr, pt, cfg, cf, swused, fpath, apath, nh_off, nh_links, link_a, flowlet, h, g, log, ue, i
):
    """The grant for packet ``i`` arrived: it leaves its VOQ onto a fabric link (sprayed by
    :func:`route`) and queues there like any packet; its ingress charge stays until it leaves."""
    p = pk[i, PK_IN]
    node = pt[p, PT_PEER]
    q = route(pk, fl, pt, cfg, fpath, apath, nh_off, nh_links, link_a, flowlet, g, i, node)
    size = pk[i, PK_SIZE]
    if q < 0 or pt[q, PT_DOWN] == 1:
        swused[node] -= size
        pt[p, PT_INBYTES] -= size
        pk[i, PK_IN] = -1
        g[G_QUEUED] -= 1
        drop_pkt(pk, pt, g, p if q < 0 else q, i)
        # the released bytes may bring the ingress below its RESUME point, as a packet leaving does
        # (leave_switch): without this a paused host waited for another packet of that ingress
        if cfg[C_PFC] == 1 and pt[p, PT_PAUSE_SENT] == 1 and should_resume(pt, cfg, cf, swused, p, node):
            send_pfc(pt, h, g, p, 0, log)
        return
    egress_enqueue(pt, pk, g, q, i)
    try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, q)


# =================================================================================================
@njit(cache=True)
def run(
    g,
    cfg,
    cf,
    h,
    pk,
    pt,
    fl,
    fr,
    swused,
    fpath,
    apath,
    nh_off,
    nh_links,
    link_a,
    flowlet,
    log,
    ue,
    until,
    quota,
):
    """Process events until a status (``ST_*``) says why it stopped. Re-entrant."""
    nflows = fl.shape[0]
    npk = pk.shape[0]
    done_events = 0
    while True:
        if g[G_HEAPN] == 0:
            if g[G_QUEUED] > 0:  # packets queued and nothing left that could ever move them
                g[G_NOW] = g[G_LAST_MOVE] + cfg[C_DEADLOCK_PS]
                return ST_STALL
            return ST_DONE
        if nflows > 0 and g[G_FLOWS_DONE] == nflows:
            return ST_DONE
        if g[G_HEAPN] + 8 > h.shape[0]:
            return ST_GROW_HEAP
        if npk - g[G_PKT_LIVE] < 4:
            return ST_GROW_PKT
        if g[G_LOGN] + 4 > log.shape[0]:
            return ST_GROW_LOG
        if done_events >= quota:
            return ST_QUOTA
        t = h[0, 0]
        if t > until:
            return ST_UNTIL
        if g[G_QUEUED] > 0 and t - g[G_LAST_MOVE] > cfg[C_DEADLOCK_PS] and g[G_XACTIVE] == 0:
            # (not while an injected pause holds an egress: it ends on its own, at a scheduled time)
            g[G_NOW] = g[G_LAST_MOVE] + cfg[C_DEADLOCK_PS]
            return ST_STALL
        v = h[0, 2]
        heap_pop(h, g)
        g[G_NOW] = t
        g[G_EVENTS] += 1
        done_events += 1
        kind = v % 16
        arg = v // 16
        if kind == EV_TX_DONE:
            pt[arg, PT_BUSY] = 0
            try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, arg)
        elif kind == EV_ARRIVE:
            i = arg
            p = pk[i, PK_PORT]
            node = pt[p, PT_PEER]
            if pt[p, PT_DOWN] == 1:
                drop_pkt(pk, pt, g, p, i)
                continue
            if cfg[C_FER] != 0 and pk[i, PK_KIND] == KIND_DATA and frame_corrupted(pt, g, cfg, cf, p):
                link_error(pt, pk, cfg, h, g, p, i)
                continue
            if pt[p, PT_PEER_IS_SW] == 0:
                host_receive(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, i, node)
                continue
            if cfg[C_ROUTING] == 4 and pk[i, PK_KIND] == KIND_DATA and pt[p, PT_NODE_IS_HOST] == 1:
                voq_admit(pt, pk, cfg, cf, swused, fpath, h, g, log, p, i, node)  # scheduled fabric
                continue
            if cfg[C_UET] == 1 and (pk[i, PK_KIND] == KIND_DATA or pk[i, PK_KIND] == KIND_TRIM):
                q = uet.uet_route(pk, fl, pt, cfg, nh_off, nh_links, link_a, i, node)
            else:
                q = route(pk, fl, pt, cfg, fpath, apath, nh_off, nh_links, link_a, flowlet, g, i, node)
            if q < 0 or pt[q, PT_DOWN] == 1:
                if cfg[C_IB] == 1 and pk[i, PK_KIND] == KIND_DATA:
                    # the packet never takes buffer here: its credits go back to the sender at once
                    n = (pk[i, PK_SIZE] + cfg[C_CREDIT_BYTES] - 1) // cfg[C_CREDIT_BYTES]
                    heap_push(h, g, g[G_NOW] + pt[p, PT_DELAY], EV_CREDIT, n * cfg[C_NPORTS] + p)
                drop_pkt(pk, pt, g, p if q < 0 else q, i)
                continue
            if pk[i, PK_KIND] != KIND_DATA:
                fifo_push(pt, pk, q, PT_CH, PT_CT, i)
                try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, q)
                continue
            if cfg[C_UET] == 1 and uet.uet_full(pt, pk, cfg, swused, node, q, i):
                uet.uet_trim_or_drop(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, q, i)
                continue
            if not buffer_admit(pt, pk, cfg, swused, g, p, node, i, q):
                continue
            egress_enqueue(pt, pk, g, q, i)
            if cfg[C_PFC] == 1 and pt[p, PT_PAUSE_SENT] == 0 and should_pause(pt, cfg, cf, swused, p, node):
                send_pfc(pt, h, g, p, 1, log)
            try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, q)
        elif kind == EV_PFC:
            p = arg // 2
            on = arg % 2
            n = g[G_LOGN]
            log[n, 0] = t
            log[n, 1] = p
            log[n, 2] = on
            g[G_LOGN] = n + 1
            if on == 1:
                pt[p, PT_PAUSE_RX] += 1
                if pt[p, PT_PAUSED] == 0:
                    pt[p, PT_PAUSED] = 1
                    pt[p, PT_PAUSE_T0] = t
            else:
                pt[p, PT_RESUME_RX] += 1
                if pt[p, PT_PAUSED] == 1:
                    pt[p, PT_PAUSED] = 0
                    pt[p, PT_PAUSED_PS] += t - pt[p, PT_PAUSE_T0]
                    try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, p)
        elif kind == EV_FLOW_START:
            f = arg
            p = fl[f, FL_PORT]
            activate(pt, fl, f)
            fl[f, FL_ALPHA_T] = t
            fl[f, FL_PROGRESS_T] = t
            try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, p)
        elif kind == EV_WAKE:
            if pt[arg, PT_WAKE_T] == t:
                pt[arg, PT_WAKE_T] = -1
            try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, arg)
        elif kind == EV_CREDIT:
            nports = cfg[C_NPORTS]
            p = arg % nports
            pt[p, PT_CREDITS] += arg // nports
            try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, p)
        elif kind == EV_LINK_DOWN:
            link_down(pt, pk, fl, fr, cfg, cf, swused, h, g, log, arg)
            return ST_CONTROL
        elif kind == EV_XPAUSE:
            p = arg // 2
            if arg % 2 == 1:
                if pt[p, PT_XPAUSED] == 0:
                    pt[p, PT_XPAUSE_T0] = t
                    g[G_XACTIVE] += 1
                pt[p, PT_XPAUSED] += 1
                pt[p, PT_XPAUSE_RX] += 1
                g[G_XPAUSES] += 1
            elif pt[p, PT_XPAUSED] > 0:
                pt[p, PT_XPAUSED] -= 1
                if pt[p, PT_XPAUSED] == 0:
                    pt[p, PT_XPAUSED_PS] += t - pt[p, PT_XPAUSE_T0]
                    g[G_XACTIVE] -= 1
                    try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, p)
        elif kind == EV_VOQ:
            voq_release(
                pk,
                fl,
                fr,
                pt,
                cfg,
                cf,
                swused,
                fpath,
                apath,
                nh_off,
                nh_links,
                link_a,
                flowlet,
                h,
                g,
                log,
                ue,
                arg,
            )
        elif kind == EV_RTO:
            f = arg
            fl[f, FL_RTO_PENDING] = 0
            if cfg[C_UET] == 1:
                uet.uet_on_rto(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f)
                continue
            if fl[f, FL_DONE_T] >= 0 or (fl[f, FL_ACTIVE] == 1 and not hpcc_window_full(fl, fr, cfg, f)):
                continue
            if t - fl[f, FL_PROGRESS_T] >= cfg[C_RTO]:
                fl[f, FL_REWIND_T] = -cfg[C_NACK_GAP]  # a timeout always rewinds
                go_back(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f, fl[f, FL_ACKED])
            else:
                fl[f, FL_RTO_PENDING] = 1
                heap_push(h, g, fl[f, FL_PROGRESS_T] + cfg[C_RTO], EV_RTO, f)
        elif kind == EV_UE_PULL:
            uet.uet_on_pull_event(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, arg)
        elif kind == EV_DCQCN_INC:
            f = arg // 1024
            if arg % 1024 != fl[f, FL_INC_GEN] % 1024 or fl[f, FL_DONE_T] >= 0:
                continue
            if fr[f, FR_RATE] < fr[f, FR_LINE]:
                fl[f, FL_INC_STAGE] += 1
                dcqcn_increase(pt, fl, fr, cfg, cf, h, g, f, True)
                heap_push(h, g, t + cfg[C_DC_T_INC], EV_DCQCN_INC, arg)
    return ST_DONE


# The Ultra Ethernet transport lives in its own module, which calls the helpers above; it is bound
# here, after them, because the two modules use each other (numba resolves it when run compiles).
from aifabric.sim import uet  # noqa: E402
