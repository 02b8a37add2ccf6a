"""Small-message latency on the risk testbed (issue 25, part 9): what a latency-critical workload
(``--workload trading``, ``--jitter-sensitivity high``) sees, measured as what it is — small
request/response round trips and a one-to-many fan-out under the job's background load — rather
than as the tail of a 4 MiB ring step.

The pod is the risk testbed of the design (:class:`aifabric.stages.risk.testbed.Testbed`: its link rate,
switch hop latency, leaf-spine fibre, routing, congestion control, buffer), with the two things a
small message sees that a bulk step does not: the **NIC** latency on both host links
(``latency.nic_tx`` / ``latency.nic_rx`` of defaults.yaml) and the **host-leaf** fibre of the design
(its plan's ``lengths_m["host-leaf"]``; the ring testbed runs every link at the leaf-spine length).

Probes (all between hosts on different leaves, each pair and each fan-out leg on its own QP — one
UDP source port for all its messages, as a connected RDMA QP has):

* **request/response**: host ``i`` of leaf ``l`` and host ``i`` of leaf ``l + leaves/2`` (every ring
  host in one pair); each pair sends :data:`PROBES_PER_SIZE` requests of each size in
  :data:`SIZES_BYTES` per run, in a random order within evenly spaced slots; the responder answers
  each request, with a message of the same size, the moment its last byte arrives. Sample: the
  round trip (request start → response's last byte at the requester).
* **fan-out**: the host left over by the pairing sends :data:`FANOUT_BYTES` to :data:`FANOUT_HOSTS`
  hosts of the other leaves at once, :data:`FANOUTS_PER_RUN` times per run; each answers on arrival.
  Sample: the last reply's arrival − the start.

The replies start where the requests arrive, which the engine cannot chain within one run: each run
is made twice, the first without replies (where each request arrives), the second with them. The
replies' own bytes may move a later request's arrival slightly between the passes; the largest
such shift is reported (``causality_max_ns``).

Background (the probes are spread over the first ideal ring step, ``step_bytes × 8 / rate``, where
the ring's traffic is on the wire in every design):

* ``quiet`` — no other traffic (the idle fabric: the closed form of :func:`idle_one_way_ns`);
* ``job`` — the job's ring step (the testbed's quiet mix: every ring host sends ``step_bytes`` to
  the next leaf);
* ``job+storage`` — the same ring step ``ring_start_us`` into the storage incast (the testbed's
  congested mix), **only when storage is on the compute fabric** (``storage_on_fabric``); then that
  mix weighs ``congestion_share`` of the samples, the ``job`` mix the rest (the share of
  communication time that overlaps a congestion event, as in the risk stage).

Percentiles: inverted-CDF (no interpolation) over all seeds, :data:`LATENCY_SEEDS`; counts are in
the result (``samples``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from aifabric.stages.cache import Memo
from aifabric.stages.risk.tail import STEP_SEEDS
from aifabric.stages.risk.testbed import Testbed, _flows, _scenario

SIZES_BYTES = (64, 512, 4096)  # issue 25: 64 B – 4 KiB request/response (4 KiB = one IB / RoCE MTU)
FANOUT_BYTES = 64
# ASSUMPTION (no public source): a one-to-eight fan-out (an order / market-data update to 8 peers);
# an input of small_message_latency
FANOUT_HOSTS = 8
PROBES_PER_SIZE = 24  # per pair, size and run: 15 pairs x 24 x 16 seeds = 5,760 samples per size and mix
FANOUTS_PER_RUN = 128  # 128 x 16 seeds = 2,048 fan-out samples per mix
LATENCY_SEEDS = STEP_SEEDS  # 16: ECMP hashing, adaptive choices and the probe times move with the seed
QP_BASE = 1024  # probe QP numbers start above the ring's and the incast's flow ids (their sports)
SPORTS = 16384  # aifabric.flow.hashing.flow_sport: the UDP source port is id mod 16384
FIBRE_NS_PER_M = 5.05  # defaults.yaml latency.fiber_delay_per_m (S5, high)
_MEMO = Memo(maxsize=16)  # this process's measurements (the disk cache spans runs)
MIXES = ("quiet", "job", "job+storage")
TRAFFIC_OF = {"job": "quiet", "job+storage": "congested"}  # the testbed's traffic mix behind each
QUANTILES = {"p50_us": 0.5, "p99_us": 0.99, "p999_us": 0.999}
CONSTRAINT_QUANTILE = {"trading": ("p999_us", "p99.9"), "jitter": ("p99_us", "p99")}
CONSTRAINT_WHY = {
    "trading": "trading sends thousands of messages a second, so a one-in-a-thousand delay recurs every "
    "second and is what sets its worst fills: p99.9 (ASSUMPTION of practice, no public source)",
    "jitter": "high jitter sensitivity: the p99 the --p99-budget rule names",
}


@dataclass(frozen=True)
class LatencyBed:
    """What one small-message measurement depends on (the key of its cache entry)."""

    testbed: Testbed
    nic_ns: float  # added on each host link, both directions (the engine's fabric.nic_latency)
    host_link_ns: float  # host-leaf propagation
    storage_on_fabric: bool = False
    seeds: tuple[int, ...] = LATENCY_SEEDS
    fanout_hosts: int = FANOUT_HOSTS

    @property
    def mixes(self) -> tuple[str, ...]:
        return MIXES if self.storage_on_fabric else MIXES[:2]

    @property
    def window_us(self) -> float:
        """The ideal ring step: the background is on the wire this long in every design."""
        return self.testbed.step_bytes * 8 / self.testbed.link_rate_bps * 1e6


@dataclass(frozen=True)
class Probes:
    """One run's probe flows: (src, dst, size, start_ps, qp) per message, and the sample groups."""

    src: np.ndarray
    dst: np.ndarray
    size: np.ndarray
    start_ps: np.ndarray
    qp: np.ndarray
    reply_qp: np.ndarray
    group: np.ndarray  # request/response: the message's size; fan-out: -(fan-out index + 1)


