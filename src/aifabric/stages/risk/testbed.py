"""The risk testbed (part of the *measure* stage, used by *risk*): every failure and misconfiguration
scenario of the library, simulated packet by packet on a pod derived from the planned fabric.

The testbed
-----------
:class:`Testbed` — a two-tier leaf-spine pod of the planned fabric: its technology, NIC rate, switch
hop latency, fibre length, routing (adaptive / ECMP hashing / InfiniBand static linear forwarding)
and congestion control (the *baseline*: HPCC, tuned DCQCN or PFC only on RoCE; none or IB
congestion control on InfiniBand). **Scaling rule** (:func:`testbed_for`): ``hosts_per_leaf`` hosts
per leaf and ``hosts_per_leaf / oversubscription`` spines keep the planned leaf's down/up ratio;
the shared buffer per switch is the planned switch's buffer *per port* times the testbed leaf's
ports (a 16-port slice of a 64-port switch gets a quarter of its buffer), so PFC dynamic thresholds,
ECN points and credit buffers see the planned per-port headroom. Three-tier plans are measured on
their two lower tiers (the pod); a plan of **one switch** is measured on one switch (``tiers = 1``:
a star of ``leaves × hosts_per_leaf`` hosts, the same host numbering, the ring and the incast
unchanged; a "leaf" is then a group of hosts on that switch). On one switch there is no path to
choose and no switch-to-switch link: adaptive routing off, a failed fabric link and a second switch
batch with other PFC thresholds do not exist there (:meth:`Trigger.applies`). :func:`scaling_check` runs scenarios at two pod sizes; the
tolerance is :data:`SCALING_TOLERANCE`, and the larger slowdown is kept where they disagree.

Traffic: **quiet** — one ring step of the data-parallel all-reduce (every host sends ``step_bytes``
to the same-index host of the next leaf); **congested** — the same ring step ``ring_start_us`` into a
sustained ``incast_senders``-to-1 incast (storage / checkpoint traffic; the target, host
``hosts_per_leaf − 1`` of leaf 0, takes no part in the ring). The step time is the slowest ring flow
(a synchronous collective waits for its last rank); a ring that does not finish is a hang.

The library
-----------
:data:`LIBRARY` — one :class:`Trigger` per scenario: which fabrics it applies to, what it breaks, how
it is modelled, the traffic it runs under and the change it makes to the baseline fabric. Every
scenario can be written out as an ``aifabric simulate`` file (:func:`~aifabric.stages.risk.scenario_files.write_scenarios`, shipped in
``scenarios/risk/``). The *risk* stage turns the slowdowns into expected loss
(:mod:`aifabric.stages.risk.assess`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from aifabric.stages.cache import Memo
from aifabric.stages.risk.library import (  # noqa: F401  (re-exported: the library's names live here too)
    _BASELINE_WORDS,
    ECN_CUMULUS,
    ECN_CUMULUS_KMIN,
    ECN_SONIC,
    ECN_TUNED,
    FECN_IB,
    HORIZON_US,
    LIBRARY,
    MISCONFIGS,
    MISMATCH_XOFF_BYTES,
    TUNED_ALPHA,
    Trigger,
    perturb,
    target_name,
)
from aifabric.stages.risk.traffic import (  # noqa: E402, F401  (re-exported)
    THREE_TIER_K,
    _flows,
    _placed_rings,
)

SMALL_JITTER_DUTY = 0.02  # ASSUMPTION: "small network jitter" = PAUSE 2 % of the time (2 µs every 100 µs)
JITTER_SWEEP_DUTY = (0.01, 0.02, 0.05)
JITTER_SHARES = (1 / 32, 1 / 4)  # share of the ring's receiving NICs that jitter (one NIC, a quarter)
JITTER_BURST_US = (2.0, 20.0)  # PAUSE burst length: well below, and a fifth of, a ring step
CONGESTION_SHARE = 0.25  # ASSUMPTION (no public source): share of communication time that overlaps congestion
CONGESTION_SHARE_BASIS = (
    "assumption (no public source): 25 % of communication time overlaps a congestion event "
    "(storage / checkpoint incast, all-to-all hot spot); the rest runs on a quiet fabric"
)
# two pod sizes agree when their slowdowns differ by at most 0.10 (10 points) or 25 % of the larger
SCALING_TOLERANCE = 0.10
SCALING_TOLERANCE_REL = 0.25
TRAFFIC = ("quiet", "congested")
SPECTRUM4_BUFFER_BYTES = (
    128 * 10**6
)  # hardware-facts: 128 MB vs 160 MB conflicting; conservative 128 MB (S31)
SPECTRUM4_PORTS = 64  # SN5600: 64 × 800G ports (the buffer is shared by them)
BASELINES = {
    "roce": ("dcqcn-vendor", "hpcc", "dcqcn", "pfc-only"),
    "infiniband": ("none", "ib-cc"),
}


@dataclass(frozen=True)
class Testbed:
    """The pod the scenarios run on (see the module docstring)."""

    link_rate_bps: int = 400 * 10**9
    switch_latency_ns: float = 600.0
    link_delay_ns: float = 200.0  # 40 m leaf-spine class fibre × 5.05 ns/m (the plan's default length)
    buffer_bytes: int = SPECTRUM4_BUFFER_BYTES
    routing: str = "ecmp"  # ecmp | adaptive | static (InfiniBand linear forwarding)
    leaves: int = 4
    hosts_per_leaf: int = 8
    spines: int = 8
    step_bytes: int = 4 * 2**20
    incast_senders: int = 6
    incast_bytes: int = 32 * 2**20
    ring_start_us: float = (
        1000.0  # congested traffic: the ring step starts once the incast is in steady state
    )
    storm_pause_us: float = 2.0
    storm_period_us: float = 100.0
    seeds: tuple[int, ...] = (1, 2)
    technology: str = "roce"
    baseline: str = "hpcc"  # roce: dcqcn-vendor | hpcc | dcqcn | pfc-only; infiniband: none | ib-cc
    tiers: int = 2  # of the planned fabric (the pod is its two lower tiers)
    watchdog_us: float = 50.0  # PFC watchdog / HOQ lifetime, compressed to the testbed's time scale
    slow_drain: float = 0.5  # a slow receiver drains at this share of its line rate
    straggler_drain: float = 0.75  # a straggler NIC receives at this share of its line rate
    # where the ring's hosts sit in the pod (aifabric.workload.placement): ideal = the ring above;
    # fragmented / shared = the ring over random free hosts (occupancy held by other jobs), in random
    # order, seeded by placement_seed; shared adds the other jobs' own ring steps at the same moment
    placement: str = "ideal"
    occupancy: float = 0.5
    background_jobs: int = 4
    placement_seed: int = 1

    @property
    def has_cc(self) -> bool:
        return self.baseline not in ("pfc-only", "none")

    @property
    def single_switch(self) -> bool:
        return self.tiers == 1

    def _topology_words(self) -> str:
        links = f"{self.link_rate_bps / 1e9:g}G links, {self.link_delay_ns:g} ns per link"
        if self.single_switch:
            return f"one switch, {self.leaves * self.hosts_per_leaf} hosts (the plan is one switch), {links}"
        over = self.hosts_per_leaf / self.spines
        return (
            f"leaf-spine {self.leaves} leaves x {self.hosts_per_leaf} hosts, {self.spines} spines "
            f"(oversubscription {over:g}:1), {links}"
            + (f"; the pod of a {self.tiers}-tier plan" if self.tiers > 2 else "")
        )

    def describe(self) -> dict[str, str]:
        return {
            "topology": self._topology_words(),
            "switch": f"{self.switch_latency_ns:g} ns hop, "
            + (
                "credit flow control on per-VL receive buffers (15 packets or a credit round trip: a "
                "placeholder, no public Quantum-2 figure)"
                if self.technology == "infiniband"
                else f"{self.buffer_bytes / 1e6:g} MB shared buffer (the planned switch's buffer per port x "
                "the pod leaf's ports)"
            ),
            "technology": self.technology,
            "baseline": _BASELINE_WORDS[self.baseline],
            "routing": self.routing,
            "quiet traffic": f"one ring step: every host sends {self.step_bytes / 2**20:g} MiB to the same-index "
            "host of the next leaf",
            "congested traffic": f"the same ring step {self.ring_start_us:g} us into a {self.incast_senders}-to-1 "
            f"incast of {self.incast_bytes / 2**20:g} MiB per sender (target outside the ring)",
            "seeds": ", ".join(str(s) for s in self.seeds),
            **({"placement": self._placement_words()} if self.placement != "ideal" else {}),
        }

    def _placement_words(self) -> str:
        words = (
            f"{self.placement}: the ring over the pod's free hosts ({self.occupancy:g} of them held by other "
            f"jobs, drawn with seed {self.placement_seed}), in random order"
        )
        if self.placement == "shared":
            words += (
                f"; {self.background_jobs} other jobs run their own ring steps on the rest at the same moment"
            )
        return words


def scenario_dict(tb: Testbed, sid: str | None, seed: int, duty=None, share=None, traffic=None) -> dict:
    """The ``aifabric simulate`` scenario (without its workload) for one run."""
    rate, delay = f"{tb.link_rate_bps}bps", f"{tb.link_delay_ns:g}ns"
    topo = {
        "kind": "leaf-spine",
        "leaves": tb.leaves,
        "spines": tb.spines,
        "hosts_per_leaf": tb.hosts_per_leaf,
        "link_rate": rate,
        "link_delay": delay,
    }
    if traffic == "three-tier":
        topo = {"kind": "fat-tree", "k": THREE_TIER_K, "link_rate": rate, "link_delay": delay}
    elif tb.single_switch:
        topo = {
            "kind": "star",
            "hosts": tb.leaves * tb.hosts_per_leaf,
            "link_rate": rate,
            "link_delay": delay,
        }
    return {
        "name": f"risk-{tb.technology}-{sid or 'baseline'}",
        "seed": seed,
        "topology": topo,
        "fabric": perturb(tb, sid, duty, share),
        "sim": {"until": f"{HORIZON_US:g}us", "progress": False},
    }


def _scenario(tb: Testbed, sid: str | None, seed: int, duty=None, share=None, traffic=None):
    from aifabric.scenario import scenario_from_dict

    return scenario_from_dict(scenario_dict(tb, sid, seed, duty, share, traffic))


@dataclass
class RunStats:
    step_us: float  # the slowest ring flow; inf when the ring did not finish (a hang)
    pause_frames: int
    drops: int
    ecn_marks: int
    wall_s: float
    incast_us: float = float("nan")  # congested mix: the slowest incast flow (nan: not finished)
    ideal_us: float = float("nan")  # the slowest ring flow alone on the fabric (the engine's ideal_fct_us)


def run_testbed(tb: Testbed, sid: str | None, traffic: str, seed: int, duty=None, share=None) -> RunStats:
    """One packet-level run: the ring step's completion time (slowest ring flow) and counters."""
    import warnings

    from aifabric.sim import simulate
    from aifabric.topology import from_spec

    sc = _scenario(tb, sid, seed, duty, share, traffic)
    flows, n_ring = _flows(tb, traffic)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a stuck receiver leaves flows unfinished on purpose
        res = simulate(sc, flows=flows, topology=from_spec(sc.topology))
    f = res.flows
    done = f["completed"].to_numpy()
    fct = f["fct_us"].to_numpy()
    s = res.summary
    step = float(fct[:n_ring].max()) if done[:n_ring].all() else float("inf")
    end = flows.attrs.get("incast_end", len(fct))  # shared placement: other jobs' flows follow the incast
    inc = float(fct[n_ring:end].max()) if end > n_ring and done[n_ring:end].all() else float("nan")
    ideal = float(f["ideal_fct_us"].to_numpy()[:n_ring].max()) if n_ring else float("nan")
    return RunStats(
        step,
        int(s["pause_frames"]),
        int(s["drops"]),
        int(s["ecn_marks"]),
        float(res.engine["wall_s"]),
        inc,
        ideal,
    )


