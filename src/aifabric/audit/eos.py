"""Arista EOS running-config (``show running-config``) → the normalised switch model.

The lossless-RoCE lines it reads (Arista EOS QoS / PFC configuration guides):

* global ``qos map dscp D[ D...] to traffic-class T`` and ``qos map traffic-class T to tx-queue Q``;
* per ``interface EthernetX``: ``mtu N``, ``qos trust dscp|cos``, ``priority-flow-control on``,
  ``priority-flow-control priority P no-drop`` (``drop`` removes it), ``priority-flow-control
  pause watchdog`` (with the global ``priority-flow-control pause watchdog default timeout``);
* under ``tx-queue Q`` of an interface: ``random-detect ecn minimum-threshold N kbytes|mbytes|bytes
  maximum-threshold N ... [max-mark-probability P]``, ``bandwidth percent N`` (DWRR weight),
  ``priority strict``, ``no priority``.

Defaults when a line is absent (assumptions, not checked against a platform's ``show qos maps``):
DSCP → TC is DSCP // 8, except DSCP 0-7 → TC 1 and 8-15 → TC 0 (EOS's CoS-style default that keeps
"background" below best effort); TC → tx-queue is the identity; a no-drop priority P is lossless for
traffic class P; an interface without ``mtu`` is taken at 9214 (the jumbo size L2 ports pass; a
routed port's 1500 default is not assumed). Map the RoCE and CNP DSCPs explicitly, as
``roce-config --os eos`` does, and the defaults do not matter.
Buffers and headroom are managed by the platform (no BUFFER_* tables). Findings name the EOS line
(``interface Ethernet1/1 priority-flow-control``) with the SONiC-model object in the evidence.
"""

from __future__ import annotations

import re
from pathlib import Path

from aifabric.audit.sonic import Device
from aifabric.errors import InputError

NATIVE = {
    "DSCP_TO_TC_MAP": "qos map dscp",
    "TC_TO_QUEUE_MAP": "qos map traffic-class to tx-queue",
    "PORT_QOS_MAP": "interface {key} priority-flow-control",
    "QUEUE": "interface {key} tx-queue {idx}",
    "WRED_PROFILE": "tx-queue random-detect ecn ({key})",
    "SCHEDULER": "tx-queue bandwidth ({key})",
    "PORT": "interface {key} mtu",
    "PFC_WD": "interface {key} priority-flow-control pause watchdog",
}
DEFAULT_MTU = 9214  # assumed when an interface has no mtu line (see the module docstring)
_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1000**2, "segments": 208}


def _default_tc(dscp: int) -> int:
    if dscp < 8:
        return 1
    if dscp < 16:
        return 0
    return dscp // 8


def _bad(f: str, lineno: int, s: str, allowed: str) -> InputError:
    return InputError("unreadable line", file=f, field=f"line {lineno}", value=s[:60], allowed=allowed)


