"""Routing tables on a :class:`~aifabric.topology.core.Topology` — pure data.

* :func:`shortest_path_next_hops` — for every (node, destination host) the set of equal-cost
  next-hop links (what ECMP hashes over and adaptive routing chooses among). Hosts never forward.
  In a fat-tree or leaf-spine this *is* up-down routing; after a failure shortest paths may bounce
  down-up, which the deadlock check detects.
* :func:`up_down_next_hops` — shortest paths restricted to up*-then-down* (valley-free) by tier.
* :func:`ecmp_hash` — the deterministic per-switch salted hash of a flow's 5-tuple.
* :func:`ib_linear_forwarding` — static destination-mod-k selection among equal-cost ports, as
  OpenSM's fat-tree / min-hop engines spread destinations (one fixed port per destination).

Tables are CSR arrays so the packet engine can index them from numba:
``nh_offsets[node * H + dst_index] .. nh_offsets[...+1]`` into ``nh_links`` (link ids).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from aifabric.topology.core import HOST_TIER, Topology


@dataclass(frozen=True, eq=False)
class NextHops:
    """Equal-cost next hops: for node ``v`` and destination host index ``d`` (position of the host
    in ``hosts``), ``links[offsets[v*H+d]:offsets[v*H+d+1]]`` are the egress link ids, ascending."""

    hosts: np.ndarray  # host node ids; destination index d ↔ hosts[d]
    host_index: np.ndarray  # node id -> destination index (-1 for switches)
    offsets: np.ndarray  # int64, len num_nodes*H + 1
    links: np.ndarray  # int32
    dist: np.ndarray  # int32 (num_nodes, H) hop distance to each destination (-1 unreachable)

    def get(self, node: int, dst_host: int) -> np.ndarray:
        h = len(self.hosts)
        k = node * h + int(self.host_index[dst_host])
        return self.links[self.offsets[k] : self.offsets[k + 1]]


def _peer(topo: Topology, link: int, node: int) -> int:
    a, b = int(topo.link_a[link]), int(topo.link_b[link])
    return b if a == node else a


def _directed(topo: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = topo.num_links
    esrc = np.concatenate([topo.link_a, topo.link_b]).astype(np.int64)
    edst = np.concatenate([topo.link_b, topo.link_a]).astype(np.int64)
    lid = np.concatenate([np.arange(m), np.arange(m)]).astype(np.int32)
    return esrc, edst, lid


def _csr(topo: Topology, hosts: np.ndarray, dist: np.ndarray, mask: np.ndarray, esrc, lid) -> NextHops:
    n, h = topo.num_nodes, len(hosts)
    e_idx, d_idx = np.nonzero(mask)
    key = esrc[e_idx] * h + d_idx
    order = np.lexsort((lid[e_idx], key))
    key = key[order]
    links = lid[e_idx][order]
    offsets = np.zeros(n * h + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(key, minlength=n * h))
    host_index = np.full(n, -1, dtype=np.int32)
    host_index[hosts] = np.arange(h, dtype=np.int32)
    return NextHops(
        hosts=hosts,
        host_index=host_index,
        offsets=offsets,
        links=links.astype(np.int32),
        dist=dist.astype(np.int32),
    )


def shortest_path_next_hops(topo: Topology) -> NextHops:
    """All equal-cost shortest-path next hops (min-hop); hosts originate and sink but never
    transit. Vectorised over destinations: one BFS level at a time for all of them at once."""
    hosts = topo.hosts
    n, h = topo.num_nodes, len(hosts)
    esrc, edst, lid = _directed(topo)
    transit = topo.node_tier[edst] != HOST_TIER  # v may forward onward
    dist = np.full((n, h), -1, dtype=np.int32)
    dist[hosts, np.arange(h)] = 0
    level = 0
    while True:
        frontier = dist[edst] == level
        if level > 0:
            frontier &= transit[:, None]
        cand = frontier & (dist[esrc] < 0)
        if not cand.any():
            break
        e_idx, d_idx = np.nonzero(cand)
        dist[esrc[e_idx], d_idx] = level + 1
        level += 1
    du = dist[esrc]
    dv = dist[edst]
    is_dst = edst[:, None] == hosts[None, :]
    mask = (du > 0) & (dv == du - 1) & (transit[:, None] | is_dst)
    return _csr(topo, hosts, dist, mask, esrc, lid)


def up_down_next_hops(topo: Topology) -> NextHops:
    """Valley-free (up*, then down*) shortest paths by tier. Computed as: a path may go up only
    while it has not yet gone down. Implemented per destination by BFS on the down-phase first
    (nodes that reach the destination only going down), then extending upward."""
    off, peers, links = topo.adjacency()
    n = topo.num_nodes
    hosts = topo.hosts
    h = len(hosts)
    tier = topo.node_tier.astype(np.int64)
    host_index = np.full(n, -1, dtype=np.int32)
    host_index[hosts] = np.arange(h, dtype=np.int32)
    dist = np.full((n, h), -1, dtype=np.int32)
    counts = np.zeros(n * h, dtype=np.int64)
    chosen: dict[int, np.ndarray] = {}
    for d, dst in enumerate(hosts.tolist()):
        # down[v]: hops from v to dst using only downward moves (tier strictly decreasing)
        down = np.full(n, -1, dtype=np.int64)
        down[dst] = 0
        q = deque([dst])
        while q:
            v = q.popleft()
            for i in range(off[v], off[v + 1]):
                u = int(peers[i])
                if down[u] < 0 and tier[u] > tier[v] and (tier[v] != HOST_TIER or v == dst):
                    down[u] = down[v] + 1
                    q.append(u)
        # full[v]: min over going up then down = min(down[v], 1 + full[w]) for w above v
        full = down.copy()
        for t in sorted(set(tier.tolist()), reverse=True):
            for v in np.flatnonzero(tier == t).tolist():
                best = full[v]
                for i in range(off[v], off[v + 1]):
                    w = int(peers[i])
                    if tier[w] > tier[v] and full[w] >= 0 and (best < 0 or full[w] + 1 < best):
                        best = full[w] + 1
                full[v] = best
        dist[:, d] = full
        for u in range(n):
            if full[u] <= 0:
                continue
            sel = []
            for i in range(off[u], off[u + 1]):
                v = int(peers[i])
                if tier[v] == HOST_TIER and v != dst:
                    continue
                if tier[v] > tier[u] and full[v] == full[u] - 1 and (down[u] < 0 or down[u] > full[u]):
                    sel.append(int(links[i]))  # go up (only when going down now is not as short)
                elif tier[v] < tier[u] and down[v] == full[u] - 1 and down[u] == full[u]:
                    sel.append(int(links[i]))  # go down
            chosen[u * h + d] = np.asarray(sorted(sel), dtype=np.int32)
            counts[u * h + d] = len(sel)
    offsets = np.zeros(n * h + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(counts)
    flat = [chosen[k] for k in sorted(chosen)]
    links_arr = np.concatenate(flat).astype(np.int32) if flat else np.zeros(0, np.int32)
    return NextHops(hosts=hosts, host_index=host_index, offsets=offsets, links=links_arr, dist=dist)


_M64 = (1 << 64) - 1


def _mix64(x: int) -> int:
    """splitmix64 finaliser: a well-spread 64-bit integer hash (deterministic, platform-free)."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def switch_salt(seed: int, node: int) -> int:
    """The per-switch hash salt: derived from the scenario seed and the switch id."""
    return _mix64((seed << 32) ^ node)


