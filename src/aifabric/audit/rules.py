"""Lossless-RoCE audit rules over parsed SONiC devices.

:data:`RULES` maps a rule id to a :class:`Rule` (one function each). A rule takes a
:class:`Fabric` (the devices, the links between them, the host-side assumptions) and returns
:class:`Finding` records. Rules are vendor-aware (formats.md §1.5): ``size = xon + xoff`` is never
assumed, headroom is judged against a physical floor on every vendor and against the SONiC
formula only where the formula reproduces the vendor's own tables (Spectrum-4/5).

Objects are named like CONFIG_DB keys (``BUFFER_PROFILE|pg_lossless_100000_300m_profile``,
``QUEUE|Ethernet0,Ethernet4|3``) so the fix can be applied where it is reported.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from aifabric.audit import headroom as hr
from aifabric.audit.infer import dscp_lossless as _dscp_lossless
from aifabric.audit.infer import pg_of as _pg_of
from aifabric.audit.infer import queue_of as _queue_of
from aifabric.audit.infer import tc_of as _tc_of
from aifabric.audit.roles import assign_roles, hostname_pattern
from aifabric.audit.sonic import Device, parse_prio_list
from aifabric.pfc import sonic_headroom_bytes

SEVERITIES = ("error", "warning", "info")
NVIDIA_ROCE_DSCP = 26  # NVIDIA NIC / Cumulus default RoCE DSCP (formats.md §1.7, hardware-facts §E.3)
NVIDIA_CNP_DSCP = 48  # NVIDIA default CNP DSCP, strict priority (hardware-facts §E.3 [S11])
ROCE_MIN_PORT_MTU = 4200  # 4096-byte RoCE payload + headers (hardware-facts §E.3 [S72])
# PFC watchdog ranges, YANG sonic-pfcwd.yang (formats.md §1.10), milliseconds.
PFCWD_DETECT_MS = (100, 5000)
PFCWD_RESTORE_MS = (100, 60000)
PFCWD_POLL_MS = (100, 1000)
PFCWD_ACTIONS = ("drop", "forward", "alert")
_PG_NAME = re.compile(r"^pg_lossless_(\d+)_(\d+m)_profile$")


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    device: str
    object: str
    message: str
    evidence: dict[str, str] = field(default_factory=dict)
    fix: str = ""

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "device": self.device,
            "object": self.object,
            "message": self.message,
            "evidence": dict(self.evidence),
            "fix": self.fix,
        }


@dataclass(frozen=True)
class Link:
    a: str
    a_port: str
    b: str
    b_port: str


@dataclass
class Fabric:
    """The audited switches and what is known about the rest of the fabric.

    ``nic_dscp`` / ``cnp_dscp``: what the NICs send, when the user states it (``--nic-dscp``,
    ``--cnp-dscp`` or host configs; ``*_source`` says where from). None: not stated, and the
    NIC/switch rules are not run — the RoCE classes are inferred from the switches instead.
    ``intent``: ``auto`` (judge ECN by the role's majority), ``dcqcn`` (ECN + PFC intended) or
    ``pfc-only`` (a declared PFC-only design: ECN off is information).
    """

    devices: list[Device]
    nic_dscp: int | None = None
    nic_dscp_source: str = "--nic-dscp"
    cnp_dscp: int | None = None
    cnp_dscp_source: str = "--cnp-dscp"
    intent: str = "auto"
    links: list[Link] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.links:
            self.links = find_links(self.devices)
        if not self.roles:
            self.roles = assign_roles({d.name: d.metadata.get("type", "") for d in self.devices})

    @property
    def nic_dscp_given(self) -> bool:
        return self.nic_dscp is not None

    def device(self, name: str) -> Device:
        return next(d for d in self.devices if d.name == name)

    def role(self, d: Device) -> str:
        return self.roles.get(d.name) or hostname_pattern(d.name)

    def by_role(self) -> dict[str, list[Device]]:
        out: dict[str, list[Device]] = defaultdict(list)
        for d in self.devices:
            out[self.role(d)].append(d)
        return dict(out)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # the usual severity; some rules downgrade, documented in `summary`
    summary: str
    fn: Callable[[Fabric], list[Finding]]


def find_links(devices: list[Device]) -> list[Link]:
    """Links between audited devices: DEVICE_NEIGHBOR ``{name, port}``, else PORT ``description``
    of the form ``PEER:PORT`` when PEER is an audited device."""
    names = {d.name for d in devices}
    seen: set[frozenset] = set()
    out: list[Link] = []
    for d in devices:
        peers: dict[str, tuple[str, str]] = {}
        for port, f in d.table("PORT").items():
            desc = f.get("description", "")
            if ":" in desc:
                n, p = desc.split(":", 1)
                if n in names:
                    peers[port] = (n, p)
        for port, f in d.table("DEVICE_NEIGHBOR").items():
            if f.get("name") in names and f.get("port"):
                peers[port] = (f["name"], f["port"])
        for port, (n, p) in peers.items():
            key = frozenset({(d.name, port), (n, p)})
            if n == d.name or key in seen:
                continue
            seen.add(key)
            out.append(Link(d.name, port, n, p))
    return out


# ---------------------------------------------------------------------------------------------
# helpers
def _ports_key(ports) -> str:
    return ",".join(sorted(ports, key=_port_order))


def _port_order(p: str):
    m = re.search(r"(\d+)$", p)
    return (p[: m.start()] if m else p, int(m.group(1)) if m else -1)


def _int(v, default: int | None = None) -> int | None:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return default


def _is_tie(values: dict[str, object]) -> bool:
    """True when two or more different values share the top count (no majority)."""
    counts = sorted(Counter(values.values()).values(), reverse=True)
    return len(counts) > 1 and counts[0] == counts[1]


def _majority(values: dict[str, object]) -> object:
    """The most common value; ties go to the value of the alphabetically first device."""
    counts = Counter(values.values())
    top = max(counts.values())
    for name in sorted(values):
        if counts[values[name]] == top:
            return values[name]
    raise AssertionError  # pragma: no cover


def _lossless_pg_profiles(dev: Device) -> dict[tuple[str, int], tuple[str, dict[str, str], bool]]:
    """(port, pg) → (profile name, fields, synthesized) for each lossless PG of each lossless port.
    Missing PGs are synthesized from pg_profile_lookup.ini as buffermgrd does (formats.md §1.13)."""
    out: dict[tuple[str, int], tuple[str, dict[str, str], bool]] = {}
    pgs = dev.buffer_pg()
    for port, prios in dev.lossless_ports().items():
        for pg in prios:
            hit = pgs.get((port, pg))
            if hit is not None:
                name = hit[1].get("profile", "")
                prof = dev.profile(name)
                if prof is not None and _int(prof.get("xoff"), 0):
                    out[(port, pg)] = (name, prof, False)
                continue
            speed, cable = dev.port_speed(port), dev.cable(port)
            if dev.lookup and speed and cable:
                row = dev.lookup.get(speed, cable)
                if row is not None:
                    name = f"pg_lossless_{speed}_{cable}_profile"
                    prof = {"pool": "ingress_lossless_pool", **row.profile()}
                    out[(port, pg)] = (name, prof, True)
    return out


def _group(items: list[tuple[tuple, str]]) -> dict[tuple, list[str]]:
    g: dict[tuple, list[str]] = defaultdict(list)
    for key, port in items:
        g[key].append(port)
    return g


# ---------------------------------------------------------------------------------------------
# PFC priorities
def rule_pfc_priority_mismatch(fab: Fabric) -> list[Finding]:
    by_role: dict[str, dict[str, frozenset]] = defaultdict(dict)
    for d in fab.devices:
        lp = d.lossless_ports()
        if lp:
            by_role[fab.role(d)][d.name] = frozenset(lp.values())
    out = []
    for role, sets in by_role.items():
        if len(sets) < 2:
            continue
        ref = _majority(sets)
        for name, s in sorted(sets.items()):
            if s == ref:
                continue
            d = fab.device(name)
            odd = _group([((v,), p) for p, v in d.lossless_ports().items() if v not in ref])
            ref_txt = " / ".join(sorted(",".join(map(str, v)) for v in ref))
            for (v,), ports in odd.items():
                out.append(
                    Finding(
                        "pfc-priority-mismatch",
                        "error",
                        name,
                        f"PORT_QOS_MAP|{_ports_key(ports)}",
                        f'pfc_enable "{",".join(map(str, v))}" on {len(ports)} port(s) differs from the other '
                        f'{role} switches, which use "{ref_txt}"',
                        {
                            "pfc_enable": ",".join(map(str, v)),
                            "role": role,
                            "peers_pfc_enable": ref_txt,
                            "ports": str(len(ports)),
                        },
                        f"set pfc_enable to the role's lossless priorities ({ref_txt}) on these ports",
                    )
                )
            if not odd:
                missing = " / ".join(sorted(",".join(map(str, v)) for v in ref - s))
                out.append(
                    Finding(
                        "pfc-priority-mismatch",
                        "error",
                        name,
                        "PORT_QOS_MAP",
                        f'no port uses pfc_enable "{missing}", which the other {role} switches use',
                        {"role": role, "peers_pfc_enable": ref_txt},
                        "configure the same lossless priorities as the role",
                    )
                )
    return out


def rule_pfc_priority_link_mismatch(fab: Fabric) -> list[Finding]:
    out = []
    for ln in fab.links:
        a, b = fab.device(ln.a), fab.device(ln.b)
        if not (a.has("PORT_QOS_MAP") and b.has("PORT_QOS_MAP")):
            continue
        pa, pb = a.lossless(ln.a_port), b.lossless(ln.b_port)
        if pa != pb:
            sa, sb = ",".join(map(str, pa)) or "none", ",".join(map(str, pb)) or "none"
            lost = [
                x
                for x in range(64)
                if bool(_dscp_lossless(a, ln.a_port, x)) != bool(_dscp_lossless(b, ln.b_port, x))
            ]
            out.append(
                Finding(
                    "pfc-priority-link-mismatch",
                    "error",
                    ln.a,
                    f"PORT_QOS_MAP|{ln.a_port}",
                    f"lossless priorities differ across the link {ln.a}:{ln.a_port} ({sa}) — {ln.b}:{ln.b_port} ({sb}); "
                    "a PAUSE for a priority the peer does not honour is ignored and the packets are dropped",
                    {
                        "pfc_enable": sa,
                        "peer": f"{ln.b}:{ln.b_port}",
                        "peer_pfc_enable": sb,
                        "dscp_lossless_on_one_end_only": ",".join(map(str, lost)) or "none",
                    },
                    "use the same pfc_enable on both ends of the link",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# DSCP / TC / PG / queue maps
_MAPS = ("DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "MAP_PFC_PRIORITY_TO_QUEUE")


def rule_qos_map_inconsistent(fab: Fabric) -> list[Finding]:
    lossless_tcs: set[int] = set()
    for d in fab.devices:
        for prios in d.lossless_ports().values():
            lossless_tcs.update(prios)
    out = []
    for role, known in fab.by_role().items():
        out.extend(_maps_in_role(fab, role, known, lossless_tcs))
    return out


def _maps_in_role(fab: Fabric, role: str, known: list[Device], lossless_tcs: set[int]) -> list[Finding]:
    out = []
    for table in _MAPS:
        names = sorted({n for d in known for n in d.table(table)})
        for mname in names:
            have = {
                d.name: tuple(sorted(d.table(table)[mname].items(), key=lambda kv: int(kv[0])))
                for d in known
                if mname in d.table(table)
            }
            if len(have) < 2 or len(set(have.values())) == 1:
                continue
            ref = dict(_majority(have))
            tie = _is_tie(have)
            for dev, items in sorted(have.items()):
                mine = dict(items)
                if mine == ref:
                    continue
                keys = sorted(set(mine) | set(ref), key=int)
                diff = [k for k in keys if mine.get(k) != ref.get(k)]
                classes = {_int(mine.get(k), -1) for k in diff} | {_int(ref.get(k), -1) for k in diff}
                if table != "DSCP_TO_TC_MAP":
                    classes |= {int(k) for k in diff}
                sev = "error" if classes & lossless_tcs else "warning"
                shown = ", ".join(f"{k}→{mine.get(k, '-')} (others {ref.get(k, '-')})" for k in diff[:8])
                ev = {
                    "entries": shown,
                    "role": role,
                    "lossless_classes": ",".join(map(str, sorted(lossless_tcs))),
                    "majority": "tie: no majority, the first switch's value is the reference"
                    if tie
                    else f"{sum(v == tuple(sorted(ref.items(), key=lambda kv: int(kv[0]))) for v in have.values())}"
                    f" of {len(have)} switches",
                }
                if table == "DSCP_TO_TC_MAP":
                    d = fab.device(dev)
                    users = [p for p, f in d.qos_ports().items() if f.get("dscp_to_tc_map", "") == mname]
                    users = users or list(d.lossless_ports())
                    lost = sorted(
                        int(k)
                        for k in diff
                        if any(
                            _int(ref.get(k), 0) in d.lossless(p) and _int(mine.get(k), 0) not in d.lossless(p)
                            for p in users
                        )
                    )
                    if lost:
                        ev["lossless_dscps_made_lossy"] = ",".join(map(str, lost))
                what = (
                    f"DSCP {','.join(map(str, lost))} lossless on the other {role} switches is lossy here: "
                    if table == "DSCP_TO_TC_MAP" and ev.get("lossless_dscps_made_lossy")
                    else ""
                )
                out.append(
                    Finding(
                        "qos-map-inconsistent",
                        sev,
                        dev,
                        f"{table}|{mname}",
                        f"{what}{table} {mname} differs from the other {role} switches in {len(diff)} "
                        f"entr{'y' if len(diff) == 1 else 'ies'}: {shown}",
                        ev,
                        f"make {table}|{mname} identical on every {role} switch (majority: {shown_ref(ref, diff)})",
                    )
                )
    return out


def shown_ref(ref: dict, keys: list[str]) -> str:
    return ", ".join(f"{k}→{ref.get(k, '-')}" for k in keys[:8])


def rule_roce_dscp_lossy(fab: Fabric) -> list[Finding]:
    if fab.nic_dscp is None:  # NIC side not stated: the RoCE classes are inferred, nothing to compare
        return []
    sev = "error"
    out = []
    for d in fab.devices:
        bad: list[tuple[tuple, str]] = []
        for port, prios in d.lossless_ports().items():
            ok = _dscp_lossless(d, port, fab.nic_dscp)
            if ok is False:
                name, tc = _tc_of(d, port, fab.nic_dscp)
                bad.append(((name, tc, ",".join(map(str, prios))), port))
        for (mname, tc, prios), ports in _group(bad).items():
            assumed = f" (from {fab.nic_dscp_source})"
            out.append(
                Finding(
                    "roce-dscp-lossy",
                    sev,
                    d.name,
                    f"DSCP_TO_TC_MAP|{mname}",
                    f"RoCE DSCP {fab.nic_dscp}{assumed} maps to TC {tc}, which is lossy on {len(ports)} port(s) "
                    f"whose lossless priorities are {prios}",
                    {
                        "dscp": str(fab.nic_dscp),
                        "dscp_source": fab.nic_dscp_source,
                        "tc": str(tc),
                        "pfc_enable": prios,
                        "ports": _ports_key(ports),
                    },
                    f"map DSCP {fab.nic_dscp} to a lossless TC ({prios}) in DSCP_TO_TC_MAP|{mname}, or set the NICs' "
                    "RoCE DSCP to one the switch treats as lossless",
                )
            )
    return out


def rule_pfc_priority_port_mismatch(fab: Fabric) -> list[Finding]:
    """Within one switch: ports that use the same DSCP_TO_TC_MAP are one class of port (downlinks,
    uplinks); a port whose pfc_enable differs from the majority of its class lost (or gained) a
    lossless priority."""
    out = []
    for d in fab.devices:
        classes: dict[str, dict[str, tuple[int, ...]]] = defaultdict(dict)
        for port, f in d.qos_ports().items():
            mname, m = d.port_map(port, "dscp_to_tc_map", "DSCP_TO_TC_MAP")
            if m is None or ("pfc_enable" not in f and not d.lossless_ports()):
                continue
            classes[mname or ""][port] = parse_prio_list(f.get("pfc_enable", ""))
        for mname, ports in classes.items():
            if len(ports) < 3 or len(set(ports.values())) == 1 or _is_tie(ports):
                continue
            ref = _majority(ports)
            odd = _group([((v,), p) for p, v in ports.items() if v != ref])
            n_ref = sum(v == ref for v in ports.values())
            for (v,), plist in odd.items():
                missing = sorted(set(ref) - set(v))
                extra = sorted(set(v) - set(ref))
                what = []
                if missing:
                    what.append(
                        f"lacks lossless priorit{'y' if len(missing) == 1 else 'ies'} {_csv(missing)}"
                    )
                if extra:
                    what.append(f"adds {_csv(extra)}")
                out.append(
                    Finding(
                        "pfc-priority-port-mismatch",
                        "error",
                        d.name,
                        f"PORT_QOS_MAP|{_ports_key(plist)}",
                        f'pfc_enable "{_csv(v) or "none"}" {" and ".join(what)}: the other {n_ref} port(s) '
                        f'with DSCP map {mname} use "{_csv(ref)}"',
                        {
                            "pfc_enable": _csv(v) or "none",
                            "majority_pfc_enable": _csv(ref),
                            "dscp_to_tc_map": mname,
                            "ports": _ports_key(plist),
                        },
                        f'set pfc_enable "{_csv(ref)}" on these ports (and pfcwd_sw_enable to match)',
                    )
                )
    return out


def rule_pfc_off_on_headroom_pg(fab: Fabric) -> list[Finding]:
    """A PG with a lossless buffer profile (xoff > 0) on a port whose pfc_enable lacks that
    priority: the headroom is reserved but PFC never fires, so the class is lossy (a priority
    dropped from pfc_enable on one port, or a BUFFER_PG left behind)."""
    from aifabric.audit.infer import headroom_pgs

    out = []
    for d in fab.devices:
        qos = d.qos_ports()
        if not qos:
            continue
        bad: list[tuple[tuple, str]] = []
        for (port, pg), prof in headroom_pgs(d).items():
            if port not in qos:
                continue
            prios = d.lossless(port)
            if pg not in prios:
                bad.append(((pg, prof, _csv(prios) or "none"), port))
        for (pg, prof, prios), ports in _group(bad).items():
            out.append(
                Finding(
                    "pfc-off-on-headroom-pg",
                    "error",
                    d.name,
                    f"PORT_QOS_MAP|{_ports_key(ports)}",
                    f"PG {pg} has lossless headroom ({prof}) on {len(ports)} port(s) whose pfc_enable is "
                    f'"{prios}": PFC never pauses priority {pg}, so it is dropped under congestion',
                    {"pg": str(pg), "profile": prof, "pfc_enable": prios, "ports": _ports_key(ports)},
                    f"add {pg} to pfc_enable (and pfcwd_sw_enable) on these ports, or remove the lossless BUFFER_PG",
                )
            )
    return out


def rule_dscp_lossless_some_ports(fab: Fabric) -> list[Finding]:
    """Within one switch: a DSCP lossless on some ports (TC t) that another port's map sends to a
    lossy TC although TC t is lossless on that port too — the map moved a lossless DSCP. (A DSCP
    whose TC is simply not in the other port's pfc_enable is a design choice: SONiC's Azure T1
    maps make DSCP 2 and 6 lossless on the downlinks only.)"""
    out = []
    for d in fab.devices:
        lp = d.lossless_ports()
        lossless_at: dict[int, dict[str, int]] = defaultdict(dict)  # dscp → port → tc
        for port in lp:
            for x in range(64):
                if _dscp_lossless(d, port, x):
                    lossless_at[x][port] = _tc_of(d, port, x)[1]
        bad: list[tuple[tuple, str]] = []
        for x, where in lossless_at.items():
            tcs = set(where.values())
            for port, prios in lp.items():
                if port in where or _dscp_lossless(d, port, x) is None:
                    continue
                if tcs & set(prios) and all(_pg_of(d, port, t) in prios for t in tcs & set(prios)):
                    mname, tc = _tc_of(d, port, x)
                    bad.append(((mname, x, tc, _csv(sorted(tcs & set(prios)))), port))
        for (mname, x, tc, want), ports in _group(bad).items():
            out.append(
                Finding(
                    "dscp-lossless-some-ports",
                    "error",
                    d.name,
                    f"DSCP_TO_TC_MAP|{mname}",
                    f"DSCP {x} → lossy TC {tc} on {len(ports)} port(s), lossless (TC {want}) on "
                    f"{len(lossless_at[x])} other port(s): {mname} moved it although TC {want} is lossless there",
                    {"dscp": str(x), "tc": str(tc), "lossless_tc": want, "ports": _ports_key(ports)},
                    f"map DSCP {x} to TC {want} in DSCP_TO_TC_MAP|{mname}",
                )
            )
    return out


def _csv(v) -> str:
    return ",".join(map(str, v))


def rule_lossless_dscp_lossy_at_peer(fab: Fabric) -> list[Finding]:
    out = []
    for ln in fab.links:
        ends = [
            (fab.device(ln.a), ln.a_port, fab.device(ln.b), ln.b_port),
            (fab.device(ln.b), ln.b_port, fab.device(ln.a), ln.a_port),
        ]
        for here, hp, there, tp in ends:
            if not (here.has("PORT_QOS_MAP") and there.has("PORT_QOS_MAP")):
                continue
            if here.lossless(hp) != there.lossless(tp):
                continue  # one root cause: reported by pfc-priority-link-mismatch with the DSCPs
            lost = [
                x for x in range(64) if _dscp_lossless(there, tp, x) and _dscp_lossless(here, hp, x) is False
            ]
            if lost:
                mname, _ = _tc_of(here, hp, lost[0])
                out.append(
                    Finding(
                        "lossless-dscp-lossy-at-peer",
                        "error",
                        here.name,
                        f"DSCP_TO_TC_MAP|{mname}",
                        f"DSCP {','.join(map(str, lost))} is lossless at {there.name}:{tp} but lands in a lossy class on "
                        f"{here.name}:{hp}, the other end of the link",
                        {"dscp": ",".join(map(str, lost)), "port": hp, "peer": f"{there.name}:{tp}"},
                        "map these DSCPs to the same lossless TC on both ends of the link",
                    )
                )
    return out


def rule_tc_pg_mismatch(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        bad = []
        for port, prios in d.lossless_ports().items():
            for tc in prios:
                pg = _pg_of(d, port, tc)
                if pg not in prios:
                    name, _ = d.port_map(port, "tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP")
                    bad.append(((name, tc, pg, ",".join(map(str, prios))), port))
        for (name, tc, pg, prios), ports in _group(bad).items():
            out.append(
                Finding(
                    "tc-pg-mismatch",
                    "error",
                    d.name,
                    f"TC_TO_PRIORITY_GROUP_MAP|{name}",
                    f"lossless TC {tc} goes to PG {pg}, but buffermgrd creates lossless PGs only for pfc_enable {prios} "
                    f"({len(ports)} port(s)); TC {tc} has no headroom and is dropped under pause",
                    {"tc": str(tc), "pg": str(pg), "pfc_enable": prios, "ports": _ports_key(ports)},
                    f"map TC {tc} to PG {tc} in TC_TO_PRIORITY_GROUP_MAP|{name}",
                )
            )
    return out


def rule_cnp_not_strict(fab: Fabric) -> list[Finding]:
    out = []
    if fab.cnp_dscp is None:  # the NICs' CNP DSCP is not stated: nothing to compare with
        return out
    for d in fab.devices:
        if not (d.has("QUEUE") and d.has("SCHEDULER")):
            continue
        qs = d.queues()
        bad = []
        for port in d.lossless_ports():
            _, tc = _tc_of(d, port, fab.cnp_dscp)
            if tc is None:
                continue
            q = _queue_of(d, port, tc)
            sched = qs.get((port, q), ("", {}))[1].get("scheduler")
            typ = d.table("SCHEDULER").get(sched or "", {}).get("type", "WRR" if sched else "none")
            if typ.upper() != "STRICT":
                bad.append(((tc, q, sched or "none", typ), port))
        for (tc, q, sched, typ), ports in _group(bad).items():
            out.append(
                Finding(
                    "cnp-not-strict",
                    "warning",
                    d.name,
                    f"QUEUE|{_ports_key(ports)}|{q}",
                    f"CNP (DSCP {fab.cnp_dscp}, from {fab.cnp_dscp_source}) goes to TC {tc} / queue {q} with scheduler {sched} ({typ}), "
                    "not a strict-priority queue: congestion notifications wait behind data",
                    {
                        "dscp": str(fab.cnp_dscp),
                        "tc": str(tc),
                        "queue": str(q),
                        "scheduler": sched,
                        "type": typ,
                    },
                    f"give queue {q} a SCHEDULER with type STRICT (or map DSCP {fab.cnp_dscp} to such a queue)",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# PFC thresholds across batches
_THRESH_FIELDS = ("xon", "xoff", "size", "dynamic_th", "static_th", "xon_offset")


def _profiles_by_speed_cable(d: Device) -> dict[tuple[str, str], tuple[str, dict[str, str]]]:
    out: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}
    for name, prof in d.table("BUFFER_PROFILE").items():
        m = _PG_NAME.match(name)
        if m:
            out[(m.group(1), m.group(2))] = (name, prof)
    for (port, _pg), (name, prof, synth) in _lossless_pg_profiles(d).items():
        speed, cable = d.port_speed(port), d.cable(port)
        if not synth and speed and cable and (speed, cable) not in out:
            out[(speed, cable)] = (name, prof)
    return out


def _threshold_tie_break(
    fab: Fabric, have: dict[str, tuple], pair: tuple[str, str], ref: tuple
) -> tuple[tuple, str]:
    """No majority: the tied value whose xoff matches the SKU's lookup-table row (or, on Spectrum-4/5,
    the headroom formula) is the reference; else the alphabetically first switch's value."""
    counts = Counter(have.values())
    top = max(counts.values())
    tied = [v for v, c in counts.items() if c == top]
    xi = _THRESH_FIELDS.index("xoff")
    for n in sorted(have):
        d = fab.device(n)
        want = None
        if d.lookup is not None and d.lookup.get(*pair) is not None:
            want, src = d.lookup.get(*pair).xoff_bytes, f"{d.name}'s pg_profile_lookup.ini row"
        elif d.asic in hr.FORMULA_VERIFIED and pair[1][:-1].isdigit():
            want = hr.sonic_headroom(int(pair[0]), int(pair[1][:-1]), asic=d.asic).xoff_bytes
            src = f"the SONiC headroom formula for {d.asic}"
        if want is None:
            continue
        close = [v for v in tied if _int(v[xi][1]) is not None and abs(_int(v[xi][1]) - want) <= 1024]
        if len(close) == 1:
            return close[0], f"tie: no majority; the value matching {src} ({want} B) is the reference"
    return ref, "tie: no majority; the alphabetically first switch's value is the reference"


