"""What redundancy buys (issue 14, item 3): switch failures valued per fabric, the same rules for
InfiniBand and RoCE, from the plan's switch counts and its redundancy options
(:mod:`aifabric.design.redundancy`).

**Leaf (ToR) failure.** Without dual-ToR the leaf's servers lose their link on that rail: the
synchronous job stops — an interruption costing ``INTERRUPT_HOURS`` on every GPU (detection,
restart, the work since the checkpoint; :mod:`aifabric.stages.risk.rates`) — and those servers
(share f = servers on the leaf / all servers) stay out of the job until the leaf is repaired:
loss per event = IH + repair × f GPU-hours per GPU. With dual-ToR the servers keep the other leg:
no interruption, their NICs run at half rate until the repair; the job runs at its slowest
member's pace, so it loses repair × ℓ(s½), s½ = the iteration slowdown of communication at half
bandwidth (communication slowdown 1.0 on bandwidth-bound steps, sent through *performance*),
ℓ(s) = s/(1 + s) — or, where cheaper, the operator restarts without those servers (IH + repair
× f): loss per event = min of the two, so dual-ToR never loses on a leaf. A host-link (cable /
optic) fault on a dual-homed leg is one server at half rate until the repair, or a restart (IH,
what a single-homed host-link fault costs in the job-interruptions item, which charges no
server-out time for one server); the job-interruptions item then counts no host-link or leaf fault.
A dual-homed NIC has two legs, so twice the cables can fail.

**Spine failure.** A plane with S spines and k of them spare (``spine_failures_tolerated``)
loses nothing while at most k are down; with j > k down the plane carries (S − k − (j − k))/(S − k)
= (S − j)/(S − k) of its need: communication slowdown (S − k)/(S − j) − 1 (1/(S − 1) for one
failure without spares). Spines down at a time are Poisson with mean S·λ·repair/year. Where the
fabric's re-convergence outlasts NCCL's retry budget (static InfiniBand routing), a spine failure
also stops the job, as a fabric-link failure does in the job-interruptions item. Core switches of a
3-tier fabric are valued like spines without spares.

Rates: ``SWITCH_FAULTS_PER_1000_YEAR`` (a source, :mod:`aifabric.stages.risk.rates`) and repair
hours (assumption, as link repair). The job-interruptions item counts the interruptions (leaf
faults on single-homed NICs; spine / core faults where re-route outlasts NCCL's budget:
:func:`switch_counts`); the ``switch-failures`` item values the rest (servers out, half bandwidth,
bisection).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from aifabric.stages.risk.rates import (  # noqa: F401  (SWITCH_FAULT_BASIS re-exported)
    HOURS_PER_YEAR,
    LINK_FAULTS,
    RATES,
    SWITCH_FAULT_BASIS,
    SWITCH_FAULTS_PER_1000_YEAR,
)

SWITCH_REPAIR_HOURS = RATES["link-failure"].hours  # (mid, low, high) — assumption, as link repair


def switch_counts(plan: dict) -> tuple[int, int]:
    """(leaves, spines + cores) of a plan: the switches hosts hang from, and those above them."""
    sw = plan.get("switches") or {}
    leaves = int(sw.get("leaf", 0))
    return leaves, int(sum(int(v) for k, v in sw.items() if k != "leaf"))


def _poisson(mean: float, j: int) -> float:
    return math.exp(-mean) * mean**j / math.factorial(j)


def _lost(s: float) -> float:
    return 1.0 if s == float("inf") else 1.0 - 1.0 / (1.0 + max(0.0, s))


def switch_failures(
    plan: dict,
    interrupt_hours: tuple[float, float, float],
    slowdown: Callable[[float], float],
    fabric_failure_stops_job: bool,
    repair_hours: tuple[float, float, float] = SWITCH_REPAIR_HOURS,
) -> dict:
    """Expected share of GPU-hours lost to switch failures (``loss`` = mid, ``loss_low`` /
    ``loss_high``), split into ``interrupt`` (job stops) and ``slowdown`` parts, with the numbers
    behind them. ``plan`` is a FabricPlan's dict; ``slowdown(c)`` turns a communication slowdown c
    into the job's iteration slowdown (∞ stays ∞); ``repair_hours`` (mid, low, high) defaults to the
    link-failure repair time (the scenario's ``risk.hours.link-failure`` overrides both)."""
    sw = plan.get("switches") or {}
    planes = max(1, int(plan.get("planes") or 1))
    dual = bool(plan.get("dual_tor"))
    k = int(plan.get("spine_failures_tolerated") or 0)
    leaves = int(sw.get("leaf", 0))
    host_links = int((plan.get("links") or {}).get("host-leaf", 0))
    half = slowdown(1.0)  # half the bandwidth on the affected NICs: communication takes twice as long
    uppers = [(int(sw.get("spine", 0)) // planes, k), (int(sw.get("core", 0)) // planes, 0)]

    nodes = max(1, int(plan.get("nodes") or 1))
    per_leaf = min(1.0, host_links / leaves / nodes) if leaves else 0.0  # servers on a leaf / all

    def at(i: int) -> dict:
        lam, rep, ih = SWITCH_FAULTS_PER_1000_YEAR[i], repair_hours[i], interrupt_hours[i]
        leaf_events = leaves * lam / 1000
        interrupt = slow = 0.0
        out_hours = rep * per_leaf  # the leaf's servers are out of the job until it is repaired
        if dual:  # ride it out at half bandwidth, or (if cheaper) restart without those servers
            slow += leaf_events * min(rep * _lost(half), ih + out_hours) / HOURS_PER_YEAR
            link_rate = LINK_FAULTS[i]  # the link-failure rate (mid, low, high)
            one = min(rep * _lost(half), ih)  # a leg: one server at half rate, or a restart
            slow += host_links * link_rate / 1000 * one / HOURS_PER_YEAR
        else:
            interrupt += leaf_events * ih / HOURS_PER_YEAR
            slow += leaf_events * out_hours / HOURS_PER_YEAR
        spine_events = 0.0
        for s, spare in uppers:
            if s <= 0:
                continue
            spine_events += planes * s * lam / 1000
            mean = s * lam / 1000 * rep / HOURS_PER_YEAR  # spines down at a time in one plane
            for j in range(spare + 1, min(s, spare + 4) + 1):
                c = float("inf") if j >= s else (s - spare) / (s - j) - 1.0
                slow += planes * _poisson(mean, j) * _lost(slowdown(c))
        if fabric_failure_stops_job:
            interrupt += spine_events * ih / HOURS_PER_YEAR
        return {
            "interrupt": interrupt,
            "slowdown": slow,
            "leaf_failures_per_year": leaf_events,
            "spine_failures_per_year": spine_events,
            "interruptions_per_year": (0.0 if dual else leaf_events)
            + (spine_events if fabric_failure_stops_job else 0.0),
        }

    mid, low, high = at(0), at(1), at(2)
    return {
        "loss": min(1.0, mid["interrupt"] + mid["slowdown"]),
        "loss_low": min(1.0, low["interrupt"] + low["slowdown"]),
        "loss_high": min(1.0, high["interrupt"] + high["slowdown"]),
        "interrupt_loss": mid["interrupt"],
        "slowdown_loss": mid["slowdown"],
        "slowdown_loss_low": min(1.0, low["slowdown"]),
        "slowdown_loss_high": min(1.0, high["slowdown"]),
        "interruptions_per_year": mid["interruptions_per_year"],
        "interruption_hours_per_year": mid["interruptions_per_year"] * interrupt_hours[0],
        "leaf_failures_per_year": mid["leaf_failures_per_year"],
        "spine_failures_per_year": mid["spine_failures_per_year"],
        "dual_tor": dual,
        "spine_failures_tolerated_per_plane": k,
        "half_bandwidth_iteration_slowdown": None if half == float("inf") else half,
        "servers_per_leaf_share": per_leaf,
        "leaf_failure": "half bandwidth on its servers until repaired (dual-ToR)"
        if dual
        else "interruption: the job stops; the leaf's servers are out until repaired (single-homed)",
        "basis": SWITCH_FAULT_BASIS,
    }
