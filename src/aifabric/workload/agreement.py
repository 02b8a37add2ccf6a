"""Flow-level model vs packet engine on collective completion time (same topology, routing, hashing).

A collective is decomposed by :func:`aifabric.workload.collectives.collective_flows` into steps.
Both engines time every *network* step on exactly the same flows (ids 0..F−1 per step, so both use
the same RoCEv2 source ports and therefore the same ECMP choices); a step ends when its last flow
completes (the barrier the flow engine also uses — exact for these symmetric steps), and the
collective's network time is Σ repeat × step time. NVLink steps and NCCL's software latency are
left out: they are identical in both engines, so leaving them out only makes the comparison
stricter.

:func:`compare_collective` returns one row; :func:`agreement_table` several, as a DataFrame.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _scenario(technology: str, link_rate_bps: int, mtu: int, header: int, routing: str, seed: int):
    from aifabric.scenario import scenario_from_dict

    fabric = {"technology": technology, "mtu": f"{mtu}B", "header": f"{header}B", "routing": routing}
    if technology == "roce":
        fabric.update(
            {
                "pfc": {"enabled": True, "mode": "static"},
                "ecn": {"enabled": False},
                "congestion_control": "none",
            }
        )
    return scenario_from_dict(
        {
            "name": "agreement",
            "seed": seed,
            "topology": {"kind": "star", "hosts": 2, "link_rate": f"{link_rate_bps}bps"},
            "fabric": fabric,
            "sim": {"until": "10s", "progress": False},
        }
    )


def compare_collective(
    op: str,
    size_bytes: int,
    topology,
    technology: str = "roce",
    routing: str = "ecmp",
    algorithm: str = "ring",
    gpus_per_node: int | None = None,
    mtu: int = 4000,
    header: int = 64,
    seed: int = 1,
) -> dict:
    """Network completion time of one collective in both engines."""
    from aifabric.flow import simulate_flows
    from aifabric.sim import simulate
    from aifabric.sim.collective import step_table
    from aifabric.workload.collectives import collective_flows

    steps = [
        s
        for s in collective_flows(op, size_bytes, topology, algorithm=algorithm, gpus_per_node=gpus_per_node)
        if s.domain == "network"
    ]
    rate = int(np.max(topology.link_rate_bps))
    sc = _scenario(technology, rate, mtu, header, routing, seed)
    packet_s = flow_s = 0.0
    t_packet = t_flow = 0.0
    flows = packets = 0
    for step in steps:
        df = step_table(step)
        t0 = time.perf_counter()
        res = simulate(sc, flows=df, topology=topology)
        t_packet += time.perf_counter() - t0
        f = res.flows
        if int(res.summary["completed_flows"]) != len(df) or int(res.summary["drops"]):
            raise RuntimeError(
                f"packet engine: {len(df) - int(res.summary['completed_flows'])} flows unfinished, "
                f"{res.summary['drops']} drops in a lossless run"
            )
        # receiver-side completion (last byte delivered), as the flow engine measures; the packet
        # engine's fct_us (ns-3 style) also includes the final ACK's way back
        packet_s += step.repeat * float((f["start_us"] + f["rx_fct_us"]).max()) * 1e-6
        packets += int(res.engine.get("packets", 0))
        t0 = time.perf_counter()
        q = simulate_flows(
            topology,
            {"id": df["id"], "src": df["src"], "dst": df["dst"], "size_bytes": df["size_bytes"]},
            routing=routing,
            seed=seed,
            mtu_bytes=mtu,
            header_bytes=header,
        )
        t_flow += time.perf_counter() - t0
        flow_s += step.repeat * float((q["start_us"] + q["fct_us"]).max()) * 1e-6
        flows += len(df)
    return {
        "op": op,
        "algorithm": algorithm,
        "technology": technology,
        "routing": routing,
        "hosts": int(topology.num_hosts),
        "size_bytes": int(size_bytes),
        "network_steps": len(steps),
        "flows_per_step_set": flows,
        "packet_time_us": packet_s * 1e6,
        "flow_time_us": flow_s * 1e6,
        "gap": flow_s / packet_s - 1 if packet_s else float("nan"),
        "packet_wall_s": t_packet,
        "flow_wall_s": t_flow,
        "packets": packets,
    }


def agreement_table(cases) -> pd.DataFrame:
    """Run :func:`compare_collective` for each ``(kwargs)`` in ``cases``."""
    import pandas as pd

    return pd.DataFrame([compare_collective(**c) for c in cases])


def format_table(df) -> str:
    lines = [
        "| collective | algorithm | fabric / routing | hosts | size | packet (µs) | flow (µs) | gap |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in df.itertuples(index=False):
        lines.append(
            f"| {r.op} | {r.algorithm} | {r.technology} / {r.routing} | {r.hosts} | "
            f"{r.size_bytes / 2**20:g} MiB | {r.packet_time_us:,.1f} | {r.flow_time_us:,.1f} | {r.gap:+.1%} |"
        )
    return "\n".join(lines)
