"""UET load balancing: which entropy value (EV) a sender gives its next packet, and what it learns
from the EVs its ACKs, NACKs and timeouts report (``fabric.uet.load_balancer``).

UEC 1.0 leaves the choice to the implementation: §3.6.12 gives the hooks (``GetSendParams`` picks
a packet's EV; ``process_ev`` is called with the EV of every ACK, NACK and inferred loss and may
do nothing — blind, oblivious spraying) and §3.6.16 describes EV-feedback load balancing: an EV
whose packets came back ECN-marked, trimmed or lost is avoided, EVs whose packets came back clean
are used again. The algorithms below are those of the UEC's own htsim (``uec_mp.cpp``, commit in
:data:`aifabric.sim.uet_setup.HTSIM_COMMIT`), whose default is ``mixed``:

* ``oblivious``: round robin over the ``ev_count`` values from a seeded start (no feedback);
* ``bitmap``: round robin, in an order redrawn every round, skipping EVs with a penalty; feedback
  adds 1 for an ECN-marked ACK, 4 for a trim NACK, 15 (the cap) for a timeout; a skip takes one
  off the first skipped EV of a pick;
* ``reps`` (htsim's ``reps_legacy``; REPS: recycled entropies): the first window round robin, then
  the EVs of clean ACKs reused first in, first out, a random EV when none is kept;
* ``mixed`` (htsim's default): a recycled clean EV when one is kept, else the bitmap's pick.

Simplifications: the kept clean EVs are a ring of ``ev_count`` entries per flow (htsim's list is
unbounded; with a window it stays below the packets in flight, the ring drops the oldest beyond
that); the bitmap's round order is an XOR with a per-round draw when ``ev_count`` is a power of
two (htsim requires one) and a rotation otherwise; draws come from the scenario's seed, not from
C ``rand()``; a timeout reports the lost packet's own EV (htsim reports EV 0, its placeholder);
a trim at the last hop (the switch port to the receiver) reports the ACK's ECN state, not a NACK,
as htsim's ``last_hop`` rule does — a path cannot avoid the receiver's own link.

Per-flow state: ``fl[f, FL_UE_EV]`` the round-robin index, ``FL_UE_XOR`` / ``FL_UE_ROUND`` the
round's order, ``FL_UE_RQH`` / ``FL_UE_RQN`` the ring's head and size; from ``FL_UE_LB0`` the
``ev_count`` penalties, then the ``ev_count`` ring entries (only when the algorithm keeps them).
"""

from __future__ import annotations

from numba import njit

from aifabric.sim import kernel as K

LB_OBLIVIOUS = 0  # codes in the order of aifabric.sim.uet_setup.LB_NAMES
LB_BITMAP = 1
LB_REPS = 2
LB_MIXED = 3
FB_GOOD = 0
FB_ECN = 1
FB_NACK = 2
FB_TIMEOUT = 3
MAX_PENALTY = 15
PENALTY = (0, 1, 4, 15)  # per feedback kind: good, ECN, NACK, timeout (htsim UecMpBitmap)


@njit(cache=True, inline="always")
def _order(fl, evs, f, idx):
    """EV at position ``idx`` of the current round's order."""
    x = fl[f, K.FL_UE_XOR]
    if evs & (evs - 1) == 0:
        return idx ^ x
    return (idx + x) % evs


@njit(cache=True)
def _advance(fl, cfg, f):
    """The next position of the round robin; a new round draws a new order."""
    evs = cfg[K.C_UE_EVS]
    idx = fl[f, K.FL_UE_EV] + 1
    if idx == evs:
        idx = 0
        fl[f, K.FL_UE_ROUND] += 1
        fl[f, K.FL_UE_XOR] = K.tie_hash(cfg[K.C_ROUTE_SALT], f, fl[f, K.FL_UE_ROUND], 7) % evs
    fl[f, K.FL_UE_EV] = idx


