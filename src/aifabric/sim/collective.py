"""A ``workload: {kind: collective}`` scenario at packet level, step by step.

:func:`simulate_collective` (what :func:`aifabric.sim.simulate` runs for a collective workload)
decomposes the collective with :func:`aifabric.workload.collectives.collective_flows` and runs
every *network* step through the packet engine with the scenario's fabric (PFC / ECN / DCQCN /
HPCC, InfiniBand credits, routing, ``qp_split``, ``pfc_overrides``, ``pause_storms``), each on an
idle fabric from t = 0. A step ends when the receiver holds the last byte of its last flow
(barrier per step: exact for these symmetric steps, and what the flow engine's collective timing
and :mod:`aifabric.workload.agreement` use). A step standing for ``repeat = k`` identical steps (a ring's
2(n−1) steps, n ranks) is simulated once and counted k times (``engine.steps_simulated`` /
``engine.steps_total``).

The collective's result (``collective``: time, algbw, busbw, latency / network / NVLink terms,
bytes) is composed by :func:`aifabric.workload.collectives.run_collective` exactly as flow mode
composes it (protocol Simple, no NCCL software latency: physical latency only), with each network
step's time taken from the packet engine instead of the max-min fluid model: the packet step time
``T`` is split into the flow model's physical path latency ``phys`` (the longest first-packet
store-and-forward latency of the step's routes) and a bandwidth term ``T − phys``, handed to
``run_collective`` as its ``network_timer``. NVLink / NVLS steps are timed by the same NVLink
model as in flow mode (they are not packets on the fabric).

Time-dependent fabric events are relative to each step's start (every step runs from t = 0):
``pause_storms`` hit every step alike; ``failures`` must be at ``at: 0`` (the link is down for the
whole collective). ``sim.until`` and ``sim.deadlock_timeout`` apply to each step.
"""

from __future__ import annotations

import math
import time

import numpy as np

from aifabric.errors import InputError
from aifabric.sim.results import Results, _jsonable

#: summary counters that are summed over the network steps × repeat (the whole collective)
COUNTED_X_REPEAT = (
    "drops",
    "pause_frames",
    "pause_time_us",
    "ecn_marks",
    "injected_pauses",
    "injected_pause_time_us",
)
#: engine counters summed over the simulated steps (the simulation's own work, once per step)
_ENGINE_SUMS = (
    "events",
    "packets",
    "acks",
    "cnps",
    "resume_frames",
    "injected_bytes",
    "delivered_bytes",
    "dropped_bytes",
    "discarded_bytes",
    "retransmissions",
    "nacks",
    "in_flight_bytes",
)
_COPY_FIRST = (
    "routing",
    "ib_vl_buffer_bytes",
    "hpcc_int_bytes",
    "pfc_default",
    "pfc_overrides",
    "pause_storms",
)
_NOTE = (
    "packet level, one run per distinct network step (barrier per step, repeated steps simulated once); "
    "summary flows / completed_flows / FCT and slowdown percentiles / jain_fairness: the simulated flows "
    "(the flows list); drops, pause_frames, pause_time_us, ecn_marks, injected_pauses, "
    "injected_pause_time_us: summed over network steps x repeat (the whole collective); max_queue_bytes: "
    "the largest of any step; goodput_gbps: the collective's network payload / its network time; "
    "engine counters (events, packets, ...): what was simulated"
)


class CollectiveResults(Results):
    """:class:`~aifabric.sim.results.Results` of a collective run: the tables hold the simulated
    steps' flows / ports / PFC log with a ``step`` column (index into ``engine["steps"]``);
    ``collective`` is the :class:`~aifabric.workload.collectives.CollectiveResult` as a dict
    (the flow mode's ``collective`` fields)."""

    def __init__(self, *args, collective: dict, **kw):
        super().__init__(*args, **kw)
        self.collective = collective

    def to_dict(self, flows: bool = True) -> dict:
        out = super().to_dict(flows)
        out["collective"] = _clean(self.collective)
        return out

    def save(self, folder, meta: dict | None = None):
        """:meth:`Results.save`, with ``collective`` added to summary.json."""
        return super().save(folder, meta={**(meta or {}), "collective": _clean(self.collective)})


