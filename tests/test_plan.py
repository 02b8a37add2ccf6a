"""`aifabric plan`: tiers from the radix, closed-form switch counts, a priced BOM with sources."""

import json

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.design.plan import plan, plan_fabric
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog
from closed_form import rail_closed_form

runner = CliRunner()
CAT = load_catalog()


@pytest.mark.parametrize("gpus", [8, 64, 1024, 4096, 32768])
def test_ib_counts_rail_closed_form(gpus):
    """IB on QM9700 (64 × 400G) has the closed-form switch counts of a non-blocking rail fabric."""
    p = plan_fabric(gpus, "infiniband", CAT)
    assert p.radix == 64
    assert p.design.switches == rail_closed_form(gpus, 64)


@pytest.mark.parametrize("gpus", [1024, 4096, 32768])
def test_roce_uses_128_port_mode(gpus):
    """RoCE on SN5600 at 400G uses its 128 × 400G mode, so the radix is 128."""
    p = plan_fabric(gpus, "roce", CAT)
    assert p.radix == 128
    assert p.design.switches == rail_closed_form(gpus, 128)


def test_two_to_one_oversubscription_cuts_spines():
    """2:1 at the leaf: 42 down / 21 up ports; fewer spines and lower capex than 1:1."""
    one = plan_fabric(1024, "infiniband", CAT)
    two = plan_fabric(1024, "infiniband", CAT, oversubscription=2)
    assert (two.design.leaf_down, two.design.leaf_up) == (42, 21)
    assert two.design.switches == {"leaf": 32, "spine": 8}
    assert two.capex_usd < one.capex_usd


def test_bom_lines_name_catalog_id_and_price_source():
    """Every BOM line has a catalog id present in the catalog and a non-empty price source."""
    for p in plan(1024, ("infiniband", "roce"), CAT):
        for line in p.bom.lines:
            assert line.catalog_id
            assert line.price_source
            rec = {**CAT.switches, **CAT.nics, **CAT.optics, **CAT.cables}[line.catalog_id]
            assert line.estimate == CAT.is_estimate(rec, "price")


def test_bom_arithmetic():
    """Capex is the sum of count × unit price; NIC count = GPUs; twin-port modules halve switch-end
    optics, and DGX-class servers take one flat-top twin-port module per two NICs."""
    p = plan_fabric(1024, "infiniband", CAT)
    assert p.capex_usd == pytest.approx(sum(x.count * x.unit_price_usd for x in p.bom.lines))
    assert p.bom.count("nic") == 1024
    lines = {x.where: x for x in p.bom.lines if x.category == "transceiver"}
    assert lines["host-leaf @leaf"].count == 512  # 1024 ports on twin-port modules
    assert lines["host-leaf @server"].count == 512  # 4 twin-port cages per 8-GPU DGX
    assert CAT.optics[lines["host-leaf @server"].catalog_id].cooling == "flat-top"
    assert CAT.optics[lines["host-leaf @leaf"].catalog_id].cooling == "finned"
    assert lines["leaf-spine"].count == 1024  # 1024 links × 2 ends / 2 ports per module
    assert p.bom.count("cable") == 2048


def test_pcie_servers_take_one_module_per_nic():
    """With per-NIC cages (PCIe HGX servers) each 400G NIC takes its own 4-lane flat-top module."""
    p = plan_fabric(1024, "infiniband", CAT, server_cages="per-nic")
    lines = {x.where: x for x in p.bom.lines if x.category == "transceiver"}
    nic_optic = CAT.optics[lines["host-leaf @NIC"].catalog_id]
    assert lines["host-leaf @NIC"].count == 1024
    assert (nic_optic.lanes, nic_optic.ports, nic_optic.cooling) == (4, 1, "flat-top")


