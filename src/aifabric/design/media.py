"""The assumptions behind a plan's host-link media, for the assumption register.

:func:`media_assumptions` lists, per fabric, the media its host links got from the one media table
(:func:`aifabric.design.cost.choose_media`) and the other kinds that would serve them, the
host-link length, the protocols of any single-protocol part in use and each host-link part's price.
"""

from __future__ import annotations

import dataclasses

from aifabric.design.cost import HOST_LINK_MEDIA, choose_media, server_cage, switch_cage
from aifabric.errors import InputError
from aifabric.hardware.catalog import price_basis, price_range_usd

# Assumptions this module introduces (for the assumption register)
# --------------------------------------------------------------------------------------------
#: default host-link length's source and the span a buyer's halls cover (ASSUMPTION for the span)
HOST_LENGTH_SOURCE = (
    "5 m server–leaf: hardware-facts 'Recommended defaults' (SONiC buffers_config.j2 role defaults, S9); "
    "span ASSUMPTION (no public source for a typical value): 2 m = the longest straight passive 800G DAC, "
    "in-rack leaf (P11, P39) to 30 m = OM3 multimode reach, end-of-row leaf (NVIDIA structured cabling "
    "requirements for NDR/400GbE)"
)


def _entry(name, value, unit, applies_to, source, kind, rng=None, alternatives=None) -> dict:
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "applies_to": sorted(applies_to),
        "source": source,
        "range": rng,
        "alternatives": alternatives,
        "kind": kind,
        "decides": False,
    }


def _host_alternatives(catalog, plan) -> list[str]:
    """The other host-link media kinds that would also serve ``plan``'s host links."""
    switch, nic = catalog.switches[plan.switch_id], catalog.nics[plan.nic_id]
    near = switch_cage(switch, plan.link_rate_gbps, plan.radix)
    host = server_cage(nic, plan.server_cages)
    legs = int(getattr(plan, "legs_per_nic", 1))
    host = dataclasses.replace(host, ports=host.ports * legs) if legs > 1 else host
    out = []
    for name, kinds in HOST_LINK_MEDIA.items():
        if kinds is None or plan.media["host-leaf"].kind in kinds:
            continue
        try:
            choose_media(
                catalog,
                plan.link_rate_gbps,
                plan.lengths_m["host-leaf"],
                plan.technology,
                True,
                "host-leaf",
                near_cage=near,
                far_cage=host,
                optics=plan.optics,
                kinds=kinds,
            )
        except InputError:
            continue
        out.append(name)
    return out


def media_assumptions(plans, catalog) -> list[dict]:
    """The assumptions behind the host-link media of ``plans`` (a ``{fabric key: FabricPlan}``
    mapping, or plans keyed by technology): which media each fabric's host links got and what
    else would serve them (``media.host_link``), the host-link length (``media.host_link_length_m``),
    the protocols of a single-protocol part in use (``media.protocols.<id>``) and the price of
    each host-link part (``media.price.<id>``). Dicts with ``name``, ``value``, ``unit``,
    ``applies_to``, ``source``, ``range``, ``alternatives``, ``kind`` (price | physics |
    deployment | probability) and ``decides`` (False: the assumption register decides)."""
    items = plans.items() if hasattr(plans, "items") else ((p.technology, p) for p in plans)
    out: list[dict] = []
    lengths: dict[float, list[str]] = {}
    parts: dict[tuple[str, str, float], list[str]] = {}  # (kind, id, host length) → fabrics
    for key, plan in items:
        m = plan.media["host-leaf"]
        setting = getattr(plan, "host_link_media", "auto")
        rule = "imposed by --host-link-media" if setting != "auto" else "the cheapest part that reaches"
        used = [x for x in (m.cable_id, m.switch_optic, m.nic_optic) if x]
        out.append(
            _entry(
                "media.host_link",
                m.kind,
                None,
                [key],
                f"{rule} {m.length_m:g} m from one media table for both protocols "
                f"(aifabric.design.cost.choose_media); parts: {', '.join(dict.fromkeys(used))}",
                "deployment",
                alternatives=_host_alternatives(catalog, plan) or None,
            )
        )
        lengths.setdefault(float(plan.lengths_m["host-leaf"]), []).append(key)
        for pid in used:
            kind = "cable" if pid == m.cable_id else "optic"
            parts.setdefault((kind, pid, float(m.length_m)), []).append(key)
    for length, keys in lengths.items():
        out.append(
            _entry(
                "media.host_link_length_m", length, "m", keys, HOST_LENGTH_SOURCE, "deployment", [2.0, 30.0]
            )
        )
    for (kind, pid, length), keys in parts.items():
        rec = catalog.get(kind, pid)
        per_m = float(getattr(rec, "price_usd_per_m", 0.0) or 0.0) * length  # fibre: + USD/m × length
        if rec.technology != "any":
            src = f"{rec.technology_basis or ''} [{rec.technology_source or rec.source}]".strip()
            out.append(
                _entry(
                    f"media.protocols.{pid}",
                    [rec.technology],
                    None,
                    keys,
                    src,
                    "deployment",
                    alternatives=[["infiniband", "ethernet"]],
                )
            )
        low, high = price_range_usd(rec)
        out.append(
            _entry(
                f"media.price.{pid}",
                round(float(rec.price_usd) + per_m, 2),
                "USD",
                keys,
                price_basis(rec) + (f" (+ {per_m:g} USD for {length:g} m)" if per_m else ""),
                "price",
                [round(low + per_m, 2), round(high + per_m, 2)] if low != high else None,
            )
        )
    return out
