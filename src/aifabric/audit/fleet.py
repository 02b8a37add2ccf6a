"""Fleet consistency: every lossless-path field that differs between switches of one role.

Switches of one role (:mod:`aifabric.audit.roles`) are supposed to be configured alike; the
"two batches of switches" story — a second batch installed with other thresholds, scheduler
weights or watchdog timers — shows up as fields whose value differs from the role's majority.
Each switch is flattened into ``(table, entity, field) → value`` over the tables below; the value
of the majority of the role's switches is the fix (on a tie, the alphabetically first switch's
value is the reference and the evidence says so).

The fields that other rules judge with more context are left to them: the QoS maps
(qos-map-inconsistent), the ``pg_lossless_*`` profiles and ``ingress_lossless_pool``
(pfc-threshold-mismatch), ECN on/off (ecn-disabled). ``pfc_enable`` is compared port by port (a
port that lost every lossless priority is no longer lossless, so pfc-priority-mismatch, which
compares the lossless ports, cannot see it); where pfc-priority-mismatch reports the same port,
its finding is kept instead. A table a switch's
files do not contain at all is not compared for that switch (checks-skipped says so).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from aifabric.audit.rules import Fabric, Finding, _port_order, _ports_key
from aifabric.audit.sonic import Device

_PG_LOSSLESS = re.compile(r"^pg_lossless_\d+_\d+m_profile$")
# (table, field) → severity; field "*" = every field of the table.
SEVERITY: dict[tuple[str, str], str] = {
    ("SCHEDULER", "*"): "warning",
    ("WRED_PROFILE", "*"): "warning",
    ("PFC_WD", "*"): "warning",
    ("CABLE_LENGTH", "*"): "warning",
    ("PORT", "mtu"): "warning",
    ("PORT", "speed"): "warning",
    ("BUFFER_PROFILE", "*"): "error",
    ("BUFFER_POOL", "*"): "warning",
    ("BUFFER_PG", "profile"): "error",
    ("BUFFER_QUEUE", "profile"): "warning",
    ("QUEUE", "*"): "warning",
    ("PORT_QOS_MAP", "*"): "warning",
    ("PORT_QOS_MAP", "pfc_enable"): "error",
    ("DEVICE_METADATA", "*"): "warning",
    ("LOSSLESS_TRAFFIC_PATTERN", "*"): "warning",
    ("pg_profile_lookup.ini", "*"): "warning",
}
_SKIP_FIELDS = {
    "PORT_QOS_MAP": set(),
    "WRED_PROFILE": {"ecn", "wred_green_enable"},
    "DEVICE_METADATA": None,  # only the fields below
}
_METADATA_FIELDS = ("buffer_model", "default_pfcwd_status")


def _flatten(d: Device) -> dict[tuple[str, str, str], str]:
    """(table, entity, field) → value; entity ``port|suffix`` keys are split per port."""
    out: dict[tuple[str, str, str], str] = {}
    for name, f in d.table("SCHEDULER").items():
        for k, v in f.items():
            out[("SCHEDULER", name, k)] = v
    for name, f in d.table("WRED_PROFILE").items():
        for k, v in f.items():
            if k not in _SKIP_FIELDS["WRED_PROFILE"]:
                out[("WRED_PROFILE", name, k)] = v
    for port, f in d.table("PFC_WD").items():
        for k, v in f.items():
            out[("PFC_WD", port, k)] = v
    for key, f in d.table("CABLE_LENGTH").items():
        for port, v in f.items():
            out[("CABLE_LENGTH", port, key)] = v
    for port, f in d.table("PORT").items():
        for k in ("mtu", "speed"):
            if k in f:
                out[("PORT", port, k)] = f[k]
    for name, f in d.table("BUFFER_PROFILE").items():
        if _PG_LOSSLESS.match(name):
            continue  # pfc-threshold-mismatch
        for k, v in f.items():
            out[("BUFFER_PROFILE", name, k)] = v
    for name, f in d.table("BUFFER_POOL").items():
        if name == "ingress_lossless_pool":
            continue  # pfc-threshold-mismatch
        for k, v in f.items():
            out[("BUFFER_POOL", name, k)] = v
    for table in ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE"):
        for (port, idx), (_key, f) in d._indexed(table).items():
            for k, v in f.items():
                out[(table, f"{port}|{idx}", k)] = v
    for port, f in d.qos_ports().items():
        for k, v in f.items():
            if k not in _SKIP_FIELDS["PORT_QOS_MAP"]:
                out[("PORT_QOS_MAP", port, k)] = v
    for k in _METADATA_FIELDS:
        if k in d.metadata:
            out[("DEVICE_METADATA", "localhost", k)] = d.metadata[k]
    for key, f in d.table("LOSSLESS_TRAFFIC_PATTERN").items():
        for k, v in f.items():
            out[("LOSSLESS_TRAFFIC_PATTERN", key, k)] = v
    if d.lookup is not None:
        for (speed, cable), row in d.lookup.rows.items():
            out[("pg_profile_lookup.ini", f"{speed} {cable}", "row")] = (
                f"size {row.size_bytes} xon {row.xon_bytes} xoff {row.xoff_bytes} threshold {row.threshold}"
            )
    return out


def _tables_present(d: Device) -> set[str]:
    t = {name for name in d.tables if d.tables[name]}
    if d.lookup is not None:
        t.add("pg_profile_lookup.ini")
    if d.metadata:
        t.add("DEVICE_METADATA")
    if d.qos_ports():
        t.add("PORT_QOS_MAP")
    return t


def _severity(table: str, fld: str) -> str:
    return SEVERITY.get((table, fld)) or SEVERITY.get((table, "*"), "warning")


_ABSENT = "<absent>"


def _split_entity(table: str, entity: str) -> tuple[str | None, str]:
    """Per-port entities → (port, suffix) so that ports can be grouped; others → (None, entity)."""
    if table in ("PFC_WD", "CABLE_LENGTH", "PORT", "PORT_QOS_MAP"):
        if entity == "GLOBAL":
            return None, entity
        return entity, ""
    if table in ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE") and "|" in entity:
        port, idx = entity.rsplit("|", 1)
        return port, idx
    return None, entity


def rule_fleet_inconsistent(fab: Fabric) -> list[Finding]:
    out: list[Finding] = []
    for role, devs in fab.by_role().items():
        if len(devs) < 2:
            continue
        flat = {d.name: _flatten(d) for d in devs}
        present = {d.name: _tables_present(d) for d in devs}
        keys = sorted({k for f in flat.values() for k in f})
        # per device: (table, suffix, field, mine, ref, tie, n_ref) → entities
        groups: dict[str, dict[tuple, list[str]]] = {d.name: defaultdict(list) for d in devs}
        for key in keys:
            table = key[0]
            have = {n: flat[n].get(key, _ABSENT) for n in flat if table in present[n]}
            if len(have) < 2 or len(set(have.values())) == 1:
                continue
            counts = Counter(have.values())
            top = max(counts.values())
            tops = [v for v, c in counts.items() if c == top]
            ref = next(have[n] for n in sorted(have) if have[n] in tops)
            tie = len(tops) > 1
            for n, v in have.items():
                if v == ref:
                    continue
                port, suffix = _split_entity(table, key[1])
                entity = port if port is not None else key[1]
                gkey = (
                    table,
                    suffix if port is not None else key[1],
                    key[2],
                    v,
                    ref,
                    tie,
                    top,
                    port is not None,
                )
                groups[n][gkey].append(entity)
        for d in devs:
            for (table, suffix, fld, mine, ref, tie, n_ref, per_port), ents in sorted(groups[d.name].items()):
                if per_port:
                    ents = sorted(set(ents), key=_port_order)
                    obj = f"{table}|{_ports_key(ents)}" + (f"|{suffix}" if suffix else "")
                    where = f" on {len(ents)} port(s)"
                else:
                    obj = f"{table}|{suffix}"
                    where = ""
                if table == "CABLE_LENGTH":
                    obj = f"CABLE_LENGTH|{fld}"
                    fld_txt = "cable length"
                else:
                    fld_txt = fld
                sev = _severity(table, fld)
                ref_skus = {x.hwsku for x in devs if x.name != d.name}
                if sev == "error" and d.hwsku and d.hwsku not in ref_skus:
                    sev = "warning"
                basis = (
                    "tie: no majority, the alphabetically first switch's value is the reference"
                    if tie
                    else f"{n_ref} of {len(devs)} {role} switches"
                )
                shown = f'"{mine}" (PFC off)' if fld == "pfc_enable" and not mine else mine
                out.append(
                    Finding(
                        "fleet-inconsistent",
                        sev,
                        d.name,
                        obj,
                        f"{fld_txt} {shown}{where} differs from the other {role} switches ({ref})",
                        {
                            "field": fld,
                            "value": mine,
                            "majority_value": ref,
                            "majority": basis,
                            "role": role,
                            **({"ports": _ports_key(ents)} if per_port else {}),
                        },
                        f"set {fld} to {ref} as on the other {role} switches"
                        if ref != _ABSENT
                        else f"remove {fld} here: the other {role} switches do not set it",
                    )
                )
    return out
