"""The :class:`Topology` — pure data: nodes, links (full duplex, one entry per cable), helpers.

Node naming (the one place it is documented; builders follow it):

* Node ids are integers ``0 .. num_nodes-1``. Builders number hosts first (``0 .. H-1``) so host
  ids match ns-3 HPCC and htsim flow files; imported files keep their own ids.
* ``node_tier``: 0 = host (a GPU's NIC port, or a server), 1 = leaf / ToR, 2 = spine /
  aggregation, 3 = core / super-spine. ``tier_names`` gives the word used for each tier.
* Names: fat-tree ``h{i}``, ``tor{i}``, ``agg{i}``, ``core{i}`` (i counted within the tier);
  leaf-spine ``h{i}``, ``leaf{i}``, ``spine{i}``; rail-optimised ``n{node}-g{gpu}`` for the GPU
  NIC (gpu = rail), ``su{su}-rail{rail}`` leaves, ``spine{i}`` (2 tiers) or ``pod{p}-spine{i}``
  and ``core{i}`` (3 tiers), with a ``p{plane}-`` prefix on switches when there are several
  planes; star ``h{i}``, ``sw0``; dumbbell ``h{i}``, ``sw0``, ``sw1``; ring ``h{i}``, ``sw{i}``.
* Links: ``link_a`` is the lower-tier end (host side), ``link_b`` the upper end. The link class
  is named by its two tiers, e.g. ``host-leaf``, ``leaf-spine``, ``spine-core``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

HOST_TIER = 0


def _frozen(arr: np.ndarray, dtype) -> np.ndarray:
    out = np.ascontiguousarray(arr, dtype=dtype)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Topology:
    """An immutable network graph. Arrays are read-only; build a new one to change it."""

    name: str
    kind: str
    node_names: tuple[str, ...]
    node_tier: np.ndarray  # int8 per node
    tier_names: tuple[str, ...]
    link_a: np.ndarray  # int32 per link, lower-tier end
    link_b: np.ndarray  # int32 per link, upper-tier end
    link_rate_bps: np.ndarray  # int64 per link
    link_delay_ps: np.ndarray  # int64 per link (propagation)
    link_length_m: np.ndarray  # float64 per link (nan when unknown)
    node_group: np.ndarray | None = None  # int32 per node: pod / scalable unit (-1 n/a)
    node_rail: np.ndarray | None = None  # int16 per node: rail of a GPU NIC or rail leaf (-1 n/a)
    node_plane: np.ndarray | None = None  # int16 per node: plane of a switch (-1 n/a)
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.node_names)
        object.__setattr__(self, "node_tier", _frozen(self.node_tier, np.int8))
        for name, dtype in (
            ("link_a", np.int32),
            ("link_b", np.int32),
            ("link_rate_bps", np.int64),
            ("link_delay_ps", np.int64),
            ("link_length_m", np.float64),
        ):
            object.__setattr__(self, name, _frozen(getattr(self, name), dtype))
        for name, dtype in (("node_group", np.int32), ("node_rail", np.int16), ("node_plane", np.int16)):
            val = getattr(self, name)
            if val is None:
                val = np.full(n, -1)
            object.__setattr__(self, name, _frozen(val, dtype))
        if len(self.node_tier) != n:
            raise ValueError("node_tier length differs from node_names")
        m = len(self.link_a)
        for name in ("link_b", "link_rate_bps", "link_delay_ps", "link_length_m"):
            if len(getattr(self, name)) != m:
                raise ValueError(f"{name} length differs from link_a")
        if m and (
            self.link_a.min() < 0 or self.link_b.min() < 0 or max(self.link_a.max(), self.link_b.max()) >= n
        ):
            raise ValueError("link endpoint out of range")

    # ---- sizes -------------------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return len(self.node_names)

    @property
    def num_links(self) -> int:
        return len(self.link_a)

    @property
    def hosts(self) -> np.ndarray:
        """Ids of host nodes (tier 0), ascending."""
        return np.flatnonzero(self.node_tier == HOST_TIER)

    @property
    def switches(self) -> np.ndarray:
        """Ids of switch nodes (tier ≥ 1), ascending."""
        return np.flatnonzero(self.node_tier != HOST_TIER)

    @property
    def num_hosts(self) -> int:
        return int(np.count_nonzero(self.node_tier == HOST_TIER))

    @property
    def num_switches(self) -> int:
        return self.num_nodes - self.num_hosts

    def is_host(self, node: int) -> bool:
        return int(self.node_tier[node]) == HOST_TIER

    def host_leaf(self) -> np.ndarray:
        """Per node, the switch a host's link goes to (its leaf; -1 for switches and unattached
        hosts). A host with several links (planes, dual-ToR legs) gets its highest-numbered link's."""
        out = np.full(self.num_nodes, -1, dtype=np.int64)
        up = self.node_tier[self.link_a] == HOST_TIER
        out[self.link_a[up]] = self.link_b[up]
        return out

    def in_leaf_share(self, src, dst, weight=None) -> float | None:
        """Share of (``weight``-weighted) host pairs whose two ends hang under one leaf (None: no pairs)."""
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        if not len(src):
            return None
        leaf = self.host_leaf()
        w = np.ones(len(src)) if weight is None else np.asarray(weight, dtype=np.float64)
        same = (leaf[src] == leaf[dst]) & (leaf[src] >= 0)
        return float(w[same].sum() / w.sum()) if w.sum() > 0 else None

    def tier_name(self, tier: int) -> str:
        return self.tier_names[tier] if tier < len(self.tier_names) else f"tier{tier}"

    def switches_per_tier(self) -> dict[str, int]:
        """``{"leaf": 32, "spine": 16}`` — switch counts keyed by tier name, lowest tier first."""
        tiers, counts = np.unique(self.node_tier[self.node_tier != HOST_TIER], return_counts=True)
        return {self.tier_name(int(t)): int(c) for t, c in zip(tiers, counts, strict=True)}

    def link_class(self, link: int) -> str:
        ta, tb = sorted((int(self.node_tier[self.link_a[link]]), int(self.node_tier[self.link_b[link]])))
        return f"{self.tier_name(ta)}-{self.tier_name(tb)}"

    def links_per_class(self) -> dict[str, int]:
        """Link counts keyed by class (``host-leaf``, ``leaf-spine``, ...), lowest tier first."""
        ta = self.node_tier[self.link_a].astype(np.int16)
        tb = self.node_tier[self.link_b].astype(np.int16)
        lo, hi = np.minimum(ta, tb), np.maximum(ta, tb)
        key = lo * 16 + hi
        vals, counts = np.unique(key, return_counts=True)
        return {
            f"{self.tier_name(int(v) // 16)}-{self.tier_name(int(v) % 16)}": int(c)
            for v, c in zip(vals, counts, strict=True)
        }

    @property
    def tiers(self) -> int:
        """Number of switch tiers (1 for a single switch layer)."""
        return int(self.node_tier.max()) if self.num_nodes else 0

    # ---- adjacency ---------------------------------------------------------------------------
    def adjacency(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR adjacency: ``(offsets, peers, links)``; node ``v``'s ports are
        ``peers[offsets[v]:offsets[v+1]]`` over ``links[...]``. Port order: by link id."""
        cached = self.__dict__.get("_adj")
        if cached is not None:
            return cached
        m = self.num_links
        src = np.concatenate([self.link_a, self.link_b])
        dst = np.concatenate([self.link_b, self.link_a])
        lid = np.concatenate([np.arange(m), np.arange(m)]).astype(np.int32)
        order = np.lexsort((lid, src))
        src, dst, lid = src[order], dst[order], lid[order]
        offsets = np.zeros(self.num_nodes + 1, dtype=np.int64)
        np.add.at(offsets, src + 1, 1)
        offsets = np.cumsum(offsets)
        adj = (_frozen(offsets, np.int64), _frozen(dst, np.int32), _frozen(lid, np.int32))
        object.__setattr__(self, "_adj", adj)
        return adj

    def neighbors(self, node: int) -> list[tuple[int, int]]:
        """``[(peer, link_id), ...]`` of ``node`` in port order."""
        off, peers, links = self.adjacency()
        s, e = off[node], off[node + 1]
        return list(zip(peers[s:e].tolist(), links[s:e].tolist(), strict=True))

    def degree(self) -> np.ndarray:
        off, _, _ = self.adjacency()
        return np.diff(off)

    def bfs_hops(self, source: int) -> np.ndarray:
        """Hop count from ``source`` to every node (-1 where unreachable); hosts do not forward."""
        off, peers, _ = self.adjacency()
        dist = np.full(self.num_nodes, -1, dtype=np.int32)
        dist[source] = 0
        q = deque([source])
        while q:
            v = q.popleft()
            if v != source and self.node_tier[v] == HOST_TIER:
                continue
            for p in peers[off[v] : off[v + 1]]:
                if dist[p] < 0:
                    dist[p] = dist[v] + 1
                    q.append(int(p))
        return dist

    def hop_count(self, a: int, b: int) -> int:
        """Links on a shortest path from ``a`` to ``b`` (-1 if unreachable)."""
        return int(self.bfs_hops(a)[b])

    def max_host_hops(self, sample: int = 16) -> int:
        """Largest host-to-host hop count seen from up to ``sample`` source hosts (the diameter in
        symmetric fabrics)."""
        hosts = self.hosts
        if len(hosts) < 2:
            return 0
        idx = np.linspace(0, len(hosts) - 1, min(sample, len(hosts))).astype(int)
        best = 0
        for h in hosts[idx]:
            d = self.bfs_hops(int(h))[hosts]
            best = max(best, int(d.max()))
        return best

    def bisection_bandwidth_bps(self) -> float:
        """Bisection bandwidth: the builders' closed form when known (``meta['bisection_bps']``),
        else the max flow between the first and second half of the hosts (by id), computed with
        networkx on graphs of up to 20,000 nodes."""
        if "bisection_bps" in self.meta:
            return float(self.meta["bisection_bps"])
        if self.num_nodes > 20000:
            raise ValueError("bisection of an unstructured topology this large is not computed")
        import networkx as nx

        g = nx.DiGraph()
        for a, b, r in zip(
            self.link_a.tolist(), self.link_b.tolist(), self.link_rate_bps.tolist(), strict=True
        ):
            for u, v in ((a, b), (b, a)):
                if g.has_edge(u, v):
                    g[u][v]["capacity"] += r
                else:
                    g.add_edge(u, v, capacity=r)
        hosts = self.hosts.tolist()
        half = len(hosts) // 2
        if half == 0:
            return 0.0
        for h in hosts[:half]:
            g.add_edge("S", h, capacity=float("inf"))
        for h in hosts[half : 2 * half]:
            g.add_edge(h, "T", capacity=float("inf"))
        value, _ = nx.maximum_flow(g, "S", "T")
        return float(value)

    def to_networkx(self):
        """A ``networkx.MultiGraph``: node attrs ``name``, ``tier``; edge key = link id with
        ``rate_bps`` and ``delay_ps``."""
        import networkx as nx

        g = nx.MultiGraph()
        for i, (nm, t) in enumerate(zip(self.node_names, self.node_tier.tolist(), strict=True)):
            g.add_node(i, name=nm, tier=t)
        for i in range(self.num_links):
            g.add_edge(
                int(self.link_a[i]),
                int(self.link_b[i]),
                key=i,
                rate_bps=int(self.link_rate_bps[i]),
                delay_ps=int(self.link_delay_ps[i]),
            )
        return g

    def without_links(self, links) -> Topology:
        """A copy with the given link ids removed (a failure); node ids unchanged."""
        keep = np.ones(self.num_links, dtype=bool)
        keep[np.asarray(list(links), dtype=np.int64)] = False
        meta = {k: v for k, v in self.meta.items() if k != "bisection_bps"}
        meta["failed_links"] = tuple(int(x) for x in np.flatnonzero(~keep))
        return Topology(
            name=self.name,
            kind=self.kind,
            node_names=self.node_names,
            node_tier=self.node_tier,
            tier_names=self.tier_names,
            link_a=self.link_a[keep],
            link_b=self.link_b[keep],
            link_rate_bps=self.link_rate_bps[keep],
            link_delay_ps=self.link_delay_ps[keep],
            link_length_m=self.link_length_m[keep],
            node_group=self.node_group,
            node_rail=self.node_rail,
            node_plane=self.node_plane,
            meta=meta,
        )

    def find_link(self, a: int | str, b: int | str) -> int:
        """Id of a link between two nodes (given by id or name); raises KeyError if none."""
        ia = self.node_id(a)
        ib = self.node_id(b)
        hit = np.flatnonzero(
            ((self.link_a == ia) & (self.link_b == ib)) | ((self.link_a == ib) & (self.link_b == ia))
        )
        if not len(hit):
            raise KeyError(f"no link between {a} and {b}")
        return int(hit[0])

    def node_id(self, node: int | str) -> int:
        if isinstance(node, int | np.integer):
            return int(node)
        index = self.__dict__.get("_name_index")
        if index is None:
            index = {n: i for i, n in enumerate(self.node_names)}
            object.__setattr__(self, "_name_index", index)
        return index[node]

    def summary(self) -> dict:
        """Counts for display: hosts, switches per tier, links per class."""
        return {
            "name": self.name,
            "kind": self.kind,
            "hosts": self.num_hosts,
            "switches": self.switches_per_tier(),
            "links": self.links_per_class(),
            "tiers": self.tiers,
        }
