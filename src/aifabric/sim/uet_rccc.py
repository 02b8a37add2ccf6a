"""UET receiver credit-based congestion control (RCCC): ``fabric.congestion_control: rccc`` (the
receiver's credits alone) or ``nscc-rccc`` (both: a packet needs window and credit).

UEC 1.0 describes RCCC in its congestion-management section (CMS), beside NSCC: the receiver paces
credit to its senders at its own link rate, so an incast converges on the receiver's link without
a standing queue; a sender needs credit for every byte it sends after its first (speculative)
window. The rules below follow the UEC's htsim (``uec.cpp``: ``UecPullPacer``, ``UecSink::pull``,
``UecSrc::computePullTarget`` / ``handlePull`` / ``stopSpeculating``; commit in
:data:`aifabric.sim.uet_setup.HTSIM_COMMIT`):

* a sender starts with ``max_wnd`` (1.5 BDP) of speculative credit and sends at most that much
  before it hears back; its first ACK, NACK or pull ends the speculation (left-over credit is
  dropped);
* every data packet carries the sender's *pull target*, the cumulative credit it asks for:
  credit granted so far + min(bytes left to send, max_wnd) − credit in hand (one MTU at least
  while speculating);
* each receiver has one pull pacer: round robin over its flows with credit outstanding, it grants
  up to 4 MTU-sized packets per pull (htsim's ``_mtus_per_pull``, "as per default in UEC spec")
  and waits the grant's serialisation time at its link rate before the next pull (1 KB's time
  for an empty grant); a pull is a control packet on the ACK path;
* a trimmed packet that reaches the receiver is owed credit for its retransmission, granted
  before new data.

Simplified: no slow (speculative) pulls to idle senders, no RTS packets — a retransmission
timeout gives the sender back credit for the packets it declares lost (htsim asks the receiver
with an RTS instead), no oversubscription or PCIe rate scaling of the pacer; one pacer per
receiver host. Per-flow state in ``fl[f, FL_UE_CREDIT .. FL_UE_PNEXT]``; each receiver's list
head / tail and pending flag in two rows of ``ue`` from ``cfg[C_UE_HOST0]``.
"""

from __future__ import annotations

from numba import njit

from aifabric.sim import kernel as K

EMPTY_PULL_GAP_BYTES = 1024  # htsim: the pacer's gap after an empty grant


@njit(cache=True, inline="always")
def wire(cfg):
    return cfg[K.C_MTU] + cfg[K.C_HDR]


@njit(cache=True)
def pull_target(fl, fr, cfg, f):
    """htsim computePullTarget: the cumulative credit flow ``f`` asks for."""
    left = fl[f, K.FL_SIZE] - fl[f, K.FL_SENT] + (fl[f, K.FL_UE_NPK] - fl[f, K.FL_UE_NEXT]) * cfg[K.C_HDR]
    maxwnd = int(fr[f, K.FR_UE_MAXWND])
    want = (left if left < maxwnd else maxwnd) - fl[f, K.FL_UE_CREDIT]
    if fl[f, K.FL_UE_SPEC] == 1 and want < wire(cfg) and left > 0:
        want = wire(cfg)
    return fl[f, K.FL_UE_PULLED] + (want if want > 0 else 0)


@njit(cache=True, inline="always")
def stop_speculating(fl, f):
    """The sender heard back: drop what is left of its speculative credit."""
    if fl[f, K.FL_UE_SPEC] == 1:
        fl[f, K.FL_UE_SPEC] = 0
        if fl[f, K.FL_UE_CREDIT] > 0:
            fl[f, K.FL_UE_CREDIT] = 0


@njit(cache=True)
def on_pull(fl, fr, f, pullno):
    """htsim handlePull: credit grows by what the pull grants beyond the last, up to max_wnd."""
    stop_speculating(fl, f)
    if pullno > fl[f, K.FL_UE_PULLED]:
        c = fl[f, K.FL_UE_CREDIT] + pullno - fl[f, K.FL_UE_PULLED]
        m = int(fr[f, K.FR_UE_MAXWND])
        fl[f, K.FL_UE_CREDIT] = c if c < m else m
        fl[f, K.FL_UE_PULLED] = pullno


