"""Stage 3 — *measure*: per fabric, the achieved bandwidth and latency of each traffic pattern the
workload uses, with its endpoints placed on the fabric's topology.

Input: a :class:`~aifabric.stages.design.fabrics.FabricDesign` and the
:class:`~aifabric.stages.workload.Workload`. Output: :class:`FabricNetwork` per fabric, collected in
:class:`NetworkEvidence`.

* The rail-optimised topology of the design is built and the **flow-level model** (max-min fair,
  the fabric's routing mode — adaptive-packet on InfiniBand, ECMP hashing of the RoCEv2 UDP
  source port or adaptive-packet on RoCE; README "Routing modes") runs each pattern: the DP ring
  step over three hash seeds (the expected collision cost, not one draw) and the same-rail random
  permutation. Each connection is the workload's channels per NIC × QPs per connection flows
  (default :data:`ECMP_ENTROPY`), hashed independently under ``ecmp`` / ``flowlet``. Efficiency = the
  alone-on-the-fabric FCT of the connection over its slowest QP's FCT (a step ends with its
  slowest flow).
* A MoE workload whose expert-parallel group spans servers: the DeepEP-style dispatch of every EP
  group at once (:func:`~aifabric.stages.measure.expert.expert_a2a_efficiency_for`; node-limited routing, RDMA to the same-rail GPU
  of each target node, then NVLink — :mod:`aifabric.workload.expert_parallel`, the same code as
  the collective model) gives the all-to-all efficiency (``expert_a2a_efficiency``); so does every
  wide-EP inference instance. Pipeline sends: every stage boundary of the reference layout at once,
  placed as the job's ranks are (:mod:`aifabric.stages.measure.placed`, ``pp_send_recv_efficiency``).
  Other sends (context parallel, KV cache) keep the permutation's.
* The busbw-vs-size sweep of an all-reduce over every GPU comes from
  :func:`aifabric.workload.collectives.nccl_sweep` on the same topology and routing (NCCL's tuner
  choice per size).
* :class:`FabricComm` turns a fabric's measurements into collective times (α-β): α = NCCL's
  per-step latency constant (S16) + the path's switch hops × the fabric's switch latency +
  propagation; β = link rate × payload/(payload + header) × the measured efficiency × the NIC's
  achieved efficiency (:data:`aifabric.workload.collectives.NIC_EFFICIENCY` 0.94, the same cap the
  ``collective`` command and the step model's validation use; a calibration's fitted η replaces
  it; the flow model itself shares line rate, an ideal NIC). NVLink
  collectives use the measured ~370 GB/s ring busbw of 8 × H100 (S3) scaled by NVLink rate, and
  NVLS where NCCL's tuner would pick it.

Measurements are cached by their inputs (topology, pattern, routing, seed), so the same one is
never simulated twice in a process (the risk stage re-measures with ECMP through this cache).
A user with their own numbers builds a :class:`FabricNetwork` directly
(:meth:`FabricNetwork.from_measured`) and hands it to *performance*.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from aifabric.errors import InputError
from aifabric.stages.measure.flows import (
    HEADER_BYTES,
    MTU_BYTES,
    RING_SEEDS,
    measure_pattern,
    rail_topology,
    topology_key,
)
from aifabric.workload.nic import NIC_EFFICIENCY, NIC_EFFICIENCY_SOURCE

H100_NVLINK_RING_BUSBW_GBPS = 370.0 * 8  # measured 8 × H100 ring busbw ~370 GB/s (S3), in Gb/s
H100_NVLINK_GBYTES = 450.0  # per direction (S3/S86)
SWEEP_SIZES = [2**i for i in range(3, 34, 2)]  # 8 B … 8 GiB, ×4 steps (nccl-tests -f 4 style)
# ECMP entropy of one NCCL connection = channels per NIC peer × QPs per connection, each QP a
# RoCEv2 UDP source port hashed on its own. NCCL 2.28 (src/graph/paths.cc ncclTopoGetNchannels):
# 2 channels per network peer (NCCL_NCHANNELS_PER_NET_PEER; 2.29+ may use more on fast NICs);
# NCCL_IB_QPS_PER_CONNECTION default 1 (hardware-facts §D, S15).
NCCL_CHANNELS_PER_NET_PEER = 2
NCCL_QPS_PER_CONNECTION = 1
ECMP_ENTROPY = NCCL_CHANNELS_PER_NET_PEER * NCCL_QPS_PER_CONNECTION
HASHED_MODES = ("ecmp", "flowlet")  # modes whose choice is per QP (per-packet modes split anyway)
PP_OP = "pp-send-recv"  # pipeline sends' op (aifabric.workload.llm.network.PIPELINE_SEND_RECV)


from aifabric.stages.measure.nccl import (  # noqa: E402  (NCCL constants and NVLS timing)
    _collnet_us,
    _nccl_step_us,
    _nvls_allreduce_s,
)


@dataclass
class FabricComm:
    """Collective-time model of one fabric (see the module docstring)."""

    technology: str
    link_rate_bps: float
    step_efficiency: float
    path_latency_us: float
    nvlink_busbw_gbps: float
    a2a_efficiency: float = 1.0  # measured on the same-rail random permutation (all-to-all-like)
    gpu: str | None = None  # NVLS-capable GPU id: NVLink all-reduce also weighs NVLS (NCCL's tuner does)
    #: MoE expert all-to-all: the DeepEP-style dispatch's efficiency on this fabric (None: the
    #: permutation's), see :func:`~aifabric.stages.measure.expert.expert_a2a_efficiency_for`
    ep_a2a_efficiency: float | None = None
    #: the NIC's achieved share of line rate on network steps (1: the flow model's ideal NIC)
    nic_efficiency: float = 1.0
    #: pipeline sends (op ``pp-send-recv``): the placed stage-boundary pattern's (None: the permutation's)
    pp_efficiency: float | None = None
    #: SHARP granted (:mod:`aifabric.stages.measure.sharp`): a network all-reduce moves its buffer once
    sharp: bool = False

    def _alpha_net(self) -> float:
        return (_nccl_step_us("net") + self.path_latency_us) * 1e-6

    def _beta_net(self, op: str = "all-reduce") -> float:
        payload = MTU_BYTES[self.technology]
        goodput = self.link_rate_bps * payload / (payload + HEADER_BYTES[self.technology])
        eff = self.a2a_efficiency if op in ("all-to-all", "send-recv") else self.step_efficiency
        if op == "all-to-all" and self.ep_a2a_efficiency is not None:
            eff = self.ep_a2a_efficiency
        if op == PP_OP:
            eff = self.a2a_efficiency if self.pp_efficiency is None else self.pp_efficiency
        return goodput * eff * self.nic_efficiency / 8.0  # bytes/s

    def collective_s(self, op: str, size_bytes: float, ranks: int, span: str) -> float:
        n = max(2, int(ranks))
        if self.sharp and op == "all-reduce" and span != "nvlink":
            # each NIC sends its buffer into the aggregation tree once and gets the result once
            return (_collnet_us() + self.path_latency_us) * 1e-6 + size_bytes / self._beta_net(op)
        if span == "nvlink":
            alpha, beta = _nccl_step_us("nvlink") * 1e-6, self.nvlink_busbw_gbps * 1e9 / 8
            if op == "all-reduce" and self.gpu is not None:
                ring = 2 * (n - 1) * alpha + size_bytes * 2 * (n - 1) / n / beta
                nvls = _nvls_allreduce_s(self.gpu, n, size_bytes)
                return ring if nvls is None else min(ring, nvls)
        else:
            alpha, beta = self._alpha_net(), self._beta_net(op)
        if op == "all-reduce":
            return 2 * (n - 1) * alpha + size_bytes * 2 * (n - 1) / n / beta
        if op in ("all-gather", "reduce-scatter", "all-to-all"):
            return (n - 1) * alpha + size_bytes * (n - 1) / n / beta
        if op in ("send-recv", "broadcast", PP_OP):
            return alpha + size_bytes / beta
        raise InputError(
            "unknown collective",
            field="op",
            value=op,
            allowed=f"all-reduce, all-gather, reduce-scatter, all-to-all, send-recv, broadcast, {PP_OP}",
        )


def nvlink_busbw_for(gpu) -> float:
    """NVLink ring busbw of one node in Gb/s: the measured 8 × H100 figure scaled by NVLink rate."""
    return (
        H100_NVLINK_RING_BUSBW_GBPS
        * float(gpu.nvlink_gbytes_per_s or H100_NVLINK_GBYTES)
        / H100_NVLINK_GBYTES
    )


@dataclass(frozen=True)
class FabricNetwork:
    """What one fabric achieves for the workload's patterns (the *measure* stage's evidence)."""

    key: str
    technology: str
    routing: str
    link_rate_bps: float
    ring_step_efficiency: float  # mean over hash seeds of ideal / slowest-flow FCT
    permutation_efficiency: float
    path_latency_us: float
    nvlink_busbw_gbps: float
    nvls_gpu: str | None = None
    busbw_sweep: tuple[dict, ...] = ()
    ring_fct_us: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    permutation_fct_us: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    fct_title: str = "FCT of one data-parallel ring step"
    source: str = "flow model"  # flow model | a user's measurements | a perturbed copy (risk)
    ep_a2a_efficiency: float | None = None  # MoE dispatch (DeepEP-style) efficiency, None: not MoE
    ecmp_entropy: int = 1  # QPs hashed independently per connection (ecmp / flowlet; 1 otherwise)
    # the job's placement (aifabric.workload.placement) and, when it is not ideal, the same patterns'
    # efficiencies on the ideal placement (same fabric, routing and seeds): the placement's cost
    placement: dict | None = field(default=None, compare=False)
    # the NIC's achieved share of line rate (the flow model's efficiencies are of an ideal NIC):
    # NCCL's 46-48 GB/s per 400G NIC by default, a calibration's fitted value, or 1 for a user's
    # own end-to-end measurement (from_measured)
    nic_efficiency: float = NIC_EFFICIENCY
    nic_efficiency_source: str = NIC_EFFICIENCY_SOURCE
    # pipeline send-recv placed by the layout (the pp-send-recv pattern; None: the permutation's)
    pp_efficiency: float | None = None
    # the placed patterns' evidence (:func:`placed_evidence`): efficiencies and in-leaf shares
    placed: dict | None = field(default=None, compare=False)
    # SHARP on this fabric for the job (:func:`aifabric.stages.measure.sharp.sharp_grant`; None: none)
    sharp: dict | None = field(default=None, compare=False)

    @classmethod
    def from_measured(
        cls,
        technology: str,
        link_rate_bps: float,
        efficiency: float,
        path_latency_us: float,
        nvlink_busbw_gbps: float = H100_NVLINK_RING_BUSBW_GBPS,
        all_to_all_efficiency: float | None = None,
        key: str | None = None,
        nvls_gpu: str | None = None,
    ) -> FabricNetwork:
        """A fabric from a user's own numbers (e.g. nccl-tests busbw / line rate as ``efficiency``)."""
        if technology not in HEADER_BYTES:
            raise InputError(
                "unknown technology", field="technology", value=technology, allowed="infiniband, roce"
            )
        for name, v in (("efficiency", efficiency), ("all_to_all_efficiency", all_to_all_efficiency)):
            if v is not None and not 0 < v <= 1:
                raise InputError("must be in (0, 1]", field=name, value=v)
        return cls(
            key or technology,
            technology,
            "measured",
            float(link_rate_bps),
            float(efficiency),
            float(efficiency if all_to_all_efficiency is None else all_to_all_efficiency),
            float(path_latency_us),
            float(nvlink_busbw_gbps),
            nvls_gpu,
            source="measured by the user",
            nic_efficiency=1.0,  # the user's busbw / line rate already includes the NIC's
            nic_efficiency_source="in the user's measured efficiency",
        )

    @property
    def busbw_gbps(self) -> float | None:
        """All-reduce busbw at the sweep's largest size (8 GiB), Gb/s."""
        return self.busbw_sweep[-1]["busbw_gbps"] if self.busbw_sweep else None

    @property
    def permutation_fct_p99_us(self) -> float | None:
        return float(np.percentile(self.permutation_fct_us, 99)) if len(self.permutation_fct_us) else None

    def comm(self) -> FabricComm:
        """The collective-time model *performance* uses."""
        return FabricComm(
            self.technology,
            self.link_rate_bps,
            self.ring_step_efficiency,
            self.path_latency_us,
            self.nvlink_busbw_gbps,
            self.permutation_efficiency,
            gpu=self.nvls_gpu,
            ep_a2a_efficiency=self.ep_a2a_efficiency,
            nic_efficiency=self.nic_efficiency,
            pp_efficiency=self.pp_efficiency,
            sharp=bool(self.sharp and self.sharp["granted"]),
        )

    def with_slowdown(self, comm_slowdown: float) -> FabricNetwork:
        """This fabric as measured under a fault that makes bandwidth-bound steps ``1 + comm_slowdown``
        times slower (the risk stage's testbed measurements): achieved bandwidth divided accordingly."""
        f = max(1 + comm_slowdown, 1e-9)
        return replace(
            self,
            ring_step_efficiency=self.ring_step_efficiency / f,
            permutation_efficiency=self.permutation_efficiency / f,
            ep_a2a_efficiency=None if self.ep_a2a_efficiency is None else self.ep_a2a_efficiency / f,
            pp_efficiency=None if self.pp_efficiency is None else self.pp_efficiency / f,
            source=f"{self.source}, perturbed ({comm_slowdown:+.1%} on bandwidth-bound steps)",
        )

    def with_extra_time(self, extra: float) -> FabricNetwork:
        """This fabric under a fault that adds ``extra`` ideal step times to every bandwidth-bound step
        (the risk testbed's (t − t_base) / t_ideal): a step of 1/e ideal steps takes 1/e + extra, so
        each efficiency e becomes 1 / (1/e + extra). Fabrics that hash worse are not charged less for
        the same added time (issue 25: slowdowns against each fabric's own ideal step)."""
        if extra == float("inf"):
            return self.with_slowdown(float("inf"))
        x = max(0.0, extra)

        def eff(e):
            return None if e is None else 1.0 / (1.0 / max(e, 1e-12) + x)

        return replace(
            self,
            ring_step_efficiency=eff(self.ring_step_efficiency),
            permutation_efficiency=eff(self.permutation_efficiency),
            ep_a2a_efficiency=eff(self.ep_a2a_efficiency),
            pp_efficiency=eff(self.pp_efficiency),
            source=f"{self.source}, perturbed (+{x:.3g} ideal steps on bandwidth-bound steps)",
        )

    def to_dict(self) -> dict:
        return {
            "fabric": self.key,
            "technology": self.technology,
            "routing": self.routing,
            "source": self.source,
            "link_rate_gbps": self.link_rate_bps / 1e9,
            "ring_step_efficiency": self.ring_step_efficiency,
            "permutation_efficiency": self.permutation_efficiency,
            "permutation_fct_p99_us": self.permutation_fct_p99_us,
            "expert_a2a_efficiency": self.ep_a2a_efficiency,
            "pp_send_recv_efficiency": self.pp_efficiency,
            "placed_patterns": self.placed,
            "path_latency_us": self.path_latency_us,
            "nvlink_busbw_gbps": self.nvlink_busbw_gbps,
            "nvlink_busbw_gbytes_per_s": self.nvlink_busbw_gbps / 8,
            "busbw_gbps": self.busbw_gbps,
            "busbw_gbytes_per_s": None if self.busbw_gbps is None else self.busbw_gbps / 8,
            "ecmp_entropy": self.ecmp_entropy,
            "placement": self.placement,
            "nic_efficiency": self.nic_efficiency,
            "nic_efficiency_source": self.nic_efficiency_source,
            "sharp": self.sharp,
        }


