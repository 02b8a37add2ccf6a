"""The control plane: compile a Scenario into the kernel's tables, run the kernel, build results.

:func:`compile_scenario` turns (Scenario, Topology, flows table) into a :class:`State` holding
every array the data-plane loop (:mod:`aifabric.sim.kernel`) touches. :func:`run_state` drives the
kernel — it returns to Python to grow a table, to report progress, or at the time limit — and
:func:`results_of` turns the final arrays into the ``flows`` / ``ports`` / ``summary`` tables.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from aifabric.errors import InputError
from aifabric.sim.aot_load import kernel as _kernel

# the packet kernel: numba's JIT (aifabric.sim.kernel), or its ahead-of-time build when one matches
# kernel.py (aifabric.sim.aot_load; the same compiled function without importing numba)
K = _kernel()

# kernel routing codes of the modes (aifabric.scenario.ROUTING_MODES): 0 the precomputed path
# (ecmp hash / static LFT), 1 per-packet adaptive, 2 flowlet, 3 oblivious per-packet spraying,
# 4 a scheduled fabric (ingress VOQs, egress-port credit grants, cells sprayed over the fabric)
ROUTING_CODES = {"ecmp": 0, "static": 0, "adaptive-packet": 1, "flowlet": 2, "spray": 3, "scheduled": 4}
# ib-cc: FECN marks + a DCQCN-type reaction; nscc: UET's window (cfg C_UE_NSCC), no rate limiter
CC_CODES = {"none": 0, "dcqcn": 1, "hpcc": 2, "ib-cc": 1, "nscc": 0, "rccc": 0, "nscc-rccc": 0}
ACK_EVERY = 1  # the receiver ACKs every data packet (ns-3 HPCC's default ACK interval of one packet)
RESUME_OFFSET_BYTES = 3 * 1024  # dynamic PFC: RESUME 3 KB below the threshold (ns-3 HPCC, hardware-facts E.1)


@dataclass
class State:
    """All arrays of one run (see :mod:`aifabric.sim.kernel` for the columns)."""

    g: np.ndarray
    cfg: np.ndarray
    cf: np.ndarray
    h: np.ndarray
    pk: np.ndarray
    pt: np.ndarray
    fl: np.ndarray
    fr: np.ndarray
    swused: np.ndarray
    fpath: np.ndarray
    apath: np.ndarray
    nh_off: np.ndarray
    nh_links: np.ndarray
    link_a: np.ndarray
    flowlet: np.ndarray
    log: np.ndarray
    ue: np.ndarray  # UET per-packet state (aifabric.sim.uet); one unused row otherwise
    info: dict = field(default_factory=dict)

    def kernel_args(self):
        return (
            self.g,
            self.cfg,
            self.cf,
            self.h,
            self.pk,
            self.pt,
            self.fl,
            self.fr,
            self.swused,
            self.fpath,
            self.apath,
            self.nh_off,
            self.nh_links,
            self.link_a,
            self.flowlet,
            self.log,
            self.ue,
        )


def _grow_rows(a: np.ndarray, fill) -> np.ndarray:
    n = a.shape[0]
    shape = (n * 2,) + a.shape[1:]
    out = np.full(shape, fill, dtype=a.dtype)
    out[:n] = a
    return out


def _guard_growth(a: np.ndarray, what: str) -> None:
    """Doubling ``a`` must fit in the available memory (else a one-line MemoryLimitError)."""
    from aifabric import memory

    memory.check(a.nbytes * 2, f"growing the {what} table to {2 * a.shape[0]:,} rows", field="sim")


def grow_packets(s: State) -> None:
    _guard_growth(s.pk, "packet")
    n = s.pk.shape[0]
    pk = _grow_rows(s.pk, -1)
    # thread the new rows onto the free list
    pk[n:, K.PK_NEXT] = np.arange(n + 1, 2 * n + 1)
    pk[2 * n - 1, K.PK_NEXT] = s.g[K.G_FREE]
    s.g[K.G_FREE] = n
    s.pk = pk


def grow_heap(s: State) -> None:
    _guard_growth(s.h, "event")
    s.h = _grow_rows(s.h, 0)


def estimate_bytes(num_flows: int, num_links: int, maxhop: int, fabric=None, json_flows: bool = True) -> int:
    """Peak bytes of a packet run before it starts (flows, paths, packets, events, ports and the
    result tables): :func:`compile_scenario`'s tables at their initial sizes (16 packet rows and
    ~33 event slots per flow), routing temporaries, the results and, with ``json_flows``, one
    Python record per flow for ``--json``. The packet and event tables may grow during the run;
    each doubling is checked against the available memory then."""
    hpcc = fabric is not None and fabric.congestion_control == "hpcc"
    uet = fabric is not None and fabric.transport == "uet"
    adaptive = fabric is not None and (ROUTING_CODES[fabric.routing_mode] != 0 or uet)
    pk_cols = K.PK_NUM + (4 * maxhop if hpcc else 0) + (K.PK_UE_W if uet else 0)
    per_flow = (
        8 * 6  # the flows table
        + 8 * 2 * maxhop * 2  # data and ACK paths, and their routing temporaries
        + 8 * (K.FL_NUM + (3 * maxhop if hpcc else 0))
        + 8 * K.FR_NUM
        + (8 * (K.FL_UE_W + K.FR_UE_W) if uet else 0)
        + (8 * 2 * fabric.uet.ev_count if uet and fabric.uet.load_balancer != "oblivious" else 0)
        + 16 * 8 * pk_cols  # packet rows
        + 33 * 3 * 8  # event heap
        + (8 * 2 * maxhop if adaptive else 0)
        + 8 * 18  # result columns
        + (2000 if json_flows else 0)
    )
    per_port = 8 * K.PT_NUM + 8 * 20
    return int(num_flows) * per_flow + 2 * int(num_links) * per_port


def pfc_thresholds(fabric) -> tuple[int, int]:
    """Static (xoff, xon) of ``fabric.pfc`` with the sourced defaults, xon capped at xoff."""
    from aifabric.sim.misconfig import fabric_xoff, fabric_xon

    xoff = fabric_xoff(fabric)
    return xoff, min(fabric_xon(fabric), xoff)


def ib_vl_buffer_bytes(fabric, topo) -> int:
    """Per-VL receive buffer: the scenario's value, else 15 packets or one credit round trip plus
    two packets at the fastest link, whichever is larger (no public Quantum-2 number; reported)."""
    if fabric.ib.vl_buffer is not None:
        return int(fabric.ib.vl_buffer)
    pkt = fabric.mtu_bytes + fabric.header_bytes
    rtt_bytes = int(2 * topo.link_delay_ps.max() * topo.link_rate_bps.max() / 8e12) if topo.num_links else 0
    return max(15 * pkt, rtt_bytes + 2 * pkt)


def int_column(flows, name: str) -> np.ndarray:
    """Column ``name`` of a flows table as int64: a :class:`pandas.DataFrame` (``to_numpy``) or a
    :class:`~aifabric.workload.traffic.FlowColumns` (numpy arrays)."""
    col = flows[name]
    to_numpy = getattr(col, "to_numpy", None)
    return to_numpy(np.int64) if to_numpy is not None else np.asarray(col, dtype=np.int64)


def compile_scenario(scenario, topo, flows) -> State:
    """Build the kernel tables for ``flows`` (a table from :mod:`aifabric.workload.traffic`: a
    DataFrame or :class:`~aifabric.workload.traffic.FlowColumns`)."""
    from aifabric.flow.hashing import flow_sport
    from aifabric.flow.paths import PathModel

    fab = scenario.fabric
    nf = len(flows)
    n_nodes = topo.num_nodes
    nl = topo.num_links
    npt = 2 * nl
    ib = fab.technology == "infiniband"
    routing = fab.routing  # as spelled (reported as engine.routing)
    if ib and routing == "ecmp":
        routing = "static"
    # the canonical mode; InfiniBand has no 5-tuple hash: ecmp there is the SM's static LFT
    mode = "static" if ib and fab.routing_mode == "ecmp" else fab.routing_mode
    src = int_column(flows, "src")
    dst = int_column(flows, "dst")
    size = int_column(flows, "size_bytes")
    start = int_column(flows, "start_ps")
    sport = flow_sport(int_column(flows, "id"))

    same_seed = fab.ecmp_hash == "same-seed"
    cached = (
        None if same_seed else topo.__dict__.get("_flow_path_model")
    )  # one kept by a caller: deterministic
    pm = cached or PathModel(topo, same_hash_seed=same_seed)
    base_routing = "ecmp" if ROUTING_CODES[mode] != 0 else mode
    fpath = pm.route(src, dst, base_routing, scenario.seed, sport).astype(np.int64)
    apath = pm.route(dst, src, base_routing, scenario.seed, sport).astype(np.int64)
    maxhop = max(fpath.shape[1], apath.shape[1]) + 1
    fpath = np.pad(fpath, ((0, 0), (0, maxhop - fpath.shape[1])), constant_values=-1)
    apath = np.pad(apath, ((0, 0), (0, maxhop - apath.shape[1])), constant_values=-1)

    tier = topo.node_tier
    is_host = tier == 0
    # ---- ports
    pt = np.zeros((npt, K.PT_NUM), dtype=np.int64)
    la = topo.link_a.astype(np.int64)
    lb = topo.link_b.astype(np.int64)
    node = np.empty(npt, np.int64)
    peer = np.empty(npt, np.int64)
    node[0::2], node[1::2] = la, lb
    peer[0::2], peer[1::2] = lb, la
    pt[:, K.PT_NODE] = node
    pt[:, K.PT_PEER] = peer
    pt[:, K.PT_RATE] = np.repeat(topo.link_rate_bps.astype(np.int64), 2)
    ideal_rate = None
    if mode == "scheduled":
        # cells on the fabric links: their packet-byte rate under the cell tax (aifabric.flow.scheduled);
        # a flow alone is still judged against the topology's rates (ideal_fct_ps)
        from aifabric.flow.scheduled import scheduled_rates_bps

        ideal_rate = pt[:, K.PT_RATE].copy()
        pt[:, K.PT_RATE] = scheduled_rates_bps(topo, ideal_rate).astype(np.int64)
    pt[:, K.PT_DELAY] = np.repeat(topo.link_delay_ps.astype(np.int64), 2)
    pt[:, K.PT_PEER_IS_SW] = (~is_host[peer]).astype(np.int64)
    pt[:, K.PT_NODE_IS_HOST] = is_host[node].astype(np.int64)
    if fab.nic_efficiency is not None and fab.nic_efficiency < 1:
        # a NIC that achieves η of line rate: its egress serialises at η × the link rate
        tx = pt[:, K.PT_NODE_IS_HOST] == 1
        pt[tx, K.PT_RATE] = (pt[tx, K.PT_RATE].astype(np.float64) * fab.nic_efficiency).astype(np.int64)
    if fab.nic_latency:
        # NIC latency on the host link, both directions: host → host crosses two NICs
        pt[(pt[:, K.PT_NODE_IS_HOST] == 1) | (pt[:, K.PT_PEER_IS_SW] == 0), K.PT_DELAY] += fab.nic_latency
    for col in (K.PT_CH, K.PT_CT, K.PT_DH, K.PT_DT, K.PT_FH, K.PT_FT, K.PT_WAKE_T, K.PT_STALL_T0):
        pt[:, col] = -1
    # credit-based link flow control: InfiniBand's, or UET's CBFC on the same machinery
    credit_fc = ib or (fab.transport == "uet" and fab.uet.cbfc)
    vl_buffer = ib_vl_buffer_bytes(fab, topo) if credit_fc else 0
    if credit_fc:
        pt[:, K.PT_CREDITS] = vl_buffer // fab.ib.credit_bytes

    # ---- flows
    fl = np.zeros((nf, K.FL_NUM), dtype=np.int64)
    fl[:, K.FL_SRC] = src
    fl[:, K.FL_DST] = pm.host_index[dst]  # destination index (adaptive routing's next-hop CSR)
    fl[:, K.FL_SIZE] = size
    fl[:, K.FL_START] = start
    fl[:, K.FL_PORT] = fpath[:, 0] if nf else 0
    for col in (
        K.FL_DONE_T,
        K.FL_RX_T,
        K.FL_NEXT,
        K.FL_LAST_CNP,
        K.FL_NACK_T,
        K.FL_NACK_SEQ,
        K.FL_REWIND_SEQ,
    ):
        fl[:, col] = -1
    fl[:, K.FL_ROW] = np.arange(nf)
    fl[:, K.FL_AROW] = np.arange(nf)
    line = pt[fl[:, K.FL_PORT], K.PT_RATE].astype(np.float64) if nf else np.zeros(0)
    fr = np.zeros((nf, K.FR_NUM), dtype=np.float64)
    fr[:, K.FR_RATE] = line
    fr[:, K.FR_TARGET] = line
    fr[:, K.FR_LINE] = line

    # ---- configuration
    from aifabric.scenario import default
    from aifabric.sim import misconfig

    lossless_pfc = (not ib) and fab.pfc.enabled
    overrides = misconfig.pfc_overrides(fab, topo) if lossless_pfc and fab.pfc_overrides else []
    storms = (
        misconfig.pause_storms(fab, topo, scenario.sim.until_ps)
        if (fab.pause_storms and not ib) or fab.receiver_stalls
        else []
    )
    cfg = np.zeros(K.C_NUM, dtype=np.int64)
    # dynamic overrides' alphas: extra cf slots after CF_NUM (same float product as the fabric's alpha)
    dyn_alphas = [o["alpha"] for o in overrides if o["mode"] == "dynamic"]
    cf = np.zeros(K.CF_NUM + len(dyn_alphas), dtype=np.float64)

    cfg[K.C_MTU] = fab.mtu_bytes
    # HPCC: every data packet and every ACK carries the INT stack (ns-3 HPCC: 42 B, see
    # hpcc_int_bytes); it is header on the wire — serialised, buffered, PFC-charged — never payload
    int_bytes = hpcc_int_bytes(fab)
    cfg[K.C_INT_BYTES] = int_bytes
    cfg[K.C_HDR] = fab.header_bytes + int_bytes
    cfg[K.C_ACK_BYTES] = int(default("ack_bytes")) + int_bytes
    cfg[K.C_ACK_EVERY] = ACK_EVERY
    cfg[K.C_PFC] = int(lossless_pfc)
    cfg[K.C_PFC_DYN] = int(fab.pfc.mode == "dynamic")
    xoff, xon = pfc_thresholds(fab) if lossless_pfc and fab.pfc.mode == "static" else (0, 0)
    if lossless_pfc and fab.pfc.mode == "dynamic":
        xon = int(fab.pfc.xon or 0)  # the RESUME floor (SONiC xon), 0 when not given
    cfg[K.C_XOFF] = xoff
    cfg[K.C_XON] = xon
    cfg[K.C_RESUME_OFFSET] = (
        RESUME_OFFSET_BYTES if fab.pfc.resume_offset is None else int(fab.pfc.resume_offset)
    )
    cfg[K.C_PFC_RESERVE] = int(fab.pfc.reserve or 0) if fab.pfc.mode == "dynamic" else 0
    cf[K.CF_ALPHA] = misconfig.fabric_alpha(fab)
    # per-ingress PFC thresholds (the receiving switch's): the fabric's, then the overrides'
    pt[:, K.PT_PFC_DYN] = cfg[K.C_PFC_DYN]
    pt[:, K.PT_XOFF] = xoff
    pt[:, K.PT_XON] = xon
    pt[:, K.PT_ALPHA_IDX] = K.CF_ALPHA
    slot = K.CF_NUM
    for o in overrides:
        sel = np.isin(peer, np.asarray(o["node_ids"], np.int64))
        if o["mode"] == "dynamic":
            cf[slot] = o["alpha"]
            pt[sel, K.PT_PFC_DYN] = 1
            pt[sel, K.PT_XOFF] = 0
            pt[sel, K.PT_XON] = 0
            pt[sel, K.PT_ALPHA_IDX] = slot
            slot += 1
        else:
            pt[sel, K.PT_PFC_DYN] = 0
            pt[sel, K.PT_XOFF] = o["xoff_bytes"]
            pt[sel, K.PT_XON] = o["xon_bytes"]
            pt[sel, K.PT_ALPHA_IDX] = K.CF_ALPHA
    cfg[K.C_ECN] = int(fab.ecn.enabled and (not ib or fab.congestion_control == "ib-cc"))
    if cfg[K.C_ECN]:  # defaults only when marking is on (reading them loads the catalog)
        cfg[K.C_KMIN] = fab.ecn.kmin if fab.ecn.kmin is not None else int(default("ecn.kmin_bytes"))
        cfg[K.C_KMAX] = fab.ecn.kmax if fab.ecn.kmax is not None else int(default("ecn.kmax_bytes"))
        cfg[K.C_KMAX] = max(cfg[K.C_KMAX], cfg[K.C_KMIN] + 1)
        cf[K.CF_PMAX] = fab.ecn.pmax if fab.ecn.pmax is not None else float(default("ecn.pmax"))
    cfg[K.C_CC] = CC_CODES[fab.congestion_control]
    cfg[K.C_ROUTING] = ROUTING_CODES[mode]
    cfg[K.C_IB] = int(credit_fc)
    cfg[K.C_CREDIT_BYTES] = fab.ib.credit_bytes
    cfg[K.C_VL_CREDITS] = vl_buffer // fab.ib.credit_bytes if credit_fc else 0
    cfg[K.C_SW_LAT] = fab.switch_latency_ps
    cfg[K.C_BUFFER] = fab.switch_buffer_bytes
    cfg[K.C_NHOSTS] = len(pm.hosts)
    cfg[K.C_FLOWLET_GAP] = fab.adaptive.flowlet_gap
    cfg[K.C_ROUTE_SALT] = scenario.seed % (K.PARK_MILLER_M - 1)
    cfg[K.C_NPORTS] = npt
    cfg[K.C_DEADLOCK_PS] = scenario.sim.deadlock_timeout
    cfg[K.C_MAXHOP] = maxhop
    failures = _failure_events(fab, topo)
    # go-back-N recovery when the fabric can lose packets: PFC off, or links that fail while traffic
    # runs (a link down at time 0 is re-routed before the first packet reaches a switch: no loss)
    # spray: a plain RC NIC accepts only the next expected PSN, so out-of-order arrival is a NAK
    # (sequence error) and go-back-N from the missing byte — the same receiver as a lossy fabric
    cfg[K.C_LOSSY] = int(
        (not ib and not fab.pfc.enabled) or any(t > 0 for t, _ in failures) or mode == "spray"
    )
    # go-back-N timing: one NACK / rewind per byte per base round trip (longest path, MTU packets),
    # timeout after 20 round trips without ACK progress (at least 100 µs)
    pkt_ps = (fab.mtu_bytes + int(cfg[K.C_HDR])) * 8 * K.PS_PER_S // int(topo.link_rate_bps.min())
    rtt_ps = 2 * (maxhop - 1) * (int(topo.link_delay_ps.max()) + pkt_ps)
    cfg[K.C_NACK_GAP] = rtt_ps
    cfg[K.C_RTO] = max(20 * rtt_ps, 100 * 10**6)
    dc = None
    if fab.congestion_control in ("dcqcn", "ib-cc"):
        from aifabric.sim.dcqcn import dcqcn_params

        dc = dcqcn_params(fab.dcqcn, int(topo.link_rate_bps.max()))
        cfg[K.C_CNP_INTERVAL] = int(dc["cnp_interval"])
        cfg[K.C_DC_T_ALPHA] = int(dc["alpha_update_timer"])
        cfg[K.C_DC_T_DEC] = int(dc["rate_decrease_interval"])
        cfg[K.C_DC_T_INC] = int(dc["rate_increase_timer"])
        cfg[K.C_DC_BYTES] = int(dc["byte_counter"])
        cfg[K.C_DC_F] = int(dc["fast_recovery_stages"])
        cfg[K.C_DC_CLAMP] = int(dc["clamp_target"])
        cfg[K.C_DC_TIMER_ONLY] = int(dc["timer_only"])
        cf[K.CF_DC_G] = dc["g"]
        cf[K.CF_DC_AI] = dc["rate_ai"]
        cf[K.CF_DC_HAI] = dc["rate_hai"]
        cf[K.CF_DC_MIN] = dc["min_rate"]
        cf[K.CF_DC_ALPHA0] = dc["alpha0"]
        cf[K.CF_DC_MIN_DEC] = dc["min_dec_fac"]
        fr[:, K.FR_ALPHA] = dc["alpha0"]
    hp = None
    if fab.congestion_control == "hpcc":
        hp = hpcc_params(
            fab, st_base_rtt_ps(pt, fpath[:nf], apath[:nf], fab, cfg), int(topo.link_rate_bps.max())
        )
        cfg[K.C_INT_MAX] = maxhop
        cfg[K.C_HP_T] = hp["base_rtt_ps"]
        cfg[K.C_HP_MAX_STAGE] = hp["max_stage"]
        cf[K.CF_HP_ETA] = hp["eta"]
        cf[K.CF_HP_WAI] = hp["w_ai_bytes"]
        cf[K.CF_HP_WMIN] = hp["w_min_bytes"]
        # initial window: the line-rate BDP at T (pacing at line rate), U = 1
        fr[:, K.FR_W] = fr[:, K.FR_LINE] * hp["base_rtt_ps"] / (8.0 * K.PS_PER_S)
        fr[:, K.FR_WC] = fr[:, K.FR_W]
        fr[:, K.FR_U] = 1.0
        fl = np.concatenate([fl, np.zeros((nf, K.HP_W * maxhop), np.int64)], axis=1)
    ue_params, ue = None, np.zeros((1, 2), np.int64)
    if fab.transport == "uet":
        from aifabric.sim import uet_setup

        line = float(fr[:, K.FR_LINE].max()) if nf else float(topo.link_rate_bps.max())
        ue_params = uet_setup.uet_defaults(fab, st_base_rtt_ps(pt, fpath[:nf], apath[:nf], fab, cfg), line)
        uet_setup.configure(K, fab, cfg, cf, ue_params)
        fl, fr, ue = uet_setup.flow_tables(K, fl, fr, ue_params, fab.mtu_bytes, scenario.seed)

    # ---- next hops for adaptive routing and UET's entropy hashing (CSR over (node, destination))
    if cfg[K.C_ROUTING] != 0 or ue_params is not None:
        from aifabric.topology.routing import shortest_path_next_hops

        nh = shortest_path_next_hops(topo)
        nh_off = nh.offsets.astype(np.int64)
        nh_links = nh.links.astype(np.int64)
        flowlet = np.full((max(nf, 1), 2 * maxhop), -1, dtype=np.int64)
    else:
        nh_off = np.zeros(1, np.int64)
        nh_links = np.zeros(1, np.int64)
        flowlet = np.full((1, 2), -1, dtype=np.int64)

    # ---- packets, heap, globals
    npk = 1024 + 16 * max(nf, 1)
    pk_cols = K.PK_NUM + (K.INT_W * maxhop if hp else 0) + (K.PK_UE_W if ue_params else 0)
    pk = np.full((npk, pk_cols), -1, dtype=np.int64)
    pk[:, K.PK_NEXT] = np.arange(1, npk + 1)
    pk[npk - 1, K.PK_NEXT] = -1
    x_times, x_args = misconfig.pause_storm_events(storms)
    cap = 2 * npk + nf + 4 * npt + 64 + 8 * len(fab.failures) + len(x_times)
    h = np.zeros((cap, 3), np.int64)
    g = np.zeros(K.G_NUM, dtype=np.int64)
    g[K.G_FREE] = 0
    g[K.G_RNG] = (scenario.seed % (K.PARK_MILLER_M - 1)) + 1
    link_errors(fab, cfg, cf, g, scenario.seed)
    st = State(
        g=g,
        cfg=cfg,
        cf=cf,
        h=h,
        pk=pk,
        pt=pt,
        fl=fl,
        fr=fr,
        swused=np.zeros(n_nodes, np.int64),
        fpath=fpath,
        apath=apath,
        nh_off=nh_off,
        nh_links=nh_links,
        link_a=la,
        flowlet=flowlet,
        log=np.zeros((1024, 3), np.int64),
        ue=ue,
    )
    st.info.update(
        vl_buffer_bytes=vl_buffer,
        routing=routing,
        routing_mode=mode,
        dcqcn=dc,
        hpcc=hp,
        sport=sport,
        xoff_bytes=xoff,
        xon_bytes=xon,
    )
    if ue_params is not None:
        st.info["uet"] = ue_params
    if ideal_rate is not None:
        st.info["ideal_rate_bps"] = ideal_rate
    if overrides:
        st.info["pfc_overrides"] = [{k: v for k, v in o.items() if k != "node_ids"} for o in overrides]
        st.info["pfc_default"] = misconfig.fabric_pfc(fab)
    if storms:
        st.info["pause_storms"] = storms
    # link failures first (a link down at a flow's start time is re-routed before it sends), then
    # flow starts in id order at equal times, then injected pauses (fabric.pause_storms): a sorted
    # array is already a valid heap (and filling it here spares loading a compiled heap_push into
    # the interpreter)
    times = np.concatenate([np.array([t for t, _ in failures], dtype=np.int64), start, x_times])
    vals = np.concatenate(
        [
            np.array([lk * 16 + K.EV_LINK_DOWN for _, lk in failures], dtype=np.int64),
            np.arange(nf, dtype=np.int64) * 16 + K.EV_FLOW_START,
            x_args * 16 + K.EV_XPAUSE,
        ]
    )
    order = np.lexsort((np.arange(len(times)), times))
    n0 = len(times)
    h[:n0, 0] = times[order]
    h[:n0, 1] = np.arange(n0)
    h[:n0, 2] = vals[order]
    g[K.G_HEAPN] = n0
    g[K.G_SEQ] = n0
    st.info.update(
        topo=topo,
        seed=scenario.seed,
        same_hash_seed=fab.ecmp_hash == "same-seed",
        base_routing=base_routing,
        src=src,
        dst=dst,
        failed_links=[lk for _, lk in failures],
    )
    return st


def link_errors(fab, cfg, cf, g, seed: int) -> None:
    """``fabric.link_errors``: a data frame arrives corrupted with probability ``fer`` (its own
    random stream, so every other draw is the same as without errors). Without LLR the receiving
    port discards it and the transport recovers it end to end: go-back-N for RoCE and InfiniBand
    (``C_LOSSY``), selective retransmission for UET. ``fer: 0`` leaves the kernel's gate off."""
    le = fab.link_errors
    if le.fer <= 0:
        return
    cfg[K.C_FER] = 1 if le.links == "all" else 2
    cf[K.CF_FER] = le.fer
    cfg[K.C_LLR] = int(le.llr)
    cfg[K.C_LLR_DELAY] = le.llr_replay_delay
    g[K.G_FER_RNG] = ((seed * 7919 + 104729) % (K.PARK_MILLER_M - 1)) + 1
    if not le.llr and fab.transport != "uet":
        cfg[K.C_LOSSY] = 1


