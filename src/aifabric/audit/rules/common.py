"""Helpers shared by the rule families: port keys, majorities over switches, lossless PG profiles."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from aifabric.audit.sonic import Device

_PG_NAME = re.compile(r"^pg_lossless_(\d+)_(\d+m)_profile$")


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


def _csv(v) -> str:
    return ",".join(map(str, v))
