"""The flow-level engine: max-min fair sharing recomputed at every flow arrival and completion.

A flow is a fluid: it drains ``wire_bytes - first_packet`` at its max-min fair rate, and pays a
fixed latency term on top — per hop propagation + switch latency + serialisation of its first
packet (a store-and-forward pipeline fill), the same accounting as one packet racing through an
idle packet-level fabric. So a lone flow's FCT equals its ideal FCT:

    ideal_fct = Σ delay + (hops − 1)·switch_latency + Σ_hops (first_pkt · 8 / rate) + (wire − first_pkt) · 8 / bottleneck

``wire_bytes = size + ⌈size / mtu⌉ · header`` (the MTU counts payload, as in the packet engine's
scenario defaults). No queues exist at flow level: no drops, PFC pauses, ECN marks or queue
depth — those summary fields are 0 by construction, not measured.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from aifabric.errors import InputError
from aifabric.flow._kernels import Work, drain
from aifabric.flow.maxmin import jain_index
from aifabric.flow.paths import (
    MULTIPATH,
    PathModel,
    directed_delays_ps,
    directed_rates_bps,
    flow_routing,
    link_rates_bps,
)
from aifabric.topology.core import Topology

FLOW_COLUMNS = ["id", "src", "dst", "size_bytes", "start_us", "fct_us", "ideal_fct_us", "slowdown"]


def _path_model(topology: Topology) -> PathModel:
    pm = topology.__dict__.get("_flow_path_model")
    if pm is None:
        pm = PathModel(topology)
        object.__setattr__(topology, "_flow_path_model", pm)  # cache on the frozen topology
    return pm


def path_latency(
    topology: Topology,
    paths: np.ndarray,
    size_bytes: np.ndarray,
    switch_latency_ps: float,
    mtu_bytes: int,
    header_bytes: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fixed_s, drain_bits, bottleneck_bps)`` per flow for ``(F, L)`` directed-link paths."""
    rates = directed_rates_bps(topology)
    delays = directed_delays_ps(topology)
    size = np.asarray(size_bytes, dtype=np.float64)
    pk = np.maximum(np.ceil(size / mtu_bytes), 1)
    wire = size + pk * header_bytes
    first = np.minimum(size, mtu_bytes) + header_bytes
    valid = paths >= 0
    p = np.maximum(paths, 0)
    hop_rate = np.where(valid, rates[p], np.inf)
    hops = valid.sum(axis=1)
    fixed_ps = (
        np.where(valid, delays[p], 0).sum(axis=1)
        + np.maximum(hops - 1, 0) * switch_latency_ps
        + (first[:, None] * 8e12 / hop_rate).sum(axis=1)
    )
    return fixed_ps * 1e-12, (wire - first) * 8.0, hop_rate.min(axis=1)


def _as_flows(flows) -> pd.DataFrame:
    df = pd.DataFrame(flows).copy()
    missing = [c for c in ("src", "dst", "size_bytes") if c not in df.columns]
    if missing:
        raise InputError(
            "flows table lacks columns",
            field="flows",
            value=", ".join(missing),
            allowed="id, src, dst, size_bytes, start_us, sport",
        )
    if "id" not in df.columns:
        df["id"] = np.arange(len(df))
    if "start_us" not in df.columns:
        df["start_us"] = 0.0
    if len(df) and (df["size_bytes"] <= 0).any():
        raise InputError(
            "flow size must be positive",
            field="flows.size_bytes",
            value=int(df.loc[df["size_bytes"] <= 0, "size_bytes"].iloc[0]),
        )
    return df


