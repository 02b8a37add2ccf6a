"""The cost model: NCCL's latency and protocol constants, and the timing of a step list — network
steps by the flow engine, α-β or a caller's timer (capped by the NIC), NVLink and NVLS steps
by their domain's rate."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aifabric.errors import InputError
from aifabric.topology.core import Topology
from aifabric.workload.collectives.base import NVLS_ALGORITHMS, NVLS_GPUS, NetworkTimer, Step
from aifabric.workload.collectives.layout import Layout
from aifabric.workload.collectives.nvlink import NvlinkDomain, NvlsDomain
from aifabric.workload.nic import NIC_EFFICIENCY

# NCCL tuner constants (hardware-facts §D, NVIDIA/nccl src/graph/tuning.cc [S16]); used when the
# catalog's defaults are not available.
_NCCL_FALLBACK = {
    "net": {
        "ring": {"ll": 2.7, "ll128": 4.0, "simple": 14.0},
        "tree": {"ll": 5.0, "ll128": 8.5, "simple": 14.0},
        "collnet-direct": {"simple": 31.0},
        "nvls": {"simple": 18.0},
        "nvls-tree": {"simple": 20.9},
    },
    "nvlink": {
        "ring": {"ll": 0.6, "ll128": 1.9, "simple": 3.4},
        "tree": {"ll": 0.6, "ll128": 1.25, "simple": 4.0},
        "collnet-direct": {"simple": 3.7},
        "nvls": {"simple": 25.0},
        "nvls-tree": {"simple": 25.0},
    },
    "base": {
        "ring": {"ll": 6.6, "ll128": 14.0, "simple": 8.4},
        "tree": {"ll": 6.8, "ll128": 14.0, "simple": 8.4},
        "nvls": {"simple": 0.0},
        "nvls-tree": {"simple": 0.0},
    },
    "eff": {"ll": 0.5, "ll128": 0.92, "simple": 1.0},
    "pat": 0.75,
}


def nccl_constants() -> dict:
    """NCCL's latency (µs) and protocol-efficiency constants, from the catalog defaults."""
    try:
        from aifabric.hardware.catalog import default_value

        net = default_value("nccl.hw_latency.net")
        nvl = default_value("nccl.hw_latency.nvlink")
        base = default_value("nccl.base_latency")
        ref = default_value("nccl.model_refinements")
        eff = {"ll": float(ref["ring_ll"]), "ll128": float(ref["ring_ll128"]), "simple": 1.0}
        return {"net": net, "nvlink": nvl, "base": base, "eff": eff, "pat": float(ref.get("pat", 0.75))}
    except Exception:  # catalog absent or reshaped: the cited constants above
        return _NCCL_FALLBACK


@dataclass
class _Ctx:
    topo: Topology
    lay: Layout
    routing: str
    seed: int
    switch_latency_ps: float
    mtu_bytes: int
    header_bytes: int
    nvlink: NvlinkDomain
    consts: dict
    engine: str
    max_flows: int
    nic_bps: float
    host_index: np.ndarray
    cache: dict = field(default_factory=dict)
    nvls: NvlsDomain | None = None
    network_timer: NetworkTimer | None = None
    nic_efficiency: float = NIC_EFFICIENCY


def _nic_bound_s(ctx: _Ctx, step: Step, proto_eff: float) -> float:
    """The NIC cap of one repetition of a network step: the busiest NIC's bytes on the wire
    (payload ÷ the protocol's efficiency, plus the transport's headers) at line rate × the NIC's
    achieved efficiency — the same bytes ``aifabric calibrate`` fits η on, and the transport's
    header overhead stays visible (IB 26 B, RoCEv2 64 B per MTU). No engine may time a step
    faster than this."""
    tx, rx = step.host_bytes(len(ctx.topo.hosts), ctx.host_index)
    busiest = max(float(tx.max()), float(rx.max()))
    return busiest * _wire_factor(ctx) / proto_eff * 8 / (ctx.nic_bps * ctx.nic_efficiency)


def _wire_factor(ctx: _Ctx) -> float:
    return (ctx.mtu_bytes + ctx.header_bytes) / ctx.mtu_bytes


def _network_step(ctx: _Ctx, step: Step, proto_eff: float) -> tuple[float, float, str]:
    """``(bandwidth_s, physical_latency_s, model)`` of one repetition of a network step: the
    caller's :data:`NetworkTimer` when given, else the engine's timing."""
    if ctx.network_timer is not None:
        t, phys, model = ctx.network_timer(step, proto_eff)
        return float(t), float(phys), str(model)
    from aifabric.flow.engine import _path_model, path_latency, simulate_drain
    from aifabric.flow.paths import directed_rates_bps

    topo = ctx.topo
    if ctx.engine == "analytic" or step.domain == "sharp":
        tx, rx = step.host_bytes(len(topo.hosts), ctx.host_index)
        busiest = max(float(tx.max()), float(rx.max()))
        return busiest * _wire_factor(ctx) / proto_eff * 8 / ctx.nic_bps, 0.0, "alpha-beta"
    pm = _path_model(topo)
    if step.num_flows > ctx.max_flows:
        if step.groups is not None:
            loads = _group_even_loads(pm, step)
        else:
            fl = step.flows
            loads = pm.even_split_loads(fl[:, 0], fl[:, 1], fl[:, 2].astype(np.float64))
        t = float((loads * _wire_factor(ctx) / proto_eff * 8 / directed_rates_bps(topo)).max())
        return t, 0.0, "link-load bound (even split)"
    fl = step.flows
    key = (id(step.pairs) if step.pairs is not None else id(step.groups), proto_eff)
    if key in ctx.cache:
        return ctx.cache[key]
    from aifabric.flow.hashing import flow_sport
    from aifabric.flow.paths import MULTIPATH, flow_routing

    mode = flow_routing(ctx.routing)
    paths = pm.route(fl[:, 0], fl[:, 1], routing=mode, seed=ctx.seed, sport=flow_sport(np.arange(len(fl))))
    split = pm.split(fl[:, 0], fl[:, 1]) if mode in MULTIPATH else None  # per-packet modes
    size = fl[:, 2].astype(np.float64) / proto_eff
    fixed, drain, _ = path_latency(topo, paths, size, ctx.switch_latency_ps, ctx.mtu_bytes, ctx.header_bytes)
    finish, _ = simulate_drain(paths, drain, np.zeros(len(fl)), directed_rates_bps(topo), split=split)
    out = (float(finish.max()), float(fixed.max()), "max-min")
    ctx.cache[key] = out
    return out


