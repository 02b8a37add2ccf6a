"""Real SONiC fixtures: builders for mutated copies (used by the other audit tests), and
the checks that every real config parses and the known-good ones give no error."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from aifabric.audit import audit_files

REAL = Path(__file__).parent / "fixtures" / "real"
BI = REAL / "sonic-buildimage"
SU = REAL / "sonic-utilities"
ARISTA_QOS = BI / "qos-arista7260-t1.json"
ARISTA_BUF = BI / "buffer-arista7260-t1.json"
ARISTA_INI = BI / "pg_profile_lookup.arista-7260CX3-D96C16.ini"
MLNX_4600C = BI / "buffers-mellanox4600c-t1.json"
SN2700 = SU / "mellanox-sn2700-t1-version_3_0_3.config_db.json"
CONFIG_QOS = SU / "config_qos.json"
SN5600_INI = BI / "pg_profile_lookup.nvidia-ACS-SN5600.ini"
MSN2700_INI = BI / "pg_profile_lookup.mellanox-ACS-MSN2700.ini"


def arista(name: str = "leaf-1", role: str = "LeafRouter") -> dict:
    """The real Arista 7260CX3 T1 rendering (qos + buffers), as the running CONFIG_DB holds it:
    plus DEVICE_METADATA and the 100G PORT entries the rendering leaves to minigraph."""
    cfg = json.loads(ARISTA_QOS.read_text())
    cfg.update(json.loads(ARISTA_BUF.read_text()))
    cfg["DEVICE_METADATA"] = {
        "localhost": {
            "hostname": name,
            "type": role,
            "hwsku": "Arista-7260CX3-D96C16",
            "platform": "x86_64-arista_7260cx3_64",
        }
    }
    ports = [p for p in cfg["PORT_QOS_MAP"] if p != "global"]
    cfg["PORT"] = {p: {"speed": "100000", "mtu": "9100", "admin_status": "up"} for p in ports}
    return cfg


def sn2700(name: str = "leaf-a") -> dict:
    """The real Mellanox SN2700 running CONFIG_DB (flat TABLE|key form), renamed."""
    cfg = json.loads(SN2700.read_text())
    cfg["DEVICE_METADATA|localhost"] = dict(cfg["DEVICE_METADATA|localhost"], hostname=name)
    return cfg


def generated(name: str = "leaf-1", **kw) -> dict:
    from aifabric.audit.generate import roce_config

    return roce_config(name, kw.pop("speed", "400G"), kw.pop("cable", "5m"), ports=kw.pop("ports", 4), **kw)


def write(tmp_path: Path, name: str, cfg: dict | str) -> str:
    p = tmp_path / name
    p.write_text(cfg if isinstance(cfg, str) else json.dumps(cfg))
    return str(p)


def errors(report) -> set[tuple[str, str, str]]:
    return {(f.rule, f.device, f.object) for f in report.findings if f.severity == "error"}


def audit_cfgs(tmp_path: Path, cfgs: dict[str, dict], ini: Path | None = None, **kw):
    """Audit several configs (name → dict); ``ini`` is bound to every device as its lookup table."""
    args = []
    for fname, cfg in cfgs.items():
        p = write(tmp_path, f"{fname}.json", copy.deepcopy(cfg))
        args.append(p + (f"+{ini}" if ini else ""))
    return audit_files(args, **kw)


# ---------------------------------------------------------------------------------------------
# every real SONiC fixture parses; the known-good ones give no error-severity finding
REAL_CONFIGS = [ARISTA_QOS, ARISTA_BUF, MLNX_4600C, SN2700, CONFIG_QOS]
REAL_INIS = [ARISTA_INI, SN5600_INI, MSN2700_INI]


def test_every_real_config_parses():
    """Each real CONFIG_DB file (nested and flat forms) loads into a device with no problem lines."""
    from aifabric.audit import load_devices

    for p in REAL_CONFIGS:
        devices, problems = load_devices([str(p)])
        assert problems == [], p
        assert len(devices) == 1 and devices[0].tables, p


def test_every_real_lookup_table_parses():
    """Each real pg_profile_lookup.ini parses; the SN5600 table has all 24 speed/cable rows."""
    from aifabric.audit.sonic import read_pg_lookup

    tables = {p.name: read_pg_lookup(p) for p in REAL_INIS}
    assert len(tables[SN5600_INI.name].rows) == 24
    assert tables[ARISTA_INI.name].get("100000", "300m").xon_offset_bytes == 2496
    assert tables[MSN2700_INI.name].get("100000", "300m").xoff_bytes == 104448


def test_known_good_configs_alone_have_no_errors():
    """Auditing each real known-good config on its own gives no error-severity finding."""
    for p in REAL_CONFIGS:
        r = audit_files([str(p)])
        assert r.errors == [] and errors(r) == set(), p


def test_known_good_configs_together_have_no_errors():
    """All real configs at once (Arista split files joined as one switch, with its lookup table)
    give no error: cross-switch rules only compare switches whose DEVICE_METADATA names a role."""
    r = audit_files(
        [f"{ARISTA_QOS}+{ARISTA_BUF}+{ARISTA_INI}", str(MLNX_4600C), str(SN2700), str(CONFIG_QOS)]
    )
    assert r.errors == []
    assert errors(r) == set()
    assert r.devices == ["qos-arista7260-t1", "buffers-mellanox4600c-t1", "sonic", "config_qos"]


def test_known_good_arista_warnings_are_the_documented_ones(tmp_path):
    """The running-form Arista T1 (real tables + metadata + 100G ports) has only the documented
    warnings — PFC-WD left to runtime, and the watchdog not covering lossless priorities 2 and 6 on
    the downlinks — and no RoCE-DSCP or CNP finding: the NIC side is not stated."""
    r = audit_cfgs(tmp_path, {"l1": arista("leaf-1"), "l2": arista("leaf-2")}, ini=ARISTA_INI)
    assert errors(r) == set()
    warn = {f.rule for f in r.findings if f.severity == "warning"}
    assert warn == {"pfcwd-not-configured", "pfcwd-partial"}


def test_shipped_azure_qos_and_buffers_infer_dscp_3_4(tmp_path):
    """SONiC's shipped Azure QoS + buffer rendering (as given, no metadata) audits with no error
    and no RoCE-DSCP warning; the inferred RoCE classes are DSCP 3,4 → TC 3,4 on all 28 lossless
    ports, with DSCP 2,6 lossless on the 20 downlinks only."""
    r = audit_files([f"{ARISTA_QOS}+{ARISTA_BUF}+{ARISTA_INI}"])
    assert r.errors == [] and errors(r) == set()
    assert not [f for f in r.findings if f.rule in ("roce-dscp-lossy", "cnp-not-strict")]
    c = r.roce_classes["qos-arista7260-t1"]
    assert c["dscps"] == [3, 4] and c["tcs"] == [3, 4] and c["dscps_some_ports"] == [2, 6]
    assert c["lossless_priorities"] == [2, 3, 4, 6] and c["lossless_ports"] == 28


def test_known_good_sn2700_pair_is_clean(tmp_path):
    """Two copies of the real SN2700 running config (same role and SKU) give no error or warning."""
    r = audit_cfgs(tmp_path, {"a": sn2700("leaf-a"), "b": sn2700("leaf-b")})
    assert {f.severity for f in r.findings} <= {"info"}
