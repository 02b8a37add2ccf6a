"""plan --build: the cable plan, its BOM checks, layout-justified lengths, expected neighbours,
Slurm topology and Kubernetes labels (issue 29)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from aifabric.build import names
from aifabric.build.cables import build_cable_plan
from aifabric.build.layout import U_M, ordered_length_m
from aifabric.cli import run
from aifabric.design.plan import plan
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog


@pytest.fixture(scope="module")
def cat():
    return load_catalog(None)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """`plan --gpus 1024 --build DIR` for both technologies (default designs)."""
    out = tmp_path_factory.mktemp("build") / "b"
    assert run(["plan", "--gpus", "1024", "--json", "--build", str(out)]) == 0
    return {json.loads((p / "build.json").read_text())["technology"]: p for p in out.iterdir()}


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "build.json").read_text())


@pytest.mark.parametrize("tech", ["infiniband", "roce"])
def test_cable_count_equals_bom(builds, tech):
    """Per link class, the cable plan's distinct cables equal the BOM's cable lines, and its
    transceiver modules the BOM's transceiver lines, for a 1,024-GPU IB and RoCE design."""
    m = _manifest(builds[tech])
    bom_cables = sum(x["count"] for x in m["plan"]["bom"] if x["category"] == "cable")
    links = json.loads((builds[tech] / "cables.json").read_text())["links"]
    assert len({x["cable_id"] for x in links}) == bom_cables == m["plan"]["cables"]
    assert m["checks"]["cables_match_bom"] and m["checks"]["transceivers_match_bom"]
    assert m["conflicts"] == []


@pytest.mark.parametrize("tech", ["infiniband", "roce"])
def test_every_length_follows_from_the_layout(builds, tech):
    """Each cable's length is recomputed from layout.json alone (rack positions, device U
    positions, tray height, slack) and its order length is that rounded up to a stocked length."""
    folder = builds[tech]
    lay = json.loads((folder / "layout.json").read_text())
    a = {k: v["value"] for k, v in lay["assumptions"].items()}
    pos = {}
    for r in lay["racks"]:
        for d in r["devices"]:
            pos[d["device"]] = (r["name"], r["x_m"], r["y_m"], (d["u"] - 1 + d["height_u"] / 2) * U_M)
    for x in json.loads((folder / "cables.json").read_text())["links"]:
        ra, xa, ya, ha = pos[x["a_device"]]
        rb, xb, yb, hb = pos[x["b_device"]]
        if ra == rb:
            want = abs(ha - hb) + a["slack_m"]
        else:
            want = 2 * a["tray_height_m"] - ha - hb + abs(xa - xb) + abs(ya - yb) + a["slack_m"]
        assert x["length_m"] == pytest.approx(want, abs=2e-3)
        assert x["ordered_m"] == ordered_length_m(x["length_m"]) >= x["length_m"]


def test_bom_priced_at_layout_lengths(builds):
    """With --build the BOM prices each link class at the layout's longest order length, so the
    media chosen reach every run."""
    for folder in builds.values():
        m = _manifest(folder)
        for cls, v in m["checks"]["lengths"].items():
            assert m["plan"]["cable_lengths_m"][cls] == v["layout_max_ordered_m"] == v["bom_length_m"]


def test_layout_assumptions_are_sourced(builds):
    """Every layout assumption names a source or says ASSUMPTION (no public source)."""
    lay = json.loads((builds["infiniband"] / "layout.json").read_text())
    for k, v in lay["assumptions"].items():
        assert v["source"] and ("ASSUMPTION" in v["source"] or "NVIDIA" in v["source"]), k


def test_straight_multilink_cable_conflict(cat):
    """A BOM with a straight 800G AEC for two 400G NICs cannot be cabled rail-optimised and the build
    says so; the planner no longer picks one for a host link (issue 25), so the default RoCE BOM at
    5 m builds without conflicts."""
    fp = plan(1024, ("roce",), cat)[0]
    assert fp.media["host-leaf"].links_per_cable == 1
    assert not [c for c in build_cable_plan(fp, cat).conflicts if "straight" in c]
    forced = dataclasses.replace(
        fp,
        media={
            **fp.media,
            "host-leaf": dataclasses.replace(
                fp.media["host-leaf"],
                kind="aec",
                cable_id="aec-800g",
                switch_optic=None,
                nic_optic=None,
                links_per_cable=2,
            ),
        },
    )
    built = build_cable_plan(forced, cat)
    assert any("straight" in c and "splitter" in c for c in built.conflicts)


