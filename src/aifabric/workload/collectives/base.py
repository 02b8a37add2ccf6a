"""The shared vocabulary of the collectives: ops, algorithms, protocols, engines, nccl-tests'
busbw factor, the :class:`Step` a collective is decomposed into and the :class:`CollectiveResult`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from aifabric.errors import InputError
from aifabric.workload.nic import NIC_EFFICIENCY

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