def simulate_flows(
    topology: Topology,
    flows,
    routing: str = "ecmp",
    seed: int = 1,
    switch_latency_ps: float = 0,
    mtu_bytes: int = 4000,
    header_bytes: int = 64,
    flow_efficiency: np.ndarray | None = None,
) -> pd.DataFrame:
    """Flow-level simulation. ``flows``: a table (DataFrame or dict of columns) with ``src``,
    ``dst`` (host node ids), ``size_bytes``, optional ``id``, ``start_us``, ``sport`` (UDP source
    port hashed by ECMP; default one per flow id, :func:`aifabric.flow.hashing.flow_sport`).

    Returns columns id, src, dst, size_bytes, start_us, fct_us, ideal_fct_us, slowdown (one row
    per input flow, input order). ``df.attrs`` holds ``events`` and ``wall_s``. ``flow_efficiency``
    (per flow) caps the rate of each flow that crosses a switch-to-switch link at that share of its
    bottleneck rate, not its ideal (UET's measured term: :mod:`aifabric.flow.uet`).
    """
    t0 = time.perf_counter()
    df, paths, fixed_s, drain_bits, bottleneck = _routed(
        topology, flows, routing, seed, switch_latency_ps, mtu_bytes, header_bytes
    )
    src = df["src"].to_numpy(np.int64)
    dst = df["dst"].to_numpy(np.int64)
    size = df["size_bytes"].to_numpy(np.float64)
    start = df["start_us"].to_numpy(np.float64) * 1e-6
    mode = flow_routing(routing)
    split = _path_model(topology).split(src, dst) if mode in MULTIPATH else None
    caps = None
    if flow_efficiency is not None:
        from aifabric.flow.uet import flow_caps_bps

        caps = flow_caps_bps(topology, paths, split, bottleneck, flow_efficiency)
    finish, events = simulate_drain(
        paths, drain_bits, start, link_rates_bps(topology, mode), split=split, flow_cap_bps=caps
    )
    fct = finish - start + fixed_s
    ideal = fixed_s + drain_bits / bottleneck
    out = pd.DataFrame(
        {
            "id": df["id"].to_numpy(),
            "src": src,
            "dst": dst,
            "size_bytes": df["size_bytes"].to_numpy(np.int64),
            "start_us": start * 1e6,
            "fct_us": fct * 1e6,
            "ideal_fct_us": ideal * 1e6,
        }
    )
    out["slowdown"] = out["fct_us"] / out["ideal_fct_us"]
    out.attrs["events"] = int(events)
    out.attrs["wall_s"] = time.perf_counter() - t0
    out.attrs["routing"] = routing
    # per directed link (port 2*link + dir, as the packet engine's port ids): payload bytes and flows
    nd = 2 * topology.num_links
    if split is not None:
        fptr, flink, fw = split
        per = np.repeat(size, np.diff(fptr))
        per *= fw  # in place: one entries-long temporary (65 M entries at 16,384 GPUs)
        out.attrs["link_bytes"] = np.bincount(flink, weights=per, minlength=nd).astype(np.int64)
        del per
        out.attrs["link_flows"] = np.bincount(flink, minlength=nd).astype(np.int64)
    else:
        valid = paths >= 0
        hop_links = paths[valid]
        out.attrs["link_bytes"] = np.bincount(
            hop_links, weights=np.repeat(size, valid.sum(axis=1)), minlength=nd
        ).astype(np.int64)
        out.attrs["link_flows"] = np.bincount(hop_links, minlength=nd).astype(np.int64)
    return out


def ideal_fct_us(
    topology: Topology,
    flows,
    routing: str = "ecmp",
    seed: int = 1,
    switch_latency_ps: float = 0,
    mtu_bytes: int = 4000,
    header_bytes: int = 64,
) -> np.ndarray:
    """Each flow's ``ideal_fct_us`` as :func:`simulate_flows` gives it (alone on the fabric: its
    path's fixed latency + its bytes at its bottleneck rate) without running the drain — what a
    caller that needs only the ideal (the measure stage's one-QP reference) pays for."""
    _, _, fixed_s, drain_bits, bottleneck = _routed(
        topology, flows, routing, seed, switch_latency_ps, mtu_bytes, header_bytes
    )
    return (fixed_s + drain_bits / bottleneck) * 1e6


