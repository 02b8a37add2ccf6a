"""Fuzzing topology files: ns-3 HPCC ``topology.txt`` with corrupted headers, switch lists and link
lines (huge node counts, NaN / negative / enormous rates and delays), and arbitrary text as an
``ibnetdiscover`` dump. The readers return a topology or raise one
:class:`~aifabric.errors.InputError` naming the file; ``validate`` and ``simulate`` on a scenario
using the file end cleanly and agree."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.topology.io import read_hpcc_topology, read_ibnetdiscover
from test_fuzz_support import FUZZ, assert_clean, cli

NASTY = st.sampled_from(
    ["-1", "0", "nan", "inf", "1e400", "99999999999999999999", "x", "", "-1ms", "1e30Gbps", "0Gbps", "1e30ms"]
)


@st.composite
def hpcc_topology(draw):
    """A star of 3 hosts (0..2) on switch 3, then maybe one corrupted token."""
    lines = [["4", "1", "3"], ["3"]] + [[str(h), "3", "100Gbps", "0.001ms", "0"] for h in range(3)]
    if draw(st.booleans()):
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines[i]) - 1))
        lines[i][j] = draw(NASTY)
    if draw(st.integers(0, 4)) == 0:
        lines[0][0] = draw(st.sampled_from(["1000000000000", "5", "100"]))
    return "\n".join(" ".join(x) for x in lines) + "\n"


def _check(tmp, text: str, kind: str, name: str) -> None:
    (tmp / name).write_text(text)
    reader = read_hpcc_topology if kind == "hpcc-file" else read_ibnetdiscover
    try:
        topo = reader(tmp / name)
        assert (topo.link_rate_bps > 0).all() and (topo.link_delay_ps >= 0).all()
    except InputError as exc:
        assert name in str(exc) and "\n" not in str(exc)
    p = tmp / "s.yaml"
    p.write_text(
        f"name: t\ntopology: {{kind: {kind}, path: {name}}}\nworkload: {{kind: permutation, flow_size: 8KB}}\n"
    )
    v = cli(["validate", str(p)], bound_s=30)
    assert_clean(v, ["validate", str(p)], many_lines_ok=True)
    s = cli(["simulate", str(p), "--json", "--no-progress"], bound_s=30)
    assert_clean(s, ["simulate", str(p)])
    assert (v.code == 2) == (s.code == 2), (text, v.stderr, s.stderr)


@FUZZ
@given(text=hpcc_topology())
def test_fuzz_hpcc_topology(tmp_path_factory, text):
    """HPCC topology.txt with one corrupted token: clean outcomes; validate agrees with simulate."""
    _check(tmp_path_factory.mktemp("tp"), text, "hpcc-file", "topo.txt")


@FUZZ
@given(text=st.text(max_size=200))
def test_fuzz_ibnetdiscover_text(tmp_path_factory, text):
    """Arbitrary text as an ibnetdiscover dump: clean outcomes; validate agrees with simulate."""
    _check(tmp_path_factory.mktemp("tp"), text, "ibnetdiscover", "fabric.ibnd")


@pytest.mark.parametrize(
    "text,words",
    [
        (
            "1000000000000 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n",
            "hosts but only",
        ),
        (
            "4 1 3\n3\n0 3 1e30Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n",
            "link rate must be",
        ),
        (
            "4 1 3\n3\n0 3 100Gbps -1ms 0\n1 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n",
            "link delay must be",
        ),
    ],
)
def test_hpcc_topology_rejects(tmp_path, text, words):
    """A node count no link list can connect (10^12 nodes allocated names before), a rate beyond
    int64 (OverflowError before) and a negative delay (accepted before) are one InputError."""
    p = tmp_path / "t.txt"
    p.write_text(text)
    with pytest.raises(InputError) as ei:
        read_hpcc_topology(p)
    assert words in str(ei.value)


IBND = Path(__file__).resolve().parent / "fixtures/real/nvidia-topograph/ibnetdiscover-ndr-example.out.txt"
IB_TOKENS = st.sampled_from(
    ["4xFOO", "0xNDR", "99999999999999999999", "[0]", "[-1]", '""', "Switch", "Ca", "nan", "#"]
)


@st.composite
def ibnetdiscover_dump(draw):
    """The first blocks of a real ibnetdiscover dump with lines deleted, duplicated or corrupted."""
    lines = IBND.read_text().splitlines()[:160]
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "corrupt"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        else:
            parts = lines[i].split()
            if parts:
                parts[draw(st.integers(0, len(parts) - 1))] = draw(IB_TOKENS)
                lines[i] = " ".join(parts)
    return "\n".join(lines) + "\n"


@FUZZ
@given(text=ibnetdiscover_dump())
def test_fuzz_ibnetdiscover_real_dump(tmp_path_factory, text):
    """A real ibnetdiscover dump with lines deleted, duplicated or corrupted: clean outcomes;
    validate agrees with simulate."""
    _check(tmp_path_factory.mktemp("tp"), text, "ibnetdiscover", "fabric.ibnd")