@dataclass(frozen=True)
class NetworkEvidence:
    fabrics: tuple[FabricNetwork, ...]

    def fabric(self, key: str) -> FabricNetwork | None:
        return next((f for f in self.fabrics if f.key == key), None)

    def to_dict(self) -> dict:
        return {"fabrics": [f.to_dict() for f in self.fabrics]}


def routed_efficiency(
    topo, flows, technology: str, seed: int, switch_latency_ps: float, routing: str, entropy: int = 1
) -> tuple[float, np.ndarray, np.ndarray]:
    """The measure stage's figure for one set of connections on ``topo`` under a routing mode
    (used by the routing validation): (alone-on-the-fabric FCT of the slowest connection / slowest
    connection's FCT, capped at 1; each connection's FCT; each connection's alone-on-the-fabric
    FCT), times in µs. Under a hashed mode (:data:`HASHED_MODES`) with ``entropy`` > 1 each
    connection is ``entropy`` QPs of equal share hashed independently; it ends with its last QP."""
    from aifabric.flow import simulate_flows

    kw = dict(
        routing=routing,
        seed=seed,
        switch_latency_ps=switch_latency_ps,
        mtu_bytes=MTU_BYTES[technology],
        header_bytes=HEADER_BYTES[technology],
    )
    df = simulate_flows(topo, flows, **kw)
    fct = df["fct_us"].to_numpy()
    if entropy > 1 and routing in HASHED_MODES and len(df):  # the pattern's own QP split
        from aifabric.stages.workload import split_connections

        cols = {c: df[c].to_numpy(np.int64) for c in ("src", "dst", "size_bytes")}
        qps = split_connections({**cols, "conn": np.arange(len(df))}, entropy)
        conn = qps.pop("conn")
        fct = np.zeros(len(df))
        np.maximum.at(fct, conn, simulate_flows(topo, qps, **kw)["fct_us"].to_numpy())
    eff = float(df["ideal_fct_us"].max() / fct.max())
    return min(1.0, eff), fct, df["ideal_fct_us"].to_numpy()