def test_short_links_use_dac():
    """Links within the passive DAC reach need no transceivers (100G-lane NDR)."""
    p = plan_fabric(1024, "infiniband", CAT, lengths_m={"host-leaf": 2.0})
    assert p.media["host-leaf"].kind == "dac"
    assert not [x for x in p.bom.lines if x.where.startswith("host-leaf @")]


def test_xdr_gets_no_passive_dac_and_no_multimode():
    """XDR (200G lanes): no passive DAC even at 1 m and single-mode optics at 40 m (P10)."""
    p = plan_fabric(1024, "infiniband", CAT, gpu="b300", lengths_m={"host-leaf": 1.0})
    assert p.switch_id == "q3400" and p.nic_id == "cx8-ib"
    assert p.media["host-leaf"].kind != "dac"
    assert p.media["leaf-spine"].kind == "smf"
    for line in p.bom.lines:
        if line.category == "transceiver":
            optic = CAT.optics[line.catalog_id]
            assert optic.lane_rate_gbps == 200 and optic.media == "smf"


def test_b200_uses_eight_400g_nics_per_node():
    """`plan --gpu b200` gives eight 400G ConnectX-7 per DGX/HGX B200 (P13), not 800G."""
    for tech, nic in (("infiniband", "cx7-ib"), ("roce", "cx7-eth")):
        p = plan_fabric(1024, tech, CAT, gpu="b200")
        assert (p.nic_rate_gbps, p.nic_id, p.planes) == (400, nic, 1)
        assert p.bom.count("nic") == 1024 and p.nodes == 128


@pytest.mark.parametrize("gpu", ["b300", "gb300-nvl72"])
def test_b300_and_gb300_use_800g(gpu):
    """B300 and GB300 plans use 800G ConnectX-8: XDR on InfiniBand, 2 × 400G planes on RoCE
    (the C8240's Ethernet ports), both 800G per GPU."""
    ib = plan_fabric(1152 if gpu.startswith("gb") else 1024, "infiniband", CAT, gpu=gpu)
    assert (ib.nic_rate_gbps, ib.nic_id, ib.switch_id, ib.planes) == (800, "cx8-ib", "q3400", 1)
    roce = plan_fabric(1152 if gpu.startswith("gb") else 1024, "roce", CAT, gpu=gpu)
    assert (roce.nic_rate_gbps, roce.nic_id, roce.planes, roce.link_rate_gbps) == (800, "cx8-eth", 2, 400)


def test_nvl72_trays_have_four_gpus_and_four_nics():
    """GB200 NVL72: 4-GPU compute trays with 4 scale-out NICs each, a 72-GPU NVLink domain."""
    gpu = CAT.gpus["gb200-nvl72"]
    assert (gpu.gpus_per_node, gpu.nics_per_node, gpu.scale_up_gpus, gpu.nic_rate_gbps) == (4, 4, 72, 400)
    p = plan_fabric(1152, "infiniband", CAT, gpu="gb200-nvl72")
    assert p.nodes == 288 and p.bom.count("nic") == 1152
    assert "16 NVLink domains of 72" in p.notes[-1]
    partial = plan_fabric(1024, "infiniband", CAT, gpu="gb200-nvl72")
    assert "a whole number of domains is 1080" in partial.notes[-1]


@pytest.mark.parametrize("gpus", [4096, 16384])
def test_large_b200_plans_pick_single_mode_for_300m(gpus):
    """4,096 and 16,384 B200 plans run on both fabrics; 300 m spine-core links get single-mode
    optics with ≥ 300 m reach."""
    for tech in ("infiniband", "roce"):
        p = plan_fabric(gpus, tech, CAT, gpu="b200")
        if "spine-core" in p.media:
            m = p.media["spine-core"]
            assert m.kind == "smf" and CAT.optics[m.switch_optic].reach_m >= 300


