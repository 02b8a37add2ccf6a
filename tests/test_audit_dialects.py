"""NVUE, EOS, host-side and InfiniBand readers: the samples parse, their RoCE classes are
inferred, single mistakes are reported on the right object, a host that disagrees with its
switch is reported, and every reader turns garbage into one clean line (fuzzed)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.audit import audit_files, load_inputs
from aifabric.errors import InputError
from test_audit_fixtures import ARISTA_BUF, ARISTA_INI, ARISTA_QOS, errors, generated, write

SAMPLES = Path(__file__).parent / "fixtures" / "audit-samples"
NVUE_YAML = SAMPLES / "nvue" / "leaf01.yaml"
NVUE_CMDS = SAMPLES / "nvue" / "leaf02.commands.txt"
EOS = SAMPLES / "eos" / "leaf-eos-1.cfg"
HOST_GOOD = SAMPLES / "host-good"
HOST_UNSET = SAMPLES / "host-nccl-unset"
NDR = Path(__file__).parent / "fixtures" / "real" / "nvidia-topograph" / "ibnetdiscover-ndr-example.out.txt"


def _worse(r):
    return [(f.rule, f.severity, f.device, f.object) for f in r.findings if f.severity != "info"]


# ---------------------------------------------------------------------------------------------
# NVUE
def test_nvue_yaml_sample_reads_roce_defaults():
    """`nv config show -o yaml` with `qos roce` (lossless): 32 ports, PFC on switch priority 3, DSCP
    24-31 lossless into TC3, ECN on TC3 (150000/1501500 B), CNP TC6 strict; audits clean."""
    res = load_inputs([str(NVUE_YAML)])
    assert res.errors == [] and len(res.devices) == 1
    d = res.devices[0]
    assert d.name == "leaf01" and d.dialect == "nvue" and len(d.lossless_ports()) == 32
    assert d.table("WRED_PROFILE")["3"]["green_max_threshold"] == "1501500"
    assert d.table("SCHEDULER")["6"]["type"] == "STRICT"
    r = audit_files([str(NVUE_YAML)], cnp_dscp=48)
    assert _worse(r) == [] and r.roce_classes["leaf01"]["dscps"] == list(range(24, 32))


def test_nvue_command_list_sample_moves_roce_to_sp2():
    """The RoCE page's own retuning as `nv set` lines (PFC on SP2, DSCP 26 → SP2 → TC3): read and
    clean; the inferred RoCE DSCPs include 26 on switch priority 2."""
    r = audit_files([str(NVUE_CMDS)])
    assert r.errors == [] and _worse(r) == []
    c = r.roce_classes["leaf02"]
    assert 26 in c["dscps"] and c["lossless_priorities"] == [2] and c["tcs"] == [2]


def test_nvue_ecn_disabled_is_named_in_nvue_terms(tmp_path):
    """`nv set qos congestion-control default-global traffic-class 3 ecn disable` under --intent dcqcn
    → ecn-disabled error whose object is the NVUE path (the SONiC-model object in the evidence)."""
    text = (
        NVUE_CMDS.read_text() + "nv set qos congestion-control default-global traffic-class 3 ecn disable\n"
    )
    p = write(tmp_path, "leaf02.txt", text)
    r = audit_files([p], intent="dcqcn")
    f = [x for x in r.findings if x.rule == "ecn-disabled"]
    assert len(f) == 1 and f[0].severity == "error"
    assert f[0].object.startswith("qos congestion-control default-global traffic-class 3 [swp1,")
    assert f[0].evidence["model_object"].startswith("QUEUE|swp1,") and f[0].evidence["dialect"] == "nvue"


def test_nvue_fleet_difference_between_two_leaves():
    """leaf01 (SP3) and leaf02 (SP2) share the hostname pattern leaf#: their PFC priorities differ
    → pfc-priority-mismatch, and the DSCP 26 move → qos-map-inconsistent."""
    r = audit_files([str(NVUE_YAML), str(NVUE_CMDS)])
    assert r.roles == {"leaf01": "leaf#/nvue", "leaf02": "leaf#/nvue"}
    rules = {x[0] for x in errors(r)}
    assert {"pfc-priority-mismatch", "qos-map-inconsistent"} <= rules


# ---------------------------------------------------------------------------------------------
# EOS
def test_eos_sample_reads_and_audits_clean():
    """The EOS running-config: 2 ports with PFC no-drop priority 3, DSCP 26 → TC3, ECN on tx-queue 3
    (150/1500 KB), CNP (48 → TC6) on a strict queue, PFC watchdog on; no finding."""
    r = audit_files([str(EOS)], nic_dscp=26, cnp_dscp=48, intent="dcqcn")
    assert r.errors == [] and _worse(r) == []
    d = load_inputs([str(EOS)]).devices[0]
    assert d.dialect == "eos" and d.lossless_ports() == {"Ethernet1/1": (3,), "Ethernet2/1": (3,)}
    assert d.table("WRED_PROFILE")["ecn_150000_1500000_100"]["green_min_threshold"] == "150000"


def test_eos_pair_port_missing_no_drop(tmp_path):
    """Two EOS leaves; leaf-eos-2's Ethernet2/1 lacks `priority-flow-control priority 3 no-drop`
    (PFC off on that port) → fleet-inconsistent error on leaf-eos-2 named as the EOS interface line."""
    a = EOS.read_text()
    b = a.replace("leaf-eos-1", "leaf-eos-2")
    i = b.index("interface Ethernet2/1")
    b = b[:i] + b[i:].replace("   priority-flow-control priority 3 no-drop\n", "", 1)
    r = audit_files([write(tmp_path, "a.cfg", a), write(tmp_path, "b.cfg", b)])
    assert errors(r) == {
        ("fleet-inconsistent", "leaf-eos-2", "interface Ethernet2/1 priority-flow-control"),
    }


def test_eos_bad_line_is_one_clean_error(tmp_path):
    """A malformed `qos map dscp` line → one InputError naming the file and line."""
    p = write(tmp_path, "x.cfg", "hostname x\nqos map dscp 26 to traffic-class nine\n")
    r = audit_files([p])
    assert len(r.errors) == 1 and "x.cfg: line 2" in str(r.errors[0]) and r.exit_code() == 2


# ---------------------------------------------------------------------------------------------
# hosts
def test_host_samples_read():
    """mlnx_qos + mlxconfig + sysfs ECN + NCCL env of one host: trust dscp, PFC on 3, DSCP 26
    (NCCL_IB_TC=106) → priority 3, CNP DSCP 48 / priority 6, DCQCN on priority 3."""
    res = load_inputs([str(HOST_GOOD)])
    assert res.errors == [] and len(res.hosts) == 1
    h = res.hosts[0]
    assert h.name == "host-good" and h.trust == "dscp" and h.pfc == (3,)
    assert h.roce_dscp() == (26, "NCCL_IB_TC=106") and h.prio_of(26) == 3
    assert (h.cnp_dscp, h.cnp_prio, h.cc_prio_mask) == (48, 6, 255)
    assert h.ecn_np[3] and h.ecn_rp[3] and not h.ecn_np[0]


def test_host_matching_its_switch_is_clean(tmp_path):
    """The good host with the generated SONiC config (DSCP 26 → TC3 lossless, CNP 48 strict) and with
    the NVUE leaf: no error or warning; the host's CNP DSCP 48 is taken as stated (no --cnp-dscp)."""
    sw = write(tmp_path, "leaf-1.json", generated())
    for cfg in (sw, str(NVUE_YAML)):
        r = audit_files([cfg, str(HOST_GOOD)], intent="dcqcn")
        assert _worse(r) == [], cfg
        assert "host-good" in r.extra["hosts"]


