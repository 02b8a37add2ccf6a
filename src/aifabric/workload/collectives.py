"""NCCL-style collectives decomposed into steps of flows, timed by the flow engine or α-β.

Decomposition (as NCCL runs on rail-optimised fabrics)
------------------------------------------------------
Ranks are GPUs; a GPU's rank sits on its own NIC (a host of the topology). Ranks are grouped into
servers of ``G`` GPUs (``gpus_per_node``: the rail-optimised design's value, else 1 = every host
its own server). Inside a server GPUs talk over NVLink, a fixed-bandwidth, fixed-latency domain
(:class:`NvlinkDomain`, from the catalog's GPU record); GPU ``g`` of every server is on rail
``g``, so the inter-server phase runs *per rail* and a rail's traffic never leaves its rail
unless the rail spans several leaves. For ``N`` servers, ``n = N·G`` ranks and buffer ``S``:

============== ========================================================================================
ring           NCCL's flat ring (multi-server all-reduce / reduce-scatter / all-gather): one ring through
(all-reduce,   all n ranks per channel, the channels spread over the G NICs and kept on their rail
RS, AG)        (:func:`_flat_ring`): 2(n−1) steps (RS / AG n−1) of S/(n·G) per NIC, each GPU forwarding
               G−1 of the G channel groups over NVLink; NCCL's latency count: 2(N−1) network steps
               and 2(n−N) NVLink steps. Network bytes per NIC 2(n−1)/n · S/G: busbw ≤ G × NIC rate.
               One server: the NVLink ring (G−1 reduce-scatter + G−1 all-gather steps of S/G).
PAT            NCCL ≥ 2.23, all-gather / reduce-scatter with one GPU per node (:func:`_pat`):
               ⌈log2 n⌉ Bruck-like network steps, the ring's bytes, NCCL's PAT efficiency 0.75.
all-reduce     NVLink reduce-scatter → per-rail *double binary tree* (NCCL's tree; two trees each carry
tree           half, a server is interior in at most one), pipelined: all tree edges stream at once,
               reduce up and broadcast down → NVLink all-gather. Latency 2·⌈log2 N⌉ network hops.
all-reduce     NVLink reduce-scatter → each NIC sends its S/G shard once into the switch reduction
SHARP (IB)     tree and receives the result once (instead of the ring's 2(n−1)/n · S/G) → NVLink all-gather.
all-to-all     PXN (NCCL ≥ 2.12): NVLink step moving each GPU's data for rail r to local GPU r
               (N·S/n per peer) → per-rail all-pairs, one step: every server pair exchanges G·S/n.
broadcast      root's server scatters S/G per GPU over NVLink → per-rail pipelined chain of N
               servers (every edge streams S/G) → NVLink all-gather.
all-reduce     NVLink SHARP, one server (Hopper+ NVSwitch): each GPU reduces its S/G slice in the
NVLS           switch (``multimem.ld_reduce``: sends S into the switch, gets S/G back) and multicasts
               the result (``multimem.st``: sends S/G, receives S) → (1 + 1/G)·S each way per GPU
               at the NVLS rate (:class:`NvlsDomain`). With ``sharp`` on InfiniBand, multi-server:
               the S/G shard goes once through the switch reduction between (NCCL's NVLS+CollNet).
all-reduce     NCCL's NVLSTree (multi-server): NVLS reduce-scatter in each server → per-rail double
NVLSTree       binary tree all-reduce of the S/G shard (the tree above, latency 2·log2 N) → NVLS
               multicast all-gather. Network bytes per NIC: S/G at N = 2 (vs the ring's 2(n−1)/n · S/G).
reduce-scatter NVLS, one server only: ld_reduce of each slice (sends S, receives S/G) / multicast of
all-gather     each slice (sends S/G, receives S). NVLSTree is all-reduce only; multi-server NVLS
NVLS           reduce-scatter / all-gather needs NCCL's CollNet and is rejected.
============== ========================================================================================

``algorithm="auto"`` is NCCL's tuner choice: every algorithm valid for the op, the layout and
the GPU (NVLS only on NVSwitch GPUs, Hopper or later; PAT with one GPU per node) is timed by the
α-β model with NCCL's latencies, and the fastest is then timed by the chosen engine (as the
protocol is chosen). Every result reports that choice (:attr:`CollectiveResult.nccl_choice`),
also when another algorithm was asked for.

**NIC cap.** No engine times a network step faster than its busiest NIC's wire bytes at line rate
× the NIC's achieved efficiency (:data:`NIC_EFFICIENCY` 0.94 [S4], ``nic_efficiency=`` or a
calibration's η; 1 = the ideal NIC, the engine's own timing).

``S`` follows nccl-tests (hardware-facts §G.1): the buffer for all-reduce and broadcast, the
*total* (count × n) for reduce-scatter, all-gather and all-to-all. busbw = algbw × factor with
factor 2(n−1)/n, (n−1)/n, (n−1)/n, (n−1)/n, 1.

Step representation (what a packet engine's control plane consumes)
---------------------------------------------------------------------
:func:`collective_flows` returns ``list[Step]`` in order. A :class:`Step` holds flows
``(src_host, dst_host, size_bytes)`` (host node ids), a ``domain`` ("network", "nvlink", "nvls"
or "sharp"), and ``repeat`` — the number of identical consecutive steps it stands for (a ring's
2(N−1) steps are one Step with repeat 2(N−1); :meth:`Step.expand` unrolls). **Dependency:
per rank** — a rank starts its step k+1 flows when every step-k flow it sends or receives has
completed. The flow engine times a step as a barrier (all its flows start together; the step
ends with the last one) — exact for these symmetric steps, whose ranks all move the same bytes,
and the same as per-rank dependency in a ring's steady state, where throughput is set by the
slowest hop. NCCL pipelines chunks through the NVLink and network phases in one kernel, so the
bandwidth terms of the two domains overlap: ``time = latency + max(nvlink_bw, network_bw)``
(``pipelined=False`` adds them instead). An "nvls" step's flows are self-pairs ``(gpu, gpu,
bytes sent into the NVSwitch)`` with :attr:`Step.recv_bytes` what each GPU gets back; NVLink is
full duplex and NCCL's NVLS kernel runs the reduce and the multicast at once, so the NVLS steps
of a collective take ``max(Σ sent, Σ received) / NVLS rate``.

Engines
-------
* ``"flow"`` — each network step's flows go through :mod:`aifabric.flow` (same ECMP hash /
  adaptive / static routing as the packet engine, max-min sharing); steps above ``max_flows``
  flows (16k-GPU all-to-all) are timed by the even-split link-load bound instead (the load on
  the busiest directed link over its rate — a lower bound on the max-min makespan; ECMP's
  collision tail is not modelled there and ``model`` says so).
* ``"analytic"`` — α-β: bandwidth = the busiest NIC's bytes over the NIC rate (a non-blocking
  fabric), NVLink bytes over the NVLink rate.
* ``network_timer`` (either engine) — a caller-supplied :data:`NetworkTimer` times every network
  step instead (what :mod:`aifabric.sim.collective` uses to put packet-engine step times into the
  flow mode's composition); NVLink / NVLS steps, latency and algbw / busbw are composed as usual.

Latency (both engines) is NCCL's own tuning model (src/graph/tuning.cc, hardware-facts §D):
``base[algo][proto]`` + per network step ``hwLat.net[algo][proto]`` + per NVLink step
``hwLat.nvlink[algo][proto]`` (NVLS / NVLSTree: base 0, one NVLink latency of 25 µs per
collective, 18 µs net for NVLS+SHARP, 20.9 µs per tree hop for NVLSTree); the flow engine uses
``max(hwLat.net, the step's physical path latency)`` per network step. The protocol (LL / LL128 / Simple) is chosen per size as NCCL's
tuner does — the fastest by this model — and scales the bandwidth by NCCL's protocol
efficiency (LL 0.5, LL128 0.92, Simple 1.0; defaults ``nccl.model_refinements``). Packets add
``header_bytes`` per ``mtu_bytes`` of payload on the wire.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from aifabric.errors import InputError
from aifabric.topology.core import Topology
from aifabric.workload.nic import NIC_EFFICIENCY, NIC_EFFICIENCY_SOURCE  # noqa: F401 (re-exported)

OPS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast")
ALGORITHMS = ("ring", "tree", "nvls", "nvls-tree", "pat")
#: SHARP (Quantum-2 SHARPv3): at most 2 concurrent streaming-aggregation trees per switch
#: (hardware-facts §F [S78][S79]); NCCL's CollNet runs all-reduce only (no public source for the
#: other ops through CollNet here). No Ethernet switch equivalent is modelled (no public source).
SHARP_TREES_PER_SWITCH = 2
NVLS_ALGORITHMS = ("nvls", "nvls-tree")
#: GPUs with NVLink SHARP (NVSwitch multicast / in-switch reduction, Hopper and later) → NCCL's
#: architecture row of ``nccl.nvls_efficiency``
NVLS_GPUS = {"h100": "hopper", "h200": "hopper", "b200": "blackwell"}
PROTOCOLS = ("ll", "ll128", "simple")
ENGINES = ("flow", "analytic")


def busbw_factor(op: str, n: int) -> float:
    """nccl-tests busbw / algbw (hardware-facts §G.1)."""
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op in ("reduce-scatter", "all-gather", "all-to-all"):
        return (n - 1) / n
    if op == "broadcast":
        return 1.0
    raise InputError("unknown collective", field="workload.op", value=op, allowed=", ".join(OPS))


COLLECTIVES = {op: (lambda n, _op=op: busbw_factor(_op, n)) for op in OPS}

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


@dataclass(frozen=True)
class NvlinkDomain:
    """The intra-server domain: per-GPU, per-direction bandwidth and a per-step latency."""

    gbytes_per_s: float
    source: str = ""

    @classmethod
    def for_gpu(cls, gpu: str = "h100") -> NvlinkDomain:
        """NCCL's effective NVLink bandwidth for ``gpu``: min(catalog line rate per direction,
        NCCL's model of 18 links × per-link bandwidth — 20.6 GB/s on SM90, 40.1 on SM100
        [S16]). H100: min(450, 370.8) = 370.8 GB/s, matching the ~370 GB/s measured 8-GPU ring
        busbw (hardware-facts §G.3)."""
        line, sm = 450.0, "sm90"
        src = "hardware-facts §H (450 GB/s per direction)"
        try:
            from aifabric.hardware.catalog import default_value, load_catalog

            rec = load_catalog().gpus[gpu]
            line = float(rec.nvlink_gbytes_per_s)
            src = f"catalog gpus.{gpu}.nvlink_gbytes_per_s"
            per_link = default_value("nccl.nvlink_bw_per_link")
        except KeyError as exc:
            raise InputError("unknown GPU", field="gpu", value=gpu, allowed="h100, h200, b200") from exc
        except Exception:
            per_link = {"sm90": 20.6, "sm100": 40.1}
        if gpu.startswith("b"):
            sm = "sm100"
        model = 18 * float(per_link[sm])
        return cls(min(line, model), f"min({src} = {line:g}, NCCL 18 × {per_link[sm]} GB/s [S16])")


# Measured NVLS all-reduce busbw of 8 × H100 [S3][S80] and NCCL's NVLS efficiency per architecture
# [S16]; used when the catalog's defaults are not available.
_NVLS_FALLBACK = {"busbw": 480.0, "gpus": 8, "eff": {"hopper": 0.85, "blackwell": 0.74}, "h100_line": 450.0}


def nvls_allreduce_busbw(gbytes_per_s: float, gpus: int) -> float:
    """Large-size NVLS all-reduce busbw on ``gpus`` GPUs of one server at a per-GPU NVLS rate:
    algbw = rate / (1 + 1/G), busbw = 2(G−1)/G · algbw = 2(G−1)/(G+1) · rate."""
    g = int(gpus)
    return 2 * (g - 1) / (g + 1) * float(gbytes_per_s) if g > 1 else 0.0


@dataclass(frozen=True)
class NvlsDomain:
    """NVLink SHARP (NVSwitch multicast + in-switch reduction): the rate at which one GPU moves
    NVLS traffic through its NVLink ports, per direction (GB/s)."""

    gbytes_per_s: float
    estimate: bool = False
    source: str = ""

    @classmethod
    def for_gpu(cls, gpu: str = "h100") -> NvlsDomain:
        """Calibrated on H100: the measured 8-GPU NVLS all-reduce busbw, 480 GB/s [S3][S80]
        (defaults ``nccl.h100_8gpu_nvls_allreduce_busbw``), inverted through
        :func:`nvls_allreduce_busbw` → 480 · 9/14 = 308.6 GB/s per GPU per direction (≈ 0.83 ×
        NCCL's 18 × 20.6 GB/s, next to NCCL's own NVLS efficiency 0.85 [S16]). Other GPUs are an
        **estimate**: × catalog NVLink rate / H100's (450 GB/s) × NCCL's NVLS efficiency of the
        architecture / Hopper's (0.74 / 0.85 for Blackwell, defaults ``nccl.nvls_efficiency``):
        H200 308.6, B200 537.3 GB/s."""
        if gpu not in NVLS_GPUS:
            raise InputError(
                "NVLS needs an NVSwitch GPU of Hopper or later",
                field="gpu",
                value=gpu,
                allowed=", ".join(NVLS_GPUS),
            )
        arch = NVLS_GPUS[gpu]
        c = dict(_NVLS_FALLBACK)
        line = c["h100_line"]
        src = "fallback constants"
        try:
            from aifabric.hardware.catalog import default_value, load_catalog

            cat = load_catalog()
            c["busbw"] = float(default_value("nccl.h100_8gpu_nvls_allreduce_busbw"))
            c["eff"] = {k: float(v) for k, v in default_value("nccl.nvls_efficiency").items()}
            c["h100_line"] = float(cat.gpus["h100"].nvlink_gbytes_per_s)
            line = float(cat.gpus[gpu].nvlink_gbytes_per_s)
            src = "catalog + defaults"
        except Exception:  # catalog absent or reshaped: the cited constants above
            pass
        g = c["gpus"]
        h100 = c["busbw"] * (g + 1) / (2 * (g - 1))
        if gpu == "h100":
            return cls(h100, False, f"{c['busbw']:g} GB/s 8 × H100 NVLS busbw [S3][S80] × 9/14 ({src})")
        scale = line / c["h100_line"] * c["eff"][arch] / c["eff"]["hopper"]
        return cls(
            h100 * scale,
            True,
            f"estimate: H100 {h100:.1f} GB/s × NVLink {line:g}/{c['h100_line']:g} × NVLS efficiency "
            f"{c['eff'][arch]:g}/{c['eff']['hopper']:g} [S16] ({src})",
        )


def nvlink_busbw_gbps(op: str = "all-reduce", gpu: str = "h100", gpus: int = 8) -> tuple[float, str]:
    """Large-size busbw (GB/s) of ``op`` inside one server of ``gpus`` GPUs and the algorithm that
    gives it — the faster of the NVLink ring (busbw = NCCL's NVLink rate, 370.8 GB/s on H100) and,
    on NVLS GPUs, NVLS (all-reduce 2(G−1)/(G+1) × NVLS rate = 480 GB/s on 8 × H100; reduce-scatter /
    all-gather (G−1)/G × NVLS rate, slower than the ring). Latency terms not included."""
    if op not in OPS:
        raise InputError("unknown collective", field="workload.op", value=op, allowed=", ".join(OPS))
    ring = NvlinkDomain.for_gpu(gpu).gbytes_per_s
    g = int(gpus)
    if gpu not in NVLS_GPUS or g < 2 or op not in ("all-reduce", "reduce-scatter", "all-gather"):
        return ring, "ring"
    rate = NvlsDomain.for_gpu(gpu).gbytes_per_s
    nvls = nvls_allreduce_busbw(rate, g) if op == "all-reduce" else (g - 1) / g * rate
    return (nvls, "nvls") if nvls > ring else (ring, "ring")


@dataclass(frozen=True)
class Step:
    """One step of a collective: flows ``(src_host, dst_host, size_bytes)`` that start together
    (per rank: after that rank's previous-step flows), standing for ``repeat`` identical steps.

    ``groups`` (optional) marks an all-pairs step compactly: every ordered pair of hosts within a
    row of ``groups`` exchanges ``pair_bytes`` — materialised into ``flows`` only on demand
    (16k-GPU all-to-all has 33 M such flows). ``latency_hops`` is how many sequential per-step
    latencies the step costs (1 for a ring step, the depth of a pipelined tree or chain; 0 for an
    NVLS multicast that runs in the same kernel as the NVLS reduce before it). ``recv_bytes``
    (domain "nvls" only): what each GPU of the self-pairs receives back from the NVSwitch, the
    pairs' sizes being what it sends in."""

    domain: str
    label: str
    repeat: int = 1
    latency_hops: int = 1
    pairs: np.ndarray | None = None  # (k, 3) int64
    groups: np.ndarray | None = None  # (g, m) host ids
    pair_bytes: int = 0
    recv_bytes: int | None = None  # "nvls" steps: what each GPU receives from the NVSwitch
    #: per-step latencies the whole step costs, when not ``repeat × latency_hops``: NCCL's flat
    #: ring charges hwLat.net only on its 2(N−1) inter-node steps of 2(n−1) (tuning.cc, [S16])
    latencies: int | None = None

    @property
    def latency_count(self) -> int:
        """Per-step latencies this step stands for (all its repetitions)."""
        return self.repeat * self.latency_hops if self.latencies is None else int(self.latencies)

    @property
    def num_flows(self) -> int:
        if self.pairs is not None:
            return len(self.pairs)
        g, m = self.groups.shape
        return g * m * (m - 1)

    @property
    def flows(self) -> np.ndarray:
        """``(k, 3)`` int64 array of ``(src_host, dst_host, size_bytes)``."""
        if self.pairs is not None:
            return self.pairs
        g, m = self.groups.shape
        i, j = np.nonzero(~np.eye(m, dtype=bool))
        src = self.groups[:, i].ravel()
        dst = self.groups[:, j].ravel()
        return np.stack([src, dst, np.full(len(src), self.pair_bytes, dtype=np.int64)], axis=1)

    def host_bytes(self, hosts_count: int, host_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bytes each host sends and receives in one repetition of this step."""
        if self.pairs is not None:
            tx = np.bincount(host_index[self.pairs[:, 0]], weights=self.pairs[:, 2], minlength=hosts_count)
            rw = (
                self.pairs[:, 2]
                if self.recv_bytes is None
                else np.full(len(self.pairs), float(self.recv_bytes))
            )
            rx = np.bincount(host_index[self.pairs[:, 1]], weights=rw, minlength=hosts_count)
            return tx, rx
        tx = np.zeros(hosts_count)
        m = self.groups.shape[1]
        tx[host_index[self.groups.ravel()]] = (m - 1) * self.pair_bytes
        return tx, tx.copy()

    def total_bytes(self) -> float:
        if self.pairs is not None:
            return float(self.pairs[:, 2].sum())
        return float(self.num_flows) * self.pair_bytes

    def expand(self) -> list[Step]:
        """``repeat`` single steps (what a packet engine runs one after the other)."""
        hops = self.latency_hops
        if self.latencies is not None:  # spread the step's latencies over its repetitions
            hops = math.ceil(self.latencies / max(self.repeat, 1))
        one = Step(self.domain, self.label, 1, hops, self.flows, None, 0, self.recv_bytes)
        return [one] * self.repeat


#: ``network_timer(step, proto_eff) -> (bandwidth_s, physical_latency_s, model)`` for one
#: repetition of a network step (``step.domain`` "network", or "sharp" with ``sharp``):
#: ``bandwidth_s`` is counted ``step.repeat`` times into ``network_time_s``;
#: ``physical_latency_s`` enters the latency as ``max(hops × NCCL's hwLat.net, physical)`` per
#: repetition; ``model`` is collected into :attr:`CollectiveResult.model`. ``proto_eff`` is the
#: protocol's bandwidth efficiency (Simple 1.0; payload / ``proto_eff`` is what is on the wire).
NetworkTimer = Callable[[Step, float], tuple[float, float, str]]


@dataclass
class CollectiveResult:
    """Outcome of one collective. Times in seconds, bandwidths in GB/s (1e9 bytes/s, as
    nccl-tests), bytes are payload unless named ``wire``."""

    op: str
    size_bytes: int
    ranks: int
    servers: int
    gpus_per_node: int
    algorithm: str
    protocol: str
    engine: str
    model: str
    time_s: float
    algbw_gbps: float
    busbw_gbps: float
    latency_s: float
    network_time_s: float
    nvlink_time_s: float
    network_bytes_per_rank: float  # payload the busiest NIC sends
    network_bytes_total: float
    nvlink_bytes_per_gpu: float
    wire_bytes_total: float
    sharp: bool = False
    steps: int = 0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    nccl_choice: str = ""  # NCCL's tuner choice here (= algorithm when algorithm="auto")
    nic_efficiency: float = NIC_EFFICIENCY  # the cap applied to every network step

    def as_dict(self) -> dict:
        return {k: (float(v) if isinstance(v, np.floating) else v) for k, v in self.__dict__.items()}


# ---- rank layout ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    hosts: np.ndarray  # (N, G) host ids: row = server, column = local rank (rail)

    @property
    def servers(self) -> int:
        return self.hosts.shape[0]

    @property
    def local(self) -> int:
        return self.hosts.shape[1]

    @property
    def n(self) -> int:
        return self.hosts.size


def rank_layout(topology: Topology, ranks=None, gpus_per_node: int | None = None) -> Layout:
    """Ranks → ``(servers, local ranks)`` host grid. ``ranks``: None (all hosts), a count (the
    first hosts) or host ids. ``gpus_per_node`` defaults to the rail-optimised design's, else 1."""
    hosts = topology.hosts
    if ranks is None:
        sel = hosts
    elif isinstance(ranks, int | np.integer):
        if not 1 <= int(ranks) <= len(hosts):
            raise InputError(
                "rank count out of range",
                field="workload.hosts",
                value=int(ranks),
                allowed=f"1..{len(hosts)}",
            )
        sel = hosts[: int(ranks)]
    else:
        sel = np.asarray(ranks, dtype=np.int64)
        if not np.isin(sel, hosts).all() or len(np.unique(sel)) != len(sel):
            raise InputError("ranks must be distinct host ids", field="ranks", value=list(sel[:4]))
    if gpus_per_node is None:
        design = topology.meta.get("design")
        gpus_per_node = int(getattr(design, "gpus_per_node", 1)) if topology.kind == "rail-optimized" else 1
    g = int(gpus_per_node)
    if g < 1:
        raise InputError("gpus_per_node must be ≥ 1", field="gpus_per_node", value=g)
    if g == 1:
        return Layout(np.asarray(sel, dtype=np.int64)[:, None])
    server = np.asarray(sel) // g  # builders number GPU NICs server by server
    uniq, counts = np.unique(server, return_counts=True)
    if (counts != counts[0]).any():
        raise InputError(
            "ranks must cover the same number of GPUs in every server",
            field="workload.hosts",
            value=len(sel),
            allowed=f"a multiple of {g} (whole servers)",
        )
    order = np.lexsort((np.asarray(sel), server))
    return Layout(np.asarray(sel, dtype=np.int64)[order].reshape(len(uniq), counts[0]))


# ---- decomposition -------------------------------------------------------------------------
def _ring_pairs(groups: np.ndarray, nbytes: int) -> np.ndarray:
    """Each row is a ring: member i sends ``nbytes`` to member i+1."""
    src = groups.ravel()
    dst = np.roll(groups, -1, axis=1).ravel()
    return np.stack([src, dst, np.full(len(src), nbytes, dtype=np.int64)], axis=1)


def _nvl_ring(lay: Layout, nbytes: int, label: str) -> list[Step]:
    g = lay.local
    if g < 2 or nbytes <= 0:
        return []
    return [Step("nvlink", label, repeat=g - 1, pairs=_ring_pairs(lay.hosts, nbytes))]


def _flat_ring(lay: Layout, total: int, steps: int, inter_steps: int, label: str) -> list[Step]:
    """NCCL's ring across servers: one flat ring through all ``n`` ranks per channel, its
    channels spread over the ``G`` NICs of a server (NCCL's graph search keeps a channel on one
    rail, in and out, with ``crossNic`` 0 on rail-optimised nodes), so channel ``c`` crosses from
    server ``k`` to ``k + 1`` on rail ``c`` and visits the other ``G − 1`` GPUs over NVLink.
    ``steps`` ring steps (2(n−1) all-reduce, n−1 reduce-scatter / all-gather), every rank sending
    one chunk ``total / (n·G)`` per channel group per step: per NIC ``steps × total / (n·G)``,
    i.e. 2(n−1)/n · S/G for all-reduce — busbw ≤ G × the NIC's rate, whatever N. NVLink: each
    GPU forwards ``G − 1`` of the ``G`` channel groups' chunks per step. Latency as NCCL's tuner
    counts it: ``inter_steps`` network steps (2(N−1) / N−1), the rest NVLink steps."""
    g = lay.local
    chunk = math.ceil(total / (lay.n * g))
    out = [
        Step(
            "network",
            f"{label}: flat ring, rail-aligned channels, inter-server hops",
            repeat=steps,
            latencies=inter_steps,
            pairs=_ring_pairs(lay.hosts.T, chunk),
        )
    ]
    if g > 1:
        out.append(
            Step(
                "nvlink",
                f"{label}: flat ring, NVLink hops inside each server",
                repeat=steps,
                latencies=steps - inter_steps,
                pairs=_ring_pairs(lay.hosts, (g - 1) * chunk),
            )
        )
    return out


def _pat(lay: Layout, total: int, op: str) -> list[Step]:
    """NCCL's PAT (Parallel Aggregated Trees, NCCL ≥ 2.23; all-gather / reduce-scatter, Simple,
    one GPU per node): ⌈log2 n⌉ network steps, Bruck-like — step k moves min(2^k, n − 2^k) blocks
    of ``total / n`` to the rank 2^k away — so each NIC moves the ring's (n−1)/n · S in
    log2(n) latencies instead of n − 1. Reduce-scatter runs the same steps in reverse."""
    hosts = lay.hosts.ravel()
    n = len(hosts)
    block = math.ceil(total / n)
    out, d = [], 1
    while d < n:
        blocks = min(d, n - d)
        dst = np.roll(hosts, -d)
        out.append(
            Step(
                "network",
                f"PAT {op} step (distance {d})",
                pairs=np.stack([hosts, dst, np.full(n, blocks * block, dtype=np.int64)], axis=1),
            )
        )
        d *= 2
    return out if op == "all-gather" else out[::-1]


def _btree_parent(n: int, r: int) -> int:
    """Parent of rank ``r`` in NCCL's binary tree over ``n`` ranks (-1 for the root, rank 0).
    With ``b`` the lowest set bit of ``r``, the parent clears ``b`` and sets the next bit up;
    if that rank does not exist it only clears ``b``. Odd ranks are leaves, so a rank's children
    are ``r − b/2`` and ``r + b/2`` (the latter halved until it is in range, or none), and the
    root has one child, the highest power of two below ``n``."""
    if r == 0:
        return -1
    low = r & -r
    up = (r ^ low) | (low << 1)
    return up if up < n else r ^ low


def _dtree_parents(n: int) -> tuple[list[int], list[int]]:
    """Parent of every rank (-1 at the root) in NCCL's two trees (``ncclGetDtree``): tree 0 is
    the bit-pattern binary tree rooted at rank 0; tree 1 is tree 0 mirrored (rank r plays tree
    0's rank n−1−r, root n−1) when ``n`` is even, shifted by one (rank r plays r−1, root 1) when
    ``n`` is odd. Even n: every rank is interior in exactly one tree; odd n: rank 0 is interior
    in both (one child in each), every other rank in exactly one."""
    p0 = [_btree_parent(n, r) for r in range(n)]
    if n % 2 == 0:
        p1 = [-1 if p0[n - 1 - r] < 0 else n - 1 - p0[n - 1 - r] for r in range(n)]
    else:
        p1 = [-1 if p0[(r - 1) % n] < 0 else (p0[(r - 1) % n] + 1) % n for r in range(n)]
    return p0, p1


def _double_binary_tree(n: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """NCCL's double binary tree on ``n`` servers (:func:`_dtree_parents`): the (child, parent)
    edges of tree 0 and of tree 1, ordered by child, and the depth — the most servers on a
    root-to-leaf path in either tree (⌈log2 n⌉ + 1; both trees have the same shape)."""
    trees = _dtree_parents(n) if n > 1 else ([-1] * n, [-1] * n)
    edges = [[(c, p) for c, p in enumerate(par) if p >= 0] for par in trees]
    level = [0] * n  # servers from the root down to r, in tree 0 (tree 1 is a relabelling of it)
    for r in range(n):
        path, x = [], r
        while x >= 0 and not level[x]:
            path.append(x)
            x = trees[0][x]
        d = level[x] if x >= 0 else 0
        for y in reversed(path):
            d += 1
            level[y] = d
    return edges[0], edges[1], max(level, default=0)


def collective_flows(
    op: str,
    size_bytes: int,
    topology: Topology,
    ranks=None,
    algorithm: str = "ring",
    gpus_per_node: int | None = None,
    sharp: bool = False,
    root: int = 0,
) -> list[Step]:
    """The steps of ``op`` on ``size_bytes`` (nccl-tests' S, see the module docstring)."""
    if op not in OPS:
        raise InputError("unknown collective", field="workload.op", value=op, allowed=", ".join(OPS))
    if algorithm == "auto":
        raise InputError(
            "algorithm auto is chosen by run_collective / nccl_sweep (it needs the GPU)",
            field="workload.algorithm",
            value=algorithm,
            allowed=", ".join(ALGORITHMS),
        )
    if algorithm not in ALGORITHMS:
        raise InputError(
            "unknown algorithm",
            field="workload.algorithm",
            value=algorithm,
            allowed=", ".join((*ALGORITHMS, "auto")),
        )
    size = int(size_bytes)
    if size <= 0:
        raise InputError("collective size must be positive", field="workload.size", value=size)
    lay = rank_layout(topology, ranks, gpus_per_node)
    check_algorithm(op, algorithm, lay, sharp)
    return _decompose(op, size, lay, algorithm, sharp, root)


def check_algorithm(op: str, algorithm: str, lay: Layout, sharp: bool = False) -> None:
    """InputError unless ``algorithm`` runs ``op`` on this layout as NCCL allows it: NVLS for
    all-reduce / reduce-scatter / all-gather inside one server of ≥ 2 GPUs (multi-server only
    all-reduce with SHARP = NCCL's NVLS+CollNet), NVLSTree for all-reduce across ≥ 2 servers."""
    field_ = "workload.algorithm"
    if algorithm == "tree" and op != "all-reduce":
        raise InputError(
            f"NCCL runs the tree for all-reduce only, not {op}",
            field=field_,
            value=algorithm,
            allowed="ring, auto",
        )
    if algorithm == "pat":
        if op not in ("all-gather", "reduce-scatter"):
            raise InputError(
                f"NCCL runs PAT for all-gather and reduce-scatter only, not {op}",
                field=field_,
                value=algorithm,
                allowed="ring, tree",
            )
        if lay.local != 1:
            raise InputError(
                "NCCL runs PAT with one GPU per node only",
                field=field_,
                value=algorithm,
                allowed="ring (or gpus_per_node 1)",
            )
        if sharp:
            raise InputError("PAT does not use SHARP", field=field_, value=algorithm, allowed="ring")
        return
    if algorithm not in NVLS_ALGORITHMS:
        return
    if op not in ("all-reduce", "reduce-scatter", "all-gather"):
        raise InputError(
            f"NCCL runs NVLS for all-reduce, reduce-scatter and all-gather only, not {op}",
            field=field_,
            value=algorithm,
            allowed="ring",
        )
    if algorithm == "nvls-tree" and op != "all-reduce":
        raise InputError(
            f"NCCL's NVLSTree is all-reduce only, not {op}",
            field=field_,
            value=algorithm,
            allowed="ring, nvls (one server)",
        )
    if lay.local < 2:
        raise InputError(
            "NVLS needs ≥ 2 GPUs per server on one NVSwitch",
            field=field_,
            value=algorithm,
            allowed="ring, tree",
        )
    if algorithm == "nvls-tree" and sharp:
        raise InputError(
            "NVLSTree does not use SHARP (NCCL's NVLS+SHARP is algorithm nvls with sharp)",
            field=field_,
            value=algorithm,
            allowed="nvls (with sharp), nvls-tree (without)",
        )
    if algorithm == "nvls-tree" and lay.servers < 2:
        raise InputError(
            "NVLSTree needs ≥ 2 servers (NCCL disables it on one node)",
            field=field_,
            value=algorithm,
            allowed="nvls, ring, tree",
        )
    if algorithm == "nvls" and lay.servers > 1 and op != "all-reduce":
        raise InputError(
            f"multi-server NVLS {op} needs NCCL's CollNet (not modelled)",
            field=field_,
            value=algorithm,
            allowed="ring",
        )
    if algorithm == "nvls" and lay.servers > 1 and not sharp:
        raise InputError(
            "multi-server NVLS all-reduce needs SHARP (NCCL's NVLS+CollNet)",
            field=field_,
            value=algorithm,
            allowed="nvls-tree, or nvls with sharp on InfiniBand",
        )


def _rail_tree(lay: Layout, shard: int) -> Step:
    """Per-rail double binary tree all-reduce of each NIC's ``shard`` (two trees, half each)."""
    e1, e2, depth = _double_binary_tree(lay.servers)
    half = math.ceil(shard / 2)
    rows = []
    for edges in (e1, e2):
        for c, p in edges:
            rows.append(np.stack([lay.hosts[c], lay.hosts[p]], axis=1))  # reduce: up
            rows.append(np.stack([lay.hosts[p], lay.hosts[c]], axis=1))  # broadcast: down
    pr = np.concatenate(rows)
    return Step(
        "network",
        "double binary tree reduce+broadcast (pipelined)",
        latency_hops=2 * max(depth - 1, 1),
        pairs=np.concatenate([pr, np.full((len(pr), 1), half)], axis=1),
    )


def _nvls_step(lay: Layout, sent: int, received: int, label: str, latency_hops: int = 1) -> Step:
    hosts = lay.hosts.ravel()
    return Step(
        "nvls",
        label,
        latency_hops=latency_hops,
        recv_bytes=int(received),
        pairs=np.stack([hosts, hosts, np.full(len(hosts), int(sent))], axis=1),
    )


def _decompose_nvls(op, size, lay: Layout, algorithm: str, sharp: bool) -> list[Step]:
    """NVLS (one server, or with SHARP between servers) and NVLSTree, see the module docstring."""
    shard = math.ceil(size / lay.local)
    reduce = _nvls_step(lay, size, shard, "NVLS reduce-scatter (multimem.ld_reduce in the NVSwitch)")
    mcast = _nvls_step(
        lay,
        shard,
        size,
        "NVLS all-gather (multimem.st multicast)",
        latency_hops=0 if op == "all-reduce" else 1,
    )
    if op == "reduce-scatter":
        return [reduce]
    if op == "all-gather":
        return [mcast]
    steps = [reduce]
    if lay.servers > 1 and algorithm == "nvls-tree":
        steps.append(_rail_tree(lay, shard))
    elif lay.servers > 1:  # NVLS + SHARP: the heads' shards through the switch reduction once
        hosts = lay.hosts.ravel()
        steps.append(
            Step(
                "sharp",
                "SHARP in-network all-reduce of the NVLS shard",
                pairs=np.stack([hosts, hosts, np.full(len(hosts), shard)], axis=1),
            )
        )
    return steps + [mcast]


def _decompose(op, size, lay: Layout, algorithm: str, sharp: bool, root: int) -> list[Step]:
    if algorithm in NVLS_ALGORITHMS:
        return _decompose_nvls(op, size, lay, algorithm, sharp)
    nsrv, g, n = lay.servers, lay.local, lay.n
    if algorithm == "pat":
        return _pat(lay, size, op)
    if (
        algorithm == "ring"
        and nsrv > 1
        and not sharp
        and op in ("all-reduce", "reduce-scatter", "all-gather")
    ):
        steps_, inter = (2 * (n - 1), 2 * (nsrv - 1)) if op == "all-reduce" else (n - 1, nsrv - 1)
        return _flat_ring(lay, size, steps_, inter, f"ring {op}")
    shard = math.ceil(size / g)
    steps: list[Step] = []
    if op == "all-reduce":
        steps += _nvl_ring(lay, shard, "nvlink reduce-scatter")
        if nsrv > 1:
            if sharp:
                hosts = lay.hosts.ravel()
                steps.append(
                    Step(
                        "sharp",
                        "SHARP in-network all-reduce",
                        pairs=np.stack([hosts, hosts, np.full(len(hosts), shard)], axis=1),
                    )
                )
            elif algorithm == "tree":
                steps.append(_rail_tree(lay, shard))
            # (the multi-server ring is NCCL's flat ring, returned above)
        steps += _nvl_ring(lay, shard, "nvlink all-gather")
    elif op == "reduce-scatter":  # one server (several: the flat ring above)
        steps += _nvl_ring(lay, shard, "nvlink reduce-scatter")
    elif op == "all-gather":
        steps += _nvl_ring(lay, shard, "nvlink all-gather")
    elif op == "all-to-all":
        per_pair = math.ceil(size / n)  # each rank sends S/n to every rank (S = count × n × type)
        if g > 1:
            steps.append(
                Step(
                    "nvlink",
                    "PXN: NVLink gather to the destination rail",
                    groups=lay.hosts,
                    pair_bytes=nsrv * per_pair,
                )
            )
        if nsrv > 1:
            steps.append(Step("network", "per-rail all-pairs", groups=lay.hosts.T, pair_bytes=g * per_pair))
    else:  # broadcast
        r_srv = int(root) // g if 0 <= int(root) < n else 0
        if g > 1:
            rh = lay.hosts[r_srv, int(root) % g]
            peers = lay.hosts[r_srv][lay.hosts[r_srv] != rh]
            steps.append(
                Step(
                    "nvlink",
                    "nvlink scatter from the root",
                    pairs=np.stack([np.full(len(peers), rh), peers, np.full(len(peers), shard)], axis=1),
                )
            )
        if nsrv > 1:
            order = np.roll(np.arange(nsrv), -r_srv)
            chain = lay.hosts[order]  # (N, G)
            pr = np.stack([chain[:-1].ravel(), chain[1:].ravel(), np.full((nsrv - 1) * g, shard)], axis=1)
            steps.append(Step("network", "per-rail pipelined chain", latency_hops=nsrv - 1, pairs=pr))
        steps += _nvl_ring(lay, shard, "nvlink all-gather")
    return steps


def host_nic_rate_bps(topology, hosts) -> float:
    """The slowest NIC among ``hosts`` (the rate a collective's steps are capped by): a host's NIC
    rate is the sum of its links' rates — its one link, or one link per plane on a multi-plane
    fabric (each NIC port to its own plane at ``link_rate / planes``)."""
    h = np.asarray(hosts).ravel()
    rate = topology.link_rate_bps.astype(np.float64)
    n = topology.num_nodes
    per_node = np.bincount(topology.link_a, weights=rate, minlength=n)
    per_node += np.bincount(topology.link_b, weights=rate, minlength=n)
    return float(per_node[h].min())


# ---- timing --------------------------------------------------------------------------------
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


def candidate_algorithms(
    op: str, lay: Layout, gpu: str = "h100", sharp: bool = False, protocol: str = "auto"
) -> tuple[str, ...]:
    """The algorithms NCCL's tuner weighs for ``op`` on this layout: ring always; the double
    binary tree for multi-server all-reduce; NVLS (one server; multi-server with SHARP) and
    NVLSTree (multi-server all-reduce) on NVSwitch GPUs of Hopper or later with ≥ 2 GPUs per
    server and the Simple protocol."""
    out = ["ring"]
    if op == "all-reduce" and lay.servers > 1 and not sharp:
        out.append("tree")
    if (
        op in ("all-gather", "reduce-scatter")
        and lay.local == 1
        and lay.n > 1
        and protocol in ("auto", "simple")
    ):
        out.append("pat")
    if gpu in NVLS_GPUS and lay.local >= 2 and protocol in ("auto", "simple"):
        if op in ("reduce-scatter", "all-gather") and lay.servers == 1:
            out.append("nvls")
        elif op == "all-reduce":
            out.append("nvls-tree" if lay.servers > 1 and not sharp else "nvls")
    return tuple(out)


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


def _label(algo: str, sharp: bool, lay: Layout, op: str = "") -> str:
    """The name a result carries: NCCL's all-to-all is grouped send/recv to every peer with PXN
    (``pxn``), not a ring."""
    if op == "all-to-all":
        return "pxn"
    if algo in NVLS_ALGORITHMS:
        return "nvls+sharp" if sharp and lay.servers > 1 else algo
    return "sharp" if sharp else algo


def nccl_choice(
    op: str, size_bytes: int, lay: Layout, gpu: str, sharp: bool, actx: _Ctx, pipelined: bool = True
) -> str:
    """NCCL's tuner choice for ``op`` of ``size_bytes`` on ``lay``: the fastest (algorithm,
    protocol) of :func:`candidate_algorithms` by the α-β model with NCCL's constants."""
    best, best_t = "ring", math.inf
    for a in candidate_algorithms(op, lay, gpu, sharp):
        if a in NVLS_ALGORITHMS and actx.nvls is None:
            actx = _Ctx(**{**actx.__dict__, "nvls": NvlsDomain.for_gpu(gpu)})
        st = _decompose(op, int(size_bytes), lay, a, sharp, 0)
        protos = ("simple",) if sharp or a in NVLS_ALGORITHMS or a == "pat" else PROTOCOLS
        for p in protos:
            t = _time_steps(actx, op, st, a, p, sharp, pipelined, True)["time"]
            if t < best_t:
                best, best_t = a, t
    return best


# ---- nccl-tests style sweep ------------------------------------------------------------------
_TEST_NAME = {
    "all-reduce": "all_reduce_perf",
    "reduce-scatter": "reduce_scatter_perf",
    "all-gather": "all_gather_perf",
    "all-to-all": "alltoall_perf",
    "broadcast": "broadcast_perf",
}


def default_sizes(min_bytes: int = 8, max_bytes: int = 8 * 2**30) -> list[int]:
    """nccl-tests' ``-b 8 -e 8G -f 2`` size ladder."""
    out, s = [], int(min_bytes)
    while s <= max_bytes:
        out.append(s)
        s *= 2
    return out


def nccl_sweep(op: str, sizes, topology: Topology, dtype_bytes: int = 4, **kw) -> pd.DataFrame:
    """One row per size: ``size_bytes, count, type, redop, root, time_us, algbw_gbytes_per_s,
    busbw_gbytes_per_s`` (GB/s; ``algbw_gbps`` / ``busbw_gbps`` the deprecated aliases), ``wrong,
    protocol, model, algorithm``, like nccl-tests' out-of-place columns (``count`` = size /
    type). ``kw`` go to :func:`run_collective`; ``algorithm="auto"`` picks per size (the
    ``algorithm`` column says which)."""
    rows = []
    cache: dict = {}
    algorithm = kw.get("algorithm", "ring")
    r = None
    for s in sizes:
        steps = (
            None
            if algorithm == "auto"
            else collective_flows(
                op,
                s,
                topology,
                ranks=kw.get("ranks"),
                algorithm=algorithm,
                gpus_per_node=kw.get("gpus_per_node"),
                sharp=kw.get("sharp", False),
            )
        )
        r = run_collective(op, s, topology, steps=steps, _ctx_cache=cache, **kw)
        cache.clear()
        count = max(int(s) // dtype_bytes, 1)
        if op in ("reduce-scatter", "all-gather", "all-to-all"):
            count = max(int(s) // dtype_bytes // r.ranks, 1)  # nccl-tests prints the per-rank count
        rows.append(
            {
                "size_bytes": int(s),
                "count": count,
                "type": {4: "float", 2: "half", 1: "int8"}.get(dtype_bytes, "float"),
                "redop": "sum" if op in ("all-reduce", "reduce-scatter") else "none",
                "root": 0 if op == "broadcast" else -1,
                "time_us": r.time_s * 1e6,
                "algbw_gbytes_per_s": r.algbw_gbps,  # GB/s, as nccl-tests prints them
                "busbw_gbytes_per_s": r.busbw_gbps,
                "algbw_gbps": r.algbw_gbps,  # deprecated aliases (GB/s despite the name), one release
                "busbw_gbps": r.busbw_gbps,
                "wrong": "N/A",
                "protocol": r.protocol,
                "model": r.model,
                "algorithm": r.algorithm,
                "nccl_choice": r.nccl_choice,
            }
        )
    df = pd.DataFrame(rows)
    df.attrs.update(
        {
            "op": op,
            "ranks": r.ranks if rows else 0,
            "engine": kw.get("engine", "flow"),
            "algorithm": algorithm,
            "nic_efficiency": r.nic_efficiency if rows else NIC_EFFICIENCY,
        }
    )
    return df


def _num(x: float, width: int) -> str:
    """nccl-tests' number formatting: %.2f, then .1f, .0f, then %.1e when too wide."""
    for fmt in ("{:.2f}", "{:.1f}", "{:.0f}"):
        s = fmt.format(x)
        if len(s) <= width:
            return s.rjust(width)
    return f"{x:.1e}".rjust(width)


def format_nccl_table(df: pd.DataFrame) -> str:
    """The sweep as nccl-tests prints it (out-of-place half), so it lays next to a real run."""
    op = df.attrs.get("op", "all-reduce")
    algo = str(df.attrs.get("algorithm", "ring"))
    if "algorithm" in df.columns and len(df):  # which algorithm ran, by size range (auto switches)
        runs, start = [], 0
        col = df["algorithm"].tolist()
        for i in range(1, len(col) + 1):
            if i == len(col) or col[i] != col[start]:
                runs.append(f"{col[start]} {df['size_bytes'].iloc[start]}–{df['size_bytes'].iloc[i - 1]} B")
                start = i
        chosen = ", ".join(runs) if len(runs) > 1 else col[0]
        algo = f"auto: {chosen}" if algo == "auto" else chosen
    lines = [
        f"# aifabric estimate: {_TEST_NAME.get(op, op)}  nranks {df.attrs.get('ranks', '?')}  "
        f"engine {df.attrs.get('engine', 'flow')}  algorithm {algo}",
        "#",
        "#                                                              out-of-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)",
    ]
    for r in df.itertuples(index=False):
        lines.append(
            f"{r.size_bytes:12d}  {r.count:12d}  {r.type:>8s}  {r.redop:>6s}  {r.root:6d}  "
            f"{_num(r.time_us, 7)} {_num(r.algbw_gbps, 7)} {_num(r.busbw_gbps, 7)}  {r.wrong:>5s}"
        )
    avg = float(df["busbw_gbps"].mean()) if len(df) else 0.0
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {avg:.6g}", "#"]
    return "\n".join(lines)


# ---- flows with a schedule (for simulate --mode flow) ------------------------------------------
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
