"""The Ultra Ethernet transport (UET) in the packet kernel: ``fabric.transport: uet``.

A transport family beside the RDMA reliable connection of RoCE and InfiniBand (go-back-N in
:mod:`aifabric.sim.kernel`), on the same tables and events; its parameters are set by
:mod:`aifabric.sim.uet_setup`. Rules and where the UEC 1.0 specification (June 2025) states them:

* **Reliable unordered delivery (RUD)**, PDS §3.5: every packet has a PSN; the receiver delivers
  each packet's payload once whatever the order it arrives in, and acknowledges each packet; the
  sender retransmits exactly the packets that were NACKed or timed out — selective retransmission,
  no go-back-N.
* **Reliable ordered delivery (ROD)**, PDS §3.5 (``fabric.uet.delivery: rod``): one entropy value
  per flow; the receiver accepts only the next PSN and discards the rest (counted out of
  sequence); a trim NACK or a timeout sends the lost packet and everything after it again.
* **Spraying over entropy values**, CMS §3.6.12 (``GetSendParams`` picks the entropy of each
  packet, ``process_ev`` hears of each ACK, NACK and loss) and §3.6.16 (load balancing): the
  sender's load balancer (:mod:`aifabric.sim.uet_lb`; EV feedback by default, as the UEC htsim)
  gives each packet one of ``ev_count`` entropy values; every switch hashes (flow, EV) onto its
  equal-cost next hops, as it hashes the UDP source port that carries the EV.
* **RCCC** (``congestion_control: rccc`` / ``nscc-rccc``): receiver credits,
  :mod:`aifabric.sim.uet_rccc`. **CBFC** (``fabric.uet.cbfc``): the kernel's per-port credits.
* **Packet trimming**, §3.6.17 (switch settings) and the receiver rule of §3.6.12 (``OnRX``: a
  trimmed packet is NACKed at once): a data packet that meets a full egress queue is cut to a
  ``trim_size`` header and forwarded in the strict-priority class; the receiver NACKs it; the
  sender marks it for retransmission (``OnNACK``). With trimming off the packet is dropped and the
  retransmission timeout recovers it (``OnInferredLoss``).
* **NSCC**, §3.6.13: a window ``cwnd`` limits the bytes in flight (``CanSend``: inflight + MTU <=
  cwnd, §3.6.13.5); each ACK updates it from its ECN echo and RTT sample (``OnACK``: the four
  ECN × delay cases; §3.6.13.6 ``fair_increase``, ``proportional_increase``, ``fast_increase``,
  ``multiplicative_decrease``, ``quick_adapt``, ``fulfill_adjustment``, ``update_base_rtt``); a trim
  NACK triggers quick_adapt or takes one packet off the window (``NSCC.OnNACK``), a timeout takes
  one packet off (``NSCC.OnInferredLoss``). RTT samples follow §3.6.13.1.

Simplifications (docs/ultra-ethernet.md lists them with their effect):

* one message per flow, one PDC per flow, one CCC per PDC; no SES request/response semantics;
* every data packet is acknowledged on its own (a SACK of one PSN; no ACK coalescing), ACKs and
  NACKs follow the flow's precomputed ECMP path in the strict-priority class and are never lost;
* the bytes in flight are counted per packet at the sender (a packet leaves the count when it is
  ACKed, NACKed or timed out) instead of from the receiver's ``Rcvd_Bytes`` counter: the same
  numbers without duplicates, and no drift with them;
* the nominal packet size is the packet's wire size (payload + header), not UDP length + 40;
* no receiver flow control (``Rcv_Cwnd_Pend`` 0), no probe packets, no LLR (the engine has no
  link frame errors); ordered delivery discards out-of-sequence packets without a NACK; the
  average delay is an EWMA (implementation-defined in the spec);
* one retransmission timer per flow, re-armed at its oldest packet in flight (the spec keeps a
  timer per packet: the same firing times).

Numba-compatible and exact under ``NUMBA_DISABLE_JIT=1`` (no overflowing integer arithmetic).
"""

from __future__ import annotations

from numba import njit

from aifabric.sim import kernel as K
from aifabric.sim import uet_lb as LB
from aifabric.sim import uet_rccc as RC

