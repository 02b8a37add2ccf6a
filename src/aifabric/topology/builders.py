"""Topology builders: fat-tree, leaf-spine, rail-optimised GPU fabric, star, dumbbell, ring.

Each builder is one function registered in :data:`TOPOLOGIES` under the word users write in
YAML (``topology.kind``). All are vectorised with numpy so a 100,000-GPU rail-optimised fabric
builds in well under a second. Bad parameters raise :class:`~aifabric.errors.InputError` naming
the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aifabric.errors import InputError
from aifabric.topology.core import Topology

FIBRE_PS_PER_M = 5050  # 5.05 ns/m (SONiC uses v = 1.98e8 m/s; hardware-facts §C, [S5])


def _need_int(value, field: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InputError("must be an integer", field=field, value=value, allowed=f"an integer ≥ {minimum}")
    return int(value)


def _need_rate(value, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
        raise InputError(
            "must be a positive rate", field=field, value=value, allowed="a rate > 0, e.g. 400Gbps"
        )
    return int(value)


def _need_delay(value, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise InputError(
            "must be a non-negative time", field=field, value=value, allowed="a time ≥ 0, e.g. 1us"
        )
    return int(value)


def _assemble(
    name, kind, tier_counts, tier_names, names, a, b, rate, delay, length=None, **extra
) -> Topology:
    tier = np.concatenate([np.full(c, t, dtype=np.int8) for t, c in enumerate(tier_counts)])
    a = np.asarray(a, dtype=np.int32)
    m = len(a)
    rate = np.broadcast_to(np.asarray(rate, dtype=np.int64), (m,))
    delay = np.broadcast_to(np.asarray(delay, dtype=np.int64), (m,))
    length = (
        np.full(m, np.nan) if length is None else np.broadcast_to(np.asarray(length, dtype=np.float64), (m,))
    )
    return Topology(
        name=name,
        kind=kind,
        node_names=tuple(names),
        node_tier=tier,
        tier_names=tier_names,
        link_a=a,
        link_b=b,
        link_rate_bps=rate,
        link_delay_ps=delay,
        link_length_m=length,
        **extra,
    )


# ---------------------------------------------------------------------------------------------
def fat_tree(k: int, link_rate_bps: int, link_delay_ps: int, name: str | None = None) -> Topology:
    """k-ary 3-tier fat-tree (Al-Fares et al.): k pods, k/2 ToRs and k/2 aggs per pod,
    (k/2)² cores, k³/4 hosts. Numbering and link order match ns-3 HPCC's ``fat.txt`` style:
    hosts 0..H-1, then ToRs, aggs, cores; agg j of each pod connects to cores j·k/2 … j·k/2+k/2-1.
    """
    k = _need_int(k, "topology.k", 2)
    if k % 2:
        raise InputError(
            "fat-tree arity must be even", field="topology.k", value=k, allowed="an even integer ≥ 2"
        )
    rate, delay = (
        _need_rate(link_rate_bps, "topology.link_rate"),
        _need_delay(link_delay_ps, "topology.link_delay"),
    )
    h = k // 2
    hosts, tors, aggs, cores = k * h * h, k * h, k * h, h * h
    t0, a0, c0 = hosts, hosts + tors, hosts + tors + aggs
    host = np.arange(hosts)
    # host i -> tor i // h
    la, lb = [host], [t0 + host // h]
    # tor t (pod p = t // h) -> every agg of pod p
    tor = np.repeat(np.arange(tors), h)
    agg_local = np.tile(np.arange(h), tors)
    la.append(t0 + tor)
    lb.append(a0 + (tor // h) * h + agg_local)
    # agg (pod p, position j) -> cores j*h .. j*h+h-1
    agg = np.repeat(np.arange(aggs), h)
    j = agg % h
    la.append(a0 + agg)
    lb.append(c0 + j * h + np.tile(np.arange(h), aggs))
    names = (
        [f"h{i}" for i in range(hosts)]
        + [f"tor{i}" for i in range(tors)]
        + [f"agg{i}" for i in range(aggs)]
        + [f"core{i}" for i in range(cores)]
    )
    group = np.concatenate([host // (h * h), np.arange(tors) // h, np.arange(aggs) // h, np.full(cores, -1)])
    return _assemble(
        name or f"fat-tree-k{k}",
        "fat-tree",
        (hosts, tors, aggs, cores),
        ("host", "tor", "agg", "core"),
        names,
        np.concatenate(la),
        np.concatenate(lb),
        rate,
        delay,
        node_group=group,
        meta={"k": k, "bisection_bps": hosts / 2 * rate},
    )


def leaf_spine(
    leaves: int,
    spines: int,
    hosts_per_leaf: int,
    link_rate_bps: int,
    link_delay_ps: int,
    uplink_rate_bps: int | None = None,
    links_per_spine: int = 1,
    name: str | None = None,
) -> Topology:
    """2-tier leaf-spine: every leaf connects to every spine with ``links_per_spine`` links.
    Oversubscription at the leaf = hosts_per_leaf·host_rate / (spines·links_per_spine·uplink_rate).
    """
    leaves = _need_int(leaves, "topology.leaves")
    spines = _need_int(spines, "topology.spines")
    hpl = _need_int(hosts_per_leaf, "topology.hosts_per_leaf")
    lps = _need_int(links_per_spine, "topology.links_per_spine")
    rate = _need_rate(link_rate_bps, "topology.link_rate")
    up = rate if uplink_rate_bps is None else _need_rate(uplink_rate_bps, "topology.uplink_rate")
    delay = _need_delay(link_delay_ps, "topology.link_delay")
    hosts = leaves * hpl
    l0, s0 = hosts, hosts + leaves
    host = np.arange(hosts)
    leaf = np.repeat(np.arange(leaves), spines * lps)
    spine = np.tile(np.repeat(np.arange(spines), lps), leaves)
    a = np.concatenate([host, l0 + leaf])
    b = np.concatenate([l0 + host // hpl, s0 + spine])
    r = np.concatenate([np.full(hosts, rate), np.full(len(leaf), up)])
    names = (
        [f"h{i}" for i in range(hosts)]
        + [f"leaf{i}" for i in range(leaves)]
        + [f"spine{i}" for i in range(spines)]
    )
    down_bw, up_bw = hpl * rate, spines * lps * up
    bis = min(hosts / 2 * rate, leaves * up_bw / 2) if leaves > 1 else 0.0
    return _assemble(
        name or f"leaf-spine-{leaves}x{spines}",
        "leaf-spine",
        (hosts, leaves, spines),
        ("host", "leaf", "spine"),
        names,
        a,
        b,
        r,
        delay,
        meta={
            "leaves": leaves,
            "spines": spines,
            "hosts_per_leaf": hpl,
            "oversubscription": down_bw / up_bw,
            "bisection_bps": bis,
        },
    )


def star(hosts: int, link_rate_bps: int, link_delay_ps: int, name: str | None = None) -> Topology:
    """One switch with ``hosts`` hosts."""
    hosts = _need_int(hosts, "topology.hosts")
    rate, delay = (
        _need_rate(link_rate_bps, "topology.link_rate"),
        _need_delay(link_delay_ps, "topology.link_delay"),
    )
    return _assemble(
        name or f"star-{hosts}",
        "star",
        (hosts, 1),
        ("host", "switch"),
        [f"h{i}" for i in range(hosts)] + ["sw0"],
        np.arange(hosts),
        np.full(hosts, hosts),
        rate,
        delay,
        meta={"bisection_bps": hosts // 2 * rate},
    )


def dumbbell(
    hosts_left: int,
    hosts_right: int,
    link_rate_bps: int,
    link_delay_ps: int,
    bottleneck_rate_bps: int | None = None,
    name: str | None = None,
) -> Topology:
    """Two switches joined by one bottleneck link; hosts 0..L-1 on ``sw0``, L..L+R-1 on ``sw1``."""
    left = _need_int(hosts_left, "topology.hosts_left")
    right = _need_int(hosts_right, "topology.hosts_right")
    rate, delay = (
        _need_rate(link_rate_bps, "topology.link_rate"),
        _need_delay(link_delay_ps, "topology.link_delay"),
    )
    bott = (
        rate if bottleneck_rate_bps is None else _need_rate(bottleneck_rate_bps, "topology.bottleneck_rate")
    )
    n = left + right
    host = np.arange(n)
    a = np.concatenate([host, [n]])
    b = np.concatenate([np.where(host < left, n, n + 1), [n + 1]])
    r = np.concatenate([np.full(n, rate), [bott]])
    return _assemble(
        name or f"dumbbell-{left}x{right}",
        "dumbbell",
        (n, 2),
        ("host", "switch"),
        [f"h{i}" for i in range(n)] + ["sw0", "sw1"],
        a,
        b,
        r,
        delay,
        meta={"bisection_bps": bott},
    )


def ring(
    switches: int, hosts_per_switch: int, link_rate_bps: int, link_delay_ps: int, name: str | None = None
) -> Topology:
    """``switches`` switches in a ring, each with ``hosts_per_switch`` hosts (the classic PFC
    deadlock topology under shortest-path routing)."""
    s = _need_int(switches, "topology.switches", 3)
    hps = _need_int(hosts_per_switch, "topology.hosts_per_switch")
    rate, delay = (
        _need_rate(link_rate_bps, "topology.link_rate"),
        _need_delay(link_delay_ps, "topology.link_delay"),
    )
    hosts = s * hps
    host = np.arange(hosts)
    sw = np.arange(s)
    a = np.concatenate([host, hosts + sw])
    b = np.concatenate([hosts + host // hps, hosts + (sw + 1) % s])
    names = [f"h{i}" for i in range(hosts)] + [f"sw{i}" for i in range(s)]
    return _assemble(
        name or f"ring-{s}",
        "ring",
        (hosts, s),
        ("host", "switch"),
        names,
        a,
        b,
        rate,
        delay,
        meta={"bisection_bps": 2 * rate},
    )


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RailDesign:
    """Closed-form sizing of a rail-optimised fabric (per plane; multiply by ``planes``).

    A scalable unit (SU) is the group of servers whose rail-r NICs share one leaf; an SU has one
    leaf per rail. Leaves have ``leaf_down`` host ports and ``leaf_up`` uplinks
    (leaf_up = ceil(leaf_down / oversubscription)). With 3 tiers, a pod holds whole SUs
    (``sus_per_pod``) and its spines have radix/2 ports down and radix/2 up (non-blocking above
    the leaf). A single switch serves the fabric when all NIC ports fit in one radix.
    """

    gpus: int
    gpus_per_node: int
    radix: int
    oversubscription: float
    planes: int
    tiers: int
    nodes: int
    leaf_down: int
    leaf_up: int
    nodes_per_su: int
    sus: int
    sus_per_pod: int
    pods: int
    leaves: int
    spines: int
    cores: int
    host_leaf_links: int
    leaf_spine_links: int
    spine_core_links: int
    max_gpus: int  # largest GPU count this radix reaches in 3 tiers at this oversubscription

    @property
    def switches(self) -> dict[str, int]:
        """Switch counts over all planes keyed by tier name."""
        if self.tiers == 1:
            return {"leaf": self.leaves * self.planes}
        out = {"leaf": self.leaves * self.planes, "spine": self.spines * self.planes}
        if self.tiers == 3:
            out["core"] = self.cores * self.planes
        return out

    @property
    def total_switches(self) -> int:
        return sum(self.switches.values())

    @property
    def links(self) -> dict[str, int]:
        out = {"host-leaf": self.host_leaf_links * self.planes}
        if self.tiers >= 2:
            out["leaf-spine"] = self.leaf_spine_links * self.planes
        if self.tiers == 3:
            out["spine-core"] = self.spine_core_links * self.planes
        return out


def leaf_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """``(down, up)`` ports of a leaf: down = floor(radix·r/(r+1)), up = ceil(down/r)."""
    down = int(math.floor(radix * oversubscription / (oversubscription + 1) + 1e-9))
    up = int(math.ceil(down / oversubscription - 1e-9))
    return down, up


def max_rail_gpus(radix: int, gpus_per_node: int, oversubscription: float = 1.0) -> dict[int, int]:
    """Largest GPU count reachable with 1, 2 and 3 tiers."""
    down, _ = leaf_ports(radix, oversubscription)
    sus_per_pod = max(1, (radix // 2) // gpus_per_node)
    return {
        1: radix,
        2: (radix // gpus_per_node) * down * gpus_per_node,
        3: radix * sus_per_pod * down * gpus_per_node,
    }


def rail_sizing(
    gpus: int,
    gpus_per_node: int = 8,
    radix: int = 64,
    oversubscription: float = 1.0,
    planes: int = 1,
    max_tiers: int = 3,
) -> RailDesign:
    """Size a rail-optimised fabric; raises :class:`InputError` when ``radix`` cannot reach
    ``gpus`` in ``max_tiers`` tiers (the message gives the largest size it can reach)."""
    gpus = _need_int(gpus, "gpus")
    g = _need_int(gpus_per_node, "gpus_per_node")
    radix = _need_int(radix, "radix", 2)
    planes = _need_int(planes, "planes")
    if (
        isinstance(oversubscription, bool)
        or not isinstance(oversubscription, int | float)
        or oversubscription < 1
    ):
        raise InputError(
            "must be a number ≥ 1",
            field="oversubscription",
            value=oversubscription,
            allowed="a ratio ≥ 1, e.g. 1 (non-blocking) or 2 (2:1)",
        )
    if gpus > g and gpus % g:
        raise InputError(
            f"must be a multiple of gpus_per_node ({g})",
            field="gpus",
            value=gpus,
            allowed=f"1..{g} or a multiple of {g}",
        )
    r = float(oversubscription)
    nodes = max(1, math.ceil(gpus / g))
    caps = max_rail_gpus(radix, g, r)
    if gpus <= radix:
        return RailDesign(
            gpus, g, radix, r, planes, 1, nodes, radix, 0, nodes, 1, 1, 1, 1, 0, 0, gpus, 0, 0, caps[3]
        )
    down, up = leaf_ports(radix, r)
    if g > radix // 2:
        raise InputError(
            "a rail leaf must hold at least one scalable unit",
            field="gpus_per_node",
            value=g,
            allowed=f"≤ {radix // 2} for radix {radix}",
        )
    nodes_per_su = min(down, nodes)
    sus = math.ceil(nodes / nodes_per_su)
    leaves = sus * g
    # hosts on each leaf: full SUs have nodes_per_su; the last may be partial
    last = nodes - (sus - 1) * nodes_per_su
    host_leaf = gpus
    per_leaf_up = np.array([math.ceil(nodes_per_su / r)] * (sus - 1) + [math.ceil(last / r)])
    leaf_spine = int(per_leaf_up.sum()) * g
    tiers_needed = 2 if leaves <= radix else 3
    if tiers_needed > max_tiers or gpus > caps[3]:
        raise InputError(
            f"{gpus} GPUs exceed what radix-{radix} switches reach in {max_tiers} tiers "
            f"({caps[min(max_tiers, 3)]} GPUs at {r:g}:1)",
            field="gpus",
            value=gpus,
            allowed=f"≤ {caps[min(max_tiers, 3)]}, or a switch with a larger radix, or more planes",
        )
    if tiers_needed == 2:
        spines = math.ceil(leaf_spine / radix)
        return RailDesign(
            gpus,
            g,
            radix,
            r,
            planes,
            2,
            nodes,
            down,
            up,
            nodes_per_su,
            sus,
            sus,
            1,
            leaves,
            spines,
            0,
            host_leaf,
            leaf_spine,
            0,
            caps[3],
        )
    sus_per_pod = max(1, (radix // 2) // g)
    pods, pod_plans, group_size = _three_tier_wiring(per_leaf_up, g, sus_per_pod, radix)
    spines = sum(pp[2] for pp in pod_plans)
    cores = int(group_size.sum())
    return RailDesign(
        gpus,
        g,
        radix,
        r,
        planes,
        3,
        nodes,
        down,
        up,
        nodes_per_su,
        sus,
        sus_per_pod,
        pods,
        leaves,
        spines,
        cores,
        host_leaf,
        leaf_spine,
        leaf_spine,
        caps[3],
    )


def _three_tier_wiring(per_su_leaf_up: np.ndarray, g: int, sus_per_pod: int, radix: int):
    """Shared by sizing and building. Pods hold whole SUs; in a pod, leaf uplinks are dealt
    round-robin over ceil(uplinks / (radix/2)) spines; spine i of every pod goes to core group i,
    which has ceil(its uplinks / radix) cores. Returns ``(pods, [(leaf_ids, spine_of_up, n_spines,
    downlinks_per_spine)], core_group_size)`` with leaf ids local to the plane."""
    half = radix // 2
    ups = np.repeat(np.asarray(per_su_leaf_up, dtype=np.int64), g)  # per leaf (SU-major, rail-minor)
    sus = len(per_su_leaf_up)
    pods = math.ceil(sus / sus_per_pod)
    plans = []
    per_pos: list[int] = []
    for pod in range(pods):
        pl = np.arange(pod * sus_per_pod * g, min(sus, (pod + 1) * sus_per_pod) * g)
        pod_ups = ups[pl]
        total = int(pod_ups.sum())
        n_sp = math.ceil(total / half)
        j = np.arange(total) - np.repeat(np.concatenate([[0], np.cumsum(pod_ups)[:-1]]), pod_ups)
        pos = np.repeat(np.arange(len(pl)), pod_ups)
        sp = (pos * int(pod_ups.max()) + j) % n_sp
        down = np.bincount(sp, minlength=n_sp)
        plans.append((pl, sp, n_sp, down))
        for i in range(n_sp):
            if i == len(per_pos):
                per_pos.append(0)
            per_pos[i] += int(down[i])
    group_size = np.maximum(1, np.ceil(np.asarray(per_pos) / radix).astype(np.int64))
    return pods, plans, group_size


def rail_optimized(
    gpus: int,
    link_rate_bps: int,
    gpus_per_node: int = 8,
    radix: int = 64,
    oversubscription: float = 1.0,
    planes: int = 1,
    link_delay_ps: int | None = None,
    lengths_m: tuple[float, float, float] = (5.0, 40.0, 300.0),
    name: str | None = None,
) -> Topology:
    """Rail-optimised GPU fabric: one NIC per GPU, GPU g of every server on rail g; a leaf per rail
    per scalable unit; spines (and a core tier when the radix demands it); optional planes (each
    NIC port to its own plane, at ``link_rate_bps`` per plane).

    ``link_delay_ps`` overrides per-class delays; otherwise each class's delay is its length in
    ``lengths_m`` (host-leaf, leaf-spine, spine-core) × 5.05 ns/m fibre.
    """
    rate = _need_rate(link_rate_bps, "topology.link_rate")
    d = rail_sizing(gpus, gpus_per_node, radix, oversubscription, planes)
    g = d.gpus_per_node
    if link_delay_ps is not None:
        _need_delay(link_delay_ps, "topology.link_delay")
    delays = [int(round(x * FIBRE_PS_PER_M)) if link_delay_ps is None else link_delay_ps for x in lengths_m]
    gpu = np.arange(d.gpus)
    node = gpu // g
    rail = gpu % g
    names = [f"n{n}-g{r}" for n, r in zip(node.tolist(), rail.tolist(), strict=True)]
    tier_counts = [d.gpus, d.leaves * d.planes]
    if d.tiers >= 2:
        tier_counts.append(d.spines * d.planes)
    if d.tiers == 3:
        tier_counts.append(d.cores * d.planes)
    offs = np.cumsum([0] + tier_counts)
    la, lb, lc = [], [], []  # endpoints and class index
    group = [node // d.nodes_per_su if d.tiers > 1 else np.zeros(d.gpus, dtype=int)]
    rails = [rail]
    plane_ids = [np.full(d.gpus, -1)]
    leaf_names, spine_names, core_names = [], [], []
    leaf_group, leaf_rail, spine_group = [], [], []
    for p in range(d.planes):
        pre = f"p{p}-" if d.planes > 1 else ""
        if d.tiers == 1:
            leaf_names.append(f"{pre}sw0")
            leaf_group.append(0)
            leaf_rail.append(-1)
            la.append(gpu)
            lb.append(np.full(d.gpus, offs[1] + p))
            lc.append(np.zeros(d.gpus, dtype=np.int8))
            continue
        su = node // d.nodes_per_su
        leaf_local = su * g + rail  # leaf index within the plane
        leaf_base = offs[1] + p * d.leaves
        la.append(gpu)
        lb.append(leaf_base + leaf_local)
        lc.append(np.zeros(d.gpus, dtype=np.int8))
        for s in range(d.sus):
            for r in range(g):
                leaf_names.append(f"{pre}su{s}-rail{r}")
                leaf_group.append(s)
                leaf_rail.append(r)
        # hosts per leaf
        hosts_on_leaf = np.bincount(leaf_local, minlength=d.leaves)
        ups = np.ceil(hosts_on_leaf / d.oversubscription - 1e-9).astype(np.int64)
        spine_base = offs[2] + p * d.spines
        if d.tiers == 2:
            leaf_of_up = np.repeat(np.arange(d.leaves), ups)
            start = np.concatenate([[0], np.cumsum(ups)[:-1]])
            j = np.arange(len(leaf_of_up)) - np.repeat(start, ups)
            spine_of_up = (leaf_of_up * ups.max() + j) % d.spines if d.spines else j
            la.append(leaf_base + leaf_of_up)
            lb.append(spine_base + spine_of_up)
            lc.append(np.ones(len(leaf_of_up), dtype=np.int8))
            spine_names.extend(f"{pre}spine{i}" for i in range(d.spines))
            spine_group.extend([-1] * d.spines)
            continue
        # 3 tiers: pods of whole SUs
        su_ups = ups.reshape(d.sus, g)[:, 0]
        _, plans, group_size = _three_tier_wiring(su_ups, g, d.sus_per_pod, d.radix)
        core_base = offs[3] + p * d.cores
        group_start = np.concatenate([[0], np.cumsum(group_size)[:-1]])
        cursor = np.zeros(len(group_size), dtype=np.int64)
        spine_cursor = 0
        for pod, (pl, sp, n_sp, down) in enumerate(plans):
            leaf_of_up = np.repeat(pl, ups[pl])
            la.append(leaf_base + leaf_of_up)
            lb.append(spine_base + spine_cursor + sp)
            lc.append(np.ones(len(sp), dtype=np.int8))
            for i in range(n_sp):
                spine_names.append(f"{pre}pod{pod}-spine{i}")
                spine_group.append(pod)
                upl = int(down[i])
                k = np.arange(upl) + cursor[i]
                cursor[i] += upl
                la.append(np.full(upl, spine_base + spine_cursor + i))
                lb.append(core_base + group_start[i] + (k % group_size[i]))
                lc.append(np.full(upl, 2, dtype=np.int8))
            spine_cursor += n_sp
        core_names.extend(f"{pre}core{i}" for i in range(d.cores))
    a = np.concatenate(la)
    b = np.concatenate(lb)
    cls = np.concatenate(lc)
    delay = np.asarray(delays, dtype=np.int64)[cls]
    length = (
        np.asarray(lengths_m, dtype=np.float64)[cls] if link_delay_ps is None else np.full(len(a), np.nan)
    )
    all_names = names + leaf_names + spine_names + core_names
    n_sw = len(all_names) - d.gpus
    node_group = np.concatenate(
        [
            group[0],
            np.asarray(leaf_group),
            np.asarray(spine_group, dtype=np.int64),
            np.full(len(core_names), -1),
        ]
    ).astype(np.int32)
    node_rail = np.concatenate([rails[0], np.asarray(leaf_rail), np.full(n_sw - len(leaf_rail), -1)])
    per_plane = [d.leaves if d.tiers > 1 else 1, d.spines, d.cores]
    plane_arr = [plane_ids[0]]
    for t in range(d.tiers):
        plane_arr.append(np.repeat(np.arange(d.planes), per_plane[t]))
    tier_names = ("host", "leaf", "spine", "core")[: d.tiers + 1]
    host_bw = d.gpus * rate * d.planes
    return _assemble(
        name or f"rail-optimized-{d.gpus}",
        "rail-optimized",
        tier_counts,
        tier_names,
        all_names,
        a,
        b,
        rate,
        delay,
        length,
        node_group=node_group,
        node_rail=node_rail,
        node_plane=np.concatenate(plane_arr),
        meta={"design": d, "bisection_bps": host_bw / 2 / d.oversubscription},
    )


TOPOLOGIES = {
    "fat-tree": fat_tree,
    "leaf-spine": leaf_spine,
    "rail-optimized": rail_optimized,
    "star": star,
    "dumbbell": dumbbell,
    "ring": ring,
}


def from_spec(spec) -> Topology:
    """Build the topology a scenario's ``topology:`` section (a ``TopologySpec``) describes."""
    from aifabric.topology.io import read_hpcc_topology, read_ibnetdiscover

    rate, delay = spec.link_rate_bps, spec.link_delay_ps
    kind = spec.kind
    if kind == "fat-tree":
        return fat_tree(spec.k, rate, delay)
    if kind == "leaf-spine":
        return leaf_spine(
            spec.leaves,
            spec.spines,
            spec.hosts_per_leaf,
            rate,
            delay,
            uplink_rate_bps=spec.uplink_rate,
            links_per_spine=spec.links_per_spine or 1,
        )
    if kind == "rail-optimized":
        return rail_optimized(
            spec.gpus,
            rate,
            gpus_per_node=spec.gpus_per_node or 8,
            radix=spec.radix or 64,
            oversubscription=spec.oversubscription or 1.0,
            planes=spec.planes or 1,
            link_delay_ps=delay,
        )
    if kind == "star":
        return star(spec.hosts, rate, delay)
    if kind == "dumbbell":
        return dumbbell(
            spec.hosts_left, spec.hosts_right, rate, delay, bottleneck_rate_bps=spec.bottleneck_rate
        )
    if kind == "ring":
        return ring(spec.switches, spec.hosts_per_switch, rate, delay)
    if kind == "hpcc-file":
        return read_hpcc_topology(spec.path)
    if kind == "ibnetdiscover":
        return read_ibnetdiscover(spec.path, link_delay_ps=delay)
    raise InputError(
        "unknown topology kind", field="topology.kind", value=kind, allowed=", ".join(TOPOLOGIES)
    )
