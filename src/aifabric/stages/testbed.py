"""The misconfiguration testbed (part of the *measure* stage, used by *risk*): what each
lossless-Ethernet mistake costs a RoCE fabric, simulated packet by packet.

The expected loss the advisor weighs is, per mistake, P(mistake | team expertise) × the slowdown
of the user's training iteration when the mistake is present. P is an assumption
(:data:`aifabric.stages.risk.MISCONFIG_PROBABILITY`); the slowdown is computed here.

How the slowdown is computed
----------------------------
1. **Testbed** (:class:`Testbed`). A two-tier leaf-spine slice at the user's NIC rate with the
   planned switch's hop latency and shared buffer: 4 leaves × 8 hosts, 8 spines, non-blocking,
   packet level (:func:`aifabric.simulate`), the fabric's routing (ECMP hashing, or adaptive).
   Two traffic mixes:

   * **quiet** — one ring step of the data-parallel all-reduce: every host sends ``step_bytes``
     to the same-index host of the next leaf, across the spines;
   * **congested** — the same ring step starting ``ring_start_us`` into a sustained
     ``incast_senders``-to-1 incast (storage / checkpoint traffic or an all-to-all hot spot; the
     target takes no part in the ring).

   The step time is the slowest ring flow's completion (a synchronous collective waits for its
   last rank).
2. **Tuned baseline.** PFC with SONiC-style dynamic thresholds (α = 1/8, hardware-facts E.1) and
   HPCC congestion control (S13, S74). On the testbed it reaches the flow model's max-min sharing
   — the assumption behind ``compare``'s RoCE numbers — so a mistake is measured against the
   fabric ``compare`` already priced.
3. **One mistake at a time** (:data:`MISCONFIGS`), everything else as tuned:

   * ``ecn-off`` — no ECN marking / no congestion control reacting: PFC alone keeps the fabric
     lossless, and pauses spread from the incast to the ring (congestion spreading);
   * ``dcqcn-defaults`` — ECN marking at the NVIDIA Cumulus RoCE defaults (Kmin 150 KB, Kmax
     1.5 MB, Pmax 100 %, S11) and DCQCN at the ConnectX firmware defaults (S12): cuts up to every
     4 µs, the first increase only after the 300 µs timer, so a flow cut on an ECMP collision sits
     at Mb/s rates for hundreds of µs (the DCQCN helper's trace in ``bench/dcqcn_400g.py``);
   * ``pfc-threshold-mismatch`` — "two batches of switches with different default PFC
     thresholds": the second batch (half the leaves and spines) pauses at a static xoff of
     75 KB, below a DCQCN fabric's ECN marking point (150 KB, S11) — the ordering the audit's
     ``ecn-above-pfc-threshold`` rule flags;
   * ``pfc-storm`` — a flow-control bug: spine0 emits spurious PAUSE frames on all its ports,
     ``storm_pause_us`` every ``storm_period_us`` (:data:`SMALL_JITTER_DUTY` of the time:
     "small network jitter").

   Impact on communication = step time with the mistake / tuned − 1, mean over two hash seeds,
   per traffic mix; the time-average uses :data:`CONGESTION_SHARE` (an assumption) of congested
   time. A mistake that measures faster than tuned counts as 0 (no gain is credited).
4. **To the iteration** (done by :mod:`aifabric.stages.risk`): the fabric's measurement under the
   mistake — its achieved bandwidth on bandwidth-bound steps divided by 1 + the slowdown — goes
   through the *performance* stage again. NVLink collectives are
   unaffected and the DP all-reduce still overlaps backward compute, so a mistake that only
   slows hidden communication costs nothing, and one that hits exposed traffic costs its share.

Everything the testbed uses is listed by :meth:`Testbed.describe` and printed in the report.
Left out: a *tuned* DCQCN (no public parameter set for 400G to cite) — the tuned baseline is
HPCC, which reaches the max-min shares; subnet-manager mistakes on InfiniBand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

MISCONFIGS = {
    "ecn-off": "ECN marking off: no end-to-end congestion control reacts, PFC alone holds the fabric lossless",
    "dcqcn-defaults": "DCQCN left at the ConnectX firmware defaults (S12) instead of a congestion control tuned "
    "to reach fair shares",
    "pfc-threshold-mismatch": "two switch batches with different PFC thresholds (half pause at a static 75 KB)",
    "pfc-storm": "spurious PAUSE frames from one spine (flow-control firmware bug)",
}
SMALL_JITTER_DUTY = (
    0.02  # ASSUMPTION: "small network jitter" = one switch paused 2 % of the time (2 µs every 100 µs)
)
JITTER_SWEEP_DUTY = (0.01, 0.02, 0.05, 0.10, 0.20)
CONGESTION_SHARE = 0.25  # ASSUMPTION (no public source): share of communication time that overlaps congestion
CONGESTION_SHARE_BASIS = (
    "assumption (no public source): 25 % of communication time overlaps a congestion event "
    "(storage / checkpoint incast, all-to-all hot spot); the rest runs on a quiet fabric"
)
TUNED_ALPHA = 1 / 8  # ns-3 HPCC dynamic threshold (hardware-facts E.1)
ECN_CUMULUS = {"kmin": 150_000, "kmax": 1_500_000, "pmax": 1.0}  # NVIDIA Cumulus 'nv set qos roce' (S11)
ECN_CUMULUS_KMIN = ECN_CUMULUS["kmin"]
SPECTRUM4_BUFFER_BYTES = (
    128 * 10**6
)  # hardware-facts: 128 MB vs 160 MB conflicting; conservative 128 MB (S31)
MISMATCH_XOFF_BYTES = ECN_CUMULUS_KMIN // 2  # the second batch pauses below the ECN marking point
TRAFFIC = ("quiet", "congested")


@dataclass(frozen=True)
class Testbed:
    """The slice the risk scenarios run on (see the module docstring)."""

    link_rate_bps: int = 400 * 10**9
    switch_latency_ns: float = 600.0
    link_delay_ns: float = 200.0  # 40 m leaf-spine class fibre × 5.05 ns/m (the plan's default length)
    buffer_bytes: int = SPECTRUM4_BUFFER_BYTES
    routing: str = "ecmp"
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

    def describe(self) -> dict[str, str]:
        return {
            "topology": f"leaf-spine {self.leaves} leaves x {self.hosts_per_leaf} hosts, {self.spines} spines, "
            f"{self.link_rate_bps / 1e9:g}G links, {self.link_delay_ns:g} ns per link",
            "switch": f"{self.switch_latency_ns:g} ns hop, {self.buffer_bytes / 1e6:g} MB shared buffer",
            "routing": self.routing,
            "quiet traffic": f"one ring step: every host sends {self.step_bytes / 2**20:g} MiB to the same-index "
            "host of the next leaf",
            "congested traffic": f"the same ring step {self.ring_start_us:g} us into a {self.incast_senders}-to-1 "
            f"incast of {self.incast_bytes / 2**20:g} MiB per sender (target outside the ring)",
            "tuned": "PFC dynamic threshold alpha 1/8 (hardware-facts E.1), HPCC congestion control (S13, S74) - "
            "reaches the flow model's max-min sharing that compare's RoCE numbers assume",
            "dcqcn-defaults": "ECN Kmin 150 KB / Kmax 1.5 MB / Pmax 100 % (Cumulus RoCE, S11) + DCQCN at the "
            "ConnectX firmware defaults (S12: AI 5 Mb/s, HAI 50 Mb/s, 300 us timer, 32 KB byte "
            "counter, cuts at most every 4 us)",
            "pfc-threshold-mismatch": f"leaves {self.leaves // 2}-{self.leaves - 1} and spines "
            f"{self.spines // 2}-{self.spines - 1}: static xoff {MISMATCH_XOFF_BYTES} B",
            "pfc-storm": f"{self.storm_pause_us:g} us pause every {self.storm_period_us:g} us on every port of spine0 "
            f"({self.storm_pause_us / self.storm_period_us:.0%} of the time)",
            "seeds": ", ".join(str(s) for s in self.seeds),
        }


def _fabric(tb: Testbed, misconfig: str | None, duty: float | None = None) -> dict:
    fab: dict = {
        "technology": "roce",
        "mtu": "4096B",
        "header": "64B",
        "switch_latency": f"{tb.switch_latency_ns:g}ns",
        "switch_buffer": f"{tb.buffer_bytes}B",
        "pfc": {"enabled": True, "mode": "dynamic", "alpha": TUNED_ALPHA},
        "ecn": {"enabled": False},
        "congestion_control": "hpcc",
        "routing": "adaptive" if tb.routing == "adaptive" else "ecmp",
    }
    if tb.routing == "adaptive":
        fab["adaptive"] = {"granularity": "packet"}
    if misconfig == "ecn-off":
        fab["congestion_control"] = "none"
    elif misconfig == "dcqcn-defaults":
        fab["ecn"] = {
            "enabled": True,
            "kmin": f"{ECN_CUMULUS['kmin']}B",
            "kmax": f"{ECN_CUMULUS['kmax']}B",
            "pmax": ECN_CUMULUS["pmax"],
        }
        fab["congestion_control"] = "dcqcn"
        fab["dcqcn"] = {"preset": "nvidia-firmware"}
    elif misconfig == "pfc-threshold-mismatch":
        batch2 = [f"leaf{i}" for i in range(tb.leaves // 2, tb.leaves)] + [
            f"spine{i}" for i in range(tb.spines // 2, tb.spines)
        ]
        fab["pfc_overrides"] = [
            {
                "switches": batch2,
                "mode": "static",
                "xoff": f"{MISMATCH_XOFF_BYTES}B",
                "xon": f"{MISMATCH_XOFF_BYTES - 2 * (4096 + 64)}B",
            }
        ]
    elif misconfig == "pfc-storm":
        period = tb.storm_period_us
        pause = tb.storm_pause_us if duty is None else duty * period
        horizon_us = 20_000.0
        fab["pause_storms"] = [
            {
                "node": "spine0",
                "start": f"{period / 2:g}us",
                "duration": f"{pause:g}us",
                "period": f"{period:g}us",
                "count": int(horizon_us // period),
            }
        ]
    return fab


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


def _scenario(tb: Testbed, misconfig: str | None, seed: int, duty: float | None = None):
    from aifabric.scenario import scenario_from_dict

    topo = {
        "kind": "leaf-spine",
        "leaves": tb.leaves,
        "spines": tb.spines,
        "hosts_per_leaf": tb.hosts_per_leaf,
        "link_rate": f"{tb.link_rate_bps}bps",
        "link_delay": f"{tb.link_delay_ns:g}ns",
    }
    return scenario_from_dict(
        {
            "name": f"risk-{misconfig or 'tuned'}",
            "seed": seed,
            "topology": topo,
            "fabric": _fabric(tb, misconfig, duty),
            "sim": {"until": "1s"},
        }
    )


@dataclass
class RunStats:
    step_us: float
    pause_frames: int
    drops: int
    ecn_marks: int
    wall_s: float
    incast_us: float = float("nan")  # congested mix: the slowest incast flow (the storage transfer)


def run_testbed(
    tb: Testbed, misconfig: str | None, traffic: str, seed: int, duty: float | None = None
) -> RunStats:
    """One packet-level run: the ring step's completion time (slowest ring flow) and counters."""
    import warnings

    from aifabric.sim import simulate
    from aifabric.topology import from_spec

    sc = _scenario(tb, misconfig, seed, duty)
    flows, n_ring = _flows(tb, traffic)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = simulate(sc, flows=flows, topology=from_spec(sc.topology))
    f = res.flows
    if caught or not f["completed"].all():
        why = str(caught[0].message) if caught else f"{int((~f['completed']).sum())} flows did not complete"
        raise RuntimeError(f"risk testbed {misconfig or 'tuned'} / {traffic}: {why}")
    s = res.summary
    fct = f["fct_us"].to_numpy()
    return RunStats(
        float(fct[:n_ring].max()),
        int(s["pause_frames"]),
        int(s["drops"]),
        int(s["ecn_marks"]),
        float(res.engine["wall_s"]),
        float(fct[n_ring:].max()) if len(fct) > n_ring else float("nan"),
    )


