"""Stage 5 — *risk*: for each failure or misconfiguration scenario, a perturbed measurement sent
through *performance* again; expected loss = the scenario's probability × the slowdown it causes.

Input: the earlier stages' evidence and the team's expertise. Output: :class:`FabricRisk` per
fabric in :class:`RiskEvidence`.

* **Lossless-Ethernet mistakes** (RoCE fabrics on more than one node): each mistake of
  :data:`aifabric.stages.testbed.MISCONFIGS` is measured on the packet-level testbed at the fabric's
  NIC rate, hop latency, buffer, leaf-spine length and routing
  (:func:`aifabric.stages.testbed.measure_testbed`); the ring-step slowdown, time-averaged with the
  congestion share, becomes the fabric's measurement under that mistake
  (:meth:`~aifabric.stages.measure.FabricNetwork.with_slowdown`), and *performance* is run on it.
* **Adaptive routing off** (a RoCE design that relies on adaptive routing): the *measure* stage
  re-measures the workload's patterns with ECMP, and *performance* runs on that.
* InfiniBand: none of these knobs exist on it; its risk is empty (subnet-manager mistakes, credit
  congestion spreading and link failures are not modelled yet — issue 13).

Probabilities are assumptions (:data:`MISCONFIG_PROBABILITY`); expected losses of the mistakes add.
Add a scenario here: a function that returns a perturbed ``FabricNetwork`` (or design → *measure*)
and a probability; :func:`assess` sends it through *performance* like the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aifabric.stages.measure import measure_fabric
from aifabric.stages.performance import iteration_slowdown
from aifabric.stages.testbed import (
    CONGESTION_SHARE,
    MISCONFIGS,
    SMALL_JITTER_DUTY,
    RiskMeasurement,
    measure_testbed,
    testbed_for,
)

# Probability that a team mis-tunes one lossless-Ethernet setting (PFC thresholds, ECN, DCQCN,
# hashing) somewhere in the fabric. ASSUMPTION, no public source: stated in every report.
MISCONFIG_PROBABILITY = {"none": 0.5, "some": 0.2, "expert": 0.05}
MISCONFIG_PROBABILITY_BASIS = (
    "assumption (no public source): none 50 %, some 20 %, expert 5 % chance that a given "
    "lossless setting (ECN, PFC thresholds, pause-storm protection, adaptive routing) is "
    "wrong in production; expected losses of the mistakes add"
)
ADAPTIVE_OFF = "adaptive-routing-off"
ADAPTIVE_OFF_WHAT = "adaptive routing off: ECMP hash collisions (flow model, ring step and permutation)"


@dataclass(frozen=True)
class RiskItem:
    """One scenario on one fabric. Slowdowns are fractional increases (0.25 = 25 % slower)."""

    scenario: str
    what: str
    probability: float
    comm_slowdown: float | None
    iteration_slowdown: float
    expected_loss: float
    slowdown_of: str  # "training iteration" | "network communication"
    comm_slowdown_quiet: float | None = None
    comm_slowdown_congested: float | None = None

    def detail(self) -> dict:
        """The ``risk_detail`` entry of compare's JSON (key order as published)."""
        d = {"what": self.what, "probability": self.probability}
        if self.comm_slowdown_quiet is not None:
            d["comm_slowdown_quiet"] = self.comm_slowdown_quiet
            d["comm_slowdown_congested"] = self.comm_slowdown_congested
        d.update(
            comm_slowdown=self.comm_slowdown,
            slowdown=self.iteration_slowdown,
            expected_loss=self.expected_loss,
            slowdown_of=self.slowdown_of,
        )
        return d


@dataclass(frozen=True)
class FabricRisk:
    key: str
    items: tuple[RiskItem, ...] = ()
    testbed: RiskMeasurement | None = field(default=None, repr=False, compare=False)

    @property
    def by_scenario(self) -> dict[str, float]:
        return {r.scenario: r.expected_loss for r in self.items}

    @property
    def expected_loss(self) -> float:
        return float(sum(self.by_scenario.values()))

    def to_dict(self) -> dict:
        return {
            "fabric": self.key,
            "expected_loss": self.expected_loss,
            "scenarios": {r.scenario: r.detail() for r in self.items},
            "testbed": self.testbed.to_dict() if self.testbed else None,
        }


