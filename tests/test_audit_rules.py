"""Each audit rule: a real SONiC config with one injected mistake fires exactly that rule, on
the right device and object. Baselines (the unmodified real configs) have no error."""

from __future__ import annotations

import json

import pytest

from aifabric.audit import RULES
from test_audit_fixtures import (
    ARISTA_INI,
    REAL,
    SN5600_INI,
    arista,
    audit_cfgs,
    errors,
    generated,
    sn2700,
)


def _pair(tmp_path, mutate, **kw):
    """leaf-1 and leaf-2: the real Arista T1; ``mutate`` edits leaf-2."""
    a, b = arista("leaf-1"), arista("leaf-2")
    mutate(b)
    return audit_cfgs(tmp_path, {"leaf-1": a, "leaf-2": b}, ini=ARISTA_INI, **kw)


def _one(tmp_path, mutate, cfg=None, ini=ARISTA_INI, **kw):
    cfg = cfg if cfg is not None else arista("leaf-1")
    mutate(cfg)
    return audit_cfgs(tmp_path, {"leaf-1": cfg}, ini=ini, **kw)


def test_rule_registry_is_keyed_by_id():
    """RULES maps each rule id to its rule, with a severity and a one-line summary."""
    assert all(
        r.id == k and r.severity in ("error", "warning", "info") and r.summary for k, r in RULES.items()
    )
    assert "pfc-threshold-mismatch" in RULES


def test_pfc_priority_mismatch_in_role(tmp_path):
    """Ethernet0 of leaf-2 loses lossless priority 4 → pfc-priority-mismatch on leaf-2 / that port."""
    r = _pair(tmp_path, lambda c: c["PORT_QOS_MAP"]["Ethernet0"].update(pfc_enable="3"))
    assert errors(r) == {("pfc-priority-mismatch", "leaf-2", "PORT_QOS_MAP|Ethernet0")}


