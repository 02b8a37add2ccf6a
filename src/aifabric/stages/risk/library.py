"""The risk library: each failure and misconfiguration scenario (:class:`Trigger`) and the change it
makes to a testbed's baseline fabric (:func:`perturb`). Part of the *measure* stage's testbed
(:mod:`aifabric.stages.risk.testbed`, which runs them); the *risk* stage weighs them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from aifabric.stages.risk.testbed import Testbed

TRAFFIC = ("quiet", "congested")
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
MISMATCH_XOFF_BYTES = ECN_CUMULUS_KMIN // 2  # the second batch pauses below the ECN marking point
HORIZON_US = 20_000.0  # injected events are scheduled up to here; a ring not done by then is a hang
_BASELINE_WORDS = {
    "hpcc": "PFC dynamic thresholds (alpha 1/8, E.1) + HPCC (S13, S74): reaches max-min sharing",
    "dcqcn": "PFC dynamic thresholds + ECN 3 MiB / 12 MiB / 20 % + DCQCN paper parameters (E.4): this "
    "project's tuning (no public 400G set): marks only above the queue an ECMP collision of two ring "
    "flows builds, so DCQCN reacts to incast, not to hashing",
    "dcqcn-vendor": "as shipped: PFC dynamic thresholds + ECN at the NVIDIA Cumulus 'nv set qos roce' defaults "
    "(150 KB / 1.5 MB / 100 %, S11) + DCQCN at ConnectX firmware defaults (S12)",
    "pfc-only": "PFC dynamic thresholds, no ECN / congestion control (valid by design where admission "
    "control and deep buffers hold; the testbed models neither)",
    "none": "credit flow control, no congestion control (OpenSM default congestion_control FALSE; not re-read)",
    "nscc": "Ultra Ethernet transport, lossy (no PFC): packets sprayed over 64 entropy values, switches trim "
    "at a full queue (1 x BDP), the receiver NACKs at once, selective retransmission, NSCC window on ECN "
    "and delay (UEC 1.0 defaults as in docs/ultra-ethernet.md)",
    "nscc-pfc": "Ultra Ethernet transport in a lossless class: as nscc, with PFC dynamic thresholds (alpha 1/8) "
    "on the class and the trim limit at the whole buffer, so PFC pauses first (UEC 1.0 allows lossless "
    "operation; not a uec-* design's default)",
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
        if tb.technology == "uet" and self.id in PFC_SCENARIOS and tb.baseline != "nscc-pfc":
            return False, "the UET design runs lossy (no PFC): PFC scenarios apply only to a lossless class"
        if tb.technology not in self.fabrics:
            return False, f"not a {tb.technology} mechanism"
        if self.id in UET_NOT_MODELLED:
            return False, UET_NOT_MODELLED[self.id]
        if self.id in ("ecn-off", "dcqcn-defaults") and not tb.has_cc:
            return False, "the chosen baseline runs without congestion control by design"
        if self.id == "dcqcn-defaults" and tb.baseline == "dcqcn-vendor":
            return False, "the baseline is the vendor defaults (as shipped): nothing to get wrong"
        if self.id == "ib-cc-off" and tb.baseline != "ib-cc":
            return False, "the baseline runs InfiniBand without congestion control (as shipped)"
        if self.id == "lossy-go-back-n" and not tb.has_cc:
            return False, "same as lossy-class on a baseline without congestion control"
        if tb.single_switch and self.id in ONE_SWITCH_ABSENT:
            return False, ONE_SWITCH_ABSENT[self.id]
        if self.id == "ib-no-ar" and tb.routing != "adaptive":
            return False, "the fabric already routes statically"
        if self.id == "ecmp-polarisation" and (tb.technology != "roce" or tb.routing != "ecmp"):
            return False, "only ECMP hashing polarises"
        if self.id == "ecmp-polarisation" and tb.tiers < 3:
            return False, "a two-tier fabric hashes once (at the leaf): nothing to polarise"
        return True, ""


# what does not exist on a fabric of one switch (the testbed is then one switch too)
ONE_SWITCH_ABSENT = {
    "ib-no-ar": "one switch: one path between any two hosts, nothing to route adaptively",
    "link-failure": "one switch: no switch-to-switch link (a failed host link stops its node: job interruptions)",
    "pfc-threshold-mismatch": "one switch: one batch, one set of PFC thresholds",
    "ecmp-polarisation": "one switch: no hashing between switches",
}
ROCE, IB, BOTH = ("roce",), ("infiniband",), ("roce", "infiniband", "uet")
UET = ("uet",)
PFC_FABRICS = ("roce", "uet")  # lossless RoCE, and UET only in a lossless class (baseline nscc-pfc)
PFC_SCENARIOS = ("pfc-threshold-mismatch", "pfc-storm", "pfc-watchdog-off")
# UET scenarios the packet engine cannot run yet, with the reason (reported as not applicable)
UET_NOT_MODELLED = {
    "uet-llr-off": "not measured: the packet engine models link frame errors and LLR "
    "(fabric.link_errors), but one frame error rate for every link; a sourced error rate for long "
    "(optical) links and a per-link-class setting on the testbed are missing",
}
# NSCC mis-set: base_rtt (and with it target_qdelay) configured this many times the fabric's own
NSCC_MISSET_FACTOR = 10
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
            PFC_FABRICS,
            "two switch batches with different PFC thresholds: unbalanced back-pressure",
            f"half the leaves and spines pause at a static xoff of {MISMATCH_XOFF_BYTES} B "
            "(below the ECN marking point)",
        ),
        Trigger(
            "pfc-storm",
            PFC_FABRICS,
            "spurious PAUSE from one spine (flow-control firmware bug): small network jitter",
            "spine0 pauses every neighbour 2 us every 100 us; too short for the PFC watchdog to see "
            "(on a one-switch plan: the switch)",
            kind="fault",
        ),
        Trigger(
            "pfc-watchdog-off",
            PFC_FABRICS,
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
            "the same hash seed on every tier: the tier above repeats the tier below's choice",
            "ecmp_hash: same-seed on a three-tier fat-tree pod (k = 8, 128 hosts), ring step across pods, "
            "against per-switch seeds on the same pod",
            traffic=("three-tier",),
        ),
        Trigger(
            "ib-cc-off",
            IB,
            "InfiniBand congestion control left off in the subnet manager (the tuned state expects it on)",
            "the baseline with IB congestion control (FECN marking and the BECN reaction) switched off: "
            "credits alone hold the fabric, back-pressure spreads from hot spots (the twin of RoCE's ecn-off)",
        ),
        Trigger(
            "ib-no-ar",
            IB,
            "subnet manager routing engine without adaptive routing: static linear forwarding tables",
            "routing static (D-mod-K style linear forwarding) instead of adaptive",
        ),
        Trigger(
            "uet-trimming-off",
            UET,
            "packet trimming off on the switches: a full queue drops, the sender waits for its timeout",
            "uet.trimming false (drop at a full queue, 5 x BDP; recovery by retransmission timeout)",
        ),
        Trigger(
            "uet-spraying-off",
            UET,
            "spraying off / entropy-value count too low: each flow stays on one ECMP path, hashing collides",
            "uet.ev_count 1 (one entropy value per flow: per-flow ECMP, as RoCE's hash)",
        ),
        Trigger(
            "uet-nscc-off",
            UET,
            "NSCC left off: senders at line rate, only trimming and retransmission hold the fabric",
            "congestion_control none (no window; trimming and NACKs still on): the twin of RoCE's ecn-off",
        ),
        Trigger(
            "uet-nscc-misset",
            UET,
            "NSCC parameters mis-set: base RTT (and its target queueing delay) from another fabric",
            f"uet.nscc.base_rtt and target_qdelay {NSCC_MISSET_FACTOR} x this fabric's unloaded round trip: "
            "the window reacts late, queues build and trim",
        ),
        Trigger(
            "uet-llr-off",
            UET,
            "link-level retry off on long (optical) links: a corrupted packet costs an end-to-end retransmission",
            "not measured (see why in not_applicable)",
            kind="fault",
        ),
        Trigger(
            "uet-roce-fallback",
            UET,
            "a NIC without UET (firmware or profile) falls back to RoCE on the lossy fabric: go-back-N on every drop",
            "transport rc (RoCE go-back-N) + DCQCN (paper parameters) on the same lossy fabric, ECN marked "
            "over UET's band (0.2 to 0.8 BDP); "
            "all flows fall back (RoCE's own risks then apply as to a lossy RoCE design)",
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
def _uet_fabric(tb: Testbed) -> dict:
    """The UET baseline: lossy Ethernet, Ultra Ethernet transport with its defaults (docs/ultra-ethernet.md);
    ``nscc-pfc``: the same in a lossless class."""
    fab = {
        "technology": "roce",
        "transport": "uet",
        "mtu": "4096B",
        "header": "64B",
        "switch_latency": f"{tb.switch_latency_ns:g}ns",
        "switch_buffer": f"{tb.buffer_bytes}B",
        "congestion_control": "nscc",
        "routing": "ecmp",
        "uet": {"trimming": True, "ev_count": 64},
    }
    if tb.baseline == "nscc-pfc":  # lossless: PFC pauses before a queue could reach the trim limit
        fab["pfc"] = {"enabled": True, "mode": "dynamic", "alpha": TUNED_ALPHA}
        fab["uet"]["queue_limit"] = f"{tb.buffer_bytes}B"
    return fab


def unloaded_rtt_us(tb: Testbed) -> float:
    """The testbed's longest unloaded round trip (an MTU packet out across leaf-spine-leaf, a 64 B
    ACK back): 4 links of propagation and 3 switch hops each way, serialisation at each link."""
    links = 2 if tb.single_switch else 4
    hops = links - 1
    ser_us = (4096 + 64 + 64) * 8 / tb.link_rate_bps * 1e6 * links
    return 2 * (links * tb.link_delay_ns + hops * tb.switch_latency_ns) / 1000 + ser_us


def _perturb_uet(tb: Testbed, sid: str, fab: dict) -> bool:
    """Apply a UET scenario to ``fab``; False when ``sid`` is not one."""
    if sid == "uet-trimming-off":
        fab["uet"] = {**fab["uet"], "trimming": False}
    elif sid == "uet-spraying-off":
        fab["uet"] = {**fab["uet"], "ev_count": 1}
    elif sid == "uet-nscc-off":
        fab["congestion_control"] = "none"
    elif sid == "uet-nscc-misset":
        rtt = NSCC_MISSET_FACTOR * unloaded_rtt_us(tb)
        fab["uet"] = {
            **fab["uet"],
            "nscc": {"base_rtt": f"{rtt:.3f}us", "target_qdelay": f"{0.75 * rtt:.3f}us"},
        }
    elif sid == "uet-roce-fallback":
        fab.pop("uet")
        bdp = tb.link_rate_bps / 8 * unloaded_rtt_us(tb) * 1e-6  # UET's marking band: 0.2 to 0.8 BDP
        ecn = {"kmin": int(0.2 * bdp), "kmax": int(0.8 * bdp), "pmax": 1.0}
        fab.update(transport="rc", congestion_control="dcqcn", pfc={"enabled": False}, ecn=_ecn(ecn))
        fab["dcqcn"] = {"preset": "paper"}
    else:
        return False
    return True


def _baseline_fabric(tb: Testbed) -> dict:
    if tb.technology == "uet":
        return _uet_fabric(tb)
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
        elif tb.baseline == "dcqcn-vendor":
            fab["ecn"] = _ecn(ECN_CUMULUS)
            fab["congestion_control"] = "dcqcn"
            fab["dcqcn"] = {"preset": "nvidia-firmware"}
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
    if tb.technology == "uet" and _perturb_uet(tb, sid, fab):
        return fab
    if sid == "ecn-off":
        fab.update(congestion_control="none", ecn={"enabled": False})
    elif sid == "ib-cc-off":
        fab["congestion_control"] = "none"
        fab.pop("ecn", None)
        fab.pop("dcqcn", None)
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
                "node": "sw0" if tb.single_switch else "spine0",
                "start": f"{period / 2:g}us",
                "duration": f"{pause:g}us",
                "period": f"{period:g}us",
                "count": int(HORIZON_US // period),
            }
        ]
    elif sid in ("pfc-watchdog-off", "stuck-receiver"):
        fab["receiver_stalls"] = [_stall(target_name(tb), 0.0, HORIZON_US)]
        if sid == "stuck-receiver" and tb.technology != "uet":  # lossy UET: nothing to pause
            fab["pfc_watchdog"] = {"detection": f"{tb.watchdog_us:g}us"}
    elif sid == "lossy-class":
        fab.update(pfc={"enabled": False}, ecn={"enabled": False}, congestion_control="none")
    elif sid == "lossy-go-back-n":
        fab["pfc"] = {"enabled": False}
    elif sid == "ecmp-polarisation":
        fab["ecmp_hash"] = "same-seed"
    elif sid == "ib-no-ar":
        fab["routing"] = "static"
        fab.pop("adaptive", None)
    elif sid == "slow-receiver":
        period = 10.0
        fab["receiver_stalls"] = [_stall(target_name(tb), 0.0, (1 - tb.slow_drain) * period, period)]
    elif sid == "straggler-nic":
        period = 10.0
        fab["receiver_stalls"] = [
            _stall(f"h{_straggler(tb)}", 0.0, (1 - tb.straggler_drain) * period, period)
        ]
    elif sid == "link-failure":
        fab["failures"] = [{"link": "leaf0-spine0", "at": "0us"}]
    elif sid == "jitter":
        fab["receiver_stalls"] = _jitter_stalls(tb, duty, share)
    else:
        raise KeyError(sid)
    return fab


def _straggler(tb: Testbed) -> int:
    """The straggler NIC: host ``hosts_per_leaf`` (the first host of leaf 1, a ring member) on the
    ideal placement, else the job's first ring member."""
    return tb.hosts_per_leaf if tb.placement == "ideal" else ring_members(tb)[0]


