"""Issue 17 "Done when": SONiC's shipped Azure QoS + buffer configs audit with no error and no
RoCE-DSCP warning, and each single mutation of them is reported on the right switch and object.

The fleet is two switches of one role built from the real sonic-buildimage Arista 7260CX3 T1
rendering (qos + buffers + its pg_profile_lookup.ini, with DEVICE_METADATA and 100G PORT entries
as the running CONFIG_DB has them); the xoff mutation uses the real SN2700 running config (it is
the fixture with pg_lossless profiles); the cable-length mutation uses the generated Spectrum-4
config (the only one with 5 m cables).
"""

from __future__ import annotations

from test_audit_fixtures import ARISTA_INI, arista, audit_cfgs, errors, generated, sn2700


def _fleet(tmp_path, mutate, **kw):
    a, b = arista("leaf-1"), arista("leaf-2")
    mutate(b)
    return audit_cfgs(tmp_path, {"leaf-1": a, "leaf-2": b}, ini=ARISTA_INI, **kw)


def _found(report, rule, device, obj, severities=("error", "warning")):
    return [
        f
        for f in report.findings
        if f.rule == rule and f.device == device and f.object == obj and f.severity in severities
    ]


def test_baseline_pair_no_error_no_roce_dscp_warning(tmp_path):
    """The unmutated pair: no error, no roce-dscp-lossy / cnp warning, no fleet difference, and the
    inferred RoCE classes are DSCP 3,4 on both switches."""
    r = _fleet(tmp_path, lambda c: None)
    assert errors(r) == set()
    assert not [
        f for f in r.findings if f.rule in ("roce-dscp-lossy", "cnp-not-strict", "fleet-inconsistent")
    ]
    assert {n: c["dscps"] for n, c in r.roce_classes.items()} == {"leaf-1": [3, 4], "leaf-2": [3, 4]}


def test_lossless_dscp_moved_to_lossy_tc_in_the_fleet(tmp_path):
    """leaf-2's AZURE map sends DSCP 3 (lossless) to TC1 (lossy) → error on leaf-2
    DSCP_TO_TC_MAP|AZURE naming DSCP 3 as made lossy."""
    r = _fleet(tmp_path, lambda c: c["DSCP_TO_TC_MAP"]["AZURE"].update({"3": "1"}))
    assert errors(r) == {("qos-map-inconsistent", "leaf-2", "DSCP_TO_TC_MAP|AZURE")}
    f = _found(r, "qos-map-inconsistent", "leaf-2", "DSCP_TO_TC_MAP|AZURE")[0]
    assert f.evidence["lossless_dscps_made_lossy"] == "3" and "DSCP 3" in f.message


def test_lossless_dscp_moved_to_lossy_tc_on_one_switch_alone(tmp_path):
    """One switch on its own: AZURE_UPLINK sends DSCP 3 to TC1 while TC3 is lossless on the
    uplinks and DSCP 3 is lossless on the downlinks → dscp-lossless-some-ports error."""
    cfg = arista("leaf-1")
    cfg["DSCP_TO_TC_MAP"]["AZURE_UPLINK"]["3"] = "1"
    r = audit_cfgs(tmp_path, {"leaf-1": cfg}, ini=ARISTA_INI)
    assert errors(r) == {("dscp-lossless-some-ports", "leaf-1", "DSCP_TO_TC_MAP|AZURE_UPLINK")}
    assert r.roce_classes["leaf-1"]["dscps"] == [4]


def test_pfc_enable_missing_a_priority_on_one_port(tmp_path):
    """leaf-2's uplink Ethernet136 loses lossless priority 4 ("3,4" → "3") → error on leaf-2
    PORT_QOS_MAP|Ethernet136; alone, the same switch reports it against its other uplinks."""
    up = next(p for p, f in arista()["PORT_QOS_MAP"].items() if f.get("pfc_enable") == "3,4")
    r = _fleet(tmp_path, lambda c: c["PORT_QOS_MAP"][up].update(pfc_enable="3"))
    assert errors(r) == {("pfc-priority-mismatch", "leaf-2", f"PORT_QOS_MAP|{up}")}
    cfg = arista("leaf-1")
    cfg["PORT_QOS_MAP"][up]["pfc_enable"] = "3"
    alone = audit_cfgs(tmp_path, {"leaf-1": cfg}, ini=ARISTA_INI)
    assert errors(alone) == {("pfc-priority-port-mismatch", "leaf-1", f"PORT_QOS_MAP|{up}")}


def test_xoff_changed_on_one_switch_of_a_pair(tmp_path):
    """Two SN2700 of one role; leaf-b's 100G/300m profile xoff 78848 → 60416 → error on leaf-b
    BUFFER_PROFILE|pg_lossless_100000_300m_profile (a tie of two: the evidence says so)."""
    a, b = sn2700("leaf-a"), sn2700("leaf-b")
    b["BUFFER_PROFILE|pg_lossless_100000_300m_profile"]["xoff"] = "60416"
    r = audit_cfgs(tmp_path, {"a": a, "b": b})
    assert errors(r) == {
        ("pfc-threshold-mismatch", "leaf-b", "BUFFER_PROFILE|pg_lossless_100000_300m_profile")
    }


def test_ecn_off_on_lossless_queue_with_ecn_intended(tmp_path):
    """leaf-2's lossless queue 3 on Ethernet0 loses its WRED/ECN profile: with --intent dcqcn an
    ecn-disabled error on leaf-2 QUEUE|Ethernet0|3; with no intent the role's majority marks ECN,
    so it is an error too; under --intent pfc-only it is information."""
    for intent, sev in (("dcqcn", "error"), ("auto", "error"), ("pfc-only", "info")):
        r = _fleet(tmp_path, lambda c: c["QUEUE"]["Ethernet0|3"].pop("wred_profile"), intent=intent)
        assert _found(r, "ecn-disabled", "leaf-2", "QUEUE|Ethernet0|3", (sev,)), intent
        assert not [f for f in r.findings if f.rule == "ecn-disabled" and f.severity != sev]