def test_host_nccl_tc_unset_is_dscp_0_lossy(tmp_path):
    """NCCL_IB_TC left unset: RoCE goes out in DSCP 0, lossy on the switch → one
    host-roce-dscp-lossy error on the host (the priority/ECN checks that follow from it are not repeated)."""
    sw = write(tmp_path, "leaf-1.json", generated())
    r = audit_files([sw, str(HOST_UNSET)])
    assert _worse(r) == [("host-roce-dscp-lossy", "error", "host-nccl-unset", "nccl-env|NCCL_IB_TC")]
    assert r.exit_code() == 1


def test_host_against_azure_switch_reports_the_mismatch():
    """The NVIDIA-style host (DSCP 26) against SONiC's Azure T1 (RoCE on DSCP 3,4): the host's DSCP
    is lossy on the switch → host-roce-dscp-lossy naming the switch."""
    r = audit_files([f"{ARISTA_QOS}+{ARISTA_BUF}+{ARISTA_INI}", str(HOST_GOOD)])
    f = [x for x in r.findings if x.rule == "host-roce-dscp-lossy"]
    assert len(f) == 1 and f[0].evidence["lossy_on"] == "qos-arista7260-t1"


def test_host_priority_and_pfc_mismatch(tmp_path):
    """A host whose NIC maps DSCP 26 to priority 4 with PFC on 4, against a switch pausing priority 3
    → host-priority-mismatch; with PFC left on 3 instead → host-pfc-mismatch (the NIC ignores PAUSE)."""
    sw = write(tmp_path, "leaf-1.json", generated())
    d = tmp_path / "h4"
    d.mkdir()
    qos = (HOST_GOOD / "mlnx_qos.txt").read_text()
    qos = qos.replace("prio:3 dscp:31,30,29,28,27,26,25,24,", "prio:3 dscp:31,30,29,28,27,25,24,")
    qos = qos.replace("prio:4 dscp:39,38,37,36,35,34,33,32,", "prio:4 dscp:39,38,37,36,35,34,33,32,26,")
    (d / "mlnx_qos.txt").write_text(
        qos.replace("enabled     0   0   0   1   0", "enabled     0   0   0   0   1")
    )
    (d / "nccl.env").write_text("export NCCL_IB_TC=106\nexport NCCL_IB_GID_INDEX=3\n")
    r = audit_files([sw, str(d)])
    assert {x[0] for x in _worse(r)} == {"host-priority-mismatch", "host-pfc-mismatch"}
    (d / "mlnx_qos.txt").write_text(qos)
    r = audit_files([sw, str(d)])
    assert {x[0] for x in _worse(r)} == {"host-priority-mismatch", "host-pfc-mismatch"}
    f = next(x for x in r.findings if x.rule == "host-pfc-mismatch")
    assert f.severity == "error" and "priority 4" in f.message