UE_EV_SHIFT = 8  # ue[k, 0] keeps the EV of the packet's last copy above its state bits
UE_BITS = (1 << UE_EV_SHIFT) - 1


# =================================================================================================
# switches
@njit(cache=True)
def uet_route(pk, fl, pt, cfg, nh_off, nh_links, link_a, i, node):
    """Egress of data (or trimmed) packet ``i`` at switch ``node``: the switch's ECMP hash of
    (flow, entropy value) over the equal-cost next hops, with a hash seed per switch (from the
    scenario's seed); a failed egress passes the choice to the next one."""
    f = pk[i, K.PK_FLOW]
    k = node * cfg[K.C_NHOSTS] + fl[f, K.FL_DST]
    j0 = nh_off[k]
    n = nh_off[k + 1] - j0
    if n <= 0:
        return -1
    # the switch's own hash seed first (as each switch draws one), then (flow, EV) hashed from it:
    # hashing the node in with the flow and EV in one pass correlates the choices of consecutive
    # tiers (the packets a ToR sends to one aggregation switch would favour some of its uplinks)
    seed = K.tie_hash(cfg[K.C_ROUTE_SALT], node, 0, 0)
    c = K.tie_hash(seed, f, pk[i, K.PK_UE_EV], node) % n
    for jj in range(n):
        lk = nh_links[j0 + (c + jj) % n]
        q = K.egress_of(lk, link_a[lk], node)
        if pt[q, K.PT_DOWN] == 0:
            return q
    return -1


@njit(cache=True)
def uet_full(pt, pk, cfg, swused, node, q, i):
    """Data packet ``i`` finds no room: egress ``q``'s queue would pass the queue limit, or the
    switch's shared buffer is full. With PFC on the fabric is lossless: PAUSE holds the senders
    back and only the shared buffer limits (as for RoCE). With CBFC a packet only arrives into
    buffer its sender had credit for: never full (as InfiniBand)."""
    if cfg[K.C_IB] == 1:
        return False
    size = pk[i, K.PK_SIZE]
    if swused[node] + size > cfg[K.C_BUFFER]:
        return True
    return cfg[K.C_PFC] == 0 and pt[q, K.PT_QBYTES] + size > cfg[K.C_UE_QLIM]


@njit(cache=True)
def uet_trim_or_drop(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, q, i):
    """A full queue at egress ``q``: trim packet ``i`` to a header sent ahead of the data queue
    (the control FIFO, strict priority), or drop it when trimming is off."""
    if cfg[K.C_UE_TRIM] == 0:
        K.drop_pkt(pk, pt, g, q, i)
        return
    g[K.G_UE_TRIMS] += 1
    g[K.G_UE_TRIM_BYTES] += pk[i, K.PK_PAYLOAD]
    pk[i, K.PK_KIND] = K.KIND_TRIM
    pk[i, K.PK_UE_LAST] = 1 - pt[q, K.PT_PEER_IS_SW]
    pk[i, K.PK_SIZE] = cfg[K.C_UE_TRIM_BYTES]
    pk[i, K.PK_PAYLOAD] = 0
    K.fifo_push(pt, pk, q, K.PT_CH, K.PT_CT, i)
    K.try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, q)


# =================================================================================================
# sender: which packet next
@njit(cache=True, inline="always")
def payload_of(fl, cfg, f, psn):
    """Payload bytes of packet ``psn`` of flow ``f`` (MTU-sized, the last one the rest)."""
    rest = fl[f, K.FL_SIZE] - psn * cfg[K.C_MTU]
    return cfg[K.C_MTU] if rest > cfg[K.C_MTU] else rest


@njit(cache=True, inline="always")
def can_send(fl, fr, cfg, f):
    """NSCC.CanSend (§3.6.13.5): inflight + MTU <= cwnd; always without NSCC. RCCC: credit > 0."""
    if cfg[K.C_UE_RCCC] == 1 and fl[f, K.FL_UE_CREDIT] <= 0:
        return False
    if cfg[K.C_UE_NSCC] == 0:
        return True
    return fl[f, K.FL_UE_INFL] + cfg[K.C_MTU] + cfg[K.C_HDR] <= fr[f, K.FR_UE_CWND]


