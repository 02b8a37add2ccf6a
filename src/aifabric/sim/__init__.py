"""The packet-level simulator: ``simulate(scenario) -> Results``.

Modules:

* :mod:`aifabric.sim.kernel` — the numba data plane (event loop, heap, queues, PFC, credits,
  ECN, DCQCN, adaptive routing) over struct-of-arrays tables.
* :mod:`aifabric.sim.engine` — the control plane: Scenario → tables, the kernel driver, ideal FCT.
* :mod:`aifabric.sim.uet` / :mod:`aifabric.sim.uet_setup` — the Ultra Ethernet transport
  (``fabric.transport: uet``): its kernel rules and its parameters with sources.
* :mod:`aifabric.sim.dcqcn` — DCQCN parameter presets with sources.
* :mod:`aifabric.sim.collective` — a ``collective`` workload, network step by network step.

Import cost is kept off the CLI's start-up: numba loads when :func:`simulate` runs, pandas only
when a result table is read as a DataFrame (``Results.flows`` / ``.ports`` / ``.pfc_log``, Parquet
output), not for the summary or ``--json``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from aifabric.sim.results import Results


def simulate(scenario, flows=None, topology=None, progress=None) -> Results:
    """Run ``scenario`` at packet level.

    ``flows`` (optional) is a flows table as built by :func:`aifabric.workload.traffic.flows_for`
    (a DataFrame; or :class:`~aifabric.workload.traffic.FlowColumns`, as built here when omitted);
    ``topology`` overrides ``from_spec(scenario.topology)``; ``progress(now_ps, events)`` is called
    every few million events. Returns :class:`aifabric.sim.results.Results`.

    A ``collective`` workload (without ``flows``) runs step by step,
    :func:`aifabric.sim.collective.simulate_collective`: its result is a
    :class:`~aifabric.sim.collective.CollectiveResults` (tables with a ``step`` column, and
    ``.collective``, the flow mode's ``collective`` fields).
    """
    import numpy as np

    from aifabric.errors import InputError
    from aifabric.sim import engine
    from aifabric.sim.engine import K

    t0 = time.perf_counter()
    if scenario.topology is None and topology is None:
        raise InputError("simulate needs a topology", field="topology")
    if scenario.workload is None and flows is None:
        raise InputError("simulate needs a workload", field="workload")
    if topology is None:
        from aifabric.topology import from_spec

        topology = from_spec(scenario.topology)
    if flows is None and scenario.workload.kind == "collective":  # step by step: aifabric.sim.collective
        from aifabric.sim.collective import simulate_collective

        return simulate_collective(scenario, topology=topology, progress=progress)
    if flows is None:
        from aifabric.workload.traffic import flow_columns

        flows = flow_columns(scenario, topology)
    from aifabric import memory

    maxhop = 2 * int(topology.node_tier.max(initial=0)) + 2
    memory.check(
        engine.estimate_bytes(len(flows), topology.num_links, maxhop, scenario.fabric, json_flows=False),
        f"a packet-level run of {len(flows):,} flows on {topology.num_links:,} links",
        field="workload",
        hint="fewer flows or hosts, or sim.mode: flow (the flow model needs far less)",
    )
    st = engine.compile_scenario(scenario, topology, flows)
    status = engine.run_state(st, scenario.sim.until_ps, progress, max_events=scenario.sim.max_events)
    wall = time.perf_counter() - t0
    res = results_of(scenario, topology, flows, st, status, wall)
    del np, K
    return res


def results_of(scenario, topo, flows, st, status, wall_s: float):
    """Final arrays → :class:`~aifabric.sim.results.Results` (its tables as numpy columns, made
    DataFrames when first read; views of the state arrays are copied, as the DataFrames would)."""
    import numpy as np

    from aifabric.sim import engine
    from aifabric.sim.engine import K
    from aifabric.sim.results import Results

    fl, pt, g = st.fl, st.pt, st.g
    now = int(g[K.G_NOW])
    nf = fl.shape[0]
    start = fl[:, K.FL_START]
    done_t = fl[:, K.FL_DONE_T]
    rx_t = fl[:, K.FL_RX_T]
    completed = done_t >= 0
    fct = np.where(completed, (done_t - start) / 1e6, np.nan)
    rx_fct = np.where(rx_t >= 0, (rx_t - start) / 1e6, np.nan)
    ideal = engine.ideal_fct_ps(st) / 1e6
    size = fl[:, K.FL_SIZE]
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = fct / ideal
        thr = size * 8 / (fct * 1e3)
    hops = (st.fpath[:nf] >= 0).sum(axis=1) if nf else np.zeros(0, np.int64)
    col = engine.int_column
    flows_df = _own(
        {
            "id": col(flows, "id"),
            "src": col(flows, "src"),
            "dst": col(flows, "dst"),
            "size_bytes": size,
            "start_us": start / 1e6,
            "fct_us": fct,
            "rx_fct_us": rx_fct,
            "ideal_fct_us": ideal,
            "slowdown": slowdown,
            "throughput_gbps": thr,
            "sport": st.info["sport"],
            "dport": col(flows, "dport"),
            "hops": hops,
            "cnps": fl[:, K.FL_CNP_RX],
            "retransmissions": fl[:, K.FL_RETX],
            "completed": completed,
        }
    )
    if "parent_id" in flows.columns:  # fabric.qp_split: the original flow of each QP
        flows_df["parent_id"] = np.array(col(flows, "parent_id"))

    # ---- ports: one row per interface (node, link); egress stats of port p, PAUSE sent = frames
    # the node sent about its ingress (the reverse port p ^ 1).
    npt = pt.shape[0]
    p = np.arange(npt)
    rev = p ^ 1
    paused = pt[:, K.PT_PAUSED_PS] + np.where(pt[:, K.PT_PAUSED] == 1, now - pt[:, K.PT_PAUSE_T0], 0)
    stall = pt[:, K.PT_STALL_PS] + np.where(pt[:, K.PT_STALL_T0] >= 0, now - pt[:, K.PT_STALL_T0], 0)
    xpaused = pt[:, K.PT_XPAUSED_PS] + np.where(pt[:, K.PT_XPAUSED] > 0, now - pt[:, K.PT_XPAUSE_T0], 0)
    node = pt[:, K.PT_NODE]
    if_index = _if_index(topo, node, p // 2)
    ports_df = _own(
        {
            "node": node,
            "node_name": np.asarray(topo.node_names, dtype=object)[node],
            "peer": pt[:, K.PT_PEER],
            "link": p // 2,
            "if_index": if_index,
            "rate_gbps": pt[:, K.PT_RATE] / 1e9,
            "max_queue_bytes": pt[:, K.PT_MAXQ],
            "mean_queue_bytes": (pt[:, K.PT_QINT] + pt[:, K.PT_QBYTES] * (now - pt[:, K.PT_QLAST]))
            / max(now, 1),
            "max_ingress_bytes": pt[rev, K.PT_MAXIN],
            "pause_sent": pt[rev, K.PT_PAUSE_GEN],
            "pause_received": pt[:, K.PT_PAUSE_RX],
            "paused_time_us": paused / 1e6,
            "ecn_marks": pt[:, K.PT_ECN],
            "drops": pt[:, K.PT_DROPS],
            "credit_stall_us": stall / 1e6,
            "tx_bytes": pt[:, K.PT_TX_BYTES],
            "tx_packets": pt[:, K.PT_TX_PKTS],
            "injected_pause_us": xpaused / 1e6,
        }
    )

    # ---- summary
    fc = fct[completed]
    sd = slowdown[completed]
    first = int(start.min()) if nf else 0
    last = int(done_t[completed].max()) if completed.any() else now
    span = max(last - first, 1)

    def q(x, pct):
        return float(np.percentile(x, pct)) if len(x) else None

    thr_c = thr[completed]
    jain = float(thr_c.sum() ** 2 / (len(thr_c) * (thr_c**2).sum())) if len(thr_c) else None
    summary = {
        "flows": int(nf),
        "completed_flows": int(completed.sum()),
        "fct_p50_us": q(fc, 50),
        "fct_p99_us": q(fc, 99),
        "fct_max_us": float(fc.max()) if len(fc) else None,
        "slowdown_p50": q(sd, 50),
        "slowdown_p99": q(sd, 99),
        "goodput_gbps": float(g[K.G_DELIV_BYTES] * 8 / (span / 1e12) / 1e9),
        "jain_fairness": jain,
        "drops": int(g[K.G_DROPS]),
        "pause_frames": int(g[K.G_PAUSES]),
        "pause_time_us": float(paused.sum() / 1e6),
        "ecn_marks": int(g[K.G_ECN]),
        "max_queue_bytes": int(pt[:, K.PT_MAXQ].max()) if npt else 0,
        "deadlock": bool(status == K.ST_STALL),
        # every flow finished before a limit stopped the run (sim.until, sim.max_events) or a
        # deadlock: only a complete run is evidence of FCTs
        "complete": bool(status == K.ST_DONE and completed.all()),
    }
    if "pause_storms" in st.info:  # fabric.pause_storms: injected PAUSE, apart from real PFC above
        summary["injected_pauses"] = int(g[K.G_XPAUSES])
        summary["injected_pause_time_us"] = float(xpaused.sum() / 1e6)
    engine_stats = {
        "events": int(g[K.G_EVENTS]),
        "packets": int(g[K.G_DATA_PKTS]),
        "wall_s": round(wall_s, 4),
        "sim_time_us": now / 1e6,
        "status": _STATUS.get(int(status), str(status)),
        "acks": int(g[K.G_ACKS]),
        "cnps": int(g[K.G_CNPS]),
        "resume_frames": int(g[K.G_RESUMES]),
        "injected_bytes": int(g[K.G_INJ_BYTES]),
        "delivered_bytes": int(g[K.G_DELIV_BYTES]),
        "dropped_bytes": int(g[K.G_DROP_BYTES]),
        "discarded_bytes": int(g[K.G_DISCARD_BYTES]),
        "retransmissions": int(g[K.G_RETX]),
        "nacks": int(g[K.G_NACKS]),
        "in_flight_bytes": engine.in_flight_payload(st),
        "routing": st.info["routing"],
        "routing_mode": st.info["routing_mode"],
    }
    if status == K.ST_STALL:
        engine_stats["deadlock_cycle"] = deadlock_cycle(topo, pt)
    if status == engine.ST_BUDGET:
        engine_stats["max_events"] = int(scenario.sim.max_events)
    buf_drops = int(g[K.G_BUF_DROPS])
    if st.cfg[K.C_PFC] == 1 and buf_drops:
        # PFC is on, so the fabric is meant to be lossless: a full shared buffer means the
        # configured buffer cannot hold the PFC headroom (xoff + in-flight bytes per ingress)
        msg = (
            f"lossless fabric dropped {buf_drops} packets on a full shared buffer "
            f"({int(st.cfg[K.C_BUFFER])} B): the buffer does not cover the PFC thresholds plus "
            f"headroom of every ingress port; flows that lost packets do not complete (no recovery "
            f"with PFC on)"
        )
        engine_stats["lossless_violation"] = msg
        import warnings

        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    if "uet" in st.info:  # fabric.transport uet: trims, timeouts, retransmissions, parameters
        from aifabric.sim import uet_setup

        engine_stats["uet"] = uet_setup.report(K, st)
    if st.cfg[K.C_FER]:  # fabric.link_errors: corrupted frames, discarded or replayed by LLR
        engine_stats["link_errors"] = {
            "fer": float(st.cf[K.CF_FER]),
            "links": "all" if st.cfg[K.C_FER] == 1 else "switch",
            "llr": bool(st.cfg[K.C_LLR]),
            "llr_replay_delay_ns": int(st.cfg[K.C_LLR_DELAY]) / 1e3,
            "corrupted_dropped_packets": int(g[K.G_FER_DROPS]),
            "corrupted_dropped_bytes": int(g[K.G_FER_BYTES]),
            "llr_replays": int(g[K.G_LLR_REPLAYS]),
        }
    if st.cfg[K.C_INT_BYTES]:  # HPCC: INT stack bytes on every data packet and ACK (header, not payload)
        engine_stats["hpcc_int_bytes"] = int(st.cfg[K.C_INT_BYTES])
    if st.info.get("vl_buffer_bytes"):
        engine_stats["ib_vl_buffer_bytes"] = int(st.info["vl_buffer_bytes"])
    if "pfc_overrides" in st.info:
        engine_stats["pfc_default"] = dict(st.info["pfc_default"])
        engine_stats["pfc_overrides"] = [dict(o) for o in st.info["pfc_overrides"]]
    if "pause_storms" in st.info:
        engine_stats["pause_storms"] = [
            {
                "node": s["node"],
                "peers": list(s["peers"]),
                "ports": len(s["ports"]),
                "start_us": s["start_ps"] / 1e6,
                "duration_us": s["duration_ps"] / 1e6,
                "period_us": s["period_ps"] / 1e6 if s["period_ps"] is not None else None,
                "count": s["count"],
                "scheduled_pauses": s["pauses"],
            }
            for s in st.info["pause_storms"]
        ]
    n = int(g[K.G_LOGN])
    log = st.log[:n]
    lp = log[:, 1]
    recv_node = pt[lp, K.PT_NODE] if n else np.zeros(0, np.int64)
    pfc_log = _own(
        {
            "time_ns": log[:, 0] // 1000,
            "node": recv_node,
            "node_type": (topo.node_tier[recv_node] != 0).astype(np.int64) if n else np.zeros(0, np.int64),
            "if_index": if_index[lp] if n else np.zeros(0, np.int64),
            "type": log[:, 2],
        }
    )
    offset_ns = int(flows.attrs.get("start_offset_ps", 0)) // 1000
    return Results(
        scenario=scenario.name,
        flows=flows_df,
        ports=ports_df,
        summary=summary,
        engine=engine_stats,
        pfc_log=pfc_log,
        extra={"start_offset_ns": offset_ns, "state": st},
    )


_STATUS = {0: "done", 1: "time limit", 6: "deadlock", 100: "event budget"}


def _own(cols: dict) -> dict:
    """Columns that own their memory (``pandas.DataFrame(dict)`` copies, so a later change to the
    state arrays must not show in the tables either)."""
    import numpy as np

    return {k: np.array(v) for k, v in cols.items()}


def deadlock_cycle(topo, pt) -> list[str]:
    """A cycle of blocked egress ports ("a->b" by node name) in the wait-for graph: egress p
    (a→b) is blocked when it holds data and is paused (PFC) or out of credits; it waits on the
    blocked egresses of b, where the packets charged to p's ingress sit. Empty if none found."""
    import numpy as np

    from aifabric.sim.engine import K

    queued = (pt[:, K.PT_DH] >= 0) | ((pt[:, K.PT_NODE_IS_HOST] == 1) & (pt[:, K.PT_FH] >= 0))
    stuck = (pt[:, K.PT_PAUSED] == 1) | (pt[:, K.PT_STALL_T0] >= 0)
    blocked = np.flatnonzero(queued & stuck)
    by_node: dict[int, list[int]] = {}
    for p in blocked.tolist():
        by_node.setdefault(int(pt[p, K.PT_NODE]), []).append(p)
    # iterative depth-first search (white 0 / grey 1 / black 2): every port is pushed and finished
    # once, so this terminates in O(ports + edges) whatever the graph, without recursion limits
    color: dict[int, int] = {}
    names = topo.node_names
    for root in blocked.tolist():
        if color.get(root):
            continue
        path: list[int] = [root]
        iters = [iter(by_node.get(int(pt[root, K.PT_PEER]), []))]
        color[root] = 1
        while path:
            q = next(iters[-1], None)
            if q is None:
                color[path.pop()] = 2
                iters.pop()
                continue
            c = color.get(q, 0)
            if c == 1:
                cyc = path[path.index(q) :]
                return [f"{names[int(pt[x, K.PT_NODE])]}->{names[int(pt[x, K.PT_PEER])]}" for x in cyc]
            if c == 0:
                color[q] = 1
                path.append(q)
                iters.append(iter(by_node.get(int(pt[q, K.PT_PEER]), [])))
    return []


def _if_index(topo, node, link):
    """1-based position of ``link`` among ``node``'s links in link-id order (ns-3 interface ids)."""
    import numpy as np

    off, _, links = topo.adjacency()
    pos = np.empty(2 * topo.num_links, dtype=np.int64)
    owner = np.repeat(np.arange(topo.num_nodes), np.diff(off))
    rank = np.arange(len(links)) - off[owner]
    key = owner * topo.num_links + links
    order = np.argsort(key)
    want = node * topo.num_links + link
    idx = np.searchsorted(key[order], want)
    pos[:] = rank[order][idx] + 1
    return pos


__all__ = ["simulate"]