def rule_pfc_threshold_mismatch(fab: Fabric) -> list[Finding]:
    out = []
    roles: dict[str, list[Device]] = defaultdict(list)
    for d in fab.devices:
        roles[fab.role(d)].append(d)
    for role, devs in roles.items():
        if len(devs) < 2:
            continue
        per = {d.name: _profiles_by_speed_cable(d) for d in devs}
        pairs = sorted({k for v in per.values() for k in v})
        for pair in pairs:
            have = {
                n: tuple((f, v[pair][1].get(f)) for f in _THRESH_FIELDS) for n, v in per.items() if pair in v
            }
            if len(have) < 2 or len(set(have.values())) == 1:
                continue
            ref = _majority(have)
            tie_note = ""
            if _is_tie(have):
                ref, tie_note = _threshold_tie_break(fab, have, pair, ref)
            ref_devs = [n for n, v in have.items() if v == ref]
            ref_sku = {fab.device(n).hwsku for n in ref_devs}
            for name, vals in sorted(have.items()):
                if vals == ref:
                    continue
                ev: dict[str, str] = {"majority": tie_note} if tie_note else {}
                for (f, mine), (_, theirs) in zip(vals, ref, strict=True):
                    if mine != theirs:
                        nums = [_int(have[n][_THRESH_FIELDS.index(f)][1]) for n in have]
                        nums = [x for x in nums if x is not None]
                        spread = f"; spread {max(nums) - min(nums)}" if len(nums) > 1 else ""
                        ev[f] = f"{mine} here vs {theirs} on {','.join(ref_devs)}{spread}"
                same_sku = fab.device(name).hwsku in ref_sku
                pname = per[name][pair][0]
                out.append(
                    Finding(
                        "pfc-threshold-mismatch",
                        "error" if same_sku else "warning",
                        name,
                        f"BUFFER_PROFILE|{pname}",
                        f"{role} switches disagree on the lossless profile for {pair[0]} Mb/s / {pair[1]}: "
                        + "; ".join(f"{k} {v}" for k, v in ev.items())
                        + (
                            ""
                            if same_sku
                            else " (different hwsku: check each against its own pg_profile_lookup.ini)"
                        ),
                        ev,
                        f"apply one lossless profile for {pair[0]}/{pair[1]} to every {role} switch "
                        '(the "two batches" mismatch unbalances back-pressure)',
                    )
                )
    # ingress_lossless_pool size / shared headroom pool across the role
    for role, devs in roles.items():
        have = {
            d.name: (
                d.table("BUFFER_POOL")["ingress_lossless_pool"].get("size"),
                d.table("BUFFER_POOL")["ingress_lossless_pool"].get("xoff"),
            )
            for d in devs
            if "ingress_lossless_pool" in d.table("BUFFER_POOL")
        }
        if len(have) < 2 or len(set(have.values())) == 1:
            continue
        ref = _majority(have)
        for name, v in sorted(have.items()):
            sku = fab.device(name).hwsku
            if v != ref and sku and sku in {fab.device(n).hwsku for n, x in have.items() if x == ref}:
                out.append(
                    Finding(
                        "pfc-threshold-mismatch",
                        "error",
                        name,
                        "BUFFER_POOL|ingress_lossless_pool",
                        f"ingress_lossless_pool size/xoff {v[0]}/{v[1]} differs from the other {role} switches ({ref[0]}/{ref[1]})",
                        {"size": f"{v[0]} here vs {ref[0]}", "xoff": f"{v[1]} here vs {ref[1]}"},
                        "use the same pool sizes on switches of one model and role",
                    )
                )
    return out


