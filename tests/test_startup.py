"""Start-up cost of ``aifabric simulate``: pandas stays off the summary / --json path, the result
tables built lazily from numpy columns equal the DataFrames built before, and the pandas-free
flows table equals :func:`flows_for`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from aifabric.sim import simulate
from aifabric.sim.results import Results, _records
from aifabric.topology import from_spec
from aifabric.workload.traffic import FlowColumns, flow_columns, flows_for
from test_sim_support import fat_tree, scenario, star

ROOT = Path(__file__).resolve().parents[1]

FLOW_DTYPES = {
    "id": "int64",
    "src": "int64",
    "dst": "int64",
    "size_bytes": "int64",
    "start_us": "float64",
    "fct_us": "float64",
    "rx_fct_us": "float64",
    "ideal_fct_us": "float64",
    "slowdown": "float64",
    "throughput_gbps": "float64",
    "sport": "int64",
    "dport": "int64",
    "hops": "int64",
    "cnps": "int64",
    "retransmissions": "int64",
    "completed": "bool",
}


def _small(**fabric):
    return scenario(
        star(4),
        {"kind": "incast", "senders": 3, "receiver": 0, "flow_size": "60KB"},
        fabric={"pfc": {"enabled": True, "mode": "static", "xoff": "12192B", "xon": "8128B"}, **fabric},
    )


def test_simulate_json_does_not_import_pandas(tmp_path):
    """``simulate --json`` and the text summary never import pandas (or pyarrow); ``--out`` does."""
    sc = tmp_path / "s.yaml"
    sc.write_text(
        "name: s\ntopology: {kind: star, hosts: 3, link_rate: 100Gbps, link_delay: 1us}\n"
        "workload: {kind: incast, senders: 2, receiver: 0, flow_size: 8KB}\nsim: {until: 1ms}\n"
    )
    code = (
        "import sys\nfrom aifabric.cli import app\n"
        "for args in (['--json'], [], ['--out', sys.argv[2]]):\n"
        "    try:\n"
        "        app(['simulate', sys.argv[1], '--no-progress', *args])\n"
        "    except SystemExit as e:\n"
        "        assert not e.code, e.code\n"
        "    print('LOADED', args[:1], 'pandas' in sys.modules, 'pyarrow' in sys.modules, flush=True)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(sc), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        check=True,
    )
    loaded = [ln for ln in p.stdout.splitlines() if ln.startswith("LOADED")]
    assert loaded == ["LOADED ['--json'] False False", "LOADED [] False False", "LOADED ['--out'] True True"]


def test_lazy_tables_are_the_dataframes_of_their_columns():
    """Results made from numpy columns: ``to_dict`` (no DataFrame built) gives the same records as
    the DataFrame path; the tables have the documented columns and dtypes and own their memory."""
    res = simulate(_small(qp_split=2))
    assert all(isinstance(res._tables[k], dict) for k in ("flows", "ports", "pfc_log"))
    d = res.to_dict()
    flows = res.flows
    assert isinstance(flows, pd.DataFrame) and res.flows is flows  # built once, then kept
    assert json.dumps(d["flows"]) == json.dumps(_records(flows))
    assert flows.dtypes.astype(str).to_dict() == {**FLOW_DTYPES, "parent_id": "int64"}
    assert list(res.ports.columns)[:3] == ["node", "node_name", "peer"] and len(res.pfc_log) > 0
    assert isinstance(res.flows.index, pd.RangeIndex)
    st = res.extra["state"]
    st.fl[:] = -7  # the tables are copies, not views of the state arrays
    st.pt[:] = -7
    assert (res.ports["max_queue_bytes"] >= 0).all()


def test_results_still_take_dataframes_and_default_pfc_log():
    """The constructor accepts DataFrames (as :func:`aifabric.sim.results.load` passes) and defaults
    the PFC log to an empty table; assignment replaces a table."""
    df = pd.DataFrame({"id": [0], "fct_us": [np.nan]})
    r = Results(scenario="x", flows=df, ports=pd.DataFrame(), summary={}, engine={})
    assert r.flows is df and list(r.pfc_log.columns) == ["time_ns", "node", "node_type", "if_index", "type"]
    assert r.to_dict()["flows"] == [{"id": 0, "fct_us": None}]
    r.flows = df.iloc[:0]
    assert len(r.flows) == 0 and r.extra == {}


@pytest.mark.parametrize(
    "workload,fabric",
    [
        ({"kind": "permutation", "flow_size": "100001B"}, {"qp_split": 3}),
        ({"kind": "all-to-all", "flow_size": "5KB", "start": "2us"}, {}),
        ({"kind": "incast", "senders": 5, "receiver": 2, "flow_size": "10KB"}, {}),
        ({"kind": "poisson", "load": 0.4, "cdf": "websearch", "duration": "50us"}, {}),
        ({"kind": "flows-file", "path": str(ROOT / "scenarios/peer/flow_incast32.txt")}, {"qp_split": 2}),
    ],
)
def test_flow_columns_equal_flows_for(workload, fabric):
    """:func:`flow_columns` is :func:`flows_for` without pandas: same columns, dtypes, rows, attrs;
    a run on it gives the same tables as a run on the DataFrame."""
    sc = scenario(
        fat_tree(4) if workload["kind"] != "flows-file" else fat_tree(8),
        workload,
        fabric=fabric,
        until="300us",
    )
    topo = from_spec(sc.topology)
    cols = flow_columns(sc, topo)
    df = flows_for(sc, topo)
    assert isinstance(cols, FlowColumns) and len(cols) == len(df) and cols.columns == list(df.columns)
    pd.testing.assert_frame_equal(cols.to_frame(), df, check_exact=True)
    assert cols.attrs == df.attrs
    if workload["kind"] == "flows-file":
        return  # 32 x 2 MB: the run itself is covered elsewhere
    a, b = simulate(sc, topology=topo), simulate(sc, flows=df, topology=topo)
    for t in ("flows", "ports", "pfc_log"):
        pd.testing.assert_frame_equal(getattr(a, t), getattr(b, t), check_exact=True)
    ea, eb = dict(a.engine), dict(b.engine)
    ea.pop("wall_s"), eb.pop("wall_s")
    assert a.summary == b.summary and ea == eb


@pytest.mark.parametrize(
    "argv,forbidden",
    [
        (["--help"], ("pandas", "pyarrow", "plotly", "pydantic", "numba", "numpy", "yaml")),
        (["--version"], ("pandas", "pyarrow", "plotly", "pydantic", "numba", "numpy", "rich")),
        (["simulate", "--help"], ("pandas", "pyarrow", "plotly", "numba", "numpy")),
        (["compare", "--help"], ("pandas", "pyarrow", "plotly", "numba", "numpy")),
    ],
)
def test_help_does_not_import_what_it_does_not_need(argv, forbidden):
    """The CLI's help and version load none of the heavy packages a run needs (typer's own option
    coercion loads pydantic for a subcommand's help; bench/startup_budget.py times them)."""
    code = (
        "import sys, io, contextlib\nfrom aifabric.cli import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    run(sys.argv[1:])\n"
        f"print('LOADED', *[m for m in {forbidden!r} if m in sys.modules])\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert p.stdout.strip().splitlines()[-1] == "LOADED", p.stdout