@dataclass
class RiskMeasurement:
    """Per traffic mix and mistake: the ring-step time and its slowdown against the tuned fabric."""

    testbed: Testbed
    step_us: dict[str, dict[str, float]]  # traffic -> config ("tuned" or a mistake) -> mean step time
    comm_slowdown: dict[str, dict[str, float]]  # traffic -> mistake -> mean(step / tuned step) − 1
    counters: dict[str, dict[str, dict[str, int]]]  # traffic -> config -> pause frames / drops / ECN marks
    jitter_sweep: list[dict] = field(default_factory=list)  # quiet traffic: duty -> comm slowdown
    runs: int = 0
    wall_s: float = 0.0
    incast_us: dict[str, float] = field(default_factory=dict)  # config -> the incast's completion (congested)
    storage_slowdown: dict[str, float] = field(default_factory=dict)  # mistake -> incast time / tuned − 1

    def blended(self, mistake: str, congestion_share: float = CONGESTION_SHARE) -> float:
        """Communication slowdown averaged over time: congested for ``congestion_share``, quiet otherwise."""
        c = max(0.0, self.comm_slowdown["congested"][mistake])
        q = max(0.0, self.comm_slowdown["quiet"][mistake])
        return congestion_share * c + (1 - congestion_share) * q

    def to_dict(self) -> dict:
        return {
            "testbed": self.testbed.describe(),
            "step_us": self.step_us,
            "comm_slowdown": self.comm_slowdown,
            "counters": self.counters,
            "jitter_sweep": self.jitter_sweep,
            "runs": self.runs,
            "wall_s": self.wall_s,
            "incast_us": self.incast_us,
            "storage_slowdown": self.storage_slowdown,
        }