def _entropy(workload) -> int:
    """QPs (flows) per connection the job's ring step carries (channels per NIC × QPs per connection)."""
    ring = workload.pattern("dp-ring-step")
    return int(getattr(ring, "qps", 1)) if ring is not None else 1


def pattern_efficiencies(fd, workload, gpus_per_node: int, seed: int, routing: str) -> tuple:
    """Ring-step efficiency (mean over :data:`RING_SEEDS` hash seeds) with the first seed's FCTs,
    and the permutation's efficiency and FCTs (1.0 / empty when the workload has none)."""
    key = topology_key(fd, gpus_per_node)
    hop_ps = fd.switch_hop_ns * 1000
    ring = workload.pattern("dp-ring-step")
    effs, ring_fct = [], np.zeros(0)
    for s in range(RING_SEEDS):
        e, f = measure_pattern(key, fd.technology, ring, seed + s, hop_ps, routing)
        effs.append(e)
        if s == 0:
            ring_fct = f
    a2a_eff, perm_fct = 1.0, np.zeros(0)
    perm = workload.pattern("rail-permutation")
    if perm is not None:
        a2a_eff, perm_fct = measure_pattern(key, fd.technology, perm, seed, hop_ps, routing)
    return float(np.mean(effs)), ring_fct, a2a_eff, perm_fct