@dataclass
class RiskMeasurement:
    """Per traffic mix and scenario: the ring-step time and its slowdown against the baseline."""

    testbed: Testbed
    step_us: dict[str, dict[str, float]]  # traffic -> "baseline" or scenario -> mean step time
    comm_slowdown: dict[str, dict[str, float]]  # traffic -> scenario -> mean(step / baseline step) − 1
    counters: dict[str, dict[str, dict[str, int]]]  # traffic -> config -> pause frames / drops / ECN marks
    jitter_sweep: list[dict] = field(default_factory=list)  # quiet: duty × share of links -> slowdown
    runs: int = 0
    wall_s: float = 0.0
    incast_us: dict[str, float] = field(default_factory=dict)  # config -> the incast's completion (congested)
    not_applicable: dict[str, str] = field(default_factory=dict)  # scenario -> why it is not measured
    ideal_us: dict[str, float] = field(default_factory=dict)  # traffic -> the ring step alone on the fabric

    def scenario_slowdown(self, sid: str, congestion_share: float = CONGESTION_SHARE) -> float:
        """The communication slowdown a scenario causes while it is present: time-averaged over the
        two traffic mixes where it runs under both, else the one it needs; gains count as 0."""
        if sid == "storage-incast":
            return max(0.0, self.comm_slowdown["congested"]["storage-incast"])
        if sid in self.comm_slowdown.get("three-tier", {}):
            return max(0.0, self.comm_slowdown["three-tier"][sid])
        q = self.comm_slowdown["quiet"].get(sid)
        c = self.comm_slowdown["congested"].get(sid)
        if q is not None and c is not None:
            return congestion_share * max(0.0, c) + (1 - congestion_share) * max(0.0, q)
        return max(0.0, q if q is not None else c)

    blended = scenario_slowdown  # the earlier name

    @property
    def measured(self) -> list[str]:
        return [s for s in LIBRARY if any(s in per for per in self.comm_slowdown.values())]

    def to_dict(self) -> dict:
        """JSON-ready (a hang, ∞, is written as None)."""
        return {
            "testbed": self.testbed.describe(),
            "step_us": _no_inf(self.step_us),
            "comm_slowdown": _no_inf(self.comm_slowdown),
            "counters": self.counters,
            "jitter_sweep": [_no_inf(r) for r in self.jitter_sweep],
            "runs": self.runs,
            "wall_s": self.wall_s,
            "incast_us": self.incast_us,
            "not_applicable": self.not_applicable,
            "ideal_step_us": self.ideal_us,
            "comm_slowdown_is": "extra step time over the baseline, in units of the ideal step (t - t_base) / t_ideal",
        }