@njit(cache=True)
def next_psn(fl, ue, f):
    """The PSN flow ``f`` sends next: the lowest one marked for retransmission, else the next new
    one; -1 when it has nothing to send."""
    if fl[f, K.FL_UE_RTXN] > 0:
        off = fl[f, K.FL_UE_OFF]
        psn = fl[f, K.FL_UE_RTXP]
        while psn < fl[f, K.FL_UE_NEXT]:
            if ue[off + psn, 0] & K.UE_RTX:
                fl[f, K.FL_UE_RTXP] = psn
                return psn
            psn += 1
    if fl[f, K.FL_UE_NEXT] < fl[f, K.FL_UE_NPK]:
        return fl[f, K.FL_UE_NEXT]
    return -1


@njit(cache=True, inline="always")
def has_work(fl, f):
    return fl[f, K.FL_UE_RTXN] > 0 or fl[f, K.FL_UE_NEXT] < fl[f, K.FL_UE_NPK]


@njit(cache=True)
def emit(pk, fl, fr, cfg, h, g, ue, f, psn):
    """Build data packet ``psn`` of flow ``f`` (new or retransmitted) and account for it."""
    now = g[K.G_NOW]
    payload = payload_of(fl, cfg, f, psn)
    i = K.pkt_alloc(pk, g)
    pk[i, K.PK_FLOW] = f
    pk[i, K.PK_ROW] = fl[f, K.FL_ROW]
    pk[i, K.PK_KIND] = K.KIND_DATA
    pk[i, K.PK_PAYLOAD] = payload
    pk[i, K.PK_SIZE] = payload + cfg[K.C_HDR]
    pk[i, K.PK_SEQ] = psn
    ev = LB.next_ev(fl, fr, cfg, f)
    pk[i, K.PK_UE_EV] = ev
    pk[i, K.PK_UE_LAST] = 0
    k = fl[f, K.FL_UE_OFF] + psn
    st = ue[k, 0]
    pk[i, K.PK_UE_RETX] = 0
    if st & K.UE_SENT:
        pk[i, K.PK_UE_RETX] = 1
        st = (st | K.UE_RETX2) if st & K.UE_RETX1 else (st | K.UE_RETX1)
        st &= ~K.UE_RTX
        fl[f, K.FL_UE_RTXN] -= 1
        fl[f, K.FL_RETX] += 1
        g[K.G_RETX] += 1
        g[K.G_UE_RTX_BYTES] += payload
    else:
        fl[f, K.FL_UE_NEXT] += 1
        fl[f, K.FL_SENT] += payload
    ue[k, 0] = (st & UE_BITS) | K.UE_SENT | K.UE_INFL | (ev << UE_EV_SHIFT)
    ue[k, 1] = now
    fl[f, K.FL_UE_INFL] += payload + cfg[K.C_HDR]
    if cfg[K.C_UE_RCCC] == 1:
        fl[f, K.FL_UE_CREDIT] -= payload + cfg[K.C_HDR]
        pk[i, K.PK_UE_PT] = RC.pull_target(fl, fr, cfg, f)
    g[K.G_INJ_BYTES] += payload
    g[K.G_DATA_PKTS] += 1
    if fl[f, K.FL_RTO_PENDING] == 0:
        fl[f, K.FL_RTO_PENDING] = 1
        K.heap_push(h, g, now + cfg[K.C_UE_RTO], K.EV_RTO, f)
    return i


@njit(cache=True)
def uet_next_packet(pt, pk, fl, fr, cfg, h, g, ue, p):
    """The next data packet of sender NIC port ``p``: round robin over its active flows; a flow
    whose window is full waits on the list (an ACK retries the port), a flow with nothing left to
    send leaves it (a NACK or timeout puts it back). -1 = none."""
    f = pt[p, K.PT_FH]
    prev = -1
    while f >= 0:
        nxt = fl[f, K.FL_NEXT]
        if not can_send(fl, fr, cfg, f):
            prev = f
            f = nxt
            continue
        psn = next_psn(fl, ue, f)
        # unlink f; it goes back on the tail while it has more to send
        if prev < 0:
            pt[p, K.PT_FH] = nxt
        else:
            fl[prev, K.FL_NEXT] = nxt
        if pt[p, K.PT_FT] == f:
            pt[p, K.PT_FT] = prev
        fl[f, K.FL_NEXT] = -1
        if psn < 0:
            fl[f, K.FL_ACTIVE] = 0
            f = nxt
            continue
        i = emit(pk, fl, fr, cfg, h, g, ue, f, psn)
        if has_work(fl, f):
            if pt[p, K.PT_FT] < 0:
                pt[p, K.PT_FH] = f
            else:
                fl[pt[p, K.PT_FT], K.FL_NEXT] = f
            pt[p, K.PT_FT] = f
        else:
            fl[f, K.FL_ACTIVE] = 0
        return i
    return -1