def test_nine_hundred_metre_links_need_fr4():
    """Links longer than 500 m need 2 km FR4 optics; beyond any reach the error names the longest."""
    p = plan_fabric(4096, "infiniband", CAT, lengths_m={"spine-core": 900.0})
    assert CAT.optics[p.media["spine-core"].switch_optic].optical == "400G-FR4"
    with pytest.raises(InputError, match="longest reach"):
        plan_fabric(4096, "infiniband", CAT, lengths_m={"spine-core": 5000.0})


def test_split_800g_nic_into_two_planes():
    """An 800G ConnectX-8 C8240 (2 × 400G) on RoCE runs as two 400G planes by default; asking for
    one plane is refused with the number needed."""
    p = plan_fabric(1024, "roce", CAT, nic_rate_gbps=800)
    assert (p.planes, p.link_rate_gbps, p.design.links["host-leaf"]) == (2, 400, 2048)
    with pytest.raises(InputError, match="needs 2 planes"):
        plan_fabric(1024, "roce", CAT, nic_rate_gbps=800, planes=1)


def test_data_hall_size_sets_switch_runs_and_optics():
    """A 300 m hall gives 600 m switch-to-switch runs: beyond 500 m DR4, so FR4 optics are used."""
    p = plan_fabric(4096, "infiniband", CAT, data_hall_m=300.0)
    assert p.lengths_m["leaf-spine"] == p.lengths_m["spine-core"] == 600.0
    assert CAT.optics[p.media["leaf-spine"].switch_optic].optical == "400G-FR4"
    assert (
        plan_fabric(4096, "infiniband", CAT, data_hall_m=300.0, lengths_m={"leaf-spine": 40.0}).lengths_m[
            "leaf-spine"
        ]
        == 40.0
    )


def test_max_tiers_caps_the_design():
    """4,096 GPUs on QM9700 need 3 tiers; with at most 2 the error names switches that reach it."""
    with pytest.raises(InputError, match="in 2 tiers") as err:
        plan_fabric(4096, "infiniband", CAT, max_tiers=2)
    assert "no catalog switch reaches it" in str(err.value)  # no 400G IB switch beyond radix 64
    assert plan_fabric(2048, "infiniband", CAT, max_tiers=2).design.tiers == 2


def test_rail_only_drops_the_spines():
    """Rail-only: 8 rail fabrics of 128 servers each fit one 128-port switch: 8 switches, no spine."""
    p = plan_fabric(1024, "roce", CAT, rail_only=True)
    assert p.design.switches == {"leaf": 8}
    assert p.capex_usd < plan_fabric(1024, "roce", CAT).capex_usd
    assert p.bom.count("nic") == 1024


def test_optics_brand_choice():
    """--optics nvidia uses NVIDIA-branded modules (input-priced), third-party the others."""
    nv = plan_fabric(1024, "infiniband", CAT, optics="nvidia")
    tp = plan_fabric(1024, "infiniband", CAT, optics="third-party")
    for p, brand in ((nv, "nvidia"), (tp, "third-party")):
        for line in p.bom.lines:
            if line.category == "transceiver":
                assert CAT.optics[line.catalog_id].brand == brand
    assert any(x.price_input for x in nv.bom.lines if x.category == "transceiver")
    with pytest.raises(InputError, match="--optics"):
        plan_fabric(64, "infiniband", CAT, optics="cheap")


def test_capex_range_and_input_share():
    """Capex lies inside its range; RoCE on SN5600 has input-priced switches (quote-only) and the
    plan says how much of its capex they are."""
    p = plan_fabric(1024, "roce", CAT)
    low, high = p.capex_range_usd
    assert low < p.capex_usd < high
    sw = sum(x.total_usd for x in p.bom.lines if x.category == "switch")
    assert p.capex_input_usd >= sw > 0
    assert plan_fabric(1024, "infiniband", CAT, lengths_m={"host-leaf": 40.0}).capex_input_usd == 0