def _routed(topology, flows, routing, seed, switch_latency_ps, mtu_bytes, header_bytes):
    """The flow table, each flow's path under the routing mode (per-packet modes: its ECMP path,
    which stands for its latency) and :func:`path_latency`'s (fixed s, drain bits, bottleneck)."""
    df = _as_flows(flows)
    src = df["src"].to_numpy(np.int64)
    dst = df["dst"].to_numpy(np.int64)
    size = df["size_bytes"].to_numpy(np.float64)
    sport = df["sport"].to_numpy(np.int64) if "sport" in df.columns else None
    if sport is None:
        from aifabric.flow.hashing import flow_sport

        sport = flow_sport(df["id"].to_numpy(np.int64))
    paths = _path_model(topology).route(src, dst, routing=flow_routing(routing), seed=seed, sport=sport)
    return df, paths, *path_latency(topology, paths, size, switch_latency_ps, mtu_bytes, header_bytes)


def link_table(topology: Topology, df: pd.DataFrame) -> pd.DataFrame:
    """One row per interface (egress of ``node`` on ``link`` toward ``peer``; row ``2*link + dir``
    as the packet engine's ports table) with the payload bytes and flows the flow model routed over
    it and its mean utilisation over the run (first start → last completion)."""
    nl = topology.num_links
    la = topology.link_a.astype(np.int64)
    lb = topology.link_b.astype(np.int64)
    node = np.empty(2 * nl, np.int64)
    peer = np.empty(2 * nl, np.int64)
    node[0::2], node[1::2] = la, lb
    peer[0::2], peer[1::2] = lb, la
    rate = directed_rates_bps(topology)
    nbytes = np.asarray(df.attrs.get("link_bytes", np.zeros(2 * nl, np.int64)))
    nflows = np.asarray(df.attrs.get("link_flows", np.zeros(2 * nl, np.int64)))
    done = np.isfinite(df["fct_us"].to_numpy(np.float64)) if len(df) else np.zeros(0, bool)
    span_us = float((df["start_us"] + df["fct_us"])[done].max() - df["start_us"].min()) if done.any() else 0.0
    names = np.asarray(topology.node_names, dtype=object)
    return pd.DataFrame(
        {
            "node": node,
            "node_name": names[node],
            "peer": peer,
            "peer_name": names[peer],
            "link": np.repeat(np.arange(nl), 2),
            "rate_gbps": rate / 1e9,
            "tx_bytes": nbytes,
            "flows": nflows,
            "mean_utilization": nbytes * 8 / (rate * span_us * 1e-6) if span_us > 0 else np.zeros(2 * nl),
        }
    )


def estimate_bytes(num_flows: int, hops: int = 8, json_flows: bool = True) -> int:
    """Peak bytes of :func:`simulate_flows` (and the scenario runner's output) for ``num_flows``
    flows of up to ``hops`` links: paths and their per-hop temporaries, the drain kernel's work
    arrays, the result table and, with ``json_flows``, one Python record per flow."""
    per_flow = 8 * hops * 9 + 8 * 24 + (1200 if json_flows else 0)
    return int(num_flows) * per_flow


