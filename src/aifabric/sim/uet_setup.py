"""The Ultra Ethernet transport's control plane: ``fabric.uet`` → the kernel's UET tables and
parameters (the data plane is :mod:`aifabric.sim.uet`), and the run's UET counters.

Defaults and their sources (docs/ultra-ethernet.md has the table):

* ``config_base_rtt``: the longest unloaded round trip among the scenario's flows — an MTU packet
  store-and-forward over the data path plus the ACK back (UEC 1.0 §3.6.13.3 defines it over the
  fabric's longest path; the UEC htsim, ``main_uec.cpp`` ``calculate_rtt``, takes the fat tree's
  diameter: the same on the shipped scenarios, whose flows cross the core).
* ``target_qdelay`` 0.75 × base RTT with trimming, 1.0 × without; ``qa_threshold`` 4 × target
  without trimming, off with it (§3.6.13.3).
* alpha, fi, eta, fi_scale from the BDP scaling factors against the 100 Gb/s × 12 µs reference
  network; gamma 0.8, max_md_jump 0.5, the delay EWMA gain 0.0125, adjust period = base RTT,
  adjust bytes = 8 MTU, qa_gate 3, fast_increase below 1 µs of delay: htsim ``uec.cpp``
  ``initNsccParams`` / ``multiplicative_decrease`` / ``fast_increase`` (commit in
  :data:`HTSIM_COMMIT`); max_wnd = 1.5 × BDP (§3.6.13.6 ``update_base_rtt``), cwnd starts there
  (Table 3-77).
* queue limit 1 × BDP with trimming, 5 × BDP without (htsim ``DEFAULT_TRIMMING_QUEUESIZE_FACTOR`` /
  ``DEFAULT_NONTRIMMING_QUEUESIZE_FACTOR``; §3.6.17 recommends a tail-drop threshold of 5 × BDP),
  in whole MTU packets; ECN marking from 0.2 × BDP to 0.8 × BDP with probability rising to 1
  (htsim ``main_uec.cpp`` and ``CompositeQueue::decide_ECN``); the retransmission timeout
  15 µs + 6 queue drain times (htsim ``main_uec.cpp``); trimmed packets 64 B (htsim ``trimsize``).
"""

from __future__ import annotations

import math

import numpy as np

# the UEC's htsim (github.com/ultraethernet/uet-htsim) read for the defaults above
HTSIM_COMMIT = "40ccb0526bb6297eeb22ab33f9934fb35278dbaf"
REF_RATE_BPS = 100e9  # NSCC's reference network: 100 Gb/s ...
REF_RTT_PS = 12e6  # ... and 12 µs base RTT (htsim initNsccParams)
PS = 1e12
# fabric.uet.load_balancer in the order of aifabric.sim.uet_lb's LB_* codes (this module imports no
# numba: an ahead-of-time run never loads it)
LB_NAMES = ("oblivious", "bitmap", "reps", "mixed")
MTUS_PER_PULL = 4  # RCCC: credit per pull, in MTU-sized packets (htsim UecSink::_mtus_per_pull)


def state_columns(lb: int, evs: int) -> int:
    """Columns of per-flow load-balancer state beyond ``FL_UE_LB0``: a penalty and a ring entry
    per entropy value, none for oblivious spraying."""
    return 0 if lb == 0 else 2 * evs


