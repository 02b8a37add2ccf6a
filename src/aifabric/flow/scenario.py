"""A scenario in flow mode → the same JSON-shaped dict as ``aifabric simulate --json``.

The simulate CLI dispatches ``sim.mode: flow`` (or ``--mode flow``) here. Pass ``flows=`` (the
table the packet engine's workload generator built) so both engines see identical flows; without
it, permutation / incast / all-to-all flows are generated here with the interface semantics, and
``collective`` workloads are decomposed by :mod:`aifabric.workload.collectives`.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from aifabric.errors import InputError
from aifabric.flow import uet
from aifabric.flow.draws import derangement
from aifabric.flow.engine import simulate_flows, summary_of
from aifabric.topology.core import Topology


def _basic_flows(scenario, topo: Topology) -> pd.DataFrame:
    w = scenario.workload
    hosts = topo.hosts
    start_us = (w.start or 0) / 1e6
    size = w.flow_size_bytes
    rng = np.random.default_rng(scenario.seed)
    if w.kind == "permutation":
        n = w.hosts or len(hosts)
        h = hosts[:n]
        perm = derangement(n, rng)  # uniform: nobody sends to itself, bounded time for any seed
        src, dst = h, h[perm]
    elif w.kind == "incast":
        recv = int(w.receiver or 0)
        if recv >= len(hosts):
            raise InputError(
                "receiver is not a host",
                field="workload.receiver",
                value=recv,
                allowed=f"0..{len(hosts) - 1}",
            )
        others = hosts[hosts != hosts[recv]]
        if w.senders > len(others):
            raise InputError(
                "more senders than hosts",
                field="workload.senders",
                value=w.senders,
                allowed=f"1..{len(others)}",
            )
        src = others[: w.senders]
        dst = np.full(len(src), hosts[recv])
    elif w.kind == "all-to-all":
        n = w.hosts or len(hosts)
        h = hosts[:n]
        s, d = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        m = s != d
        src, dst = h[s[m]], h[d[m]]
    else:
        raise InputError(
            "flow mode cannot generate this workload by itself; pass the flows table",
            field="workload.kind",
            value=w.kind,
            allowed="permutation, incast, all-to-all, collective (or flows=...)",
        )
    return pd.DataFrame(
        {"id": np.arange(len(src)), "src": src, "dst": dst, "size_bytes": size, "start_us": start_us}
    )


def _uet_settings(fab, kw: dict) -> tuple[dict, dict]:
    """A UET fabric at flow level (:mod:`aifabric.flow.uet`): the even split when sprayed, and the
    measured per-flow efficiency; returns the engine kwargs and ``engine.uet``."""
    if fab.uet.delivery == "rod":
        raise InputError(
            "ordered delivery (go-back after each lost packet) is modelled on the packet engine only",
            field="fabric.uet.delivery",
            value="rod",
            allowed="rud at flow level, or sim.mode: packet (aifabric simulate --mode packet)",
        )
    kw = {
        **kw,
        "routing": uet.routing(fab),
        "uet_trimming": (fab.uet.trimming, fab.uet.load_balancer, fab.congestion_control),
    }
    info = {
        "model": "flow: even split over equal-cost paths; a flow crossing switch-to-switch links "
        "capped at its measured efficiency x its bottleneck rate",
        "trimming": fab.uet.trimming,
        "ev_count": fab.uet.ev_count,
        "load_balancer": fab.uet.load_balancer,
        "congestion_control": fab.congestion_control,
        "mean_flow_efficiency": uet.efficiency(
            fab.uet.trimming, fab.uet.load_balancer, fab.congestion_control
        ),
        "efficiency_source": "data/reference/uet-flow-efficiency.json (measured on the packet engine)",
    }
    return kw, info


def simulate_flow_scenario(
    scenario, flows=None, topology: Topology | None = None, tables: dict | None = None
) -> dict:
    """Run ``scenario`` at flow level; returns ``{"scenario", "summary", "engine", "flows"}``
    shaped as interface.md's ``simulate --json`` (``engine.packets`` is 0: no packets exist).
    ``tables`` (a dict), when given, receives ``"flows"``: the flows DataFrame (with its
    ``attrs``: per-link bytes for :func:`aifabric.flow.engine.link_table`)."""
    from aifabric.topology.builders import from_spec

    t0 = time.perf_counter()
    if scenario.topology is None or scenario.workload is None:
        raise InputError("flow mode needs a topology and a workload", field="workload")
    topo = topology if topology is not None else from_spec(scenario.topology)
    fab = scenario.fabric
    for name in ("pfc_overrides", "pause_storms", "failures"):
        if getattr(fab, name, None):
            raise InputError(
                "the flow model has no PFC, PAUSE frames or failures; this needs the packet engine",
                field=f"fabric.{name}",
                allowed="sim.mode: packet (aifabric simulate --mode packet)",
            )
    if fab.link_errors.fer > 0:
        raise InputError(
            "the flow model has no link frame errors; this needs the packet engine",
            field="fabric.link_errors.fer",
            allowed="0, or sim.mode: packet (aifabric simulate --mode packet)",
        )
    kw = dict(
        routing=fab.routing_mode,
        seed=scenario.seed,
        switch_latency_ps=fab.switch_latency_ps,
        mtu_bytes=fab.mtu_bytes,
        header_bytes=fab.header_bytes,
    )
    extra = {}
    if fab.transport == "uet":
        kw, extra["uet"] = _uet_settings(fab, kw)
    if flows is None and scenario.workload.kind == "collective":
        from aifabric.workload.collectives.schedule import collective_flow_schedule

        if fab.transport == "uet":
            raise InputError(
                "collective workloads under transport uet run on the packet engine only",
                field="workload.kind",
                allowed="sim.mode: packet, or permutation / incast / all-to-all / flows-file",
            )

        w = scenario.workload
        df, res = collective_flow_schedule(
            w.op,
            w.size,
            topo,
            ranks=w.hosts,
            algorithm=w.algorithm or "ring",
            technology=fab.technology,
            **kw,
        )
        events = int(df.attrs.get("events", 0))
        extra["collective"] = res.as_dict()
    else:
        table = _basic_flows(scenario, topo) if flows is None else flows
        trim_lb = kw.pop("uet_trimming", None)
        if trim_lb is not None:
            kw["flow_efficiency"] = uet.flow_efficiencies(len(table), trim_lb[0], scenario.seed, *trim_lb[1:])
        df = simulate_flows(topo, table, **kw)
        events = int(df.attrs.get("events", 0))
    if tables is not None:
        tables["flows"] = df
    out_flows = [
        {
            "id": int(r.id),
            "src": int(r.src),
            "dst": int(r.dst),
            "size_bytes": int(r.size_bytes),
            "start_us": float(r.start_us),
            "fct_us": float(r.fct_us),
            "ideal_fct_us": float(r.ideal_fct_us),
        }
        for r in df.itertuples(index=False)
    ]
    result = {
        "scenario": scenario.name,
        "summary": summary_of(df),
        "engine": {
            "events": events,
            "packets": 0,
            "wall_s": time.perf_counter() - t0,
            "mode": "flow",
            "note": "flow level: no queues, so drops, pauses, ECN marks and max_queue_bytes are 0 "
            "by construction",
        },
        "flows": out_flows,
    }
    uet_info = extra.pop("uet", None)
    if uet_info is not None:
        result["engine"]["uet"] = uet_info
    result.update(extra)
    return result
