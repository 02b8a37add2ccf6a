"""PFC threshold rule: xon/xoff/size/dynamic_th of one speed and cable across the switches of a role."""

from __future__ import annotations

from collections import Counter, defaultdict

from aifabric.audit import headroom as hr
from aifabric.audit.rules.common import _PG_NAME, _int, _is_tie, _lossless_pg_profiles, _majority
from aifabric.audit.rules.model import Fabric, Finding
from aifabric.audit.sonic import Device

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
