"""Fuzzing scenario files: small valid scenarios with one or two values replaced by nonsense, extra
or duplicated keys, and arbitrary text. For every file, ``aifabric validate`` and ``aifabric
simulate`` each end cleanly within a time bound (exit 0, 1 for a deadlock / limit, or 2 with one
``error:`` line), and they agree: validate rejects exactly the files simulate rejects."""

from __future__ import annotations

import math

import yaml
from hypothesis import given
from hypothesis import strategies as st

from test_fuzz_support import FUZZ, assert_clean, cli

NASTY = [
    0,
    -1,
    1,
    2**70,
    -(2**70),
    1e40,
    math.inf,
    -math.inf,
    math.nan,
    "",
    "x",
    "Infinity",
    "NaN",
    ".inf",
    "1e40B",
    "-5us",
    "0B",
    "4000 parsecs",
    "100Gbps",
    "1us",
    "2MB",
    "1bps",
    "1ps",
    "1B",
    "64B",
    10**4,
    None,
    True,
    [],
    {},
    [1, 2],
    {"a": 1},
    "a" * 300,
]

topologies = st.one_of(
    st.builds(lambda h: {"kind": "star", "hosts": h}, st.integers(2, 6)),
    st.builds(
        lambda lv, sp, h: {"kind": "leaf-spine", "leaves": lv, "spines": sp, "hosts_per_leaf": h},
        st.integers(1, 3),
        st.integers(1, 2),
        st.integers(1, 3),
    ),
    st.builds(lambda k: {"kind": "fat-tree", "k": k}, st.sampled_from([2, 4])),
    st.builds(
        lambda s, h: {"kind": "ring", "switches": s, "hosts_per_switch": h}, st.integers(3, 5), st.just(1)
    ),
    st.builds(
        lambda a, b: {"kind": "dumbbell", "hosts_left": a, "hosts_right": b},
        st.integers(1, 3),
        st.integers(1, 3),
    ),
)

fabrics = st.fixed_dictionaries(
    {},
    optional={
        "technology": st.sampled_from(["roce", "infiniband"]),
        "mtu": st.sampled_from(["1000B", "4000B", "4096B", "9000B"]),
        "switch_latency": st.sampled_from(["0ns", "300ns"]),
        "switch_buffer": st.sampled_from(["1MB", "32MiB"]),
        "pfc": st.fixed_dictionaries(
            {}, optional={"enabled": st.booleans(), "xoff": st.just("60000B"), "xon": st.just("40000B")}
        ),
        "ecn": st.fixed_dictionaries({"enabled": st.booleans()}),
        "congestion_control": st.sampled_from(["none", "hpcc", "dcqcn"]),
        "ib": st.fixed_dictionaries({}, optional={"vls": st.integers(1, 3), "credit_bytes": st.just("64B")}),
        "failures": st.lists(
            st.fixed_dictionaries(
                {"link": st.sampled_from(["h0-sw0", "leaf0-spine0", "h1-leaf0", "sw0-sw1"])},
                optional={"at": st.sampled_from(["0us", "5us"])},
            ),
            max_size=1,
        ),
        "pause_storms": st.lists(
            st.fixed_dictionaries(
                {"node": st.sampled_from(["sw0", "leaf0", "h0"]), "duration": st.just("2us")},
                optional={"period": st.just("10us"), "count": st.integers(1, 5)},
            ),
            max_size=1,
        ),
        "pfc_overrides": st.lists(
            st.fixed_dictionaries(
                {"switches": st.sampled_from([["sw0"], ["leaf0"], [0]])},
                optional={"xoff": st.just("30000B"), "mode": st.sampled_from(["static", "dynamic"])},
            ),
            max_size=1,
        ),
        "routing": st.sampled_from(["ecmp", "adaptive", "static"]),
        "qp_split": st.integers(1, 3),
    },
)