def ecmp_hash(src: int, dst: int, sport: int, dport: int, proto: int, salt: int) -> int:
    """Deterministic hash of a flow's 5-tuple with a per-switch salt (as switch ASICs do: the salt
    decorrelates successive hops). RoCEv2 varies the UDP source port per QP, so flows between the
    same hosts hash differently."""
    key = (src & 0xFFFFFFFF) | ((dst & 0xFFFFFFFF) << 32)
    x = _mix64(key ^ salt)
    x = _mix64(x ^ ((sport & 0xFFFF) | ((dport & 0xFFFF) << 16) | ((proto & 0xFF) << 32)))
    return x


def ib_destination_rank(topo: Topology) -> np.ndarray:
    """Per node id, the destination's position when hosts are ordered by their leaf (the switch
    they attach to) and then by id (-1 for switches). OpenSM's fat-tree engine walks destinations
    leaf by leaf, port by port, assigning up-ports round-robin, so the hosts of one leaf spread over
    all up-ports; ranking by leaf reproduces that (a plain host-id modulo would send every GPU of
    one rail through the same few uplinks on a rail-optimised fabric)."""
    hosts = topo.hosts
    off, peers, _ = topo.adjacency()
    leaf = np.array([peers[off[h]] if off[h + 1] > off[h] else -1 for h in hosts.tolist()], dtype=np.int64)
    order = np.lexsort((hosts, leaf))
    rank = np.full(topo.num_nodes, -1, dtype=np.int64)
    rank[hosts[order]] = np.arange(len(hosts))
    return rank


