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
RS, AG)        (:func:`.ring._flat_ring`): 2(n−1) steps (RS / AG n−1) of S/(n·G) per NIC, each GPU forwarding
               G−1 of the G channel groups over NVLink; NCCL's latency count: 2(N−1) network steps
               and 2(n−N) NVLink steps. Network bytes per NIC 2(n−1)/n · S/G: busbw ≤ G × NIC rate.
               One server: the NVLink ring (G−1 reduce-scatter + G−1 all-gather steps of S/G).
PAT            NCCL ≥ 2.23, all-gather / reduce-scatter with one GPU per node (:func:`.pat._pat`):
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

Modules
-------
The shared types in :mod:`~aifabric.workload.collectives.base` (ops, :class:`Step`,
:class:`CollectiveResult`) and :mod:`~aifabric.workload.collectives.layout` (ranks on servers and
rails); one module per algorithm's decomposition — :mod:`~aifabric.workload.collectives.ring`,
:mod:`~aifabric.workload.collectives.pat`, :mod:`~aifabric.workload.collectives.tree`,
:mod:`~aifabric.workload.collectives.nvls` (NVLS, NVLSTree, SHARP),
:mod:`~aifabric.workload.collectives.all_to_all`, :mod:`~aifabric.workload.collectives.broadcast` —
chosen by :mod:`~aifabric.workload.collectives.decompose`; the NVLink / NVLS domains in
:mod:`~aifabric.workload.collectives.nvlink`; the cost model in
:mod:`~aifabric.workload.collectives.timing`, NCCL's tuner in
:mod:`~aifabric.workload.collectives.tuner`, :func:`run_collective` in
:mod:`~aifabric.workload.collectives.run`; nccl-tests sweeps in
:mod:`~aifabric.workload.collectives.sweep` and flow schedules in
:mod:`~aifabric.workload.collectives.schedule`. This package re-exports the public names.
"""

from aifabric.workload.collectives.base import (
    ALGORITHMS,
    COLLECTIVES,
    ENGINES,
    NVLS_ALGORITHMS,
    NVLS_GPUS,
    OPS,
    PROTOCOLS,
    SHARP_TREES_PER_SWITCH,
    CollectiveResult,
    NetworkTimer,
    Step,
    busbw_factor,
)
from aifabric.workload.collectives.decompose import check_algorithm, collective_flows
from aifabric.workload.collectives.layout import Layout, host_nic_rate_bps, rank_layout
from aifabric.workload.collectives.nvlink import (
    NvlinkDomain,
    NvlsDomain,
    nvlink_busbw_gbps,
    nvls_allreduce_busbw,
)
from aifabric.workload.collectives.run import run_collective
from aifabric.workload.collectives.schedule import collective_flow_schedule
from aifabric.workload.collectives.sweep import default_sizes, format_nccl_table, nccl_sweep
from aifabric.workload.collectives.timing import nccl_constants
from aifabric.workload.collectives.tree import _double_binary_tree
from aifabric.workload.collectives.tuner import candidate_algorithms, nccl_choice
from aifabric.workload.nic import NIC_EFFICIENCY, NIC_EFFICIENCY_SOURCE

__all__ = [
    "OPS",
    "ALGORITHMS",
    "SHARP_TREES_PER_SWITCH",
    "NVLS_ALGORITHMS",
    "NVLS_GPUS",
    "PROTOCOLS",
    "ENGINES",
    "busbw_factor",
    "COLLECTIVES",
    "nccl_constants",
    "NvlinkDomain",
    "nvls_allreduce_busbw",
    "NvlsDomain",
    "nvlink_busbw_gbps",
    "Step",
    "NetworkTimer",
    "CollectiveResult",
    "Layout",
    "rank_layout",
    "collective_flows",
    "check_algorithm",
    "host_nic_rate_bps",
    "candidate_algorithms",
    "run_collective",
    "nccl_choice",
    "default_sizes",
    "nccl_sweep",
    "format_nccl_table",
    "collective_flow_schedule",
    "NIC_EFFICIENCY",
    "NIC_EFFICIENCY_SOURCE",
    "_double_binary_tree",
]
