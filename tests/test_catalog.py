"""The packaged hardware catalog, the sourced defaults, and user catalog overrides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aifabric.errors import InputError
from aifabric.hardware.catalog import (
    CONFIDENCES,
    KINDS,
    Catalog,
    catalog_frame,
    default_leaf,
    default_value,
    load_catalog,
    load_defaults,
)

REQUIRED_IDS = {
    "switch": {
        "qm9700",
        "qm9790",
        "q3400",
        "q3200",
        "sn5600",
        "sn5400",
        "tomahawk5",
        "tomahawk4",
        "jericho3-ai",
        "arista-7060x6",
        "juniper-qfx5240",
        "cisco-n9364e-sg2",
        "dell-z9964f",
    },
    "nic": {"cx7-ib", "cx7-eth", "cx8-ib", "cx8-eth", "bf3", "thor2", "pollara400", "cx7-2x200-qsfp112"},
    "optic": {
        "osfp-800g-2xsr4",
        "osfp-800g-2xdr4",
        "osfp-800g-2xfr4",
        "osfp-400g-sr4",
        "osfp-400g-dr4",
        "qsfp112-400g-sr4",
        "osfp-800g-dr8",
        "osfp-800g-dr4",
    },
    "cable": {
        "dac-passive-400g",
        "dac-passive-800g",
        "lacc-800g",
        "lacc-xdr-800g",
        "aec-800g",
        "aoc-400g",
        "fiber-mmf-mpo",
        "fiber-smf-mpo",
    },
    "gpu": {"h100", "h200", "h800", "b200", "b300", "gb200-nvl72", "gb300-nvl72"},
}
PRICED = ("switch", "nic", "optic", "cable")
SOURCE_TAG = re.compile(r"^(S\d+[a-z]?|P\d+)$")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _tags(source: str | None) -> list[str]:
    return [t.strip() for t in (source or "").split(";") if t.strip()]


def _write(tmp_path: Path, text: str, name: str = "mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- the packaged catalog ------------------------------------------------------------------
def test_every_required_id_exists(catalog):
    """Every id the plan / cost code relies on is in the packaged catalog."""
    for kind, ids in REQUIRED_IDS.items():
        assert ids <= set(catalog.section(kind)), (kind, ids - set(catalog.section(kind)))


def test_ids_are_lowercase_and_match_their_keys(catalog):
    """Records are keyed by their own id, which is lowercase (what users type)."""
    for _kind, record in catalog.records():
        assert record.id == record.id.lower()
    for kind in KINDS:
        for rid, record in catalog.section(kind).items():
            assert rid == record.id


def test_every_record_and_field_source_is_listed_or_an_estimate_with_basis(catalog):
    """Each source tag (record-level or per field) is in `sources`; a record or field without
    a source is an estimate or derived value that carries a basis."""
    for kind, record in catalog.records():
        tags = _tags(record.source)
        if tags:
            assert all(t in catalog.sources for t in tags), (kind, record.id, tags)
        else:
            assert record.confidence in ("estimate", "derived", "input") and record.basis, (kind, record.id)
        for prefix in record.PROVENANCE:
            src = getattr(record, f"{prefix}_source")
            conf = getattr(record, f"{prefix}_confidence")
            basis = getattr(record, f"{prefix}_basis")
            for tag in _tags(src):
                assert tag in catalog.sources, (kind, record.id, prefix, tag)
            if conf in ("estimate", "derived", "input"):
                assert basis, (kind, record.id, prefix)
            if conf is None:
                assert src is None and basis is None, (kind, record.id, prefix)


def test_sources_list_only_used_tags(catalog):
    """The catalog's `sources` holds only tags some record cites (as a source or in a basis or
    note), and every tag cited in a basis or note is listed."""
    used = set()
    texts = []
    for _kind, record in catalog.records():
        used.update(_tags(record.source))
        texts += [record.basis or "", record.notes or ""]
        for prefix in record.PROVENANCE:
            used.update(_tags(getattr(record, f"{prefix}_source")))
            texts.append(getattr(record, f"{prefix}_basis") or "")
    for item in catalog.tco.values():
        used.update(_tags(item.source))
        texts.append(item.basis or "")
    used.update(re.findall(r"\b[SP]\d{1,3}[a-z]?\b", " ".join(texts)))
    assert used == set(catalog.sources), used ^ set(catalog.sources)
    assert all(SOURCE_TAG.match(t) for t in catalog.sources)


def test_every_priced_record_has_price_power_and_estimates_carry_a_basis(catalog):
    """Switches, NICs, optics and cables all have a non-null price and power (cables also a
    per-metre price); every estimated price or power says how it was derived."""
    for kind in PRICED:
        for record in catalog.section(kind).values():
            assert record.price_usd is not None and record.price_usd >= 0, record.id
            assert record.power_w is not None and record.power_w >= 0, record.id
            if kind == "cable":
                assert record.price_usd_per_m is not None, record.id
            for field in ("price", "power") + (("price_per_m",) if kind == "cable" else ()):
                if catalog.is_estimate(record, field):
                    assert getattr(record, f"{field}_basis") or record.basis, (record.id, field)
                    assert catalog.provenance(record, field).startswith(("estimate: ", "input: "))
                    if catalog.is_input(record, field):
                        assert record.price_range_usd is not None, record.id


def test_confidence_words_are_the_allowed_ones(catalog):
    """Confidence is one of high / medium / low / derived / estimate (user only in overrides)."""
    for _kind, record in catalog.records():
        assert record.confidence in CONFIDENCES and record.confidence != "user"


def test_qm9700_has_64_ndr_ports_in_32_twin_port_cages(catalog):
    """QM9700: 64 × 400G InfiniBand ports in 32 twin-port OSFP cages, 128 × 200G split mode."""
    qm = catalog.get("switch", "qm9700")
    assert (qm.technology, qm.ports, qm.port_rate_gbps) == ("infiniband", 64, 400)
    assert (qm.cages, qm.ports_per_cage) == (32, 2)
    assert [(m.ports, m.rate_gbps) for m in qm.port_modes] == [(128, 200)]
    assert qm.in_network_reduction == "SHARPv3"


def test_qm9700_price_is_the_street_price_midpoint(catalog):
    """QM9700 price is the 36k–50k USD range (S60, Aug 2024, low confidence); its midpoint is the
    point used, and the API says so."""
    qm = catalog.get("switch", "qm9700")
    assert qm.price_usd == 43000 and qm.price_point == "midpoint"
    assert catalog.price_range_usd(qm) == (36000, 50000)
    assert qm.price_date == "2024-08"
    assert not catalog.is_estimate(qm, "price") and not catalog.is_input(qm)
    assert catalog.provenance(qm, "price").startswith("S60 (low)")
    assert "midpoint 43,000 used" in catalog.price_basis(qm)
    info = catalog.price_info(qm)
    assert (info["low_usd"], info["high_usd"], info["point_is"], info["input"]) == (
        36000,
        50000,
        "midpoint",
        False,
    )
    assert catalog.is_estimate(qm, "power")


def test_sn5600_has_64_800g_ports_and_a_128_400g_mode(catalog):
    """SN5600: 64 × 800G Ethernet ports with a 128 × 400G breakout mode."""
    sn = catalog.get("switch", "sn5600")
    assert (sn.technology, sn.ports, sn.port_rate_gbps) == ("ethernet", 64, 800)
    assert (128, 400) in [(m.ports, m.rate_gbps) for m in sn.port_modes]


def test_gpu_numbers_match_the_facts(catalog):
    """GPU dense BF16 TFLOPS, HBM and NVLink per direction match hardware-facts §H."""
    h100, h200, b200 = (catalog.get("gpu", g) for g in ("h100", "h200", "b200"))
    assert h100.bf16_tflops == 989.4 and h100.fp8_tflops == 1978.9
    assert (h100.hbm_gbytes, h100.hbm_tbytes_per_s, h100.nvlink_gbytes_per_s, h100.tdp_w) == (
        80,
        3.35,
        450,
        700,
    )
    assert h200.bf16_tflops == 989 and h200.hbm_gbytes == 141
    assert b200.bf16_tflops == 2250 and b200.nvlink_gbytes_per_s == 900 and b200.tdp_w == 1000
    assert all(g.gpus_per_node == 8 for g in (h100, h200, b200))


def test_twin_port_optics_carry_two_400g_ports(catalog):
    """Switch-side 800G twin-port modules carry 2 × 400G; NIC-side 400G modules one port."""
    for oid in ("osfp-800g-2xsr4", "osfp-800g-2xdr4", "osfp-800g-2xfr4"):
        optic = catalog.get("optic", oid)
        assert (optic.rate_gbps, optic.ports, optic.port_rate_gbps, optic.side) == (800, 2, 400, "switch")
    assert catalog.get("optic", "osfp-400g-sr4").side == "nic"
    assert catalog.get("optic", "osfp-800g-2xsr4").reach_m == 50


def test_cable_delays_are_the_sourced_values(catalog):
    """Fibre propagates at 5.05 ns/m (S5) and DAC at 4.5 ns/m (S19); DAC reach ≤ 3 m."""
    assert catalog.get("cable", "fiber-mmf-mpo").delay_ns_per_m == 5.05
    dac = catalog.get("cable", "dac-passive-400g")
    assert dac.delay_ns_per_m == 4.5 and dac.max_reach_m <= 3
    assert dac.price_for_length(2) == dac.price_usd + 2 * dac.price_usd_per_m


def test_unknown_id_lists_the_known_ones(catalog):
    """get() with an unknown id is an InputError naming the kind and listing the known ids."""
    with pytest.raises(InputError) as err:
        catalog.get("switch", "qm9999")
    assert err.value.field == "switch" and err.value.value == "qm9999"
    assert "qm9700" in err.value.allowed and "sn5600" in err.value.allowed
    with pytest.raises(InputError, match="unknown catalog kind"):
        catalog.get("router", "x")


def test_packaged_catalog_is_cached_and_read_only(catalog):
    """The default catalog is loaded once and its mappings cannot be changed by callers."""
    assert load_catalog() is catalog
    with pytest.raises(TypeError):
        catalog.switches["x"] = catalog.switches["qm9700"]  # type: ignore[index]
    with pytest.raises(Exception):  # noqa: B017 - pydantic frozen-instance error
        catalog.get("switch", "qm9700").price_usd = 1  # type: ignore[misc]


def test_estimates_lists_estimated_prices_with_basis(catalog):
    """Catalog.estimates() lists each estimated price / power with its basis for the report."""
    rows = catalog.estimates()
    assert any(r["kind"] == "switch" and r["id"] == "sn5600" and r["field"] == "price" for r in rows)
    assert all(r["basis"] for r in rows)
    assert not any(r["id"] == "qm9700" and r["field"] == "price" for r in rows)


def test_catalog_frame_has_units_in_column_names(catalog):
    """catalog_frame gives one row per record with unit-bearing columns; GPUs their own columns."""
    frame = catalog_frame(catalog, "switch")
    assert list(frame.columns[:3]) == ["id", "kind", "name"]
    assert {"rate_gbps", "price_usd", "power_w", "price_confidence", "source"} <= set(frame.columns)
    assert len(frame) == len(catalog.switches)
    gpus = catalog_frame(catalog, "gpu")
    assert {"bf16_tflops", "nvlink_gbytes_per_s", "hbm_gbytes"} <= set(gpus.columns)
    assert gpus.set_index("id").loc["h100", "bf16_tflops"] == 989.4
    everything = catalog_frame(catalog)
    assert len(everything) == sum(len(catalog.section(k)) for k in KINDS)


# --- user overrides ------------------------------------------------------------------------
def test_override_updates_price_and_marks_it_user(tmp_path):
    """A user price without a source replaces the price; its provenance becomes the user file."""
    path = _write(tmp_path, "switches:\n  - {id: qm9700, price_usd: 30000}\n")
    cat = load_catalog(path)
    qm = cat.get("switch", "qm9700")
    assert qm.price_usd == 30000
    assert qm.price_source == f"user catalog {path}" and qm.price_confidence == "user"
    assert qm.price_basis is None
    assert cat.provenance(qm, "price") == f"user catalog {path} (user)"
    assert qm.ports == 64 and qm.power_w == load_catalog().get("switch", "qm9700").power_w
    assert load_catalog().get("switch", "qm9700").price_usd == 43000  # packaged one unchanged


def test_override_keeps_a_user_given_source(tmp_path):
    """A user price with its own price_source keeps that source."""
    path = _write(
        tmp_path, 'switches:\n  - {id: qm9700, price_usd: 30000, price_source: "our quote 2026-11"}\n'
    )
    qm = load_catalog(path).get("switch", "qm9700")
    assert qm.price_source == "our quote 2026-11" and qm.price_confidence == "user"


def test_override_adds_new_records_and_sources(tmp_path):
    """An unknown id with all required fields is added; user sources join the source list."""
    path = _write(
        tmp_path,
        """