def to_device(path: str | Path, text: str) -> Device:
    """EOS running-config → Device. Raises InputError naming the file and line."""
    f = str(path)
    hostname = None
    dscp_tc = {d: _default_tc(d) for d in range(64)}
    tc_q = {t: t for t in range(8)}
    ports: dict[str, dict] = {}
    wd_global = False
    cur: dict | None = None
    cur_q: int | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.strip().startswith("!"):
            continue
        indent = len(raw) - len(raw.lstrip())
        s = " ".join(raw.split())
        if indent == 0:
            cur, cur_q = None, None
            if s.startswith("hostname "):
                hostname = s.split()[1]
            elif s.startswith("qos map dscp "):
                m = re.fullmatch(r"qos map dscp ((?:\d+ )+)to traffic-class (\d+)", s)
                if not m:
                    raise _bad(f, lineno, s, "qos map dscp D [D...] to traffic-class T")
                tc = int(m.group(2))
                ds = [int(x) for x in m.group(1).split()]
                if tc > 7 or any(d > 63 for d in ds):
                    raise InputError(
                        "out of range",
                        file=f,
                        field=f"line {lineno}",
                        value=s[:60],
                        allowed="DSCP 0..63, TC 0..7",
                    )
                for d in ds:
                    dscp_tc[d] = tc
            elif s.startswith("qos map traffic-class "):
                m = re.fullmatch(r"qos map traffic-class ((?:\d+ )+)to tx-queue (\d+)", s)
                if not m:
                    raise _bad(f, lineno, s, "qos map traffic-class T [T...] to tx-queue Q")
                q = int(m.group(2))
                ts = [int(x) for x in m.group(1).split()]
                if q > 7 or any(t > 7 for t in ts):
                    raise InputError(
                        "out of range",
                        file=f,
                        field=f"line {lineno}",
                        value=s[:60],
                        allowed="TC 0..7, tx-queue 0..7",
                    )
                for t in ts:
                    tc_q[t] = q
            elif s.startswith("priority-flow-control pause watchdog"):
                wd_global = True
            elif s.startswith("interface Ethernet"):
                name = s.split()[1]
                cur = ports.setdefault(
                    name, {"mtu": None, "pfc": False, "prios": set(), "queues": {}, "wd": False}
                )
            continue
        if cur is None:
            continue
        if s.startswith("tx-queue "):
            m = re.fullmatch(r"tx-queue (\d+)", s)
            if not m or int(m.group(1)) > 7:
                raise _bad(f, lineno, s, "tx-queue 0..7")
            cur_q = int(m.group(1))
            cur["queues"].setdefault(cur_q, {})
            continue
        if cur_q is not None and indent >= 6:
            q = cur["queues"][cur_q]
            if s.startswith("random-detect ecn"):
                m = re.fullmatch(
                    r"random-detect ecn minimum-threshold (\d+) (\w+) maximum-threshold (\d+) (\w+)"
                    r"(?: max-mark-probability (\d+))?(?: weight \d+)?",
                    s,
                )
                if not m or m.group(2) not in _UNITS or m.group(4) not in _UNITS:
                    raise _bad(
                        f,
                        lineno,
                        s,
                        "random-detect ecn minimum-threshold N kbytes maximum-threshold N kbytes "
                        "[max-mark-probability P]",
                    )
                q["ecn"] = (
                    int(m.group(1)) * _UNITS[m.group(2)],
                    int(m.group(3)) * _UNITS[m.group(4)],
                    int(m.group(5) or 100),
                )
            elif s.startswith("no random-detect ecn"):
                q["ecn"] = None
            elif s.startswith("bandwidth percent "):
                m = re.fullmatch(r"bandwidth percent (\d+)", s)
                if not m or int(m.group(1)) > 100:
                    raise _bad(f, lineno, s, "bandwidth percent 0..100")
                q["sched"] = ("DWRR", int(m.group(1)))
            elif s == "priority strict":
                q["sched"] = ("STRICT", None)
            continue
        cur_q = None
        if s.startswith("mtu "):
            m = re.fullmatch(r"mtu (\d+)", s)
            if not m or not 68 <= int(m.group(1)) <= 9216:
                raise _bad(f, lineno, s, "mtu 68..9216")
            cur["mtu"] = int(m.group(1))
        elif s == "priority-flow-control on" or s == "priority-flow-control mode on":
            cur["pfc"] = True
        elif s.startswith("priority-flow-control priority "):
            m = re.fullmatch(r"priority-flow-control priority (\d) (no-drop|drop)", s)
            if not m:
                raise _bad(f, lineno, s, "priority-flow-control priority 0..7 no-drop|drop")
            (cur["prios"].add if m.group(2) == "no-drop" else cur["prios"].discard)(int(m.group(1)))
        elif s.startswith("priority-flow-control pause watchdog"):
            cur["wd"] = True
    if not ports and hostname is None:
        raise InputError("no hostname or interface lines", file=f, allowed="an EOS running-config")
    name = hostname or Path(f).stem
    t: dict[str, dict[str, dict[str, str]]] = {
        "DEVICE_METADATA": {"localhost": {"hostname": name, "platform": "eos"}},
        "PORT": {},
        "DSCP_TO_TC_MAP": {"global": {str(d): str(v) for d, v in dscp_tc.items()}},
        "TC_TO_QUEUE_MAP": {"global": {str(k): str(v) for k, v in tc_q.items()}},
        "PORT_QOS_MAP": {},
        "QUEUE": {},
        "WRED_PROFILE": {},
        "SCHEDULER": {},
        "PFC_WD": {},
    }
    for p, b in ports.items():
        t["PORT"][p] = {"mtu": str(b["mtu"] or DEFAULT_MTU)}
        prios = sorted(b["prios"]) if b["pfc"] else []
        t["PORT_QOS_MAP"][p] = {
            "dscp_to_tc_map": "global",
            "tc_to_queue_map": "global",
            "pfc_enable": ",".join(map(str, prios)),
        }
        for q, qb in b["queues"].items():
            entry = {}
            if qb.get("ecn"):
                lo, hi, pr = qb["ecn"]
                wname = f"ecn_{lo}_{hi}_{pr}"
                t["WRED_PROFILE"][wname] = {
                    "ecn": "ecn_all",
                    "wred_green_enable": "true",
                    "green_min_threshold": str(lo),
                    "green_max_threshold": str(hi),
                    "green_drop_probability": str(pr),
                }
                entry["wred_profile"] = wname
            if qb.get("sched"):
                typ, w = qb["sched"]
                sname = "strict" if typ == "STRICT" else f"dwrr_{w}"
                t["SCHEDULER"][sname] = {"type": typ, **({"weight": str(w)} if w is not None else {})}
                entry["scheduler"] = sname
            if entry:
                t["QUEUE"][f"{p}|{q}"] = entry
        if b["wd"] or (wd_global and prios):
            t["PFC_WD"][p] = {"action": "drop"}
    t = {k: v for k, v in t.items() if v}
    return Device(name=name, files=[f], tables=t, dialect="eos", native=dict(NATIVE))


def looks_like_eos(text: str) -> bool:
    head = text[:20000]
    return bool(
        re.search(r"^interface Ethernet\d", head, re.M)
        and re.search(r"^\s+(priority-flow-control|qos trust|tx-queue|mtu)\b", head, re.M)
    ) or bool(re.search(r"^qos map dscp .* to traffic-class", head, re.M))