def uet_defaults(fab, base_rtt_ps: int, line_bps: float) -> dict:
    """Every UET parameter of ``fab`` (``fabric.uet``), given or defaulted, in kernel units."""
    u = fab.uet
    wire = fab.mtu_bytes + fab.header_bytes
    base = int(u.nscc.base_rtt or base_rtt_ps)
    bdp = line_bps / 8 * base / PS
    bdp_pkts = math.ceil(bdp / wire)
    qlim = int(u.queue_limit) if u.queue_limit is not None else bdp_pkts * (1 if u.trimming else 5) * wire
    tq = int(u.nscc.target_qdelay or (0.75 if u.trimming else 1.0) * base)
    scale_a = bdp / (REF_RATE_BPS / 8 * REF_RTT_PS / PS)
    scale_b = tq / REF_RTT_PS
    mss = fab.mtu_bytes
    return {
        "trimming": bool(u.trimming),
        "load_balancer": u.load_balancer,
        "delivery": u.delivery,
        "cbfc": bool(u.cbfc),
        "trim_bytes": int(u.trim_size),
        "ev_count": int(u.ev_count),
        "queue_limit_bytes": qlim,
        "rto_ps": int(u.rto) if u.rto is not None else int(15e6 + qlim * 6 * 8 * PS / line_bps),
        "congestion_control": fab.congestion_control,
        "nscc": fab.congestion_control in ("nscc", "nscc-rccc"),
        "rccc": fab.congestion_control in ("rccc", "nscc-rccc"),
        "base_rtt_ps": base,
        "target_qdelay_ps": tq,
        "max_wnd_bytes": 1.5 * bdp,
        "alpha": 4.0 * mss * scale_a * scale_b / tq,
        "fi_bytes": 5 * mss * scale_a,
        "eta_bytes": 0.15 * mss * scale_a,
        "fi_scale": 0.25 * scale_a,
        "gamma": float(u.nscc.gamma),
        "max_md_jump": float(u.nscc.max_md_jump),
        "delay_ewma": 0.0125,
        "adjust_period_ps": base,
        "adjust_bytes": 8 * wire,
        "quick_adapt": bool(u.nscc.quick_adapt),
        "qa_gate": 3,
        "qa_threshold_ps": 10**17 if u.trimming else 4 * tq,
        "fast_increase_delay_ps": 10**6,
        "ecn_kmin_bytes": math.ceil(0.2 * bdp_pkts) * wire,
        "ecn_kmax_bytes": math.ceil(0.8 * bdp_pkts) * wire,
        "ecn_pmax": 1.0,
    }


def configure(K, fab, cfg, cf, p: dict) -> None:
    """Write the parameters ``p`` (:func:`uet_defaults`) into the kernel's configuration; ECN
    thresholds the file leaves out take the UET defaults."""
    cfg[K.C_UET] = 1
    cfg[K.C_LOSSY] = 0  # recovery is UET's own (selective), never go-back-N
    cfg[K.C_UE_TRIM] = int(p["trimming"])
    cfg[K.C_UE_QLIM] = p["queue_limit_bytes"]
    cfg[K.C_UE_EVS] = p["ev_count"]
    cfg[K.C_UE_LB] = LB_NAMES.index(p["load_balancer"])
    cfg[K.C_UE_ROD] = int(p["delivery"] == "rod")
    cfg[K.C_UE_TRIM_BYTES] = p["trim_bytes"]
    cfg[K.C_UE_RTO] = p["rto_ps"]
    cfg[K.C_UE_NSCC] = int(p["nscc"])
    cfg[K.C_UE_RCCC] = int(p["rccc"])
    cfg[K.C_UE_PULL_BYTES] = MTUS_PER_PULL * (fab.mtu_bytes + fab.header_bytes)
    cfg[K.C_UE_HOST0] = 0  # the pull pacers' rows open the ue table (flow_tables)
    cfg[K.C_UE_BASE_RTT] = p["base_rtt_ps"]
    cfg[K.C_UE_TQD] = p["target_qdelay_ps"]
    cfg[K.C_UE_ADJ_T] = p["adjust_period_ps"]
    cfg[K.C_UE_ADJ_BYTES] = p["adjust_bytes"]
    cfg[K.C_UE_QA] = int(p["quick_adapt"])
    cfg[K.C_UE_QA_GATE] = p["qa_gate"]
    cfg[K.C_UE_QA_THRESH] = p["qa_threshold_ps"]
    cfg[K.C_UE_FI_DELAY] = p["fast_increase_delay_ps"]
    cf[K.CF_UE_ALPHA] = p["alpha"]
    cf[K.CF_UE_FI] = p["fi_bytes"]
    cf[K.CF_UE_ETA] = p["eta_bytes"]
    cf[K.CF_UE_FI_SCALE] = p["fi_scale"]
    cf[K.CF_UE_GAMMA] = p["gamma"]
    cf[K.CF_UE_MD_JUMP] = p["max_md_jump"]
    cf[K.CF_UE_DELAY_A] = p["delay_ewma"]
    if cfg[K.C_ECN]:
        cfg[K.C_KMIN] = fab.ecn.kmin if fab.ecn.kmin is not None else p["ecn_kmin_bytes"]
        cfg[K.C_KMAX] = max(
            fab.ecn.kmax if fab.ecn.kmax is not None else p["ecn_kmax_bytes"], cfg[K.C_KMIN] + 1
        )
        cf[K.CF_PMAX] = fab.ecn.pmax if fab.ecn.pmax is not None else p["ecn_pmax"]