sources: {Q1: "vendor quote 2026-11"}
nics:
  - id: my-nic
    name: Some 400G NIC
    technology: ethernet
    ports: 1
    port_rate_gbps: 400
    power_w: 20
    price_usd: 900
    price_source: Q1
""",
    )
    cat = load_catalog(path)
    nic = cat.get("nic", "my-nic")
    assert nic.price_usd == 900 and nic.confidence == "user"
    assert cat.sources["Q1"] == "vendor quote 2026-11"
    assert "cx7-ib" in cat.nics


def test_override_accepts_a_mapping_keyed_by_id(tmp_path):
    """A section may also be written as a mapping id → fields."""
    path = _write(tmp_path, "optics:\n  osfp-400g-sr4: {price_usd: 500}\n")
    assert load_catalog(path).get("optic", "osfp-400g-sr4").price_usd == 500


def test_override_cable_per_metre_price_gets_its_own_provenance(tmp_path):
    """Overriding a cable's per-metre price marks price_per_m (not price) as user-given."""
    path = _write(tmp_path, "cables:\n  - {id: fiber-mmf-mpo, price_usd_per_m: 1.5}\n")
    cable = load_catalog(path).get("cable", "fiber-mmf-mpo")
    assert cable.price_usd_per_m == 1.5 and cable.price_per_m_confidence == "user"
    assert cable.price_confidence == "estimate"


