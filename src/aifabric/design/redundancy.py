"""Redundancy options of a planned fabric (issue 14, item 3): **dual-ToR** (each NIC's bandwidth
on two different leaves) and **spine spares** (spines beyond the non-blocking count).

Dual-ToR (multi-homing)
    Rule: the rate per GPU is unchanged; each NIC's rate (per plane) is split into two legs of half
    the rate, each on a different leaf of a leaf pair (Ethernet: MLAG or EVPN multihoming, the host
    bonds the two legs with LACP). Sized as a rail fabric with two legs per GPU
    (:func:`dual_tor_sizing`): per plane, twice the host-leaf links at half the rate, leaves at the
    switch's half-rate port mode, so each leaf port carries half a GPU's rate. Source: Alibaba HPN
    (Qian et al., SIGCOMM 2024, doi 10.1145/3651890.3672265): every back-end NIC has 2 × 200 Gb/s
    ports, each to a different ToR ("non-stacked dual-ToR", kept in sync by LACP and ARP/BGP host
    routes), so a ToR failure leaves every host connected; HPN adds "dual-plane" aggregation, which
    here is ``planes``. NVIDIA's Spectrum-X and Meta's RoCE paper (SIGCOMM 2024) were not re-read
    for this: no claim is made about them.

    InfiniBand: refused (:data:`IB_DUAL_TOR`). There is no multi-chassis link aggregation for RDMA
    on InfiniBand: each HCA port is its own subnet endpoint (LID) and a connection does not move to
    the other port of the NIC on a leaf failure (NCCL does not use IB alternate paths, APM). DGX
    SuperPOD reference designs connect each ConnectX port to one leaf of its rail. The nearest IB
    option is ``planes`` (each NIC port on a different leaf, each in its own plane), which this
    tool does not treat as failover (see :mod:`aifabric.stages.risk.redundancy`).

Spine spares
    ``spine_spares = k``: k spines per plane beyond the non-blocking count S, cabled and carrying
    traffic (N + k, not cold spares — cold spares are the TCO's ``spares_share``). Rule: every leaf's
    uplinks grow by the factor (S + k)/S (rounded up), taken from its host ports; where the leaf has
    no free port, fewer hosts per leaf and so more leaves (:func:`add_spine_spares`). Spines =
    ⌈links / radix⌉. A spine failure removes 1/spines of every leaf's uplink capacity; the fabric
    still carries its non-blocking load while (spines − j)/spines × uplinks ≥ the uplinks needed:
    ``spine_failures_tolerated``. Modelled for 2-tier fabrics (3-tier
    spares are not modelled: refused with one line; a 1-switch fabric has no spine: not applied, said in the notes).
"""

from __future__ import annotations

import math
from dataclasses import replace

from aifabric.errors import InputError
from aifabric.topology import RailDesign, rail_sizing

IB_DUAL_TOR = (
    "InfiniBand has no multi-chassis link aggregation: each HCA port is its own subnet endpoint and "
    "an RDMA connection does not fail over to a second leaf (DGX SuperPOD designs wire each ConnectX "
    "port to one leaf)"
)
DUAL_TOR_SOURCE = (
    "Alibaba HPN (Qian et al., SIGCOMM 2024): each NIC 2 x 200G, each port on a different ToR "
    "(non-stacked dual-ToR, LACP); rule here: rate per GPU unchanged, each leaf port carries half"
)


def check_dual_tor(technology: str, field: str = "--dual-tor") -> None:
    """Raise the one-line refusal for InfiniBand (symmetry: asked, and answered with why)."""
    if technology == "infiniband":
        raise InputError(
            IB_DUAL_TOR,
            field=field,
            value="infiniband",
            allowed="dual-ToR on RoCE (MLAG / EVPN multihoming), or --planes 2 on InfiniBand",
        )


def ib_dual_tor_note(technology: str, kw: dict) -> str | None:
    """For an InfiniBand fabric in a comparison that asked for dual-ToR: drop the option from
    ``kw`` and return the note that says why (the RoCE fabrics keep it)."""
    if technology == "infiniband" and kw.pop("dual_tor", False):
        return f"dual-ToR not applied: {IB_DUAL_TOR}"
    return None


