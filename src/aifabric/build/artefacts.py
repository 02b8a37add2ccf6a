"""Write the build artefacts of planned fabrics into a folder (``plan --build DIR``).

One fabric: the files go in DIR; several: one sub-folder per design label. Per fabric:

* ``build.json`` — the plan (``plan --json``'s fabric object), devices, checks against the BOM,
  conflicts, the file list; ``verify-build`` reads it with ``cables.json``.
* ``cables.csv`` / ``cables.json`` — one row per link: cable id, both ends (device, port, cage,
  transceiver), rail, plane, tier, rate, media, part, run length and order length, racks.
* ``ports/<switch>.csv`` — each switch's port map.
* ``layout.json``, ``floorplan.svg``, ``elevations.svg`` — the layout the lengths come from.
* ``expected.ibnetdiscover`` (InfiniBand) or ``expected-lldp.json`` (Ethernet).
* ``slurm/topology.conf`` (tree plugin), ``slurm/topology-block.conf`` (NVLink domains larger
  than a server), ``k8s/node-labels.json`` and ``k8s/label-nodes.sh``.
* ``NAMING.md`` — the naming convention.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from aifabric.build import expected, names, scheduler, svg
from aifabric.errors import InputError

CABLE_COLUMNS = [
    "cable_id",
    "a_device",
    "a_port",
    "a_cage",
    "a_optic",
    "b_device",
    "b_port",
    "b_cage",
    "b_optic",
    "link_class",
    "tier",
    "rail",
    "plane",
    "rate_gbps",
    "lanes",
    "speed",
    "media",
    "cable_part",
    "cable_name",
    "links_per_cable",
    "length_m",
    "ordered_m",
    "vertical_m",
    "horizontal_m",
    "slack_m",
    "a_rack",
    "b_rack",
]
PORT_COLUMNS = [
    "port",
    "cage",
    "peer_device",
    "peer_port",
    "cable_id",
    "link_class",
    "rail",
    "plane",
    "rate_gbps",
    "optic",
    "cable_part",
    "ordered_m",
]


def _csv(rows: list[dict], cols: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def port_maps(built) -> dict[str, list[dict]]:
    """Switch name → its ports in order, each with the peer at the other end."""
    out: dict[str, list[dict]] = {}
    for x in built.links:
        common = {
            k: x[k]
            for k in ("cable_id", "link_class", "rail", "plane", "rate_gbps", "cable_part", "ordered_m")
        }
        out.setdefault(x["b_device"], []).append(
            {
                "port": x["b_port"],
                "cage": x["b_cage"],
                "peer_device": x["a_device"],
                "peer_port": x["a_port"],
                "optic": x["b_optic"],
                "_i": x["b_index"],
                **common,
            }
        )
        if built.devices[x["a_device"]]["role"] != "server":
            out.setdefault(x["a_device"], []).append(
                {
                    "port": x["a_port"],
                    "cage": x["a_cage"],
                    "peer_device": x["b_device"],
                    "peer_port": x["b_port"],
                    "optic": x["a_optic"],
                    "_i": x["a_index"],
                    **common,
                }
            )
    return {k: sorted(v, key=lambda r: r["_i"]) for k, v in sorted(out.items())}


def _naming_md() -> str:
    return "# Naming convention\n\n" + (names.__doc__ or "").strip() + "\n"


def write_fabric(folder: Path, built, catalog) -> dict:
    """Write one fabric's artefacts into ``folder``; return its manifest (``build.json``)."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}

    def put(rel: str, text: str) -> None:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files[rel] = text

    fp = built.plan
    title = f"{fp.technology} {fp.gpus} × {fp.gpu} ({fp.to_dict()['design_label']})"
    links = [{k: x.get(k) for k in CABLE_COLUMNS} for x in built.links]
    put("cables.csv", _csv(links, CABLE_COLUMNS))
    put("cables.json", json.dumps({"links": links}, indent=1))
    for sw, rows in port_maps(built).items():
        put(f"ports/{sw}.csv", _csv(rows, PORT_COLUMNS))
    put("layout.json", json.dumps(built.layout.to_dict(), indent=1))
    put("floorplan.svg", svg.floorplan_svg(built.layout, title))
    put("elevations.svg", svg.elevations_svg(built.layout, title))
    if fp.technology == "infiniband":
        put("expected.ibnetdiscover", expected.ibnetdiscover_text(built))
    else:
        put("expected-lldp.json", json.dumps(expected.lldp_json(built), indent=1))
    put("slurm/topology.conf", scheduler.slurm_tree(built))
    domains = scheduler.nvlink_domains(built, catalog)
    if domains:
        per = max(len(v) for v in domains.values())
        put("slurm/topology-block.conf", scheduler.slurm_block(domains, per))
    labels = scheduler.k8s_labels(built, domains)
    put("k8s/node-labels.json", json.dumps(labels, indent=1))
    put("k8s/label-nodes.sh", scheduler.k8s_script(labels))
    put("NAMING.md", _naming_md())
    manifest = {
        "format": "aifabric-build/1",
        "technology": fp.technology,
        "design_label": fp.to_dict()["design_label"],
        "plan": fp.to_dict(),
        "devices": built.devices,
        "checks": built.checks,
        "conflicts": built.conflicts,
        "counts": {
            "links": len(built.links),
            "cables": len({x["cable_id"] for x in built.links}),
            "switches": sum(1 for x in built.devices.values() if x["role"] != "server"),
            "servers": sum(1 for x in built.devices.values() if x["role"] == "server"),
            "racks": len(built.layout.racks),
        },
        "files": sorted(files) + ["build.json"],
    }
    (folder / "build.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def write_build(folder: Path, builts: list, catalog) -> list[dict]:
    """Write every fabric (one: into ``folder``; several: a sub-folder per design label)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError("not a folder", field="--build", value=str(folder))
    if folder.is_dir() and any(folder.iterdir()):
        raise InputError(
            "folder is not empty", field="--build", value=str(folder), allowed="a new or empty folder"
        )
    out = []
    for b in builts:
        sub = folder if len(builts) == 1 else folder / b.plan.to_dict()["design_label"]
        out.append({"folder": str(sub), **write_fabric(sub, b, catalog)})
    return out