@njit(cache=True)
def wake_flow(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f):
    """Flow ``f`` may send again (window opened, a packet marked for retransmission): put it on
    its port's list if it is off and has work, and try the port."""
    if fl[f, K.FL_ACTIVE] == 0:
        if not has_work(fl, f):
            return
        K.activate(pt, fl, f)
    K.try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, fl[f, K.FL_PORT])


@njit(cache=True)
def mark_lost(fl, cfg, ue, f, psn):
    """Packet ``psn`` left the network without being delivered (NACK, timeout): out of the bytes
    in flight, marked for retransmission. False when it was ACKed or is marked already."""
    k = fl[f, K.FL_UE_OFF] + psn
    st = ue[k, 0]
    if st & (K.UE_ACKED | K.UE_RTX):
        return False
    if st & K.UE_INFL:
        fl[f, K.FL_UE_INFL] -= payload_of(fl, cfg, f, psn) + cfg[K.C_HDR]
    ue[k, 0] = (st & ~K.UE_INFL) | K.UE_RTX
    fl[f, K.FL_UE_RTXN] += 1
    if psn < fl[f, K.FL_UE_RTXP]:
        fl[f, K.FL_UE_RTXP] = psn
    return True


# =================================================================================================
# receiver and sender: ACK / NACK
@njit(cache=True)
def uet_host_receive(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, i):
    """Packet ``i`` reaches a host: data is delivered (once) and ACKed, a trimmed packet NACKed at
    once (§3.6.12 OnRX); an ACK or NACK is processed by its sender."""
    kind = pk[i, K.PK_KIND]
    if kind == K.KIND_DATA or kind == K.KIND_TRIM:
        f = pk[i, K.PK_FLOW]
        if cfg[K.C_UE_RCCC] == 1:
            RC.rx_data(fl, cfg, h, g, ue, f, pk[i, K.PK_UE_PT], kind == K.KIND_TRIM)
        if kind == K.KIND_DATA:
            if cfg[K.C_IB] == 1:  # CBFC: the NIC's receive buffer frees, credits go back
                n = (pk[i, K.PK_SIZE] + cfg[K.C_CREDIT_BYTES] - 1) // cfg[K.C_CREDIT_BYTES]
                p = pk[i, K.PK_PORT]
                K.heap_push(h, g, g[K.G_NOW] + pt[p, K.PT_DELAY], K.EV_CREDIT, n * cfg[K.C_NPORTS] + p)
            if not deliver(pk, fl, cfg, g, ue, f, i):
                if cfg[K.C_UE_RCCC] == 1:  # discarded out of sequence: owed its retransmission
                    RC.rx_data(fl, cfg, h, g, ue, f, 0, True)
                K.pkt_free(pk, g, i)
                return
            g[K.G_ACKS] += 1
        else:
            g[K.G_NACKS] += 1
        # the slot becomes the ACK / NACK: same PSN, EV and retransmission flag, the ECN echo kept
        pk[i, K.PK_KIND] = K.KIND_ACK if kind == K.KIND_DATA else K.KIND_NACK
        pk[i, K.PK_ROW] = fl[f, K.FL_AROW]
        pk[i, K.PK_SIZE] = cfg[K.C_ACK_BYTES]
        pk[i, K.PK_HOP] = 0
        out = apath[fl[f, K.FL_AROW], 0]
        K.fifo_push(pt, pk, out, K.PT_CH, K.PT_CT, i)
        K.try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, out)
        return
    if cfg[K.C_UE_RCCC] == 1:  # the sender heard back (htsim stopSpeculating)
        RC.stop_speculating(fl, pk[i, K.PK_FLOW])
    if kind == K.KIND_ACK:
        on_ack(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, i)
    elif kind == K.KIND_NACK:
        on_nack(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, i)
    elif kind == K.KIND_PULL:
        f = pk[i, K.PK_FLOW]
        RC.on_pull(fl, fr, f, pk[i, K.PK_PAYLOAD])
        wake_flow(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f)
    K.pkt_free(pk, g, i)