# ---------------------------------------------------------------------------------------------
# headroom, lookup table, cable length
def rule_headroom_too_small(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        lt = d.table("LOSSLESS_TRAFFIC_PATTERN")
        lossless_mtu = (
            _int(next(iter(lt.values()), {}).get("mtu"), hr.DEFAULT_LOSSLESS_MTU)
            if lt
            else hr.DEFAULT_LOSSLESS_MTU
        )
        groups: dict[tuple, list[str]] = defaultdict(list)
        for (port, _pg), (name, prof, synth) in _lossless_pg_profiles(d).items():
            m = _PG_NAME.match(name)
            speed = _int(d.port_speed(port)) or (int(m.group(1)) if m else None)
            cable = d.cable(port) or (m.group(2) if m else None)
            xoff = sonic_headroom_bytes(prof)  # SONiC xoff = headroom, not the pause trigger
            if not speed or not cable or xoff is None:
                continue
            mtu = d.port_mtu(port) or hr.DEFAULT_PORT_MTU
            groups[(name, speed, cable, mtu, xoff, synth)].append(port)
        for (name, speed, cable, mtu, xoff, synth), ports in groups.items():
            cable_m = int(cable[:-1])
            frame = min(
                mtu,
                _int(next(iter(lt.values()), {}).get("mtu"), hr.ROCE_FRAME_BYTES)
                if lt
                else hr.ROCE_FRAME_BYTES,
            )
            floor = hr.minimum_xoff(speed, cable_m, mtu, frame)
            ev = {
                "xoff_bytes": str(xoff),
                "speed_mbps": str(speed),
                "cable": cable,
                "port_mtu_bytes": str(mtu),
                "ports": _ports_key(ports),
            }
            src = " (from pg_profile_lookup.ini)" if synth else ""
            obj = f"BUFFER_PROFILE|{name}"
            fix = f"raise xoff to at least the required value for {speed} Mb/s over {cable} (see evidence)"
            if xoff < floor:
                ev["required_min_bytes"] = str(floor)
                out.append(
                    Finding(
                        "headroom-too-small",
                        "error",
                        d.name,
                        obj,
                        f"xoff {xoff} B{src} is below the physical minimum {floor} B for {speed} Mb/s "
                        f"over {cable} with MTU {mtu} (cable round trip + 2 frames + PFC response): packets are dropped "
                        "after PAUSE",
                        ev,
                        fix,
                    )
                )
                continue
            asic = d.asic
            if asic in hr.ASICS and asic != "spectrum-1":
                need = hr.sonic_headroom(speed, cable_m, asic=asic, port_mtu=mtu, lossless_mtu=lossless_mtu)
                if xoff + 1024 < need.xoff_bytes:  # 1 KiB: the formula's own rounding vs the SN5600 table
                    ev["formula_xoff_bytes"] = str(need.xoff_bytes)
                    verified = asic in hr.FORMULA_VERIFIED
                    out.append(
                        Finding(
                            "headroom-too-small",
                            "error" if verified else "warning",
                            d.name,
                            obj,
                            f"xoff {xoff} B{src} is below the SONiC headroom formula for {asic} ({need.xoff_bytes} B at "
                            f"{speed} Mb/s, {cable}, MTU {mtu})"
                            + ("" if verified else "; the formula is verified only on Spectrum-4/5 tables"),
                            ev,
                            fix,
                        )
                    )
            if d.lookup and not synth:
                row = d.lookup.get(str(speed), cable)
                if row is not None and xoff + 1024 < row.xoff_bytes:  # 1 KiB rounding, as for the formula
                    ev["table_xoff_bytes"] = str(row.xoff_bytes)
                    out.append(
                        Finding(
                            "headroom-too-small",
                            "error",
                            d.name,
                            obj,
                            f"xoff {xoff} B is below this SKU's pg_profile_lookup.ini row "
                            f"({row.xoff_bytes} B for {speed} {cable})",
                            ev,
                            "restore the profile from the lookup table (buffermgrd reuses a stale profile)",
                        )
                    )
    return out


def rule_pg_profile_stale(fab: Fabric) -> list[Finding]:
    """A lossless BUFFER_PG uses ``pg_lossless_<speed>_<cable>_profile`` whose speed or cable is
    not the port's: the profile was not recreated after a cable-length or speed change
    (sonic-buildimage#1602), so its headroom was sized for another cable."""
    out = []
    for d in fab.devices:
        pgs = d.buffer_pg()
        groups: dict[tuple, list[str]] = defaultdict(list)
        for port, prios in d.lossless_ports().items():
            for pg in prios:
                hit = pgs.get((port, pg))
                if hit is None:
                    continue
                m = _PG_NAME.match(hit[1].get("profile", ""))
                speed, cable = d.port_speed(port), d.cable(port)
                if not m or not speed or not cable:
                    continue
                if (m.group(1), m.group(2)) != (speed, cable):
                    groups[(hit[1]["profile"], m.group(1), m.group(2), speed, cable)].append(port)
        for (prof, ps, pc, speed, cable), ports in groups.items():
            ports = sorted(set(ports), key=_port_order)
            out.append(
                Finding(
                    "pg-profile-stale",
                    "error",
                    d.name,
                    f"BUFFER_PROFILE|{prof}",
                    f"{len(ports)} lossless port(s) at {speed} Mb/s with CABLE_LENGTH {cable} use {prof}, sized "
                    f"for {ps} Mb/s over {pc}: the headroom was not recomputed after the change",
                    {
                        "profile_speed_cable": f"{ps} {pc}",
                        "port_speed_cable": f"{speed} {cable}",
                        "ports": _ports_key(ports),
                    },
                    f"point BUFFER_PG of these ports to pg_lossless_{speed}_{cable}_profile (or delete the "
                    "lossless PGs and let buffermgrd recreate them)",
                )
            )
    return out


def rule_pg_lookup_missing(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        if d.lookup is None:
            continue
        pgs = d.buffer_pg()
        miss: list[tuple[tuple, str]] = []
        for port, prios in d.lossless_ports().items():
            if all((port, pg) in pgs for pg in prios):
                continue
            speed, cable = d.port_speed(port), d.cable(port)
            if speed and cable and cable != "0m" and d.lookup.get(speed, cable) is None:
                miss.append(((speed, cable), port))
        for (speed, cable), ports in _group(miss).items():
            out.append(
                Finding(
                    "pg-lookup-missing",
                    "error",
                    d.name,
                    f"BUFFER_PROFILE|pg_lossless_{speed}_{cable}_profile",
                    f'speed {speed} with cable {cable} is not in {d.lookup.file}: buffermgrd logs "No PG profile '
                    f'configured" and creates no lossless PG for {len(ports)} port(s)',
                    {
                        "speed_mbps": speed,
                        "cable": cable,
                        "ports": _ports_key(ports),
                        "lookup": d.lookup.file,
                    },
                    "add the row to pg_profile_lookup.ini (or set a cable length the table has)",
                )
            )
    return out


def rule_cable_length_missing(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        if not (d.has("CABLE_LENGTH") or d.has("BUFFER_PG") or d.has("BUFFER_PROFILE")):
            continue
        pgs = d.buffer_pg()
        miss, zero = [], []
        for port, prios in d.lossless_ports().items():
            if all((port, pg) in pgs for pg in prios):
                continue  # lossless PGs already exist in the running config
            c = d.cable(port)
            if c is None:
                miss.append(port)
            elif int(c[:-1]) == 0:
                zero.append(port)
        key = next(iter(d.table("CABLE_LENGTH")), "AZURE")
        for ports, what in ((miss, "has no cable length"), (zero, "has cable length 0m")):
            if ports:
                out.append(
                    Finding(
                        "cable-length-missing",
                        "error",
                        d.name,
                        f"CABLE_LENGTH|{key}",
                        f"{len(ports)} lossless port(s) {what}: buffermgrd creates no lossless PG, so PFC priorities "
                        "have no headroom",
                        {"ports": _ports_key(ports)},
                        f"set CABLE_LENGTH|{key} for these ports (e.g. 5m server–ToR, 40m ToR–leaf, 300m leaf–spine)",
                    )
                )
    return out


def rule_lossless_pg_runtime(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        pgs = d.buffer_pg()
        absent = [p for p, prios in d.lossless_ports().items() if not any((p, pg) in pgs for pg in prios)]
        if absent and (d.has("BUFFER_PG") or d.has("BUFFER_PROFILE")):
            synth = sum(1 for (p, _pg), v in _lossless_pg_profiles(d).items() if v[2])
            how = (
                f"{synth} PG(s) synthesized from pg_profile_lookup.ini for the checks"
                if synth
                else "their headroom is not checked (give the SKU's pg_profile_lookup.ini and PORT speeds)"
            )
            out.append(
                Finding(
                    "lossless-pg-runtime",
                    "info",
                    d.name,
                    "BUFFER_PG",
                    f"lossless PGs of {len(absent)} port(s) are created at runtime: buffermgrd makes them "
                    f"from pfc_enable + CABLE_LENGTH + speed; {how}",
                    {"ports": _ports_key(absent)},
                    "audit the running CONFIG_DB (show runningconfiguration all) to see them",
                )
            )
    return out


def rule_pg_profile_table_mismatch(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        if d.lookup is None:
            continue
        for name, prof in d.table("BUFFER_PROFILE").items():
            m = _PG_NAME.match(name)
            if not m:
                continue
            row = d.lookup.get(m.group(1), m.group(2))
            if row is None:
                continue
            want = {"xon": row.xon_bytes, "xoff": row.xoff_bytes, "size": row.size_bytes}
            diff = {
                k: f"{prof.get(k)} here vs {v} in table" for k, v in want.items() if _int(prof.get(k)) != v
            }
            if diff:
                out.append(
                    Finding(
                        "pg-profile-table-mismatch",
                        "warning",
                        d.name,
                        f"BUFFER_PROFILE|{name}",
                        f"profile differs from {d.lookup.file}: "
                        + "; ".join(f"{k} {v}" for k, v in diff.items())
                        + " (stale after a cable-length change, or a hand edit)",
                        diff,
                        "delete the profile and let buffermgrd recreate it, or update the table",
                    )
                )
    return out


# ---------------------------------------------------------------------------------------------
# ECN / WRED
def _truthy(v: str | None) -> bool:
    return str(v).lower() == "true"


def _ecn_queues(fab: Fabric, d: Device) -> list[tuple[str, int, str, str]]:
    """(port, queue, problem or "", wred profile) for each lossless queue of ``d``."""
    qs = d.queues()
    out = []
    for port, prios in d.lossless_ports().items():
        for tc in prios:
            q = _queue_of(d, port, tc)
            wp = qs.get((port, q), ("", {}))[1].get("wred_profile")
            if not wp:
                out.append((port, q, "no wred_profile on the queue", ""))
                continue
            prof = d.table("WRED_PROFILE").get(wp, {})
            if prof.get("ecn", "ecn_none") == "ecn_none":
                out.append(
                    (port, q, f"WRED_PROFILE {wp} has ecn {prof.get('ecn', 'ecn_none (default)')}", wp)
                )
            elif not _truthy(prof.get("wred_green_enable")):
                why = f"WRED_PROFILE {wp} has wred_green_enable {prof.get('wred_green_enable', 'false (default)')}"
                out.append((port, q, why, wp))
            else:
                out.append((port, q, "", wp))
    return out


def rule_ecn_disabled(fab: Fabric) -> list[Finding]:
    """Severity follows the design's intent: ``dcqcn`` → error; ``pfc-only`` → info; ``auto`` →
    error when at least half of the role's lossless queues mark ECN, else warning."""
    out = []
    per = {d.name: _ecn_queues(fab, d) for d in fab.devices if d.has("QUEUE") or d.has("WRED_PROFILE")}
    for role, devs in fab.by_role().items():
        qs = [q for d in devs for q in per.get(d.name, [])]
        marked = sum(1 for q in qs if not q[2])
        role_uses = bool(qs) and 2 * marked >= len(qs)
        for d in devs:
            if d.name not in per:
                continue
            bad = [((q, why, wp), port) for port, q, why, wp in per[d.name] if why]
            if fab.intent == "dcqcn":
                sev, basis = "error", "--intent dcqcn"
            elif fab.intent == "pfc-only":
                sev, basis = "info", "--intent pfc-only"
            elif role_uses:
                sev, basis = "error", f"{marked} of {len(qs)} lossless queues of the {role} switches mark ECN"
            else:
                sev, basis = "warning", f"no majority of {role} lossless queues marks ECN; state --intent"
            for (q, why, wp), ports in _group(bad).items():
                out.append(
                    Finding(
                        "ecn-disabled",
                        sev,
                        d.name,
                        f"QUEUE|{_ports_key(ports)}|{q}",
                        f"lossless queue {q} does not mark ECN ({why}): without ECN/DCQCN, congestion is "
                        "handled by PFC alone (pause storms, head-of-line blocking)",
                        {
                            "queue": str(q),
                            "reason": why,
                            "wred_profile": wp or "none",
                            "intent": fab.intent,
                            "judged_by": basis,
                        },
                        f"set QUEUE|<port>|{q} wred_profile to a profile with ecn ecn_all and wred_green_enable "
                        "true" + ("" if sev != "info" else " if DCQCN is ever wanted"),
                    )
                )
    return out


def rule_ecn_kmin_ge_kmax(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        for name, p in d.table("WRED_PROFILE").items():
            for c in ("green", "yellow", "red"):
                lo, hi = _int(p.get(f"{c}_min_threshold")), _int(p.get(f"{c}_max_threshold"))
                if (
                    lo is None
                    or hi is None
                    or lo < hi
                    or not _truthy(p.get(f"wred_{c}_enable", "true" if c == "green" else "false"))
                ):
                    continue
                out.append(
                    Finding(
                        "ecn-kmin-ge-kmax",
                        "error" if lo > hi else "warning",
                        d.name,
                        f"WRED_PROFILE|{name}",
                        f"{c} Kmin {lo} B {'>' if lo > hi else '='} Kmax {hi} B: "
                        + (
                            "YANG rejects max < min; marking is undefined"
                            if lo > hi
                            else "marking jumps from 0 to Pmax at one queue depth (no DCQCN ramp)"
                        ),
                        {f"{c}_min_threshold": str(lo), f"{c}_max_threshold": str(hi)},
                        f"set {c}_min_threshold below {c}_max_threshold (e.g. 150000 / 1500000 B, NVIDIA RoCE preset)",
                    )
                )
    return out


def rule_wred_probability_range(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        for name, p in d.table("WRED_PROFILE").items():
            for c in ("green", "yellow", "red"):
                v = _int(p.get(f"{c}_drop_probability"))
                if v is not None and not 0 <= v <= 100:
                    out.append(
                        Finding(
                            "wred-probability-range",
                            "error",
                            d.name,
                            f"WRED_PROFILE|{name}",
                            f"{c}_drop_probability {v} is outside 0..100 (percent, YANG sonic-wred-profile)",
                            {f"{c}_drop_probability": str(v)},
                            f"set {c}_drop_probability to 0..100 (SONiC default 5)",
                        )
                    )
    return out


def _pfc_trigger_bytes(d: Device, prof: dict[str, str]) -> int | None:
    """Bytes one congested lossless PG holds when it sends XOFF: reserved size + shared limit.
    Dynamic: limit = α·free with α = 2^dynamic_th; alone on the pool, T = α/(1+α) · pool size
    (SAI saibuffer.h semantics, formats.md §1.5). Static: static_th (0 = unlimited → None)."""
    pool = d.table("BUFFER_POOL").get(prof.get("pool", ""), {})
    size = _int(prof.get("size"), 0) or 0
    if "static_th" in prof or pool.get("mode") == "static":
        st = _int(prof.get("static_th"), 0)
        return size + st if st else None
    th = _int(prof.get("dynamic_th"))
    psize = _int(pool.get("size"))
    if th is None or not psize:
        return None
    alpha = 2.0**th
    return int(size + alpha / (1 + alpha) * psize)


def rule_ecn_above_pfc_threshold(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        qs = d.queues()
        groups: dict[tuple, list[str]] = defaultdict(list)
        for (port, pg), (pname, prof, _synth) in _lossless_pg_profiles(d).items():
            q = _queue_of(d, port, pg)
            wp = qs.get((port, q), ("", {}))[1].get("wred_profile")
            w = d.table("WRED_PROFILE").get(wp or "")
            trig = _pfc_trigger_bytes(d, prof)
            if not w or trig is None:
                continue
            kmin, kmax = _int(w.get("green_min_threshold")), _int(w.get("green_max_threshold"))
            if kmin is None or kmax is None:
                continue
            if kmin >= trig:
                groups[(wp, "error", kmin, kmax, trig, pname)].append(port)
            elif kmax > trig:
                groups[(wp, "warning", kmin, kmax, trig, pname)].append(port)
        for (wp, sev, kmin, kmax, trig, pname), ports in groups.items():
            what = f"Kmin {kmin} B" if sev == "error" else f"Kmax {kmax} B"
            out.append(
                Finding(
                    "ecn-above-pfc-threshold",
                    sev,
                    d.name,
                    f"WRED_PROFILE|{wp}",
                    f"{what} is above the PFC XOFF point {trig} B of {pname} (reserved size + shared limit): "
                    + (
                        "PFC fires before ECN marks, so DCQCN never slows senders down"
                        if sev == "error"
                        else "marking never reaches Pmax before PFC fires"
                    ),
                    {
                        "green_min_threshold": str(kmin),
                        "green_max_threshold": str(kmax),
                        "pfc_trigger_bytes": str(trig),
                        "pg_profile": pname,
                        "ports": _ports_key(ports),
                    },
                    "lower the ECN thresholds below the PFC trigger, or raise dynamic_th / the pool size",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# PFC watchdog
def _wd_ports(d: Device) -> dict[str, dict[str, str]]:
    return {k: v for k, v in d.table("PFC_WD").items() if k != "GLOBAL"}


def rule_pfcwd_disabled(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        if d.dialect != "sonic":
            continue  # SONiC's PFC_WD model; NVUE/EOS watchdogs are not modelled
        lp = d.lossless_ports()
        if not lp:
            continue
        wd = _wd_ports(d)
        qos = d.qos_ports()
        status = d.metadata.get("default_pfcwd_status")
        empty = [
            p
            for p in lp
            if qos[p].get("pfcwd_sw_enable") is not None and not parse_prio_list(qos[p]["pfcwd_sw_enable"])
        ]
        unwatched = [p for p in lp if wd and p not in wd and p not in empty]
        if empty:
            out.append(
                Finding(
                    "pfcwd-disabled",
                    "error",
                    d.name,
                    f"PORT_QOS_MAP|{_ports_key(empty)}",
                    f"pfcwd_sw_enable is empty on {len(empty)} lossless port(s): a PFC storm or deadlock "
                    "on them is never broken",
                    {"ports": _ports_key(empty)},
                    "set pfcwd_sw_enable to the port's pfc_enable priorities",
                )
            )
        if unwatched:
            out.append(
                Finding(
                    "pfcwd-disabled",
                    "error",
                    d.name,
                    f"PFC_WD|{_ports_key(unwatched)}",
                    f"{len(unwatched)} lossless port(s) have no PFC_WD entry while other ports do",
                    {"ports": _ports_key(unwatched)},
                    "config pfcwd start --action drop <ports> 200 --restoration-time 200",
                )
            )
        if not wd and status == "disable":
            out.append(
                Finding(
                    "pfcwd-disabled",
                    "error",
                    d.name,
                    "DEVICE_METADATA|localhost",
                    f"default_pfcwd_status is disable and there is no PFC_WD entry: the {len(lp)} lossless "
                    "ports run without a PFC watchdog",
                    {"default_pfcwd_status": status},
                    "set default_pfcwd_status enable and run config pfcwd start_default",
                )
            )
        partial = []
        for p, prios in lp.items():
            sw = qos[p].get("pfcwd_sw_enable")
            if sw is not None and parse_prio_list(sw) and set(prios) - set(parse_prio_list(sw)):
                partial.append(((",".join(map(str, sorted(set(prios) - set(parse_prio_list(sw))))), sw), p))
        for (missing, sw), ports in _group(partial).items():
            out.append(
                Finding(
                    "pfcwd-partial",
                    "warning",
                    d.name,
                    f"PORT_QOS_MAP|{_ports_key(ports)}",
                    f"PFC watchdog misses lossless priority {missing} on {len(ports)} port(s) "
                    f"(pfcwd_sw_enable {sw})",
                    {"pfcwd_sw_enable": sw, "unwatched": missing},
                    f"add {missing} to pfcwd_sw_enable if storms on it must be broken",
                )
            )
        if not wd and status != "disable":
            out.append(
                Finding(
                    "pfcwd-not-configured",
                    "warning" if status != "enable" else "info",
                    d.name,
                    "PFC_WD",
                    f"no PFC_WD entries (default_pfcwd_status: {status or 'not in these files'}): "
                    "`config pfcwd start_default` creates them at boot only when it is enable, and only for "
                    "ports with a DEVICE_NEIGHBOR",
                    {"default_pfcwd_status": status or "absent", "lossless_ports": str(len(lp))},
                    "check `show pfcwd config` on the switch, or add PFC_WD entries (200 ms detect/restore, action drop)",
                )
            )
    return out


def rule_pfcwd_invalid(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        poll = _int(d.table("PFC_WD").get("GLOBAL", {}).get("POLL_INTERVAL"))
        if poll is not None and not PFCWD_POLL_MS[0] <= poll <= PFCWD_POLL_MS[1]:
            out.append(
                Finding(
                    "pfcwd-invalid",
                    "error",
                    d.name,
                    "PFC_WD|GLOBAL",
                    f"POLL_INTERVAL {poll} ms is outside {PFCWD_POLL_MS[0]}..{PFCWD_POLL_MS[1]} ms",
                    {"POLL_INTERVAL": str(poll)},
                    "set POLL_INTERVAL to 200 ms",
                )
            )
        for port, f in sorted(_wd_ports(d).items(), key=lambda kv: _port_order(kv[0])):
            act = f.get("action", "drop")
            problems = []
            if act not in PFCWD_ACTIONS:
                problems.append(f"action '{act}' is not one of {', '.join(PFCWD_ACTIONS)}")
            for fld, (lo, hi) in (
                ("detection_time", PFCWD_DETECT_MS),
                ("restoration_time", PFCWD_RESTORE_MS),
            ):
                v = _int(f.get(fld))
                if v is None:
                    continue
                if not lo <= v <= hi:
                    problems.append(f"{fld} {v} ms is outside {lo}..{hi} ms")
                elif poll is not None and v < poll:
                    problems.append(f"{fld} {v} ms is below POLL_INTERVAL {poll} ms")
            if problems:
                out.append(
                    Finding(
                        "pfcwd-invalid",
                        "error",
                        d.name,
                        f"PFC_WD|{port}",
                        "; ".join(problems),
                        {k: v for k, v in f.items() if k in ("action", "detection_time", "restoration_time")},
                        "use action drop, detection_time 200, restoration_time 200 (config pfcwd start_default)",
                    )
                )
            elif act in ("forward", "alert"):
                why = (
                    (
                        "forward ignores PAUSE on the stormed queue: the lossless class turns lossy and the peer "
                        "drops the overflow without a storm counter of its own"
                    )
                    if act == "forward"
                    else "alert only logs the storm: the stuck queue and the deadlock stay"
                )
                out.append(
                    Finding(
                        "pfcwd-action",
                        "warning",
                        d.name,
                        f"PFC_WD|{port}",
                        f"action {act}: {why}",
                        {"action": act},
                        "use action drop (SONiC default) for lossless RoCE queues",
                    )
                )
    return out


# ---------------------------------------------------------------------------------------------
# MTU, buffer pools
def rule_mtu_mismatch(fab: Fabric) -> list[Finding]:
    out = []
    for ln in fab.links:
        ma, mb = fab.device(ln.a).port_mtu(ln.a_port), fab.device(ln.b).port_mtu(ln.b_port)
        if ma is not None and mb is not None and ma != mb:
            out.append(
                Finding(
                    "mtu-mismatch",
                    "error",
                    ln.a,
                    f"PORT|{ln.a_port}",
                    f"MTU {ma} here vs {mb} at {ln.b}:{ln.b_port}: frames above {min(ma, mb)} B are dropped "
                    "on one direction of the link",
                    {"mtu": str(ma), "peer_mtu": str(mb), "peer": f"{ln.b}:{ln.b_port}"},
                    "set the same PORT mtu on both ends (SONiC default 9100)",
                )
            )
    for d in fab.devices:
        small = [p for p in d.lossless_ports() if (d.port_mtu(p) or hr.DEFAULT_PORT_MTU) < ROCE_MIN_PORT_MTU]
        if small:
            out.append(
                Finding(
                    "mtu-too-small",
                    "warning",
                    d.name,
                    f"PORT|{_ports_key(small)}",
                    f"{len(small)} lossless port(s) have MTU below {ROCE_MIN_PORT_MTU} B, too small for "
                    "4096-byte RoCE frames",
                    {"ports": _ports_key(small)},
                    f"set PORT mtu ≥ {ROCE_MIN_PORT_MTU} (9100 is the SONiC default)",
                )
            )
    return out


def rule_buffer_pool_oversubscribed(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        pools = d.table("BUFFER_POOL")
        reserved: dict[str, int] = defaultdict(int)
        users: dict[str, int] = defaultdict(int)
        for table in ("BUFFER_PG", "BUFFER_QUEUE"):
            for (_port, _idx), (_key, f) in d._indexed(table).items():
                prof = d.profile(f.get("profile"))
                if prof and prof.get("pool") in pools:
                    reserved[prof["pool"]] += _int(prof.get("size"), 0) or 0
                    users[prof["pool"]] += 1
        for name, p in pools.items():
            size, xoff = _int(p.get("size")), _int(p.get("xoff"), 0) or 0
            if size is None or size == 0:
                continue
            if reserved[name] > size:
                out.append(
                    Finding(
                        "buffer-pool-oversubscribed",
                        "error",
                        d.name,
                        f"BUFFER_POOL|{name}",
                        f"{users[name]} PGs/queues reserve {reserved[name]} B in a pool of {size} B",
                        {"reserved_bytes": str(reserved[name]), "pool_size_bytes": str(size)},
                        "shrink the reserved sizes or enlarge the pool",
                    )
                )
            if xoff >= size:
                out.append(
                    Finding(
                        "buffer-pool-oversubscribed",
                        "error",
                        d.name,
                        f"BUFFER_POOL|{name}",
                        f"shared headroom pool xoff {xoff} B is not smaller than the pool ({size} B)",
                        {"xoff_bytes": str(xoff), "pool_size_bytes": str(size)},
                        "the shared headroom pool is carved from the pool: keep xoff well below size",
                    )
                )
    return out


def rule_checks_skipped(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        if d.dialect != "sonic":
            continue  # NVUE/EOS: buffers are managed by the platform, nothing to list
        absent = [
            t
            for t in (
                "PORT",
                "PORT_QOS_MAP",
                "CABLE_LENGTH",
                "BUFFER_PROFILE",
                "BUFFER_PG",
                "QUEUE",
                "WRED_PROFILE",
                "DEVICE_METADATA",
            )
            if not d.has(t)
        ]
        if absent:
            out.append(
                Finding(
                    "checks-skipped",
                    "info",
                    d.name,
                    "config",
                    f"tables not in these files: {', '.join(absent)}; checks that need them were skipped"
                    + (
                        " (no PORT_QOS_MAP, so no port is known to be lossless)"
                        if "PORT_QOS_MAP" in absent
                        else ""
                    )
                    + (
                        " (no DEVICE_METADATA: the role comes from the name's pattern, or --roles)"
                        if "DEVICE_METADATA" in absent
                        else ""
                    ),
                    {"absent": ",".join(absent)},
                    "audit the full running CONFIG_DB, or give the switch's files together (a.json+b.json)",
                )
            )
    return out


RULES: dict[str, Rule] = {
    r.id: r
    for r in [
        Rule(
            "pfc-priority-mismatch",
            "error",
            "pfc_enable differs between switches of one role",
            rule_pfc_priority_mismatch,
        ),
        Rule(
            "pfc-priority-link-mismatch",
            "error",
            "pfc_enable differs between the two ends of a link",
            rule_pfc_priority_link_mismatch,
        ),
        Rule(
            "qos-map-inconsistent",
            "error",
            "a DSCP/TC/PG/queue map of one name differs between switches of one role "
            "(warning when no lossless class is involved)",
            rule_qos_map_inconsistent,
        ),
        Rule(
            "roce-dscp-lossy",
            "error",
            "the NICs' RoCE DSCP lands in a lossy class (checked only when the NIC side is "
            "stated: --nic-dscp or host configs)",
            rule_roce_dscp_lossy,
        ),
        Rule(
            "pfc-priority-port-mismatch",
            "error",
            "within a switch, a port's pfc_enable differs from the other ports with the same DSCP map",
            rule_pfc_priority_port_mismatch,
        ),
        Rule(
            "pfc-off-on-headroom-pg",
            "error",
            "a PG has a lossless (xoff) buffer profile but its priority is not in the port's pfc_enable",
            rule_pfc_off_on_headroom_pg,
        ),
        Rule(
            "dscp-lossless-some-ports",
            "error",
            "within a switch, a port's DSCP map sends a DSCP that is lossless elsewhere to a lossy TC",
            rule_dscp_lossless_some_ports,
        ),
        Rule(
            "lossless-dscp-lossy-at-peer",
            "error",
            "a DSCP lossless at one end of a link is lossy at the other",
            rule_lossless_dscp_lossy_at_peer,
        ),
        Rule(
            "tc-pg-mismatch",
            "error",
            "a lossless TC maps to a PG without lossless headroom",
            rule_tc_pg_mismatch,
        ),
        Rule(
            "cnp-not-strict",
            "warning",
            "the NICs' CNP DSCP (--cnp-dscp or mlxconfig CNP_DSCP_P1) is not in a strict-priority queue",
            rule_cnp_not_strict,
        ),
        Rule(
            "pfc-threshold-mismatch",
            "error",
            "xon/xoff/size/dynamic_th differ between switches of one role for the "
            "same speed and cable (warning across different hwsku)",
            rule_pfc_threshold_mismatch,
        ),
        Rule(
            "headroom-too-small",
            "error",
            "xoff below the physical minimum, the SONiC formula (Spectrum-4/5; "
            "warning on Spectrum-2/3/6) or the SKU table row",
            rule_headroom_too_small,
        ),
        Rule(
            "pg-profile-stale",
            "error",
            "a lossless PG uses the profile of another speed or cable length (not recreated after a change)",
            rule_pg_profile_stale,
        ),
        Rule(
            "pg-lookup-missing",
            "error",
            "the port's speed/cable pair is missing from pg_profile_lookup.ini",
            rule_pg_lookup_missing,
        ),
        Rule(
            "cable-length-missing",
            "error",
            "a lossless port has no CABLE_LENGTH (or 0m)",
            rule_cable_length_missing,
        ),
        Rule(
            "pg-profile-table-mismatch",
            "warning",
            "a pg_lossless profile differs from its lookup-table row",
            rule_pg_profile_table_mismatch,
        ),
        Rule(
            "lossless-pg-runtime",
            "info",
            "lossless PGs are not in the config (buffermgrd creates them)",
            rule_lossless_pg_runtime,
        ),
        Rule(
            "ecn-disabled",
            "error",
            "a lossless queue has no ECN marking (error under --intent dcqcn or when the role's "
            "majority marks ECN; warning otherwise; info under --intent pfc-only)",
            rule_ecn_disabled,
        ),
        Rule("ecn-kmin-ge-kmax", "error", "WRED Kmin > Kmax (warning when equal)", rule_ecn_kmin_ge_kmax),
        Rule(
            "ecn-above-pfc-threshold",
            "error",
            "ECN Kmin above the PFC XOFF point: PFC fires before ECN (warning for Kmax)",
            rule_ecn_above_pfc_threshold,
        ),
        Rule(
            "wred-probability-range",
            "error",
            "WRED drop probability outside 0..100",
            rule_wred_probability_range,
        ),
        Rule(
            "pfcwd-disabled",
            "error",
            "PFC watchdog off on lossless ports (pfcwd-partial / pfcwd-not-configured: warnings)",
            rule_pfcwd_disabled,
        ),
        Rule(
            "pfcwd-invalid",
            "error",
            "PFC watchdog action/times outside the YANG ranges (pfcwd-action: warning for forward/alert)",
            rule_pfcwd_invalid,
        ),
        Rule(
            "mtu-mismatch",
            "error",
            "MTU differs across a link (mtu-too-small: warning below 4200 B on lossless ports)",
            rule_mtu_mismatch,
        ),
        Rule(
            "buffer-pool-oversubscribed",
            "error",
            "reserved buffers exceed a pool, or the shared headroom pool fills it",
            rule_buffer_pool_oversubscribed,
        ),
        Rule("checks-skipped", "info", "tables absent from the given files", rule_checks_skipped),
    ]
}

# Rule ids a rule function may emit besides its own (documented in the README, "aifabric audit").
EXTRA_IDS = {
    "pfcwd-partial": "warning",
    "pfcwd-not-configured": "warning",
    "pfcwd-action": "warning",
    "mtu-too-small": "warning",
    "pfc-deadlock-cycle": "error",
}


def run_rules(fab: Fabric, only: list[str] | None = None) -> list[Finding]:
    out: list[Finding] = []
    for rid, rule in RULES.items():
        if only is None or rid in only:
            out.extend(rule.fn(fab))
    # one root cause, one finding: the fleet-wide rule carries more evidence than the per-switch one
    seen = {(f.rule, f.device, f.object) for f in out}
    out = [
        f for f in out if not any((sup, f.device, f.object) in seen for sup in SUPERSEDED_BY.get(f.rule, ()))
    ]
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(out, key=lambda f: (order[f.severity], f.device, f.rule, f.object))


# rule → rules whose finding on the same device and object makes it redundant
SUPERSEDED_BY = {
    "fleet-inconsistent": ("pfc-priority-mismatch", "pfc-priority-port-mismatch", "pfc-off-on-headroom-pg"),
    "pfc-priority-port-mismatch": ("pfc-priority-mismatch", "pfc-off-on-headroom-pg"),
    "dscp-lossless-some-ports": ("qos-map-inconsistent", "roce-dscp-lossy", "lossless-dscp-lossy-at-peer"),
}
