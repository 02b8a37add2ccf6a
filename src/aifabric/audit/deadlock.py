"""PFC deadlock check: cycles in the buffer dependency graph of a topology + routing.

A node is a lossless ingress buffer ``(switch, ingress link, priority)``. There is an edge
``(v, l) → (w, l2)`` when a packet held in v's buffer for link l leaves v on link l2 towards w, so
when w's buffer for l2 fills and pauses v, the packet waits (Hu et al., "Deadlocks in Datacenter
Networks: Why Do They Form, and How to Avoid Them", HotNets 2016). A cycle of such edges can pause
forever: a PFC deadlock. Hosts only originate and sink traffic and are never buffers here.

Routes come from :mod:`aifabric.topology.routing`: ``ecmp`` (all equal-cost shortest paths, what
an L3 ECMP fabric forwards on), ``up-down`` (valley-free, deadlock-free on Clos by construction),
optionally after failing named links (which can force down-up bounces).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from aifabric.errors import InputError
from aifabric.topology import Topology, shortest_path_next_hops, up_down_next_hops

ROUTINGS = {
    "ecmp": shortest_path_next_hops,
    "shortest-path": shortest_path_next_hops,
    "up-down": up_down_next_hops,
}


@dataclass(frozen=True)
class Cycle:
    """One cyclic buffer dependency: the ingress buffers in order, as ``switch<-peer`` names."""

    priority: int
    buffers: tuple[str, ...]
    switches: tuple[str, ...]

    def describe(self) -> str:
        return " → ".join(self.buffers + self.buffers[:1])


def parse_link(topo: Topology, spec: str) -> int:
    """``"agg0-tor1"`` / ``"agg0,tor1"`` / a link id → link id; InputError when no such link."""
    s = spec.strip()
    if s.isdigit():
        if int(s) >= topo.num_links:
            raise InputError(
                "no such link id", field="--fail-link", value=s, allowed=f"0..{topo.num_links - 1}"
            )
        return int(s)
    for sep in (",", "-", ":", " "):
        if sep in s:
            parts = s.split(sep)
            for i in range(1, len(parts)):  # names may contain the separator themselves
                a, b = sep.join(parts[:i]), sep.join(parts[i:])
                try:
                    return topo.find_link(a, b)
                except KeyError:
                    continue
    raise InputError(
        "no such link",
        field="--fail-link",
        value=spec,
        allowed="two node names joined by '-', e.g. agg0-tor1, or a link id",
    )


def dependency_graph(topo: Topology, routing: str = "ecmp", priority: int = 3) -> nx.DiGraph:
    """The buffer dependency graph for one lossless priority under ``routing``."""
    if routing not in ROUTINGS:
        raise InputError("unknown routing", field="--routing", value=routing, allowed=", ".join(ROUTINGS))
    nh = ROUTINGS[routing](topo)
    a, b = topo.link_a, topo.link_b
    is_host = topo.node_tier == 0
    g = nx.DiGraph()
    for dst in topo.hosts.tolist():
        # nodes that carry traffic towards dst: every other host, then whatever they forward to
        active = set(h for h in topo.hosts.tolist() if h != dst)
        frontier = list(active)
        arrivals: dict[int, set[int]] = {}  # switch -> ingress links carrying traffic to dst
        while frontier:
            nxt = []
            for u in frontier:
                for link in nh.get(u, dst).tolist():
                    v = int(b[link]) if int(a[link]) == u else int(a[link])
                    if is_host[v]:
                        continue
                    arrivals.setdefault(v, set()).add(link)
                    if v not in active:
                        active.add(v)
                        nxt.append(v)
            frontier = nxt
        for v, ins in arrivals.items():
            outs = [int(x) for x in nh.get(v, dst).tolist()]
            for l_in in ins:
                for l_out in outs:
                    w = int(b[l_out]) if int(a[l_out]) == v else int(a[l_out])
                    if is_host[w] or l_out == l_in:
                        continue
                    g.add_edge((v, l_in, priority), (w, l_out, priority))
    return g


def _buffer_name(topo: Topology, node: tuple[int, int, int]) -> str:
    v, link, _ = node
    a, b = int(topo.link_a[link]), int(topo.link_b[link])
    peer = b if a == v else a
    return f"{topo.node_names[v]}<-{topo.node_names[peer]}"


def find_cycles(
    topo: Topology,
    routing: str = "ecmp",
    failed_links: list[str] | tuple = (),
    priorities: tuple[int, ...] = (3,),
) -> tuple[list[Cycle], Topology]:
    """One cycle per strongly connected component of the dependency graph, per priority.

    Returns (cycles, the topology actually routed — with ``failed_links`` removed)."""
    if failed_links:
        ids = [parse_link(topo, s) for s in failed_links]
        topo = topo.without_links(ids)
    cycles: list[Cycle] = []
    for prio in priorities:
        g = dependency_graph(topo, routing, prio)
        for comp in nx.strongly_connected_components(g):
            if len(comp) < 2:
                continue
            sub = g.subgraph(comp)
            edges = nx.find_cycle(sub, source=min(comp))
            nodes = [e[0] for e in edges]
            names = tuple(_buffer_name(topo, n) for n in nodes)
            sw = tuple(dict.fromkeys(topo.node_names[n[0]] for n in nodes))
            cycles.append(Cycle(prio, names, sw))
    cycles.sort(key=lambda c: (c.priority, c.buffers))
    return cycles, topo


def load_topology(spec: str) -> Topology:
    """A topology from a file (ns-3 HPCC topology.txt or ibnetdiscover output) or a builder spec:
    ``ring:N`` (N switches, 1 host each), ``fat-tree:K``, ``leaf-spine:LEAVES:SPINES:HOSTS``."""
    from pathlib import Path

    from aifabric.topology import fat_tree, leaf_spine, read_hpcc_topology, read_ibnetdiscover, ring

    rate, delay = 100 * 10**9, 10**6
    kind, _, rest = spec.partition(":")
    if not Path(spec).exists() and kind in ("ring", "fat-tree", "leaf-spine"):
        try:
            nums = [int(x) for x in rest.split(":") if x]
        except ValueError:
            nums = []
        if kind == "ring" and len(nums) in (1, 2):
            return ring(nums[0], nums[1] if len(nums) == 2 else 1, rate, delay)
        if kind == "fat-tree" and len(nums) == 1:
            return fat_tree(nums[0], rate, delay)
        if kind == "leaf-spine" and len(nums) == 3:
            return leaf_spine(nums[0], nums[1], nums[2], rate, delay)
        raise InputError(
            "bad topology spec",
            field="--topology",
            value=spec,
            allowed="ring:N[:HOSTS], fat-tree:K, leaf-spine:LEAVES:SPINES:HOSTS, or a file",
        )
    p = Path(spec)
    if not p.is_file():
        raise InputError("no such file", file=spec, field="--topology")
    try:
        head = p.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError as exc:
        raise InputError(f"cannot read: {exc.__class__.__name__}", file=spec) from None
    if "Switch" in head and ("vendid" in head or "sysimgguid" in head or "switchguid" in head):
        return read_ibnetdiscover(p)
    return read_hpcc_topology(p)