def _rel(t: np.ndarray, base: np.ndarray) -> float:
    """Mean over seeds of (time with the mistake / tuned time) − 1."""
    return float(np.mean(t / base) - 1)


@lru_cache(maxsize=16)
def measure_testbed(tb: Testbed, jitter_sweep: bool = True) -> RiskMeasurement:
    """Run the tuned testbed and each mistake, quiet and congested, over ``tb.seeds`` (cached)."""
    done: list[RunStats] = []

    def over_seeds(m, traffic, duty=None) -> list[RunStats]:
        rs = [run_testbed(tb, m, traffic, s, duty) for s in tb.seeds]
        done.extend(rs)
        return rs

    step: dict = {}
    slow: dict = {}
    counters: dict = {}
    base_of: dict[str, np.ndarray] = {}
    incast: dict[str, float] = {}
    storage: dict[str, float] = {}
    for traffic in TRAFFIC:
        step[traffic], slow[traffic], counters[traffic] = {}, {}, {}
        for m in (None, *MISCONFIGS):
            rs = over_seeds(m, traffic)
            t = np.array([r.step_us for r in rs])
            key = m or "tuned"
            step[traffic][key] = float(t.mean())
            counters[traffic][key] = {
                "pause_frames": int(round(np.mean([r.pause_frames for r in rs]))),
                "drops": int(sum(r.drops for r in rs)),
                "ecn_marks": int(round(np.mean([r.ecn_marks for r in rs]))),
            }
            if m is None:
                base_of[traffic] = t
            else:
                slow[traffic][m] = _rel(t, base_of[traffic])
            if traffic == "congested":
                inc = np.array([r.incast_us for r in rs])
                incast[key] = float(inc.mean())
                if m is None:
                    base_of["incast"] = inc
                else:
                    storage[m] = _rel(inc, base_of["incast"])
    sweep = []
    if jitter_sweep:
        default_duty = tb.storm_pause_us / tb.storm_period_us
        for duty in JITTER_SWEEP_DUTY:
            if abs(duty - default_duty) < 1e-12:  # the default storm already ran on every seed
                sweep.append({"duty": duty, "comm_slowdown": slow["quiet"]["pfc-storm"]})
                continue
            t = np.array([r.step_us for r in over_seeds("pfc-storm", "quiet", duty)])
            sweep.append({"duty": duty, "comm_slowdown": _rel(t, base_of["quiet"])})
    return RiskMeasurement(
        tb, step, slow, counters, sweep, len(done), sum(r.wall_s for r in done), incast, storage
    )


def testbed_for(
    link_rate_gbps: float, buffer_bytes: int | None, hop_ns: float, leaf_spine_m: float, routing: str
) -> Testbed:
    """The testbed for one planned RoCE fabric: its NIC rate, switch hop latency and shared buffer
    (the catalog's, else Spectrum-4's conservative 128 MB), leaf-spine fibre length, routing."""
    buf = buffer_bytes or SPECTRUM4_BUFFER_BYTES
    return Testbed(
        link_rate_bps=int(link_rate_gbps * 1e9),
        switch_latency_ns=float(hop_ns),
        link_delay_ns=round(5.05 * float(leaf_spine_m), 3),
        buffer_bytes=int(buf),
        routing="adaptive" if routing == "adaptive" else "ecmp",
    )


__all__ = [
    "CONGESTION_SHARE",
    "JITTER_SWEEP_DUTY",
    "MISCONFIGS",
    "SMALL_JITTER_DUTY",
    "RiskMeasurement",
    "Testbed",
    "measure_testbed",
    "run_testbed",
    "testbed_for",
]
