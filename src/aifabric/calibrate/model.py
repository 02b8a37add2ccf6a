"""The calibrated collective model: *our* NCCL-style collective model (``aifabric.workload.
collectives``) with the few parameters a measurement can pin down, and NCCL's chunking.

For a collective of ``S`` bytes on ``N`` servers × ``G`` GPUs, the uncalibrated model
(``run_collective(engine="analytic", algorithm="auto")``, NCCL's tuner choice by NCCL's own
constants — a real NCCL picks by its constants, not by what the fabric achieves) gives per size
the algorithm, protocol, the network-step count ``h`` (latency hops), the other latency terms
``L0`` (NCCL base + NVLink/NVLS latencies), and the bandwidth times of the two domains,
``t_net`` (NIC bytes at line rate) and ``t_nvl`` (NVLink / NVLS). The calibrated time is

    T(S) = L0 + h · (hwLat.net + δ) + t_bw + k · F(S) · t_bw / S,
    t_bw = max(t_net / η, t_nvl)

with the fitted parameters

* ``η`` — per-NIC achieved efficiency (payload bytes over line rate, as NCCL moves them);
* ``δ`` — extra latency per network step beyond NCCL's ``hwLat.net`` constant (µs; EFA's
  libfabric/SRD path, a RoCE NIC's, a long fabric's);
* ``k`` — pipeline fill, in units of one *chunk round*: NCCL cuts the buffer into chunks and runs
  ``ops`` of them concurrently (channels × NVLS heads), so a pipeline of ``k + 1`` stages costs
  ``k`` extra chunk rounds before data streams at the full rate: ``F(S) = min(S, chunk(S) × ops)``
  bytes at the bandwidth rate. ``chunk(S)`` follows NCCL's ``calcCollChunking`` (``src/enqueue.cc``):
  NVLSTree 128 KiB halving below 16/4/1 × ops × chunk, NVLS 128 KiB halving below 64/8/2 ×,
  ring Simple 4 MiB / 8 steps × 4 chunk steps = 2 MiB, tree Simple 512 KiB, LL 32 KiB, LL128
  ~ 480 KiB; ``ops`` = 16 NVLS channels × G heads (NVLS), 2 × G channels (ring, tree).

``η`` never multiplies the NVLink / NVLS term: the NVLS rate is already calibrated on the public
8 × H100 measurement. Which domain binds is reported (``bound``): when NVLS binds at every fitted
size, the file cannot pin the NIC efficiency and the fit says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from aifabric.errors import InputError

NVLS_CHUNK = 128 * 1024  # NCCL's nvlsChunkSize default
NVLS_CHANNELS = 16  # NCCL_NVLS_NCHANNELS default on Hopper
SIMPLE_BUFF = 4 * 2**20  # NCCL_BUFFSIZE default
NCCL_STEPS = 8
MODELLED_OPS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast", "reduce", "sendrecv")
#: nccl-tests ops that run the same traffic as one we model
OP_ALIAS = {"reduce": "broadcast", "sendrecv": "broadcast"}


def chunk_bytes(algorithm: str, protocol: str, size: int, ops: int, nodes: int) -> int:
    """NCCL's chunk size for one collective (``calcCollChunking``, NVIDIA/nccl ``src/enqueue.cc``)."""
    if algorithm == "nvls-tree":
        c = NVLS_CHUNK if nodes < 4 else 65536
        for mult, cap in ((32, 262144), (16, 131072), (4, 65536), (1, 32768)):
            if size < mult * ops * c and c > cap:
                c = cap
        return c
    if algorithm == "nvls":
        c = NVLS_CHUNK
        for mult, cap in ((64, 65536), (8, 32768), (2, 16384)):
            if size < mult * ops * c and c > cap:
                c = cap
        return c
    step = SIMPLE_BUFF // NCCL_STEPS
    if protocol == "ll":
        return 32768
    if protocol == "ll128":
        return 491520
    return step * 4 if algorithm == "ring" else step


