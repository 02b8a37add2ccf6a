"""Which classes carry RoCE, read from the switch configs themselves.

A traffic class is *lossless* on a port when its priority is in ``PORT_QOS_MAP`` ``pfc_enable``
and its priority group is one of those priorities (buffermgrd gives headroom only to the PGs in
``pfc_enable``, formats.md §1.8). A DSCP is lossless on the port when the port's
``DSCP_TO_TC_MAP`` sends it to such a class. The DSCPs that are lossless on *every* lossless port
of a switch are the switch's RoCE DSCPs; those lossless on only some ports are listed apart
(SONiC's Azure T1 maps make DSCP 2 and 6 lossless on the downlinks only, by design).

Nothing here assumes what the NICs send: a NIC/switch disagreement is judged only when the NIC
side is stated (``--nic-dscp``, host configs).
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.audit.sonic import Device


def _int(v, default: int | None = None) -> int | None:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return default


def tc_of(dev: Device, port: str, dscp: int) -> tuple[str | None, int | None]:
    """(map name, TC) for ``dscp`` on ``port``; TC None when the port has no DSCP map."""
    name, m = dev.port_map(port, "dscp_to_tc_map", "DSCP_TO_TC_MAP")
    if m is None:
        return name, None
    return name, _int(m.get(str(dscp)), 0)  # an unmapped DSCP goes to TC 0 (SAI default)


def pg_of(dev: Device, port: str, tc: int) -> int:
    _, m = dev.port_map(port, "tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP")
    return tc if m is None else _int(m.get(str(tc)), 0)


def queue_of(dev: Device, port: str, tc: int) -> int:
    _, m = dev.port_map(port, "tc_to_queue_map", "TC_TO_QUEUE_MAP")
    return tc if m is None else _int(m.get(str(tc)), tc)


def dscp_lossless(dev: Device, port: str, dscp: int) -> bool | None:
    """Does ``dscp`` arriving on ``port`` land in a lossless class? None: the port has no DSCP map."""
    _, tc = tc_of(dev, port, dscp)
    if tc is None:
        return None
    prios = dev.lossless(port)
    return tc in prios and pg_of(dev, port, tc) in prios


def lossless_dscps(dev: Device, port: str) -> frozenset[int] | None:
    """The DSCPs lossless on ``port`` (None when it has no DSCP map)."""
    if dscp_lossless(dev, port, 0) is None:
        return None
    return frozenset(x for x in range(64) if dscp_lossless(dev, port, x))


@dataclass(frozen=True)
class RoceClasses:
    """The RoCE classes one switch's config implies."""

    device: str
    lossless_priorities: tuple[int, ...]  # union of pfc_enable over the ports
    dscps: tuple[int, ...]  # lossless on every lossless port with a DSCP map
    dscps_some_ports: tuple[int, ...]  # lossless on some lossless ports only
    tcs: tuple[int, ...]  # the TCs those DSCPs reach
    lossless_ports: int
    dscp_mapped_ports: int
    strict_dscps: tuple[int, ...] = ()  # DSCPs reaching a STRICT queue on every lossless port: CNP candidates
    strict_queues: tuple[int, ...] = ()
    headroom_pgs: tuple[int, ...] = ()  # PGs with a lossless (xoff > 0) BUFFER_PG profile on some port

    def to_dict(self) -> dict:
        return {
            "lossless_priorities": list(self.lossless_priorities),
            "dscps": list(self.dscps),
            "dscps_some_ports": list(self.dscps_some_ports),
            "tcs": list(self.tcs),
            "lossless_ports": self.lossless_ports,
            "cnp_candidate_dscps": list(self.strict_dscps),
            "strict_queues": list(self.strict_queues),
            "headroom_pgs": list(self.headroom_pgs),
        }

    def describe(self) -> str:
        if not self.lossless_ports:
            return "no lossless port"
        d = ",".join(map(str, self.dscps)) or "none"
        extra = f" (DSCP {','.join(map(str, self.dscps_some_ports))} on some ports only)"
        return (
            f"DSCP {d} → TC {','.join(map(str, self.tcs)) or '-'} lossless, PFC "
            f"{','.join(map(str, self.lossless_priorities))} on {self.lossless_ports} port(s)"
            + (extra if self.dscps_some_ports else "")
        )


def infer_classes(dev: Device) -> RoceClasses:
    lp = dev.lossless_ports()
    sets = [s for s in (lossless_dscps(dev, p) for p in lp) if s is not None]
    allp = frozenset.intersection(*sets) if sets else frozenset()
    anyp = frozenset.union(*sets) if sets else frozenset()
    tcs: set[int] = set()
    for p in lp:
        for x in allp:
            tc = tc_of(dev, p, x)[1]
            if tc is not None:
                tcs.add(tc)
    prios = sorted({x for v in lp.values() for x in v})
    strict, squeues = _strict(dev, list(lp))
    return RoceClasses(
        dev.name,
        tuple(prios),
        tuple(sorted(allp)),
        tuple(sorted(anyp - allp)),
        tuple(sorted(tcs)),
        len(lp),
        len(sets),
        strict,
        squeues,
        tuple(sorted({pg for (_p, pg) in headroom_pgs(dev)})),
    )


def _strict(dev: Device, ports: list[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """DSCPs that reach a STRICT-scheduled queue on every given port (where the CNP class usually
    is), and those queues."""
    qs = dev.queues()
    sched = dev.table("SCHEDULER")
    common: set[int] | None = None
    queues: set[int] = set()
    for p in ports:
        here = set()
        for x in range(64):
            tc = tc_of(dev, p, x)[1]
            if tc is None:
                return (), ()
            q = queue_of(dev, p, tc)
            s = qs.get((p, q), ("", {}))[1].get("scheduler")
            if s and sched.get(s, {}).get("type", "").upper() == "STRICT":
                here.add(x)
                queues.add(q)
        common = here if common is None else common & here
    return tuple(sorted(common or ())), tuple(sorted(queues))


def headroom_pgs(dev: Device) -> dict[tuple[str, int], str]:
    """(port, pg) → profile name, for BUFFER_PG entries whose profile has xoff > 0 (lossless headroom)."""
    out = {}
    for (port, pg), (_key, f) in dev.buffer_pg().items():
        prof = dev.profile(f.get("profile"))
        if prof is not None and (_int(prof.get("xoff"), 0) or 0) > 0:
            out[(port, pg)] = f.get("profile", "")
    return out
