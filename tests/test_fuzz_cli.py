"""Fuzzing command-line flags of ``simulate``, ``validate``, ``collective`` and ``risk``: random
values (numbers, units, NaN / Infinity, garbage, empty), unknown flags and output paths. Every
invocation ends cleanly within a time bound: exit 0 (1 for a deadlock / limit), or exit 2 with one
``error:`` line naming the flag — never a traceback or a usage box."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_fuzz_support import FUZZ, assert_clean, cli

ROOT = Path(__file__).resolve().parents[1]
SMALL = "name: s\ntopology: {kind: star, hosts: 3, link_rate: 100Gbps, link_delay: 1us}\n" + (
    "workload: {kind: incast, senders: 2, receiver: 0, flow_size: 8KB}\nsim: {until: 1ms}\n"
)

VALUES = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "3",
            "8",
            "16",
            "nan",
            "inf",
            "-inf",
            "1e400",
            "99999999999999999999",
            "",
            " ",
            "x",
            "0B",
            "8B",
            "1KB",
            "1e30B",
            "4GiB",
            "400Gbps",
            "1bps",
            "0Gbps",
            "1e30Gbps",
            "1ns",
            "0s",
            "1e20s",
            "ib",
            "roce",
            "both",
            "ring",
            "auto",
            "flow",
            "packet",
            "analytic",
            "1,2",
            ",",
            "-1,2",
        ]
    ),
    st.text(max_size=8),
)


@FUZZ
@given(
    cmd=st.sampled_from(["simulate", "validate"]),
    flags=st.lists(
        st.one_of(
            st.tuples(st.sampled_from(["--mode"]), VALUES),
            st.tuples(st.sampled_from(["--json", "--force", "--no-progress", "--no-build", "--bogus"])),
        ),
        max_size=3,
    ),
    target=st.sampled_from(["small", "missing", "folder", "empty"]),
)
def test_fuzz_simulate_validate_flags(tmp_path_factory, cmd, flags, target):
    """simulate / validate with random --mode values, switches and targets: clean outcomes."""
    tmp = tmp_path_factory.mktemp("cli")
    path = {"small": tmp / "s.yaml", "missing": tmp / "nope.yaml", "folder": tmp, "empty": tmp / "e.yaml"}[
        target
    ]
    (tmp / "s.yaml").write_text(SMALL)
    (tmp / "e.yaml").write_text("")
    argv = [cmd, str(path)] + [x for f in flags for x in f]
    assert_clean(cli(argv, bound_s=30), argv, many_lines_ok=cmd == "validate")


@FUZZ
@given(
    where=st.sampled_from(["new", "nested", "empty", "full", "file", "under-file", "dev-null"]),
    force=st.booleans(),
    mode=st.sampled_from(["packet", "flow"]),
)
def test_fuzz_simulate_out(tmp_path_factory, where, force, mode):
    """--out to new, nested, empty, non-empty folders, files and paths under a file: a non-empty
    folder without --force, a file or an unwritable path is one line (exit 2) before any run."""
    tmp = tmp_path_factory.mktemp("out")
    (tmp / "s.yaml").write_text(SMALL)
    (tmp / "full").mkdir()
    (tmp / "full" / "summary.json").write_text("{}")
    (tmp / "empty").mkdir()
    (tmp / "file").write_text("x")
    out = {
        "new": tmp / "new",
        "nested": tmp / "a" / "b" / "c",
        "empty": tmp / "empty",
        "full": tmp / "full",
        "file": tmp / "file",
        "under-file": tmp / "file" / "sub",
        "dev-null": Path("/dev/null"),
    }[where]
    argv = ["simulate", str(tmp / "s.yaml"), "--out", str(out), "--mode", mode] + (
        ["--force"] if force else []
    )
    o = cli(argv, bound_s=30)
    assert_clean(o, argv)
    refused = where in ("file", "under-file", "dev-null") or (where == "full" and not force)
    assert (o.code == 2) == refused, (where, force, o.stderr)
    if refused:
        assert "--out" in o.stderr and o.stdout == "", o.stderr  # nothing ran
    else:
        names = {"packet": {"flows.parquet", "ports.parquet", "summary.json", "fct.txt", "pfc.txt"}}.get(
            mode, {"flows.parquet", "links.parquet", "summary.json", "flows.json"}
        )
        assert names <= {p.name for p in out.iterdir()}


@FUZZ
@given(
    op=st.one_of(st.sampled_from(["all-reduce", "all-gather", "all-to-all", "broadcast"]), VALUES),
    flags=st.lists(
        st.tuples(
            st.sampled_from(
                ["--gpus", "--gpu", "--technology", "--nic-rate", "--algorithm", "--engine", "--routing"]
                + ["--min-bytes", "--max-bytes"]
            ),
            VALUES,
        ),
        max_size=3,
    ),
    sharp=st.booleans(),
)
def test_fuzz_collective_flags(op, flags, sharp):
    """collective with random op and flag values: clean outcomes within 60 s."""
    argv = ["collective", op, "--engine", "analytic", "--max-bytes", "64MiB"]
    argv += [x for f in flags for x in f] + (["--sharp"] if sharp else [])
    if any(f[0] == "--gpus" and f[1].strip().isdigit() and int(f[1]) > 64 for f in flags):
        argv += ["--gpus", "64"]  # keep a valid sweep small: the time bound is for hangs, not size
    assert_clean(cli(argv, bound_s=60), argv)


@pytest.fixture
def fast_measure(monkeypatch):
    """risk's flags without its packet runs (seconds each): measure() returns a fixed result."""
    import aifabric.stages.risk.testbed as tb

    class _R:
        def to_dict(self):
            return {"stub": True}

    monkeypatch.setattr(tb, "measure_testbed", lambda testbed, *a, **k: _R())


@FUZZ
@given(
    flags=st.lists(
        st.tuples(
            st.sampled_from(
                ["--rate", "--routing", "--buffer", "--hop", "--link-delay", "--step", "--incast-senders"]
                + ["--incast-size", "--storm-duty", "--seeds"]
            ),
            VALUES,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_fuzz_risk_flags(fast_measure, flags):
    """risk with random flag values (the testbed's runs stubbed): exit 0 or one line naming the flag."""
    argv = ["risk", "--json"] + [x for f in flags for x in f]
    o = cli(argv, bound_s=30)
    assert_clean(o, argv)
    if o.code == 2:
        assert any(f[0] in o.stderr for f in flags) or "aifabric risk" in o.stderr, o.stderr