def simulate_drain(
    paths: np.ndarray,
    drain_bits: np.ndarray,
    start_s: np.ndarray,
    capacity_bps: np.ndarray,
    split: tuple | None = None,
    flow_cap_bps: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """Time (s) each fluid flow finishes draining ``drain_bits`` from ``start_s`` under max-min
    sharing recomputed at each arrival / completion; returns ``(finish_s, events)``. ``split``
    (``(fptr, flink, fw)`` from :meth:`~aifabric.flow.paths.PathModel.split`) replaces the single
    paths: a flow at rate r loads each of its links with r × its share there (per-packet modes).
    ``flow_cap_bps`` (per flow, ``inf`` for none) caps a flow's rate: a link of its own, appended.

    Arrivals at one instant (and completions within the drain tolerance) are one event. The loop
    and the progressive filling run in :func:`aifabric.flow._kernels.drain` (numba): each event
    costs O(A + E_A log L) for A active flows with E_A (flow, link) entries, with no allocation."""
    drain_bits = np.ascontiguousarray(drain_bits, dtype=np.float64)
    f = len(drain_bits)
    finish = np.full(f, np.nan)
    if not f:
        return finish, 0
    start_s = np.ascontiguousarray(start_s, dtype=np.float64)
    if split is not None:
        fptr = np.ascontiguousarray(split[0], dtype=np.int64)
        flink = np.ascontiguousarray(split[1], dtype=np.int64)
        fw = np.ascontiguousarray(split[2], dtype=np.float64)
    else:
        paths = np.asarray(paths)
        valid = paths >= 0
        fptr = np.zeros(f + 1, dtype=np.int64)
        np.cumsum(valid.sum(axis=1), out=fptr[1:])
        flink = np.ascontiguousarray(paths[valid], dtype=np.int64)  # row-major: grouped by flow
        fw = np.ones(len(flink))
    cap = np.ascontiguousarray(capacity_bps, dtype=np.float64)
    if flow_cap_bps is not None:
        fptr, flink, fw, cap = _with_flow_caps(fptr, flink, fw, cap, np.asarray(flow_cap_bps, np.float64))
    order = np.argsort(start_s, kind="stable")
    ws = Work(len(cap), len(flink), f)
    events = drain(fptr, flink, fw, cap, drain_bits, start_s, order, finish, *ws.arrays())
    return finish, int(events)


def _with_flow_caps(fptr, flink, fw, cap, flow_cap):
    """Each capped flow gets one more link, its own (ids after the real ones, so each flow's links
    stay ascending), with its cap as capacity."""
    capped = np.isfinite(flow_cap)
    n = int(capped.sum())
    if not n:
        return fptr, flink, fw, cap
    at = fptr[1:][capped]
    flink = np.ascontiguousarray(np.insert(flink, at, len(cap) + np.arange(n)), dtype=np.int64)
    fw = np.ascontiguousarray(np.insert(fw, at, 1.0), dtype=np.float64)
    fptr = fptr + np.concatenate([[0], np.cumsum(capped)])
    return fptr, flink, fw, np.concatenate([cap, flow_cap[capped]])


def summary_of(df: pd.DataFrame) -> dict:
    """The ``simulate --json`` summary for a flows table (flow level: no queues, so no drops,
    pauses, marks or queue depth — reported as 0)."""
    n = len(df)
    done = df[np.isfinite(df["fct_us"].to_numpy(np.float64))]  # float even when empty (object dtype)
    if len(done):
        t_first = float(df["start_us"].min())
        t_last = float((done["start_us"] + done["fct_us"]).max())
        span_s = max(t_last - t_first, 1e-12) * 1e-6
        goodput = float(done["size_bytes"].sum()) * 8 / span_s / 1e9
        thr = done["size_bytes"].to_numpy(np.float64) / done["fct_us"].to_numpy(np.float64)
    else:
        goodput, thr = 0.0, np.zeros(0)

    def q(col, p):
        return float(np.percentile(done[col], p)) if len(done) else 0.0

    return {
        "flows": n,
        "completed_flows": int(len(done)),
        "fct_p50_us": q("fct_us", 50),
        "fct_p99_us": q("fct_us", 99),
        "fct_max_us": float(done["fct_us"].max()) if len(done) else 0.0,
        "slowdown_p50": q("slowdown", 50),
        "slowdown_p99": q("slowdown", 99),
        "goodput_gbps": goodput,
        "jain_fairness": jain_index(thr),
        "drops": 0,
        "pause_frames": 0,
        "pause_time_us": 0.0,
        "ecn_marks": 0,
        "max_queue_bytes": 0,
        "deadlock": False,
        "complete": bool(len(done) == n),
    }
