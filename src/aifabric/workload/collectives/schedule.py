"""A collective as flows with start times (what ``simulate --mode flow`` runs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from aifabric.topology.core import Topology
from aifabric.workload.collectives.decompose import collective_flows
from aifabric.workload.collectives.run import run_collective


def collective_flow_schedule(
    op: str,
    size_bytes: int,
    topology: Topology,
    ranks=None,
    algorithm: str = "ring",
    technology: str | None = None,
    routing: str = "ecmp",
    seed: int = 1,
    switch_latency_ps: float = 0,
    mtu_bytes: int = 4000,
    header_bytes: int = 64,
    gpus_per_node: int | None = None,
    max_expanded: int = 200_000,
):
    """The collective's network flows, each step's flows started when the previous step ends
    (barrier per step), simulated by the flow engine with *physical* latency only (no NCCL
    software terms), as a packet engine would see them. Returns ``(flows_df, CollectiveResult)``;
    repeated steps are unrolled up to ``max_expanded`` flows, beyond which one repetition stands
    for all (its flows carry the step's total bytes)."""
    from aifabric.flow.engine import simulate_flows

    steps = collective_flows(
        op, size_bytes, topology, ranks=ranks, algorithm=algorithm, gpus_per_node=gpus_per_node
    )
    res = run_collective(
        op,
        size_bytes,
        topology,
        engine="flow",
        ranks=ranks,
        algorithm=algorithm,
        routing=routing,
        seed=seed,
        switch_latency_ps=switch_latency_ps,
        mtu_bytes=mtu_bytes,
        header_bytes=header_bytes,
        gpus_per_node=gpus_per_node,
        protocol="simple",
        nccl_latency=False,
        steps=steps,
        technology=technology,
        nic_efficiency=1.0,  # what a packet engine would see: physical latency and line-rate NICs
    )
    frames = []
    t_us = 0.0
    fid = 0
    events = 0
    kw = dict(
        routing=routing,
        seed=seed,
        switch_latency_ps=switch_latency_ps,
        mtu_bytes=mtu_bytes,
        header_bytes=header_bytes,
    )
    for st in steps:
        if st.domain != "network":
            continue
        fl = st.flows
        reps = st.repeat if st.repeat * len(fl) <= max_expanded else 1
        size = fl[:, 2] * (st.repeat // reps)
        for _ in range(reps):
            df = simulate_flows(
                topology,
                {
                    "id": np.arange(fid, fid + len(fl)),
                    "src": fl[:, 0],
                    "dst": fl[:, 1],
                    "size_bytes": size,
                    "start_us": t_us,
                    "sport": 49152 + np.arange(len(fl)) % 16384,
                },
                **kw,
            )
            events += df.attrs["events"]
            fid += len(fl)
            t_us = float((df["start_us"] + df["fct_us"]).max())
            frames.append(df)
    out = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(
            columns=["id", "src", "dst", "size_bytes", "start_us", "fct_us", "ideal_fct_us", "slowdown"]
        )
    )
    out.attrs["events"] = events
    if frames:  # per directed link, summed over the steps (flow.engine.link_table)
        out.attrs["link_bytes"] = sum(f.attrs["link_bytes"] for f in frames)
        out.attrs["link_flows"] = sum(f.attrs["link_flows"] for f in frames)
    return out, res
