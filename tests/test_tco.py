"""TCO of a fabric, hybrid back-end + front-end pricing, rent vs build and break-even prices."""

import pytest

from aifabric.design.plan import plan_fabric
from aifabric.design.tco import (
    break_even_unit_price,
    fabric_tco,
    price_hybrid,
    rent_vs_build,
    storage_nodes_for,
    tco_inputs,
)
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog

CAT = load_catalog()


def _value(key: str) -> float:
    return float(CAT.tco[key].value)


def test_tco_is_capex_spares_and_lifetime_opex():
    """TCO = capex + spares share × capex + years × (support share × switch capex + licences
    (UFM per node on IB) + network power × PUE × hours × USD/kWh)."""
    p = plan_fabric(1024, "infiniband", CAT)
    t = p.tco
    switch_capex = sum(x.total_usd for x in p.bom.lines if x.category == "switch")
    years = _value("lifetime_years")
    spares = _value("spares_share") * p.capex_usd
    support = _value("support_share_per_year.nvidia") * switch_capex
    licences = _value("ufm_usd_per_node_year") * 128
    energy_kwh = p.power_w / 1000 * _value("pue") * _value("hours_per_year")
    energy = energy_kwh * _value("electricity_usd_per_kwh")
    assert t.spares_usd == pytest.approx(spares)
    assert t.support_usd_per_year == pytest.approx(support)
    assert t.licences_usd_per_year == pytest.approx(licences)
    assert t.energy_kwh_per_year == pytest.approx(energy_kwh)
    assert t.tco_usd == pytest.approx(p.capex_usd + spares + years * (support + licences + energy))
    assert t.tco_low_usd < t.tco_usd < t.tco_high_usd


def test_sonic_fabric_pays_no_nos_licence_and_white_box_support():
    """A Tomahawk 5 SONiC fabric has no per-switch licence and uses the white-box support share."""
    p = plan_fabric(1024, "roce", CAT, switch_id="tomahawk5")
    switch_capex = sum(x.total_usd for x in p.bom.lines if x.category == "switch")
    assert p.tco.licences_usd_per_year == 0
    assert p.tco.support_usd_per_year == pytest.approx(
        _value("support_share_per_year.white-box") * switch_capex
    )


def test_overrides_change_energy_and_lifetime():
    """Doubling the electricity price doubles the energy cost; a longer life adds opex years."""
    p = plan_fabric(256, "roce", CAT)
    base = fabric_tco(p, CAT)
    dear = fabric_tco(p, CAT, {"electricity_usd_per_kwh": 2 * _value("electricity_usd_per_kwh")})
    assert dear.energy_usd_per_year == pytest.approx(2 * base.energy_usd_per_year)
    longer = fabric_tco(p, CAT, {"lifetime_years": 7})
    assert longer.tco_usd - base.tco_usd == pytest.approx(2 * base.opex_usd_per_year)
    assert "user override" in longer.inputs["lifetime_years"]


@pytest.mark.parametrize(("overrides", "field"), [({"pue": -1}, "tco.pue"), ({"colour": 1}, "tco.colour")])
def test_bad_overrides_are_input_errors(overrides, field):
    """Negative values and unknown parameters are refused naming the parameter."""
    with pytest.raises(InputError) as err:
        tco_inputs(CAT, overrides)
    assert err.value.field == field


def test_tco_keys_in_plan_json():
    """The plan's JSON gains tco_usd, tco_range_usd, tco_per_gpu_usd and a tco breakdown with the
    inputs used, each described with its source or basis."""
    d = plan_fabric(1024, "roce", CAT).to_dict()
    assert {"tco_usd", "tco_range_usd", "tco_per_gpu_usd", "tco"} <= set(d)
    assert {"capex_usd", "spares_usd", "energy_usd_per_year", "inputs"} <= set(d["tco"])
    assert "P7" in d["tco"]["inputs"]["electricity_usd_per_kwh"]


def test_break_even_price_makes_the_totals_equal():
    """The break-even SN5600 price makes the RoCE plan's capex / TCO equal the IB plan's."""
    ib = plan_fabric(1024, "infiniband", CAT)
    roce = plan_fabric(1024, "roce", CAT)
    for metric, target in (("capex", ib.capex_usd), ("tco", ib.tco.tco_usd)):
        price = break_even_unit_price(roce, CAT, "sn5600", target, metric=metric)
        assert price is not None and price > 0
        if metric == "capex":
            assert roce.capex_at({"sn5600": price}) == pytest.approx(target, abs=1)
    assert break_even_unit_price(roce, CAT, "qm9700", 1.0) is None


def test_hybrid_adds_a_priced_front_end():
    """The hybrid design adds an Ethernet front end sized from the servers' storage NICs and the
    storage nodes; checkpoint bandwidth sets the storage nodes when they are not given."""
    ib = plan_fabric(1024, "infiniband", CAT)
    h = price_hybrid(ib, CAT, checkpoint_gbytes_per_s=200, storage_node_gbps=400)
    assert h.storage_nodes == storage_nodes_for(200, 400) == 4
    assert h.front_end_endpoints == 128 * 2 * 2 + 4 * 2  # 2 dual-port 200G NICs per DGX + storage
    assert h.front_end_capex_usd > 0 and h.capex_usd == pytest.approx(ib.capex_usd + h.front_end_capex_usd)
    assert h.tco_usd > h.capex_usd
    with pytest.raises(InputError):
        price_hybrid(ib, CAT, storage_nodes=4, front_end_switch="qm9700")


def test_rent_vs_build_break_even_months():
    """Building 1,024 H100 (310 k USD per node, S60) against renting at the sourced H100 range
    midpoint breaks even in a few years; a rental price below the build opex never breaks even."""
    p = plan_fabric(1024, "infiniband", CAT)
    r = rent_vs_build(p, CAT)
    assert r.rent_usd_per_gpu_hour == pytest.approx(_value("rent_usd_per_gpu_hour.h100"))
    assert 6 < r.break_even_months < 60
    cheap = rent_vs_build(p, CAT, rent_usd_per_gpu_hour=0.01)
    assert cheap.break_even_months is None
    with pytest.raises(InputError, match="no server price"):
        rent_vs_build(plan_fabric(1024, "infiniband", CAT, gpu="h200"), CAT)
