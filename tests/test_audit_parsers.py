"""SONiC parsers: the three serialisation forms agree, bad input gives one clear line naming
file, table and key (never a traceback), and hypothesis fuzzing finds no crash."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.audit import audit_files, load_devices
from aifabric.audit.sonic import parse_config_text, read_pg_lookup
from aifabric.errors import InputError
from test_audit_fixtures import ARISTA_INI, SN2700, arista, audit_cfgs, errors, sn2700, write

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _nested(flat: dict) -> dict:
    out: dict = {}
    for k, v in flat.items():
        t, key = k.split("|", 1)
        out.setdefault(t, {})[key] = v
    return out


def _old_refs(flat: dict) -> dict:
    out = json.loads(json.dumps(flat))
    for k, v in out.items():
        if k.startswith(("BUFFER_PG|", "BUFFER_QUEUE|")):
            v["profile"] = f"[BUFFER_PROFILE|{v['profile']}]"
        if k.startswith("BUFFER_PORT_"):
            v["profile_list"] = ",".join(f"[BUFFER_PROFILE|{p}]" for p in v["profile_list"].split(","))
        if k.startswith("BUFFER_PROFILE|"):
            v["pool"] = f"[BUFFER_POOL|{v['pool']}]"
    return out


def test_three_forms_give_the_same_device(tmp_path):
    """The real SN2700 dump in flat, nested and old [TABLE|key] reference form → identical tables."""
    flat = json.loads(SN2700.read_text())
    forms = {"flat": flat, "nested": _nested(flat), "old": _old_refs(flat)}
    tables = {}
    for name, cfg in forms.items():
        devs, probs = load_devices([write(tmp_path, f"{name}.json", cfg)])
        assert probs == []
        tables[name] = devs[0].tables
    assert tables["flat"] == tables["nested"] == tables["old"]
    assert tables["old"]["BUFFER_PG"]["Ethernet0|3-4"]["profile"] == "pg_lossless_10000_300m_profile"


def test_appl_db_colon_references_and_redis_dump_wrapper():
    """``[BUFFER_PROFILE_TABLE:name]`` (APPL_DB) and redis-dump's {"type","value"} wrapper normalise."""
    text = json.dumps(
        {
            "BUFFER_PG|Ethernet0|0": {
                "type": "hash",
                "value": {"profile": "[BUFFER_PROFILE_TABLE:ingress_lossy_pg_zero_profile]"},
            }
        }
    )
    tables, probs = parse_config_text(text, "x.json")
    assert probs == [] and tables["BUFFER_PG"]["Ethernet0|0"]["profile"] == "ingress_lossy_pg_zero_profile"


def test_port_list_and_range_keys_expand(tmp_path):
    """A key "Ethernet0,Ethernet4|3-4" expands to four (port, PG) entries."""
    cfg = {
        "BUFFER_PG": {"Ethernet0,Ethernet4|3-4": {"profile": "p"}},
        "BUFFER_PROFILE": {"p": {"pool": "x", "size": "0", "xoff": "1", "xon": "0"}},
        "BUFFER_POOL": {"x": {}},
    }
    devs, _ = load_devices([write(tmp_path, "k.json", cfg)])
    assert set(devs[0].buffer_pg()) == {
        ("Ethernet0", 3),
        ("Ethernet0", 4),
        ("Ethernet4", 3),
        ("Ethernet4", 4),
    }


def test_malformed_json_names_file_and_others_still_audited(tmp_path):
    """A truncated file → one 'malformed JSON' line naming it; the good file is still audited."""
    bad = write(tmp_path, "bad.json", SN2700.read_text()[:5000])
    good = write(tmp_path, "good.json", sn2700("leaf-a"))
    r = audit_files([bad, good])
    assert r.devices == ["leaf-a"]
    assert len(r.errors) == 1 and str(r.errors[0]).startswith(f"{bad}: malformed JSON")
    assert r.exit_code() == 2


def test_wrong_field_type_names_table_key_field(tmp_path):
    """xoff "lots" in a BUFFER_PROFILE → '<file>: BUFFER_PROFILE|<name>|xoff: not an integer'."""
    cfg = sn2700()
    cfg["BUFFER_PROFILE|pg_lossless_100000_300m_profile"]["xoff"] = "lots"
    p = write(tmp_path, "t.json", cfg)
    r = audit_files([p])
    assert [str(e) for e in r.errors] == [
        f"{p}: BUFFER_PROFILE|pg_lossless_100000_300m_profile|xoff: not an integer (got 'lots'); "
        "allowed: a decimal integer string (bytes, Mb/s, ms or percent)"
    ]


