"""QoS / DSCP mapping rules: DSCP/TC/PG/queue maps across a role, the NICs' RoCE and CNP DSCPs,
lossless DSCPs that turn lossy on some ports or at a link's other end."""

from __future__ import annotations

from collections import defaultdict

from aifabric.audit.infer import dscp_lossless as _dscp_lossless
from aifabric.audit.infer import pg_of as _pg_of
from aifabric.audit.infer import queue_of as _queue_of
from aifabric.audit.infer import tc_of as _tc_of
from aifabric.audit.rules.common import _csv, _group, _int, _is_tie, _majority, _ports_key
from aifabric.audit.rules.model import Fabric, Finding
from aifabric.audit.sonic import Device

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