def _group_even_loads(pm, step: Step) -> np.ndarray:
    """Even-split directed-link loads of an all-pairs step without materialising its flows
    (:func:`aifabric.flow.symmetric.group_even_loads`: a numba kernel, one plane standing for
    identical planes)."""
    from aifabric.flow.symmetric import group_even_loads

    return group_even_loads(pm, step.groups, step.pair_bytes)


def _nvlink_step(ctx: _Ctx, step: Step, proto_eff: float) -> float:
    tx, rx = step.host_bytes(len(ctx.topo.hosts), ctx.host_index)
    return max(float(tx.max()), float(rx.max())) / proto_eff / (ctx.nvlink.gbytes_per_s * 1e9)


def _time_steps(
    ctx: _Ctx,
    op: str,
    steps: list[Step],
    algorithm: str,
    protocol: str,
    sharp: bool,
    pipelined: bool,
    nccl_latency: bool,
) -> dict:
    c = ctx.consts
    lay = ctx.lay
    nvls = algorithm in NVLS_ALGORITHMS
    algo = algorithm if nvls else "collnet-direct" if sharp else algorithm
    eff = _proto_eff(c, algorithm, protocol, sharp)
    lat_algo = algorithm if algorithm in c["base"] else "ring"
    base = c["base"][lat_algo].get(protocol, c["base"][lat_algo]["simple"]) * 1e-6 if nccl_latency else 0.0
    lat = base
    bw_net = bw_nvl = 0.0
    nvls_tx = nvls_rx = None
    models = set()
    for st in steps:
        if st.domain == "nvls":  # duplex: the NVLS steps' sent and received bytes add up separately
            tx, rx = st.host_bytes(len(ctx.topo.hosts), ctx.host_index)
            nvls_tx = st.repeat * tx if nvls_tx is None else nvls_tx + st.repeat * tx
            nvls_rx = st.repeat * rx if nvls_rx is None else nvls_rx + st.repeat * rx
            a = c["nvlink"].get(algo, c["nvlink"]["ring"])
            alpha = a.get(protocol, a["simple"]) * 1e-6 if nccl_latency else 0.0
            lat += st.repeat * st.latency_hops * alpha
        elif st.domain == "nvlink":
            t = _nvlink_step(ctx, st, eff)
            a = c["nvlink"].get(algo, c["nvlink"]["ring"])
            alpha = a.get(protocol, a["simple"]) * 1e-6 if nccl_latency else 0.0
            if lay.servers > 1 and protocol == "ll":
                alpha *= 1.8  # NCCL: intra-node LL latency ×1.8 when multi-node
            bw_nvl += st.repeat * t
            lat += st.latency_count * alpha
        else:
            t, phys, model = _network_step(ctx, st, eff)
            # η = 1 is the ideal NIC: the engine's own timing (which puts a flow's first packet
            # into its latency) stands
            cap = _nic_bound_s(ctx, st, eff) if ctx.nic_efficiency < 1 else 0.0
            if cap > t:
                t, model = cap, f"{model}, NIC-bound (× {ctx.nic_efficiency:g})"
            models.add(model)
            a = c["net"].get(algo, c["net"]["ring"])
            alpha = a.get(protocol, a["simple"]) * 1e-6 if nccl_latency else 0.0
            bw_net += st.repeat * t
            if st.latencies is None:
                lat += st.repeat * max(st.latency_hops * alpha, phys)
            else:
                lat += st.latency_count * max(alpha, phys)
    if nvls_tx is not None:
        if ctx.nvls is None:
            raise InputError("NVLS steps need an NVLS-capable GPU", field="gpu", allowed=", ".join(NVLS_GPUS))
        bw_nvl += max(float(nvls_tx.max()), float(nvls_rx.max())) / (ctx.nvls.gbytes_per_s * 1e9)
    bw = max(bw_net, bw_nvl) if pipelined else bw_net + bw_nvl
    return {
        "time": lat + bw,
        "lat": lat,
        "net": bw_net,
        "nvl": bw_nvl,
        "model": ", ".join(sorted(models)) or "nvlink only",
    }


def _proto_eff(c: dict, algorithm: str, protocol: str, sharp: bool) -> float:
    """NCCL's bandwidth efficiency of the protocol (LL 0.5, LL128 0.92, Simple 1) — × PAT's 0.75
    model refinement ([S16], defaults ``nccl.model_refinements``); 1 for NVLS and SHARP."""
    if sharp or algorithm in NVLS_ALGORITHMS:
        return 1.0
    eff = c["eff"][protocol]
    if algorithm == "pat":
        eff *= float(c.get("pat", 0.75))
    return eff