def pairs_of(tb: Testbed) -> tuple[list[tuple[int, int]], int]:
    """(request/response pairs, the fan-out sender): host i of leaf l with host i of leaf
    l + leaves/2; the storage target (host hosts_per_leaf − 1 of leaf 0) and its partner left out —
    the partner sends the fan-out."""
    h, nl = tb.hosts_per_leaf, tb.leaves
    half, target = nl // 2, h - 1
    pairs = [
        (leaf * h + i, (leaf + half) * h + i)
        for leaf in range(half)
        for i in range(h)
        if leaf * h + i != target
    ]
    return pairs, half * h + target


def fanout_targets(tb: Testbed, sender: int, n: int) -> list[int]:
    """``n`` hosts off the sender's leaf, round-robin over the other leaves (never the storage
    target)."""
    h, nl = tb.hosts_per_leaf, tb.leaves
    own = sender // h
    others = [leaf for leaf in range(nl) if leaf != own]
    hosts = [leaf * h + i for i in range(h) for leaf in others if leaf * h + i != h - 1]
    return hosts[:n]


def _slots(rng: np.random.Generator, n: int, t0_ps: int, window_ps: float) -> np.ndarray:
    """``n`` start times, one uniformly at random inside each of ``n`` equal slots of the window."""
    return (t0_ps + (np.arange(n) + rng.random(n)) * window_ps / n).astype(np.int64)


def probes(bed: LatencyBed, seed: int, t0_ps: int) -> Probes:
    """The requests of one run (pairs, then fan-outs), seeded."""
    tb = bed.testbed
    rng = np.random.default_rng([seed, 25])
    pairs, sender = pairs_of(tb)
    window = bed.window_us * 1e6
    k = PROBES_PER_SIZE * len(SIZES_BYTES)
    cols: dict[str, list] = {x: [] for x in ("src", "dst", "size", "start", "qp", "rqp", "group")}

    def add(src, dst, size, start, qp, rqp, group):
        n = len(start)
        for name, v in zip(cols, (src, dst, size, start, qp, rqp, group), strict=True):
            cols[name].append(np.broadcast_to(np.asarray(v, dtype=np.int64), (n,)))

    for p, (a, b) in enumerate(pairs):
        sizes = np.repeat(SIZES_BYTES, PROBES_PER_SIZE)[rng.permutation(k)]
        add(a, b, sizes, _slots(rng, k, t0_ps, window), 2 * p, 2 * p + 1, sizes)
    qp0 = 2 * len(pairs)
    starts = _slots(rng, FANOUTS_PER_RUN, t0_ps, window)
    for j, dst in enumerate(fanout_targets(tb, sender, bed.fanout_hosts)):
        grp = -(np.arange(FANOUTS_PER_RUN) + 1)
        add(sender, dst, FANOUT_BYTES, starts, qp0 + 2 * j, qp0 + 2 * j + 1, grp)
    c = {name: np.concatenate(v) for name, v in cols.items()}
    return Probes(c["src"], c["dst"], c["size"], c["start"], c["qp"], c["rqp"], c["group"])