def _clean(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            v = _clean(v)
        elif isinstance(v, list):
            v = [_clean(x) if isinstance(x, dict) else x for x in v]
        else:
            v = _jsonable({k: v})[k]
        out[k] = v
    return out


def _check_fabric(fab) -> None:
    for i, f in enumerate(fab.failures):
        if int(f.at) != 0:
            raise InputError(
                "a collective's network steps are each simulated from t = 0, so a failure time inside "
                "the collective is not modelled",
                field=f"fabric.failures.{i}.at",
                value=f"{int(f.at) / 1e6:g}us",
                allowed="0us (the link is down for the whole collective)",
            )


def step_table(step):
    """One collective step's flows as a packet-engine flows table (also used by
    :mod:`aifabric.workload.agreement`)."""
    import pandas as pd

    from aifabric.workload.traffic import ROCE_DPORT

    fl = step.flows
    n = len(fl)
    # ids 0..F-1 per step: the same RoCEv2 source ports (ECMP choices) as the flow model's step timing
    return pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "src": fl[:, 0].astype(np.int64),
            "dst": fl[:, 1].astype(np.int64),
            "size_bytes": fl[:, 2].astype(np.int64),
            "start_ps": np.zeros(n, dtype=np.int64),
            "dport": np.full(n, ROCE_DPORT, dtype=np.int64),
        }
    )


