"""The risk stage's rates and durations (:data:`RATES`): how often each failure happens and how long
each mistake stays, with its source or marked as an assumption with a range. Split out of
:mod:`aifabric.stages.risk`, which re-exports every name; users override them in the scenario's
``risk:`` section."""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.stages.testbed import CONGESTION_SHARE

HOURS_PER_YEAR = 8760.0
# Probability that a given lossless setting is wrong in the deployment. ASSUMPTION, no public source.
MISCONFIG_PROBABILITY = {"none": 0.5, "some": 0.2, "expert": 0.05}
MISCONFIG_RANGE = {"none": (0.3, 0.8), "some": (0.1, 0.4), "expert": (0.02, 0.1)}
# Days until a wrong setting is found (without / with the audit in CI). ASSUMPTION, no public source.
DAYS_TO_FIND = {"none": (90, 30, 180), "some": (30, 7, 90), "expert": (7, 1, 30)}
DAYS_TO_FIND_AUDIT = (1, 0.5, 3)
MISCONFIG_PROBABILITY_BASIS = (
    "assumption (no public source): none 50 % (30-80), some 20 % (10-40), expert 5 % (2-10) chance "
    "that a given lossless setting is wrong in the deployment; it costs until found: 90 / 30 / 7 days "
    "(1 day with the audit in CI); expected losses combine as 1 - prod(1 - p d l)"
)

# Llama 3 405B (Dubey et al. 2024, "The Llama 3 Herd of Models", Table 5): 16,384 H100, 54 days,
# 419 unexpected interruptions; 35 "network switch/cable", 7 "NIC". One NIC per GPU; links
# ESTIMATED at 3 per GPU (three-tier non-blocking fabric) to turn the count into a rate per link.
_LLAMA3_GPUS, _LLAMA3_DAYS = 16_384, 54
LINK_FAULTS_PER_1000_YEAR = 35 / (3 * _LLAMA3_GPUS / 1000) / _LLAMA3_DAYS * 365  # ≈ 4.8
NIC_FAULTS_PER_1000_YEAR = 7 / (_LLAMA3_GPUS / 1000) / _LLAMA3_DAYS * 365  # ≈ 2.9
LLAMA3 = "Llama 3 paper (Dubey et al. 2024) Table 5: 16,384 H100, 54 days"


@dataclass(frozen=True)
class Rate:
    """How often a scenario is present and for how long, with its basis (a source or an assumption)."""

    kind: str  # "mistake" (per deployment, by expertise) | "per-1000" (components from the BOM) | "share"
    value: float  # mistake: probability; per-1000: events per 1,000 components per year; share: of time
    low: float
    high: float
    hours: tuple[float, float, float] = (0.0, 0.0, 0.0)  # per-1000: hours present per event (mid, low, high)
    components: str = ""  # per-1000: "links" | "fabric-links" | "nics" | "switches"
    basis: str = ""


