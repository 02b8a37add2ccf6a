"""One media table and one rule for both fabrics (issue 25, part 4), and new-equipment price bounds.

The catalog's cables and optics carry the real parts each protocol has (``parts``); a record is
offered to every protocol it has parts for. :func:`aifabric.design.cost.choose_media` picks the
cheapest part that reaches, whatever the protocol, so the only media difference between an
InfiniBand and an Ethernet fabric at the same length and cages may come from a part that exists for
one protocol only, and such a part must say where that comes from."""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType

import pytest

from aifabric.design.cost import HOST_LINK_MEDIA, choose_media, server_cage, switch_cage
from aifabric.design.media import media_assumptions
from aifabric.design.plan import plan_fabric
from aifabric.errors import InputError
from aifabric.hardware.catalog import load_catalog

CAT = load_catalog()
LENGTHS_M = (0.5, 1, 2, 2.5, 3, 4, 5, 7, 10, 30, 50, 100, 300, 500, 1500)
# (label, link rate, near cage, far cage, host end): the same hardware asked of both protocols
CAGES = {
    "400G host, DGX twin-port": (
        400,
        switch_cage(CAT.switches["qm9700"], 400, 64),
        server_cage(CAT.nics["cx7-ib"], "twin-port"),
        True,
    ),  # fmt: skip
    "400G host, PCIe per-NIC": (
        400,
        switch_cage(CAT.switches["qm9700"], 400, 64),
        server_cage(CAT.nics["cx7-ib"], "per-nic"),
        True,
    ),  # fmt: skip
    "400G switch-switch": (
        400,
        switch_cage(CAT.switches["qm9700"], 400, 64),
        switch_cage(CAT.switches["qm9700"], 400, 64),
        False,
    ),  # fmt: skip
    "800G host, XDR ConnectX-8": (
        800,
        switch_cage(CAT.switches["q3400"], 800, 144),
        server_cage(CAT.nics["cx8-ib"], "per-nic"),
        True,
    ),  # fmt: skip
    "800G switch-switch, 200G lanes": (
        800,
        switch_cage(CAT.switches["q3400"], 800, 144),
        switch_cage(CAT.switches["q3400"], 800, 144),
        False,
    ),  # fmt: skip
    "800G switch-switch, 100G lanes": (
        800,
        switch_cage(CAT.switches["sn5600"], 800, 64),
        switch_cage(CAT.switches["sn5600"], 800, 64),
        False,
    ),  # fmt: skip
}
BOUND_BAD = re.compile(r"refurb|\bused\b|second-hand|previous[- ]generation|\bold\b", re.IGNORECASE)


def _dual_protocol_only(cat):
    """The catalog without the parts offered to one protocol only."""
    keep = lambda recs: MappingProxyType({k: r for k, r in recs.items() if r.technology == "any"})  # noqa: E731
    return dataclasses.replace(cat, cables=keep(cat.cables), optics=keep(cat.optics))


def _pick(cat, case, length, technology):
    rate, near, far, host = CAGES[case]
    try:
        m = choose_media(cat, rate, length, technology, host, "x", near_cage=near, far_cage=far)
    except InputError:
        return None
    return (m.kind, m.cable_id, m.switch_optic, m.nic_optic)


@pytest.mark.parametrize("case", CAGES)
def test_same_length_same_media_from_the_shared_table(case):
    """With the parts both protocols have, InfiniBand and RoCE get the same media kind and the
    same parts at every length (400G and 800G links, host and switch-to-switch): one rule."""
    cat = _dual_protocol_only(CAT)
    for length in LENGTHS_M:
        assert _pick(cat, case, length, "infiniband") == _pick(cat, case, length, "roce"), (case, length)


def _single_protocol_parts(choice):
    """The records of a choice (cable, switch optic, far optic) offered to one protocol only."""
    if choice is None:
        return []
    recs = (CAT.cables.get(choice[1]), CAT.optics.get(choice[2] or ""), CAT.optics.get(choice[3] or ""))
    return [r for r in recs if r is not None and r.technology != "any"]


@pytest.mark.parametrize("case", CAGES)
def test_media_differ_only_by_a_sourced_single_protocol_part(case):
    """In the full catalog a fabric gets another medium than the other fabric only when one of
    the two choices is a part offered to its protocol alone, and that part names its source."""
    for length in LENGTHS_M:
        ib, roce = _pick(CAT, case, length, "infiniband"), _pick(CAT, case, length, "roce")
        if ib == roce:
            continue
        single = _single_protocol_parts(ib) + _single_protocol_parts(roce)
        assert single, (case, length, ib, roce)
        assert all(r.technology_source and r.technology_basis for r in single), (case, length)


def test_default_plans_same_host_media_where_copper_reaches():
    """At 2 and 3 m host links the default 1,024-GPU InfiniBand and RoCE plans use the same
    dual-protocol passive DAC (MCP7Y00 / MCP4Y10 class), not one copper part for one fabric only."""
    for length in (2.0, 3.0):
        lengths = {"host-leaf": length}
        ib = plan_fabric(1024, "infiniband", CAT, lengths_m=lengths).media["host-leaf"]
        roce = plan_fabric(1024, "roce", CAT, lengths_m=lengths).media["host-leaf"]
        assert (ib.kind, ib.cable_id) == (roce.kind, roce.cable_id) == ("dac", ib.cable_id)
        assert set(CAT.cables[ib.cable_id].parts) == {"infiniband", "ethernet"}