def _ids(qp: np.ndarray) -> np.ndarray:
    """Unique flow ids whose source port (id mod 16384) is the QP's: QP_BASE + qp, plus 16384 per
    message already on that QP."""
    nth = np.zeros(len(qp), dtype=np.int64)
    seen: dict[int, int] = {}
    for i, q in enumerate(qp.tolist()):
        nth[i] = seen.get(q, 0)
        seen[q] = nth[i] + 1
    return QP_BASE + qp + SPORTS * nth


def topology_of(bed: LatencyBed, sc):
    """The testbed's leaf-spine with the host links at the design's host-leaf length."""
    from aifabric.topology import from_spec

    topo = from_spec(sc.topology)
    host_link = topo.node_tier[topo.link_a] == 0
    delay = np.where(host_link, round(bed.host_link_ns * 1000), topo.link_delay_ps)
    return replace(topo, link_delay_ps=delay)


def _simulate(bed: LatencyBed, traffic: str | None, seed: int, pr: Probes, reply_ps):
    """One packet-level run: the background of ``traffic`` (None: none), the requests, and a reply
    from each request's receiver starting at ``reply_ps`` (None: no replies). Returns (arrival of each
    request, arrival of each reply) in ps (-1: not arrived)."""
    import warnings

    from aifabric.sim import simulate
    from aifabric.workload.traffic import ROCE_DPORT, FlowColumns

    tb = bed.testbed
    parts = []  # (src, dst, size, start_ps, id) of the background, the requests, the replies
    if traffic is not None:
        bg = _flows(tb, traffic)[0]
        parts.append(tuple(bg[c].to_numpy() for c in ("src", "dst", "size_bytes", "start_ps", "id")))
    nb, n = (len(parts[0][0]) if parts else 0), len(pr.src)
    parts.append((pr.src, pr.dst, pr.size, pr.start_ps, _ids(pr.qp)))
    if reply_ps is not None:
        parts.append((pr.dst, pr.src, pr.size, reply_ps, _ids(pr.reply_qp)))
    cols = [np.concatenate([np.asarray(p[i], dtype=np.int64) for p in parts]) for i in range(5)]
    names = ("src", "dst", "size_bytes", "start_ps", "id")
    flows = FlowColumns({**dict(zip(names, cols, strict=True)), "dport": np.full(len(cols[0]), ROCE_DPORT)})
    sc = _scenario(tb, None, seed)
    sc = sc.model_copy(
        update={"fabric": sc.fabric.model_copy(update={"nic_latency": round(bed.nic_ns * 1000)})}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a probe stuck behind the incast may not finish
        res = simulate(sc, flows=flows, topology=topology_of(bed, sc))
    f = res.flows
    start_ps = np.round(f["start_us"].to_numpy() * 1e6)
    rx = np.where(
        np.isfinite(f["rx_fct_us"].to_numpy()), start_ps + np.round(f["rx_fct_us"].to_numpy() * 1e6), -1
    )
    rx = rx.astype(np.int64)
    return rx[nb : nb + n], (rx[nb + n :] if reply_ps is not None else None)


@dataclass(frozen=True)
class LatencyRun:
    """One (mix, seed) of a measurement (hashable: a worker job)."""

    bed: LatencyBed
    mix: str
    seed: int


@dataclass(frozen=True)
class RunSamples:
    """One run's samples (µs; inf: the reply never arrived) and its bookkeeping."""

    rtt_us: np.ndarray  # per request (pairs, then fan-out legs)
    one_way_us: np.ndarray
    group: np.ndarray
    causality_max_ns: float


def run_latency(run: LatencyRun) -> RunSamples:
    """The two passes of one run (module level: a worker process calls it)."""
    bed = run.bed
    traffic = TRAFFIC_OF.get(run.mix)
    t0 = 0 if run.mix != "job+storage" else round(bed.testbed.ring_start_us * 1e6)
    pr = probes(bed, run.seed, t0)
    arrive1, _ = _simulate(bed, traffic, run.seed, pr, None)
    reply_at = np.where(arrive1 >= 0, arrive1, np.iinfo(np.int64).max // 4)
    arrive2, back = _simulate(bed, traffic, run.seed, pr, reply_at)
    one_way = np.where(arrive2 >= 0, (arrive2 - pr.start_ps) / 1e6, np.inf)
    # the round trip: the request's leg plus the reply's, both of the second pass
    reply_leg = np.where((back >= 0) & (arrive1 >= 0), (back - reply_at) / 1e6, np.inf)
    rtt = one_way + reply_leg
    late = np.where((arrive2 >= 0) & (arrive1 >= 0), arrive2 - arrive1, 0)
    return RunSamples(rtt, one_way, pr.group, float(max(0, late.max(initial=0)) / 1e3))


def kinds(fanout_hosts: int = FANOUT_HOSTS) -> tuple[str, ...]:
    """The sample kinds: one request/response per size, then the fan-out."""
    return (*(f"rr_{s}B" for s in SIZES_BYTES), f"fanout_{FANOUT_BYTES}B_x{fanout_hosts}")


def _by_kind(r: RunSamples, values: np.ndarray, fanout_kind: str) -> dict[str, np.ndarray]:
    out = {f"rr_{s}B": values[r.group == s] for s in SIZES_BYTES}
    legs = r.group < 0
    if legs.any():  # a fan-out completes with its last reply
        g, v = r.group[legs], values[legs]
        idx = np.unique(g, return_inverse=True)[1]
        last = np.full(idx.max() + 1, -np.inf)
        np.maximum.at(last, idx, v)
        out[fanout_kind] = last
    return out


def _quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Inverted-CDF quantile of weighted samples (no interpolation; inf where a reply never came)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order]) / weights.sum()
    return float(values[order][min(len(values) - 1, int(np.searchsorted(cum, q - 1e-12)))])