def _no_inf(d: dict) -> dict:
    return {
        k: _no_inf(v) if isinstance(v, dict) else (None if v == float("inf") else v) for k, v in d.items()
    }


def _rel(t: np.ndarray, base: np.ndarray, ideal: float) -> float:
    """Mean over seeds of the time a scenario adds to the baseline step, in units of the fabric's
    own ideal step (the ring flow alone on the fabric, same placement): (t − t_baseline) / t_ideal
    (inf for a hang). Both fabrics' slowdowns are measured against the same yardstick, not against
    a baseline already slowed by hashing collisions (issue 25)."""
    return float(np.mean((t - base) / ideal))


@dataclass(frozen=True)
class Run:
    """One packet-level run of :func:`run_testbed` (hashable: the key of its result)."""

    tb: Testbed
    sid: str | None
    traffic: str
    seed: int
    duty: float | None = None
    share: float | None = None


def _run(run: Run) -> RunStats:
    """:func:`run_testbed` of one :class:`Run` (module level: a worker process calls it)."""
    return run_testbed(run.tb, run.sid, run.traffic, run.seed, run.duty, run.share)


_PLACEHOLDER = RunStats(1.0, 0, 0, 0, 0.0, 1.0, 1.0)  # stands in for a run while listing the runs
# this process's measurements, the 128 most recent (the disk cache spans runs; a compare stores ~2)
_MEMO = Memo(maxsize=128)