@dataclass(frozen=True)
class Point:
    """The uncalibrated model's decomposition of one size."""

    size_bytes: int
    algorithm: str
    protocol: str
    latency_other_s: float  # NCCL base + NVLink / NVLS latencies
    net_hops: int  # network steps on the critical path
    net_alpha_s: float  # NCCL's hwLat.net for this algorithm / protocol, per hop
    t_net_s: float  # NIC bytes at line rate (protocol efficiency and headers included)
    t_nvl_s: float  # NVLink / NVLS bandwidth time
    fill_bytes: float  # F(S)
    pipelined: bool = True


@dataclass(frozen=True)
class Layout:
    op: str
    ranks: int
    gpus_per_node: int
    gpu: str
    nic_rate_bps: float
    technology: str = "infiniband"
    algorithm: str = "auto"
    protocol: str = "auto"  # NCCL_PROTO when the file says it

    @property
    def nodes(self) -> int:
        return self.ranks // self.gpus_per_node


@lru_cache(maxsize=8)
def _topology(ranks: int, rate_bps: int, gpus_per_node: int):
    from aifabric.topology import rail_optimized

    return rail_optimized(ranks, rate_bps, gpus_per_node=gpus_per_node, radix=max(64, 2 * gpus_per_node))


def decompose(lay: Layout, sizes, choices: dict | None = None) -> list[Point]:
    """The uncalibrated model, size by size (analytic engine: a non-blocking fabric, as the
    measurement's own cluster is assumed to be; routing effects are *compare*'s job).
    ``choices`` maps a size to the ``(algorithm, protocol)`` NCCL logged for it (NCCL_DEBUG_SUBSYS
    =TUNING lines); those sizes run that combination when the model has it, the others NCCL's
    tuner choice by the model."""
    from aifabric.stages.measure.network import HEADER_BYTES, MTU_BYTES
    from aifabric.workload.collectives import collective_flows, nccl_constants, run_collective

    op = OP_ALIAS.get(lay.op, lay.op)
    if op not in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast"):
        raise InputError(
            "collective not modelled", field="test", value=lay.op, allowed=", ".join(MODELLED_OPS)
        )
    if lay.ranks % lay.gpus_per_node:
        raise InputError(
            "ranks are not whole servers",
            field="--gpus-per-node",
            value=f"{lay.ranks} ranks, {lay.gpus_per_node} per node",
            allowed=f"a divisor of {lay.ranks}",
        )
    topo = _topology(lay.ranks, int(lay.nic_rate_bps), lay.gpus_per_node)
    consts = nccl_constants()
    tech = lay.technology if lay.technology in HEADER_BYTES else "infiniband"
    out = []
    for s in sizes:
        s = int(s)
        kw = dict(
            engine="analytic",
            gpus_per_node=lay.gpus_per_node,
            gpu=lay.gpu,
            header_bytes=HEADER_BYTES[tech],
            mtu_bytes=MTU_BYTES[tech],
            nic_efficiency=1.0,  # t_net at line rate: η is what the fit finds
        )
        r = None
        logged = (choices or {}).get(s)
        if logged and logged[0] in ("ring", "tree", "nvls", "nvls-tree", "pat"):
            try:
                r = run_collective(op, s, topo, algorithm=logged[0], protocol=logged[1], **kw)
            except InputError:  # a combination the model does not run: the model's own choice
                r = None
        if r is None:
            r = run_collective(op, s, topo, algorithm=lay.algorithm, protocol=lay.protocol, **kw)
        algo = {"nvls+sharp": "nvls", "sharp": "ring", "pxn": "ring"}.get(r.algorithm, r.algorithm)
        steps = collective_flows(op, s, topo, algorithm=algo, gpus_per_node=lay.gpus_per_node)
        hops = sum(st.latency_count for st in steps if st.domain in ("network", "sharp"))
        a = consts["net"].get(algo, consts["net"]["ring"])
        alpha = float(a.get(r.protocol, a["simple"])) * 1e-6
        ops = NVLS_CHANNELS * lay.gpus_per_node if algo in ("nvls", "nvls-tree") else 2 * lay.gpus_per_node
        # LL / LL128 move 8-byte / 128-byte lines with flags: no chunk pipeline to fill
        fill = (
            min(float(s), chunk_bytes(algo, r.protocol, s, ops, lay.nodes) * ops)
            if r.protocol == "simple"
            else 0.0
        )
        out.append(
            Point(
                s,
                algo,
                r.protocol,
                max(r.latency_s - hops * alpha, 0.0),
                int(hops),
                alpha,
                r.network_time_s,
                r.nvlink_time_s,
                fill,
            )
        )
    return out