def simulate_collective(scenario, topology=None, progress=None) -> CollectiveResults:
    """Run the collective of ``scenario.workload`` at packet level (see the module docstring)."""
    import pandas as pd

    from aifabric.flow.engine import path_latency
    from aifabric.sim import simulate
    from aifabric.workload.collectives.decompose import collective_flows
    from aifabric.workload.collectives.run import run_collective
    from aifabric.workload.traffic import split_qps

    t0 = time.perf_counter()
    w, fab = scenario.workload, scenario.fabric
    if topology is None:
        from aifabric.topology import from_spec

        topology = from_spec(scenario.topology)
    topo = topology
    _check_fabric(fab)
    if (w.hosts or topo.num_hosts) < 2:
        raise InputError(
            "a collective needs at least 2 hosts",
            field="topology",
            value=topo.num_hosts,
            allowed="a topology with 2 or more hosts",
        )
    algorithm = w.algorithm or "ring"
    steps = collective_flows(w.op, w.size, topo, ranks=w.hosts, algorithm=algorithm)
    times: dict[int, tuple[float, float, str]] = {}  # id(network step) → (bandwidth_s, phys_s, "packet")
    qp = int(fab.qp_split or 1)

    step_rows, flow_frames, port_frames, pfc_frames = [], [], [], []
    agg = {k: 0 for k in _ENGINE_SUMS}
    counted = {k: 0.0 for k in COUNTED_X_REPEAT}
    max_queue = 0
    first_engine: dict | None = None
    violations, stop, last = [], None, None
    net_time_ps = 0  # collective time so far (network steps × repeat): the next step's start
    payload_x_repeat = 0
    sim_us = 0.0
    fid = pid = 0  # running flow id / original (pre-qp_split) flow id
    for i, st in enumerate(steps):
        row = {
            "step": i,
            "domain": st.domain,
            "label": st.label,
            "repeat": int(st.repeat),
            "flows": int(st.num_flows),
            "simulated": False,
        }
        step_rows.append(row)
        if st.domain != "network":
            row["note"] = "not on the fabric: timed by the NVLink model (collective.nvlink_time_s)"
            continue
        if stop is not None:
            times[id(st)] = (math.nan, math.nan, "packet")
            row["note"] = "not reached: an earlier step did not complete"
            continue
        table = step_table(st)
        if qp > 1:
            table = split_qps(table, qp)
        res = simulate(scenario, flows=table, topology=topo, progress=progress)
        state = res.extra["state"]
        f = res.flows
        e, s = res.engine, res.summary
        first_engine = first_engine or e
        last = res
        done = bool(s["completed_flows"] == s["flows"]) and not s["deadlock"]
        rx_end = float((f["start_us"] + f["rx_fct_us"]).max()) if len(f) else 0.0
        t_ps = round(rx_end * 1e6) if done else None
        nf = len(f)
        fixed, _, _ = path_latency(
            topo,
            state.fpath[:nf],
            f["size_bytes"].to_numpy(np.float64),
            fab.switch_latency_ps,
            fab.mtu_bytes,
            fab.header_bytes,
        )
        phys = float(fixed.max()) if nf else 0.0
        row.update(
            {
                "simulated": True,
                "flows": nf,
                "status": e["status"],
                "start_us": net_time_ps / 1e6,
                "time_us": rx_end if done else None,
                "latency_us": phys * 1e6,
                "bandwidth_us": max(rx_end * 1e-6 - phys, 0.0) * 1e6 if done else None,
                "completed_flows": int(s["completed_flows"]),
                "drops": int(s["drops"]),
                "pause_frames": int(s["pause_frames"]),
                "ecn_marks": int(s["ecn_marks"]),
                "max_queue_bytes": int(s["max_queue_bytes"]),
                "events": int(e["events"]),
                "packets": int(e["packets"]),
                "delivered_bytes": int(e["delivered_bytes"]),
                "wall_s": e["wall_s"],
            }
        )
        for k in _ENGINE_SUMS:
            agg[k] += int(e.get(k, 0))
        for k in COUNTED_X_REPEAT:
            counted[k] += st.repeat * s.get(k, 0)
        max_queue = max(max_queue, int(s["max_queue_bytes"]))
        payload_x_repeat += st.repeat * int(e["delivered_bytes"])
        sim_us += float(e["sim_time_us"])
        if "lossless_violation" in e:
            violations.append(f"step {i}: {e['lossless_violation']}")

        fd = f.copy()
        fd.insert(0, "step", i)
        fd["id"] = fd["id"] + fid
        if "parent_id" in fd.columns:
            fd["parent_id"] = fd["parent_id"] + pid
        fd["start_us"] = fd["start_us"] + net_time_ps / 1e6
        fid += nf
        pid += len(st.flows)
        flow_frames.append(fd)
        pd_ = res.ports.copy()
        pd_.insert(0, "step", i)
        port_frames.append(pd_)
        pl = res.pfc_log.copy()
        pl["time_ns"] = pl["time_ns"] + net_time_ps // 1000
        pl["step"] = i
        pfc_frames.append(pl)

        if not done:
            times[id(st)] = (math.nan, math.nan, "packet")
            stop = {
                "step": i,
                "status": e["status"],
                "deadlock": bool(s["deadlock"]),
                "deadlock_cycle": e.get("deadlock_cycle"),
            }
            continue
        times[id(st)] = (max(t_ps * 1e-12 - phys, 0.0), phys, "packet")
        net_time_ps += st.repeat * t_ps

    def packet_timer(step, proto_eff):  # the packet step times above (protocol Simple: proto_eff 1)
        return times[id(step)]

    coll = run_collective(
        w.op,
        w.size,
        topo,
        engine="flow",
        ranks=w.hosts,
        algorithm=algorithm,
        routing=fab.routing,
        seed=scenario.seed,
        switch_latency_ps=fab.switch_latency_ps,
        mtu_bytes=fab.mtu_bytes,
        header_bytes=fab.header_bytes,
        protocol="simple",
        nccl_latency=False,
        nic_efficiency=1.0,  # the packet engine's own NIC (line rate): physics, not nccl-tests' 0.94
        steps=steps,
        technology=fab.technology,
        network_timer=packet_timer,
    )
    coll.engine = "packet"
    if coll.model == "packet":
        coll.model = "packet (barrier per step)"
    if stop is not None:
        coll.notes.append(f"step {stop['step']} stopped ({stop['status']}): the collective did not complete")
    coll.wall_s = time.perf_counter() - t0

    net_steps = [s for s in steps if s.domain == "network"]
    flows_df = pd.concat(flow_frames, ignore_index=True) if flow_frames else _empty_flows()
    summary = _summary(
        flows_df,
        counted,
        max_queue,
        payload_x_repeat,
        net_time_ps,
        stop,
        storms=bool(first_engine and "pause_storms" in first_engine),
    )
    engine = {
        **agg,
        "wall_s": round(time.perf_counter() - t0, 4),
        "sim_time_us": sim_us,
        "status": stop["status"] if stop else (last.engine["status"] if last else "done"),
        "mode": "packet",
        "steps_simulated": sum(r["simulated"] for r in step_rows),
        "steps_total": int(sum(s.repeat for s in net_steps)),
        "network_payload_bytes": int(payload_x_repeat),
        "note": _NOTE,
    }
    for k in _COPY_FIRST:
        if first_engine and k in first_engine:
            engine[k] = first_engine[k]
    if stop and stop["deadlock"]:
        engine["deadlock_step"] = stop["step"]
        engine["deadlock_cycle"] = stop["deadlock_cycle"] or []
    if violations:
        engine["lossless_violation"] = "; ".join(violations)
    engine["steps"] = step_rows
    ports = pd.concat(port_frames, ignore_index=True) if port_frames else None
    pfc = pd.concat(pfc_frames, ignore_index=True) if pfc_frames else None
    if ports is None:  # no network step (one server): empty tables
        ports = pd.DataFrame({"step": pd.Series(dtype=np.int64)})
    return CollectiveResults(
        scenario=scenario.name,
        flows=flows_df,
        ports=ports,
        summary=summary,
        engine=engine,
        pfc_log=pfc,
        extra={"start_offset_ns": 0, "steps": steps},
        collective=coll.as_dict(),
    )


