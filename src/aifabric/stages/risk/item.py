"""One risk scenario on one fabric (:class:`RiskItem`), its kind as the objective reads it, and how
per-scenario losses combine. The risk stage (:mod:`aifabric.stages.risk.assess`) and its parts build the
items; the decision's objective (:mod:`aifabric.stages.decide.objective`) moves them by kind."""

from __future__ import annotations

from dataclasses import dataclass

RISK_KINDS = ("mistake", "fault", "share")
# the library's trigger kinds as the objective reads them: a condition is present a share of the time
_KIND_OF_TRIGGER = {"mistake": "mistake", "fault": "fault", "condition": "share"}


@dataclass(frozen=True)
class RiskItem:
    """One scenario on one fabric. Slowdowns are fractional increases (0.25 = 25 % slower)."""

    scenario: str
    what: str
    probability: float
    comm_slowdown: float | None
    iteration_slowdown: float
    expected_loss: float  # this scenario's share of the combined loss (the items add up to the total)
    slowdown_of: str  # "training iteration" | "network communication"
    comm_slowdown_quiet: float | None = None
    comm_slowdown_congested: float | None = None
    persistence: float = 1.0
    probability_basis: str = ""
    model: str = ""
    loss_while_present: float = 0.0
    own_loss: float = 0.0  # p · d · ℓ
    own_loss_range: tuple[float, float] = (0.0, 0.0)
    # what the objective moves with it (:mod:`aifabric.stages.decide.objective`): "mistake" — a setting a team
    # gets wrong, its probability scales with the misconfiguration probability; "fault" — a component
    # failure or firmware bug, its rate is the hardware's; "share" — a condition present a share of the
    # time (storage traffic on the back-end fabric), its persistence is that share
    kind: str = "fault"
    # (low, high) of the persistence; equal when the scenario's risk: section fixed it
    persistence_range: tuple[float, float] | None = None

    def detail(self) -> dict:
        """The ``risk_detail`` entry of compare's JSON."""
        d = {"what": self.what, "probability": self.probability}
        if self.comm_slowdown_quiet is not None:
            d["comm_slowdown_quiet"] = self.comm_slowdown_quiet
        if self.comm_slowdown_congested is not None:
            d["comm_slowdown_congested"] = self.comm_slowdown_congested
        if self.comm_slowdown_quiet == float("inf") or self.comm_slowdown_congested == float("inf"):
            d.update(comm_slowdown_quiet=_finite(self.comm_slowdown_quiet))
            d.update(comm_slowdown_congested=_finite(self.comm_slowdown_congested))
        d.update(
            comm_slowdown=_finite(self.comm_slowdown),
            slowdown=_finite(self.iteration_slowdown),
            expected_loss=self.expected_loss,
            slowdown_of=self.slowdown_of,
            persistence=self.persistence,
            loss_while_present=self.loss_while_present,
            probability_basis=self.probability_basis,
            model=self.model,
            expected_loss_range=list(self.own_loss_range),
        )
        return d

    def row(self) -> dict:
        """The ``fabrics[].risk`` list entry (interface.md)."""
        return {
            "scenario": self.scenario,
            "probability": self.probability,
            "probability_basis": self.probability_basis,
            "persistence": self.persistence,
            "comm_slowdown": _finite(self.comm_slowdown),
            "iteration_slowdown": _finite(self.iteration_slowdown),
            "loss_while_present": self.loss_while_present,
            "expected_loss": self.expected_loss,
            "expected_loss_range": list(self.own_loss_range),
        }


def _finite(x):
    """JSON has no infinity: a hang is reported as None with loss_while_present 1."""
    return None if x is None or x == float("inf") else x


def combine(losses) -> float:
    """1 − Π(1 − xᵢ) over per-scenario losses xᵢ = pᵢ·dᵢ·ℓᵢ, each clipped to [0, 1]: never above 1."""
    keep = 1.0
    for x in losses:
        keep *= 1.0 - min(1.0, max(0.0, float(x)))
    return 1.0 - keep


def lost_share(slowdown: float) -> float:
    """ℓ = 1 − 1/(1 + s): the share of goodput lost while a slowdown s holds (1 for a hang)."""
    if slowdown == float("inf"):
        return 1.0
    return 1.0 - 1.0 / (1.0 + max(0.0, slowdown))