def placed_rings(tb: Testbed) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """A non-ideal placement's rings on the pod (:mod:`aifabric.workload.placement`): the job's
    hosts in ring order, and each background job's (``shared``). Every pod host but the incast
    target is a slot; ``occupancy`` of them are held by other jobs."""
    from aifabric.workload.placement import place

    target = tb.hosts_per_leaf - 1
    pool = np.array([x for x in range(tb.leaves * tb.hosts_per_leaf) if x != target])
    pl = place(tb.placement, len(pool), tb.occupancy, tb.background_jobs, tb.placement_seed)
    return pool[list(pl.nodes)], tuple(pool[list(b)] for b in pl.background)


def ring_members(tb: Testbed) -> list[int]:
    """The hosts of the ring step (the job), in host order."""
    if tb.placement == "ideal":
        return [h for h in range(tb.leaves * tb.hosts_per_leaf) if h != tb.hosts_per_leaf - 1]
    return sorted(placed_rings(tb)[0].tolist())


def _jitter_stalls(tb: Testbed, duty: float, share: float) -> list[dict]:
    """Short stalls (``storm_pause_us``) at ``duty`` on ``share`` of the ring's receiving NICs, their
    phases spread evenly over the period (NIC k at (k + ½)/n of it): a fixed, unbiased spread, so the
    same inputs give the same scenario and one jittering NIC is not always caught at time 0."""
    ring = ring_members(tb)
    n = max(1, round(share * len(ring)))
    period = tb.storm_pause_us / duty
    out = []
    for k, h in enumerate(ring[:: max(1, len(ring) // n)][:n]):
        phase = period * (k + 0.5) / n
        out.append(_stall(f"h{h}", phase, tb.storm_pause_us, period))
    return out


# A lossy RoCE design (PFC off on purpose, issue 14): its own cost is the testbed's lossy-go-back-n
# run (PFC off, the baseline's congestion control on, NIC go-back-N retransmission; lossy-class where
# the baseline has no congestion control) against the lossless baseline, always present (p = d = 1);
# the PFC mistakes cannot happen on it. A design with its own storage network (the hybrid's front
# end) has no storage incast on its back end.
LOSSY_DESIGN = "lossy-by-design"
NOT_ON_LOSSY = PFC_SCENARIOS
LOSSY_P_D = (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "a design choice, not a failure: always present")


@dataclass(frozen=True)
class DesignView:
    """Which measured scenarios apply to one design, and which one is the design itself."""

    lossy: bool
    own_storage_network: bool
    own: str = "lossy-go-back-n"  # the lossy run that stands for a lossy design

    @classmethod
    def of(cls, fd, measured) -> DesignView:
        lossy = bool(getattr(fd, "lossy", False)) and fd.technology == "roce"
        own = "lossy-go-back-n" if "lossy-go-back-n" in measured else "lossy-class"
        return cls(lossy, bool(getattr(fd, "front_end", None)), own)

    def skips(self, sid: str) -> bool:
        if sid == "storage-incast":
            return self.own_storage_network
        return self.lossy and (sid in NOT_ON_LOSSY or (sid == "lossy-go-back-n" and sid != self.own))

    def is_design(self, sid: str) -> bool:
        return self.lossy and sid == self.own

    def name(self, sid: str, breaks: str) -> tuple[str, str]:
        if not self.is_design(sid):
            return sid, breaks
        return LOSSY_DESIGN, f"the design runs RoCE lossy ({sid} measured): {breaks}"