def test_host_trust_pcp_and_dcqcn_off(tmp_path):
    """Trust pcp → host-trust-not-dscp; roce_np/rp off on the RoCE priority under --intent dcqcn →
    host-ecn-disabled error."""
    sw = write(tmp_path, "leaf-1.json", generated())
    d = tmp_path / "hx"
    d.mkdir()
    (d / "mlnx_qos.txt").write_text(
        (HOST_GOOD / "mlnx_qos.txt").read_text().replace("state: dscp", "state: pcp")
    )
    (d / "ecn.txt").write_text((HOST_GOOD / "ecn.txt").read_text().replace("enable/3:1", "enable/3:0"))
    (d / "nccl.env").write_text("export NCCL_IB_TC=106\nexport NCCL_IB_GID_INDEX=3\n")
    r = audit_files([sw, str(d)], intent="dcqcn")
    assert {x[0] for x in errors(r)} == {"host-trust-not-dscp", "host-ecn-disabled"}


# ---------------------------------------------------------------------------------------------
# InfiniBand
def test_ndr_dump_has_no_degraded_link():
    """The real Quantum-2 NDR dump: 1114 links, all 4xNDR, no finding."""
    r = audit_files([str(NDR)])
    assert r.findings == [] and r.errors == []
    ib = r.extra["infiniband"][0]
    assert ib["links"] == 1114 and ib["degraded"] == 0
    assert ib["by_kind"]["switch-switch"]["width"] == "4x"