def runs_of(tb: Testbed, jitter_sweep: bool = True, only: tuple[str, ...] | None = None) -> list[Run]:
    """The runs a measurement needs, in the order a serial measurement makes them."""
    runs: list[Run] = []
    _measure_testbed(tb, jitter_sweep, only, lambda r: runs.append(r) or _PLACEHOLDER)
    return runs


def measured_of(tb: Testbed, jitter_sweep: bool = True, only: tuple[str, ...] | None = None) -> list[str]:
    """The scenarios a measurement will report (known before any run: applicability is static)."""
    return _measure_testbed(tb, jitter_sweep, only, lambda r: _PLACEHOLDER).measured


def measure_testbeds(requests, progress=None) -> list[RiskMeasurement]:
    """Each request ``(testbed, jitter_sweep, only)`` from this process's memo or the disk cache
    (:mod:`aifabric.stages.cache`) where present; the runs of all the others pooled, de-duplicated
    (a run two requests share is simulated once) and made in parallel worker processes
    (:mod:`aifabric.stages.workers`). Results are bit-identical to a serial measurement."""
    from aifabric.sim.engine import estimate_bytes
    from aifabric.stages import cache
    from aifabric.stages.workers import run_all

    reqs = [(tb, bool(js), None if only is None else tuple(only)) for tb, js, only in requests]
    todo, got = [], {}
    for req in dict.fromkeys(reqs):
        hit = _MEMO.get(req) or cache.load("testbed", req)
        if hit is None:
            todo.append(req)
        else:
            _MEMO[req] = got[req] = hit
    if todo:
        runs = [r for req in todo for r in runs_of(*req)]
        # the memory guard's count per worker: the packet engine's estimate for the largest run
        # (flows of the mix; links of the pod or of the k = 8 fat-tree, an upper bound)
        est = max(estimate_bytes(len(_flows(r.tb, r.traffic)[0]), 3 * THREE_TIER_K**3, 8) for r in runs)
        stats = run_all(_run, runs, progress, "packet-level risk testbed runs", est)
        for req in todo:
            _MEMO[req] = got[req] = _measure_testbed(*req, stats.__getitem__)
            cache.store("testbed", req, got[req])
    return [got[req] for req in reqs]


