"""The risk of SHARP's aggregation manager being down (the InfiniBand designs where SHARP is granted):
new communicators get no aggregation tree and NCCL runs its all-reduces on the ring / tree, measured
as the step on the same fabric with SHARP off and the layout chosen with it."""

from __future__ import annotations

from dataclasses import replace

SHARP_DOWN = "sharp-manager-down"
SHARP_DOWN_WHAT = (
    "the SHARP aggregation manager (on the subnet manager / UFM host) is down: jobs started meanwhile get no "
    "aggregation trees and NCCL falls back to ring / tree all-reduces"
)
# ASSUMPTION (no public availability figure for the SHARP aggregation manager): one outage a year that
# jobs run through without SHARP for 24 h (restart of the manager and of the jobs), 4-72 h
SHARP_DOWN_HOURS = (24.0, 4.0, 72.0)
HOURS_PER_YEAR = 8766.0
SHARP_DOWN_BASIS = (
    "assumption (no public availability figure for the SHARP aggregation manager): once a year, jobs run "
    "without SHARP for 24 h (4-72 h) until the manager and the jobs are restarted"
)


def sharp_down_item(workload, fp, net, of: str):
    """The :class:`~aifabric.stages.risk.assess.RiskItem`, or None where SHARP is not granted or there is
    no step to slow."""
    from aifabric.stages.performance import iteration_slowdown
    from aifabric.stages.risk.item import RiskItem, lost_share

    if not (net.sharp and net.sharp.get("granted")) or fp.iteration is None:
        return None
    it = max(0.0, iteration_slowdown(workload, fp, replace(net, sharp=None)))
    ell = lost_share(it)
    d, dl, dh = (h / HOURS_PER_YEAR for h in SHARP_DOWN_HOURS)
    return RiskItem(
        SHARP_DOWN,
        SHARP_DOWN_WHAT,
        1.0,
        None,
        it,
        0.0,
        of,
        persistence=d,
        probability_basis=SHARP_DOWN_BASIS,
        model="the step with SHARP off on the same fabric (every network all-reduce on the ring), the "
        "layout chosen with it",
        loss_while_present=ell,
        own_loss=d * ell,
        own_loss_range=(dl * ell, dh * ell),
        kind="fault",
        persistence_range=(dl, dh),
    )


__all__ = ["SHARP_DOWN", "SHARP_DOWN_BASIS", "SHARP_DOWN_HOURS", "sharp_down_item"]