BAD_OVERRIDES = [
    # (file text, field path expected in the message, words of the allowed part)
    ("switches:\n  - {id: qm9700, price_usd: -5}\n", "switches[qm9700].price_usd", "≥ 0"),
    ("switches:\n  - {id: qm9700, price_usd: cheap}\n", "switches[qm9700].price_usd", "a number"),
    ("switches:\n  - {id: qm9700, pricee_usd: 1}\n", "switches[qm9700].pricee_usd", "price_usd"),
    ("switches:\n  - {id: qm9700, technology: myrinet}\n", "switches[qm9700].technology", "infiniband"),
    (
        "switches:\n  - {id: qm9700, port_modes: [{ports: 128, speed: 200}]}\n",
        "switches[qm9700].port_modes[0]",
        "rate_gbps",
    ),
    ("routers:\n  - {id: x}\n", "routers", "switches"),
    ("switches:\n  - {id: new-switch, name: X}\n", "switches[new-switch].", "required for a new record"),
    ("switches:\n  - {price_usd: 1}\n", "switches[0].id", "lowercase id"),
    ("switches: 5\n", "switches", "a list"),
    ("nics:\n  - {id: cx7-ib, power_w: 30, power_confidence: estimate}\n", "nics[cx7-ib]", None),
    ("gpus:\n  - {id: h100, price_usd: -1}\n", "gpus[h100].price_usd", "≥ 0"),
    ("switches:\n  - {id: qm9700, price_range_usd: [50000, 40000]}\n", "switches[qm9700]", None),
    ("switches:\n  - {id: qm9700, price_usd: 1, price_range_usd: [5, 9]}\n", "switches[qm9700]", None),
    ("switches:\n  - {id: sn5600, price_input: true, price_usd: 5}\n", "switches[sn5600]", None),
    ("tco:\n  pue: {value: -2}\n", "tco.pue", None),
    ("tco:\n  pue: {range: [2, 1]}\n", "tco.pue", None),
    ("tco: [1, 2]\n", "tco", None),
    ("schema_version: 2\n", "schema_version", "1"),
    ("- just\n- a list\n", "(top level)", "switches"),
    ("switches:\n  - {id: qm9700, price_usd: 1}\n  - {id: qm9700, price_usd: 2}\n", "switches[qm9700]", None),
    ("sources: [a, b]\n", "sources", None),
]