def measure_testbed(
    tb: Testbed, jitter_sweep: bool = True, only: tuple[str, ...] | None = None, progress=None
) -> RiskMeasurement:
    """Run the baseline and every applicable scenario (or ``only`` these) over ``tb.seeds``
    (:func:`measure_testbeds` of one request: cached in the process and on disk, runs in parallel)."""
    return measure_testbeds([(tb, jitter_sweep, only)], progress)[0]


def _measure_testbed(
    tb: Testbed, jitter_sweep: bool = True, only: tuple[str, ...] | None = None, get=_run
) -> RiskMeasurement:
    """The measurement assembled from its runs, in a fixed order; ``get(run)`` gives a run's stats."""
    done: list[RunStats] = []

    def over_seeds(sid, traffic, duty=None, share=None) -> list[RunStats]:
        rs = [get(Run(tb, sid, traffic, s, duty, share)) for s in tb.seeds]
        done.extend(rs)
        return rs

    wanted = [s for s in LIBRARY if only is None or s in only]
    mixes = [*TRAFFIC] + [
        t
        for t in ("three-tier",)
        if any(t in LIBRARY[s].traffic and LIBRARY[s].applies(tb)[0] for s in wanted)
    ]
    step: dict = {t: {} for t in mixes}
    slow: dict = {t: {} for t in mixes}
    counters: dict = {t: {} for t in mixes}
    base_of: dict[str, np.ndarray] = {}
    ideal_of: dict[str, float] = {}
    incast: dict[str, float] = {}
    skip: dict[str, str] = {}
    for traffic in mixes:
        for sid in (None, *wanted):
            key = sid or "baseline"
            if sid is not None:
                ok, why = LIBRARY[sid].applies(tb)
                if not ok:
                    skip[sid] = why
                    continue
                if traffic not in LIBRARY[sid].traffic:
                    continue
            if sid == "storage-incast":  # the congested baseline against the quiet one
                t = base_of["congested"]
                step[traffic][key] = float(t.mean())
                slow[traffic][key] = _rel(t, base_of["quiet"], ideal_of["quiet"])
                continue
            rs = over_seeds(sid, traffic)
            t = np.array([r.step_us for r in rs])
            step[traffic][key] = float(t.mean())
            counters[traffic][key] = {
                "pause_frames": int(round(np.mean([r.pause_frames for r in rs]))),
                "drops": int(sum(r.drops for r in rs)),
                "ecn_marks": int(round(np.mean([r.ecn_marks for r in rs]))),
            }
            if sid is None:
                base_of[traffic] = t
                ideal_of[traffic] = float(min(r.ideal_us for r in rs))
            else:
                slow[traffic][key] = _rel(t, base_of[traffic], ideal_of[traffic])
            if traffic == "congested":
                incast[key] = float(np.mean([r.incast_us for r in rs]))
    sweep = []
    if jitter_sweep:  # the first seed only: 18 runs
        base = base_of["quiet"][:1]
        for burst in JITTER_BURST_US:
            jt = replace(tb, storm_pause_us=burst)
            for share in JITTER_SHARES:
                for duty in JITTER_SWEEP_DUTY:
                    r = get(Run(jt, "jitter", "quiet", tb.seeds[0], duty, share))
                    done.append(r)
                    sweep.append(
                        {
                            "burst_us": burst,
                            "duty": duty,
                            "share": share,
                            "comm_slowdown": _rel(np.array([r.step_us]), base, ideal_of["quiet"]),
                        }
                    )
    return RiskMeasurement(
        tb, step, slow, counters, sweep, len(done), sum(r.wall_s for r in done), incast, skip, ideal_of
    )


