"""The cabled fabric as it reports itself: ``ibnetdiscover`` dumps and LLDP neighbour JSON, with
the user's names mapped to the plan's.

A found link is a pair of ends ``(device, port)`` with the width and speed the dump gives.
InfiniBand names: a switch is its NodeDescription; a CA whose description is ``<host> <hca>``
(``a08-p1-dgx-04-c01 mlx5_5``, ``node001 mlx5_0``) is device ``<host>`` port ``<hca>/<port>``;
any other CA (no host name set, SHARP aggregation nodes) is its node id (``H-<guid>``) port
``<port>``. A mapping file (CSV with columns ``plan`` and ``found``; ``found`` a name, a
description or a GUID, ``plan`` a device or ``device:port``) renames found devices to the plan's.
"""

from __future__ import annotations

import csv
import json
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from aifabric.errors import InputError

_HEX = re.compile(r"^(?:[SHR]-|0x)?([0-9a-fA-F]{16})$")


@dataclass(frozen=True)
class Seen:
    """One link of the cabled fabric: its two ends, width (lanes), speed word and rate."""

    a: tuple[str, str]
    b: tuple[str, str]
    lanes: int = 0
    speed: str = ""
    rate_gbps: float = 0.0
    where: str = ""

    @property
    def key(self) -> tuple:
        return tuple(sorted((self.a, self.b)))


def _guid(text: str) -> str | None:
    m = _HEX.match(text.strip())
    return m.group(1).lower() if m else None


def load_mapping(path: Path | None) -> dict[str, str]:
    """found name / description / GUID → plan device (or ``device:port``)."""
    if path is None:
        return {}
    from aifabric.memory import read_text

    text = read_text(path, "mapping file")
    rows = list(csv.DictReader(text.splitlines()))
    cols = {c.strip().lower() for c in (rows[0].keys() if rows else [])}
    if not rows or "plan" not in cols or "found" not in cols:
        raise InputError(
            "expected a CSV with columns plan and found",
            file=str(path),
            field="header",
            allowed="plan,found (found: a hostname, NodeDescription or GUID)",
        )
    out = {}
    for i, row in enumerate(rows, 2):
        r = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
        if not r["plan"] or not r["found"]:
            raise InputError("empty plan or found value", file=str(path), field=f"line {i}")
        g = _guid(r["found"])
        out[g or r["found"]] = r["plan"]
    return out


def _mapped(mapping: dict[str, str], names: list[str]) -> str | None:
    for n in names:
        if n is None:
            continue
        g = _guid(n)
        if g and g in mapping:
            return mapping[g]
        if n in mapping:
            return mapping[n]
    return None


def _ib_end(nid: str, kind: str, desc: str, port: int, mapping: dict, dup: set) -> tuple[str, str]:
    if kind == "Switch":
        dev = nid if desc in dup else desc
        m = _mapped(mapping, [nid, desc])
        return (m.split(":")[0] if m else dev), str(port)
    toks = desc.split()
    host, hca = (toks[0], toks[1]) if len(toks) == 2 else (None, None)
    m = _mapped(mapping, [nid, desc, host])
    if m and ":" in m:
        dev, _, hca = m.partition(":")
        return dev, f"{hca.split('/')[0]}/{port}"
    if host:
        return (m or host), f"{hca}/{port}"
    return (m or nid), str(port)


def read_ibnetdiscover_links(path: Path, mapping: dict | None = None) -> tuple[list[Seen], dict[str, dict]]:
    """The links and devices (name → kind, description, id) of an ``ibnetdiscover`` dump."""
    from aifabric.memory import read_text
    from aifabric.topology.io import parse_ibnetdiscover

    f = str(path)
    nodes, ports = parse_ibnetdiscover(read_text(path, "ibnetdiscover file", errors="replace"), f)
    if not nodes:
        raise InputError("no Switch/Ca node blocks found", file=f, allowed="ibnetdiscover output")
    mapping = mapping or {}
    descs = [d for k, d in nodes.values() if k == "Switch"]
    dup = {d for d in descs if descs.count(d) > 1}
    devices: dict[str, dict] = {}
    for nid, (kind, desc) in nodes.items():
        dev, _ = _ib_end(nid, kind, desc, 1, mapping, dup)
        devices.setdefault(dev, {"kind": kind, "description": desc, "id": nid})
    links: dict[tuple, Seen] = {}
    for p in ports:
        for nid in (p.end[0], p.peer[0]):
            if nid not in nodes:
                nodes[nid] = ("Switch" if nid.startswith("S-") else "Ca", nid)
        a = _ib_end(p.end[0], *nodes[p.end[0]], p.end[1], mapping, dup)
        b = _ib_end(p.peer[0], *nodes[p.peer[0]], p.peer[1], mapping, dup)
        s = Seen(a, b, p.lanes, p.speed, p.rate_bps / 1e9, f"line {p.line}")
        old = links.get(s.key)
        if old is None or (not old.lanes and s.lanes):
            links[s.key] = s
    return list(links.values()), devices