def flow_tables(K, fl, fr, p: dict, mtu: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``fl`` / ``fr`` widened by the UET columns and initialised (a seeded first entropy value
    and round order per flow, cwnd = max_wnd scaled to the flow's line rate; the load balancer's
    per-EV state after them), and the per-packet table ``ue``."""
    nf = fl.shape[0]
    npk = np.maximum(-(-fl[:, K.FL_SIZE] // mtu), 1)
    # with RCCC two rows per receiver host first (its pull pacer: list head / tail, pending)
    host_rows = 2 * (int(fl[:, K.FL_DST].max()) + 1) if p["rccc"] and nf else 0
    off = host_rows + (np.concatenate([[0], np.cumsum(npk)[:-1]]) if nf else np.zeros(0, np.int64))
    evs = p["ev_count"]
    ufl = np.zeros((nf, K.FL_UE_W + state_columns(LB_NAMES.index(p["load_balancer"]), evs)), np.int64)
    ufl[:, K.FL_UE_OFF - K.FL_UE0] = off
    ufl[:, K.FL_UE_NPK - K.FL_UE0] = npk
    rng = np.random.default_rng(seed)
    ufl[:, K.FL_UE_EV - K.FL_UE0] = rng.integers(0, evs, nf)
    ufl[:, K.FL_UE_XOR - K.FL_UE0] = rng.integers(0, evs, nf)
    ufl[:, K.FL_UE_LAST_DEC - K.FL_UE0] = fl[:, K.FL_START]
    ufl[:, K.FL_UE_LAST_ADJ - K.FL_UE0] = fl[:, K.FL_START]
    ufl[:, K.FL_UE_BASE_RTT - K.FL_UE0] = p["base_rtt_ps"]
    ufr = np.zeros((nf, K.FR_UE_W), np.float64)
    line = fr[:, K.FR_LINE]
    maxwnd = 1.5 * line / 8 * p["base_rtt_ps"] / PS
    ufr[:, K.FR_UE_CWND - K.FR_UE0] = maxwnd
    ufr[:, K.FR_UE_MAXWND - K.FR_UE0] = maxwnd
    if p["rccc"]:  # a speculative first window of credit (htsim: _credit = max_wnd)
        ufl[:, K.FL_UE_CREDIT - K.FL_UE0] = maxwnd.astype(np.int64)
        ufl[:, K.FL_UE_SPEC - K.FL_UE0] = 1
    ue = np.zeros((max(host_rows + (int(npk.sum()) if nf else 0), 1), 2), np.int64)
    ue[0:host_rows:2] = -1  # empty pull lists
    return np.concatenate([fl, ufl], axis=1), np.concatenate([fr, ufr], axis=1), ue


def report(K, st) -> dict:
    """The run's UET counters and parameters (``engine.uet`` in ``--json``)."""
    g, p = st.g, st.info["uet"]
    return {
        "trimmed_packets": int(g[K.G_UE_TRIMS]),
        "trimmed_payload_bytes": int(g[K.G_UE_TRIM_BYTES]),
        "timeouts": int(g[K.G_UE_TIMEOUTS]),
        "retransmitted_packets": int(g[K.G_RETX]),
        "retransmitted_bytes": int(g[K.G_UE_RTX_BYTES]),
        "duplicate_bytes": int(g[K.G_DISCARD_BYTES]),
        "out_of_sequence_bytes": int(g[K.G_UE_OOS_BYTES]),
        "pulls": int(g[K.G_UE_PULLS]),
        "trimming": p["trimming"],
        "load_balancer": p["load_balancer"],
        "delivery": p["delivery"],
        "cbfc": p["cbfc"],
        "ev_count": p["ev_count"],
        "queue_limit_bytes": p["queue_limit_bytes"],
        "rto_us": p["rto_ps"] / 1e6,
        "congestion_control": p["congestion_control"],
        "base_rtt_us": p["base_rtt_ps"] / 1e6,
        "target_qdelay_us": p["target_qdelay_ps"] / 1e6,
        "max_wnd_bytes": round(p["max_wnd_bytes"], 1),
        "ecn_kmin_bytes": int(st.cfg[K.C_KMIN]),
        "ecn_kmax_bytes": int(st.cfg[K.C_KMAX]),
    }