@pytest.mark.parametrize(("text", "field", "allowed"), BAD_OVERRIDES)
def test_bad_override_names_file_field_and_what_is_allowed(tmp_path, text, field, allowed):
    """Every kind of bad override is one InputError line naming the file, the field path and
    (where there is one) what is allowed — never a traceback, never silently ignored."""
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_catalog(path)
    message = str(err.value)
    assert message.startswith(f"{path}: "), message
    assert field in message, message
    if allowed:
        assert allowed in message, message
    assert "\n" not in message


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    """A YAML syntax error names the file and the line / column of the problem."""
    path = _write(tmp_path, "switches:\n  - {id: qm9700, price_usd: 3\n")
    with pytest.raises(InputError) as err:
        load_catalog(path)
    assert str(err.value).startswith(f"{path}: line ") and "YAML syntax error" in str(err.value)


def test_unreadable_or_empty_file_is_an_input_error(tmp_path):
    """A missing file, a directory or an empty file is an InputError naming the file."""
    for target in (tmp_path / "missing.yaml", tmp_path):
        with pytest.raises(InputError) as err:
            load_catalog(target)
        assert str(err.value).startswith(f"{target}: catalog: cannot read catalog file")
    with pytest.raises(InputError, match="empty"):
        load_catalog(_write(tmp_path, "", "empty.yaml"))