@dataclass(frozen=True)
class Params:
    """The fitted parameters (see the module docstring)."""

    nic_efficiency: float = 1.0
    extra_step_latency_us: float = 0.0
    pipeline_fill_rounds: float = 0.0
    nvlink_efficiency: float = 1.0


def evaluate(points: list[Point], p: Params) -> tuple[np.ndarray, list[str]]:
    """Calibrated times (s) per point and which domain binds the bandwidth term."""
    t, bound = [], []
    eta = max(p.nic_efficiency, 1e-6)
    for pt in points:
        net = pt.t_net_s / eta
        nvl = pt.t_nvl_s / max(p.nvlink_efficiency, 1e-6)
        bw = max(net, nvl)
        bound.append("network" if net >= nvl and pt.t_net_s > 0 else "nvlink" if nvl > 0 else "latency")
        lat = pt.latency_other_s + pt.net_hops * (pt.net_alpha_s + p.extra_step_latency_us * 1e-6)
        fill = p.pipeline_fill_rounds * pt.fill_bytes * bw / pt.size_bytes if pt.size_bytes else 0.0
        t.append(lat + bw + fill)
    return np.asarray(t), bound


def nelder_mead(fn, x0, step, iters: int = 600, tol: float = 1e-10) -> np.ndarray:
    """A small Nelder–Mead minimiser (no SciPy in the runtime dependencies)."""
    x0 = np.asarray(x0, dtype=float)
    n = len(x0)
    simplex = [x0] + [x0 + np.eye(n)[i] * step[i] for i in range(n)]
    vals = [fn(x) for x in simplex]
    for _ in range(iters):
        order = np.argsort(vals)
        simplex = [simplex[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tol * (1 + abs(vals[0])):
            break
        centroid = np.mean(simplex[:-1], axis=0)
        xr = centroid + (centroid - simplex[-1])
        fr = fn(xr)
        if fr < vals[0]:
            xe = centroid + 2 * (centroid - simplex[-1])
            fe = fn(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = centroid + 0.5 * (simplex[-1] - centroid)
            fc = fn(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                simplex = [simplex[0]] + [simplex[0] + 0.5 * (x - simplex[0]) for x in simplex[1:]]
                vals = [vals[0]] + [fn(x) for x in simplex[1:]]
    i = int(np.argmin(vals))
    return simplex[i]


def log_error(t_model: np.ndarray, t_meas: np.ndarray) -> float:
    """Sum of squared log ratios: every size weighs the same in relative terms."""
    r = np.log(np.maximum(t_model, 1e-15) / t_meas)
    return float(np.sum(r * r)) if len(r) else 0.0


def squash(x: float, lo: float, hi: float) -> float:
    """An unbounded search variable mapped into (lo, hi)."""
    return lo + (hi - lo) / (1 + math.exp(-x))


def unsquash(v: float, lo: float, hi: float) -> float:
    f = min(max((v - lo) / (hi - lo), 1e-6), 1 - 1e-6)
    return math.log(f / (1 - f))
