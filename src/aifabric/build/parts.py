"""Cables and transceivers of the cable plan, from the plan's BOM media, checked against the BOM.

Per link class the plan's :class:`~aifabric.design.cost.Media` names the cable (and, for fibre,
the transceiver at each end). A copper or AOC cable that carries ``k`` links takes ``k``
consecutive ports of one switch cage; a straight one (one far plug) also needs its links to end in
one far cage, a splitter (``k`` far plugs) does not. A transceiver takes the ports of one cage
(``links_per_switch_optic`` at a switch, ``links_per_far_optic`` at a server cage). The counts
are then compared with the BOM line by line; every difference and every run longer than its part
reaches is a conflict.
"""

from __future__ import annotations

from aifabric.build.layout import ordered_length_m


def _reach_m(catalog, media) -> float:
    cable = catalog.cables[media.cable_id]
    reach = [cable.max_reach_m or float("inf")]
    for o in (media.switch_optic, media.nic_optic):
        if o:
            reach.append(catalog.optics[o].reach_m)
    return min(reach)


def _server_cage_ports(catalog, fp) -> int:
    from aifabric.design.cost import server_cage

    return server_cage(catalog.nics[fp.nic_id], fp.server_cages).ports


def assign_parts(fp, catalog, links: list[dict], per_cage: int) -> tuple[list[str], dict]:
    """Fill each link's cable id, parts and far-cage numbers in place; return (conflicts, checks)."""
    conflicts: list[str] = []
    server_ports = _server_cage_ports(catalog, fp)
    n_cable = 0
    modules: dict[str, set] = {}
    for cls, media in fp.media.items():
        rows = [x for x in links if x["link_class"] == cls]
        cable = catalog.cables[media.cable_id]
        host = cls.startswith("host-")
        k = max(1, int(media.links_per_cable))
        groups: dict[tuple, list[dict]] = {}
        for x in rows:
            x["a_cage"] = x["a_index"] // server_ports + 1 if host else x["a_index"] // max(1, per_cage) + 1
            key = (x["b_device"], x["b_index"] // k) if k > 1 else (id(x),)
            groups.setdefault(key, []).append(x)
        straight = (cable.ports or 1) == 1
        for group in groups.values():
            n_cable += 1
            cid = f"C{n_cable:05d}"
            far = {(x["a_device"], x["a_cage"]) for x in group}
            if k > 1 and straight and len(far) > 1:
                ends = ", ".join(f"{x['a_device']}:{x['a_port']}" for x in group)
                conflicts.append(
                    f"cable {cid} ({cable.id}, straight, {k} links) from {group[0]['b_device']} cage "
                    f"{group[0]['b_cage']} would need one far cage but its links go to {ends}: "
                    "rail-optimised wiring needs a splitter or one cable per link"
                )
            for x in group:
                x.update(
                    cable_id=cid,
                    media=media.kind,
                    cable_part=cable.id,
                    cable_name=cable.name,
                    links_per_cable=k,
                    b_optic=media.switch_optic or "",
                    a_optic=(media.nic_optic if host else media.switch_optic) or "",
                )
        if media.switch_optic:
            lps, lpf = int(media.links_per_switch_optic), int(media.links_per_far_optic)
            at_leaf = "host-leaf @leaf" if host else cls
            far = (
                ("host-leaf @server" if fp.server_cages == "twin-port" else "host-leaf @NIC") if host else cls
            )
            for x in rows:
                modules.setdefault(at_leaf, set()).add((x["b_device"], x["b_index"] // lps))
                if host:
                    modules.setdefault(far, set()).add((x["a_device"], x["a_index"] // lpf))
                else:
                    modules.setdefault(far, set()).add((x["a_device"], x["a_index"] // lps))
        reach = _reach_m(catalog, media)
        longest = max((x["ordered_m"] for x in rows), default=0.0)
        for x in rows:
            if x["ordered_m"] > reach:
                conflicts.append(
                    f"{x['a_device']}:{x['a_port']} – {x['b_device']}:{x['b_port']} needs "
                    f"{x['ordered_m']:g} m but {cable.id} reaches {reach:g} m"
                )
        if longest > fp.lengths_m[cls]:
            conflicts.append(
                f"{cls}: the layout needs runs up to {longest:g} m but the BOM priced {fp.lengths_m[cls]:g} m "
                f"(plan with --lengths or let --build size the lengths)"
            )
    return conflicts, _bom_checks(fp, links, modules, conflicts)


def _bom_checks(fp, links: list[dict], modules: dict[str, set], conflicts: list[str]) -> dict:
    """Cables and transceivers of the plan against the BOM's lines (``where`` by ``where``)."""
    bom_cables: dict[str, int] = {}
    bom_optics: dict[str, int] = {}
    for line in fp.bom.lines:
        if line.category == "cable":
            bom_cables[line.where] = bom_cables.get(line.where, 0) + line.count
        elif line.category == "transceiver":
            bom_optics[line.where] = bom_optics.get(line.where, 0) + line.count
    plan_cables: dict[str, set] = {}
    for x in links:
        plan_cables.setdefault(x["link_class"], set()).add(x["cable_id"])
    cables = {
        cls: {"plan": len(plan_cables.get(cls, ())), "bom": bom_cables.get(cls, 0)}
        for cls in sorted(set(plan_cables) | set(bom_cables))
    }
    optics = {
        w: {"plan": len(modules.get(w, ())), "bom": bom_optics.get(w, 0)}
        for w in sorted(set(modules) | set(bom_optics))
    }
    for what, table in (("cables", cables), ("transceivers", optics)):
        for w, v in table.items():
            if v["plan"] != v["bom"]:
                conflicts.append(f"{what} at {w}: the cable plan has {v['plan']}, the BOM {v['bom']}")
    lengths = {}
    for cls in fp.media:
        rows = [x["length_m"] for x in links if x["link_class"] == cls]
        lengths[cls] = {
            "bom_length_m": fp.lengths_m[cls],
            "layout_min_m": round(min(rows), 2) if rows else None,
            "layout_max_m": round(max(rows), 2) if rows else None,
            "layout_max_ordered_m": ordered_length_m(max(rows)) if rows else None,
        }
    return {
        "cables": cables,
        "transceivers": optics,
        "lengths": lengths,
        "cables_match_bom": all(v["plan"] == v["bom"] for v in cables.values()),
        "transceivers_match_bom": all(v["plan"] == v["bom"] for v in optics.values()),
    }