def test_several_bad_fields_are_all_reported(tmp_path):
    """Several problems in one file are all collected (InputErrors.lines), not just the first."""
    path = _write(tmp_path, "switches:\n  - {id: qm9700, price_usd: -1, power_w: -2}\n")
    with pytest.raises(InputError) as err:
        load_catalog(path)
    lines = err.value.lines()  # type: ignore[attr-defined]
    assert any("price_usd" in line for line in lines) and any("power_w" in line for line in lines)


# --- defaults ------------------------------------------------------------------------------
def _leaves(node, path=""):
    if isinstance(node, dict) and "value" in node:
        yield path, node
    elif isinstance(node, dict):
        for key, child in node.items():
            yield from _leaves(child, f"{path}.{key}" if path else str(key))


def test_default_value_of_known_paths():
    """default_value reads sourced numbers by dotted path, also inside a leaf's value mapping."""
    assert default_value("dcqcn.nvidia-firmware.rate_ai") == 5
    assert default_value("dcqcn.nvidia-firmware.rate_hai") == 50
    assert default_value("dcqcn.ns3-mellanox.rate_ai") == 20
    assert default_value("dcqcn.ns3-mellanox.rate_hai") == 200
    assert default_value("dcqcn.paper.g") == 1 / 256
    assert default_value("ecn.nvidia-cumulus.kmin") == 150000
    assert default_value("ecn.ns3-mellanox.kmax") == 1600000
    assert default_value("hpcc.eta") == 0.95
    assert default_value("pfc.static_xoff") == 15 and default_value("pfc.static_xon") == 12
    assert default_value("pfc.cable_length") == {"host_leaf": 5, "leaf_spine": 40, "spine_core": 300}
    assert default_value("pfc.asic.spectrum-4.cell_bytes") == 192
    assert default_value("pfc.pause_quanta_by_speed.400") == 905
    assert default_value("latency.fiber_delay_per_m") == 5.05
    assert default_value("ib.credit_unit") == 64
    assert default_value("nccl.hw_latency.net.ring.simple") == 14.0
    assert default_value("nccl.busbw_factor.all-reduce") == "2*(n-1)/n"
    assert default_value("mfu.planning_default") == 0.4
    assert default_leaf("latency.ib_switch_hop")["confidence"] == "low"


def test_default_value_unknown_path_lists_the_choices():
    """An unknown path is an InputError listing what exists at that level."""
    with pytest.raises(InputError) as err:
        default_value("dcqcn.nvidia-firmware.rate_xx")
    assert err.value.field == "dcqcn.nvidia-firmware.rate_xx" and "rate_ai" in err.value.allowed
    with pytest.raises(InputError, match="section"):
        default_value("dcqcn.paper")


def test_every_default_leaf_is_sourced_or_explained():
    """Each defaults leaf has a unit and a confidence; its source tags are listed in `sources`;
    estimates and derived values carry a basis; null values say why in a note."""
    data = load_defaults()
    sources = data["sources"]
    leaves = list(_leaves({k: v for k, v in data.items() if k not in ("sources", "schema_version")}))
    assert len(leaves) > 100
    for path, leaf in leaves:
        assert set(leaf) <= {"value", "unit", "source", "confidence", "basis", "note"}, path
        assert "unit" in leaf and "confidence" in leaf and "source" in leaf, path
        for tag in _tags(leaf["source"]):
            assert tag in sources, (path, tag)
        if leaf["value"] is None:
            assert leaf.get("note"), path
            continue
        assert leaf["confidence"] in ("high", "medium", "low", "derived", "estimate"), path
        if leaf["confidence"] in ("estimate", "derived"):
            assert leaf.get("basis"), path
        else:
            assert _tags(leaf["source"]), path