def _empty_flows():
    import pandas as pd

    cols = [
        "step",
        "id",
        "src",
        "dst",
        "size_bytes",
        "start_us",
        "fct_us",
        "rx_fct_us",
        "ideal_fct_us",
        "slowdown",
        "throughput_gbps",
        "sport",
        "dport",
        "hops",
        "cnps",
        "retransmissions",
    ]
    df = pd.DataFrame(
        {
            c: pd.Series(dtype=np.float64 if c.endswith(("_us", "slowdown", "gbps")) else np.int64)
            for c in cols
        }
    )
    df["completed"] = pd.Series(dtype=bool)
    return df


def _summary(
    f, counted: dict, max_queue: int, payload_x_repeat: int, net_time_ps: int, stop, storms: bool
) -> dict:
    done = f["completed"].to_numpy(bool)
    fc = f["fct_us"].to_numpy(np.float64)[done]
    sd = f["slowdown"].to_numpy(np.float64)[done]
    thr = f["throughput_gbps"].to_numpy(np.float64)[done]

    def q(x, pct):
        return float(np.percentile(x, pct)) if len(x) else None

    jain = float(thr.sum() ** 2 / (len(thr) * (thr**2).sum())) if len(thr) else None
    goodput = payload_x_repeat * 8 / (net_time_ps * 1e-12) / 1e9 if net_time_ps and stop is None else None
    out = {
        "flows": int(len(f)),
        "completed_flows": int(done.sum()),
        "fct_p50_us": q(fc, 50),
        "fct_p99_us": q(fc, 99),
        "fct_max_us": float(fc.max()) if len(fc) else None,
        "slowdown_p50": q(sd, 50),
        "slowdown_p99": q(sd, 99),
        "goodput_gbps": goodput,
        "jain_fairness": jain,
        "drops": int(counted["drops"]),
        "pause_frames": int(counted["pause_frames"]),
        "pause_time_us": float(counted["pause_time_us"]),
        "ecn_marks": int(counted["ecn_marks"]),
        "max_queue_bytes": int(max_queue),
        "deadlock": bool(stop and stop["deadlock"]),
        "complete": stop is None and bool(done.all()),
    }
    if storms:
        out["injected_pauses"] = int(counted["injected_pauses"])
        out["injected_pause_time_us"] = float(counted["injected_pause_time_us"])
    return out


__all__ = ["COUNTED_X_REPEAT", "CollectiveResults", "simulate_collective"]
