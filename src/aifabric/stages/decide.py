"""The advisor: the decision rules of the product brief, then numbers.

Candidates: ``none`` (no inter-node lossless fabric), ``roce-400g``, ``roce-800g``,
``infiniband``, ``hybrid`` (IB for the training core + RoCE for storage / front-end).

Rules (mission.md "Decision rules"), applied in order; each fired rule becomes a reason that
carries the computed evidence it rests on:

1. ≤ 8 GPUs in one node → ``none`` (NVLink domain). 2–4 nodes whose workload has little
   inter-node traffic (inference, storage) → ``none`` (an ordinary network). Otherwise a lossless
   fabric is planned.
4. High-frequency trading or high jitter sensitivity → ``infiniband``.
2. Budget ``low`` → RoCE (rate from rule 7).
3. Thousand-GPU training → RoCE or IB by the numbers: the lower *risk-adjusted* cost per trained
   token, where risk = the team's chance of a lossless misconfiguration × the slowdown the
   simulator/flow model computes for it; a team with no RDMA expertise and a medium or high budget
   gets IB for the training core (determinism).
5. The three questions (jitter, expertise, growth) adjust the above: growth beyond what a fabric
   reaches in three tiers is a reason against it.
6. Hybrid: when IB wins for the training core and the budget is not ``high``, storage and
   front-end go on RoCE; a storage or inference fabric (beyond rule 1's few nodes) is RoCE, with
   the simulated misconfiguration risk as the tuning work to plan for.
7. 400G vs 800G from the GPU's per-GPU interconnect (NIC rate matched to the switch line rate).

Stage 6 — *decide*: :func:`decide` gathers the earlier stages' numbers per fabric into
:class:`FabricEvidence`, applies the rules (:func:`recommend`) and tests the brochure claims of
the product brief on them (:func:`evaluate_claims`); output :class:`Decision`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from aifabric.stages.design import roce_key as _roce_key
from aifabric.stages.risk import MISCONFIG_PROBABILITY

FABRICS = ("none", "roce-400g", "roce-800g", "infiniband", "hybrid")


@dataclass
class Reason:
    text: str
    evidence: dict[str, str]
    rule: str = ""

    def to_dict(self) -> dict:
        return {"text": self.text, "evidence": self.evidence, "rule": self.rule}


@dataclass
class FabricEvidence:
    """Numbers for one candidate fabric (all computed for the user's cluster)."""

    fabric: str  # roce-400g | roce-800g | infiniband
    technology: str
    nic_rate_gbps: float
    capex_usd: float
    power_w: float
    max_gpus: int
    iteration_time_s: float | None = None
    tokens_per_s: float | None = None
    cost_per_million_tokens_usd: float | None = None
    busbw_gbps: float | None = None
    small_msg_latency_us: float | None = None
    risk: dict[str, float] = field(default_factory=dict)  # mistake id -> expected slowdown fraction
    notes: list[str] = field(default_factory=list)

    @property
    def expected_loss(self) -> float:
        return float(sum(self.risk.values()))

    @property
    def risk_adjusted_cost(self) -> float | None:
        if self.cost_per_million_tokens_usd is None:
            return None
        return self.cost_per_million_tokens_usd * (1 + self.expected_loss)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["expected_loss"] = self.expected_loss
        d["risk_adjusted_cost_per_million_tokens_usd"] = self.risk_adjusted_cost
        return d


@dataclass
class Recommendation:
    fabric: str
    nic_rate_gbps: float | None
    reasons: list[Reason]

    def to_dict(self) -> dict:
        return {
            "fabric": self.fabric,
            "nic_rate_gbps": self.nic_rate_gbps,
            "reasons": [r.to_dict() for r in self.reasons],
        }


def _usd(x: float) -> str:
    return f"{x:,.0f} USD"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def rate_reason(design) -> Reason:
    """Rule 7 as a reason: the design stage's NIC-rate choice and its evidence."""
    return Reason(design.nic_rate_basis, dict(design.nic_rate_evidence), "7")


def recommend(
    adv, gpus_per_node: int, evidence: dict[str, FabricEvidence], nic_rate: float, rate_reason: Reason
) -> Recommendation:
    """Apply the rules to the computed evidence (``evidence`` keyed by fabric name)."""
    reasons: list[Reason] = []
    nodes = -(-adv.gpus // gpus_per_node)
    roce_key = "roce-800g" if nic_rate >= 800 else "roce-400g"
    ib, roce = evidence.get("infiniband"), evidence.get(roce_key)

    # Rule 1
    if adv.gpus <= gpus_per_node:
        return Recommendation(
            "none",
            None,
            [
                Reason(
                    f"All {adv.gpus} GPUs fit one {gpus_per_node}-GPU node: collectives stay on NVLink, no inter-node "
                    "lossless fabric is needed",
                    {"gpus": str(adv.gpus), "gpus_per_node": str(gpus_per_node)},
                    "1",
                )
            ],
        )
    if nodes <= 4 and adv.workload in ("inference", "storage"):
        return Recommendation(
            "none",
            None,
            [
                Reason(
                    f"{nodes} nodes running {adv.workload} move little data between nodes; an ordinary Ethernet network "
                    "suffices (plan a lossless fabric from 8 nodes or when training is network-bound)",
                    {"nodes": str(nodes), "workload": adv.workload},
                    "1",
                )
            ],
        )
    reasons.append(
        Reason(
            f"{nodes} nodes need an inter-node fabric for {adv.workload}",
            {"nodes": str(nodes), "gpus": str(adv.gpus)},
            "1",
        )
    )
    reasons.append(rate_reason)

    cap = _capex_reason(ib, roce)
    if cap:
        reasons.append(cap)
    it = _iteration_reason(ib, roce)
    if it:
        reasons.append(it)
    rk = _risk_reason(adv, roce)
    if rk:
        reasons.append(rk)
    growth = {"none": 1, "2x": 2, "10x": 10}[adv.growth]
    target = adv.gpus * growth
    grow_reasons = []
    for ev in (ib, roce):
        if ev is not None and growth > 1:
            ok = ev.max_gpus >= target
            grow_reasons.append(
                Reason(
                    f"{ev.fabric} reaches {ev.max_gpus:,} GPUs in three tiers, {'enough' if ok else 'not enough'} for "
                    f"{adv.growth} growth to {target:,}",
                    {"max_gpus": f"{ev.max_gpus:,}", "growth_target": f"{target:,}"},
                    "5",
                )
            )
    reasons.extend(grow_reasons)
    ib_too_small = ib is not None and growth > 1 and ib.max_gpus < target
    roce_too_small = roce is not None and growth > 1 and roce.max_gpus < target

    # Rule 4: determinism
    if adv.workload == "trading" or adv.jitter_sensitivity == "high":
        why = "high-frequency trading" if adv.workload == "trading" else "high jitter sensitivity"
        ev = {"jitter_sensitivity": adv.jitter_sensitivity, "workload": adv.workload}
        if ib and roce and ib.small_msg_latency_us and roce.small_msg_latency_us:
            ev["small_message_latency"] = (
                f"IB {ib.small_msg_latency_us:.2f} us vs RoCE {roce.small_msg_latency_us:.2f} us"
            )
        reasons.append(
            Reason(
                f"{why}: InfiniBand's credit flow control cannot pause-storm or drop, and its "
                "latency is lower",
                ev,
                "4",
            )
        )
        return Recommendation("infiniband", nic_rate, reasons)

    # Rule 2: budget
    if adv.budget == "low" and not roce_too_small:
        reasons.append(Reason("budget is low: RoCEv2 gives the lower capex", {"budget": adv.budget}, "2"))
        return Recommendation(roce_key, nic_rate, reasons)

    # Rule 6 (the RoCE half): storage and inference fabrics go on RoCE; the simulated risk is the
    # tuning work to plan for, not a reason to buy IB for traffic the brief puts on Ethernet
    if adv.workload in ("inference", "storage") and not roce_too_small:
        ev = {"workload": adv.workload, "team_expertise": adv.team_expertise}
        if roce is not None:
            ev["roce_expected_loss"] = _loss(roce)
        if ib is not None and roce is not None:
            ev["roce_over_ib_capex"] = f"{roce.capex_usd / ib.capex_usd:.2f}"
        reasons.append(
            Reason(
                f"{adv.workload} traffic goes on RoCE (the brief's hybrid rule: IB only for a training "
                "core); budget the lossless tuning behind the expected loss and audit the switch "
                "configs (aifabric audit)",
                ev,
                "6",
            )
        )
        return Recommendation(roce_key, nic_rate, reasons)

    # Rule 3/5: numbers decide
    choice = roce_key
    if ib_too_small and not roce_too_small:
        choice = roce_key
    elif roce_too_small and not ib_too_small:
        choice = "infiniband"
    elif adv.team_expertise == "none" and adv.budget in ("medium", "high"):
        ev = {"budget": adv.budget, "team_expertise": adv.team_expertise}
        if ib and roce:
            ev["ib_premium"] = _usd(ib.capex_usd - roce.capex_usd)
            ev["roce_expected_loss"] = (
                _loss(roce) + " (simulated mistakes only; outages, deadlocks and debugging time "
                "are not in it)"
            )
        reasons.append(
            Reason(
                "the team has no lossless-Ethernet tuning expertise and the budget allows it: "
                "InfiniBand's predictability is worth its premium for the training core",
                ev,
                "5",
            )
        )
        choice = "infiniband"
    elif ib is not None and roce is not None and ib.risk_adjusted_cost and roce.risk_adjusted_cost:
        better = "infiniband" if ib.risk_adjusted_cost < roce.risk_adjusted_cost else roce_key
        reasons.append(
            Reason(
                f"risk-adjusted cost per million trained tokens: IB {ib.risk_adjusted_cost:.3f} USD vs RoCE "
                f"{roce.risk_adjusted_cost:.3f} USD — {better} is cheaper per useful token",
                {
                    "ib_cost_per_million_tokens": f"{ib.cost_per_million_tokens_usd:.3f} USD",
                    "roce_cost_per_million_tokens": f"{roce.cost_per_million_tokens_usd:.3f} USD",
                    "roce_expected_loss": _loss(roce),
                    "ib_expected_loss": _loss(ib),
                },
                "3",
            )
        )
        choice = better
    elif ib is not None and roce is not None:
        choice = "infiniband" if ib.capex_usd * (1) < roce.capex_usd * (1 + roce.expected_loss) else roce_key
        reasons.append(
            Reason(
                "capex adjusted for expected misconfiguration loss decides",
                {
                    "ib_capex": _usd(ib.capex_usd),
                    "roce_capex": _usd(roce.capex_usd),
                    "roce_expected_loss": _loss(roce),
                },
                "3",
            )
        )
    if choice == "infiniband" and adv.budget != "high" and adv.workload == "training":
        ev = {"budget": adv.budget}
        if roce and ib:
            ev["roce_over_ib_capex"] = f"{roce.capex_usd / ib.capex_usd:.2f}"
        reasons.append(
            Reason(
                "IB for the training core; put storage and front-end traffic on RoCE, which costs "
                "less per port for traffic that needs no lossless tuning",
                ev,
                "6",
            )
        )
        return Recommendation("hybrid", nic_rate, reasons)
    return Recommendation(choice, nic_rate, reasons)


def _loss(ev: FabricEvidence) -> str:
    if ev.risk:
        return _pct(ev.expected_loss)
    if ev.technology == "infiniband":
        return "0 % (credit flow control: no PFC, ECN or PAUSE to misconfigure)"
    return "not computed (counted as 0 %)"


def _capex_reason(ib: FabricEvidence | None, roce: FabricEvidence | None) -> Reason | None:
    if not ib or not roce:
        return None
    ratio = roce.capex_usd / ib.capex_usd
    return Reason(
        f"RoCE network capex is {ratio:.0%} of InfiniBand's ({_usd(ib.capex_usd - roce.capex_usd)} less)",
        {"ib_capex": _usd(ib.capex_usd), "roce_capex": _usd(roce.capex_usd), "ratio": f"{ratio:.3f}"},
        "2",
    )


def _iteration_reason(ib: FabricEvidence | None, roce: FabricEvidence | None) -> Reason | None:
    if not ib or not roce or not ib.iteration_time_s or not roce.iteration_time_s:
        return None
    d = roce.iteration_time_s / ib.iteration_time_s - 1
    return Reason(
        f"a training iteration takes {ib.iteration_time_s:.3f} s on IB and {roce.iteration_time_s:.3f} s "
        f"on well-tuned RoCE ({d:+.1%})",
        {
            "ib_iteration": f"{ib.iteration_time_s:.4f} s",
            "roce_iteration": f"{roce.iteration_time_s:.4f} s",
            "difference": f"{d:+.2%}",
        },
        "3",
    )


def _risk_reason(adv, roce: FabricEvidence | None) -> Reason | None:
    if not roce or not roce.risk:
        return None
    p = MISCONFIG_PROBABILITY[adv.team_expertise]
    parts = {k: _pct(v) for k, v in roce.risk.items()}
    parts["misconfiguration_probability"] = f"{p:.0%} per setting (assumption, no public source)"
    words = {"none": "no", "some": "some", "expert": "expert"}[adv.team_expertise]
    return Reason(
        f"with {words} RDMA tuning expertise the expected RoCE slowdown from mistakes the "
        f"models reproduce is {_pct(roce.expected_loss)}",
        parts,
        "5",
    )


def evaluate_claims(
    evidence: dict[str, FabricEvidence], roce_key: str, jitter: dict | None = None
) -> list[dict]:
    """The brochure claims of mission.md, tested on this cluster's numbers."""
    ib, roce = evidence.get("infiniband"), evidence.get(roce_key)
    out = []
    if ib and roce:
        r = roce.capex_usd / ib.capex_usd
        out.append(
            {
                "claim": "RoCE hardware costs 30–50 % of InfiniBand",
                "holds": 0.3 <= r <= 0.5,
                "evidence": f"network capex ratio RoCE/IB = {r:.2f} ({roce.capex_usd:,.0f} vs {ib.capex_usd:,.0f} USD; "
                "Ethernet switch prices are catalog estimates)",
            }
        )
        out.append(
            {
                "claim": "RoCE is about 30 % cheaper than InfiniBand",
                "holds": 0.6 <= r <= 0.8,
                "evidence": f"RoCE is {1 - r:.0%} cheaper on this cluster (held if 20–40 %)",
            }
        )
        if ib.small_msg_latency_us and roce.small_msg_latency_us:
            gap = roce.small_msg_latency_us / ib.small_msg_latency_us - 1
            out.append(
                {
                    "claim": "HPCC-era RoCE latency is within 10 % of InfiniBand",
                    "holds": gap <= 0.10,
                    "evidence": f"small-message one-way latency across the fabric: IB {ib.small_msg_latency_us:.2f} us, "
                    f"RoCE {roce.small_msg_latency_us:.2f} us ({gap:+.0%}); switch hops from the "
                    "catalog (low confidence)",
                }
            )
        if ib.iteration_time_s and roce.iteration_time_s:
            d = roce.iteration_time_s / ib.iteration_time_s - 1
            out.append(
                {
                    "claim": "RoCE training performance is within 10 % of InfiniBand",
                    "holds": d <= 0.10,
                    "evidence": f"iteration time IB {ib.iteration_time_s:.3f} s vs RoCE {roce.iteration_time_s:.3f} s "
                    f"({d:+.1%}), well-tuned RoCE with ECMP",
                }
            )
        elif ib.busbw_gbps and roce.busbw_gbps:
            d = 1 - roce.busbw_gbps / ib.busbw_gbps
            out.append(
                {
                    "claim": "RoCE performance is within 10 % of InfiniBand",
                    "holds": d <= 0.10,
                    "evidence": f"8 GiB all-reduce busbw IB {ib.busbw_gbps:.0f} vs RoCE {roce.busbw_gbps:.0f} Gb/s",
                }
            )
    claim = "Small network jitter from a flow-control bug costs ~20 % cluster efficiency"
    if jitter and jitter.get("small"):
        sm = jitter["small"]
        loss = sm["slowdown"]
        need = jitter["duty_for_20pct"]
        need_txt = (
            f"a 20 % loss needs spurious pauses {need:.0%} of the time"
            if need is not None
            else f"even {jitter['sweep'][-1]['duty']:.0%} of the time costs "
            f"{jitter['sweep'][-1]['slowdown']:.1%}"
        )
        out.append(
            {
                "claim": claim,
                "holds": bool(0.10 <= loss <= 0.30),
                "evidence": f"one spine pausing its ports {sm['duty']:.0%} of the time slows a ring step by "
                f"{sm['comm_slowdown']:+.1%} on the packet testbed and the {jitter['slowdown_of']} "
                f"by {loss:+.1%} (held if 10-30 %); {need_txt}",
            }
        )
    else:
        out.append(
            {
                "claim": claim,
                "holds": None,
                "evidence": "not tested: the cluster has no inter-node RoCE fabric to jitter",
            }
        )
    return out


@dataclass(frozen=True)
class Decision:
    """The recommendation with its reasons, the claims tested, and the per-fabric numbers used."""

    recommendation: Recommendation
    claims: tuple[dict, ...]
    evidence: dict[str, FabricEvidence]

    def to_dict(self) -> dict:
        return {
            "recommendation": self.recommendation.to_dict(),
            "claims": list(self.claims),
            "fabrics": {k: v.to_dict() for k, v in self.evidence.items()},
        }


def fabric_evidence(fd, net, fp, fr) -> FabricEvidence:
    """One fabric's numbers from the design, measure, performance and risk stages."""
    return FabricEvidence(
        fd.key,
        fd.technology,
        fd.nic_rate_gbps,
        fd.capex_usd,
        fd.power_w,
        fd.max_gpus,
        iteration_time_s=fp.iteration_time_s,
        tokens_per_s=fp.tokens_per_s,
        cost_per_million_tokens_usd=fp.cost_per_million_tokens_usd,
        busbw_gbps=net.busbw_gbps,
        small_msg_latency_us=fd.small_message_latency_us,
        risk=fr.by_scenario,
    )


def decide(adv, design, network, perf, risk) -> Decision:
    """The recommendation for the advisor's questions (``adv``) from the stages' evidence."""
    evidence = {
        fd.key: fabric_evidence(fd, network.fabric(fd.key), perf.fabric(fd.key), risk.fabric(fd.key))
        for fd in design.fabrics
    }
    rec = recommend(adv, design.gpus_per_node, evidence, design.nic_rate_gbps, rate_reason(design))
    claims = evaluate_claims(evidence, _roce_key(design.nic_rate_gbps), risk.jitter)
    return Decision(rec, tuple(claims), evidence)


__all__ = [
    "FABRICS",
    "Decision",
    "FabricEvidence",
    "Reason",
    "Recommendation",
    "decide",
    "evaluate_claims",
    "recommend",
]