def busbw_sweep(fd, gpus_per_node: int, gpu: str, seed: int, routing: str) -> list[dict]:
    """All-reduce over every GPU, nccl-tests sizes 8 B … 8 GiB, with NCCL's tuner choice per size
    (``algorithm="auto"``: ring, tree, and NVLSTree on NVSwitch GPUs; protocol too), flow engine
    with the fabric's routing. busbw in Gb/s."""
    from aifabric.workload.collectives import nccl_sweep

    df = nccl_sweep(
        "all-reduce",
        SWEEP_SIZES,
        rail_topology(*topology_key(fd, gpus_per_node)),
        algorithm="auto",
        engine="flow",
        routing=routing,
        technology=fd.technology,
        gpu=gpu,
        seed=seed,
        switch_latency_ps=fd.switch_hop_ns * 1000,
        header_bytes=HEADER_BYTES[fd.technology],
        mtu_bytes=MTU_BYTES[fd.technology],
    )
    return [
        {
            "size_bytes": int(r.size_bytes),
            "time_us": float(r.time_us),
            "busbw_gbps": float(r.busbw_gbps) * 8,
            "algorithm": str(r.algorithm),
            "protocol": r.protocol,
        }
        for r in df.itertuples(index=False)
    ]


def measure_fabric(
    fd,
    workload,
    gpu,
    seed: int = 1,
    routing: str | None = None,
    sweep: bool = True,
    roce_routing: str = "",
    ib_routing: str = "",
) -> FabricNetwork:
    """One fabric's evidence: patterns (flow model), busbw sweep, and the collective-time model's
    inputs. ``routing`` overrides the design's (the risk stage measures ECMP for an adaptive design);
    ``roce_routing`` names the RoCE option's routing in the FCT chart's title."""
    from aifabric.workload.collectives import NVLS_GPUS

    route = routing or fd.routing
    gpn = workload.gpus_per_node
    eff, a2a_eff, ring_fct, perm_fct = 1.0, 1.0, np.zeros(0), np.zeros(0)
    fct_title = "FCT of one data-parallel ring step"
    has_network = workload.gpus > gpn
    if has_network:
        eff, ring_fct, a2a_eff, perm_fct = pattern_efficiencies(fd, workload, gpn, seed, route)
        fct_title = (
            f"FCT: one DP ring step and a same-rail random permutation ({len(ring_fct):,} flows of 16 MiB "
            f"each; {ib_routing or route} on IB, {roce_routing or route} on RoCE)"
        )
    from aifabric.stages.measure.expert import expert_a2a_for
    from aifabric.stages.measure.placed import pipeline_efficiency, placed_evidence
    from aifabric.stages.measure.sharp import sharp_grant

    ep = expert_a2a_for(fd, workload, gpn, seed, route) if has_network else None
    pp = pipeline_efficiency(fd, workload, gpn, seed, route) if has_network else None
    placed = _placement_dict(fd, workload, gpn, seed, route, eff, a2a_eff) if has_network else None
    rows = busbw_sweep(fd, gpn, gpu.id, seed, route) if sweep and has_network else []
    return FabricNetwork(
        fd.key,
        fd.technology,
        route,
        fd.nic_rate_gbps * 1e9,
        eff,
        a2a_eff,
        fd.path_latency_us,
        nvlink_busbw_for(gpu),
        gpu.id if gpu.id in NVLS_GPUS else None,
        tuple(rows),
        ring_fct,
        perm_fct,
        fct_title,
        ep_a2a_efficiency=None if ep is None else ep["efficiency"],
        ecmp_entropy=_entropy(workload) if route in HASHED_MODES else 1,
        placement=placed,
        pp_efficiency=None if pp is None else pp["efficiency"],
        placed=placed_evidence(pp, ep, a2a_eff) if has_network else None,
        sharp=sharp_grant(fd, workload) if has_network else None,
    )