def ib_tier_divisors(topo: Topology) -> np.ndarray:
    """Per tier t, the product of the up-port counts of the tiers below it (1 for hosts and leaves).
    Static routing picks option ``(rank // divisor[tier]) % k`` — the destination's next "digit" at
    each level, as d-mod-k / OpenSM fat-tree routing does — so a leaf's destinations spread over its
    up-ports and, one level up, over the next tier's (the same modulo at every level would reuse
    one core per residue)."""
    tier = topo.node_tier.astype(np.int64)
    ta, tb = tier[topo.link_a], tier[topo.link_b]
    up_from = np.where(ta < tb, topo.link_a, topo.link_b)
    max_tier = int(tier.max()) if len(tier) else 0
    div = np.ones(max_tier + 2, dtype=np.int64)
    for t in range(1, max_tier + 1):
        sw = np.flatnonzero(tier == t)
        ups = np.bincount(up_from[(np.minimum(ta, tb) == t) & (ta != tb)], minlength=topo.num_nodes)[sw]
        k = int(np.median(ups)) if len(ups) and np.median(ups) > 0 else 1
        div[t + 1] = div[t] * max(1, k)
    return div


def ib_linear_forwarding(topo: Topology, nh: NextHops | None = None) -> np.ndarray:
    """Static IB forwarding: ``lft[node, d]`` = the one egress link toward destination host index
    ``d`` (-1 where none), choosing among equal-cost ports by the destination's leaf-ordered rank
    (:func:`ib_destination_rank`), one digit per tier (:func:`ib_tier_divisors`), as OpenSM's
    fat-tree engine spreads destinations over up-ports."""
    nh = nh or shortest_path_next_hops(topo)
    n, h = topo.num_nodes, len(nh.hosts)
    rank = ib_destination_rank(topo)[nh.hosts]
    div = ib_tier_divisors(topo)
    lft = np.full((n, h), -1, dtype=np.int32)
    for u in range(n):
        dv = div[min(int(topo.node_tier[u]), len(div) - 1)]
        for d in range(h):
            k = u * h + d
            s, e = nh.offsets[k], nh.offsets[k + 1]
            if e > s:
                lft[u, d] = nh.links[s + (rank[d] // dv) % (e - s)]
    return lft


def path_of(topo: Topology, nh: NextHops, src: int, dst: int, choose=None) -> list[int]:
    """A list of link ids from ``src`` to ``dst`` following ``nh``; ``choose(node, options)``
    picks among equal-cost links (default: the first)."""
    path = []
    v = src
    seen = 0
    while v != dst:
        opts = nh.get(v, dst)
        if not len(opts):
            raise ValueError(f"no route from {topo.node_names[src]} to {topo.node_names[dst]}")
        link = int(opts[0] if choose is None else choose(v, opts))
        path.append(link)
        v = _peer(topo, link, v)
        seen += 1
        if seen > topo.num_nodes:
            raise ValueError("routing loop")
    return path
