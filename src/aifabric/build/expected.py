"""Expected neighbours of a built fabric, in the formats the fabric reports itself in.

* InfiniBand: an ``ibnetdiscover``-format file (rdma-core infiniband-diags; format notes in the
  project's formats reference §2.4): a ``Switch`` block per switch and a ``Ca`` block per NIC, each
  port line naming its peer and ``<width><speed>`` (``4xNDR``). NodeDescriptions are the plan's
  names (``leaf-su01-r0``; CAs ``node001 mlx5_0`` as DGX systems describe theirs). The GUIDs are
  placeholders made from the names (a real fabric's differ): ``verify-build`` matches by
  description, or by GUID through a mapping file.
* Ethernet: LLDP neighbours as ``lldpctl -f json`` prints them (lldpd), one object per device:
  ``{"<device>": {"lldp": {"interface": [{"<local port>": {"chassis": {"<peer>": {...}},
  "port": {"id": {"type": "ifname", "value": "<peer port>"}}}}]}}}``; collected the same way from a
  running fabric it is what ``verify-build --lldp`` reads.
"""

from __future__ import annotations

import hashlib


def placeholder_guid(name: str) -> str:
    """16 hex digits derived from a name (stable across runs)."""
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def _ib_ends(links: list[dict]):
    """Per (device, port): (peer device, peer port, width-speed), from both ends of each link."""
    ends: dict[str, dict] = {}
    for x in links:
        ws = f"{x['lanes']}x{x['speed']}"
        a_port, b_port = x["a_port"], x["b_port"]
        ends.setdefault(x["a_device"], {})[a_port] = (x["b_device"], b_port, ws)
        ends.setdefault(x["b_device"], {})[b_port] = (x["a_device"], a_port, ws)
    return ends


def _ca_split(port: str) -> tuple[str, int]:
    hca, _, p = port.partition("/")
    return hca, int(p) if p else 1


def ibnetdiscover_text(built) -> str:
    """The expected fabric as ``ibnetdiscover`` output."""
    devices = built.devices
    ends = _ib_ends(built.links)

    def node_id(device: str, port: str) -> tuple[str, str, int]:
        """(ibnetdiscover id, description, port number) of one end."""
        if devices.get(device, {}).get("role") == "server":
            hca, p = _ca_split(port)
            desc = f"{device} {hca}"
            return f"H-{placeholder_guid(desc)}", desc, p
        return f"S-{placeholder_guid(device)}", device, int(port)

    out = [
        "#",
        f"# Topology file: expected fabric written by aifabric plan --build ({built.plan.gpus} GPUs)",
        "# GUIDs are placeholders derived from the names; NodeDescriptions are the plan's names.",
        "#",
        "",
    ]
    radix = built.plan.radix
    cas: dict[str, dict[int, tuple]] = {}
    for device in sorted(ends, key=lambda s: (devices[s]["tier"] == 0, -devices[s]["tier"], s)):
        if devices[device]["role"] == "server":
            for port, peer in ends[device].items():
                hca, p = _ca_split(port)
                cas.setdefault(f"{device} {hca}", {})[p] = peer
            continue
        guid = placeholder_guid(device)
        out += [
            "vendid=0x2c9",
            f"switchguid=0x{guid}({guid})",
            f'Switch\t{radix} "S-{guid}"\t\t# "{device}" enhanced port 0 lid 0 lmc 0',
        ]
        for port in sorted(ends[device], key=int):
            peer_dev, peer_port, ws = ends[device][port]
            pid, pdesc, pport = node_id(peer_dev, peer_port)
            pguid = f"({pid[2:]})" if pid.startswith("H-") else ""
            out.append(f'[{port}]\t"{pid}"[{pport}]{pguid}\t\t# "{pdesc}" lid 0 {ws}')
        out.append("")
    for desc, ports in cas.items():
        guid = placeholder_guid(desc)
        out += ["vendid=0x2c9", f"caguid=0x{guid}", f'Ca\t{max(ports)} "H-{guid}"\t\t# "{desc}"']
        for p in sorted(ports):
            peer_dev, peer_port, ws = ports[p]
            pid, pdesc, pport = node_id(peer_dev, peer_port)
            out.append(f'[{p}]({guid})\t"{pid}"[{pport}]\t\t# lid 0 lmc 0 "{pdesc}" lid 0 {ws}')
        out.append("")
    return "\n".join(out)


def lldp_json(built) -> dict:
    """Expected LLDP neighbours of every device, ``lldpctl -f json`` shaped."""
    per: dict[str, list] = {}
    for x in built.links:
        for me, my_port, peer, peer_port in (
            (x["a_device"], x["a_port"], x["b_device"], x["b_port"]),
            (x["b_device"], x["b_port"], x["a_device"], x["a_port"]),
        ):
            per.setdefault(me, []).append(
                {
                    my_port: {
                        "chassis": {peer: {"id": {"type": "local", "value": peer}}},
                        "port": {
                            "id": {"type": "ifname", "value": peer_port},
                            "descr": f"{x['rate_gbps']:g}G {x['link_class']} cable {x['cable_id']}",
                        },
                    }
                }
            )
    return {dev: {"lldp": {"interface": ifs}} for dev, ifs in sorted(per.items())}