def test_load_defaults_returns_a_copy():
    """Changing the dict load_defaults() returns does not change later reads."""
    data = load_defaults()
    data["hpcc"]["eta"]["value"] = 0.5
    assert default_value("hpcc.eta") == 0.95


# --- cages, lanes and cooling (issue 14) --------------------------------------------------------
def _switch_cage_fits(catalog, optic) -> list[str]:
    from aifabric.hardware.catalog import module_fits_cage

    return [
        s.id
        for s in catalog.switches.values()
        if not module_fits_cage(
            optic,
            form_factor=s.cage_form_factor,
            lanes=s.lanes_per_cage,
            lane_rates_gbps=s.lane_rates_gbps,
            cooling=s.cage_cooling,
        )
    ]


def _nic_cage_fits(catalog, optic) -> list[str]:
    from aifabric.hardware.catalog import module_fits_cage

    out = []
    for n in catalog.nics.values():
        lanes = 8 if n.form_factor == "QSFP-DD" else 4  # as design.cost.server_cage
        if not module_fits_cage(
            optic,
            form_factor=n.form_factor,
            lanes=lanes,
            lane_rates_gbps=(n.lane_rate_gbps,),
            cooling="flat-top",
        ):
            out.append(n.id)
    # DGX-class twin-port server cage (P9): OSFP, 8 × 100G lanes, flat top
    if not module_fits_cage(optic, form_factor="OSFP", lanes=8, lane_rates_gbps=(100,), cooling="flat-top"):
        out.append("dgx-twin-port")
    return out


def test_every_switch_and_nic_declares_its_cage(catalog):
    """Every switch says its cage form factor, lanes, lane rates and cooling; every NIC its form
    factor and lane rate; lanes × lane rate covers the cage's ports."""
    for s in catalog.switches.values():
        assert s.cage_form_factor and s.lanes_per_cage and s.lane_rates_gbps and s.cage_cooling, s.id
        assert s.cages * s.lanes_per_cage * max(s.lane_rates_gbps) >= s.ports * s.port_rate_gbps, s.id
    for n in catalog.nics.values():
        assert n.form_factor and n.lane_rate_gbps and n.port_rate_gbps % n.lane_rate_gbps == 0, n.id


def test_every_module_fits_a_cage_by_lane_rate_form_factor_and_cooling(catalog):
    """Each transceiver fits at least one catalog cage, and only cages with its form factor, lane
    count, lane rate and top: finned modules only in air-cooled switch cages, flat-top modules in
    NIC / DGX server cages; QSFP112 never in a switch; single-port 4-lane OSFP never in a twin-port
    switch cage (P9); 200G-lane modules only in 200G-SerDes switches and ConnectX-8 (P10)."""
    two_hundred = {s.id for s in catalog.switches.values() if 200 in s.lane_rates_gbps}
    assert {"q3400", "q3200", "dell-z9964f"} <= two_hundred
    assert not {"sn5600", "tomahawk5", "qm9700"} & two_hundred
    for optic in catalog.optics.values():
        switches = _switch_cage_fits(catalog, optic)
        nics = _nic_cage_fits(catalog, optic)
        assert switches or nics, optic.id
        for sid in switches:
            s = catalog.switches[sid]
            assert s.cage_form_factor == optic.form_factor and s.lanes_per_cage == optic.lanes, (
                optic.id,
                sid,
            )
            assert optic.lane_rate_gbps in s.lane_rates_gbps, (optic.id, sid)
            assert s.cage_cooling in ("any", optic.cooling), (optic.id, sid)
        if optic.cooling == "finned":
            assert switches and not nics, optic.id
        if optic.cooling == "flat-top":
            assert nics and not switches, optic.id
        if optic.form_factor == "QSFP112":
            assert not switches, optic.id
        if optic.form_factor == "OSFP" and optic.lanes == 4:
            assert not [s for s in switches if catalog.switches[s].ports_per_cage == 2], optic.id
        if optic.lane_rate_gbps == 200:
            assert set(switches) <= two_hundred, optic.id
            # ConnectX-8 (P10) and the 4 × 200G version of Broadcom Thor Ultra (P46)
            assert set(nics) <= {"cx8-ib", "thor-ultra"}, optic.id


