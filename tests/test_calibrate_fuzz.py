"""Fuzzing the `aifabric calibrate` readers: any text or JSON either parses or raises one
InputError naming the file — never another exception, never a hang (each example is timed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.calibrate.parsers import (
    parse_measurement,
    parse_nccl_tests_json,
    parse_nccl_tests_text,
    parse_perftest_json,
    parse_perftest_text,
)
from aifabric.errors import InputError

REAL = Path(__file__).parent / "fixtures" / "real"
P5 = (
    REAL / "aws-awsome-distributed-training" / "all_reduce_perf.2x-p5.48xlarge.srun-labelled.txt"
).read_text()
ROCE = (REAL / "rocm-gpu-cluster-networking" / "ib_write_bw.bidir.roce-200g.sweep.txt").read_text()
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def check(fn, path: Path, *args) -> None:
    """``fn`` parses or raises an InputError whose one-line message starts with the file; fast."""
    t0 = time.perf_counter()
    try:
        fn(path, *args)
    except InputError as exc:
        msg = str(exc)
        assert msg.startswith(str(path)) and "\n" not in msg
    assert time.perf_counter() - t0 < 2.0


_tokens = st.sampled_from(
    [
        "0:",
        "[1,0]<stdout>:",
        "#",
        "8",
        "1048576",
        "-1",
        "float",
        "sum",
        "none",
        "N/A",
        "nan",
        "1e+05",
        "69.12",
        "#bytes",
        "#iterations",
        "BW",
        "peak[Gb/sec]",
        "t_min[usec]",
        "Link",
        "type",
        ":",
        "IB",
        "Ethernet",
        "\t",
        "RDMA_Write",
        "Latency",
        "Test",
        "-----",
        "NCCL",
        "INFO",
        "NET/IB",
        "Using",
        "size",
        "count",
        "root",
        "[rank 0]",
        "SRD",
        "Connection",
        "speed=400000",
        "Bytes",
        "->",
        "Algo",
        "proto",
    ]
)


@FUZZ
@given(st.lists(st.lists(_tokens, max_size=14).map(" ".join), max_size=30).map("\n".join))
def test_fuzz_token_soup(tmp_path, text):
    """Lines built from the formats' own tokens: every reader is clean."""
    p = tmp_path / "f.txt"
    p.write_text(text)
    for fn in (parse_measurement, parse_nccl_tests_text, parse_perftest_text):
        check(fn, p)


@FUZZ
@given(st.text(max_size=400))
def test_fuzz_any_text(tmp_path, text):
    """Arbitrary unicode text: parse_measurement is clean."""
    p = tmp_path / "f.txt"
    p.write_text(text, encoding="utf-8", errors="surrogatepass")
    check(parse_measurement, p)


@FUZZ
@given(st.integers(0, len(P5)), st.integers(1, 200), st.text(max_size=12))
def test_fuzz_damaged_nccl_tests(tmp_path, cut, n, junk):
    """The real p5 table with a slice replaced by junk parses or fails with one line."""
    p = tmp_path / "all_reduce_perf.txt"
    p.write_text(P5[:cut] + junk + P5[cut + n :])
    check(parse_measurement, p)


@FUZZ
@given(st.integers(0, len(ROCE)), st.integers(1, 200), st.text(max_size=12))
def test_fuzz_damaged_perftest(tmp_path, cut, n, junk):
    """The real RoCE ib_write_bw sweep with a slice replaced by junk parses or fails with one line."""
    p = tmp_path / "bw.txt"
    p.write_text(ROCE[:cut] + junk + ROCE[cut + n :])
    check(parse_measurement, p)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**40) | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=20,
)
_keys = st.sampled_from(
    [
        "size",
        "count",
        "type",
        "out_of_place",
        "in_place",
        "time",
        "alg_bw",
        "bus_bw",
        "MsgSize",
        "BW_peak",
        "BW_average",
        "t_typical",
        "t_avg",
        "devices",
        "hostname",
        "results",
    ]
)


@FUZZ
@given(st.lists(st.dictionaries(_keys, _json, max_size=6), max_size=4))
def test_fuzz_json_shapes(tmp_path, results):
    """nccl-tests / perftest JSON with the right keys and random values: clean."""
    p = tmp_path / "r.json"
    doc = {"results": results}
    p.write_text(json.dumps(doc))
    check(parse_measurement, p)
    check(parse_nccl_tests_json, p, doc)
    check(parse_perftest_json, p, doc)
