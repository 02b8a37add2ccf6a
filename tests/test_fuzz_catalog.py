"""Catalog files (``--catalog FILE`` for ``catalog``, ``plan``, ``compare``; issue 32): numbers
are finite, non-negative and within 100 × the packaged catalog's largest value of the same field;
a file is read as a regular file of bounded size, nesting and alias expansion. Every bad file is
one ``error:`` line naming the file and the field, exit 2 — never ``Infinity`` in the output, an
internal error or a hang."""

from __future__ import annotations

import json
import math

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from test_fuzz_support import FUZZ, assert_clean, cli

# one existing record per section and a field of each kind: price, power, a spec number
FIELDS = {
    "switches": ("qm9700", ["price_usd", "power_w", "ports", "buffer_bytes", "latency_ns"]),
    "nics": ("cx7-ib", ["price_usd", "power_w", "port_rate_gbps"]),
    "optics": ("osfp-800g-2xsr4", ["price_usd", "power_w", "reach_m"]),
    "cables": ("dac-passive-400g", ["price_usd", "price_usd_per_m", "delay_ns_per_m", "max_reach_m"]),
    "gpus": ("h100", ["price_usd", "bf16_tflops", "tdp_w", "gpus_per_node"]),
}
BAD_NUMBERS = [math.inf, -math.inf, math.nan, 1e308, 1e30, -1.0]


def _write(tmp_path, doc) -> str:
    p = tmp_path / "cat.yaml"
    p.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return str(p)


def _no_inf_nan(text: str) -> None:
    assert "Infinity" not in text and "NaN" not in text, text[:500]


@pytest.mark.parametrize(
    "section,field", [(s, f) for s, (_, fs) in FIELDS.items() for f in fs], ids=lambda x: str(x)
)
@pytest.mark.parametrize("value", BAD_NUMBERS, ids=["inf", "-inf", "nan", "1e308", "1e30", "neg"])
def test_catalog_number_refused(tmp_path, section, field, value):
    """Each field kind (price, power, spec number) refuses infinite, NaN, absurd and negative
    values: one line naming the file and section[id].field, exit 2."""
    rid = FIELDS[section][0]
    path = _write(tmp_path, {section: [{"id": rid, field: value}]})
    argv = ["catalog", "--catalog", path, "--json"]
    o = cli(argv)
    assert_clean(o, argv)
    assert o.code == 2, (field, value, o.stdout[:300])
    assert path in o.stderr and f"{section}[{rid}].{field}" in o.stderr, o.stderr


@pytest.mark.parametrize("value", [math.inf, math.nan, 1e300, -1.0])
def test_catalog_tco_refused(tmp_path, value):
    """A TCO parameter that is infinite, NaN, absurd or negative is one line naming tco.KEY."""
    path = _write(tmp_path, {"tco": {"electricity_usd_per_kwh": {"value": value}}})
    o = cli(["catalog", "--catalog", path, "--json"])
    assert o.code == 2 and "tco.electricity_usd_per_kwh" in o.stderr, o.stderr


def test_catalog_plausible_override_accepted(tmp_path):
    """A real quote (a switch at 30,000 USD) is accepted and printed as given."""
    path = _write(tmp_path, {"switches": [{"id": "qm9700", "price_usd": 30000}]})
    o = cli(["catalog", "--catalog", path, "--json", "--kind", "switch"])
    assert o.code == 0, o.stderr
    rec = next(r for r in json.loads(o.stdout)["switch"] if r["id"] == "qm9700")
    assert rec["price_usd"] == 30000


def test_plan_never_prints_infinity(tmp_path):
    """plan with an absurd catalog price is refused before pricing: no Infinity capex."""
    path = _write(tmp_path, {"switches": [{"id": "qm9700", "price_usd": 1e308, "power_w": 1e308}]})
    o = cli(["plan", "--gpus", "1024", "--catalog", path, "--json"])
    assert o.code == 2 and "price_usd" in o.stderr, o.stderr
    _no_inf_nan(o.stdout)


def _laughs() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    lines.append("switches: *j")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "kind,fragment",
    [
        ("laughs", "once its aliases"),
        ("deep", "nested more than 64 levels"),
        ("wide", "keys in one mapping"),
    ],
)
def test_catalog_structure_capped(tmp_path, kind, fragment):
    """A billion-laughs file, a deeply nested one and a mapping with 20,000 keys are one line
    each, in well under the time bound (no hang, no RecursionError)."""
    text = {
        "laughs": _laughs(),
        "deep": "switches: " + "[" * 5000 + "]" * 5000 + "\n",
        "wide": "tco:\n" + "".join(f"  k{i}: 1\n" for i in range(20_000)),
    }[kind]
    path = _write(tmp_path, text)
    argv = ["catalog", "--catalog", path]
    o = cli(argv, bound_s=20)
    assert_clean(o, argv)
    assert o.code == 2 and fragment in o.stderr, o.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "folder"])
def test_catalog_not_a_regular_file(tmp_path, target):
    """/dev/zero or a folder as --catalog is one line (not a hang, not out of memory)."""
    path = str(tmp_path) if target == "folder" else target
    argv = ["catalog", "--catalog", path]
    o = cli(argv, bound_s=20)
    assert_clean(o, argv)
    assert o.code == 2 and "not a regular file" in o.stderr, o.stderr


NASTY = st.one_of(
    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -1, 0, 2**70, "", "x", None, True, [], {}]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**80), 2**80),
)


@FUZZ
@given(
    section=st.sampled_from(sorted(FIELDS)),
    data=st.data(),
    value=NASTY,
    cmd=st.sampled_from(["catalog", "plan"]),
)
def test_fuzz_catalog_values(tmp_path_factory, section, data, value, cmd):
    """Any value in any field kind: a clean outcome, and no Infinity / NaN in what is printed."""
    rid, fields = FIELDS[section]
    field = data.draw(st.sampled_from(fields))
    path = _write(tmp_path_factory.mktemp("c"), {section: [{"id": rid, field: value}]})
    argv = [cmd, "--catalog", path, "--json"] + (["--gpus", "256"] if cmd == "plan" else [])
    o = cli(argv, bound_s=60)
    assert_clean(o, argv)
    _no_inf_nan(o.stdout)
    if o.code == 2:
        assert path in o.stderr, o.stderr