def st_base_rtt_ps(pt, fpath, apath, fab, cfg) -> int:
    """HPCC's T: the largest base RTT over the flows (ns-3 GLOBAL_T 1, "BDP at max base RTT"):
    an MTU packet store-and-forward over the data path plus an ACK back over the ACK path,
    switch latency per switch crossed."""
    if not len(fpath):
        return 1

    def walk(path, nbytes):
        valid = path >= 0
        p = np.where(valid, path, 0)
        lat = np.where(valid, nbytes * 8 * K.PS_PER_S // pt[p, K.PT_RATE] + pt[p, K.PT_DELAY], 0)
        return lat.sum(axis=1) + np.maximum(valid.sum(axis=1) - 1, 0) * int(cfg[K.C_SW_LAT])

    rtt = walk(fpath, fab.mtu_bytes + int(cfg[K.C_HDR])) + walk(apath, int(cfg[K.C_ACK_BYTES]))
    return int(max(rtt.max(), 1))


def hpcc_int_bytes(fab) -> int:
    """INT bytes each data packet and ACK carries under HPCC: ``fabric.hpcc.int_bytes``, else the
    ns-3 HPCC stack (``scenario.DEFAULTS["hpcc.int_bytes"]``: 5 hop records × 8 B + a 2 B hop
    count, a fixed size whatever the path length); 0 without HPCC."""
    if fab.congestion_control != "hpcc":
        return 0
    from aifabric.scenario import default

    return int(fab.hpcc.int_bytes if fab.hpcc.int_bytes is not None else default("hpcc.int_bytes"))


def hpcc_params(fab, base_rtt_ps: int, line_bps: int) -> dict:
    """HPCC constants (hardware-facts E.5, defaults.yaml ``hpcc.*``). W_AI: ``fabric.hpcc.rate_ai``
    when given, as the HPCC ns-3 repo expresses it (W_AI = R_AI · T); otherwise ``hpcc.w_ai`` =
    1 MSS (htsim's choice). The smallest window is the ns-3 minimum rate, 100 Mb/s, times T."""
    from aifabric.hardware.catalog import default_value

    spec = fab.hpcc
    if spec.rate_ai is not None:
        w_ai = float(spec.rate_ai) * base_rtt_ps / (8.0 * K.PS_PER_S)
        w_ai_src = "fabric.hpcc.rate_ai x T"
    else:
        w_ai = float(default_value("hpcc.w_ai")) * fab.mtu_bytes
        w_ai_src = "hpcc.w_ai (1 MSS, htsim)"
    return {
        "eta": float(spec.eta),
        "max_stage": int(spec.max_stage),
        "base_rtt_ps": int(base_rtt_ps),
        "w_ai_bytes": w_ai,
        "w_ai_source": w_ai_src,
        "w_min_bytes": 100e6 * base_rtt_ps / (8.0 * K.PS_PER_S),
        "w_init_bytes": line_bps * base_rtt_ps / (8.0 * K.PS_PER_S),
    }


def _failure_events(fab, topo) -> list[tuple[int, int]]:
    """``fabric.failures`` → [(time_ps, link id)]; a link is named ``a-b`` by node names or ids."""
    out = []
    for i, f in enumerate(fab.failures):
        parts = f.link.split("-")
        found = None
        for cut in range(1, len(parts)):  # names may contain '-'
            a, b = "-".join(parts[:cut]), "-".join(parts[cut:])
            try:
                found = topo.find_link(int(a) if a.isdigit() else a, int(b) if b.isdigit() else b)
                break
            except (KeyError, IndexError):
                continue
        if found is None:
            raise InputError(
                "no such link",
                field=f"fabric.failures.{i}.link",
                value=f.link,
                allowed="'nodeA-nodeB' by node name (e.g. leaf0-spine1) or id",
            )
        out.append((int(f.at), int(found)))
    return out


def reroute(st: State) -> None:
    """After a link failure: recompute every flow's data and ACK paths on the surviving links
    (ECMP rehashes over the smaller option sets); flows whose path changed get new rows, so
    packets already travelling keep the route they were sent on."""
    from aifabric.flow.paths import PathModel

    topo = st.info["topo"]
    down = np.flatnonzero(st.pt[0::2, K.PT_DOWN] == 1)
    keep = np.setdiff1d(np.arange(topo.num_links), down)
    t2 = topo.without_links(down.tolist())
    src, dst, sport = st.info["src"], st.info["dst"], st.info["sport"]
    try:
        pm = PathModel(
            t2, same_hash_seed=st.info.get("same_hash_seed", False)
        )  # raises when a host lost its only link
        fnew = pm.route(src, dst, st.info["base_routing"], st.info["seed"], sport)
        anew = pm.route(dst, src, st.info["base_routing"], st.info["seed"], sport)
    except InputError:
        return  # a host lost its only link: keep the routes; its packets are dropped at the failure

    def orig(d):
        return np.where(d >= 0, 2 * keep[np.maximum(d, 0) // 2] + np.maximum(d, 0) % 2, -1)

    fnew, anew = orig(fnew), orig(anew)
    # a packet already on its way when the link failed may detour: the hops it has taken plus the
    # new distance can exceed both the old and the new path lengths, and adaptive routing indexes
    # the path and flowlet tables by hop — size them for old + new (−1 = no entry)
    width = st.fpath.shape[1] + max(fnew.shape[1], anew.shape[1]) + 1

    def pad(a):
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=-1)

    st.fpath, st.apath, fnew, anew = pad(st.fpath), pad(st.apath), pad(fnew), pad(anew)
    for table, new, col in ((st.fpath, fnew, K.FL_ROW), (st.apath, anew, K.FL_AROW)):
        cur = table[st.fl[:, col]]
        changed = np.flatnonzero((cur != new).any(axis=1))
        if not len(changed):
            continue
        rows = np.arange(len(table), len(table) + len(changed))
        table = np.concatenate([table, new[changed]])
        st.fl[changed, col] = rows
        if col == K.FL_ROW:
            st.fpath = table
        else:
            st.apath = table
    if st.flowlet.shape[1] < 2 * width and st.cfg[K.C_ROUTING] != 0:
        st.flowlet = np.pad(st.flowlet, ((0, 0), (0, 2 * width - st.flowlet.shape[1])), constant_values=-1)
    if st.cfg[K.C_ROUTING] != 0 or st.cfg[K.C_UET] == 1:
        from aifabric.topology.routing import shortest_path_next_hops

        nh = shortest_path_next_hops(t2)
        st.nh_off = nh.offsets.astype(np.int64)
        st.nh_links = keep[nh.links].astype(np.int64)


ST_BUDGET = 100  # run_state's own status: the event budget (sim.max_events) ran out


def run_state(
    st: State, until_ps: int, progress=None, quota: int = 2_000_000, max_events: int | None = None
) -> int:
    """Drive the kernel to completion / the time limit / ``max_events`` events (then
    :data:`ST_BUDGET`: the run is incomplete); ``progress(now_ps, events)`` is called between
    kernel slices. The kernel is re-entrant, so slicing does not change results: the last slice is
    cut to end exactly at the budget, so a run that hits it is the same for every machine."""
    while True:
        q = quota
        if max_events is not None:
            left = int(max_events) - int(st.g[K.G_EVENTS])
            if left <= 0:
                return ST_BUDGET
            q = min(quota, left)
        status = K.run(*st.kernel_args(), np.int64(until_ps), np.int64(q))
        if status == K.ST_GROW_PKT:
            grow_packets(st)
        elif status == K.ST_GROW_HEAP:
            grow_heap(st)
        elif status == K.ST_GROW_LOG:
            st.log = _grow_rows(st.log, 0)
        elif status == K.ST_CONTROL:
            reroute(st)
        elif status == K.ST_QUOTA:
            if progress is not None:
                progress(int(st.g[K.G_NOW]), int(st.g[K.G_EVENTS]))
        else:
            if status == K.ST_UNTIL:
                st.g[K.G_NOW] = until_ps
            return int(status)


def in_flight_payload(st: State) -> int:
    """Payload bytes of data packets alive (queued or on a wire)."""
    live = st.pk[:, K.PK_KIND] == K.KIND_DATA
    return int(st.pk[live, K.PK_PAYLOAD].sum())


def ideal_fct_ps(st: State) -> np.ndarray:
    """Each flow alone on the fabric: its first packet's store-and-forward latency over the data
    path, the rest of its bytes (with headers) at the bottleneck rate, and the last ACK's return
    over the ACK path; switch latency per switch crossed. Exact for flows of whole packets."""
    pt, fl, cfg = st.pt, st.fl, st.cfg
    nf = fl.shape[0]
    if nf == 0:
        return np.zeros(0)
    mtu, hdr, ack = int(cfg[K.C_MTU]), int(cfg[K.C_HDR]), int(cfg[K.C_ACK_BYTES])
    size = fl[:, K.FL_SIZE]
    npk = -(-size // mtu)
    total = size + npk * hdr
    first = np.minimum(size, mtu) + hdr
    sl = int(cfg[K.C_SW_LAT])
    ideal_rates = st.info.get("ideal_rate_bps")  # scheduled fabric: the rates without the cell tax

    def walk(path, pkt_bytes):
        valid = path >= 0
        p = np.where(valid, path, 0)
        rate = pt[p, K.PT_RATE] if ideal_rates is None else ideal_rates[p]
        ser = np.where(valid, (pkt_bytes[:, None] * 8 * K.PS_PER_S) // rate, 0)
        lat = ser + np.where(valid, pt[p, K.PT_DELAY], 0)
        hops = valid.sum(axis=1)
        rmin = np.where(valid, rate, np.iinfo(np.int64).max).min(axis=1)
        return lat.sum(axis=1) + np.maximum(hops - 1, 0) * sl, rmin

    data_lat, rmin = walk(st.fpath[:nf], first)  # rows 0..nf-1: the routes before any failure
    ack_lat, _ = walk(st.apath[:nf], np.full(nf, ack, dtype=np.int64))
    rest = np.floor((total - first).astype(np.float64) * 8e12 / rmin).astype(np.int64)  # int64 would overflow
    return data_lat + rest + ack_lat


def timed_run(scenario, topo, flows, progress=None) -> tuple[State, int, float]:
    t0 = time.perf_counter()
    st = compile_scenario(scenario, topo, flows)
    status = run_state(st, scenario.sim.until_ps, progress, max_events=scenario.sim.max_events)
    return st, status, time.perf_counter() - t0