def test_build_refuses_rail_only(cat):
    """A rail-only plan is refused with one input error naming --build."""
    fp = plan(1024, ("infiniband",), cat, rail_only=True)[0]
    with pytest.raises(InputError, match="--build"):
        build_cable_plan(fp, cat)


def test_port_maps_cover_every_switch_port_once(builds):
    """Each switch's port map lists each used port once, within its radix."""
    m = _manifest(builds["infiniband"])
    radix = m["plan"]["radix"]
    ports = list((builds["infiniband"] / "ports").glob("*.csv"))
    assert len(ports) == m["counts"]["switches"]
    for p in ports:
        rows = p.read_text().splitlines()[1:]
        used = [int(r.split(",")[0]) for r in rows]
        assert len(used) == len(set(used)) and max(used) <= radix


# ---- Slurm topology.conf: a parser of the documented syntax ---------------------------------
_KEY = re.compile(r"(\w+)=(\S+)")


def parse_topology_conf(text: str) -> list[dict]:
    """topology.conf(5): one switch (SwitchName=, with Switches= and/or Nodes=, optional
    LinkSpeed=) or block (BlockName= Nodes=, BlockSizes=) per line, case-insensitive keys, # comments."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pairs = _KEY.findall(line)
        assert " ".join(f"{k}={v}" for k, v in pairs) == " ".join(line.split()), raw
        d = {k.lower(): v for k, v in pairs}
        if "switchname" in d:
            assert set(d) <= {"switchname", "switches", "nodes", "linkspeed"}, raw
            assert "switches" in d or "nodes" in d, raw
            if "linkspeed" in d:
                assert d["linkspeed"].isdigit()
        elif "blockname" in d:
            assert set(d) == {"blockname", "nodes"}, raw
        else:
            assert set(d) == {"blocksizes"} and all(x.isdigit() for x in d["blocksizes"].split(",")), raw
        for k in ("switches", "nodes"):
            if k in d:
                d[k] = names.expand_hostlist(d[k])
        out.append(d)
    return out


def test_hostlist_syntax():
    """Hostlists: the man page's example expands, and compress/expand round-trips."""
    assert names.expand_hostlist("tux[0-3,12,18-20]") == [f"tux{i}" for i in (0, 1, 2, 3, 12, 18, 19, 20)]
    nodes = [f"node{i:03d}" for i in (1, 2, 3, 7, 9, 10)] + ["login"]
    assert names.hostlist(nodes) == "node[001-003,007,009-010],login"
    assert names.expand_hostlist(names.hostlist(nodes)) == nodes
    with pytest.raises(ValueError):
        names.expand_hostlist("node[1-")


def test_slurm_tree_groups_nodes_by_leaf(builds):
    """topology.conf parses; every server sits under exactly one leaf-level switch, and that
    switch's servers are exactly those cabled to its scalable unit's rail leaves; one root."""
    folder = builds["infiniband"]
    lines = parse_topology_conf((folder / "slurm" / "topology.conf").read_text())
    leaves = [d for d in lines if "nodes" in d]
    placed = [n for d in leaves for n in d["nodes"]]
    assert len(placed) == len(set(placed)) == 128
    links = json.loads((folder / "cables.json").read_text())["links"]
    for d in leaves:
        su = int(d["switchname"][2:])
        cabled = {x["a_device"] for x in links if x["b_device"].startswith(f"leaf-su{su:02d}-")}
        assert set(d["nodes"]) == cabled
    names_all = {d["switchname"] for d in lines}
    children = {c for d in lines for c in d.get("switches", [])}
    assert children <= names_all and len(names_all - children) == 1


def test_slurm_block_groups_nvlink_domains(tmp_path):
    """GB200 NVL72: topology-block.conf parses and has one block per NVLink domain of 18 trays."""
    out = tmp_path / "b"
    assert (
        run(["plan", "--gpus", "1152", "--gpu", "gb200-nvl72", "--technology", "ib", "--build", str(out)])
        == 0
    )
    blocks = parse_topology_conf((out / "slurm" / "topology-block.conf").read_text())
    named = [b for b in blocks if "blockname" in b]
    assert len(named) == 1152 // 72 and all(len(b["nodes"]) == 18 for b in named)
    assert blocks[-1]["blocksizes"] == "18"
    labels = json.loads((out / "k8s" / "node-labels.json").read_text())
    assert labels["node019"]["network.topology.nvidia.com/accelerator"] == "nvl002"


def test_build_folder_must_be_new(tmp_path, capsys):
    """A non-empty --build folder is refused: exit 2, one error line naming --build."""
    (tmp_path / "x").write_text("keep")
    assert run(["plan", "--gpus", "64", "--technology", "ib", "--build", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--build" in err[0]
