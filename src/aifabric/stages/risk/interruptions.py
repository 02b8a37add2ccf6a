"""Job interruptions (part of *risk*): job-stopping failures counted from the plan's bill of
materials with one rule for every fabric, and the goodput they cost (:func:`interruptions`, the
``job-interruptions`` item of the risk list). Split out of :mod:`aifabric.stages.risk.assess`."""

from __future__ import annotations

from aifabric.scenario import RiskSpec
from aifabric.stages.design.fabrics import is_adaptive
from aifabric.stages.risk.rates import (
    HOURS_PER_YEAR,
    INTERRUPT_BASIS,
    INTERRUPT_HOURS,
    LINK_FAULTS,
    NCCL_RETRY_BUDGET_S,
    NIC_FAULTS,
    REROUTE_S,
    SWITCH_FAULTS_PER_1000_YEAR,
)
from aifabric.stages.risk.redundancy import switch_counts


def _components(plan: dict, which: str) -> int:
    links = plan.get("links") or {}
    host = int(links.get("host-leaf", plan.get("nics", 0)))
    fabric = int(sum(v for k, v in links.items() if k != "host-leaf"))
    return {"nics": int(plan.get("nics", host)), "fabric-links": fabric, "host-links": host}[which]


def _routing_kind(fd) -> str:
    """adaptive | static (IB) | ecmp (RoCE): the key of :data:`REROUTE_S`."""
    if is_adaptive(fd.routing):
        return "adaptive"
    return "static" if fd.technology == "infiniband" else "ecmp"


def interruption_events(plan: dict, technology: str, routing: str, spec: RiskSpec | None = None) -> dict:
    """Job-stopping failures a year per component (mid / low / high), counted from the plan's bill of
    materials; the same rule on both fabrics: every NIC fault; a host-link or leaf fault where the NIC
    is single-homed; a fabric-link or spine / core fault only where detection + re-route
    (:data:`REROUTE_S`) outlasts NCCL's retry budget. ``risk.probability.link-failure`` (faults per
    1,000 links a year) replaces the link rate here too."""
    spec = spec or RiskSpec()
    nics, host = _components(plan, "nics"), _components(plan, "host-links")
    fabric = _components(plan, "fabric-links")
    leaves, uppers = switch_counts(plan)
    reroute = REROUTE_S[(technology, routing)]
    stops = [r > NCCL_RETRY_BUDGET_S for r in reroute]
    link = (spec.probability["link-failure"],) * 3 if "link-failure" in spec.probability else LINK_FAULTS
    dual = bool(plan.get("dual_tor"))  # dual-ToR: host-link and leaf faults slow (risk.redundancy)

    def at(i: int) -> dict[str, float]:
        sw = SWITCH_FAULTS_PER_1000_YEAR[i] / 1000
        return {
            "nic": nics * NIC_FAULTS[i] / 1000,
            "host_link": 0.0 if dual else host * link[i] / 1000,
            "fabric_link": fabric * link[i] / 1000 if stops[i] else 0.0,
            "leaf": 0.0 if dual else leaves * sw,
            "spine_core": uppers * sw if stops[i] else 0.0,
        }

    return {
        "by_component": [at(0), at(1), at(2)],
        "counts": {
            "nics": nics,
            "host_links": host,
            "fabric_links": fabric,
            "leaves": leaves,
            "spines": uppers,
        },
        "reroute_s": reroute,
        "stops": stops,
    }


def interruptions(fd, spec: RiskSpec) -> tuple[float, float, float, dict]:
    """Goodput lost to job interruptions (share of GPU-hours, mid / low / high) and its numbers."""
    ev = interruption_events(fd.plan.to_dict(), fd.technology, _routing_kind(fd), spec)
    hours = (spec.interrupt_hours,) * 3 if spec.interrupt_hours else INTERRUPT_HOURS
    per_year = [sum(c.values()) for c in ev["by_component"]]
    loss = [min(1.0, n * h / HOURS_PER_YEAR) for n, h in zip(per_year, hours, strict=True)]
    detail = {
        "interruptions_per_year": per_year[0],
        "interruptions_per_year_range": [per_year[1], per_year[2]],
        "interruptions_per_year_by_component": ev["by_component"][0],
        "hours_per_interruption": hours[0],
        **ev["counts"],
        "reroute_s": ev["reroute_s"][0],
        "reconvergence_s": ev["reroute_s"][0],  # the name before issue 25
        "nccl_retry_budget_s": NCCL_RETRY_BUDGET_S,
        "fabric_link_failure_stops_the_job": ev["stops"][0],
        "basis": INTERRUPT_BASIS,
    }
    return loss[0], loss[1], loss[2], detail


__all__ = ["interruption_events", "interruptions"]
