"""Fuzzing flow files: ns-3 HPCC ``flow.txt`` and htsim ``.cm`` connection matrices with valid rows
mixed with nonsense tokens, wrong counts, NaN / Infinity start times, huge ids, odd key/value
pairs and arbitrary text. The readers either return a flows table or raise one
:class:`~aifabric.errors.InputError` naming the file and line; ``validate`` and ``simulate`` on a
scenario using the file end cleanly and agree (a file ``simulate`` rejects fails ``validate``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.workload.traffic import read_flow_file
from test_fuzz_support import FUZZ, assert_clean, cli

HOSTS = 6  # a star of 6 hosts: host ids 0..5, the switch is node 6
TOKENS = st.one_of(
    st.integers(-3, 8).map(str),
    st.sampled_from(
        ["nan", "inf", "-inf", "1e400", "99999999999999999999", "-0", "0x10", "1.5", "", "id", "size", "->"]
    ),
    st.text(alphabet="0123456789.-e>x ", min_size=1, max_size=6),
)


@st.composite
def hpcc_rows(draw):
    rows = []
    for _ in range(draw(st.integers(0, 5))):
        s, d = draw(st.integers(0, HOSTS - 1)), draw(st.integers(0, HOSTS - 1))
        row = [
            str(s),
            str(d),
            "3",
            "100",
            str(draw(st.integers(1, 50_000))),
            draw(st.sampled_from(["2.0", "2.000001", "0"])),
        ]
        if draw(st.integers(0, 3)) == 0:  # corrupt one field
            row[draw(st.integers(0, 5))] = draw(TOKENS)
        if draw(st.integers(0, 6)) == 0:
            row.append(draw(TOKENS))
        if draw(st.integers(0, 6)) == 0:
            row.pop()
        rows.append(" ".join(row))
    count = draw(st.one_of(st.just(str(len(rows))), TOKENS))
    return "\n".join([count, *rows]) + "\n"


@st.composite
def htsim_rows(draw):
    rows = []
    for i in range(draw(st.integers(0, 5))):
        s, d = draw(st.integers(0, HOSTS - 1)), draw(st.integers(0, HOSTS - 1))
        parts = [f"{s}->{d}", "id", str(i + 1), "start", draw(st.sampled_from(["0", "1000000"])), "size"]
        parts.append(str(draw(st.integers(1, 50_000))))
        if draw(st.integers(0, 3)) == 0:
            parts[draw(st.integers(0, len(parts) - 1))] = draw(TOKENS)
        if draw(st.integers(0, 6)) == 0:
            parts.append(draw(TOKENS))
        rows.append(" ".join(parts))
    head = [f"Nodes {HOSTS}", f"Connections {draw(st.one_of(st.just(str(len(rows))), TOKENS))}"]
    return "\n".join(head + rows) + "\n"


def _scenario(tmp, flow_name: str, text: str):
    (tmp / flow_name).write_text(text)
    p = tmp / "s.yaml"
    p.write_text(
        "name: ff\ntopology: {kind: star, hosts: 6, link_rate: 100Gbps, link_delay: 1us}\n"
        f"workload: {{kind: flows-file, path: {flow_name}}}\nsim: {{until: 2ms}}\n"
    )
    return p


def _check(tmp, flow_name: str, text: str) -> None:
    p = _scenario(tmp, flow_name, text)
    # the reader: a table of positive sizes and non-negative starts, or one InputError naming the file
    try:
        t = read_flow_file(tmp / flow_name)
        assert np.all(t["size_bytes"] > 0) and np.all(t["start_ps"] >= 0)
    except InputError as exc:
        assert flow_name in str(exc) and "\n" not in str(exc)
    v = cli(["validate", str(p)], bound_s=30)
    assert_clean(v, ["validate", str(p)], many_lines_ok=True)
    s = cli(["simulate", str(p), "--json", "--no-progress"], bound_s=30)
    assert_clean(s, ["simulate", str(p)])
    assert (v.code == 2) == (s.code == 2), (text, v.stderr, s.stderr)


@FUZZ
@given(text=hpcc_rows())
def test_fuzz_hpcc_flow_txt(tmp_path_factory, text):
    """ns-3 HPCC flow.txt with corrupted fields: clean outcomes; validate agrees with simulate."""
    _check(tmp_path_factory.mktemp("ff"), "flows.txt", text)


@FUZZ
@given(text=htsim_rows())
def test_fuzz_htsim_cm(tmp_path_factory, text):
    """htsim .cm with corrupted fields: clean outcomes; validate agrees with simulate."""
    _check(tmp_path_factory.mktemp("ff"), "flows.cm", text)


@FUZZ
@given(text=st.text(max_size=200), name=st.sampled_from(["flows.txt", "flows.cm"]))
def test_fuzz_flow_file_arbitrary_text(tmp_path_factory, text, name):
    """Any text as a flow file of either format: clean outcomes; validate agrees with simulate."""
    _check(tmp_path_factory.mktemp("ff"), name, text)


@pytest.mark.parametrize(
    "name,text,words",
    [
        ("f.txt", "1\n0 1 3 100 1000 nan\n", "start must be a number"),
        ("f.txt", "1\n0 1 3 100 1000 inf\n", "start must be a number"),
        ("f.txt", "1\n0 1 3 100 99999999999999999999 0\n", "size must be in"),
        ("f.txt", "1\n99999999999999999999 1 3 100 1000 0\n", "host ids must be in"),
        ("f.txt", "1\n0 1 3 100 1000 0 extra\n", "expected 6 fields"),
        ("f.txt", "1 2\n0 1 3 100 1000 0\n", "first line must be the number of flows"),
        ("f.txt", "1\n0 1 x 100 1000 0\n", "expected integers"),
        ("f.txt", "1\n0 1 3 70000 1000 0\n", "dport in 0..65535"),
        ("f.cm", "Connections 1\n0->1 id 1 start nan size 10\n", "start must be a number"),
        ("f.cm", "Connections 1\n0->1 id 1 size\n", "'key value' pairs"),
        ("f.cm", "Connections 1\n0->1 size 10 size 20\n", "given twice"),
        ("f.cm", "Connections x\n0->1 size 10\n", "expected 'Connections N'"),
        ("f.cm", "Connections 1\n0->1 id one size 10\n", "must be integers"),
        ("f.cm", "\xff\xfe", None),
    ],
)
def test_flow_file_reader_rejects(tmp_path, name, text, words):
    """Malformed rows that the readers used to accept, mis-read or crash on (NaN/Infinity start,
    ids or sizes beyond int64, extra fields, a count line with two numbers, odd key/value pairs,
    duplicate keys) are one InputError naming the file and the line."""
    p = tmp_path / name
    if words is None:
        p.write_bytes(b"\xff\xfe\x00garbage")
        words = "not UTF-8 text"
    else:
        p.write_text(text)
    with pytest.raises(InputError) as ei:
        read_flow_file(p)
    assert words in str(ei.value) and name in str(ei.value)


@FUZZ
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.integers(-5, 10**7).map(str), TOKENS),
            st.one_of(st.integers(-5, 120).map(str), TOKENS),
        ),
        max_size=6,
    )
)
def test_fuzz_flow_size_cdf(tmp_path_factory, rows):
    """A flow-size CDF file (``size percent`` lines): a (k, 2) table whose sizes and fractions are
    non-decreasing and end at 100 % with a mean of at least 1 byte, or one InputError naming it."""
    from aifabric.workload.traffic import cdf_mean, read_cdf

    p = tmp_path_factory.mktemp("cdf") / "sizes.cdf"
    p.write_text("".join(f"{a} {b}\n" for a, b in rows))
    try:
        cdf = read_cdf(str(p))
    except InputError as exc:
        assert "sizes.cdf" in str(exc) and "\n" not in str(exc)
        return
    assert cdf.shape[1] == 2 and cdf[-1, 1] == 1.0 and cdf_mean(cdf) >= 1
    assert np.all(np.diff(cdf[:, 0]) >= 0) and np.all(np.diff(cdf[:, 1]) >= 0)


@st.composite
def endpoint_rows(draw):
    """Well-formed htsim rows (0..3 flows) whose endpoints may lie outside the topology."""
    rows = []
    for i in range(draw(st.integers(0, 3))):
        s, d = draw(st.integers(0, HOSTS + 3)), draw(st.integers(0, HOSTS + 3))
        rows.append(f"{s}->{d} id {i + 1} start 0 size {draw(st.integers(1, 20_000))}")
    return "\n".join([f"Nodes {HOSTS}", f"Connections {len(rows)}", *rows]) + "\n"


@FUZZ
@given(text=endpoint_rows())
def test_fuzz_flow_file_runs_something(tmp_path_factory, text):
    """A flow file with no flows, or with an endpoint outside the topology, is refused (exit 2,
    by validate and simulate alike); a run that starts has at least one flow (issue 32: such
    files ran and reported nothing)."""
    import json

    tmp = tmp_path_factory.mktemp("ff")
    p = _scenario(tmp, "flows.cm", text)
    s = cli(["simulate", str(p), "--json", "--no-progress"], bound_s=30)
    assert_clean(s, ["simulate", str(p)])
    v = cli(["validate", str(p)], bound_s=30)
    assert (v.code == 2) == (s.code == 2), (text, v.stderr, s.stderr)
    if s.code != 2:
        assert json.loads(s.stdout)["summary"]["flows"] >= 1, text
    if "Connections 0" in text:
        assert s.code == 2 and "no flows" in s.stderr, s.stderr