@dataclass(frozen=True)
class SmallMessageLatency:
    """The measurement: round-trip samples (µs) per mix and kind, request one-way samples per mix and
    kind (request/response only), and the run bookkeeping."""

    bed: LatencyBed
    rtt_us: dict[str, dict[str, np.ndarray]]
    one_way_us: dict[str, dict[str, np.ndarray]]
    causality_max_ns: float
    runs: int
    wall_s: float

    @property
    def kinds(self) -> tuple[str, ...]:
        return kinds(self.bed.fanout_hosts)

    def share(self, congestion_share: float) -> float:
        """The share of samples from the storage mix: the congestion share with storage on the
        fabric, 0 without (the incast never enters)."""
        return float(congestion_share) if self.bed.storage_on_fabric else 0.0

    def quantile(self, kind: str, q: float, congestion_share: float = 0.25, mix: str | None = None) -> float:
        """The ``q`` round-trip quantile of ``kind`` under the job's background (the ``job`` mix,
        and ``job+storage`` weighing ``congestion_share`` where storage is on the fabric), or of one
        ``mix``."""
        if mix is not None:
            v = self.rtt_us[mix][kind]
            return _quantile(v, np.ones(len(v)), q)
        s = self.share(congestion_share)
        parts = [(self.rtt_us["job"][kind], 1 - s)]
        if s > 0:
            parts.append((self.rtt_us["job+storage"][kind], s))
        v = np.concatenate([p for p, _ in parts])
        w = np.concatenate([np.full(len(p), wt / len(p)) for p, wt in parts])
        return _quantile(v, w, q)

    def percentiles(self, kind: str, congestion_share: float = 0.25, mix: str | None = None) -> dict:
        return {k: _finite(self.quantile(kind, q, congestion_share, mix)) for k, q in QUANTILES.items()}

    def to_dict(self, congestion_share: float = 0.25) -> dict:
        """JSON-ready: the percentiles under the job's background and per mix, the closed form of
        the idle fabric, the sample counts (an unanswered request is counted, its time as null)."""
        bed = self.bed
        return {
            "round_trip_us": {k: self.percentiles(k, congestion_share) for k in self.kinds},
            "by_mix": {m: {k: self.percentiles(k, mix=m) for k in self.kinds} for m in bed.mixes},
            "one_way_p50_us": {
                k: _finite(float(np.median(self.one_way_us["job"][k])))
                for k in self.kinds[: len(SIZES_BYTES)]
            },
            "idle_round_trip_us": {f"rr_{s}B": 2 * idle_one_way_ns(bed, s) / 1e3 for s in SIZES_BYTES},
            "samples": {m: {k: len(v) for k, v in per.items()} for m, per in self.rtt_us.items()},
            "unanswered": {
                m: {k: int(np.isinf(v).sum()) for k, v in per.items()} for m, per in self.rtt_us.items()
            },
            "storage_on_fabric": bed.storage_on_fabric,
            "congestion_share": self.share(congestion_share),
            "background": background_words(bed),
            "seeds": len(bed.seeds),
            "runs": self.runs,
            "window_us": bed.window_us,
            "causality_max_ns": self.causality_max_ns,
            "wall_s": self.wall_s,
        }


