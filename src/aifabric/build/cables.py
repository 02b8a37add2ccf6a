"""The cable plan of a planned fabric: every link with both ends (device, port, cage), its rail,
plane and tier, its cable and transceiver parts from the BOM and its length from the layout.

The topology is :func:`aifabric.topology.rail_optimized` at the plan's sizing (the same wiring the
flow model runs); devices are renamed by :mod:`aifabric.build.names`. Ports: each switch's links
to the tier below take its first ports (hosts in server order, leaves in leaf order), its uplinks
the next ones. The BOM is the truth for parts and counts: each link class uses the plan's media
(``FabricPlan.media``); links share a cable when the BOM's cable carries several (a 2 × 400G
cable into one switch cage); :func:`check_against_bom` compares the plan's cables and transceivers
with the BOM's lines and lists every conflict (a straight multi-link cable whose links end in
different cages, a run longer than the part reaches).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from aifabric.build import names
from aifabric.build.layout import Layout, layout_inputs, place
from aifabric.errors import InputError

_SW = re.compile(r"^(?:p(\d+)-)?(?:su(\d+)-rail(\d+)|spine(\d+)|pod(\d+)-spine(\d+)|core(\d+)|sw0)$")
_HOST = re.compile(r"^n(\d+)-g(\d+)$")
LANE_GEN = {25: "EDR", 50: "HDR", 100: "NDR", 200: "XDR"}
TIER_ROLE = {1: "leaf", 2: "spine", 3: "core"}


@dataclass
class BuiltFabric:
    """The cable plan of one planned fabric and what it was made from."""

    plan: object  # FabricPlan
    links: list[dict]
    devices: dict[str, dict]
    layout: Layout
    ports_per_cage: int
    conflicts: list[str]
    checks: dict


def check_buildable(fp) -> None:
    """Refuse the plan options the cable plan does not model yet (one line, exit 2)."""
    for flag, on in (
        ("--rail-only", fp.rail_only),
        ("--dual-tor", fp.dual_tor),
        ("--spine-spares", bool(fp.spine_spares)),
    ):
        if on:
            raise InputError(
                "the build artefacts cover rail-optimised designs without this option",
                field="--build",
                value=flag,
                allowed="plan without " + flag,
            )


def _switch_name(topo_name: str, planes: int, design) -> tuple[str, dict]:
    m = _SW.match(topo_name)
    if not m:
        raise ValueError(f"unexpected switch name {topo_name!r} from the topology builder")
    p, su, rail, sp, pod, psp, co = m.groups()
    plane = int(p or 0)
    if su is not None:
        return names.leaf(plane, planes, int(su), int(rail)), {"su": int(su), "rail": int(rail)}
    if sp is not None:
        return names.spine(plane, planes, int(sp)), {}
    if psp is not None:
        return names.spine(plane, planes, int(psp), int(pod)), {"pod": int(pod)}
    if co is not None:
        return names.core(plane, planes, int(co)), {}
    return names.leaf(plane, planes, None, None), {}


def _device_names(topo, fp) -> tuple[list[str], list[str], dict[str, dict]]:
    """Per topology node: the device name and port-on-device of hosts (NIC), and device info."""
    d = fp.design
    dev, nic, info = [], [], {}
    for i, nm in enumerate(topo.node_names):
        tier = int(topo.node_tier[i])
        if tier == 0:
            m = _HOST.match(nm)
            node, rail = int(m.group(1)), int(m.group(2))
            dev.append(names.server(node, d.nodes))
            nic.append(str(rail))
            info.setdefault(
                dev[-1],
                {
                    "role": "server",
                    "tier": 0,
                    "node": node,
                    "su": node // d.nodes_per_su if d.tiers > 1 else 0,
                },
            )
        else:
            name, extra = _switch_name(nm, fp.planes, d)
            dev.append(name)
            nic.append("")
            info[name] = {"role": TIER_ROLE[tier], "tier": tier, "plane": int(topo.node_plane[i]), **extra}
    return dev, nic, info


def _speed(fp, switch) -> tuple[int, str]:
    """(lanes, IB speed word) of a link: NDR 4x = 400G, a 200G port on an NDR switch is 2xNDR."""
    lane = max(switch.lane_rates_gbps or (100,))
    if fp.technology != "infiniband":
        return int(round(fp.link_rate_gbps / lane)), ""
    return max(1, int(round(fp.link_rate_gbps / lane))), LANE_GEN.get(int(lane), "")


def build_cable_plan(fp, catalog, layout_overrides: dict | None = None) -> BuiltFabric:
    """The cable plan, port assignment and layout of ``fp`` (a FabricPlan)."""
    from aifabric.design.cost import switch_cage
    from aifabric.topology import rail_optimized

    check_buildable(fp)
    d = fp.design
    gpu = catalog.get("gpu", fp.gpu)
    switch = catalog.switches[fp.switch_id]
    topo = rail_optimized(
        d.gpus, int(fp.link_rate_gbps * 1e9), d.gpus_per_node, d.radix, d.oversubscription, d.planes
    )
    dev, nic, info = _device_names(topo, fp)
    per_cage = switch_cage(switch, fp.link_rate_gbps, fp.radix).ports
    lanes, gen = _speed(fp, switch)
    tier = topo.node_tier
    la, lb = topo.link_a.astype(np.int64), topo.link_b.astype(np.int64)
    # ports: links to the tier below first (lower end in node order), then uplinks
    next_port: dict[int, int] = {}
    port_of: dict[tuple[int, int], int] = {}  # (link, node) → 0-based port on that switch
    down = sorted(range(len(la)), key=lambda i: (int(lb[i]), int(la[i]), i))
    for i in down:
        sw = int(lb[i])
        port_of[(i, sw)] = next_port.get(sw, 0)
        next_port[sw] = port_of[(i, sw)] + 1
    # uplinks grouped by the switch above, so links to one switch fill a cage together
    for i in sorted(range(len(la)), key=lambda i: (int(la[i]), int(lb[i]), i)):
        sw = int(la[i])
        if tier[sw] > 0:
            port_of[(i, sw)] = next_port.get(sw, 0)
            next_port[sw] = port_of[(i, sw)] + 1
    over = [dev[s] for s, n in next_port.items() if n > fp.radix]
    if over:
        raise ValueError(f"switch {over[0]} needs more than {fp.radix} ports")
    servers = sorted({dev[h] for h in topo.hosts.tolist()}, key=lambda s: info[s]["node"])
    leaves_by_su: dict[int, list[str]] = {}
    upper = []
    for name, x in info.items():
        if x["role"] == "leaf":
            leaves_by_su.setdefault(x.get("su", 0), []).append(name)
        elif x["role"] in ("spine", "core"):
            upper.append(name)
    spr = int(gpu.scale_up_gpus // d.gpus_per_node) if (gpu.scale_up_gpus or 0) > d.gpus_per_node else 4
    lay = place(servers, d.nodes_per_su, leaves_by_su, upper, layout_inputs(layout_overrides, spr))
    links = []
    for i in range(len(la)):
        a, b = int(la[i]), int(lb[i])
        cls = f"{topo.tier_name(int(tier[a]))}-{topo.tier_name(int(tier[b]))}"
        plane = int(topo.node_plane[b])
        if tier[a] == 0:
            rail = int(nic[a])
            a_port = names.host_port(rail, plane, fp.planes)
            a_idx = rail * fp.planes + plane  # NIC port index within the server
        else:
            rail = info[dev[a]].get("rail", -1)
            a_idx = port_of[(i, a)]
            a_port = names.switch_port(fp.technology, a_idx, per_cage)
        b_idx = port_of[(i, b)]
        route = lay.route(dev[a], dev[b])
        links.append(
            {
                "a_device": dev[a],
                "a_port": a_port,
                "a_index": a_idx,
                "b_device": dev[b],
                "b_port": names.switch_port(fp.technology, b_idx, per_cage),
                "b_index": b_idx,
                "b_cage": names.cage_of(b_idx, per_cage),
                "link_class": cls,
                "tier": int(tier[b]),
                "rail": int(rail),
                "plane": plane,
                "rate_gbps": fp.link_rate_gbps,
                "lanes": lanes,
                "speed": gen,
                **{k: route[k] for k in ("length_m", "ordered_m", "vertical_m", "horizontal_m", "slack_m")},
                "a_rack": route["a_rack"],
                "b_rack": route["b_rack"],
            }
        )
    from aifabric.build.parts import assign_parts

    conflicts, checks = assign_parts(fp, catalog, links, per_cage)
    for x in info.values():
        x.setdefault("plane", -1)
    return BuiltFabric(fp, links, info, lay, per_cage, conflicts, checks)