def check_spine_spares(spares, field: str = "--spine-spares") -> int:
    """The spare count as an int ≥ 0, else one InputError line."""
    if isinstance(spares, bool) or not isinstance(spares, int) or spares < 0:
        raise InputError("must be a whole number ≥ 0", field=field, value=spares, allowed="0, 1, 2, ...")
    return spares


def dual_tor_sizing(
    gpus: int, gpus_per_node: int, radix: int, oversubscription: float, planes: int, max_tiers: int
) -> RailDesign:
    """A rail fabric with two legs per GPU (per plane): each rail has a leaf pair, leg A of every
    server's rail-r NIC on one leaf, leg B on the other. ``gpus`` / ``gpus_per_node`` of the result
    are the real GPUs; leaves, links and spines count the legs."""
    d = rail_sizing(2 * gpus, 2 * gpus_per_node, radix, oversubscription, planes, max_tiers)
    return pair_leaves(replace(d, gpus=gpus, gpus_per_node=gpus_per_node, max_gpus=d.max_gpus // 2))


def pair_leaves(d: RailDesign) -> RailDesign:
    """A dual-homed fabric small enough for one switch still needs two: the leaf pair."""
    return replace(d, leaves=2) if d.tiers == 1 and d.leaves < 2 else d


def spine_failures_tolerated(uplinks: int, needed: int, spines: int) -> int:
    """Most spines that may fail while a leaf's remaining uplink capacity ≥ the non-blocking need:
    max j with uplinks·(spines − j)/spines ≥ needed."""
    if spines <= 0 or uplinks <= 0 or needed <= 0:
        return 0
    return max(0, int(math.floor(spines * (1.0 - needed / uplinks) + 1e-9)))


def add_spine_spares(d: RailDesign, spares: int, legs_per_node: int) -> tuple[RailDesign, int]:
    """``d`` re-sized with ``spares`` spines per plane beyond its non-blocking count; returns the
    design and the spine failures it tolerates (per plane). ``legs_per_node``: leaves per scalable
    unit (GPUs per node, × 2 with dual-ToR)."""
    if spares == 0 or d.tiers == 1:  # one switch: no spine tier to spare (plan_fabric says so)
        return d, 0
    if d.tiers != 2:
        raise InputError(
            f"spine spares are modelled for 2-tier fabrics; this one has {d.tiers} tier(s)",
            field="--spine-spares",
            value=spares,
            allowed="0, or a size / switch that plans 2 tiers (--max-tiers 2)",
        )
    R, r, gl, nodes = d.radix, float(d.oversubscription), legs_per_node, d.nodes
    base_spines = d.spines
    f = (base_spines + spares) / base_spines
    for n in range(d.nodes_per_su, 0, -1):
        sus = math.ceil(nodes / n)
        last = nodes - (sus - 1) * n
        need = [math.ceil(n / r)] * (sus - 1) + [math.ceil(last / r)]
        ups = [math.ceil(u * f - 1e-9) for u in need]
        if n + ups[0] > R or last + ups[-1] > R:
            continue
        leaves = sus * gl
        links = sum(ups) * gl
        spines = math.ceil(links / R)
        if leaves > R:  # a spine port per leaf at least: beyond that, 3 tiers
            break
        tol = spine_failures_tolerated(ups[0], need[0], spines)
        return (
            replace(
                d,
                leaf_down=min(d.leaf_down, R - ups[0]),
                leaf_up=ups[0],
                nodes_per_su=n,
                sus=sus,
                sus_per_pod=sus,
                leaves=leaves,
                spines=spines,
                leaf_spine_links=links,
            ),
            tol,
        )
    raise InputError(
        f"{spares} spare spine(s) do not fit a 2-tier fabric of radix {R} (the uplinks they need take "
        f"host ports, and the extra leaves would exceed a spine's {R} ports)",
        field="--spine-spares",
        value=spares,
        allowed="fewer spares, a larger-radix --switch, or --oversubscription",
    )