@njit(cache=True)
def _bitmap_next(fl, cfg, f):
    """htsim UecMpBitmap::nextEntropy: skip penalised EVs (one penalty off the first skipped)."""
    evs = cfg[K.C_UE_EVS]
    e = _order(fl, evs, f, fl[f, K.FL_UE_EV])
    first = True
    n = 0
    while fl[f, K.FL_UE_LB0 + e] > 0:
        if first:
            fl[f, K.FL_UE_LB0 + e] -= 1
        first = False
        n += 1
        if n > evs:
            break
        _advance(fl, cfg, f)
        e = _order(fl, evs, f, fl[f, K.FL_UE_EV])
    _advance(fl, cfg, f)
    return e


@njit(cache=True)
def _ring_pop(fl, cfg, f):
    """The oldest kept clean EV, or -1."""
    n = fl[f, K.FL_UE_RQN]
    if n == 0:
        return -1
    evs = cfg[K.C_UE_EVS]
    h = fl[f, K.FL_UE_RQH]
    e = fl[f, K.FL_UE_LB0 + evs + h]
    fl[f, K.FL_UE_RQH] = (h + 1) % evs
    fl[f, K.FL_UE_RQN] = n - 1
    return e


@njit(cache=True)
def _ring_push(fl, cfg, f, ev):
    """Keep clean EV ``ev`` (a full ring drops its oldest entry)."""
    evs = cfg[K.C_UE_EVS]
    h = fl[f, K.FL_UE_RQH]
    n = fl[f, K.FL_UE_RQN]
    if n == evs:
        fl[f, K.FL_UE_LB0 + evs + h] = ev
        fl[f, K.FL_UE_RQH] = (h + 1) % evs
        return
    fl[f, K.FL_UE_LB0 + evs + (h + n) % evs] = ev
    fl[f, K.FL_UE_RQN] = n + 1


@njit(cache=True)
def _reps_next(fl, fr, cfg, f):
    """htsim UecMpRepsLegacy::nextEntropy: round robin over the first window, then recycled EVs,
    a random EV when none is kept."""
    evs = cfg[K.C_UE_EVS]
    wnd = evs
    if cfg[K.C_UE_NSCC] == 1:
        wnd = min(evs, int(fr[f, K.FR_UE_CWND] // (cfg[K.C_MTU] + cfg[K.C_HDR])))
    if fl[f, K.FL_UE_NEXT] < wnd:
        e = fl[f, K.FL_UE_EV]
        fl[f, K.FL_UE_EV] = (e + 1) % evs
        return e
    e = _ring_pop(fl, cfg, f)
    if e >= 0:
        return e
    fl[f, K.FL_UE_ROUND] += 1
    return K.tie_hash(cfg[K.C_ROUTE_SALT], f, fl[f, K.FL_UE_ROUND], 11) % evs


@njit(cache=True)
def next_ev(fl, fr, cfg, f):
    """The EV of flow ``f``'s next packet (GetSendParams, §3.6.12)."""
    lb = cfg[K.C_UE_LB]
    if lb == LB_OBLIVIOUS:
        e = fl[f, K.FL_UE_EV]
        fl[f, K.FL_UE_EV] = (e + 1) % cfg[K.C_UE_EVS]
        return e
    if lb == LB_BITMAP:
        return _bitmap_next(fl, cfg, f)
    if lb == LB_REPS:
        return _reps_next(fl, fr, cfg, f)
    e = _ring_pop(fl, cfg, f)
    return e if e >= 0 else _bitmap_next(fl, cfg, f)


@njit(cache=True)
def process_ev(fl, cfg, f, ev, fb):
    """process_ev (§3.6.12): feedback ``fb`` (FB_*) on entropy value ``ev`` of flow ``f``."""
    lb = cfg[K.C_UE_LB]
    if lb == LB_OBLIVIOUS:
        return
    if lb != LB_REPS:  # bitmap, mixed: penalties
        k = K.FL_UE_LB0 + ev
        p = fl[f, k] + PENALTY[fb]
        fl[f, k] = p if p < MAX_PENALTY else MAX_PENALTY
    if fb == FB_GOOD and lb != LB_BITMAP:  # reps, mixed: recycle clean EVs
        _ring_push(fl, cfg, f, ev)
