"""The fabric the counters belong to: every port as ``device:port`` with its link, peer and rate.

``--topology`` of ``aifabric diagnose`` takes (detected from the content):

* an ``aifabric simulate`` scenario file (its topology built as the simulator builds it; ports are
  numbered per node from 1 in link-id order, as ``ports.parquet``'s ``if_index``): a switch port is
  named ``Ethernet<i−1>`` on RoCE and ``<i>`` on InfiniBand, a host's NIC ``mlx5_0/1``;
* an ``ibnetdiscover`` dump (rdma-core): switches by their description, a CA as its host name (the
  description's first word) with its NIC port ``mlx5_N/P``;
* LLDP neighbours as JSON: a list of ``{"device", "port", "peer", "peer_port"}`` (optionally
  ``"rate_gbps"``), or ``{device: <lldpctl -f json output>}``.

A sample's ``(device, port)`` is matched to a port by exact name, then case-insensitively and by
short host name; a host with one link takes any port name; switch ports also answer to their
number (``3``, ``swp3``) and, on a scenario fabric, to ``Ethernet<i−1>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from aifabric.errors import InputError


@dataclass(frozen=True)
class Port:
    """One end of a link (the egress it names: ``device`` sends towards ``peer``)."""

    device: str
    label: str
    peer: str
    peer_label: str
    rate_gbps: float
    tier: int  # of device (0 = host)
    peer_tier: int
    link: int

    @property
    def name(self) -> str:
        return f"{self.device}:{self.label}"


@dataclass
class FabricMap:
    """Ports by ``(device, label)``, their aliases, and what the source said about the fabric."""

    source: str
    kind: str  # scenario | ibnetdiscover | lldp
    technology: str | None = None  # roce | infiniband | None (unknown)
    ports: dict[tuple[str, str], Port] = field(default_factory=dict)
    aliases: dict[tuple[str, str], str] = field(default_factory=dict)
    tiers: dict[str, int] = field(default_factory=dict)
    scenario: object | None = None  # the scenario, for a scenario fabric

    def add_link(self, link: int, a: str, a_label: str, b: str, b_label: str, rate_gbps: float) -> None:
        ta, tb = self.tiers.get(a, 1), self.tiers.get(b, 1)
        self.ports[(a, a_label)] = Port(a, a_label, b, b_label, rate_gbps, ta, tb, link)
        self.ports[(b, b_label)] = Port(b, b_label, a, a_label, rate_gbps, tb, ta, link)

    def device_ports(self, device: str) -> list[Port]:
        return [p for (d, _), p in self.ports.items() if d == device]

    def peer_of(self, port: Port) -> Port:
        return self.ports[(port.peer, port.peer_label)]

    @property
    def devices(self) -> list[str]:
        return list(dict.fromkeys(d for d, _ in self.ports))

    def device_name(self, name: str) -> str | None:
        """The fabric's name for ``name`` (exact, case-insensitive, short host name)."""
        if name in self.tiers:
            return name
        low = {d.lower(): d for d in self.tiers}
        for cand in (
            name.lower(),
            name.lower().split(".")[0],
            name.lower().split()[0] if name.strip() else "",
        ):
            if cand in low:
                return low[cand]
        return None

    def resolve(self, device: str, port: str) -> Port | None:
        """The port a sample names, or None."""
        dev = self.device_name(device)
        if dev is None:
            return None
        if (dev, port) in self.ports:
            return self.ports[(dev, port)]
        label = self.aliases.get((dev, port)) or self.aliases.get((dev, port.lower()))
        if label is not None:
            return self.ports[(dev, label)]
        mine = self.device_ports(dev)
        if len(mine) == 1 and self.tiers.get(dev, 1) == 0:
            return mine[0]
        return None


def _alias_numbers(fm: FabricMap, dev: str, label: str, number: int, ethernet_from_zero: bool) -> None:
    for a in (str(number), f"swp{number}", f"eth{number}", f"port{number}"):
        fm.aliases.setdefault((dev, a), label)
    if ethernet_from_zero:
        fm.aliases.setdefault((dev, f"ethernet{number - 1}"), label)
        fm.aliases.setdefault((dev, f"Ethernet{number - 1}"), label)


