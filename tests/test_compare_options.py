"""compare's buyer options (issue 14): the plan options as flags and advisor keys, several named
designs side by side, the hybrid priced as a whole design, lossy RoCE, NVL72 in the design stage."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import AdvisorSpec
from aifabric.stages.design.fabrics import DesignInput, default_options, design
from aifabric.stages.design.options import options_for


@pytest.fixture(scope="module")
def cat():
    return load_catalog(None)


def _design(cat, **adv):
    a = AdvisorSpec(**adv)
    gpu = cat.get("gpu", a.gpu)
    return design(DesignInput(a.gpus, a.gpu, options_for(a, gpu, cat), cat))


def test_default_options_unchanged(cat):
    """No buyer option asked: the same two options as before issue 14 (default compare unchanged)."""
    for g in ("h100", "b200", "b300", "gb300-nvl72"):
        gpu = cat.get("gpu", g)
        assert options_for(AdvisorSpec(gpu=g), gpu, cat) == default_options(gpu)
        ev = _design(cat, gpu=g, gpus=1024 if g != "gb300-nvl72" else 1152)
        assert [f.family for f in ev.fabrics] == [f.key for f in ev.fabrics]
        assert all("+" not in f.design_name and not f.lossy for f in ev.fabrics)


def test_named_designs_side_by_side(cat):
    names = ["ib-ndr-400g", "spectrum-x-400g", "th5-sonic-400g", "jericho3-ai-400g"]
    ev = _design(cat, gpus=1024, designs=names)
    assert [f.key for f in ev.fabrics] == names
    assert [f.family for f in ev.fabrics] == ["infiniband", "roce-400g", "roce-400g", "roce-400g"]
    by = {f.key: f for f in ev.fabrics}
    assert by["spectrum-x-400g"].plan.nic_id == "bf3" and by["spectrum-x-400g"].routing == "adaptive-packet"
    assert by["th5-sonic-400g"].plan.switch_id == "tomahawk5" and by["th5-sonic-400g"].routing == "ecmp"
    # radix: a 25.6T QM9700 (64 × 400G) against 51.2T Ethernet (128 × 400G) = half the switches
    ib, th5 = by["ib-ndr-400g"].plan, by["th5-sonic-400g"].plan
    assert (ib.radix, th5.radix) == (64, 128)
    assert th5.design.total_switches * 2 == ib.design.total_switches
    assert "radix differs" in ev.radix_note and "qm9700 has 64 ports at 400G" in ev.radix_note
    # every capex comes from catalog lines with their own source, or an explicit range
    for f in ev.fabrics:
        for line in f.plan.bom.lines:
            assert line.price_source
            if line.price_input:
                assert line.unit_price_low_usd < line.unit_price_high_usd
        assert f.capex_usd == pytest.approx(sum(x.total_usd for x in f.plan.bom.lines))


def test_parts_and_plan_options_reach_the_plan(cat):
    ev = _design(
        cat,
        gpus=1024,
        switch=["tomahawk5"],
        nic=["thor2"],
        oversubscription=2,
        lengths_m={"host-leaf": 3, "leaf-spine": 150, "spine-core": 500},
    )
    ib, roce = ev.fabrics
    assert ib.plan.switch_id == "qm9700" and roce.plan.switch_id == "tomahawk5"
    assert roce.plan.nic_id == "thor2" and ib.plan.nic_id == "cx7-ib"
    assert ib.plan.oversubscription == roce.plan.oversubscription == 2.0
    assert roce.lengths_m["leaf-spine"] == 150
    assert roce.design_name == "roce-tomahawk5-400g-thor2-2to1"
    base = _design(cat, gpus=1024)
    assert ib.plan.design.total_switches < base.fabrics[0].plan.design.total_switches  # 2:1 saves spines
    # a longer leaf-spine run needs other optics than the 40 m default
    assert roce.plan.media["leaf-spine"].kind != base.fabrics[1].plan.media["leaf-spine"].kind or (
        roce.plan.media["leaf-spine"].switch_optic != base.fabrics[1].plan.media["leaf-spine"].switch_optic
    )


def test_800g_nic_as_two_400g_planes_and_rail_only(cat):
    ev = _design(cat, gpus=2048, gpu="b300", designs=["ib-xdr-800g", "spectrum-x-800g-2plane"])
    xdr, sx = ev.fabrics
    assert (xdr.plan.planes, xdr.plan.link_rate_gbps, xdr.plan.switch_id) == (1, 800, "q3400")
    assert (sx.plan.planes, sx.plan.link_rate_gbps, sx.family) == (2, 400, "roce-800g")
    two = _design(cat, gpus=1024, planes=2)  # H100: 400G as 2 × 200G planes, both fabrics
    assert [f.plan.planes for f in two.fabrics] == [2, 2]
    assert all(f.design_name.endswith("-2plane") for f in two.fabrics)
    # 800G ConnectX-8 as 2 × 400G planes on both fabrics: the C8240 runs 2 × 400GbE or 2 × NDR 400G
    # (catalog P36/P37), so InfiniBand gets it as Ethernet does (was refused on IB only: the 1-port
    # XDR C8180's 200G lanes fit no 100G-lane NDR module)
    split = _design(cat, gpus=1152, gpu="gb300-nvl72", planes=2)
    assert [(f.plan.nic_id, f.plan.link_rate_gbps) for f in split.fabrics] == [
        ("cx8-ib-2x400", 400),
        ("cx8-eth", 400),
    ]
    assert split.fabrics[0].plan.switch_id == "qm9700"
    with pytest.raises(InputError) as e:  # the 1-port XDR card named: its 200G lanes fit no NDR module
        _design(cat, gpus=1152, gpu="gb300-nvl72", planes=2, nic=["cx8-ib"])
    assert e.value.field == "--lengths" and "4×200G" in e.value.problem
    ro = _design(cat, gpus=512, rail_only=True)  # 64 servers: one switch per rail, no spine
    full = _design(cat, gpus=512)
    for a, b in zip(ro.fabrics, full.fabrics, strict=True):
        assert a.plan.rail_only and a.design_name.endswith("-rail-only")
        assert a.tiers == 1 and b.tiers == 2 and a.capex_usd < b.capex_usd
    hall = _design(cat, gpus=1024, hall_size_m=100)
    assert hall.fabrics[0].lengths_m["leaf-spine"] == 200


def test_hybrid_priced_as_whole_design(cat):
    back = _design(cat, gpus=1024, gpu="b200")
    whole = _design(cat, gpus=1024, gpu="b200", storage_nodes=16)
    more = _design(cat, gpus=1024, gpu="b200", checkpoint_gbytes_per_s=800)
    for b, w, m in zip(back.fabrics, whole.fabrics, more.fabrics, strict=True):
        fe = w.front_end
        assert fe["storage_nodes"] == 16 and fe["front_end_capex_usd"] > 0
        assert w.capex_usd == pytest.approx(b.capex_usd + fe["front_end_capex_usd"])
        assert any(x.where.startswith("front-end") for x in w.plan.bom.lines)
        assert w.plan.tco.tco_usd > b.plan.tco.tco_usd
        assert m.front_end["storage_nodes"] == 16  # 800 GB/s at 400G (50 GB/s) per storage node
        assert w.design_name.endswith("+ethernet-front-end")
    assert [f.family for f in whole.fabrics] == ["hybrid", "roce-400g"]


def test_nvl72_design_stage(cat):
    """GB200 NVL72: NVLink domain of 72, four 400G ConnectX-7 per 4-GPU tray, two BlueField-3 per tray
    for storage / front end (the reference design, catalog P17)."""
    ev = _design(cat, gpus=1152, gpu="gb200-nvl72", storage_nodes=0)
    assert ev.gpus_per_node == 4 and ev.scale_up_gpus == 72 and ev.to_dict()["scale_up_gpus"] == 72
    for f in ev.fabrics:
        p = f.plan
        assert p.count_of(p.nic_id) == 1152 and p.nic_rate_gbps == 400
        assert p.front_end["nic"] == "bf3" and p.front_end["per_node"] == 2
        assert f.front_end["front_end_endpoints"] == 288 * 2
        assert any("16 NVLink domains of 72" in n for n in p.notes)
    gb300 = _design(cat, gpus=1152, gpu="gb300-nvl72")
    assert {f.nic_rate_gbps for f in gb300.fabrics} == {800.0}


@pytest.mark.parametrize(
    "args,flag",
    [
        (["--designs", "nope-400g"], "--designs"),
        (["--designs", "ib-ndr-400g,ib-ndr-400g"], "--designs"),
        (["--designs", "ib-ndr-400g", "--switch", "qm9700"], "--switch"),
        (["--designs", ","], "--designs"),
        (["--planes", "0"], "--planes"),
        (["--max-tiers", "4"], "--max-tiers"),
        (["--oversubscription", "0.5"], "--oversubscription"),
        (["--switch", "nope"], "--switch"),
        (["--switch", "qm9700,q3400"], "--switch"),
        (["--nic", "nope"], "--nic"),
        (["--nic-rate", "fast"], "--nic-rate"),
        (["--lengths", "5m,40m"], "--lengths"),
        (["--hall-size", "-3m"], "--hall-size"),
        (["--host-link-media", "copper"], "--host-link-media"),
        (["--storage-nodes", "-1"], "--storage-nodes"),
        (["--checkpoint-gbytes-per-s", "-5"], "--checkpoint-gbytes-per-s"),
        (["--switch", "sn5600", "--nic-rate", "300Gbps"], "--nic-rate"),
    ],
)
def test_bad_buyer_options_exit_2(args, flag):
    res = CliRunner().invoke(app, ["compare", *args, "--json"])
    assert res.exit_code == 2, res.output
    assert flag in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_scenario_keys(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("advisor: {gpus: 64, designs: [ib-ndr-400g, nope]}\n")
    res = CliRunner().invoke(app, ["compare", str(f), "--json"])
    assert res.exit_code == 2 and "nope" in res.output
    f.write_text("advisor: {gpus: 64, oversubscription: 0.5}\n")
    res = CliRunner().invoke(app, ["compare", str(f), "--json"])
    assert res.exit_code == 2 and "oversubscription" in res.output


@pytest.mark.slow
def test_compare_n_designs_lossy_hybrid():
    """One compare run, three designs, lossy RoCE and the front end: recommendation.fabric is the
    family, .design the label; every consumer handles N designs."""
    res = CliRunner().invoke(
        app,
        [
            "compare",
            "--gpus",
            "64",
            "--designs",
            "ib-ndr-400g,spectrum-x-400g,th5-sonic-400g",
            "--lossy-roce",
            "--storage-nodes",
            "4",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    rec = out["recommendation"]
    labels = [f["design"] for f in out["fabrics"]]
    assert len(out["fabrics"]) == 3
    assert rec["design"] in labels
    fam = {f["design"]: f["family"] for f in out["fabrics"]}
    assert rec["fabric"] == fam[rec["design"]] and rec["fabric"] in ("hybrid", "roce-400g")
    assert sum(out["probability_best"].values()) == pytest.approx(1.0)
    assert set(out["probability_best"]) == set(labels)
    for f in out["fabrics"]:
        scen = {r["scenario"] for r in f["risk"]}
        assert "storage-incast" not in scen  # its own storage network
        if f["technology"] == "roce":
            assert "lossy-by-design" in scen and "pfc-storm" not in scen
            assert f["lossy"] and f["design"].endswith("-lossy+ethernet-front-end")
        assert f["front_end"]["front_end_capex_usd"] > 0
    assert out["radix_note"] and "qm9700" in out["radix_note"]


def test_design_view_of_lossy_and_hybrid_designs():
    """Which risk scenarios a design keeps: a lossy RoCE design drops the PFC mistakes and carries its
    measured lossy run as itself; a design with its own storage network drops storage incast."""
    from types import SimpleNamespace

    from aifabric.stages.risk.library import LOSSY_DESIGN, DesignView

    measured = ["ecn-off", "pfc-storm", "lossy-class", "lossy-go-back-n", "storage-incast"]
    lossy = DesignView.of(SimpleNamespace(lossy=True, technology="roce", front_end=None), measured)
    assert [s for s in measured if not lossy.skips(s)] == [
        "ecn-off",
        "lossy-class",
        "lossy-go-back-n",
        "storage-incast",
    ]
    assert lossy.is_design("lossy-go-back-n") and not lossy.is_design("lossy-class")
    assert lossy.name("lossy-go-back-n", "x")[0] == LOSSY_DESIGN
    no_cc = DesignView.of(SimpleNamespace(lossy=True, technology="roce", front_end=None), ["lossy-class"])
    assert no_cc.is_design("lossy-class")
    hybrid = DesignView.of(SimpleNamespace(lossy=True, technology="infiniband", front_end={"x": 1}), measured)
    assert (
        hybrid.skips("storage-incast")
        and not hybrid.skips("pfc-storm")
        and not hybrid.is_design("lossy-class")
    )
