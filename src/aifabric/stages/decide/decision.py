"""The *decide* stage's evidence types: a reason, one fabric's numbers, the recommendation and the
decision (split out of :mod:`aifabric.stages.decide.choose`, which re-exports them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from aifabric.stages.design.fabrics import is_adaptive


def design_label(fd) -> str:
    """A design's label: technology, switch, NIC rate and (RoCE) routing."""
    if getattr(fd, "design_name", ""):  # the design stage's label (named designs, buyer's options)
        return fd.design_name
    tech = "ib" if fd.technology == "infiniband" else "roce"
    label = f"{tech}-{fd.switch_id}-{fd.nic_rate_gbps:g}g"
    if fd.technology == "roce" and getattr(fd, "preset", ""):
        return f"{label}-{fd.preset}"
    return label + ("-adaptive" if fd.technology == "roce" and is_adaptive(fd.routing) else "")


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
    risk: dict[str, float] = field(default_factory=dict)  # scenario -> expected slowdown fraction
    notes: list[str] = field(default_factory=list)
    design: str = ""  # the design's label, e.g. infiniband-qm9700-400g
    objective: float | None = None  # risk-adjusted cost per useful unit
    expansion_capex_usd: float = 0.0  # growth: the next expansion step
    feasible: bool = True
    infeasible_because: str = ""
    permutation_fct_p99_us: float | None = None
    # trading / high jitter sensitivity: the collective step's distribution on the packet engine
    step_p50_us: float | None = None
    step_p99_us: float | None = None
    step_distribution: dict | None = None
    # trading / high jitter sensitivity: small-message latency on the packet engine (stages.decide.latency)
    small_message: dict | None = None
    # what a job sees of latency: NCCL's smallest all-reduce over every GPU (the busbw sweep's first size)
    nccl_small_msg_us: float | None = None
    nccl_small_msg_bytes: int | None = None
    switch_hops: int | None = None  # switches on the longest path (links − 1)
    switch_hop_ns: float | None = None

    @property
    def expected_loss(self) -> float:
        return float(sum(self.risk.values()))

    @property
    def risk_adjusted_cost(self) -> float | None:
        """Cost per million *useful* tokens: the cost ÷ the share of goodput the risks leave."""
        if self.cost_per_million_tokens_usd is None:
            return None
        return self.cost_per_million_tokens_usd / max(1e-9, 1 - self.expected_loss)

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("step_p50_us", "step_p99_us", "step_distribution", "small_message"):
            if d[k] is None:
                del d[k]  # only measured where tail latency is a constraint
        d["busbw_gbytes_per_s"] = None if self.busbw_gbps is None else self.busbw_gbps / 8
        d["expected_loss"] = self.expected_loss
        d["risk_adjusted_cost_per_million_tokens_usd"] = self.risk_adjusted_cost
        return d


@dataclass
class Recommendation:
    fabric: str
    nic_rate_gbps: float | None
    reasons: list[Reason]
    design: str = ""
    verdict: str = "clear"
    objective: str = ""  # the objective's name and unit
    # what the answer hinges on (issue 25): each assumption whose alternative or range value moves it
    hinges_on: list[dict] = field(default_factory=list)
    summary: str = ""  # one sentence: the answer and what it hinges on

    def to_dict(self) -> dict:
        return {
            "fabric": self.fabric,
            "design": self.design,
            "verdict": self.verdict,
            "summary": self.summary,
            "hinges_on": [dict(h) for h in self.hinges_on],
            "objective": self.objective,
            "nic_rate_gbps": self.nic_rate_gbps,
            "reasons": [r.to_dict() for r in self.reasons],
        }


@dataclass(frozen=True)
class Decision:
    """The recommendation with its reasons, the claims tested, the per-fabric numbers used, the
    sensitivity of the verdict and the rules as explanations."""

    recommendation: Recommendation
    claims: tuple[dict, ...]
    evidence: dict[str, FabricEvidence]
    sensitivity: tuple[dict, ...] = ()
    tornado: tuple[dict, ...] = ()
    probability_best: dict[str, float] = field(default_factory=dict)
    rules: tuple[dict, ...] = ()
    objective_spread: dict[str, dict[str, float]] = field(default_factory=dict)  # P10/P50/P90 per design

    def to_dict(self) -> dict:
        return {
            "recommendation": self.recommendation.to_dict(),
            "claims": list(self.claims),
            "fabrics": {k: v.to_dict() for k, v in self.evidence.items()},
            "sensitivity": list(self.sensitivity),
            "tornado": list(self.tornado),
            "probability_best": dict(self.probability_best),
            "objective_spread": self.objective_spread,
            "rules": list(self.rules),
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
        design=design_label(fd),
        permutation_fct_p99_us=net.permutation_fct_p99_us,
        nccl_small_msg_us=net.busbw_sweep[0]["time_us"] if net.busbw_sweep else None,
        nccl_small_msg_bytes=int(net.busbw_sweep[0]["size_bytes"]) if net.busbw_sweep else None,
        switch_hops=max(0, fd.links_on_longest_path - 1) if fd.links_on_longest_path else None,
        switch_hop_ns=fd.switch_hop_ns,
    )


__all__ = ["Decision", "FabricEvidence", "Reason", "Recommendation", "design_label", "fabric_evidence"]