def _finite(x: float) -> float | None:
    return None if not np.isfinite(x) else x


def background_words(bed: LatencyBed) -> str:
    tb = bed.testbed
    words = (
        f"the job's ring step (every ring host sends {tb.step_bytes / 2**20:g} MiB to the next leaf); "
        f"probes over its first {bed.window_us:.1f} us"
    )
    if bed.storage_on_fabric:
        return words + (
            f"; storage on the compute fabric: the congestion share of the samples {tb.ring_start_us:g} us "
            f"into a {tb.incast_senders}-to-1 storage incast of {tb.incast_bytes / 2**20:g} MiB per sender"
        )
    return words + "; storage off the compute fabric: no storage incast"


def header_bytes(tb: Testbed) -> int:
    """Bytes on the wire besides the payload, as the engine counts them: the technology's header,
    plus HPCC's INT stack on RoCE with HPCC (aifabric.sim.engine)."""
    from aifabric.sim.engine import hpcc_int_bytes

    return int(_scenario(tb, None, 1).fabric.header_bytes + hpcc_int_bytes(_scenario(tb, None, 1).fabric))


def idle_one_way_ns(bed: LatencyBed, size_bytes: int) -> float:
    """The closed form of an idle fabric's one-way latency between two leaves (one packet, at most
    an MTU): two NIC latencies + three switch hops + the propagation of two host links and two
    leaf-spine links + the serialisation on each of the four links (the engine stores and forwards)."""
    tb = bed.testbed
    ser = (size_bytes + header_bytes(tb)) * 8 / tb.link_rate_bps * 1e9
    return 2 * bed.nic_ns + 3 * tb.switch_latency_ns + 2 * bed.host_link_ns + 2 * tb.link_delay_ns + 4 * ser


def _assemble(
    bed: LatencyBed, got: dict[LatencyRun, RunSamples], wall_s: float, base: SmallMessageLatency | None
) -> SmallMessageLatency:
    fk = kinds(bed.fanout_hosts)[-1]
    rtt = dict(base.rtt_us) if base else {}
    one = dict(base.one_way_us) if base else {}
    worst = base.causality_max_ns if base else 0.0
    for mix in (m for m in bed.mixes if m not in rtt):
        per = [got[LatencyRun(bed, mix, s)] for s in bed.seeds]
        for out, field in ((rtt, "rtt_us"), (one, "one_way_us")):
            split = [_by_kind(r, getattr(r, field), fk) for r in per]
            out[mix] = {k: np.concatenate([d[k] for d in split]) for k in kinds(bed.fanout_hosts)}
        worst = max([worst] + [r.causality_max_ns for r in per])
    runs = len(got) + (base.runs if base else 0)
    return SmallMessageLatency(bed, rtt, one, worst, runs, wall_s + (base.wall_s if base else 0.0))