workloads = st.one_of(
    st.fixed_dictionaries(
        {"kind": st.just("permutation")}, optional={"flow_size": st.sampled_from(["1KB", "20KB", "100KB"])}
    ),
    st.fixed_dictionaries(
        {"kind": st.just("incast"), "senders": st.integers(1, 3)},
        optional={"receiver": st.integers(0, 2), "flow_size": st.sampled_from(["1KB", "30KB"])},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("all-to-all")}, optional={"flow_size": st.sampled_from(["1KB", "10KB"])}
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("poisson"),
            "load": st.sampled_from([0.1, 0.5]),
            "cdf": st.just("websearch"),
            "duration": st.sampled_from(["5us", "20us"]),
        }
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("collective"),
            "op": st.sampled_from(["all-reduce", "all-gather", "broadcast"]),
            "size": st.sampled_from(["64KB", "256KB"]),
        }
    ),
)

scenarios = st.fixed_dictionaries(
    {
        "name": st.just("fuzz"),
        "topology": topologies,
        "workload": workloads,
        "sim": st.fixed_dictionaries(
            {"until": st.sampled_from(["200us", "2ms"])},
            optional={
                "mode": st.sampled_from(["packet", "flow"]),
                "max_events": st.sampled_from([500, 10**6]),
            },
        ),
    },
    optional={"seed": st.one_of(st.integers(0, 5), st.just(2**63 - 1)), "fabric": fabrics},
)


def _paths(d, prefix=()):
    """Every (path, value) leaf and mapping of a nested dict."""
    for k, v in d.items():
        yield (*prefix, k)
        if isinstance(v, dict):
            yield from _paths(v, (*prefix, k))


@st.composite
def mutated(draw):
    """A scenario dict with 0–2 values replaced by nonsense and maybe an unknown key."""
    sc = draw(scenarios)
    for _ in range(draw(st.integers(0, 2))):
        paths = list(_paths(sc))
        path = draw(st.sampled_from(paths))
        cur = sc
        for k in path[:-1]:
            cur = cur[k]
        cur[path[-1]] = draw(st.sampled_from(NASTY))
    if draw(st.booleans()) and draw(st.booleans()):
        sc[draw(st.sampled_from(["colour", "topolgy", "Seed"]))] = 1
    return sc


def _check(tmp_path, text: str) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(text)
    v = cli(["validate", str(p)], bound_s=30)
    assert_clean(v, ["validate", str(p)], many_lines_ok=True)
    s = cli(["simulate", str(p), "--json", "--no-progress"], bound_s=30)
    assert_clean(s, ["simulate", str(p)])
    # validate runs the checks simulate runs: it rejects exactly what simulate rejects, except that
    # a file without a topology or workload (an advisor file for compare) is valid but not runnable
    if v.code == 2:
        assert s.code == 2, (text, v.stderr, s.code)
    elif s.code == 2:
        assert "a simulation needs a" in s.stderr, (text, s.stderr, v.stdout)


@FUZZ
@given(sc=mutated())
def test_fuzz_scenario_values(tmp_path_factory, sc):
    """Small scenarios with nonsense values: validate and simulate end cleanly and agree."""
    _check(tmp_path_factory.mktemp("fz"), yaml.safe_dump(sc, sort_keys=False))


@FUZZ
@given(sc=scenarios, key=st.sampled_from(["name", "seed", "topology", "sim"]))
def test_fuzz_duplicate_keys(tmp_path_factory, sc, key):
    """A top-level key given twice is rejected by both commands naming the line and the key."""
    text = yaml.safe_dump(sc, sort_keys=False) + f"{key}: 1\n"
    tmp = tmp_path_factory.mktemp("fz")
    _check(tmp, text)
    if key in sc:
        o = cli(["simulate", str(tmp / "s.yaml")])
        assert o.code == 2 and f"duplicate key '{key}'" in o.stderr and "line " in o.stderr, o.stderr


@FUZZ
@given(text=st.text(max_size=300))
def test_fuzz_arbitrary_text(tmp_path_factory, text):
    """Any text as a scenario file: one clean line, never a traceback."""
    _check(tmp_path_factory.mktemp("fz"), text)