@njit(cache=True)
def _request(fl, cfg, h, g, ue, f):
    """Put flow ``f`` on its receiver's pull list; start the pacer if it is idle."""
    if fl[f, K.FL_UE_INPULL] == 1 or fl[f, K.FL_DONE_T] >= 0:
        return
    r = fl[f, K.FL_DST]
    row = cfg[K.C_UE_HOST0] + 2 * r
    fl[f, K.FL_UE_INPULL] = 1
    fl[f, K.FL_UE_PNEXT] = -1
    if ue[row, 0] < 0:
        ue[row, 0] = f
    else:
        fl[ue[row, 1], K.FL_UE_PNEXT] = f
    ue[row, 1] = f
    if ue[row + 1, 0] == 0:
        ue[row + 1, 0] = 1
        K.heap_push(h, g, g[K.G_NOW], K.EV_UE_PULL, r)


@njit(cache=True)
def rx_data(fl, cfg, h, g, ue, f, target, trimmed):
    """The receiver hears pull target ``target`` (a data packet or a trimmed header); a trimmed
    packet is owed the credit of its retransmission (htsim handlePullTarget / processTrimmed)."""
    if target > fl[f, K.FL_UE_HPT]:
        fl[f, K.FL_UE_HPT] = target
    if trimmed:
        fl[f, K.FL_UE_OWED] += wire(cfg)
    if fl[f, K.FL_UE_OWED] > 0 or fl[f, K.FL_UE_HPT] > fl[f, K.FL_UE_LPULL]:
        _request(fl, cfg, h, g, ue, f)


@njit(cache=True)
def _grant(fl, cfg, f):
    """htsim UecSink::pull: owed credit first, then up to one pull's worth towards the target."""
    per = cfg[K.C_UE_PULL_BYTES]
    owed = fl[f, K.FL_UE_OWED]
    if owed > 0:
        x = owed if owed < per else per
        fl[f, K.FL_UE_OWED] = owed - x
    else:
        prev = fl[f, K.FL_UE_LPULL]
        new = prev + per
        if new > fl[f, K.FL_UE_HPT]:
            new = fl[f, K.FL_UE_HPT] if fl[f, K.FL_UE_HPT] > prev else prev
        x = new - prev
    fl[f, K.FL_UE_LPULL] += x
    return x


@njit(cache=True)
def pacer(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, apath, r):
    """Receiver ``r``'s pull pacer: grant the next flow on its list, send the pull, wait the
    grant's time at the receiver's link rate."""
    row = cfg[K.C_UE_HOST0] + 2 * r
    f = ue[row, 0]
    while f >= 0 and fl[f, K.FL_DONE_T] >= 0:  # finished flows leave the list
        fl[f, K.FL_UE_INPULL] = 0
        f = fl[f, K.FL_UE_PNEXT]
        ue[row, 0] = f
    if f < 0:
        ue[row, 1] = -1
        ue[row + 1, 0] = 0
        return
    ue[row, 0] = fl[f, K.FL_UE_PNEXT]
    if ue[row, 0] < 0:
        ue[row, 1] = -1
    fl[f, K.FL_UE_INPULL] = 0
    x = _grant(fl, cfg, f)
    g[K.G_UE_PULLS] += 1
    if fl[f, K.FL_UE_OWED] > 0 or fl[f, K.FL_UE_HPT] > fl[f, K.FL_UE_LPULL]:
        _request(fl, cfg, h, g, ue, f)
    out = apath[fl[f, K.FL_AROW], 0]
    i = K.pkt_alloc(pk, g)
    pk[i, K.PK_FLOW] = f
    pk[i, K.PK_ROW] = fl[f, K.FL_AROW]
    pk[i, K.PK_KIND] = K.KIND_PULL
    pk[i, K.PK_SIZE] = cfg[K.C_ACK_BYTES]
    pk[i, K.PK_PAYLOAD] = fl[f, K.FL_UE_LPULL]
    pk[i, K.PK_HOP] = 0
    pk[i, K.PK_ECN] = 0
    K.fifo_push(pt, pk, out, K.PT_CH, K.PT_CT, i)
    K.try_send(pt, pk, fl, fr, cfg, cf, swused, h, g, log, ue, out)
    gap = x if x > 0 else EMPTY_PULL_GAP_BYTES
    K.heap_push(h, g, g[K.G_NOW] + gap * 8 * K.PS_PER_S // pt[out, K.PT_RATE], K.EV_UE_PULL, r)