def test_xdr_has_no_multimode_optics_and_no_passive_copper(catalog):
    """No 200G-lane multimode optic, passive DAC or AOC exists in the catalog (P10): XDR links
    use single-mode optics or linear active copper only."""
    for optic in catalog.optics.values():
        if optic.lane_rate_gbps == 200:
            assert optic.media == "smf", optic.id
    for cable in catalog.cables.values():
        if cable.lane_rate_gbps == 200:
            assert cable.kind == "lacc", cable.id


def test_no_price_is_another_products_price(catalog):
    """No price basis says a product is priced "as", "equal to" or "assumed equal to" another
    product, and every input range has a reason and the input flag (issue 14)."""
    banned = ("assumed equal to", "same as the qm9700", "qm9700 midpoint", "× the qm9700", "scaled by")
    for _kind, record in catalog.records():
        basis = (getattr(record, "price_basis", None) or "").lower()
        assert not any(b in basis for b in banned), (record.id, basis)
        if getattr(record, "price_input", False):
            assert record.price_confidence == "input" and record.price_range_usd, record.id


def test_price_summary_counts_sourced_estimates_and_inputs(catalog):
    """price_summary() splits the priced records into sourced, estimate and input; the catalog
    has all three kinds."""
    summary = catalog.price_summary()
    assert summary["sourced"] > 0 and summary["estimate"] > 0 and summary["input"] > 0
    priced = sum(len(catalog.section(k)) for k in PRICED)
    gpus_priced = sum(1 for g in catalog.gpus.values() if g.price_usd is not None)
    assert sum(summary.values()) == priced + gpus_priced


def test_override_with_a_quote_replaces_the_input_range(tmp_path):
    """A user price for an input-priced switch drops the packaged range and input flag and is
    marked user; a user range gets its midpoint."""
    path = _write(
        tmp_path,
        "switches:\n  - {id: sn5600, price_usd: 41000}\n  - {id: q3400, price_range_usd: [90000, 110000]}\n",
    )
    cat = load_catalog(path)
    sn, q = cat.get("switch", "sn5600"), cat.get("switch", "q3400")
    assert sn.price_usd == 41000 and sn.price_range_usd is None and not cat.is_input(sn)
    assert cat.price_range_usd(sn) == (41000, 41000) and sn.price_confidence == "user"
    assert q.price_usd == 100000 and q.price_point == "midpoint" and not cat.is_input(q)


def test_tco_section_has_sourced_or_input_values(tmp_path):
    """Every TCO parameter has a unit and a value; estimates and inputs say their basis; a user
    catalog's tco: entry replaces a value and marks it user."""
    cat = load_catalog()
    for key, item in cat.tco.items():
        assert item.unit and item.value is not None, key
        if item.confidence in ("estimate", "input", "derived"):
            assert item.basis, key
    assert cat.tco_input("electricity_usd_per_kwh").value == pytest.approx(0.0806)
    path = _write(
        tmp_path, "tco:\n  pue: 1.15\n  electricity_usd_per_kwh: {value: 0.12, source: our PPA 2026}\n"
    )
    mine = load_catalog(path)
    assert mine.tco["pue"].value == 1.15 and mine.tco["pue"].confidence == "user"
    assert mine.tco["electricity_usd_per_kwh"].source == "our PPA 2026"
    assert (
        mine.tco["electricity_usd_per_kwh"].date is None and mine.tco["electricity_usd_per_kwh"].range is None
    )
    with pytest.raises(InputError, match="unknown TCO parameter"):
        cat.tco_input("coffee")


def test_input_priced_switch_reports_its_range_and_flag(catalog):
    """A quote-only switch (SN5600) is an input: its point is the range midpoint, its basis line
    says INPUT, and price_info carries the range and the flag."""
    sn = catalog.get("switch", "sn5600")
    assert catalog.is_input(sn) and catalog.is_estimate(sn)
    low, high = catalog.price_range_usd(sn)
    assert sn.price_usd == (low + high) / 2 and sn.price_point == "midpoint"
    assert "INPUT: no public price" in catalog.price_basis(sn)
    info = catalog.price_info(sn)
    assert info["input"] and (info["low_usd"], info["high_usd"]) == (low, high)
    assert catalog.provenance(sn, "price").startswith("input: ")
