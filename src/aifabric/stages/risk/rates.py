"""The risk stage's rates and durations (:data:`RATES`): how often each failure happens and how long
each mistake stays, with its source or marked as an assumption with a range. Split out of
:mod:`aifabric.stages.risk.assess`, which re-exports every name; users override them in the scenario's
``risk:`` section."""

from __future__ import annotations

import math
from dataclasses import dataclass

from aifabric.stages.risk.testbed import CONGESTION_SHARE

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

# Component fault rates, per 1,000 components a year, counted independently of the Llama 3 paper
# (which ``aifabric validate --interruptions`` checks the model against): StepFun's public fault
# trace of its LLM-pretraining cluster, github.com/stepfun-ai/InfiniteHBD-Trace, fault_statistics.json
# (Shou et al., "InfiniteHBD", SIGCOMM 2025, arXiv 2502.03885): 400 GPU servers, 348 days. Back-end
# ("parameter plane") cable "Link Down": 40 events; NIC: "NIC Lost" 8 + "Rnic Gid Error" 11 = 19
# that break RDMA connectivity (the job stops), "NIC Link Speed low" 10 + "NIC PCI link Width low" 1
# = 11 that degrade a NIC (a straggler). The trace does not give the NICs per server: ASSUMPTION 8
# (one 400G back-end NIC and one cable per GPU on an 8-GPU server, the HGX reference design; 4 would
# double every rate). Range: the exact (Garwood) 95 % Poisson interval of each count.
STEPFUN = "StepFun fault trace (InfiniteHBD-Trace, SIGCOMM 2025): 400 GPU servers, 348 days"
_TRACE_SERVERS, _TRACE_DAYS, TRACE_NICS_PER_SERVER = 400, 348, 8
_TRACE_LINK_DOWN, _TRACE_NIC_STOP, _TRACE_NIC_DEGRADED = 40, 8 + 11, 10 + 1