def from_topology(
    topo, technology: str | None, source: str, kind: str = "scenario", scenario=None
) -> FabricMap:
    """A :class:`~aifabric.topology.Topology` (the simulator's) as a port map (see the module doc)."""
    fm = FabricMap(source, kind, technology, scenario=scenario)
    names = topo.node_names
    tier = [int(t) for t in topo.node_tier]
    for i, n in enumerate(names):
        fm.tiers[n] = tier[i]
    count = [0] * len(names)
    labels = []
    for link in range(topo.num_links):
        ends = []
        for node in (int(topo.link_a[link]), int(topo.link_b[link])):
            count[node] += 1
            ends.append((node, count[node]))
        labels.append(ends)
    for link, ((a, ia), (b, ib)) in enumerate(labels):
        la, lb = port_label(tier[a], ia, technology), port_label(tier[b], ib, technology)
        fm.add_link(link, names[a], la, names[b], lb, float(topo.link_rate_bps[link]) / 1e9)
        for node, idx, lab in ((a, ia, la), (b, ib, lb)):
            _alias_numbers(fm, names[node], lab, idx, True)
    return fm


def port_label(tier: int, if_index: int, technology: str | None) -> str:
    """A simulated port's name: host ``mlx5_<i−1>/1``, switch ``Ethernet<i−1>`` (RoCE) or ``<i>`` (IB)."""
    if tier == 0:
        return f"mlx5_{if_index - 1}/1"
    return str(if_index) if technology == "infiniband" else f"Ethernet{if_index - 1}"


def load_fabric(path) -> FabricMap:
    """``--topology FILE`` → :class:`FabricMap` (scenario, ibnetdiscover or LLDP JSON)."""
    p = Path(path)
    try:
        text = p.read_text(errors="replace")
    except FileNotFoundError:
        raise InputError("no such file", file=str(p), field="--topology") from None
    except IsADirectoryError:
        raise InputError("a folder, not a file", file=str(p), field="--topology") from None
    stripped = text.lstrip()
    if stripped[:1] in "[{":
        return _lldp(p, text)
    if re.search(r'^\s*(Switch|Ca|Rt)\s+\d+\s+"', text, re.M):
        return _ibnetdiscover(p, text)
    if re.search(r"^\s*topology\s*:", text, re.M):
        return _scenario(p)
    raise InputError(
        "not a topology this tool reads",
        file=str(p),
        field="--topology",
        allowed="an aifabric scenario file, an ibnetdiscover dump or LLDP neighbours JSON",
    )


def _scenario(p: Path) -> FabricMap:
    from aifabric.scenario import load_scenario
    from aifabric.topology import from_spec

    sc = load_scenario(p)
    if sc.topology is None:
        raise InputError("the scenario has no topology", file=str(p), field="topology")
    try:
        topo = from_spec(sc.topology)
    except InputError as exc:
        raise InputError(
            exc.problem, file=str(p), field=exc.field, value=exc.value, allowed=exc.allowed
        ) from None
    return from_topology(topo, sc.fabric.technology, str(p), "scenario", sc)


def _ibnetdiscover(p: Path, text: str) -> FabricMap:
    from aifabric.topology.io import parse_ibnetdiscover, read_ibnetdiscover

    topo = read_ibnetdiscover(p)
    nodes, lines = parse_ibnetdiscover(text, str(p))
    guid_name = dict(zip(topo.meta["guids"], topo.node_names, strict=True))
    fm = FabricMap(str(p), "ibnetdiscover", "infiniband")
    tiers = {topo.node_names[i]: int(t) for i, t in enumerate(topo.node_tier)}

    def name(gid: str) -> str:
        n = guid_name.get(gid, gid)
        return n.split()[0] if tiers.get(n, 1) == 0 else n

    def label(gid: str, port: int) -> str:
        n = guid_name.get(gid, gid)
        if tiers.get(n, 1) == 0:
            parts = n.split()
            nic = parts[1] if len(parts) > 1 else "hca"
            return f"{nic}/{port}"
        return str(port)

    for n, t in tiers.items():
        fm.tiers[name_of(n, t)] = t
    seen = set()
    for k, pl in enumerate(lines):
        if pl.key in seen:
            continue
        seen.add(pl.key)
        (a, pa), (b, pb) = pl.end, pl.peer
        fm.add_link(k, name(a), label(a, pa), name(b), label(b, pb), pl.rate_bps / 1e9)
        for gid, port in ((a, pa), (b, pb)):
            _alias_numbers(fm, name(gid), label(gid, port), port, False)
    return fm