@njit(cache=True)
def deliver(pk, fl, cfg, g, ue, f, i):
    """The receiver takes data packet ``i``: its payload counts once (a duplicate is discarded);
    the ACK echoes the newly delivered payload in PK_PAYLOAD (0 for a duplicate). With ordered
    delivery a packet beyond the next expected PSN is discarded without an ACK (False)."""
    psn = pk[i, K.PK_SEQ]
    k = fl[f, K.FL_UE_OFF] + psn
    payload = pk[i, K.PK_PAYLOAD]
    if ue[k, 0] & K.UE_RCVD:
        g[K.G_DISCARD_BYTES] += payload
        pk[i, K.PK_PAYLOAD] = 0
        return True
    if cfg[K.C_UE_ROD] == 1:
        if psn != fl[f, K.FL_UE_REXP]:
            g[K.G_UE_OOS_BYTES] += payload
            return False
        fl[f, K.FL_UE_REXP] = psn + 1
    ue[k, 0] |= K.UE_RCVD
    fl[f, K.FL_RCVD] += payload
    fl[f, K.FL_RX_PKTS] += 1
    g[K.G_DELIV_BYTES] += payload
    if fl[f, K.FL_RCVD] >= fl[f, K.FL_SIZE]:
        fl[f, K.FL_RX_T] = g[K.G_NOW]
    return True


@njit(cache=True)
def on_ack(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, i):
    """ACK ``i`` reaches its sender (§3.6.12 OnACK): the packet leaves the bytes in flight and the
    retransmission list, the flow's ACKed bytes grow, NSCC updates the window."""
    f = pk[i, K.PK_FLOW]
    psn = pk[i, K.PK_SEQ]
    k = fl[f, K.FL_UE_OFF] + psn
    st = ue[k, 0]
    now = g[K.G_NOW]
    LB.process_ev(fl, cfg, f, pk[i, K.PK_UE_EV], LB.FB_ECN if pk[i, K.PK_ECN] else LB.FB_GOOD)
    if st & K.UE_ACKED:
        return
    wire = payload_of(fl, cfg, f, psn) + cfg[K.C_HDR]
    if st & K.UE_RTX:
        fl[f, K.FL_UE_RTXN] -= 1
    if st & K.UE_INFL:
        fl[f, K.FL_UE_INFL] -= wire
    ue[k, 0] = (st | K.UE_ACKED) & ~(K.UE_RTX | K.UE_INFL)
    fl[f, K.FL_ACKED] += payload_of(fl, cfg, f, psn)
    fl[f, K.FL_PROGRESS_T] = now
    c = fl[f, K.FL_UE_CACK]
    while c < fl[f, K.FL_UE_NPK] and (ue[fl[f, K.FL_UE_OFF] + c, 0] & K.UE_ACKED) != 0:
        c += 1
    fl[f, K.FL_UE_CACK] = c
    if fl[f, K.FL_ACKED] >= fl[f, K.FL_SIZE] and fl[f, K.FL_DONE_T] < 0:
        fl[f, K.FL_DONE_T] = now
        g[K.G_FLOWS_DONE] += 1
    if cfg[K.C_UE_NSCC] == 1:
        # §3.6.13.1: an RTT sample only when the ACK surely answers the copy whose send time is kept
        retx = pk[i, K.PK_UE_RETX]
        valid = ((st & K.UE_RETX1) == 0 and retx == 0) or ((st & K.UE_RETX2) == 0 and retx == 1)
        newly = wire if pk[i, K.PK_PAYLOAD] > 0 else 0
        nscc_on_ack(fl, fr, cfg, cf, f, newly, pk[i, K.PK_ECN], valid, now - ue[k, 1], now)
    wake_flow(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f)