def test_ndr_dump_with_one_link_at_2x_hdr(tmp_path):
    """The same dump with one spine–leaf link trained at 2xHDR (both ends) → one ib-link-degraded
    warning naming both switch ports."""
    text = NDR.read_text()
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if "IBSPINE" in ln and ln.startswith("[") and "4xNDR" in ln)
    lines[i] = lines[i].replace("4xNDR", "2xHDR")
    r = audit_files([write(tmp_path, "ndr.txt", "\n".join(lines) + "\n")])
    f = [x for x in r.findings if x.rule == "ib-link-degraded"]
    assert len(f) == 1 and f[0].evidence["majority"] == "4xNDR" and "IBSPINE" in f[0].object


def test_iblinkinfo_could_be_is_reported(tmp_path):
    """iblinkinfo's own "Could be" note on an active link → ib-link-degraded (format of formats.md §2.5)."""
    text = (
        "CA: n02 HCA-1:\n"
        "      0xec0d9a03003d62be      4    1[  ] ==( 1X      25.78125 Gbps Active/  LinkUp)==>       2   17[  ]"
        ' "MF0;SB7700:MSB7700/U1" ( Could be 4X Could be 25.78125 Gbps )\n'
        "CA: n03 HCA-1:\n"
        "      0xec0d9a03003d62bf      5    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2   18[  ]"
        ' "MF0;SB7700:MSB7700/U1" ( )\n'
    )
    r = audit_files([write(tmp_path, "ili.txt", text)])
    assert [(f.rule, f.object) for f in r.findings] == [("ib-link-degraded", "n02 HCA-1[1]")]


# ---------------------------------------------------------------------------------------------
# fuzzing: any text into each reader → a result or one clean InputError line, quickly
READERS = {
    "nvue": lambda p, t: __import__("aifabric.audit.nvue", fromlist=["to_device"]).to_device(p, t),
    "eos": lambda p, t: __import__("aifabric.audit.eos", fromlist=["to_device"]).to_device(p, t),
    "ib": lambda p, t: __import__("aifabric.audit.ib", fromlist=["ib_findings"]).ib_findings(p, t),
}


def _host(p, t):
    from aifabric.audit.host import Host, read_into

    read_into(Host("h", [p]), p, t)