def name_of(desc: str, tier: int) -> str:
    return desc.split()[0] if tier == 0 and desc.strip() else desc


def _lldp(p: Path, text: str) -> FabricMap:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg})", file=str(p), field=f"line {exc.lineno}") from None
    rows = _lldp_rows(p, data)
    fm = FabricMap(str(p), "lldp")
    devices = {r[0] for r in rows} | {r[2] for r in rows}
    # tiers: a device that reports no neighbours of its own is a host; switches by BFS from hosts
    reporters = {r[0] for r in rows}
    hosts = devices - reporters if reporters != devices else set()
    fm.tiers.update(_bfs_tiers(devices, hosts, rows))
    seen = set()
    for k, (a, pa, b, pb, rate) in enumerate(rows):
        key = tuple(sorted(((a, pa), (b, pb))))
        if key in seen:
            continue
        seen.add(key)
        fm.add_link(k, a, pa, b, pb, rate)
        for dev, lab in ((a, pa), (b, pb)):
            m = re.search(r"(\d+)$", lab)
            if m:
                fm.aliases.setdefault((dev, lab.lower()), lab)
    return fm


def _lldp_rows(p: Path, data) -> list[tuple[str, str, str, str, float]]:
    allowed = 'a list of {"device", "port", "peer", "peer_port"} or {device: lldpctl -f json output}'
    rows = []
    if isinstance(data, list):
        for i, r in enumerate(data):
            if not isinstance(r, dict) or not all(r.get(k) for k in ("device", "port", "peer", "peer_port")):
                raise InputError(
                    "neighbour entry lacks a field", file=str(p), field=f"[{i}]", allowed=allowed
                )
            rows.append(
                (
                    str(r["device"]),
                    str(r["port"]),
                    str(r["peer"]),
                    str(r["peer_port"]),
                    float(r.get("rate_gbps") or 0),
                )
            )
        return rows
    if isinstance(data, dict):
        for dev, out in data.items():
            ifaces = (out or {}).get("lldp", {}).get("interface") if isinstance(out, dict) else None
            if ifaces is None:
                raise InputError("no lldp.interface", file=str(p), field=str(dev), allowed=allowed)
            items = ifaces if isinstance(ifaces, list) else [ifaces]
            for item in items:
                for local, info in item.items():
                    chassis = info.get("chassis", {})
                    peer = next(iter(chassis), None) if isinstance(chassis, dict) else None
                    port = info.get("port", {})
                    pid = port.get("id", {})
                    peer_port = pid.get("value") if isinstance(pid, dict) else pid
                    if peer and peer_port:
                        rows.append((str(dev), str(local), str(peer), str(peer_port), 0.0))
        if rows:
            return rows
    raise InputError("no neighbours found", file=str(p), allowed=allowed)


def _bfs_tiers(devices: set[str], hosts: set[str], rows) -> dict[str, int]:
    adj: dict[str, set[str]] = {d: set() for d in devices}
    for a, _, b, _, _ in rows:
        adj[a].add(b)
        adj[b].add(a)
    tier = {h: 0 for h in hosts}
    frontier = list(hosts)
    while frontier:
        nxt = []
        for d in frontier:
            for n in adj[d]:
                if n not in tier:
                    tier[n] = tier[d] + 1
                    nxt.append(n)
        frontier = nxt
    for d in devices:
        tier.setdefault(d, 1)
    return tier