@dataclass(frozen=True)
class RiskEvidence:
    expertise: str
    probability: float
    congestion_share: float
    fabrics: tuple[FabricRisk, ...]
    jitter: dict | None = None  # the jitter claim's numbers (storm duty sweep → slowdown)

    def fabric(self, key: str) -> FabricRisk | None:
        return next((f for f in self.fabrics if f.key == key), None)

    def to_dict(self) -> dict:
        return {
            "team_expertise": self.expertise,
            "probability_per_setting": self.probability,
            "probability_basis": MISCONFIG_PROBABILITY_BASIS,
            "congestion_share": self.congestion_share,
            "fabrics": [f.to_dict() for f in self.fabrics],
            "jitter": self.jitter,
        }


def _slowdown(workload, perf, network, comm_slowdown: float) -> float:
    """Iteration slowdown when the fabric measures ``comm_slowdown`` slower on bandwidth-bound
    steps; without a training iteration, the communication slowdown itself."""
    factor = 1 + comm_slowdown
    if perf.iteration is None:
        return factor - 1
    return iteration_slowdown(workload, perf, network.with_slowdown(factor - 1))


def _jitter(rm: RiskMeasurement, workload, perf, network) -> dict:
    """The jitter claim's numbers: the storm sweep (quiet traffic) mapped to the iteration."""
    sweep = [
        {
            "duty": r["duty"],
            "comm_slowdown": r["comm_slowdown"],
            "slowdown": _slowdown(workload, perf, network, max(0.0, r["comm_slowdown"])),
        }
        for r in rm.jitter_sweep
    ]
    small = next((r for r in sweep if r["duty"] == SMALL_JITTER_DUTY), None)
    need = next((r["duty"] for r in sweep if r["slowdown"] >= 0.2), None)
    return {
        "sweep": sweep,
        "small": small,
        "duty_for_20pct": need,
        "slowdown_of": "training iteration" if perf.iteration is not None else "network communication",
    }


def assess(
    design,
    workload,
    network,
    perf,
    gpu,
    expertise: str,
    congestion_share: float = CONGESTION_SHARE,
    seed: int = 1,
    progress=None,
) -> RiskEvidence:
    """Every scenario that applies to each fabric, measured and sent through *performance*."""
    tick = progress or (lambda msg: None)
    prob = MISCONFIG_PROBABILITY[expertise]
    out, jitter = [], None
    for fd in design.fabrics:
        net, fp = network.fabric(fd.key), perf.fabric(fd.key)
        items: list[RiskItem] = []
        rm = None
        of = "training iteration" if fp.iteration is not None else "network communication"
        if fd.technology == "roce" and design.has_network:
            tick("packet-level testbed: lossless misconfigurations")
            rm = measure_testbed(
                testbed_for(
                    fd.nic_rate_gbps,
                    fd.switch_buffer_bytes,
                    fd.switch_hop_ns,
                    fd.lengths_m["leaf-spine"],
                    fd.routing,
                )
            )
            for mid, what in MISCONFIGS.items():
                comm_slow = rm.blended(mid, congestion_share)
                it_slow = _slowdown(workload, fp, net, comm_slow)
                items.append(
                    RiskItem(
                        mid,
                        what,
                        prob,
                        comm_slow,
                        it_slow,
                        prob * it_slow,
                        of,
                        rm.comm_slowdown["quiet"][mid],
                        rm.comm_slowdown["congested"][mid],
                    )
                )
            jitter = _jitter(rm, workload, fp, net)
        if (
            fd.technology == "roce"
            and fd.routing == "adaptive"
            and fp.iteration is not None
            and design.has_network
        ):
            # The design relies on adaptive routing; a team that cannot enable or keep it working
            # runs ECMP: the same patterns re-measured with ECMP, weighted by the mistake's chance.
            tick("flow model of the same steps with ECMP (adaptive routing off)")
            ecmp = measure_fabric(fd, workload, gpu, seed, routing="ecmp", sweep=False)
            impact = iteration_slowdown(workload, fp, ecmp)
            e_ecmp = ecmp.ring_step_efficiency
            comm = net.ring_step_efficiency / e_ecmp - 1 if e_ecmp else None
            items.append(RiskItem(ADAPTIVE_OFF, ADAPTIVE_OFF_WHAT, prob, comm, impact, prob * impact, of))
        out.append(FabricRisk(fd.key, tuple(items), rm))
    return RiskEvidence(expertise, prob, congestion_share, tuple(out), jitter)


__all__ = [
    "MISCONFIG_PROBABILITY",
    "MISCONFIG_PROBABILITY_BASIS",
    "FabricRisk",
    "RiskEvidence",
    "RiskItem",
    "assess",
]