def test_scheduler_weight_differs_in_a_role(tmp_path):
    """leaf-2's scheduler.0 weight 14 → 30 → fleet-inconsistent warning on leaf-2 SCHEDULER|scheduler.0
    with the majority value as the fix."""
    r = _fleet(tmp_path, lambda c: c["SCHEDULER"]["scheduler.0"].update(weight="30"))
    f = _found(r, "fleet-inconsistent", "leaf-2", "SCHEDULER|scheduler.0")
    assert len(f) == 1 and f[0].evidence["majority_value"] == "14" and f[0].evidence["value"] == "30"
    assert "14" in f[0].fix
    assert not _found(r, "fleet-inconsistent", "leaf-1", "SCHEDULER|scheduler.0")


def test_cable_length_5m_to_300m_with_the_same_profile(tmp_path):
    """Generated Spectrum-4 400G/5m config; Ethernet0's CABLE_LENGTH 5m → 300m while its lossless PG
    keeps pg_lossless_400000_5m_profile → errors on that profile: pg-profile-stale and
    headroom-too-small (xoff 230400 B against the formula's 300 m value)."""
    cfg = generated()
    assert errors(audit_cfgs(tmp_path, {"a": cfg})) == set()
    cfg["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "300m"
    r = audit_cfgs(tmp_path, {"a": cfg})
    obj = "BUFFER_PROFILE|pg_lossless_400000_5m_profile"
    assert errors(r) == {("pg-profile-stale", "leaf-1", obj), ("headroom-too-small", "leaf-1", obj)}
    h = _found(r, "headroom-too-small", "leaf-1", obj)[0]
    assert h.evidence["cable"] == "300m" and int(h.evidence["formula_xoff_bytes"]) > 230400


def test_cable_length_differs_in_a_role(tmp_path):
    """The same cable change seen by the fleet rule: leaf-2's Ethernet0 cable differs from leaf-1's →
    fleet-inconsistent on leaf-2 CABLE_LENGTH|AZURE naming the port."""
    r = _fleet(tmp_path, lambda c: c["CABLE_LENGTH"]["AZURE"].update(Ethernet0="5m"))
    f = _found(r, "fleet-inconsistent", "leaf-2", "CABLE_LENGTH|AZURE")
    assert len(f) == 1 and f[0].evidence["ports"] == "Ethernet0"


def test_roles_file_groups_differently_named_switches(tmp_path):
    """Without a roles file, 'tor-a' and 'leaf-2' (different DEVICE_METADATA types) are not compared;
    a --roles file putting both in role 'leaf' makes leaf-2's scheduler weight a finding."""
    a, b = arista("tor-a", role="ToRRouter"), arista("leaf-2")
    b["SCHEDULER"]["scheduler.0"]["weight"] = "30"
    r = audit_cfgs(tmp_path, {"a": a, "b": b}, ini=ARISTA_INI)
    assert not [f for f in r.findings if f.rule == "fleet-inconsistent"]
    roles = tmp_path / "roles.txt"
    roles.write_text("# pattern role\ntor-*  leaf\nleaf-* leaf\n")
    r = audit_cfgs(tmp_path, {"a": a, "b": b}, ini=ARISTA_INI, roles_file=roles)
    assert r.roles == {"tor-a": "leaf", "leaf-2": "leaf"}
    assert [f.object for f in r.findings if f.rule == "fleet-inconsistent"] == ["SCHEDULER|scheduler.0"]


def test_hostname_pattern_roles_without_metadata(tmp_path):
    """Configs without DEVICE_METADATA are grouped by hostname pattern (file name leaf-1 / leaf-2 →
    role 'leaf-#'), so a moved lossless DSCP is still found."""
    a, b = arista("x"), arista("x")
    del a["DEVICE_METADATA"], b["DEVICE_METADATA"]
    b["DSCP_TO_TC_MAP"]["AZURE"]["4"] = "1"
    r = audit_cfgs(tmp_path, {"leaf-1": a, "leaf-2": b}, ini=ARISTA_INI)
    assert r.roles == {"leaf-1": "leaf-#", "leaf-2": "leaf-#"}
    assert errors(r) == {("qos-map-inconsistent", "leaf-2", "DSCP_TO_TC_MAP|AZURE")}


def test_xoff_tie_is_broken_by_the_lookup_table(tmp_path):
    """A pair disagreeing on xoff has no majority; with the SKU's lookup table bound, the switch whose
    xoff differs from the table row is the one reported — even when it sorts first."""
    from test_audit_fixtures import MSN2700_INI

    a, b = sn2700("leaf-a"), sn2700("leaf-b")
    a["BUFFER_PROFILE|pg_lossless_100000_300m_profile"]["xoff"] = "60416"  # leaf-a is the odd one
    b["BUFFER_PROFILE|pg_lossless_100000_300m_profile"]["xoff"] = "104448"  # the MSN2700 table row
    r = audit_cfgs(tmp_path, {"a": a, "b": b}, ini=MSN2700_INI)
    f = [x for x in r.findings if x.rule == "pfc-threshold-mismatch"]
    assert [(x.device, x.severity) for x in f] == [("leaf-a", "error")]
    assert "pg_profile_lookup.ini row" in f[0].evidence["majority"]
