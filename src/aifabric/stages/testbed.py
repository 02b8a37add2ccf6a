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
their two lower tiers (the pod). :func:`scaling_check` runs scenarios at two pod sizes; the
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
scenario can be written out as an ``aifabric simulate`` file (:func:`write_scenarios`, shipped in
``scenarios/risk/``). The *risk* stage turns the slowdowns into expected loss
(:mod:`aifabric.stages.risk`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

SMALL_JITTER_DUTY = 0.02  # ASSUMPTION: "small network jitter" = PAUSE 2 % of the time (2 µs every 100 µs)
JITTER_SWEEP_DUTY = (0.01, 0.02, 0.05)
JITTER_SHARES = (1 / 32, 1 / 4, 1.0)  # share of the ring's receiving NICs that jitter
JITTER_BURST_US = (2.0, 20.0)  # PAUSE burst length: well below, and a fifth of, a ring step
CONGESTION_SHARE = 0.25  # ASSUMPTION (no public source): share of communication time that overlaps congestion
CONGESTION_SHARE_BASIS = (
    "assumption (no public source): 25 % of communication time overlaps a congestion event "
    "(storage / checkpoint incast, all-to-all hot spot); the rest runs on a quiet fabric"
)
SCALING_TOLERANCE = 0.10  # absolute difference of two slowdowns (0.10 = 10 points) accepted as agreement
TUNED_ALPHA = 1 / 8  # ns-3 HPCC dynamic threshold (hardware-facts E.1)
ECN_CUMULUS = {"kmin": 150_000, "kmax": 1_500_000, "pmax": 1.0}  # NVIDIA Cumulus 'nv set qos roce' (S11)
ECN_SONIC = {"kmin": 1_048_576, "kmax": 2_097_152, "pmax": 0.05}  # SONiC AZURE_LOSSLESS (S7)
# ASSUMPTION (this project's tuning, measured on the testbed; no public 400G set): ECN above the queue an
# ECMP collision of two ring flows builds; with DCQCN's paper parameters the quiet ring step stays
# within 10 % of PFC alone while the incast is throttled
ECN_TUNED = {"kmin": 3 * 2**20, "kmax": 12 * 2**20, "pmax": 0.2}
# ASSUMPTION (no public Quantum-2 / OpenSM CC threshold): IB switches mark FECN on an output queue above
# about 8 packets — credit flow control keeps IB queues within the per-VL buffers (~15 packets); at
# this point the quiet ring step stays at its ideal time and the incast is throttled
FECN_IB = {"kmin": 32 * 1024, "kmax": 128 * 1024, "pmax": 0.2}
ECN_CUMULUS_KMIN = ECN_CUMULUS["kmin"]
SPECTRUM4_BUFFER_BYTES = 128 * 10**6  # hardware-facts: 128 MB vs 160 MB conflicting; conservative 128 MB (S31)
SPECTRUM4_PORTS = 64  # SN5600: 64 × 800G ports (the buffer is shared by them)
MISMATCH_XOFF_BYTES = ECN_CUMULUS_KMIN // 2  # the second batch pauses below the ECN marking point
TRAFFIC = ("quiet", "congested")
BASELINES = {
    "roce": ("hpcc", "dcqcn", "pfc-only"),
    "infiniband": ("none", "ib-cc"),
}
HORIZON_US = 20_000.0  # injected events are scheduled up to here; a ring not done by then is a hang


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
    ring_start_us: float = 1000.0  # congested traffic: the ring step starts once the incast is in steady state
    storm_pause_us: float = 2.0
    storm_period_us: float = 100.0
    seeds: tuple[int, ...] = (1, 2)
    technology: str = "roce"
    baseline: str = "hpcc"  # roce: hpcc | dcqcn | pfc-only; infiniband: none | ib-cc
    tiers: int = 2  # of the planned fabric (the pod is its two lower tiers)
    watchdog_us: float = 50.0  # PFC watchdog / HOQ lifetime, compressed to the testbed's time scale
    slow_drain: float = 0.5  # a slow receiver drains at this share of its line rate
    straggler_drain: float = 0.75  # a straggler NIC receives at this share of its line rate

    @property
    def has_cc(self) -> bool:
        return self.baseline not in ("pfc-only", "none")

    def describe(self) -> dict[str, str]:
        over = self.hosts_per_leaf / self.spines
        return {
            "topology": f"leaf-spine {self.leaves} leaves x {self.hosts_per_leaf} hosts, {self.spines} spines "
            f"(oversubscription {over:g}:1), {self.link_rate_bps / 1e9:g}G links, {self.link_delay_ns:g} ns per link"
            + (f"; the pod of a {self.tiers}-tier plan" if self.tiers > 2 else ""),
            "switch": f"{self.switch_latency_ns:g} ns hop, {self.buffer_bytes / 1e6:g} MB shared buffer "
            "(the planned switch's buffer per port x the pod leaf's ports)",
            "technology": self.technology,
            "baseline": _BASELINE_WORDS[self.baseline],
            "routing": self.routing,
            "quiet traffic": f"one ring step: every host sends {self.step_bytes / 2**20:g} MiB to the same-index "
            "host of the next leaf",
            "congested traffic": f"the same ring step {self.ring_start_us:g} us into a {self.incast_senders}-to-1 "
            f"incast of {self.incast_bytes / 2**20:g} MiB per sender (target outside the ring)",
            "seeds": ", ".join(str(s) for s in self.seeds),
        }


_BASELINE_WORDS = {
    "hpcc": "PFC dynamic thresholds (alpha 1/8, E.1) + HPCC (S13, S74): reaches max-min sharing",
    "dcqcn": "PFC dynamic thresholds + ECN 3 MiB / 12 MiB / 20 % + DCQCN paper parameters (E.4): this "
    "project's tuning (no public 400G set): marks only above the queue an ECMP collision of two ring "
    "flows builds, so DCQCN reacts to incast, not to hashing",
    "pfc-only": "PFC dynamic thresholds, no ECN / congestion control (valid by design where admission "
    "control and deep buffers hold; the testbed models neither)",
    "none": "credit flow control, no congestion control (OpenSM default congestion_control FALSE)",
    "ib-cc": "credit flow control + IB congestion control (FECN marked on output queues above 32 KB, ramping to "
    "128 KB, a DCQCN-type BECN reaction with the paper parameters: a coarse stand-in, the CCT tables and "
    "switch thresholds are not public)",
}


@dataclass(frozen=True)
class Trigger:
    """One scenario of the library."""

    id: str
    fabrics: tuple[str, ...]  # "roce", "infiniband"
    breaks: str  # what it breaks, in words
    model: str  # how it is modelled
    traffic: tuple[str, ...] = TRAFFIC
    kind: str = "mistake"  # mistake | fault | condition

    def applies(self, tb: Testbed) -> tuple[bool, str]:
        """Whether the scenario exists on this testbed's fabric and baseline (and why not)."""
        if tb.technology not in self.fabrics:
            return False, f"not a {tb.technology} mechanism"
        if self.id in ("ecn-off", "dcqcn-defaults") and not tb.has_cc:
            return False, "the chosen baseline runs without congestion control by design"
        if self.id == "lossy-go-back-n" and not tb.has_cc:
            return False, "same as lossy-class on a baseline without congestion control"
        if self.id == "ib-no-ar" and tb.routing != "adaptive":
            return False, "the fabric already routes statically"
        if self.id == "ecmp-polarisation":
            return False, "needs three tiers of hashing; the testbed pod has two (not measured)"
        return True, ""


ROCE, IB, BOTH = ("roce",), ("infiniband",), ("roce", "infiniband")
LIBRARY: dict[str, Trigger] = {
    t.id: t
    for t in (
        Trigger(
            "ecn-off",
            ROCE,
            "congestion control off: PFC alone holds the fabric lossless, pauses spread from hot spots",
            "the baseline with ECN marking and the congestion control switched off",
        ),
        Trigger(
            "dcqcn-defaults",
            ROCE,
            "DCQCN at ConnectX firmware defaults: flows cut on a collision recover over hundreds of us",
            "ECN at the Cumulus RoCE defaults (150 KB / 1.5 MB / 100 %, S11) + DCQCN firmware defaults (S12)",
        ),
        Trigger(
            "pfc-threshold-mismatch",
            ROCE,
            "two switch batches with different PFC thresholds: unbalanced back-pressure",
            f"half the leaves and spines pause at a static xoff of {MISMATCH_XOFF_BYTES} B "
            "(below the ECN marking point)",
        ),
        Trigger(
            "pfc-storm",
            ROCE,
            "spurious PAUSE from one spine (flow-control firmware bug): small network jitter",
            "spine0 pauses every neighbour 2 us every 100 us; too short for the PFC watchdog to see",
            kind="fault",
        ),
        Trigger(
            "pfc-watchdog-off",
            ROCE,
            "a stuck NIC pauses its leaf forever and, without the PFC watchdog, the pause spreads to victims",
            "the incast target stops draining (receiver stall for the whole run), no watchdog",
            traffic=("congested",),
        ),
        Trigger(
            "lossy-class",
            ROCE,
            "DSCP / trust mismatch: RoCE traffic in a lossy class (no PFC, no ECN marking), go-back-N on loss",
            "PFC and ECN off, no congestion control: drops at full buffers, go-back-N recovery",
        ),
        Trigger(
            "lossy-go-back-n",
            ROCE,
            "RoCE run lossy on purpose: congestion control alone, every drop costs a go-back-N rewind",
            "PFC off, the baseline's congestion control on",
        ),
        Trigger(
            "ecmp-polarisation",
            ROCE,
            "the same hash seed on every tier: the upper tier re-uses the lower tier's choice",
            "not measured (two-tier pod); listed so the gap is visible",
        ),
        Trigger(
            "ib-no-ar",
            IB,
            "subnet manager routing engine without adaptive routing: static linear forwarding tables",
            "routing static (D-mod-K style linear forwarding) instead of adaptive",
        ),
        Trigger(
            "slow-receiver",
            BOTH,
            "a slow receiver on the incast target: congestion spreads (PFC on RoCE, credits on IB)",
            "the incast target drains at half its line rate (5 us stall every 10 us): PAUSE on RoCE, "
            "credits withheld on InfiniBand",
            traffic=("congested",),
            kind="fault",
        ),
        Trigger(
            "stuck-receiver",
            BOTH,
            "a stuck NIC: contained by the PFC watchdog (RoCE) / the switch's head-of-queue lifetime (IB)",
            "the incast target stops draining; the watchdog ends the stall after its detection time "
            "(compressed to the testbed scale)",
            traffic=("congested",),
            kind="fault",
        ),
        Trigger(
            "link-failure",
            BOTH,
            "a failed leaf-spine link: capacity loss until repaired, after the routes re-converge",
            "link leaf0-spine0 down, routes recomputed (the state until repair); the re-convergence "
            "stall (SM / BGP) is charged by the risk stage, a job failure if it outlasts NCCL's retries",
            kind="fault",
        ),
        Trigger(
            "straggler-nic",
            BOTH,
            "one NIC receives slower than the rest; the synchronous step waits for it",
            "host 8 (a ring member) drains at 75 % of line rate (2.5 us stall every 10 us)",
            traffic=("quiet",),
            kind="fault",
        ),
        Trigger(
            "storage-incast",
            BOTH,
            "storage / checkpoint incast sharing the fabric with training: victim flows",
            "the baseline fabric, congested mix against quiet mix",
            traffic=("congested",),
            kind="condition",
        ),
    )
}
MISCONFIGS = {k: t.breaks for k, t in LIBRARY.items() if t.kind == "mistake"}


# ---- scenario building ----------------------------------------------------------------------------
def _baseline_fabric(tb: Testbed) -> dict:
    if tb.technology == "infiniband":
        fab: dict = {
            "technology": "infiniband",
            "mtu": "4096B",
            "switch_latency": f"{tb.switch_latency_ns:g}ns",
            "switch_buffer": f"{tb.buffer_bytes}B",
            "congestion_control": "none",
            "routing": tb.routing if tb.routing in ("adaptive", "static") else "static",
        }
        if tb.baseline == "ib-cc":
            fab["congestion_control"] = "ib-cc"
            fab["ecn"] = _ecn(FECN_IB)
            fab["dcqcn"] = {"preset": "paper"}
    else:
        fab = {
            "technology": "roce",
            "mtu": "4096B",
            "header": "64B",
            "switch_latency": f"{tb.switch_latency_ns:g}ns",
            "switch_buffer": f"{tb.buffer_bytes}B",
            "pfc": {"enabled": True, "mode": "dynamic", "alpha": TUNED_ALPHA},
            "ecn": {"enabled": False},
            "congestion_control": "none",
            "routing": "adaptive" if tb.routing == "adaptive" else "ecmp",
        }
        if tb.baseline == "hpcc":
            fab["congestion_control"] = "hpcc"
        elif tb.baseline == "dcqcn":
            fab["ecn"] = _ecn(ECN_TUNED)
            fab["congestion_control"] = "dcqcn"
            fab["dcqcn"] = {"preset": "paper"}
    if fab["routing"] == "adaptive":
        fab["adaptive"] = {"granularity": "packet"}
    return fab


def _ecn(e: dict) -> dict:
    return {"enabled": True, "kmin": f"{e['kmin']}B", "kmax": f"{e['kmax']}B", "pmax": e["pmax"]}


def _stall(node: str, start_us: float, stall_us: float, period_us: float | None = None) -> dict:
    if period_us is None:
        return {"node": node, "start": f"{start_us:g}us", "duration": f"{stall_us:g}us"}
    count = int((HORIZON_US - start_us) // period_us)
    return {
        "node": node,
        "start": f"{start_us:g}us",
        "duration": f"{stall_us:g}us",
        "period": f"{period_us:g}us",
        "count": count,
    }


def target_name(tb: Testbed) -> str:
    return f"h{tb.hosts_per_leaf - 1}"


def perturb(tb: Testbed, sid: str | None, duty: float | None = None, share: float | None = None) -> dict:
    """The baseline fabric with scenario ``sid`` applied (``None``: the baseline itself)."""
    fab = _baseline_fabric(tb)
    if sid in (None, "storage-incast"):
        return fab
    if sid == "ecn-off":
        fab.update(congestion_control="none", ecn={"enabled": False})
    elif sid == "dcqcn-defaults":
        fab["ecn"] = _ecn(ECN_CUMULUS)
        fab["congestion_control"] = "dcqcn"
        fab["dcqcn"] = {"preset": "nvidia-firmware"}
    elif sid == "pfc-threshold-mismatch":
        batch2 = [f"leaf{i}" for i in range(tb.leaves // 2, tb.leaves)]
        batch2 += [f"spine{i}" for i in range(tb.spines // 2, tb.spines)]
        fab["pfc_overrides"] = [
            {
                "switches": batch2,
                "mode": "static",
                "xoff": f"{MISMATCH_XOFF_BYTES}B",
                "xon": f"{MISMATCH_XOFF_BYTES - 2 * (4096 + 64)}B",
            }
        ]
    elif sid == "pfc-storm":
        period = tb.storm_period_us
        pause = tb.storm_pause_us if duty is None else duty * period
        fab["pause_storms"] = [
            {
                "node": "spine0",
                "start": f"{period / 2:g}us",
                "duration": f"{pause:g}us",
                "period": f"{period:g}us",
                "count": int(HORIZON_US // period),
            }
        ]
    elif sid in ("pfc-watchdog-off", "stuck-receiver"):
        fab["receiver_stalls"] = [_stall(target_name(tb), 0.0, HORIZON_US)]
        if sid == "stuck-receiver":
            fab["pfc_watchdog"] = {"detection": f"{tb.watchdog_us:g}us"}
    elif sid == "lossy-class":
        fab.update(pfc={"enabled": False}, ecn={"enabled": False}, congestion_control="none")
    elif sid == "lossy-go-back-n":
        fab["pfc"] = {"enabled": False}
    elif sid == "ib-no-ar":
        fab["routing"] = "static"
        fab.pop("adaptive", None)
    elif sid == "slow-receiver":
        period = 10.0
        fab["receiver_stalls"] = [_stall(target_name(tb), 0.0, (1 - tb.slow_drain) * period, period)]
    elif sid == "straggler-nic":
        period = 10.0
        fab["receiver_stalls"] = [
            _stall(f"h{tb.hosts_per_leaf}", 0.0, (1 - tb.straggler_drain) * period, period)
        ]
    elif sid == "link-failure":
        fab["failures"] = [{"link": "leaf0-spine0", "at": "0us"}]
    elif sid == "jitter":
        fab["receiver_stalls"] = _jitter_stalls(tb, duty, share)
    else:
        raise KeyError(sid)
    return fab


def _jitter_stalls(tb: Testbed, duty: float, share: float) -> list[dict]:
    """Short stalls (``storm_pause_us``) at ``duty`` on ``share`` of the ring's receiving NICs, each
    with its own phase (a fixed spread, so the same inputs give the same scenario)."""
    ring = [h for h in range(tb.leaves * tb.hosts_per_leaf) if h != tb.hosts_per_leaf - 1]
    n = max(1, round(share * len(ring)))
    period = tb.storm_pause_us / duty
    out = []
    for k, h in enumerate(ring[:: max(1, len(ring) // n)][:n]):
        phase = period * ((k * 0.618034) % 1.0)
        out.append(_stall(f"h{h}", phase, tb.storm_pause_us, period))
    return out


def _ring_start(tb: Testbed, traffic: str) -> float:
    return tb.ring_start_us if traffic == "congested" else 0.0


def _flows(tb: Testbed, traffic: str):
    """Ring-step flows (ids first), plus the incast for ``congested``; returns (table, ring flows)."""
    from aifabric.workload.traffic import _table

    h, nl = tb.hosts_per_leaf, tb.leaves
    target = h - 1  # host h-1 of leaf 0: the incast target, outside the ring
    src, dst = [], []
    for leaf in range(nl):
        for i in range(h):
            s, d = leaf * h + i, ((leaf + 1) % nl) * h + i
            if target in (s, d):
                continue
            src.append(s)
            dst.append(d)
    n_ring = len(src)
    if traffic == "quiet":
        return _table(src, dst, tb.step_bytes, 0), n_ring
    senders = [leaf * h + i for i in range(h) for leaf in range(1, nl)][: tb.incast_senders]
    sizes = [tb.step_bytes] * n_ring + [tb.incast_bytes] * len(senders)
    starts = [int(tb.ring_start_us * 1e6)] * n_ring + [0] * len(senders)
    return _table(src + senders, dst + [target] * len(senders), sizes, starts), n_ring


def scenario_dict(tb: Testbed, sid: str | None, seed: int, duty=None, share=None) -> dict:
    """The ``aifabric simulate`` scenario (without its workload) for one run."""
    return {
        "name": f"risk-{tb.technology}-{sid or 'baseline'}",
        "seed": seed,
        "topology": {
            "kind": "leaf-spine",
            "leaves": tb.leaves,
            "spines": tb.spines,
            "hosts_per_leaf": tb.hosts_per_leaf,
            "link_rate": f"{tb.link_rate_bps}bps",
            "link_delay": f"{tb.link_delay_ns:g}ns",
        },
        "fabric": perturb(tb, sid, duty, share),
        "sim": {"until": f"{HORIZON_US:g}us", "progress": False},
    }


def _scenario(tb: Testbed, sid: str | None, seed: int, duty=None, share=None):
    from aifabric.scenario import scenario_from_dict

    return scenario_from_dict(scenario_dict(tb, sid, seed, duty, share))


@dataclass
class RunStats:
    step_us: float  # the slowest ring flow; inf when the ring did not finish (a hang)
    pause_frames: int
    drops: int
    ecn_marks: int
    wall_s: float
    incast_us: float = float("nan")  # congested mix: the slowest incast flow (nan: not finished)


def run_testbed(tb: Testbed, sid: str | None, traffic: str, seed: int, duty=None, share=None) -> RunStats:
    """One packet-level run: the ring step's completion time (slowest ring flow) and counters."""
    import warnings

    from aifabric.sim import simulate
    from aifabric.topology import from_spec

    sc = _scenario(tb, sid, seed, duty, share)
    flows, n_ring = _flows(tb, traffic)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a stuck receiver leaves flows unfinished on purpose
        res = simulate(sc, flows=flows, topology=from_spec(sc.topology))
    f = res.flows
    done = f["completed"].to_numpy()
    fct = f["fct_us"].to_numpy()
    s = res.summary
    step = float(fct[:n_ring].max()) if done[:n_ring].all() else float("inf")
    inc = float(fct[n_ring:].max()) if len(fct) > n_ring and done[n_ring:].all() else float("nan")
    return RunStats(
        step, int(s["pause_frames"]), int(s["drops"]), int(s["ecn_marks"]), float(res.engine["wall_s"]), inc
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

    def scenario_slowdown(self, sid: str, congestion_share: float = CONGESTION_SHARE) -> float:
        """The communication slowdown a scenario causes while it is present: time-averaged over the
        two traffic mixes where it runs under both, else the one it needs; gains count as 0."""
        if sid == "storage-incast":
            return max(0.0, self.comm_slowdown["congested"]["storage-incast"])
        q = self.comm_slowdown["quiet"].get(sid)
        c = self.comm_slowdown["congested"].get(sid)
        if q is not None and c is not None:
            return congestion_share * max(0.0, c) + (1 - congestion_share) * max(0.0, q)
        return max(0.0, q if q is not None else c)

    blended = scenario_slowdown  # the earlier name

    @property
    def measured(self) -> list[str]:
        return [s for s in LIBRARY if s in self.comm_slowdown["quiet"] or s in self.comm_slowdown["congested"]]

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
        }


def _no_inf(d: dict) -> dict:
    return {k: _no_inf(v) if isinstance(v, dict) else (None if v == float("inf") else v) for k, v in d.items()}


def _rel(t: np.ndarray, base: np.ndarray) -> float:
    """Mean over seeds of (time with the scenario / baseline time) − 1 (inf for a hang)."""
    return float(np.mean(t / base) - 1)


@lru_cache(maxsize=32)
def measure_testbed(tb: Testbed, jitter_sweep: bool = True, only: tuple[str, ...] | None = None) -> RiskMeasurement:
    """Run the baseline and every applicable scenario (or ``only`` these) over ``tb.seeds`` (cached)."""
    done: list[RunStats] = []

    def over_seeds(sid, traffic, duty=None, share=None) -> list[RunStats]:
        rs = [run_testbed(tb, sid, traffic, s, duty, share) for s in tb.seeds]
        done.extend(rs)
        return rs

    step: dict = {t: {} for t in TRAFFIC}
    slow: dict = {t: {} for t in TRAFFIC}
    counters: dict = {t: {} for t in TRAFFIC}
    base_of: dict[str, np.ndarray] = {}
    incast: dict[str, float] = {}
    skip: dict[str, str] = {}
    wanted = [s for s in LIBRARY if only is None or s in only]
    for traffic in TRAFFIC:
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
                slow[traffic][key] = _rel(t, base_of["quiet"])
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
            else:
                slow[traffic][key] = _rel(t, base_of[traffic])
            if traffic == "congested":
                incast[key] = float(np.mean([r.incast_us for r in rs]))
    sweep = []
    if jitter_sweep:  # the first seed only: 18 runs
        base = base_of["quiet"][:1]
        for burst in JITTER_BURST_US:
            jt = replace(tb, storm_pause_us=burst)
            for share in JITTER_SHARES:
                for duty in JITTER_SWEEP_DUTY:
                    r = run_testbed(jt, "jitter", "quiet", tb.seeds[0], duty, share)
                    done.append(r)
                    sweep.append(
                        {"burst_us": burst, "duty": duty, "share": share, "comm_slowdown": _rel(np.array([r.step_us]), base)}
                    )
    return RiskMeasurement(
        tb, step, slow, counters, sweep, len(done), sum(r.wall_s for r in done), incast, skip
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
    pod_ports = hosts_per_leaf + spines
    if technology == "infiniband":
        route = "adaptive" if routing == "adaptive" else "static"
        base = baseline or "none"
    else:
        route = "adaptive" if routing == "adaptive" else "ecmp"
        base = baseline or "hpcc"
    return Testbed(
        link_rate_bps=int(link_rate_gbps * 1e9),
        switch_latency_ns=float(hop_ns),
        link_delay_ns=round(5.05 * float(leaf_spine_m), 3),
        buffer_bytes=int(buf * min(1.0, pod_ports / ports)),
        routing=route,
        leaves=leaves,
        hosts_per_leaf=hosts_per_leaf,
        spines=spines,
        technology=technology,
        baseline=base,
        tiers=tiers,
    )


def scaling_check(tb: Testbed, scenarios: tuple[str, ...], larger: Testbed | None = None) -> dict:
    """The scaling rule checked: each scenario's slowdown on ``tb`` and on a pod twice as wide
    (twice the hosts per leaf and spines, the same per-port buffer); ``agree`` within
    :data:`SCALING_TOLERANCE`, ``use`` the larger slowdown."""
    big = larger or replace(
        tb, hosts_per_leaf=2 * tb.hosts_per_leaf, spines=2 * tb.spines, buffer_bytes=2 * tb.buffer_bytes
    )
    a = measure_testbed(tb, False, scenarios)
    b = measure_testbed(big, False, scenarios)
    out = {}
    for sid in scenarios:
        sa, sb = a.scenario_slowdown(sid), b.scenario_slowdown(sid)
        out[sid] = {"small": sa, "large": sb, "agree": abs(sa - sb) <= SCALING_TOLERANCE, "use": max(sa, sb)}
    return out


# Shipped files: each scenario on each fabric, on the baseline that shows its physics (PFC spreading
# needs a fabric without congestion control), plus the same trigger with the congestion control that
# contains it; (fabric, scenario, baseline, file suffix)
SHIPPED_BASELINE = {"pfc-watchdog-off": "pfc-only", "stuck-receiver": "pfc-only", "slow-receiver": "pfc-only"}
SHIPPED_EXTRA = (
    ("roce", "slow-receiver", "dcqcn", "-dcqcn"),
    ("infiniband", "slow-receiver", "ib-cc", "-ib-cc"),
    ("roce", "storage-incast", "pfc-only", "-pfc-only"),
)


def shipped_testbed(technology: str, baseline: str | None = None) -> Testbed:
    """The testbed the shipped files use: the default 400G plans (SN5600 / QM9700 class, 64-port
    buffer share, 600 / 130 ns hops, ECMP / adaptive routing)."""
    if technology == "infiniband":
        return testbed_for(400, None, 130, 40, "adaptive", technology="infiniband", baseline=baseline)
    return testbed_for(400, None, 600, 40, "ecmp", technology="roce", baseline=baseline)


def shipped_files() -> list[tuple[str, str, str, str]]:
    """(file name, fabric, scenario or None, traffic) of every shipped file."""
    out = []
    for sid, trig in LIBRARY.items():
        for tech in trig.fabrics:
            tb = shipped_testbed(tech, SHIPPED_BASELINE.get(sid) if tech == "roce" else None)
            if trig.applies(tb)[0]:
                out.append((f"{tech}-{sid}.yaml", tech, sid, trig.traffic[-1], tb.baseline))
    for tech, sid, base, suffix in SHIPPED_EXTRA:
        out.append((f"{tech}-{sid}{suffix}.yaml", tech, sid, LIBRARY[sid].traffic[-1], base))
    for tech in BASELINES:
        for traffic in TRAFFIC:
            out.append((f"{tech}-baseline-{traffic}.yaml", tech, None, traffic, shipped_testbed(tech).baseline))
    out.append(("roce-baseline-congested-pfc-only.yaml", "roce", None, "congested", "pfc-only"))
    return out


def write_scenarios(folder) -> list[str]:
    """Write every shipped scenario as an ``aifabric simulate`` file (plus the two flows files, ns-3
    HPCC format, the ring flows first) in ``folder``; returns the file names."""
    from pathlib import Path

    import yaml

    from aifabric.workload.traffic import ROCE_DPORT

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tb0 = shipped_testbed("roce")
    flows_file = {}
    for traffic in TRAFFIC:
        flows, n_ring = _flows(tb0, traffic)
        lines = [str(len(flows))] + [
            f"{r.src} {r.dst} 3 {ROCE_DPORT} {r.size_bytes} {2 + r.start_ps / 1e12:.9f}" for r in flows.itertuples()
        ]
        flows_file[traffic] = (f"flows-{traffic}.txt", n_ring)
        (folder / flows_file[traffic][0]).write_text("\n".join(lines) + "\n")
    names = []
    for name, tech, sid, traffic, base in shipped_files():
        tb = shipped_testbed(tech, base)
        d = scenario_dict(tb, sid, 1)
        d["name"] = name.removesuffix(".yaml")
        if sid is not None:
            trig = LIBRARY[sid]
            d["description"] = f"{trig.breaks}. Modelled: {trig.model}."
        d["workload"] = {"kind": "flows-file", "path": flows_file[traffic][0]}
        head = (
            f"# Risk library: {sid or 'baseline'} on {tech}, {traffic} traffic, baseline {base} "
            f"({_BASELINE_WORDS[base][:60]}...).\n# Generated by aifabric.stages.testbed.write_scenarios; "
            f"the ring flows are the first {flows_file[traffic][1]} (the step = the slowest of them).\n"
        )
        (folder / name).write_text(head + yaml.safe_dump(d, sort_keys=False, width=100))
        names.append(name)
    return names


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
    "run_testbed",
    "scaling_check",
    "shipped_files",
    "shipped_testbed",
    "testbed_for",
    "write_scenarios",
]
