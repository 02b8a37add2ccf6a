"""PFC watchdog rules: watchdog off on lossless ports; action and times outside the YANG ranges."""

from __future__ import annotations

from aifabric.audit.rules.common import _group, _int, _port_order, _ports_key
from aifabric.audit.rules.model import Fabric, Finding
from aifabric.audit.sonic import Device, parse_prio_list

# PFC watchdog ranges, YANG sonic-pfcwd.yang (formats.md §1.10), milliseconds.
PFCWD_DETECT_MS = (100, 5000)
PFCWD_RESTORE_MS = (100, 60000)
PFCWD_POLL_MS = (100, 1000)
PFCWD_ACTIONS = ("drop", "forward", "alert")


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