@njit(cache=True)
def on_nack(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, i):
    """NACK ``i`` (the packet was trimmed) reaches its sender (§3.6.12 OnNACK): the packet is
    marked for retransmission; NSCC reacts (NSCC.OnNACK)."""
    f = pk[i, K.PK_FLOW]
    psn = pk[i, K.PK_SEQ]
    fb = LB.FB_NACK
    if pk[i, K.PK_UE_LAST] == 1:  # htsim's last_hop rule: the receiver's link is no path choice
        fb = LB.FB_ECN if pk[i, K.PK_ECN] else LB.FB_GOOD
    LB.process_ev(fl, cfg, f, pk[i, K.PK_UE_EV], fb)
    if cfg[K.C_UE_ROD] == 1 and stale(ue[fl[f, K.FL_UE_OFF] + psn, 0], pk[i, K.PK_UE_RETX]):
        return
    if not mark_lost(fl, cfg, ue, f, psn):
        return
    if cfg[K.C_UE_ROD] == 1:
        go_back(fl, cfg, ue, f, psn + 1)
    if cfg[K.C_UE_NSCC] == 1:
        nscc_on_nack(fl, fr, cfg, cf, f, payload_of(fl, cfg, f, psn) + cfg[K.C_HDR], g[K.G_NOW])
    wake_flow(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f)


@njit(cache=True)
def uet_on_pull_event(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, r):
    """Receiver host ``r``'s RCCC pull pacer is due (:func:`aifabric.sim.uet_rccc.pacer`)."""
    RC.pacer(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, r)


@njit(cache=True, inline="always")
def stale(st, retx):
    """A NACK about a copy older than the one in flight (the packet was sent again since)."""
    return retx == 0 and (st & K.UE_RETX1) != 0


@njit(cache=True)
def go_back(fl, cfg, ue, f, psn0):
    """Ordered delivery: the receiver discards everything after a lost packet, so every packet in
    flight from ``psn0`` on is marked for retransmission (go-back-N at the sender)."""
    off = fl[f, K.FL_UE_OFF]
    for psn in range(psn0, fl[f, K.FL_UE_NEXT]):
        if ue[off + psn, 0] & K.UE_INFL:
            mark_lost(fl, cfg, ue, f, psn)


@njit(cache=True)
def uet_on_rto(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f):
    """Flow ``f``'s retransmission timer: every packet in flight for the timeout or longer is
    declared lost (§3.6.12 OnInferredLoss) and marked for retransmission; the timer is re-armed
    at the oldest packet still in flight."""
    if fl[f, K.FL_DONE_T] >= 0:
        return
    now = g[K.G_NOW]
    rto = cfg[K.C_UE_RTO]
    off = fl[f, K.FL_UE_OFF]
    oldest = -1
    lost = False
    first = -1
    for psn in range(fl[f, K.FL_UE_CACK], fl[f, K.FL_UE_NEXT]):
        if (ue[off + psn, 0] & K.UE_INFL) == 0:
            continue
        t = ue[off + psn, 1]
        if now - t >= rto:
            mark_lost(fl, cfg, ue, f, psn)
            g[K.G_UE_TIMEOUTS] += 1
            LB.process_ev(fl, cfg, f, ue[off + psn, 0] >> UE_EV_SHIFT, LB.FB_TIMEOUT)
            if cfg[K.C_UE_RCCC] == 1:  # credit to send it again (htsim asks with an RTS packet)
                fl[f, K.FL_UE_CREDIT] += payload_of(fl, cfg, f, psn) + cfg[K.C_HDR]
            lost = True
            first = psn if first < 0 else first
            if cfg[K.C_UE_NSCC] == 1:
                nscc_on_inferred_loss(fl, fr, cfg, f, payload_of(fl, cfg, f, psn) + cfg[K.C_HDR])
        elif oldest < 0 or t < oldest:
            oldest = t
    if lost and cfg[K.C_UE_ROD] == 1:
        go_back(fl, cfg, ue, f, first + 1)
        oldest = -1
    if oldest >= 0:
        fl[f, K.FL_RTO_PENDING] = 1
        K.heap_push(h, g, oldest + rto, K.EV_RTO, f)
    if lost:
        wake_flow(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, f)