GRID = [
    (gpus, gpu, tech, lengths, kw)
    for gpus in (64, 1024, 4096)
    for gpu in ("h100", "b200", "b300", "gb300-nvl72")
    for tech in ("infiniband", "roce")
    for lengths in ({"host-leaf": 1.5}, {"host-leaf": 4.0}, {}, {"host-leaf": 30.0, "leaf-spine": 400.0})
    for kw in ({}, {"server_cages": "per-nic"}, {"optics": "nvidia"})
    if not (gpu.startswith("gb") and gpus % 4)
] + [
    (1024, "h100", "roce", {}, {"switch_id": s})
    for s in ("tomahawk5", "arista-7060x6", "juniper-qfx5240", "cisco-n9364e-sg2", "sn5400", "tomahawk4")
]


def test_200g_serdes_switch_cannot_reach_100g_lane_nics():
    """A Tomahawk 6 switch (200G lanes) has no module that links to a ConnectX-8 C8240's 400G
    QSFP112 ports (100G lanes): 200G-PAM4 modules cannot downshift (P10), so the plan is refused
    naming both cages."""
    with pytest.raises(InputError) as err:
        plan_fabric(1024, "roce", CAT, gpu="b300", switch_id="dell-z9964f")
    msg = str(err.value)
    assert "8×200G lanes" in msg and "QSFP112" in msg


def test_no_bom_line_violates_its_cage():
    """Over a grid of plans (sizes, GPU systems, fabrics, lengths, server cages, optics brands,
    switches) every transceiver and copper cable fits the cage it is counted in: form factor,
    lanes, lane rate and cooling. Every plan of the grid is buildable from the catalog."""
    from aifabric.design.cost import bom_cage_violations

    for gpus, gpu, tech, lengths, kw in GRID:
        p = plan_fabric(gpus, tech, CAT, gpu=gpu, lengths_m=lengths, **kw)
        assert p.bom.count("transceiver") + p.bom.count("cable") > 0
        assert bom_cage_violations(CAT, p) == [], (gpus, gpu, tech, lengths, kw)


def test_cage_check_catches_a_wrong_module():
    """bom_cage_violations flags a BOM that puts a flat-top 4-lane NIC module into a switch cage."""
    from aifabric.design.cost import bom_cage_violations

    p = plan_fabric(1024, "infiniband", CAT)
    line = next(x for x in p.bom.lines if x.where == "leaf-spine" and x.category == "transceiver")
    line.catalog_id = "osfp-400g-sr4"
    found = bom_cage_violations(CAT, p)
    assert found and "flat-top module in a finned cage" in found[0] and "4 lanes" in found[0]


def test_long_links_use_single_mode():
    """300 m spine-core links need single-mode optics (FR4 at 400G)."""
    p = plan_fabric(4096, "infiniband", CAT)
    assert p.media["spine-core"].kind == "smf"


def test_too_big_names_a_switch_that_can():
    """100k GPUs exceed Tomahawk 4 (64 × 400G, 65,536 GPUs in 3 tiers); the error names switches that reach it."""
    with pytest.raises(InputError) as exc:
        plan_fabric(100_000, "roce", CAT, switch_id="tomahawk4")
    msg = str(exc.value)
    assert "exceed" in msg and "sn5600" in msg and "tomahawk5" in msg


def test_wrong_technology_switch():
    """An Ethernet switch for an IB fabric is refused, listing the IB switches."""
    with pytest.raises(InputError, match="qm9700"):
        plan_fabric(1024, "infiniband", CAT, switch_id="sn5600")


def test_catalog_override_changes_price(tmp_path):
    """A user catalog replaces a price and the BOM cites the user file."""
    f = tmp_path / "prices.yaml"
    f.write_text("switches:\n  - id: qm9700\n    price_usd: 30000\n    price_source: our quote 2026-11\n")
    cat = load_catalog(f)
    p = plan_fabric(1024, "infiniband", cat)
    line = next(x for x in p.bom.lines if x.catalog_id == "qm9700")
    assert line.unit_price_usd == 30000 and "our quote" in line.price_source