def small_message_latency(
    tb: Testbed,
    nic_ns: float | None = None,
    host_link_m: float | None = None,
    storage_on_fabric: bool = False,
    seeds: tuple[int, ...] = LATENCY_SEEDS,
    fanout_hosts: int = FANOUT_HOSTS,
    progress=None,
) -> SmallMessageLatency:
    """The small-message measurement on ``tb`` (see the module docstring): NIC latency ``nic_ns``
    (default: the mean of defaults.yaml ``latency.nic_tx`` and ``latency.nic_rx``), host links of
    ``host_link_m`` metres (default: the plan's host-leaf length), the storage incast only with
    ``storage_on_fabric``, a fan-out to ``fanout_hosts`` hosts (1 to the hosts off the sender's leaf). Cached in the process and on disk (:mod:`aifabric.stages.cache`)."""
    if nic_ns is None:
        nic_ns = nic_latency_ns()
    if host_link_m is None:
        from aifabric.design.cost import DEFAULT_LENGTHS_M

        host_link_m = DEFAULT_LENGTHS_M["host-leaf"]
    most = len(fanout_targets(tb, pairs_of(tb)[1], tb.leaves * tb.hosts_per_leaf))
    if not 1 <= int(fanout_hosts) <= most:
        from aifabric.errors import InputError

        raise InputError(
            "fan-out out of range", field="fanout_hosts", value=fanout_hosts, allowed=f"1..{most}"
        )
    bed = LatencyBed(
        tb,
        float(nic_ns),
        round(FIBRE_NS_PER_M * float(host_link_m), 3),
        bool(storage_on_fabric),
        tuple(seeds),
        int(fanout_hosts),
    )
    return _measure(bed, progress)


def _measure(bed: LatencyBed, progress) -> SmallMessageLatency:
    import time

    from aifabric.stages.cache import disk_cached
    from aifabric.stages.workers import run_all

    def compute() -> SmallMessageLatency:
        t0 = time.perf_counter()
        # storage on: the quiet and job mixes are the storage-off measurement's (measured once)
        base = _measure(replace(bed, storage_on_fabric=False), progress) if bed.storage_on_fabric else None
        mixes = ("job+storage",) if base is not None else bed.mixes
        runs = [LatencyRun(bed, m, s) for m in mixes for s in bed.seeds]
        got = run_all(run_latency, runs, progress, "packet-level small-message latency runs", 256 * 2**20)
        return _assemble(bed, got, time.perf_counter() - t0, base)

    hit = _MEMO.get(bed)
    if hit is None:
        hit = _MEMO[bed] = disk_cached("small-message-latency", bed, compute)
    return hit


def nic_latency_ns() -> float:
    """The NIC latency the engine adds on each host link: defaults.yaml latency.nic_tx and
    latency.nic_rx (550 ns each, S65, low); their mean where they differ (one value per link)."""
    from aifabric.hardware.catalog import default_value

    return (float(default_value("latency.nic_tx")) + float(default_value("latency.nic_rx"))) / 2


GRADE = {"high": "H", "medium": "M", "low": "L", "estimate": "estimate (no source)"}


def path_sources(fd, catalog, bed: LatencyBed) -> dict:
    """The per-hop values the measurement used, each with its source and grade (README "Latency
    values graded by source": H primary, M indirect, L reseller / blog / single claim)."""
    from aifabric.hardware.catalog import default_leaf

    sw = catalog.switches.get(fd.switch_id) if catalog is not None else None
    if sw is not None and sw.latency_ns:
        sw_src, sw_conf = sw.latency_source, sw.latency_confidence or sw.confidence
        sw_from = f"catalog latency_ns of {fd.switch_id}"
    else:
        leaf = "ib_switch_hop" if fd.technology == "infiniband" else "ethernet_switch_hop"
        d = default_leaf(f"latency.{leaf}")
        sw_src, sw_conf, sw_from = d.get("source"), d["confidence"], f"defaults.yaml latency.{leaf}"
    nic = default_leaf("latency.nic_tx")
    fibre = default_leaf("latency.fiber_delay_per_m")
    tb = bed.testbed
    return {
        "switch_hops": 3,
        "switch_hop_ns": tb.switch_latency_ns,
        "switch_hop": {"from": sw_from, "source": sw_src, "grade": GRADE.get(sw_conf, sw_conf)},
        "nic_ns": bed.nic_ns,
        "nic": {
            "from": "defaults.yaml latency.nic_tx / latency.nic_rx, on each host link",
            "source": nic.get("source"),
            "grade": GRADE[nic["confidence"]],
        },
        "host_link_ns": bed.host_link_ns,
        "leaf_spine_link_ns": tb.link_delay_ns,
        "propagation": {
            "from": "defaults.yaml latency.fiber_delay_per_m x the plan's lengths",
            "source": fibre.get("source"),
            "grade": GRADE[fibre["confidence"]],
        },
        "header_bytes": header_bytes(tb),
        "link_rate_gbps": tb.link_rate_bps / 1e9,
        "forwarding": "store-and-forward on every link (the packet engine): a cut-through switch "
        "would save one serialisation per switch",
    }


