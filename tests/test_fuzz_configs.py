"""Switch configs in and out (issue 32): ``roce-config`` refuses values outside each dialect's
real ranges, and ``audit`` tells an invalid file (exit 2, one line naming file, ``TABLE|key`` and
field) from a valid config that is wrong for lossless RoCE (a finding)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_fuzz_support import FUZZ, assert_clean, cli

# (flags, the option the one-line error names)
ROCE_BAD = [
    (["--mtu", "0"], "--mtu"),
    (["--mtu", "-5"], "--mtu"),
    (["--mtu", "100000"], "--mtu"),
    (["--os", "eos", "--mtu", "9216"], "--mtu"),
    (["--switch", ""], "--switch"),
    (["--switch", "leaf\nspine"], "--switch"),
    (["--switch", "leaf 1"], "--switch"),
    (["--ports", "Ethernet0,Ethernet0"], "--ports"),
    (["--os", "eos", "--ports", "Ethernet8,Ethernet8"], "--ports"),
    (["--speed", "400.5G"], "--speed"),
    (["--os", "nvue", "--speed", "300G"], "--speed"),
    (["--buffer", "1e30B"], "--buffer"),
    (["--os", "SONiC-ish"], "--os"),
]


@pytest.mark.parametrize("flags,flag", ROCE_BAD, ids=[" ".join(f) for f, _ in ROCE_BAD])
def test_roce_config_refuses(flags, flag):
    """An impossible value is one line naming its option, exit 2, and nothing on stdout."""
    argv = ["roce-config", *flags]
    o = cli(argv)
    assert_clean(o, argv)
    assert o.code == 2 and flag in o.stderr and o.stdout == "", (o.code, o.stderr)


@pytest.mark.parametrize("os_name", ["sonic", "nvue", "eos", "host"])
def test_roce_config_defaults_still_print(os_name):
    """The default design still prints in every dialect (the checks refuse only bad values)."""
    o = cli(["roce-config", "--os", os_name])
    assert o.code == 0 and o.stdout, o.stderr


ROCE_VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1", "68", "1280", "9100", "9216", "9217", "1e9", "nan", "", " ", "x"]),
    st.sampled_from(["100G", "400G", "400.5G", "0G", "2000G", "Ethernet0,Ethernet0", "leaf-1", "a b"]),
    st.text(max_size=6),
)


@FUZZ
@given(
    os_name=st.sampled_from(["sonic", "nvue", "eos", "host"]),
    flags=st.lists(
        st.tuples(
            st.sampled_from(["--switch", "--speed", "--cable", "--ports", "--mtu", "--buffer", "--asic"]),
            ROCE_VALUES,
        ),
        max_size=3,
    ),
)
def test_fuzz_roce_config(os_name, flags):
    """roce-config with random values: exit 0 with a config, or one line naming an option; what
    it prints for SONiC is JSON the audit reads as a valid file."""
    argv = ["roce-config", "--os", os_name] + [x for f in flags for x in f]
    o = cli(argv)
    assert_clean(o, argv)
    if o.code == 2:
        assert any(f[0] in o.stderr for f in flags), o.stderr
    elif os_name == "sonic":
        json.loads(o.stdout)


def _sonic() -> dict:
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf-1"}},
        "PORT": {"Ethernet0": {"speed": "400000", "mtu": "9100"}},
        "BUFFER_POOL": {"ingress_lossless_pool": {"size": "1000000", "type": "ingress", "mode": "dynamic"}},
        "BUFFER_PROFILE": {
            "p": {
                "pool": "ingress_lossless_pool",
                "size": "0",
                "xon": "100",
                "xoff": "1000",
                "dynamic_th": "0",
            }
        },
        "BUFFER_PG": {"Ethernet0|3": {"profile": "p"}},
        "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}},
    }


def _set(table, key, field, value):
    def f(d):
        d[table][key][field] = value

    return f


AUDIT_BAD = {
    "speed-zero": (_set("PORT", "Ethernet0", "speed", "0"), "PORT|Ethernet0|speed: out of range"),
    "speed-negative": (_set("PORT", "Ethernet0", "speed", "-400000"), "PORT|Ethernet0|speed"),
    "mtu-zero": (_set("PORT", "Ethernet0", "mtu", "0"), "PORT|Ethernet0|mtu: out of range"),
    "xoff-negative": (_set("BUFFER_PROFILE", "p", "xoff", "-5"), "BUFFER_PROFILE|p|xoff"),
    "dynamic-th": (_set("BUFFER_PROFILE", "p", "dynamic_th", "20"), "BUFFER_PROFILE|p|dynamic_th"),
    "reversed-pg": (
        lambda d: d["BUFFER_PG"].update({"Ethernet0|4-3": {"profile": "p"}}),
        "BUFFER_PG|Ethernet0|4-3",
    ),
    "missing-port": (
        lambda d: d["BUFFER_PG"].update({"Ethernet99|3": {"profile": "p"}}),
        "port Ethernet99 is not in the PORT table",
    ),
    "empty": (lambda d: d.clear(), "an empty CONFIG_DB object"),
    "wrapper": (
        lambda d: (d.clear(), d.update({"BUFFER_PG|Ethernet0|3": {"type": "hash"}})),
        "redis-dump wrapper",
    ),
}


@pytest.mark.parametrize("case", sorted(AUDIT_BAD))
def test_audit_invalid_file(tmp_path, case):
    """A value outside SONiC's range, a malformed key, a missing port, an empty object or a
    malformed wrapper is an invalid file: one line naming the file and TABLE|key, exit 2."""
    mut, fragment = AUDIT_BAD[case]
    d = _sonic()
    mut(d)
    p = tmp_path / "config_db.json"
    p.write_text(json.dumps(d))
    argv = ["audit", str(p)]
    o = cli(argv)
    assert_clean(o, argv)
    assert o.code == 2 and str(p) in o.stderr and fragment in o.stderr, o.stderr


def test_audit_valid_config_is_not_an_error(tmp_path):
    """The same config with every value in range is audited (exit 0 or 1 for findings), with no
    error line."""
    p = tmp_path / "config_db.json"
    p.write_text(json.dumps(_sonic()))
    o = cli(["audit", str(p)])
    assert o.code in (0, 1) and "error:" not in o.stderr, o.stderr


@pytest.mark.parametrize("flag", [None, "--pg-lookup", "--roles"])
def test_audit_dev_zero(tmp_path, flag):
    """/dev/zero as a config, a pg_profile_lookup.ini or a roles file is a line naming it, exit 2,
    in well under the time bound (not a hang, not out of memory)."""
    p = tmp_path / "config_db.json"
    p.write_text(json.dumps(_sonic()))
    argv = ["audit", "/dev/zero"] if flag is None else ["audit", str(p), flag, "/dev/zero"]
    o = cli(argv, bound_s=20)
    assert o.code == 2 and "/dev/zero" in o.stderr and "not a regular file" in o.stderr, o.stderr


AUDIT_VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1", "7", "8", "-9", "9216", "9217", "1600001", "", "x", "1e3"]),
    st.integers(-(10**6), 10**7).map(str),
)


@FUZZ
@given(
    target=st.sampled_from(
        [("PORT", "Ethernet0", f) for f in ("speed", "mtu")]
        + [("BUFFER_PROFILE", "p", f) for f in ("size", "xon", "xoff", "dynamic_th")]
        + [("BUFFER_POOL", "ingress_lossless_pool", "size")]
    ),
    value=AUDIT_VALUES,
)
def test_fuzz_audit_values(tmp_path_factory, target, value):
    """Any value in a numeric SONiC field: a clean outcome; exit 2 names the TABLE|key|field."""
    d = _sonic()
    table, key, field = target
    d[table][key][field] = value
    p = tmp_path_factory.mktemp("a") / "config_db.json"
    p.write_text(json.dumps(d))
    argv = ["audit", str(p), "--format", "json"]
    o = cli(argv)
    assert_clean(o, argv)
    if o.code == 2:
        assert f"{table}|{key}|{field}" in o.stderr, o.stderr