def testbed_for(
    link_rate_gbps: float,
    buffer_bytes: int | None,
    hop_ns: float,
    leaf_spine_m: float,
    routing: str,
    *,
    technology: str = "roce",
    baseline: str | None = None,
    radix: int | None = None,
    oversubscription: float = 1.0,
    tiers: int = 2,
    hosts_per_leaf: int = 8,
    leaves: int = 4,
) -> Testbed:
    """The testbed for one planned fabric (the scaling rule of the module docstring): its NIC rate,
    switch hop latency, buffer per port, leaf-spine fibre length, routing, oversubscription and
    congestion control."""
    buf = buffer_bytes or SPECTRUM4_BUFFER_BYTES
    ports = radix or SPECTRUM4_PORTS
    spines = max(1, round(hosts_per_leaf / max(1.0, oversubscription)))
    # the ports of one testbed switch: a leaf's hosts and uplinks, or every host of a one-switch plan
    pod_ports = leaves * hosts_per_leaf if tiers == 1 else hosts_per_leaf + spines
    # the testbed's "adaptive" is per packet (granularity packet): a design's adaptive-packet (or
    # old adaptive), and a scheduled fabric's spray (README "Scheduled fabric": why not its own mode)
    if technology == "infiniband":
        route = "adaptive" if routing in ("adaptive", "adaptive-packet") else "static"
        base = baseline or "none"
    else:
        route = "adaptive" if routing in ("adaptive", "adaptive-packet", "scheduled") else "ecmp"
        base = baseline or "hpcc"
    return Testbed(
        link_rate_bps=int(link_rate_gbps * 1e9),
        switch_latency_ns=float(hop_ns),
        link_delay_ns=round(5.05 * float(leaf_spine_m), 3),
        buffer_bytes=int(buf * min(1.0, pod_ports / ports)),
        routing=route,
        seeds=(1, 2) if route == "ecmp" and tiers > 1 else (1,),  # only hashing depends on the seed
        leaves=leaves,
        hosts_per_leaf=hosts_per_leaf,
        spines=spines,
        technology=technology,
        baseline=base,
        tiers=tiers,
    )


def placed_testbed(tb: Testbed, placement) -> Testbed:
    """``tb`` with its ring placed as the job is (``placement``: an
    :class:`aifabric.workload.placement.Placement`; ideal or None leaves it as it is)."""
    if placement is None or placement.kind == "ideal":
        return tb
    jobs = max(1, len(placement.background))
    return replace(
        tb,
        placement=placement.kind,
        occupancy=placement.occupancy,
        background_jobs=jobs,
        placement_seed=placement.seed,
    )


def scaling_requests(tb: Testbed, scenarios: tuple[str, ...], larger: Testbed | None = None) -> list[tuple]:
    """The two measurements :func:`scaling_check` compares (requests for :func:`measure_testbeds`)."""
    big = larger or replace(
        tb, hosts_per_leaf=2 * tb.hosts_per_leaf, spines=2 * tb.spines, buffer_bytes=2 * tb.buffer_bytes
    )
    return [(tb, False, tuple(scenarios)), (big, False, tuple(scenarios))]


def scaling_check(tb: Testbed, scenarios: tuple[str, ...], larger: Testbed | None = None) -> dict:
    """The scaling rule checked: each scenario's slowdown on ``tb`` and on a pod twice as wide
    (twice the hosts per leaf and spines, the same per-port buffer); ``agree`` within
    :data:`SCALING_TOLERANCE` absolute or :data:`SCALING_TOLERANCE_REL` relative, ``use`` the larger
    slowdown (what the risk stage takes with ``risk: {check_scaling: true}``)."""
    a, b = measure_testbeds(scaling_requests(tb, scenarios, larger))
    out = {}
    for sid in scenarios:
        sa, sb = a.scenario_slowdown(sid), b.scenario_slowdown(sid)
        hi = max(sa, sb)
        agree = sa == sb or abs(sa - sb) <= max(SCALING_TOLERANCE, SCALING_TOLERANCE_REL * abs(hi))
        out[sid] = {"small": sa, "large": sb, "agree": bool(agree), "use": hi}
    return out


__all__ = [
    "BASELINES",
    "CONGESTION_SHARE",
    "JITTER_SWEEP_DUTY",
    "LIBRARY",
    "MISCONFIGS",
    "SMALL_JITTER_DUTY",
    "RiskMeasurement",
    "Testbed",
    "Trigger",
    "measure_testbed",
    "measure_testbeds",
    "placed_testbed",
    "run_testbed",
    "scaling_check",
    "scaling_requests",
    "testbed_for",
]