RATES: dict[str, Rate] = {
    "pfc-storm": Rate(
        "mistake",
        0.05,
        0.01,
        0.2,
        basis="assumption: a flow-control firmware bug in 5 % (1-20 %) of deployments per year (the "
        "seed's story is one); present until a firmware fix, found like a mistake",
    ),
    "slow-receiver": Rate(
        "share",
        0.1 * CONGESTION_SHARE,
        0.02 * CONGESTION_SHARE,
        0.3 * CONGESTION_SHARE,
        basis="assumption: 10 % (2-30 %) of the congested time has a receiver draining at half rate",
    ),
    "stuck-receiver": Rate(
        "per-1000",
        0.2 * NIC_FAULTS_PER_1000_YEAR,
        0.05 * NIC_FAULTS_PER_1000_YEAR,
        0.5 * NIC_FAULTS_PER_1000_YEAR,
        hours=(0.4 / 3600, 0.27 / 3600, 0.6 / 3600),
        components="nics",
        basis=f"NIC faults {NIC_FAULTS_PER_1000_YEAR:.1f} per 1,000 per year ({LLAMA3}); assumption: 20 % "
        "(5-50 %) of them stall with PAUSE / credits held; contained in 0.4 s (PFC watchdog 200 ms detect "
        "+ 200 ms restore, E.2; IB leaf head-of-queue lifetime ~0.27 s, OpenSM default, not re-read)",
    ),
    "pfc-watchdog-off": Rate(
        "per-1000",
        0.2 * NIC_FAULTS_PER_1000_YEAR,
        0.05 * NIC_FAULTS_PER_1000_YEAR,
        0.5 * NIC_FAULTS_PER_1000_YEAR,
        hours=(2.0, 0.5, 8.0),
        components="nics",
        basis="the stuck-receiver rate x the chance the watchdog is off (the mistake probability); the "
        "pause holds until a person finds the NIC: assumption 2 h (0.5-8 h)",
    ),
    "link-failure": Rate(
        "per-1000",
        LINK_FAULTS_PER_1000_YEAR,
        LINK_FAULTS_PER_1000_YEAR / 2,
        LINK_FAULTS_PER_1000_YEAR * 2,
        hours=(4.0, 1.0, 24.0),
        components="fabric-links",
        basis=f"switch/cable faults {LINK_FAULTS_PER_1000_YEAR:.1f} per 1,000 links per year ({LLAMA3}; links "
        "estimated at 3 per GPU, range x0.5-x2); capacity lost until repaired: assumption 4 h (1-24 h)",
    ),
    "straggler-nic": Rate(
        "per-1000",
        NIC_FAULTS_PER_1000_YEAR,
        NIC_FAULTS_PER_1000_YEAR / 3,
        NIC_FAULTS_PER_1000_YEAR * 3,
        hours=(72.0, 24.0, 336.0),
        components="nics",
        basis=f"assumption: as many NICs degrade (link trained down, PCIe, thermal) as fail "
        f"({NIC_FAULTS_PER_1000_YEAR:.1f} per 1,000 per year, {LLAMA3}; x1/3-x3); a straggler is found in "
        "3 days (1-14)",
    ),
    "storage-incast": Rate(
        "share",
        CONGESTION_SHARE,
        0.1,
        0.5,
        basis="the congestion share (assumption): storage / checkpoint traffic overlaps 25 % (10-50 %) of "
        "communication time",
    ),
}
MISTAKE_RATE = Rate("mistake", 0.0, 0.0, 0.0, basis=MISCONFIG_PROBABILITY_BASIS)

# Job interruptions (goodput)
INTERRUPT_HOURS = (0.25, 0.1, 0.67)  # detection + restart + half a checkpoint interval per interruption
INTERRUPT_BASIS = (
    f"NIC faults {NIC_FAULTS_PER_1000_YEAR:.1f} and host-link faults {LINK_FAULTS_PER_1000_YEAR:.1f} per 1,000 "
    f"per year ({LLAMA3}); each stops the synchronous job for 15 min (6-40 min) of detection + restart + "
    "lost work since the checkpoint on every GPU (assumption; Llama 3's >90 % effective training time with "
    "466 interruptions in 54 days bounds the mean at ~17 min)"
)
NCCL_RETRY_BUDGET_S = 4.096e-6 * 2**20 * 7  # NCCL_IB_TIMEOUT 20 x NCCL_IB_RETRY_CNT 7 (hardware-facts F, S15)
RECONVERGE_S = {  # ASSUMPTION: re-convergence after a fabric-link failure (mid, low, high)
    ("infiniband", "adaptive"): (0.001, 0.0001, 0.01),  # switch-local AR failover (no public figure)
    ("infiniband", "static"): (5.0, 1.0, 60.0),  # subnet-manager heavy sweep and LFT upload
    ("roce", "adaptive"): (0.2, 0.05, 1.0),  # BFD + BGP withdraw / ECMP group update
    ("roce", "ecmp"): (0.2, 0.05, 1.0),
}