# =================================================================================================
# NSCC (§3.6.13): the window of flow f in fr[f, FR_UE_*], its integer state in fl[f, FL_UE_*]
@njit(cache=True)
def nscc_on_ack(fl, fr, cfg, cf, f, newly, ecn, valid, rtt, now):
    """NSCC.OnACK (§3.6.13.5): count the bytes, then react to the ECN echo and the delay."""
    fr[f, K.FR_UE_IGNORED] += newly
    fr[f, K.FR_UE_RECV] += newly
    fr[f, K.FR_UE_ACHIEVED] += newly
    if not valid:
        return
    if rtt < fl[f, K.FL_UE_BASE_RTT]:  # update_base_rtt (§3.6.13.6): max_wnd follows the base RTT
        fl[f, K.FL_UE_BASE_RTT] = rtt
        fr[f, K.FR_UE_MAXWND] = 1.5 * fr[f, K.FR_LINE] * rtt / (8.0 * K.PS_PER_S)
    delay = float(rtt - fl[f, K.FL_UE_BASE_RTT])
    update_delay(fr, cf, f, delay)
    if quick_adapt(fl, fr, cfg, f, False, ecn, delay, now):
        return
    tq = cfg[K.C_UE_TQD]
    if ecn == 0 and delay >= tq:
        fr[f, K.FR_UE_INC] += cf[K.CF_UE_FI] * newly  # fair_increase
    elif ecn == 0:
        proportional_increase(fl, fr, cfg, cf, f, newly, delay)
    elif delay >= tq:
        multiplicative_decrease(fl, fr, cfg, cf, f, now)
    if now - fl[f, K.FL_UE_LAST_ADJ] >= cfg[K.C_UE_ADJ_T] or fr[f, K.FR_UE_RECV] > cfg[K.C_UE_ADJ_BYTES]:
        fulfill_adjustment(fl, fr, cfg, cf, f, now)


@njit(cache=True)
def nscc_on_nack(fl, fr, cfg, cf, f, wire, now):
    """NSCC.OnNACK for a trim NACK (§3.6.13.5): the delay sample is config_base_rtt, the bytes are
    ignored by quick_adapt's count; quick_adapt runs, or else the window loses one packet."""
    update_delay(fr, cf, f, float(cfg[K.C_UE_BASE_RTT]))
    fr[f, K.FR_UE_IGNORED] += wire
    fl[f, K.FL_UE_TRIG_QA] = 1
    if not quick_adapt(fl, fr, cfg, f, True, 1, 0.0, now):
        shrink(fr, cfg, f, wire)


@njit(cache=True)
def nscc_on_inferred_loss(fl, fr, cfg, f, wire):
    """NSCC.OnInferredLoss (§3.6.13.5): the window loses one packet."""
    shrink(fr, cfg, f, wire)
    fr[f, K.FR_UE_IGNORED] += wire


@njit(cache=True, inline="always")
def shrink(fr, cfg, f, wire):
    """cwnd = max(cwnd - nominal_pktsize, MTU)."""
    w = fr[f, K.FR_UE_CWND] - wire
    mtu = cfg[K.C_MTU] + cfg[K.C_HDR]
    fr[f, K.FR_UE_CWND] = w if w > mtu else float(mtu)


@njit(cache=True, inline="always")
def update_delay(fr, cf, f, delay):
    """The average queueing delay: an EWMA of the samples (the spec leaves it to the implementation)."""
    a = cf[K.CF_UE_DELAY_A]
    fr[f, K.FR_UE_AVG_DELAY] = a * delay + (1.0 - a) * fr[f, K.FR_UE_AVG_DELAY]


@njit(cache=True)
def proportional_increase(fl, fr, cfg, cf, f, newly, delay):
    """proportional_increase (§3.6.13.6): fast_increase when the delay stays ~0 for a window,
    otherwise alpha × bytes × (target_qdelay - delay) towards the next adjustment."""
    if delay < cfg[K.C_UE_FI_DELAY]:
        fr[f, K.FR_UE_FI_COUNT] += newly
        if fr[f, K.FR_UE_FI_COUNT] > fr[f, K.FR_UE_CWND] or fl[f, K.FL_UE_INCREASE] == 1:
            w = fr[f, K.FR_UE_CWND] + newly * cf[K.CF_UE_FI_SCALE]
            fr[f, K.FR_UE_CWND] = w if w < fr[f, K.FR_UE_MAXWND] else fr[f, K.FR_UE_MAXWND]
            fl[f, K.FL_UE_INCREASE] = 1
            return
    else:
        fr[f, K.FR_UE_FI_COUNT] = 0.0
    fl[f, K.FL_UE_INCREASE] = 0
    fr[f, K.FR_UE_INC] += cf[K.CF_UE_ALPHA] * newly * (cfg[K.C_UE_TQD] - delay)