def test_instant_at_100k():
    """100,000 GPUs on a 128-port switch plan in well under a second (closed-form sizing)."""
    import time

    t = time.perf_counter()
    p = plan_fabric(100_000, "roce", CAT)
    assert p.design.tiers == 3
    assert time.perf_counter() - t < 2.0


# ---- CLI ----------------------------------------------------------------------------------------
def test_cli_both_json_keys():
    """`plan --gpus 1024 --technology both --json` prints two priced fabrics with interface.md keys."""
    r = runner.invoke(app, ["plan", "--gpus", "1024", "--technology", "both", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [f["technology"] for f in out["fabrics"]] == ["infiniband", "roce"]
    for f in out["fabrics"]:
        for key in (
            "technology",
            "gpus",
            "tiers",
            "switches",
            "nics",
            "transceivers",
            "cables",
            "capex_usd",
            "network_capex_per_gpu_usd",
            "power_w",
            "bom",
        ):
            assert key in f
        assert f["capex_usd"] > 0
        assert {"item", "catalog_id", "count", "unit_price_usd"} <= set(f["bom"][0])
    assert out["fabrics"][0]["switches"] == {"leaf": 32, "spine": 16}


def test_cli_terminal_table():
    """The default output is a table per fabric plus the capex comparison."""
    r = runner.invoke(app, ["plan", "--gpus", "1024"])
    assert r.exit_code == 0
    assert "infiniband fabric" in r.output and "roce fabric" in r.output and "RoCE capex is" in r.output


def test_cli_csv_and_markdown():
    """--csv prints BOM rows with a header; --markdown prints tables."""
    r = runner.invoke(app, ["plan", "--gpus", "64", "--csv"])
    assert r.exit_code == 0 and r.output.splitlines()[0].startswith("technology,where,category")
    r = runner.invoke(app, ["plan", "--gpus", "64", "--markdown"])
    assert r.exit_code == 0 and "| where | item |" in r.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--technology", "fc"], "--technology"),
        (["--gpus", "1030"], "multiple"),
        (["--gpus", "0"], "--gpus"),
        (["--nic-rate", "fast"], "--nic-rate"),
        (["--gpu", "a100"], "h100"),
        (["--switch", "nope"], "qm9700"),
        (["--oversubscription", "0.5"], "--oversubscription"),
        (["--lengths", "5m,40m"], "--lengths"),
        (["--json", "--csv"], "one output format"),
        (["--gpus", "100000", "--technology", "ib"], "exceed"),
        (["--catalog", "/nonexistent.yaml"], "nonexistent"),
        (["--optics", "cheap"], "--optics"),
        (["--server-cages", "dual"], "--server-cages"),
        (["--pue", "0.5"], "--pue"),
        (["--gpu", "b300", "--technology", "roce", "--planes", "1"], "--planes"),
        (["--lengths", "5m,40m,9km", "--gpus", "4096"], "--lengths"),
        (["--max-tiers", "4"], "--max-tiers"),
        (["--gpus", "4096", "--technology", "ib", "--max-tiers", "2"], "2 tiers"),
        (["--hall-size", "-3m"], "--hall-size"),
        (["--host-link-media", "copper"], "--host-link-media"),
        (["--host-link-media", "aec", "--technology", "ib"], "ethernet only"),
    ],
)
def test_cli_bad_input_exit_2(args, needle):
    """Bad flags: one error line on stderr naming the flag, exit 2, no traceback."""
    r = runner.invoke(app, ["plan", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output and "Traceback" not in r.output


def test_catalog_command():
    """`aifabric catalog --kind switch` lists the switches; --json gives records."""
    r = runner.invoke(app, ["catalog", "--kind", "switch"])
    assert r.exit_code == 0 and "qm9700" in r.output and "sn5600" in r.output
    r = runner.invoke(app, ["catalog", "--kind", "gpu", "--json"])
    assert r.exit_code == 0 and {"h100", "h200", "b200", "b300", "gb200-nvl72"} <= {
        g["id"] for g in json.loads(r.stdout)["gpu"]
    }
    r = runner.invoke(app, ["catalog", "--kind", "sofa"])
    assert r.exit_code == 2


def test_catalog_command_without_arguments():
    """`aifabric catalog` with no arguments lists every kind (issue 16: pandas NA cells crashed)."""
    r = runner.invoke(app, ["catalog"])
    assert r.exit_code == 0, r.output
    assert "switch records" in r.output and "gpu records" in r.output and "Traceback" not in r.output


def test_cli_hybrid_and_rent_vs_build():
    """--storage-nodes adds a priced hybrid design per fabric; --rent-vs-build its break-even."""
    r = runner.invoke(app, ["plan", "--gpus", "256", "--json", "--storage-nodes", "8", "--rent-vs-build"])
    assert r.exit_code == 0, r.output
    for f in json.loads(r.stdout)["fabrics"]:
        assert f["hybrid"]["storage_nodes"] == 8 and f["hybrid"]["capex_usd"] > f["capex_usd"]
        assert f["rent_vs_build"]["break_even_months"] > 0
    r = runner.invoke(app, ["plan", "--gpus", "256", "--storage-nodes", "8", "--rent-vs-build"])
    assert r.exit_code == 0 and "hybrid" in r.output and "breaks even" in r.output


def test_catalog_tco_view():
    """`aifabric catalog --kind tco` lists the TCO parameters with their provenance."""
    r = runner.invoke(app, ["catalog", "--kind", "tco"])
    assert r.exit_code == 0 and "electricity_usd_per_kwh" in r.output and "input ranges" in r.output
    r = runner.invoke(app, ["catalog", "--kind", "tco", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["tco"]["pue"]["value"] == 1.3


def test_cli_b200_json_has_tco_and_ranges():
    """`plan --gpu b200 --json`: 400G NICs, capex range, TCO keys and the comparison's TCO ratio."""
    r = runner.invoke(app, ["plan", "--gpus", "1024", "--gpu", "b200", "--json", "--pue", "1.2"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    for f in out["fabrics"]:
        assert f["nic_rate_gbps"] == 400
        low, high = f["capex_range_usd"]
        assert low <= f["capex_usd"] <= high
        assert f["tco_usd"] > f["capex_usd"] and f["tco"]["inputs"]["pue"].startswith("1.2 ")
    assert 0 < out["comparison"]["roce_over_ib_tco"] < 2
    assert set(out["catalog_prices"]) == {"sourced", "estimate", "input"}


def test_named_designs_side_by_side():
    """Every named design plans for 1,024 H100 with its own parts and label; an unknown label is
    an InputError listing the known ones."""
    from aifabric.design.plan import DESIGNS, plan_design, radix_note

    plans = [plan_design(label, 1024, CAT) for label in DESIGNS]
    for label, p in zip(DESIGNS, plans, strict=True):
        assert p.to_dict()["design_label"] == label
        assert p.switch_id == DESIGNS[label]["switch_id"] and p.capex_usd > 0
    sx = plan_design("spectrum-x-400g", 1024, CAT)
    assert (sx.switch_id, sx.nic_id) == ("sn5600", "bf3")
    assert "radix differs" in radix_note(plans)
    assert radix_note([plans[0], plans[0]]) is None
    with pytest.raises(InputError, match="ib-ndr-400g"):
        plan_design("token-ring", 64, CAT)


def test_cli_designs():
    """`plan --design A --design B --json` prints one fabric per named design."""
    r = runner.invoke(app, ["plan", "--design", "ib-ndr-400g", "--design", "th5-sonic-400g", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [f["design_label"] for f in out["fabrics"]] == ["ib-ndr-400g", "th5-sonic-400g"]
    assert "radix_note" in out