def test_non_string_field_value_is_reported(tmp_path):
    """A list where SONiC wants a string (PORT|Ethernet0|mtu) → one line naming table, key and field."""
    cfg = sn2700()
    cfg["PORT|Ethernet0"]["mtu"] = [9100]
    r = audit_files([write(tmp_path, "t.json", cfg)])
    assert len(r.errors) == 1 and "PORT|Ethernet0|mtu: field value must be a string" in str(r.errors[0])


def test_missing_profile_reference(tmp_path):
    """BUFFER_PG pointing at a profile that does not exist → a line naming file, BUFFER_PG key and field."""
    cfg = sn2700()
    cfg["BUFFER_PG|Ethernet0|3-4"]["profile"] = "pg_lossless_10000_5m_profile"
    p = write(tmp_path, "t.json", cfg)
    r = audit_files([p])
    assert len(r.errors) == 1
    assert str(r.errors[0]).startswith(
        f"{p}: BUFFER_PG|Ethernet0|3-4|profile: references missing BUFFER_PROFILE "
        "'pg_lossless_10000_5m_profile'"
    )


def test_bad_lookup_ini_names_line(tmp_path):
    """A pg_profile_lookup.ini row with a missing column → InputError naming file and line."""
    p = tmp_path / "pg.ini"
    p.write_text("# speed cable size xon xoff threshold\n100000 5m 1248 1248 96928\n")
    try:
        read_pg_lookup(p)
    except InputError as exc:
        assert str(exc).startswith(f"{p}: line 2: expected 6 or 7 columns")
    else:  # pragma: no cover
        raise AssertionError("no error")


def test_bad_ini_in_a_group_skips_only_that_device(tmp_path):
    """A broken lookup table given with one switch leaves the other switch audited."""
    ini = tmp_path / "pg.ini"
    ini.write_text("garbage\n")
    a = write(tmp_path, "a.json", arista("leaf-1"))
    b = write(tmp_path, "b.json", sn2700("leaf-b"))
    r = audit_files([f"{a}+{ini}", b])
    assert r.devices == ["leaf-b"] and len(r.errors) == 1 and str(ini) in str(r.errors[0])


def test_real_arista_with_table_audits_clean(tmp_path):
    """Sanity: the helper's running-form Arista with its lookup table has no error."""
    assert errors(audit_cfgs(tmp_path, {"a": arista()}, ini=ARISTA_INI)) == set()


# ---------------------------------------------------------------------------------------------
# fuzzing
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=12), c, max_size=4),
    max_leaves=20,
)
_tables = st.sampled_from(
    [
        "PORT",
        "BUFFER_PROFILE",
        "BUFFER_PG",
        "PORT_QOS_MAP",
        "DSCP_TO_TC_MAP",
        "PFC_WD",
        "WRED_PROFILE",
        "CABLE_LENGTH",
        "QUEUE",
        "BUFFER_POOL",
        "OTHER",
    ]
)


@FUZZ
@given(st.text(max_size=300))
def test_fuzz_any_text_never_raises(text):
    """Arbitrary text → (tables, problems); any problem names the file."""
    _tables_out, probs = parse_config_text(text, "f.json")
    assert all(str(p).startswith("f.json") for p in probs)


@FUZZ
@given(
    st.dictionaries(
        st.one_of(_tables, st.builds(lambda t, k: f"{t}|{k}", _tables, st.text(max_size=10))),
        st.dictionaries(st.text(max_size=10), _json, max_size=4),
        max_size=5,
    )
)
def test_fuzz_json_structures_never_raise(data):
    """CONFIG_DB-shaped JSON with random keys, types and values parses or yields clear lines."""
    _tables_out, probs = parse_config_text(json.dumps(data), "f.json")
    assert all(isinstance(p, InputError) and str(p).startswith("f.json") for p in probs)


@FUZZ
@given(st.integers(0, 35000), st.integers(1, 400), st.text(max_size=5))
def test_fuzz_damaged_real_file_is_clear_or_parses(tmp_path, cut, n, junk):
    """The real SN2700 file with a slice replaced by junk: audit_files never raises."""
    text = SN2700.read_text()
    p = write(tmp_path, "d.json", text[:cut] + junk + text[cut + n :])
    r = audit_files([p])
    assert all(str(e).startswith(p) for e in r.errors)
    assert bool(r.errors) or r.devices


@FUZZ
@given(st.lists(st.lists(st.text(alphabet="0123456789m -#x", max_size=8), max_size=8), max_size=6))
def test_fuzz_lookup_ini(rows):
    """Random pg_profile_lookup.ini text → a table or one InputError, never another exception."""
    text = "\n".join(" ".join(r) for r in rows)
    try:
        read_pg_lookup("pg.ini", text=text)
    except InputError as exc:
        assert str(exc).startswith("pg.ini")
