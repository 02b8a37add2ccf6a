"""One collective timed: :func:`run_collective`."""

from __future__ import annotations

import time

import numpy as np

from aifabric.errors import InputError
from aifabric.topology.core import Topology
from aifabric.workload.collectives.base import (
    ALGORITHMS,
    ENGINES,
    NVLS_ALGORITHMS,
    NVLS_GPUS,
    PROTOCOLS,
    SHARP_TREES_PER_SWITCH,
    CollectiveResult,
    NetworkTimer,
    Step,
    busbw_factor,
)
from aifabric.workload.collectives.decompose import check_algorithm, collective_flows
from aifabric.workload.collectives.layout import host_nic_rate_bps, rank_layout
from aifabric.workload.collectives.nvlink import NvlinkDomain, NvlsDomain
from aifabric.workload.collectives.timing import _Ctx, _proto_eff, _time_steps, _wire_factor, nccl_constants
from aifabric.workload.collectives.tuner import _label, candidate_algorithms, nccl_choice
from aifabric.workload.nic import NIC_EFFICIENCY


def run_collective(
    op: str,
    size_bytes: int,
    topology: Topology,
    engine: str = "flow",
    ranks=None,
    algorithm: str = "ring",
    gpus_per_node: int | None = None,
    routing: str = "ecmp",
    seed: int = 1,
    switch_latency_ps: float = 0,
    mtu_bytes: int = 4000,
    header_bytes: int = 64,
    protocol: str = "auto",
    sharp: bool = False,
    technology: str | None = None,
    gpu: str = "h100",
    nvlink_gbytes_per_s: float | None = None,
    pipelined: bool = True,
    nccl_latency: bool = True,
    max_flows: int = 1_000_000,
    steps: list[Step] | None = None,
    nvls_gbytes_per_s: float | None = None,
    network_timer: NetworkTimer | None = None,
    _ctx_cache: dict | None = None,
    nic_efficiency: float | None = None,
    sharp_trees_in_use: int = 0,
) -> CollectiveResult:
    """Time one collective. ``engine``: "flow" (routed flows, max-min) or "analytic" (α-β).
    ``algorithm``: ring, tree, nvls, nvls-tree, or auto (NCCL-style: the fastest of
    :func:`candidate_algorithms` by the α-β model, then timed by ``engine``).
    ``protocol``: auto (NCCL-style: the fastest of LL / LL128 / Simple), or one of them; NVLS and
    NVLSTree run Simple only. ``sharp``: in-network reduction (InfiniBand only; all-reduce only).
    ``nvls_gbytes_per_s`` overrides the GPU's NVLS rate (:meth:`NvlsDomain.for_gpu`).
    ``network_timer`` (a :data:`NetworkTimer`) times each network step of the timed algorithm
    instead of ``engine`` — called once per network :class:`Step` (a step's ``repeat`` multiplies
    its answer; ``max_flows`` does not apply); ``model`` is then the timer's labels, whatever the
    engine. ``algorithm="auto"`` still chooses by the α-β model, without the timer.
    ``nic_efficiency`` (default :data:`NIC_EFFICIENCY`, or a calibration's fitted η) caps every
    network step: no NIC moves more than line rate × it. ``sharp_trees_in_use``: SHARP
    aggregation trees other jobs already hold on the switches; at :data:`SHARP_TREES_PER_SWITCH`
    SHARP is not granted and NCCL runs without it (a note says so). :attr:`CollectiveResult.
    nccl_choice` is what NCCL's tuner picks for this op, layout and size (the timed algorithm
    when ``algorithm="auto"``)."""
    t0 = time.perf_counter()
    eta = NIC_EFFICIENCY if nic_efficiency is None else float(nic_efficiency)
    if not 0 < eta <= 1:
        raise InputError(
            "NIC efficiency must be in (0, 1]", field="nic_efficiency", value=eta, allowed="(0, 1]"
        )
    sharp_notes = []
    if sharp and int(sharp_trees_in_use) >= SHARP_TREES_PER_SWITCH:
        sharp = False
        sharp_notes.append(
            f"SHARP not granted: {int(sharp_trees_in_use)} aggregation trees already in use, at most "
            f"{SHARP_TREES_PER_SWITCH} per switch (hardware-facts §F [S78][S79]); NCCL falls back"
        )
    if engine not in ENGINES:
        raise InputError("unknown engine", field="engine", value=engine, allowed=", ".join(ENGINES))
    if protocol != "auto" and protocol not in PROTOCOLS:
        raise InputError(
            "unknown protocol", field="protocol", value=protocol, allowed="auto, ll, ll128, simple"
        )
    if algorithm != "auto" and algorithm not in ALGORITHMS:
        raise InputError(
            "unknown algorithm",
            field="workload.algorithm",
            value=algorithm,
            allowed=", ".join((*ALGORITHMS, "auto")),
        )
    if algorithm in NVLS_ALGORITHMS and protocol not in ("auto", "simple"):
        raise InputError(
            "NCCL runs NVLS / NVLSTree with the Simple protocol only",
            field="protocol",
            value=protocol,
            allowed="auto, simple",
        )
    if sharp and technology not in (None, "infiniband"):
        raise InputError(
            "SHARP is an InfiniBand switch feature", field="sharp", value=technology, allowed="infiniband"
        )
    if sharp and op != "all-reduce":
        raise InputError(
            "SHARP is modelled for all-reduce only", field="workload.op", value=op, allowed="all-reduce"
        )
    lay = rank_layout(topology, ranks, gpus_per_node)
    if algorithm == "auto":
        if steps is not None:
            raise InputError(
                "algorithm auto builds its own steps; pass a concrete algorithm with steps",
                field="workload.algorithm",
                value=algorithm,
                allowed=", ".join(ALGORITHMS),
            )
        algos = candidate_algorithms(op, lay, gpu, sharp, protocol)
    else:
        algos = (algorithm,)
        check_algorithm(op, algorithm, lay, sharp)
    nvls_dom = None
    if any(a in NVLS_ALGORITHMS for a in algos):
        if gpu not in NVLS_GPUS:  # also with an explicit rate: NVLS is a Hopper+ NVSwitch feature
            raise InputError(
                "NVLS needs an NVSwitch GPU of Hopper or later",
                field="gpu",
                value=gpu,
                allowed=", ".join(NVLS_GPUS),
            )
        nvls_dom = (
            NvlsDomain(float(nvls_gbytes_per_s), False, "given")
            if nvls_gbytes_per_s
            else NvlsDomain.for_gpu(gpu)
        )
    step_sets = {
        a: steps
        if steps is not None
        else collective_flows(
            op, size_bytes, topology, ranks=ranks, algorithm=a, gpus_per_node=gpus_per_node, sharp=sharp
        )
        for a in algos
    }
    host_index = np.full(topology.num_nodes, -1, dtype=np.int64)
    host_index[topology.hosts] = np.arange(len(topology.hosts))
    nic = host_nic_rate_bps(topology, lay.hosts)
    nvl = NvlinkDomain(nvlink_gbytes_per_s) if nvlink_gbytes_per_s else NvlinkDomain.for_gpu(gpu)
    ctx = _Ctx(
        topology,
        lay,
        routing,
        seed,
        switch_latency_ps,
        mtu_bytes,
        header_bytes,
        nvl,
        nccl_constants(),
        engine,
        max_flows,
        nic,
        host_index,
        cache=_ctx_cache if _ctx_cache is not None else {},
        nvls=nvls_dom,
        network_timer=network_timer,
        nic_efficiency=eta,
    )

    def protos_of(a: str) -> tuple[str, ...]:
        if sharp or a in NVLS_ALGORITHMS or a == "pat":
            return ("simple",)
        return PROTOCOLS if protocol == "auto" else (protocol,)

    combos = [(a, p) for a in algos for p in protos_of(a)]
    actx = _Ctx(**{**ctx.__dict__, "engine": "analytic", "cache": {}, "network_timer": None})
    if len(combos) > 1:  # NCCL's tuner: pick by the α-β model, then time with the chosen engine
        est = {
            (a, p): _time_steps(actx, op, step_sets[a], a, p, sharp, pipelined, True)["time"]
            for a, p in combos
        }
        algo, proto = min(est, key=est.get)
    else:
        algo, proto = combos[0]
    # what NCCL's tuner runs here (the α-β model over its candidates): the timed one under auto
    choice = algo if algorithm == "auto" else nccl_choice(op, size_bytes, lay, gpu, sharp, actx, pipelined)
    steps = step_sets[algo]
    r = _time_steps(ctx, op, steps, algo, proto, sharp, pipelined, nccl_latency)
    n = lay.n
    algbw = size_bytes / r["time"] / 1e9
    per_rank = 0.0
    total = 0.0
    nvl_per_gpu = 0.0
    for s in steps:
        tx, _ = s.host_bytes(len(topology.hosts), host_index)
        if s.domain in ("nvlink", "nvls"):
            nvl_per_gpu += s.repeat * float(tx.max())
        else:
            per_rank += s.repeat * float(tx.max())
            total += s.repeat * s.total_bytes()
    nvls = algo in NVLS_ALGORITHMS
    eff = _proto_eff(ctx.consts, algo, proto, sharp)
    notes = list(sharp_notes)
    if "link-load" in r["model"]:
        notes.append(
            "a step above max_flows was timed by the even-split link-load bound (no ECMP collision tail)"
        )
    if algorithm == "auto":
        notes.append(f"algorithm auto: {algo} is the fastest by the α-β model of {', '.join(algos)}")
    if nvls:
        notes.append(f"NVLS rate {nvls_dom.gbytes_per_s:.1f} GB/s per GPU per direction: {nvls_dom.source}")
    if sharp and lay.servers > 1:
        notes.append(
            "SHARP via NCCL's "
            + ("NVLS+CollNet" if nvls else "CollNet Direct (NVLink reduce-scatter to G heads, one per NIC)")
            + f"; SHARPv3 allows {SHARP_TREES_PER_SWITCH} aggregation trees per switch"
        )
    if any("NIC-bound" in m for m in r["model"].split(", ")) or "NIC-bound" in r["model"]:
        notes.append(f"network steps capped at line rate × NIC efficiency {eta:g}")
    label = _label(algo, sharp, lay, op)
    return CollectiveResult(
        op=op,
        size_bytes=int(size_bytes),
        ranks=n,
        servers=lay.servers,
        gpus_per_node=lay.local,
        algorithm=label,
        protocol=proto,
        engine=engine,
        model=r["model"] if engine == "flow" or network_timer is not None else "alpha-beta",
        time_s=r["time"],
        algbw_gbps=algbw,
        busbw_gbps=algbw * busbw_factor(op, n),
        latency_s=r["lat"],
        network_time_s=r["net"],
        nvlink_time_s=r["nvl"],
        network_bytes_per_rank=per_rank,
        network_bytes_total=total,
        nvlink_bytes_per_gpu=nvl_per_gpu,
        wire_bytes_total=total * _wire_factor(ctx) / eff,
        sharp=sharp,
        steps=sum(s.repeat for s in steps),
        wall_s=time.perf_counter() - t0,
        notes=notes,
        nccl_choice=_label(choice, sharp, lay, op),
        nic_efficiency=eta,
    )