@njit(cache=True)
def multiplicative_decrease(fl, fr, cfg, cf, f, now):
    """multiplicative_decrease (§3.6.13.6): at most once per base RTT, cwnd × max(1 - gamma ×
    (avg_delay - target) / avg_delay, max_md_jump), not below one MTU."""
    fl[f, K.FL_UE_INCREASE] = 0
    fr[f, K.FR_UE_FI_COUNT] = 0.0
    avg = fr[f, K.FR_UE_AVG_DELAY]
    tq = cfg[K.C_UE_TQD]
    if avg > tq and now - fl[f, K.FL_UE_LAST_DEC] > fl[f, K.FL_UE_BASE_RTT]:
        m = 1.0 - cf[K.CF_UE_GAMMA] * (avg - tq) / avg
        if m < cf[K.CF_UE_MD_JUMP]:
            m = cf[K.CF_UE_MD_JUMP]
        w = fr[f, K.FR_UE_CWND] * m
        mtu = float(cfg[K.C_MTU] + cfg[K.C_HDR])
        fr[f, K.FR_UE_CWND] = w if w > mtu else mtu
        fl[f, K.FL_UE_LAST_DEC] = now


@njit(cache=True)
def quick_adapt(fl, fr, cfg, f, is_loss, ecn, qdelay, now):
    """quick_adapt (§3.6.13.6): once per base RTT + target_qdelay, after a trim, a loss or a delay
    above qa_threshold, set cwnd to the bytes achieved in the last period (when that is below
    max_wnd >> qa_gate), then ignore the ECN of the bytes that were in flight. True when it ran or
    is ignoring: the caller skips the other window updates."""
    if cfg[K.C_UE_QA] == 0:
        return False
    done = False
    if fr[f, K.FR_UE_IGNORED] < fr[f, K.FR_UE_IGNORE] and ecn == 1:
        done = True
    elif now >= fl[f, K.FL_UE_QA_END]:
        trig = fl[f, K.FL_UE_TRIG_QA] == 1 or is_loss or qdelay > cfg[K.C_UE_QA_THRESH]
        gate = fr[f, K.FR_UE_MAXWND] / (2.0 ** cfg[K.C_UE_QA_GATE])
        if fl[f, K.FL_UE_QA_END] != 0 and trig and fr[f, K.FR_UE_ACHIEVED] < gate:
            mtu = float(cfg[K.C_MTU] + cfg[K.C_HDR])
            a = fr[f, K.FR_UE_ACHIEVED]
            fr[f, K.FR_UE_CWND] = a if a > mtu else mtu
            fr[f, K.FR_UE_IGNORE] = float(fl[f, K.FL_UE_INFL])
            fr[f, K.FR_UE_IGNORED] = 0.0
            fl[f, K.FL_UE_TRIG_QA] = 0
            done = True
        fr[f, K.FR_UE_ACHIEVED] = 0.0
        fl[f, K.FL_UE_QA_END] = now + fl[f, K.FL_UE_BASE_RTT] + cfg[K.C_UE_TQD]
    if done:
        fr[f, K.FR_UE_INC] = 0.0
        fr[f, K.FR_UE_RECV] = 0.0
    return done


@njit(cache=True)
def fulfill_adjustment(fl, fr, cfg, cf, f, now):
    """fulfill_adjustment (§3.6.13.6): apply the accumulated increase (inc_bytes / cwnd), add eta
    once per adjust period, cap at max_wnd."""
    w = fr[f, K.FR_UE_CWND]
    w += fr[f, K.FR_UE_INC] / w
    if now - fl[f, K.FL_UE_LAST_ADJ] >= cfg[K.C_UE_ADJ_T]:
        fl[f, K.FL_UE_LAST_ADJ] = now
        w += cf[K.CF_UE_ETA]
    fr[f, K.FR_UE_CWND] = w if w < fr[f, K.FR_UE_MAXWND] else fr[f, K.FR_UE_MAXWND]
    fr[f, K.FR_UE_INC] = 0.0
    fr[f, K.FR_UE_RECV] = 0.0