def _items(obj) -> list[tuple[str, dict]]:
    """lldpd JSON collapses one-element lists: accept ``{name: {...}}`` and ``[{name: {...}}]``."""
    if isinstance(obj, dict):
        return [(k, v) for k, v in obj.items() if isinstance(v, dict)]
    if isinstance(obj, list):
        return [kv for x in obj if isinstance(x, dict) for kv in _items(x)]
    return []


def read_lldp_links(path: Path, mapping: dict | None = None) -> tuple[list[Seen], dict[str, dict]]:
    """Links from LLDP JSON: ``{"<device>": <lldpctl -f json of that device>, ...}``."""
    from aifabric.memory import read_text

    f = str(path)
    try:
        doc = json.loads(read_text(path, "LLDP file"))
    except json.JSONDecodeError as exc:
        raise InputError("not JSON", file=f, field=f"line {exc.lineno}", allowed="LLDP JSON") from None
    if not isinstance(doc, dict) or not doc:
        raise InputError(
            "expected an object of device → lldpctl -f json output",
            file=f,
            allowed='{"leaf01": {"lldp": ...}}',
        )
    mapping = mapping or {}

    def name(n: str) -> str:
        m = _mapped(mapping, [n])
        return m.split(":")[0] if m else n

    links: dict[tuple, Seen] = {}
    devices: dict[str, dict] = {}
    for dev, body in doc.items():
        lldp = body.get("lldp") if isinstance(body, dict) else None
        if not isinstance(lldp, dict):
            raise InputError("no 'lldp' object", file=f, field=dev, allowed="lldpctl -f json output")
        devices[name(dev)] = {"kind": "device", "description": dev, "id": dev}
        for port, nb in _items(lldp.get("interface", [])):
            chassis = _items(nb.get("chassis", {}))
            pid = (nb.get("port") or {}).get("id") or {}
            peer_port = pid.get("value") if isinstance(pid, dict) else None
            if not chassis or not peer_port:
                raise InputError(
                    "neighbour without a chassis name or port id",
                    file=f,
                    field=f"{dev} {port}",
                    allowed='"chassis": {"<name>": {...}}, "port": {"id": {"value": "<port>"}}',
                )
            s = Seen((name(dev), port), (name(chassis[0][0]), str(peer_port)), where=f"{dev} {port}")
            links.setdefault(s.key, s)
    return list(links.values()), devices


def derived_plan(path: Path) -> tuple[list[dict], dict[str, dict]]:
    """A plan made from a reference ``ibnetdiscover`` dump (a fabric known to be right): its links
    as cable-plan rows and its devices with tiers (switches: hops from the nearest CA; SHARP
    aggregation nodes are not servers)."""
    seen, found = read_ibnetdiscover_links(path)
    roles = {}
    for dev, x in found.items():
        if x["kind"] != "Switch":
            roles[dev] = "aggregation-node" if "Aggregation Node" in x["description"] else "server"
    adj: dict[str, set] = {}
    for s in seen:
        adj.setdefault(s.a[0], set()).add(s.b[0])
        adj.setdefault(s.b[0], set()).add(s.a[0])
    tier = {d: 0 for d, r in roles.items() if r == "server"}
    q = deque(tier)
    while q:
        v = q.popleft()
        for w in adj.get(v, ()):
            if w not in tier and w not in roles:
                tier[w] = tier[v] + 1
                q.append(w)
    devices = {}
    for dev in found:
        t = 0 if dev in roles else tier.get(dev, 1)
        role = roles.get(dev) or {1: "leaf", 2: "spine", 3: "core"}.get(t, f"tier{t}")
        devices[dev] = {"role": role, "tier": t, "plane": -1}
    rows = []
    for s in seen:
        a, b = (s.a, s.b) if devices[s.a[0]]["tier"] <= devices[s.b[0]]["tier"] else (s.b, s.a)
        ta, tb = devices[a[0]]["tier"], devices[b[0]]["tier"]
        rows.append(
            {
                "a_device": a[0],
                "a_port": a[1],
                "b_device": b[0],
                "b_port": b[1],
                "link_class": f"{_tier_word(ta)}-{_tier_word(tb)}",
                "tier": tb,
                "rail": -1,
                "plane": -1,
                "rate_gbps": s.rate_gbps,
                "lanes": s.lanes,
                "speed": s.speed,
                "cable_id": "",
            }
        )
    return rows, devices


def _tier_word(t: int) -> str:
    return ("host", "leaf", "spine", "core")[t] if t < 4 else f"tier{t}"
