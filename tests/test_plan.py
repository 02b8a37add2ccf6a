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
    """Capex is the sum of count × unit price; NIC count = GPUs; twin-port modules halve switch-end optics."""
    p = plan_fabric(1024, "infiniband", CAT)
    assert p.capex_usd == pytest.approx(sum(x.count * x.unit_price_usd for x in p.bom.lines))
    assert p.bom.count("nic") == 1024
    lines = {x.where: x for x in p.bom.lines if x.category == "transceiver"}
    assert lines["host-leaf @leaf"].count == 512  # 1024 ports on twin-port modules
    assert lines["host-leaf @NIC"].count == 1024
    assert lines["leaf-spine"].count == 1024  # 1024 links × 2 ends / 2 ports per module
    assert p.bom.count("cable") == 2048


def test_short_links_use_dac():
    """Links within the DAC reach need no transceivers."""
    p = plan_fabric(1024, "infiniband", CAT, lengths_m={"host-leaf": 2.0})
    assert p.media["host-leaf"].kind == "dac"
    assert not [x for x in p.bom.lines if x.where.startswith("host-leaf @")]


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
    assert r.exit_code == 0 and {g["id"] for g in json.loads(r.stdout)["gpu"]} == {"h100", "h200", "b200"}
    r = runner.invoke(app, ["catalog", "--kind", "sofa"])
    assert r.exit_code == 2