def test_pfc_priority_link_mismatch(tmp_path):
    """The two ends of a DEVICE_NEIGHBOR link disagree on pfc_enable → pfc-priority-link-mismatch."""
    a, b = arista("leaf-1"), arista("spine-1", role="SpineRouter")
    a["DEVICE_NEIGHBOR"] = {"Ethernet0": {"name": "spine-1", "port": "Ethernet0"}}
    b["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3"
    r = audit_cfgs(tmp_path, {"a": a, "b": b}, ini=ARISTA_INI)
    # spine-1's Ethernet0 also differs from its other AZURE-map ports: the same root cause seen
    # from inside the switch
    assert errors(r) == {
        ("pfc-priority-link-mismatch", "leaf-1", "PORT_QOS_MAP|Ethernet0"),
        ("pfc-priority-port-mismatch", "spine-1", "PORT_QOS_MAP|Ethernet0"),
    }
    f = next(f for f in r.findings if f.rule == "pfc-priority-link-mismatch")
    assert f.evidence["peer_pfc_enable"] == "3" and f.evidence["dscp_lossless_on_one_end_only"] == "4"


def test_qos_map_inconsistent(tmp_path):
    """leaf-2's AZURE DSCP map sends lossless DSCP 2 to TC1 → qos-map-inconsistent (error)."""
    r = _pair(tmp_path, lambda c: c["DSCP_TO_TC_MAP"]["AZURE"].update({"2": "1"}))
    assert errors(r) == {("qos-map-inconsistent", "leaf-2", "DSCP_TO_TC_MAP|AZURE")}


def test_roce_dscp_lossy_when_nic_dscp_given(tmp_path):
    """With --nic-dscp 3 the Azure maps are right; sending DSCP 3 to TC1 in AZURE_UPLINK makes
    RoCE lossy on the uplinks → roce-dscp-lossy (error because the DSCP was stated)."""
    r0 = _one(tmp_path, lambda c: None, nic_dscp=3)
    assert errors(r0) == set()
    r = _one(tmp_path, lambda c: c["DSCP_TO_TC_MAP"]["AZURE_UPLINK"].update({"3": "1"}), nic_dscp=3)
    assert errors(r) == {("roce-dscp-lossy", "leaf-1", "DSCP_TO_TC_MAP|AZURE_UPLINK")}


def test_roce_dscp_not_judged_when_nic_side_unstated(tmp_path):
    """Without --nic-dscp nothing is assumed about the NICs: no roce-dscp-lossy finding on the
    Azure maps (DSCP 26 → TC1 is lossy there, but nobody said the NICs send 26); stating
    --nic-dscp 26 makes it an error on both maps."""
    r = _one(tmp_path, lambda c: None)
    assert not [f for f in r.findings if f.rule == "roce-dscp-lossy"]
    r26 = _one(tmp_path, lambda c: None, nic_dscp=26)
    assert errors(r26) == {
        ("roce-dscp-lossy", "leaf-1", "DSCP_TO_TC_MAP|AZURE"),
        ("roce-dscp-lossy", "leaf-1", "DSCP_TO_TC_MAP|AZURE_UPLINK"),
    }


def test_lossless_dscp_lossy_at_peer(tmp_path):
    """Same pfc_enable on both ends, but spine-1's port maps DSCP 4 to lossy TC1 → reported on
    spine-1 with the map object."""
    a, b = arista("leaf-1"), arista("spine-1", role="SpineRouter")
    a["DEVICE_NEIGHBOR"] = {"Ethernet0": {"name": "spine-1", "port": "Ethernet0"}}
    b["DSCP_TO_TC_MAP"]["AZURE_UPLINK_B"] = dict(b["DSCP_TO_TC_MAP"]["AZURE_UPLINK"], **{"4": "1"})
    b["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] = "AZURE_UPLINK_B"
    r = audit_cfgs(tmp_path, {"a": a, "b": b}, ini=ARISTA_INI)
    assert errors(r) == {("lossless-dscp-lossy-at-peer", "spine-1", "DSCP_TO_TC_MAP|AZURE_UPLINK_B")}


def test_tc_pg_mismatch(tmp_path):
    """Lossless TC3 sent to PG0 (no headroom) → tc-pg-mismatch on the TC→PG map."""
    r = _one(tmp_path, lambda c: c["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"].update({"3": "0"}))
    assert errors(r) == {("tc-pg-mismatch", "leaf-1", "TC_TO_PRIORITY_GROUP_MAP|AZURE")}


def test_cnp_not_strict_fires_and_clears(tmp_path):
    """Only with the NICs' CNP DSCP stated: CNP 48 → TC7 → queue 7 on DWRR gives a cnp-not-strict
    warning on QUEUE|<ports>|7; a STRICT scheduler on queue 7 clears it."""
    assert not [f for f in _one(tmp_path, lambda c: None).findings if f.rule == "cnp-not-strict"]
    r = _one(tmp_path, lambda c: None, cnp_dscp=48)
    f = [f for f in r.findings if f.rule == "cnp-not-strict"]
    assert len(f) == 1 and f[0].object.endswith("|7") and f[0].severity == "warning"

    def strict(c):
        c["SCHEDULER"]["scheduler.cnp"] = {"type": "STRICT"}
        for k in c["QUEUE"]:
            if k.endswith("|7"):
                c["QUEUE"][k]["scheduler"] = "scheduler.cnp"

    assert not [f for f in _one(tmp_path, strict, cnp_dscp=48).findings if f.rule == "cnp-not-strict"]


def test_pfc_threshold_mismatch_two_batches(tmp_path):
    """Two SN2700 of one role (flat redis-dump form); leaf-b's 100G/300m profile has a different
    xoff → pfc-threshold-mismatch on leaf-b with the spread in the evidence."""
    a, b = sn2700("leaf-a"), sn2700("leaf-b")
    b["BUFFER_PROFILE|pg_lossless_100000_300m_profile"]["xoff"] = "60416"
    r = audit_cfgs(tmp_path, {"a": a, "b": b, "c": sn2700("leaf-c")})
    assert errors(r) == {
        ("pfc-threshold-mismatch", "leaf-b", "BUFFER_PROFILE|pg_lossless_100000_300m_profile")
    }
    f = next(f for f in r.findings if f.rule == "pfc-threshold-mismatch")
    assert "spread 18432" in f.evidence["xoff"]


def test_headroom_below_physical_minimum(tmp_path):
    """SN2700 100G/300m xoff cut to 40960 B, below cable round trip + 2 MTU → headroom-too-small."""
    r = _one(
        tmp_path,
        lambda c: c["BUFFER_PROFILE|pg_lossless_100000_300m_profile"].update(xoff="40960"),
        cfg=sn2700("leaf-a"),
        ini=None,
    )
    # SN2700 has no PORT_QOS_MAP: give the real pfc_enable "3,4" that its BUFFER_PG implies
    assert errors(r) == set()  # without PORT_QOS_MAP no port is known lossless
    cfg = sn2700("leaf-a")
    for port in [k.split("|")[1] for k in cfg if k.startswith("PORT|")]:
        cfg[f"PORT_QOS_MAP|{port}"] = {"pfc_enable": "3,4", "pfcwd_sw_enable": "3,4"}
    cfg["BUFFER_PROFILE|pg_lossless_100000_300m_profile"]["xoff"] = "40960"
    cfg["DEVICE_METADATA|localhost"]["default_pfcwd_status"] = "enable"
    r = audit_cfgs(tmp_path, {"a": cfg})
    assert errors(r) == {("headroom-too-small", "leaf-a", "BUFFER_PROFILE|pg_lossless_100000_300m_profile")}


def test_headroom_below_sonic_formula_on_spectrum4(tmp_path):
    """A Spectrum-4 (SN5600) 400G/5m profile with xoff 200000 B (formula: 230400) → headroom-too-small."""
    cfg = generated()
    cfg["DEVICE_METADATA"]["localhost"]["platform"] = "x86_64-nvidia_sn5600-r0"
    assert errors(audit_cfgs(tmp_path, {"a": cfg})) == set()
    cfg["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]["xoff"] = "200000"
    r = audit_cfgs(tmp_path, {"a": cfg})
    assert errors(r) == {("headroom-too-small", "leaf-1", "BUFFER_PROFILE|pg_lossless_400000_5m_profile")}


def test_generated_config_matches_sn5600_table_within_rounding(tmp_path):
    """The formula profile with the real SN5600 table bound: no error (1 KiB rounding allowed),
    one pg-profile-table-mismatch warning for the 1 KiB difference."""
    cfg = generated()
    cfg["DEVICE_METADATA"]["localhost"]["platform"] = "x86_64-nvidia_sn5600-r0"
    r = audit_cfgs(tmp_path, {"a": cfg}, ini=SN5600_INI)
    assert errors(r) == set()
    assert [f.rule for f in r.findings if f.severity == "warning"] == ["pg-profile-table-mismatch"]


def test_pg_lookup_missing(tmp_path):
    """A 10G port on the 7260CX3, whose table has no 10G rows (sonic-buildimage#5837) → pg-lookup-missing."""
    r = _one(tmp_path, lambda c: c["PORT"]["Ethernet0"].update(speed="10000"))
    assert errors(r) == {("pg-lookup-missing", "leaf-1", "BUFFER_PROFILE|pg_lossless_10000_300m_profile")}


@pytest.mark.parametrize("how", ["missing", "0m"])
def test_cable_length_missing(tmp_path, how):
    """A lossless port without a cable length (or with 0m) → cable-length-missing on CABLE_LENGTH|AZURE."""

    def mutate(c):
        if how == "missing":
            del c["CABLE_LENGTH"]["AZURE"]["Ethernet0"]
        else:
            c["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "0m"

    r = _one(tmp_path, mutate)
    assert errors(r) == {("cable-length-missing", "leaf-1", "CABLE_LENGTH|AZURE")}
    assert next(f for f in r.findings if f.rule == "cable-length-missing").evidence["ports"] == "Ethernet0"


def test_ecn_disabled_on_lossless_queue(tmp_path):
    """Lossless queue 3 of Ethernet0 loses its wred_profile → ecn-disabled on QUEUE|Ethernet0|3."""
    r = _one(tmp_path, lambda c: c["QUEUE"]["Ethernet0|3"].pop("wred_profile"))
    assert errors(r) == {("ecn-disabled", "leaf-1", "QUEUE|Ethernet0|3")}


def test_ecn_none_on_profile_judged_by_intent(tmp_path):
    """The only lossless WRED profile set to ecn_none (no queue marks ECN): under --intent dcqcn an
    ecn-disabled error on every lossless queue group; with no intent stated a warning (nothing
    says the design uses ECN); under --intent pfc-only information."""

    def mutate(c):
        c["WRED_PROFILE"]["AZURE_LOSSLESS"].update(ecn="ecn_none")

    r = _one(tmp_path, mutate, intent="dcqcn")
    assert {x[0] for x in errors(r)} == {"ecn-disabled"}
    for intent, sev in (("auto", "warning"), ("pfc-only", "info")):
        f = [f for f in _one(tmp_path, mutate, intent=intent).findings if f.rule == "ecn-disabled"]
        assert f and {x.severity for x in f} == {sev}, intent


def test_ecn_kmin_ge_kmax(tmp_path):
    """green Kmin 12 MB above Kmax 10 MB → ecn-kmin-ge-kmax on WRED_PROFILE|AZURE_LOSSLESS."""
    r = _one(tmp_path, lambda c: c["WRED_PROFILE"]["AZURE_LOSSLESS"].update(green_min_threshold="12000000"))
    assert errors(r) == {("ecn-kmin-ge-kmax", "leaf-1", "WRED_PROFILE|AZURE_LOSSLESS")}


def test_ecn_above_pfc_threshold(tmp_path):
    """Shrinking ingress_lossless_pool to 3 MB puts the PFC XOFF point (~1.5 MB) below Kmin 2 MB →
    ecn-above-pfc-threshold: PFC fires before ECN."""
    r = _one(tmp_path, lambda c: c["BUFFER_POOL"]["ingress_lossless_pool"].update(size="3000000", xoff="0"))
    assert errors(r) == {("ecn-above-pfc-threshold", "leaf-1", "WRED_PROFILE|AZURE_LOSSLESS")}


def test_wred_probability_range(tmp_path):
    """green_drop_probability 150 % → wred-probability-range."""
    r = _one(tmp_path, lambda c: c["WRED_PROFILE"]["AZURE_LOSSLESS"].update(green_drop_probability="150"))
    assert errors(r) == {("wred-probability-range", "leaf-1", "WRED_PROFILE|AZURE_LOSSLESS")}


def test_pfcwd_disabled_by_empty_sw_enable(tmp_path):
    """pfcwd_sw_enable "" on a lossless port → pfcwd-disabled on that PORT_QOS_MAP entry."""
    r = _one(tmp_path, lambda c: c["PORT_QOS_MAP"]["Ethernet0"].update(pfcwd_sw_enable=""))
    assert errors(r) == {("pfcwd-disabled", "leaf-1", "PORT_QOS_MAP|Ethernet0")}


def test_pfcwd_disabled_by_default_status(tmp_path):
    """default_pfcwd_status disable with no PFC_WD entries → pfcwd-disabled on DEVICE_METADATA."""
    r = _one(tmp_path, lambda c: c["DEVICE_METADATA"]["localhost"].update(default_pfcwd_status="disable"))
    assert errors(r) == {("pfcwd-disabled", "leaf-1", "DEVICE_METADATA|localhost")}


def test_pfcwd_missing_port_entry(tmp_path):
    """The generated config with Ethernet8's PFC_WD entry deleted → pfcwd-disabled on PFC_WD|Ethernet8."""
    cfg = generated()
    del cfg["PFC_WD"]["Ethernet8"]
    assert errors(audit_cfgs(tmp_path, {"a": cfg})) == {("pfcwd-disabled", "leaf-1", "PFC_WD|Ethernet8")}


PFCWD_CASES = json.loads((REAL / "sonic-mgmt" / "pfc_config_params.json").read_text())


@pytest.mark.parametrize("case", sorted(PFCWD_CASES))
def test_pfcwd_values_from_sonic_mgmt(tmp_path, case):
    """Each sonic-mgmt PFC-WD test vector injected into PFC_WD|Ethernet0: valid 'forward' → a
    pfcwd-action warning; out-of-range or bad action → pfcwd-invalid; non-numeric → bad input."""
    v = PFCWD_CASES[case]
    cfg = generated()
    cfg["PFC_WD"]["Ethernet0"].update(
        action=v["pfc_wd_action"],
        detection_time=str(v["pfc_wd_detection_time"]),
        restoration_time=str(v["pfc_wd_restoration_time"]),
    )
    r = audit_cfgs(tmp_path, {"a": cfg})
    if case in ("pfc_wd_invalid_detect_time", "pfc_wd_invalid_restore_time"):
        assert r.devices == [] and len(r.errors) == 1
        assert "PFC_WD|Ethernet0|" in str(r.errors[0]) and "a.json" in str(r.errors[0])
    elif case == "pfc_wd_fwd_action":
        assert errors(r) == set()
        assert [(f.rule, f.object) for f in r.findings if f.severity == "warning"] == [
            ("pfcwd-action", "PFC_WD|Ethernet0")
        ]
    else:
        assert errors(r) == {("pfcwd-invalid", "leaf-1", "PFC_WD|Ethernet0")}


def test_mtu_mismatch_across_link(tmp_path):
    """leaf-a:Ethernet0 ↔ leaf-b:Ethernet0 with MTU 9100 vs 1500 → mtu-mismatch on leaf-a / PORT|Ethernet0."""
    a, b = sn2700("leaf-a"), sn2700("leaf-b")
    a["DEVICE_NEIGHBOR|Ethernet0"] = {"name": "leaf-b", "port": "Ethernet0"}
    b["PORT|Ethernet0"]["mtu"] = "1500"
    r = audit_cfgs(tmp_path, {"a": a, "b": b})
    assert errors(r) == {("mtu-mismatch", "leaf-a", "PORT|Ethernet0")}


def test_buffer_pool_oversubscribed(tmp_path):
    """SN2700 ingress_lossless_pool shrunk to 1 MB: 64 lossless PGs reserve 1.2 MB and the 2.1 MB
    shared headroom pool no longer fits → buffer-pool-oversubscribed on that pool."""
    r = _one(
        tmp_path,
        lambda c: c["BUFFER_POOL|ingress_lossless_pool"].update(size="1000000"),
        cfg=sn2700("leaf-a"),
        ini=None,
    )
    assert errors(r) == {("buffer-pool-oversubscribed", "leaf-a", "BUFFER_POOL|ingress_lossless_pool")}
    assert len([f for f in r.findings if f.rule == "buffer-pool-oversubscribed"]) == 2


def test_pfc_off_on_a_pg_with_lossless_headroom(tmp_path):
    """The real SN2700 running config (lossless BUFFER_PG 3-4 on every port) with PORT_QOS_MAP
    pfc_enable "3,4", except Ethernet0 with "3" → pfc-off-on-headroom-pg on PORT_QOS_MAP|Ethernet0:
    PG 4 keeps its headroom but PFC never pauses priority 4."""
    cfg = sn2700("leaf-a")
    for port in [k.split("|")[1] for k in cfg if k.startswith("PORT|")]:
        cfg[f"PORT_QOS_MAP|{port}"] = {"pfc_enable": "3,4", "pfcwd_sw_enable": "3,4"}
    cfg["DEVICE_METADATA|localhost"]["default_pfcwd_status"] = "enable"
    assert errors(audit_cfgs(tmp_path, {"a": cfg})) == set()
    cfg["PORT_QOS_MAP|Ethernet0"]["pfc_enable"] = "3"
    r = audit_cfgs(tmp_path, {"a": cfg})
    assert errors(r) == {("pfc-off-on-headroom-pg", "leaf-a", "PORT_QOS_MAP|Ethernet0")}
    assert r.roce_classes["leaf-a"]["headroom_pgs"] == [3, 4]
