"""PFC headroom and buffer rules: headroom against the physical floor, the SONiC formula and the
SKU table; stale profiles, pg_profile_lookup.ini rows, cable lengths; buffer pools."""

from __future__ import annotations

from collections import defaultdict

from aifabric.audit import headroom as hr
from aifabric.audit.rules.common import _PG_NAME, _group, _int, _lossless_pg_profiles, _port_order, _ports_key
from aifabric.audit.rules.model import Fabric, Finding
from aifabric.pfc import sonic_headroom_bytes


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