def poisson_interval(k: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Garwood) two-sided interval of a Poisson mean from ``k`` observed events, found by
    bisection on the Poisson CDF: the means at which P(X ≥ k) and P(X ≤ k) equal (1 − confidence)/2."""
    tail = (1.0 - confidence) / 2

    def cdf(n: int, mu: float) -> float:  # P(X <= n)
        term = total = math.exp(-mu)
        for i in range(1, n + 1):
            term *= mu / i
            total += term
        return total

    def solve(f) -> float:  # f increasing in mu, root in [0, k + 20 sqrt(k + 1) + 20]
        lo, hi = 0.0, k + 20 * math.sqrt(k + 1) + 20
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(lambda mu: (1 - cdf(k - 1, mu)) - tail)
    high = solve(lambda mu: tail - cdf(k, mu))
    return low, high


def _per_1000_year(events: float) -> float:
    """Events in the trace → events per 1,000 NICs (or back-end cables) a year."""
    return events / (_TRACE_SERVERS * TRACE_NICS_PER_SERVER / 1000) / (_TRACE_DAYS / 365)


def _rate(events: int) -> tuple[float, float, float]:
    lo, hi = poisson_interval(events)
    return _per_1000_year(events), _per_1000_year(lo), _per_1000_year(hi)


LINK_FAULTS = _rate(_TRACE_LINK_DOWN)  # (mid, low, high) ≈ 13.1 (9.4-17.9) per 1,000 links a year
NIC_FAULTS = _rate(_TRACE_NIC_STOP)  # ≈ 6.2 (3.8-9.7) per 1,000 NICs a year
NIC_DEGRADED = _rate(_TRACE_NIC_DEGRADED)  # ≈ 3.6 (1.8-6.5) per 1,000 NICs a year
LINK_FAULTS_PER_1000_YEAR, NIC_FAULTS_PER_1000_YEAR = LINK_FAULTS[0], NIC_FAULTS[0]

# Gill, Jain, Nagappan, "Understanding Network Failures in Data Centers", SIGCOMM 2011 (Microsoft,
# one year, thousands of devices): ToRs fail with a probability of about 5 % a year, aggregation
# switches about 10 %. Range: 2.5 % (assumption: half) to 10 % (the aggregation-switch figure;
# Singh et al., CCR 2021, "Surviving switch failures in cloud datacenters": a 2 % chance of a
# failure within 3 months of deployment, ≈ 8 % a year, lies inside it).
SWITCH_FAULTS_PER_1000_YEAR = (50.0, 25.0, 100.0)
SWITCH_FAULT_BASIS = (
    "switch faults 50 per 1,000 switches per year (25-100): ToRs ~5 %/year, aggregation switches "
    "~10 %/year (Gill et al., SIGCOMM 2011); a failed switch stays out for the link-failure repair "
    "time (assumption 4 h, 1-24 h)"
)

# The Llama 3 405B run the model is checked against (Dubey et al. 2024, "The Llama 3 Herd of
# Models", arXiv 2407.21783, Table 5): 16,384 H100, 54 days, 419 unexpected interruptions.
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
        basis=f"NIC faults {NIC_FAULTS_PER_1000_YEAR:.1f} per 1,000 per year ({STEPFUN}); assumption: 20 % "
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
        *LINK_FAULTS,
        hours=(4.0, 1.0, 24.0),
        components="fabric-links",
        basis=f"cable / transceiver faults {LINK_FAULTS[0]:.1f} ({LINK_FAULTS[1]:.1f}-{LINK_FAULTS[2]:.1f}) per "
        f"1,000 links per year ({STEPFUN}: 40 back-end link-down events, {TRACE_NICS_PER_SERVER} cables per "
        "server assumed; the same rate for leaf-spine links); capacity lost until repaired: assumption 4 h "
        "(1-24 h)",
    ),
    "straggler-nic": Rate(
        "per-1000",
        *NIC_DEGRADED,
        hours=(72.0, 24.0, 336.0),
        components="nics",
        basis=f"degraded NICs (link speed low, PCIe width low) {NIC_DEGRADED[0]:.1f} ({NIC_DEGRADED[1]:.1f}-"
        f"{NIC_DEGRADED[2]:.1f}) per 1,000 per year ({STEPFUN}: 11 events); assumption: a straggler is found "
        "in 3 days (1-14)",
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
INTERRUPT_HOURS_BASIS = (
    "each interruption stops the synchronous job for 15 min (6-40 min) of detection + restart + lost work "
    "since the checkpoint on every GPU (assumption; Llama 3's >90 % effective training time with 466 "
    "interruptions in 54 days bounds the mean at ~17 min)"
)
# NCCL's RC queue pairs: the local ACK timeout is 4.096 µs x 2^NCCL_IB_TIMEOUT (default 20: 4.29 s) and
# the QP retransmits NCCL_IB_RETRY_CNT times (default 7) before it completes in error (IBV_WC_RETRY_EXC_ERR),
# on which NCCL aborts the communicator: the job survives a path that comes back within
# (1 + 7) x 4.29 s ≈ 34 s (IBTA spec 1.2 §12.7.34 / §12.7.38 as quoted by Open MPI's help text;
# NCCL defaults: hardware-facts F, S15). The same verbs transport runs RoCE: one budget for both fabrics.
NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT = 20, 7
NCCL_RETRY_BUDGET_S = 4.096e-6 * 2**NCCL_IB_TIMEOUT * (1 + NCCL_IB_RETRY_CNT)
# Detection + re-route after a fabric-link (or spine / core switch) failure, seconds (mid, low, high).
# A host link or a leaf has no second path for a single-homed NIC: it always stops the job.
REROUTE_S = {
    # SHIELD / Fast Link Fault Recovery, on by default (opensm.conf shield_mode; NVIDIA "InfiniBand
    # Cluster Bring-up Procedure", SHIELD): the switch picks another port of the AR group without the
    # subnet manager; Mellanox: 5,000x faster than the SM's 10-20 s on a very large fabric (J. Lotto,
    # EnterpriseAI 2017-06-15) -> 2-4 ms
    ("infiniband", "adaptive"): (0.003, 0.002, 0.004),
    # static routing: the port-down trap makes the SM re-sweep, recompute and upload the LFTs:
    # "as long as 10-20 seconds" for very large fabrics (same source)
    ("infiniband", "static"): (15.0, 10.0, 20.0),
    # ASSUMPTION (no public measured figure): carrier loss takes the port down, the eBGP session over it
    # resets at once (fast external fallover) and the next hop leaves the ECMP group; withdrawals are not
    # rate-limited (RFC 4271 §9.2.1.1); BFD bounds a failure without carrier loss. 0.2 s (0.05-1 s)
    ("roce", "adaptive"): (0.2, 0.05, 1.0),
    ("roce", "ecmp"): (0.2, 0.05, 1.0),
}
RECONVERGE_S = REROUTE_S  # the name before issue 25
INTERRUPT_BASIS = (
    f"job stops: every NIC fault ({NIC_FAULTS[0]:.1f} per 1,000 a year), every host-link fault on a "
    f"single-homed NIC and fabric-link faults only where detection + re-route outlasts NCCL's retry budget "
    f"({LINK_FAULTS[0]:.1f} per 1,000 links a year; {STEPFUN}), every leaf fault on single-homed NICs and "
    f"spine / core faults like fabric links ({SWITCH_FAULTS_PER_1000_YEAR[0]:.0f} per 1,000 switches a year, "
    f"Gill et al. SIGCOMM 2011); NCCL budget (1 + {NCCL_IB_RETRY_CNT}) x 4.096 us x 2^{NCCL_IB_TIMEOUT} = "
    f"{NCCL_RETRY_BUDGET_S:.0f} s; {INTERRUPT_HOURS_BASIS}"
)


def _assumption(name, value, unit, source, rng, kind, applies_to=("infiniband", "roce")) -> dict:
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "applies_to": list(applies_to),
        "source": source,
        "range": None if rng is None else [rng[0], rng[1]],
        "alternatives": None,
        "kind": kind,
        "decides": False,
    }


def failure_assumptions() -> list[dict]:
    """The failure model's inputs for the assumption register: component fault rates (probability)
    and the times that decide whether a fault stops the job (physics), each with its source and range."""
    trace = f"{STEPFUN}, fault_statistics.json"
    rr = REROUTE_S
    return [
        _assumption(
            "failures.link_per_1000_per_year",
            LINK_FAULTS[0],
            "faults per 1,000 links a year",
            f"{trace}: 40 back-end cable link-down events / (400 x {TRACE_NICS_PER_SERVER} cables) / 348 days; "
            "range: 95 % Poisson interval; used for host and fabric links alike",
            LINK_FAULTS[1:],
            "probability",
        ),
        _assumption(
            "failures.nic_per_1000_per_year",
            NIC_FAULTS[0],
            "faults per 1,000 NICs a year",
            f"{trace}: NIC Lost 8 + Rnic Gid Error 11 (connectivity lost); range: 95 % Poisson interval",
            NIC_FAULTS[1:],
            "probability",
        ),
        _assumption(
            "failures.nic_degraded_per_1000_per_year",
            NIC_DEGRADED[0],
            "degradations per 1,000 NICs a year",
            f"{trace}: NIC Link Speed low 10 + NIC PCI link Width low 1 (stragglers, not stops); 95 % interval",
            NIC_DEGRADED[1:],
            "probability",
        ),
        _assumption(
            "failures.trace_nics_per_server",
            TRACE_NICS_PER_SERVER,
            "back-end NICs (and cables) per traced server",
            "ASSUMPTION (no public source: the trace does not say): one NIC per GPU on an 8-GPU server; "
            "4 would double the link and NIC rates",
            (4, 8),
            "probability",
        ),
        _assumption(
            "failures.switch_per_1000_per_year",
            SWITCH_FAULTS_PER_1000_YEAR[0],
            "faults per 1,000 switches a year",
            "Gill, Jain, Nagappan, SIGCOMM 2011: ToRs ~5 %, aggregation switches ~10 % a year",
            SWITCH_FAULTS_PER_1000_YEAR[1:],
            "probability",
        ),
        _assumption(
            "failures.nccl_retry_budget_s",
            NCCL_RETRY_BUDGET_S,
            "s",
            f"(1 + NCCL_IB_RETRY_CNT {NCCL_IB_RETRY_CNT}) x 4.096 us x 2^NCCL_IB_TIMEOUT {NCCL_IB_TIMEOUT} "
            "(NCCL defaults, hardware-facts F / S15; IBTA 1.2 §12.7.34, §12.7.38)",
            None,
            "physics",
        ),
        _assumption(
            "failures.reroute_s.infiniband.adaptive",
            rr[("infiniband", "adaptive")][0],
            "s",
            "SHIELD fast link fault recovery (on by default, opensm shield_mode): 5,000x faster than the "
            "SM's 10-20 s (Mellanox, EnterpriseAI 2017-06-15)",
            rr[("infiniband", "adaptive")][1:],
            "physics",
            ("infiniband",),
        ),
        _assumption(
            "failures.reroute_s.infiniband.static",
            rr[("infiniband", "static")][0],
            "s",
            "subnet-manager re-sweep and LFT upload: 10-20 s on a very large fabric (Mellanox, EnterpriseAI "
            "2017-06-15)",
            rr[("infiniband", "static")][1:],
            "physics",
            ("infiniband",),
        ),
        _assumption(
            "failures.reroute_s.roce",
            rr[("roce", "ecmp")][0],
            "s",
            "ASSUMPTION (no public measured figure): carrier loss, eBGP fast external fallover, ECMP next-hop "
            "removal; withdrawals not rate-limited (RFC 4271 §9.2.1.1)",
            rr[("roce", "ecmp")][1:],
            "physics",
            ("roce",),
        ),
        _assumption(
            "failures.interrupt_hours",
            INTERRUPT_HOURS[0],
            "GPU-hours lost per GPU per interruption",
            f"ASSUMPTION: {INTERRUPT_HOURS_BASIS}",
            INTERRUPT_HOURS[1:],
            "physics",
        ),
        _assumption(
            "failures.repair_hours",
            RATES["link-failure"].hours[0],
            "h a failed link or switch stays out",
            "ASSUMPTION (no public source)",
            RATES["link-failure"].hours[1:],
            "physics",
        ),
    ]