def _placement_dict(fd, workload, gpn: int, seed: int, route: str, eff: float, a2a_eff: float) -> dict | None:
    """The placement the patterns ran on; when it is not ideal, the same patterns on the ideal
    placement too (the placement's cost on this fabric and routing)."""
    pl = getattr(workload, "placement", None)
    if pl is None:
        return None
    out = pl.to_dict()
    if pl.kind != "ideal":
        twin = replace(workload, patterns=tuple(replace(p, placement=None) for p in workload.patterns))
        ideal, _, ideal_a2a, _ = pattern_efficiencies(fd, twin, gpn, seed, route)
        out.update(
            {
                "ring_step_efficiency": eff,
                "ring_step_efficiency_ideal": ideal,
                "permutation_efficiency": a2a_eff,
                "permutation_efficiency_ideal": ideal_a2a,
            }
        )
    return out


def measure(design, workload, gpu, seed: int = 1, progress=None, sweep: bool = True) -> NetworkEvidence:
    """Every designed fabric measured for the workload's patterns (``sweep``: also the all-reduce
    busbw-vs-size sweep)."""
    tick = progress or (lambda msg: None)
    out = []
    roce_routing = next((f.routing for f in design.fabrics if f.technology == "roce"), "")
    ib_routing = next((f.routing for f in design.fabrics if f.technology == "infiniband"), "")
    for fd in design.fabrics:
        tick(f"flow model of the workload's traffic on {fd.key}")
        out.append(
            measure_fabric(
                fd, workload, gpu, seed, sweep=sweep, roce_routing=roce_routing, ib_routing=ib_routing
            )
        )
    return NetworkEvidence(tuple(out))


__all__ = [
    "HEADER_BYTES",
    "MTU_BYTES",
    "FabricComm",
    "FabricNetwork",
    "NetworkEvidence",
    "measure",
    "measure_fabric",
    "routed_efficiency",
]
