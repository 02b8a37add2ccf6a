"""PFC priority rules: pfc_enable across a role, a link and the ports of one switch; headroom PGs
whose priority PFC never pauses."""

from __future__ import annotations

from collections import defaultdict

from aifabric.audit.infer import dscp_lossless as _dscp_lossless
from aifabric.audit.rules.common import _csv, _group, _is_tie, _majority, _ports_key
from aifabric.audit.rules.model import Fabric, Finding
from aifabric.audit.sonic import parse_prio_list


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