READERS["host"] = _host
SEEDS = {
    "nvue": NVUE_CMDS.read_text() + NVUE_YAML.read_text(),
    "eos": EOS.read_text(),
    "host": "".join(
        (HOST_GOOD / n).read_text() for n in ("mlnx_qos.txt", "mlxconfig.txt", "ecn.txt", "nccl.env")
    ),
    "ib": NDR.read_text()[:4000],
}


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 4000), junk=st.text(max_size=40), n=st.integers(0, 3))
def test_fuzz_readers_damaged_samples(reader, cut, junk, n):
    """A sample cut anywhere with junk spliced in (or repeated) → the reader returns, or raises one
    InputError whose text is a single line; never another exception, within 2 s."""
    seed = SEEDS[reader]
    text = seed[:cut] + junk + seed[cut:] * n
    t0 = time.perf_counter()
    try:
        READERS[reader]("x.txt", text)
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("x.txt")
    assert time.perf_counter() - t0 < 2.0


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_fuzz_readers_any_text(reader, text):
    """Arbitrary text → a result or one clean InputError line."""
    try:
        READERS[reader]("x.txt", text)
    except InputError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "nv set qos roce",
                "nv set qos roce mode lossy",
                "nv set qos pfc default-global switch-priority 9",
                "nv set qos pfc default-global switch-priority 2,3",
                "nv set qos mapping default-global dscp 26 switch-priority 4",
                "nv set qos mapping default-global dscp 70 switch-priority 1",
                "nv set qos congestion-control default-global traffic-class 3 min-threshold abc",
                "nv set qos congestion-control default-global traffic-class 3 ecn disable",
                "nv set qos egress-scheduler default-global traffic-class 3 bw-percent 150",
                "nv set interface swp1-4 link mtu 9216",
                "nv set interface swp9-1 link mtu 9216",
                "nv set interface swp1 link mtu 99999",
                "nv set system hostname leaf07",
            ]
        ),
        max_size=8,
    )
)
def test_fuzz_nvue_command_mixes(lines):
    """Mixes of valid and out-of-range `nv set` lines → a device, or one InputError naming the NVUE path."""
    from aifabric.audit.nvue import to_device

    try:
        d = to_device("n.txt", "\n".join(lines) + "\n")
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("n.txt: ")
    else:
        assert d.dialect == "nvue"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.one_of(
        st.text(max_size=300),
        st.sampled_from(list(SEEDS.values())).map(lambda s: s[:500]),
    ),
    suffix=st.sampled_from([".txt", ".cfg", ".yaml", ".env", ".conf"]),
)
def test_fuzz_any_file_through_the_dispatcher(tmp_path, text, suffix):
    """Any text in any accepted suffix, through the same path as the CLI (classify → reader →
    rules): a report whose problems are single lines naming the file; never an exception."""
    p = tmp_path / f"f{suffix}"
    p.write_text(text, encoding="utf-8")
    r = audit_files([str(p)])
    for e in r.errors:
        assert "\n" not in str(e) and str(p) in str(e)
    assert r.exit_code() in (0, 1, 2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_fuzz_roles_file(tmp_path, text):
    """Any roles file: parsed into (glob, role) pairs or one InputError line naming the file."""
    from aifabric.audit.roles import read_roles

    p = tmp_path / "roles.txt"
    p.write_text(text, encoding="utf-8")
    try:
        pairs = read_roles(p)
    except InputError as exc:
        assert "\n" not in str(exc) and str(p) in str(exc)
    else:
        assert pairs and all(len(x) == 2 for x in pairs)


def test_host_finding_points_at_the_file_it_came_from():
    """SARIF location of a host finding is the host file of that kind (nccl.env for NCCL_IB_TC)."""
    import json as _json

    from aifabric.audit.output import render_sarif

    r = audit_files([str(NVUE_YAML), str(HOST_UNSET)])
    doc = _json.loads(render_sarif(r))
    locs = [
        res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for res in doc["runs"][0]["results"]
    ]
    assert locs == [(HOST_UNSET / "nccl.env").as_posix()]


def test_opensm_conf_routing_engine_and_ar(tmp_path):
    """The UFM-style opensm.conf sample (routing_engine ar_updn): read, adaptive routing on, no
    finding; with `routing_engine updn` (or the key unset: minhop) an ib-sm-routing info."""
    sm = SAMPLES / "ib" / "opensm.conf"
    r = audit_files([str(sm)])
    assert r.findings == [] and r.extra["infiniband"][0]["adaptive_routing"] is True
    p = write(tmp_path, "opensm.conf", sm.read_text().replace("ar_updn", "updn"))
    r = audit_files([p])
    assert [(f.rule, f.severity) for f in r.findings] == [("ib-sm-routing", "info")]
    q = write(tmp_path, "opensm2.conf", sm.read_text().replace("routing_engine ar_updn\n", ""))
    f = audit_files([q]).findings
    assert len(f) == 1 and "minhop" in f[0].message


def test_eos_config_is_not_taken_for_opensm():
    """An EOS config with two `qos map` lines is still read as EOS (the SM detector ignores 'qos')."""
    from aifabric.audit import classify

    assert classify(EOS) == "eos"


def test_ib_audit_and_topology_reader_read_the_same_links():
    """One ibnetdiscover parser serves the audit and the topology reader: the same links and rates
    on the real NDR dump, and a width the format does not have is an error for both."""
    from aifabric.audit.ib import read_ibnetdiscover as audit_links
    from aifabric.topology.io import read_ibnetdiscover as topology

    path = Path(__file__).parent / "fixtures/real/nvidia-topograph/ibnetdiscover-ndr-example.out.txt"
    links = audit_links(path, path.read_text())
    topo = topology(path)
    assert len(links) == topo.num_links > 0
    assert sorted(int(x.gbps * 1e9) for x in links) == sorted(int(r) for r in topo.link_rate_bps)
    bad = path.read_text().replace("4xNDR", "3xNDR", 1)
    for read in (lambda: audit_links("bad.txt", bad), lambda: topology_from_text(bad)):
        with pytest.raises(InputError, match="unknown link width"):
            read()


def topology_from_text(text: str):
    from aifabric.topology.io import parse_ibnetdiscover

    return parse_ibnetdiscover(text, "bad.txt")
