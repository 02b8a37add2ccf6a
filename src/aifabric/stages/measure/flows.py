"""The measure stage's pattern runners: the design's rail-optimised topology and the flow-level
run of one traffic pattern on it, each cached by its inputs (topology, pattern, routing, seed), so
the same one is never simulated twice in a process. :mod:`aifabric.stages.measure.network` and its
expert-parallel and placed-traffic parts (:mod:`~aifabric.stages.measure.expert`,
:mod:`~aifabric.stages.measure.placed`) build on them.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

HEADER_BYTES = {"infiniband": 26, "roce": 64}
MTU_BYTES = {"infiniband": 4096, "roce": 4096}
RING_SEEDS = 3  # hash seeds the ring step is averaged over


@lru_cache(maxsize=8)
def rail_topology(
    gpus: int, link_rate_bps: int, gpus_per_node: int, radix: int, lengths_m: tuple[float, ...]
):
    """The design's rail-optimised topology (cached: every pattern and routing reuses it)."""
    from aifabric.topology import rail_optimized

    return rail_optimized(gpus, link_rate_bps, gpus_per_node=gpus_per_node, radix=radix, lengths_m=lengths_m)


@lru_cache(maxsize=64)
def measure_pattern(
    topo_key: tuple, technology: str, pattern, seed: int, switch_latency_ps: float, routing: str
) -> tuple[float, np.ndarray]:
    """Flow-level run of one pattern (cached by its inputs); returns (efficiency, fct_us array) of
    the job's flows. Each connection is ``pattern.qps`` flows (NCCL channels per NIC × QPs per
    connection, each its own UDP source port under ECMP); with several, the step's ideal is the
    whole connection's (the pattern with one QP): a sub-flow alone would finish sooner."""
    ideal, fct = _run_pattern(topo_key, technology, pattern, seed, switch_latency_ps, routing)
    if getattr(pattern, "qps", 1) > 1:
        ideal = _ideal_pattern(
            topo_key, technology, replace(pattern, qps=1), seed, switch_latency_ps, routing
        )
    eff = float(ideal / fct.max())
    return min(1.0, eff), fct


@lru_cache(maxsize=64)
def _run_pattern(
    topo_key: tuple, technology: str, pattern, seed: int, switch_latency_ps: float, routing: str
) -> tuple[float, np.ndarray]:
    """(the slowest ideal FCT, every FCT) of the job's flows of one pattern, µs."""
    from aifabric.flow import simulate_flows

    df, job = _on_pattern(simulate_flows, topo_key, technology, pattern, seed, switch_latency_ps, routing)
    if job is not None:
        df = df[job]
    return df["ideal_fct_us"].max(), df["fct_us"].to_numpy()


def _on_pattern(
    run, topo_key: tuple, technology: str, pattern, seed: int, switch_latency_ps: float, routing: str
):
    """``run`` (:func:`~aifabric.flow.simulate_flows` or :func:`~aifabric.flow.engine.ideal_fct_us`)
    on the pattern's flows over the design's topology, and the job's mask (shared placement: the
    job's flows; the rest is other jobs' traffic) or None."""
    flows = pattern.flows()
    job = flows.pop("job", None)
    out = run(
        rail_topology(*topo_key),
        flows,
        routing=routing,
        seed=seed,
        switch_latency_ps=switch_latency_ps,
        mtu_bytes=MTU_BYTES[technology],
        header_bytes=HEADER_BYTES[technology],
    )
    return out, job


@lru_cache(maxsize=64)
def _ideal_pattern(
    topo_key: tuple, technology: str, pattern, seed: int, switch_latency_ps: float, routing: str
) -> float:
    """The slowest ideal FCT (µs) of the job's flows of one pattern — :func:`_run_pattern`'s first
    value, without the drain it does not depend on."""
    from aifabric.flow.engine import ideal_fct_us

    ideal, job = _on_pattern(ideal_fct_us, topo_key, technology, pattern, seed, switch_latency_ps, routing)
    return (ideal[np.asarray(job)] if job is not None else ideal).max()


def topology_key(fd, gpus_per_node: int) -> tuple:
    return (
        fd.plan.gpus,
        int(fd.nic_rate_gbps * 1e9),
        gpus_per_node,
        fd.radix,
        tuple(fd.lengths_m[c] for c in ("host-leaf", "leaf-spine", "spine-core")),
    )