@pytest.mark.parametrize("pid", ["dac-passive-800g", "dac-passive-400g", "lacc-800g"])
def test_dual_protocol_copper_is_offered_to_both(pid):
    """A LinkX copper part with parts for both protocols (MCP4Y10, MCP7Y00, MCA4J80) is a
    candidate for InfiniBand and for RoCE: imposing its kind picks it on both, at its own reach."""
    rec = CAT.cables[pid]
    assert set(rec.parts) == {"infiniband", "ethernet"} and rec.technology == "any"
    # a straight twin-port cable (two links, one plug each end) is not a rail-optimised host link (both
    # NICs of the server cage would land on one leaf): it is offered switch to switch
    straight = (rec.ports or 1) == 1 and float(rec.rate_gbps or 400) > 400
    case = "400G switch-switch" if rec.links == "switch-switch" or straight else "400G host, DGX twin-port"
    rate, near, far, host = CAGES[case]
    only = dataclasses.replace(CAT, cables=MappingProxyType({pid: rec}))  # the part on its own
    for tech in ("infiniband", "roce"):
        m = choose_media(
            only,
            rate,
            float(rec.max_reach_m),
            tech,
            host,
            "x",
            near_cage=near,
            far_cage=far,
            kinds=(rec.kind,),
        )
        assert m.cable_id == pid, tech


def test_parts_must_match_the_protocols_offered():
    """A record listing parts for both protocols but offered to one is refused when loaded."""
    raw = CAT.cables["dac-passive-800g"].model_dump()
    raw.update(technology="ethernet")
    with pytest.raises(ValueError, match="does not match the protocols with parts"):
        type(CAT.cables["dac-passive-800g"])(**raw)


def test_aec_is_ethernet_only_with_its_source():
    """The AEC is the one host-link medium offered to Ethernet alone, and says why (HiWire: an
    Ethernet cable; no AEC in NVIDIA's 100G-PAM4 LinkX line)."""
    aec = CAT.cables["aec-800g"]
    assert aec.technology == "ethernet"
    assert "P43" in aec.technology_source and "Ethernet" in aec.technology_basis


@pytest.mark.parametrize("section", ["switches", "nics", "optics", "cables"])
def test_every_price_bound_is_new_equipment_with_a_source(section):
    """Every price range's low and high bound says where it comes from, and none comes from a
    refurbished, used or previous-generation listing (the SN5600 floor was a refurbished Tomahawk 4
    switch)."""
    for rec in getattr(CAT, section).values():
        if rec.price_range_usd is None or rec.price_range_usd[0] == rec.price_range_usd[1]:
            continue
        for bound in (rec.price_low_basis, rec.price_high_basis):
            assert bound, f"{section}[{rec.id}] price bound without a basis"
            assert not BOUND_BAD.search(bound), f"{section}[{rec.id}]: {bound}"


def test_sn5600_floor_is_the_new_equipment_bracket():
    """The SN5600's range is 128 × the new-equipment bracket 242–781 USD per 400G port (QM9700 new
    prices × the published Ethernet/IB ratio span), not the refurbished 133–150 USD floor."""
    low, high = CAT.switches["sn5600"].price_range_usd
    assert (low, high) == (128 * 242, 128 * 781)
    assert low / 128 > 150


def test_host_link_media_imposed_and_refused():
    """--host-link-media optics gives both fabrics optics at 5 m; aec on InfiniBand is one
    InputError naming the option and saying the AEC is Ethernet only."""
    for tech in ("infiniband", "roce"):
        assert plan_fabric(1024, tech, CAT, host_link_media="optics").media["host-leaf"].kind in (
            "mmf",
            "smf",
        )
    with pytest.raises(InputError) as e:
        plan_fabric(1024, "infiniband", CAT, host_link_media="aec")
    assert "host-link-media" in str(e.value) and "ethernet only" in str(e.value)
    with pytest.raises(InputError, match="unknown host-link media"):
        plan_fabric(1024, "roce", CAT, host_link_media="copper")


def test_media_assumptions_well_formed():
    """media_assumptions gives dicts with the register's keys, a known kind, decides False, a
    [low, high] range or None, and names the host-link media and length of each fabric."""
    plans = {t: plan_fabric(1024, t, CAT) for t in ("infiniband", "roce")}
    items = media_assumptions(plans, CAT)
    keys = {"name", "value", "unit", "applies_to", "source", "range", "alternatives", "kind", "decides"}
    for a in items:
        assert set(a) == keys
        assert a["kind"] in ("price", "physics", "deployment", "probability")
        assert a["decides"] is False and a["source"]
        assert set(a["applies_to"]) <= set(plans)
        assert a["range"] is None or (len(a["range"]) == 2 and a["range"][0] <= a["range"][1])
    host = {a["applies_to"][0]: a["value"] for a in items if a["name"] == "media.host_link"}
    assert host == {t: p.media["host-leaf"].kind for t, p in plans.items()}
    (length,) = [a for a in items if a["name"] == "media.host_link_length_m"]
    assert length["value"] == 5.0 and length["applies_to"] == ["infiniband", "roce"]
    assert set(HOST_LINK_MEDIA) >= {"auto", "dac", "acc", "aec", "aoc", "optics"}