def constraint_quantile(workload: str | None) -> tuple[str, str, str]:
    """(result key, label, why) of the quantile the tail constraint compares."""
    which = "trading" if workload == "trading" else "jitter"
    key, label = CONSTRAINT_QUANTILE[which]
    return key, label, CONSTRAINT_WHY[which]


def design_tails(
    evidence: dict,
    risk,
    design,
    catalog,
    storage_on_fabric: bool,
    congestion_share: float,
    workload: str | None,
) -> dict[str, dict[str, float]]:
    """Each design's small-message tails under its job's background: ``{design: {kind: µs}}`` at
    the constraint's quantile, measured on the design's risk testbed (designs without one are left
    out), with the measurement written to ``evidence[design].small_message``. A design with its own
    storage network (the hybrid's front end) never carries the incast."""
    qkey, label, why = constraint_quantile(workload)
    out = {}
    for k, ev in evidence.items():
        fr = risk.fabric(k) if risk is not None else None
        fd = next((f for f in getattr(design, "fabrics", ()) if f.key == k), None)
        if fr is None or fr.testbed is None or fd is None:
            continue
        own_storage = bool(getattr(fd, "front_end", None))
        m = small_message_latency(
            fr.testbed.testbed,
            host_link_m=fd.lengths_m.get("host-leaf"),
            storage_on_fabric=storage_on_fabric and not own_storage,
        )
        out[k] = {kind: m.quantile(kind, QUANTILES[qkey], congestion_share) for kind in m.kinds}
        ev.small_message = {
            **m.to_dict(congestion_share),
            "path": path_sources(fd, catalog, m.bed),
            "constraint": {
                "quantile": label,
                "why": why,
                "round_trip_us": {x: _finite(v) for x, v in out[k].items()},
            },
        }
    return out


def judge(tails: dict[str, dict[str, float]], budget: float) -> dict[str, tuple[str, float, float]]:
    """The designs the constraint rules out: ``{design: (kind, its value, the best design's)}`` for
    each design more than ``budget`` above the best design at some message kind (the kind where it is
    furthest above)."""
    names = list(next(iter(tails.values()))) if tails else []
    best = {kind: min(t[kind] for t in tails.values()) for kind in names}

    def ratio(t: dict, kind: str) -> float:  # an unanswered request (inf) against a finite best is inf
        return 1.0 if t[kind] == best[kind] else t[kind] / best[kind]

    out = {}
    for k, t in tails.items():
        kind = max(names, key=lambda x: ratio(t, x))
        if t[kind] > best[kind] * (1 + budget):
            out[k] = (kind, t[kind], best[kind])
    return out


def idle_evidence(small_message: dict | None) -> dict[str, str]:
    """A reason's evidence: the idle fabric's 64 B round trip and the per-hop figures behind it,
    with their sources and grades."""
    if not small_message:
        return {}
    p = small_message["path"]
    hop, nic = p["switch_hop"], p["nic"]
    return {
        "idle_rr_64B": f"{small_message['idle_round_trip_us']['rr_64B']:,.2f} us",
        "switch_hop": f"{p['switch_hop_ns']:g} ns x {p['switch_hops']} ({hop['source']}, {hop['grade']})",
        "nic": f"{p['nic_ns']:g} ns per host link ({nic['source']}, {nic['grade']})",
    }
