"""Topology files: ns-3 HPCC ``topology.txt`` (import and export) and ``ibnetdiscover`` (import).

ns-3 HPCC ``topology.txt``::

    <total_nodes> <num_switches> <num_links>
    <switch ids, space separated>
    <node_a> <node_b> <rate e.g. 100Gbps> <delay e.g. 0.001ms> <error_rate>     (one line per link)

Node ids are kept as in the file. Tiers are inferred: a switch adjacent to a host is tier 1, and
every other switch is one more than its lowest-tier neighbour (BFS from the hosts).

``ibnetdiscover`` (rdma-core infiniband-diags): blocks of ``Switch|Ca|Rt <nports> "<id>" # "<desc>"``
followed by port lines ``[port] "<peer id>"[peerport] ... # ... <width><speed>``. Each link is
reported from both ends; we keep one. Switches named ``...IBLEAF...``/``...IBSPINE...`` or at
distance from CAs get tiers as above. SHARP "Aggregation Node" CAs are kept as hosts but flagged in
``meta['aggregation_nodes']``.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aifabric.errors import InputError
from aifabric.topology.core import Topology
from aifabric.units import UnitError, parse_rate, parse_time

MAX_LINKS = 10**8
MAX_RATE_BPS = 10**15  # as scenario rates
MAX_DELAY_PS = 10**17  # as scenario times


def _read_text(path: str | Path) -> str:
    from aifabric.memory import read_text

    return read_text(path, "topology file", errors="replace")


def _infer_tiers(
    n: int, is_switch: np.ndarray, a: np.ndarray, b: np.ndarray, not_seeds: tuple[int, ...] = ()
) -> np.ndarray:
    tier = np.where(is_switch, -1, 0).astype(np.int64)
    seeds = ~is_switch
    seeds[list(not_seeds)] = False
    adj: list[list[int]] = [[] for _ in range(n)]
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        adj[x].append(y)
        adj[y].append(x)
    q = deque(int(i) for i in np.flatnonzero(seeds))
    while q:
        v = q.popleft()
        for p in adj[v]:
            if tier[p] < 0:
                tier[p] = tier[v] + 1
                q.append(p)
    tier[tier < 0] = 1  # switches with no path to a host
    return tier


def _orient(tier: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    swap = tier[a] > tier[b]
    return np.where(swap, b, a), np.where(swap, a, b)


def _tier_names(max_tier: int) -> tuple[str, ...]:
    base = ("host", "leaf", "spine", "core")
    return tuple(base[t] if t < len(base) else f"tier{t}" for t in range(max_tier + 1))


def read_hpcc_topology(path: str | Path) -> Topology:
    """Load an ns-3 HPCC ``topology.txt``. Raises :class:`InputError` naming file and line."""
    text = _read_text(path)
    f = str(path)
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    if len(lines) < 2:
        raise InputError(
            "expected a header line and a switch-id line",
            file=f,
            field="line 1",
            allowed="'<nodes> <switches> <links>' then the switch ids",
        )
    head = lines[0].split()
    try:
        n, ns, nl = (int(x) for x in head[:3])
        if len(head) < 3 or min(n, nl) < 0 or ns < 0 or ns > n or nl > MAX_LINKS:
            raise ValueError
    except ValueError:
        raise InputError(
            "bad header",
            file=f,
            field="line 1",
            value=lines[0],
            allowed="three non-negative integers: <nodes> <switches> <links>",
        ) from None
    try:
        sw = [int(x) for x in lines[1].split()] if ns else []
    except ValueError:
        raise InputError(
            "bad switch id list",
            file=f,
            field="line 2",
            value=lines[1][:60],
            allowed="space-separated integer node ids",
        ) from None
    if len(sw) != ns or any(not 0 <= s < n for s in sw):
        raise InputError(f"expected {ns} switch ids in 0..{n - 1}", file=f, field="line 2", value=len(sw))
    if n - ns > 2 * nl:  # every host needs a link; also bounds the node tables by the file's size
        raise InputError(
            f"{n - ns} hosts but only {nl} links",
            file=f,
            field="line 1",
            value=lines[0],
            allowed="at most 2 × links hosts (each host has a link)",
        )
    body = lines[2:] if ns else lines[1:]
    if len(body) != nl:
        raise InputError(
            f"header says {nl} links but the file has {len(body)} link lines",
            file=f,
            field="line 1",
            allowed="the link count of the header",
        )
    a = np.empty(nl, dtype=np.int64)
    b = np.empty(nl, dtype=np.int64)
    rate = np.empty(nl, dtype=np.int64)
    delay = np.empty(nl, dtype=np.int64)
    first = 3 if ns else 2
    for i, ln in enumerate(body):
        parts = ln.split()
        where = f"line {first + i}"
        if len(parts) < 4:
            raise InputError(
                "expected '<a> <b> <rate> <delay> [error_rate]'", file=f, field=where, value=ln[:60]
            )
        try:
            x, y = int(parts[0]), int(parts[1])
        except ValueError:
            raise InputError("node ids must be integers", file=f, field=where, value=ln[:60]) from None
        if not (0 <= x < n and 0 <= y < n) or x == y:
            raise InputError(
                f"link endpoints must be two different ids in 0..{n - 1}", file=f, field=where, value=ln[:60]
            )
        a[i], b[i] = x, y
        try:
            r, d = parse_rate(parts[2]), parse_time(parts[3])
        except UnitError as exc:
            raise InputError(
                "bad rate or delay", file=f, field=where, value=exc.value, allowed=exc.allowed
            ) from None
        if not 0 < r <= MAX_RATE_BPS:
            raise InputError("link rate must be in (0, 1 Pbps]", file=f, field=where, value=parts[2])
        if not 0 <= d <= MAX_DELAY_PS:
            raise InputError("link delay must be in [0, 100000 s]", file=f, field=where, value=parts[3])
        rate[i], delay[i] = r, d
    is_switch = np.zeros(n, dtype=bool)
    is_switch[sw] = True
    tier = _infer_tiers(n, is_switch, a, b)
    a, b = _orient(tier, a, b)
    names = [(f"sw{i}" if is_switch[i] else f"h{i}") for i in range(n)]
    return Topology(
        name=Path(path).stem,
        kind="hpcc-file",
        node_names=tuple(names),
        node_tier=tier,
        tier_names=_tier_names(int(tier.max()) if n else 0),
        link_a=a,
        link_b=b,
        link_rate_bps=rate,
        link_delay_ps=delay,
        link_length_m=np.full(nl, np.nan),
        meta={"source_file": str(path)},
    )


def _fmt_rate_ns3(rate_bps: int) -> str:
    for unit, fct in (("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3)):
        if rate_bps % fct == 0:
            return f"{rate_bps // fct}{unit}"
    return f"{rate_bps}bps"


def _fmt_delay_ns3(delay_ps: int) -> str:
    if delay_ps % 1000 == 0:
        return f"{delay_ps / 10**9:g}ms"
    return f"{delay_ps / 1000:g}ns"


def write_hpcc_topology(topo: Topology, path: str | Path | None = None, error_rate: float = 0.0) -> str:
    """Serialise to ns-3 HPCC ``topology.txt`` (returns the text; writes it when ``path`` is given)."""
    sw = topo.switches
    out = [f"{topo.num_nodes} {len(sw)} {topo.num_links}", " ".join(str(int(s)) for s in sw)]
    for a, b, r, d in zip(
        topo.link_a.tolist(),
        topo.link_b.tolist(),
        topo.link_rate_bps.tolist(),
        topo.link_delay_ps.tolist(),
        strict=True,
    ):
        out.append(f"{a} {b} {_fmt_rate_ns3(r)} {_fmt_delay_ns3(d)} {error_rate:g}")
    text = "\n".join(out) + "\n"
    if path is not None:
        Path(path).write_text(text)
    return text


# ---- ibnetdiscover --------------------------------------------------------------------------
IB_GBPS_PER_LANE = {
    "SDR": 2.5,
    "DDR": 5,
    "QDR": 10,
    "FDR10": 10,
    "FDR": 14,
    "EDR": 25,
    "HDR": 50,
    "NDR": 100,
    "XDR": 200,
}
_IB_WIDTHS = (1, 2, 4, 8, 12)
_HEADER = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"([^"]*)")?')
_PORT = re.compile(r'^\[(\d+)\](?:\[ext \d+\])?(?:\([0-9a-fA-Fx]+\))?\s+"([^"]+)"\[(\d+)\]')
_WIDTH_SPEED = re.compile(r"\b(\d+)x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\b")


def ib_link_rate_bps(token: str) -> int:
    """``'4xNDR'`` → 400 Gb/s (data rate: lanes × the generation's per-lane rate)."""
    m = _WIDTH_SPEED.search(token)
    if not m:
        raise ValueError(token)
    return int(int(m.group(1)) * IB_GBPS_PER_LANE[m.group(2)] * 10**9)


@dataclass(frozen=True)
class IbPortLine:
    """One port line of an ``ibnetdiscover`` dump: this end and the peer as ``(node id, port)``, the
    width and speed the line gives (``lanes`` 0 and ``speed`` "" when it gives none) and its line."""

    end: tuple[str, int]
    peer: tuple[str, int]
    lanes: int
    speed: str
    line: int

    @property
    def key(self) -> tuple:
        """The link, the same from either end."""
        return tuple(sorted((self.end, self.peer)))

    @property
    def rate_bps(self) -> int:
        return int(self.lanes * IB_GBPS_PER_LANE[self.speed] * 10**9) if self.lanes else 0


def parse_ibnetdiscover(text: str, f: str) -> tuple[dict[str, tuple[str, str]], list[IbPortLine]]:
    """``ibnetdiscover`` text → node blocks (``id -> (Switch|Ca|Rt, description)`` in file order)
    and every port line, for the topology reader and the audit alike. Raises :class:`InputError`
    (naming ``f`` and the line) for a port line outside a node block, an unreadable port line or
    an unknown link width."""
    nodes: dict[str, tuple[str, str]] = {}
    ports: list[IbPortLine] = []
    current: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            if not s:
                current = None
            continue
        m = _HEADER.match(s)
        if m:
            kind, _nports, nid, desc = m.groups()
            nodes[nid] = (kind, desc or nid)
            current = nid
            continue
        if s.startswith("["):
            if current is None:
                raise InputError(
                    "port line outside a node block", file=f, field=f"line {lineno}", value=s[:60]
                )
            pm = _PORT.match(s)
            if not pm:
                raise InputError(
                    "unreadable port line",
                    file=f,
                    field=f"line {lineno}",
                    value=s[:60],
                    allowed='[port] "<peer id>"[peer port] ... # ... <width><speed>',
                )
            ws = _WIDTH_SPEED.findall(s)
            lanes, speed = (int(ws[-1][0]), ws[-1][1]) if ws else (0, "")
            if ws and lanes not in _IB_WIDTHS:
                raise InputError(
                    "unknown link width",
                    file=f,
                    field=f"line {lineno}",
                    value=f"{ws[-1][0]}x{ws[-1][1]}",
                    allowed="1x, 2x, 4x, 8x or 12x",
                )
            ports.append(
                IbPortLine((current, int(pm.group(1))), (pm.group(2), int(pm.group(3))), lanes, speed, lineno)
            )
        # vendid=, devid=, sysimgguid=, switchguid=, caguid= lines: ignored
    return nodes, ports


def read_ibnetdiscover(path: str | Path, link_delay_ps: int = 0) -> Topology:
    """Load ``ibnetdiscover`` output. Hosts are CA ports; switches keep their description as name.
    Raises :class:`InputError` for a file with no node blocks or a malformed port line."""
    text = _read_text(path)
    f = str(path)
    nodes, ports = parse_ibnetdiscover(text, f)
    order: list[str] = list(nodes)
    raw_links: dict[tuple, int] = {}
    first_line: dict[tuple, int] = {}
    for p in ports:
        # each link is reported from both ends: keep the rate either end gives
        raw_links[p.key] = max(raw_links.get(p.key, 0), p.rate_bps)
        first_line.setdefault(p.key, p.line)
    if not nodes:
        raise InputError("no Switch/Ca node blocks found", file=f, allowed="ibnetdiscover output")
    for key, r in raw_links.items():
        if r <= 0:  # neither end said how fast the link is
            raise InputError(
                "port line without a link width and speed",
                file=f,
                field=f"line {first_line[key]}",
                allowed="a width and speed at the end of the line, e.g. 4xNDR",
            )
    for (x, _), (y, _) in raw_links:
        for nid in (x, y):
            if nid not in nodes:  # peer only seen from the other side
                nodes[nid] = ("Switch" if nid.startswith("S-") else "Ca", nid)
                order.append(nid)
    # hosts first, then switches (each in file order)
    hosts = [i for i in order if nodes[i][0] != "Switch"]
    switches = [i for i in order if nodes[i][0] == "Switch"]
    ids = hosts + switches
    index = {nid: i for i, nid in enumerate(ids)}
    n = len(ids)
    a = np.array([index[x] for (x, _), _ in raw_links], dtype=np.int64)
    b = np.array([index[y] for _, (y, _) in raw_links], dtype=np.int64)
    rate = np.array(list(raw_links.values()), dtype=np.int64)
    is_switch = np.array([nodes[i][0] == "Switch" for i in ids], dtype=bool)
    agg = tuple(i for i, nid in enumerate(ids) if "Aggregation Node" in nodes[nid][1])
    tier = _infer_tiers(n, is_switch, a, b, not_seeds=agg)  # SHARP agg nodes sit on every switch
    if len(a):
        a, b = _orient(tier, a, b)
    names = [nodes[i][1] for i in ids]
    # CA descriptions may repeat (several HCAs per node have distinct descs, but be safe)
    seen: dict[str, int] = {}
    uniq = []
    for nm in names:
        c = seen.get(nm, 0)
        seen[nm] = c + 1
        uniq.append(nm if c == 0 else f"{nm}#{c}")
    return Topology(
        name=Path(path).stem,
        kind="ibnetdiscover",
        node_names=tuple(uniq),
        node_tier=tier,
        tier_names=_tier_names(int(tier.max()) if n else 0),
        link_a=a,
        link_b=b,
        link_rate_bps=rate,
        link_delay_ps=np.full(len(a), link_delay_ps),
        link_length_m=np.full(len(a), np.nan),
        meta={"source_file": str(path), "guids": tuple(ids), "aggregation_nodes": agg},
    )
