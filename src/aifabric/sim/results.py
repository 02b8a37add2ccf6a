"""Result tables of a simulation run, their column descriptions, and file formats.

:class:`Results` holds ``flows`` and ``ports`` (pandas DataFrames, units in the column names),
``summary`` and ``engine`` (dicts). The packet engine hands the tables over as numpy columns; they
become DataFrames when first read, so ``simulate --json`` and the text summary never import
pandas. :data:`COLUMNS` gives every column a one-line description (used for ``--json``, Parquet
metadata and the docs). Writers:

* :meth:`Results.save` — ``flows.parquet``, ``ports.parquet``, ``summary.json``, ``fct.txt``,
  ``pfc.txt``; :func:`load` reads such a folder back.
* :func:`write_fct_txt` — ns-3 HPCC ``fct.txt``: ``src_ip dst_ip sport dport size start_ns fct_ns
  standalone_fct_ns`` (IPs as ns-3 builds them: ``0x0b000001 + (id // 256) << 16 + (id % 256) << 8``).
* :func:`write_pfc_txt` — ns-3 HPCC ``pfc.txt``: ``time_ns node node_type if_index type``
  (type 1 = pause, 0 = resume; logged where the frame is received; ``if_index`` counts the node's
  ports from 1 in link-id order, ns-3's interface 0 being loopback).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SUMMARY_KEYS = (
    "flows",
    "completed_flows",
    "fct_p50_us",
    "fct_p99_us",
    "fct_max_us",
    "slowdown_p50",
    "slowdown_p99",
    "goodput_gbps",
    "jain_fairness",
    "drops",
    "pause_frames",
    "pause_time_us",
    "ecn_marks",
    "max_queue_bytes",
    "deadlock",
    "complete",
)

COLUMNS: dict[str, dict[str, str]] = {
    "flows": {
        "id": "flow id (row of the workload)",
        "src": "sending host (node id)",
        "dst": "receiving host (node id)",
        "size_bytes": "payload bytes",
        "start_us": "start time",
        "fct_us": "flow completion time: start → the sender holds the ACK of the last byte (ns-3 HPCC semantics)",
        "rx_fct_us": "start → the receiver holds the last byte",
        "ideal_fct_us": "the flow alone on the fabric: first-packet path latency + remaining bytes at the bottleneck + ACK return",
        "slowdown": "fct_us / ideal_fct_us",
        "throughput_gbps": "size_bytes × 8 / fct_us",
        "sport": "UDP source port (one QP per flow; ECMP hashes on it)",
        "dport": "destination port",
        "hops": "links on the data path",
        "cnps": "DCQCN congestion notifications the sender received",
        "retransmissions": "go-back-N rewinds (lossy mode: NACK or timeout)",
        "completed": "all bytes acknowledged before the run ended",
        "parent_id": "fabric.qp_split: the original flow this QP is part of",
        "step": "packet-mode collective: index of the network step (engine.steps) this flow belongs to",
    },
    "ports": {
        "node": "node id of the interface",
        "node_name": "node name",
        "peer": "node id at the other end",
        "link": "link id",
        "if_index": "interface index on the node (1-based, link-id order, as ns-3)",
        "rate_gbps": "link rate",
        "max_queue_bytes": "largest egress data queue",
        "mean_queue_bytes": "egress data queue averaged over the run (0 → end)",
        "max_ingress_bytes": "largest ingress occupancy charged to this interface (PFC / credit accounting)",
        "pause_sent": "PFC PAUSE frames this interface sent to its peer",
        "pause_received": "PFC PAUSE frames this interface received",
        "paused_time_us": "time this egress was paused by its peer",
        "ecn_marks": "packets ECN-marked at this egress",
        "drops": "packets dropped at this egress (buffer full)",
        "credit_stall_us": "time this egress had data but not enough InfiniBand credits",
        "tx_bytes": "bytes transmitted (data, ACK, CNP)",
        "tx_packets": "packets transmitted",
        "injected_pause_us": "time this egress was held by an injected PAUSE (fabric.pause_storms; not in paused_time_us)",
        "step": "packet-mode collective: index of the network step (engine.steps) of this row",
    },
    "summary": {
        "flows": "flows in the workload",
        "completed_flows": "flows whose last byte was acknowledged",
        "fct_p50_us": "median FCT of completed flows",
        "fct_p99_us": "99th-percentile FCT",
        "fct_max_us": "largest FCT",
        "slowdown_p50": "median fct / ideal_fct",
        "slowdown_p99": "99th-percentile slowdown",
        "goodput_gbps": "delivered payload bits / (last completion − first start)",
        "jain_fairness": "Jain's index over completed flows' throughputs",
        "drops": "packets dropped",
        "pause_frames": "PFC PAUSE frames sent",
        "pause_time_us": "paused time summed over all egress ports",
        "ecn_marks": "packets ECN-marked",
        "max_queue_bytes": "largest egress queue anywhere",
        "deadlock": "packets stayed queued behind pauses/credits with nothing moving for sim.deadlock_timeout",
        "complete": "every flow finished before the run stopped (false: it hit sim.until or sim.max_events, "
        "or deadlocked; the FCT numbers then cover the finished flows only)",
        "injected_pauses": "with fabric.pause_storms only: injected pause intervals applied (one per paused port and pause)",
        "injected_pause_time_us": "with fabric.pause_storms only: injected-pause time summed over all egress ports",
    },
}


COLUMNS["links"] = {  # flow mode (sim.mode: flow): links.parquet
    "node": "node id of the interface (the sending end)",
    "node_name": "node name",
    "peer": "node id at the other end",
    "peer_name": "peer node name",
    "link": "link id",
    "rate_gbps": "link rate",
    "tx_bytes": "payload bytes of the flows routed over this interface",
    "flows": "flows routed over this interface",
    "mean_utilization": "tx_bytes × 8 / (rate × run time, first start → last completion)",
}
COLUMNS["flow_mode_flows"] = {
    "id": "flow id (row of the workload)",
    "src": "sending host (node id)",
    "dst": "receiving host (node id)",
    "size_bytes": "payload bytes",
    "start_us": "start time",
    "fct_us": "flow completion time (flow model: max-min fair drain + fixed path latency)",
    "ideal_fct_us": "the flow alone on the fabric",
    "slowdown": "fct_us / ideal_fct_us",
}


PFC_LOG_COLUMNS = ("time_ns", "node", "node_type", "if_index", "type")


class _Table:
    """A :class:`Results` table attribute: kept as given; a dict of columns becomes a DataFrame
    (``pandas.DataFrame(columns)``, kept) the first time it is read."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        t = obj._tables[self.name]
        if isinstance(t, dict):
            import pandas as pd

            t = obj._tables[self.name] = pd.DataFrame(t)
        return t

    def __set__(self, obj, value) -> None:
        obj._tables[self.name] = value


class Results:
    """One run: ``flows`` and ``ports`` tables, ``summary`` / ``engine`` dicts, PFC log.

    ``flows``, ``ports`` and ``pfc_log`` may be given as DataFrames or as dicts of equal-length
    numpy columns, which become DataFrames when first read (see :class:`_Table`); ``pfc_log``
    defaults to an empty log."""

    flows = _Table()
    ports = _Table()
    pfc_log = _Table()

    def __init__(
        self,
        scenario: str,
        flows,
        ports,
        summary: dict,
        engine: dict,
        pfc_log=None,
        extra: dict | None = None,
    ):
        self.scenario = scenario
        self._tables = {
            "flows": flows,
            "ports": ports,
            "pfc_log": {c: [] for c in PFC_LOG_COLUMNS} if pfc_log is None else pfc_log,
        }
        self.summary = summary
        self.engine = engine
        self.extra = {} if extra is None else extra

    def __repr__(self) -> str:
        return f"Results(scenario={self.scenario!r}, summary={self.summary!r}, engine={self.engine!r})"

    def to_dict(self, flows: bool = True) -> dict:
        """The ``simulate --json`` object of interface.md."""
        out = {
            "scenario": self.scenario,
            "summary": _jsonable(self.summary),
            "engine": _jsonable(self.engine),
        }
        if flows:
            t = self._tables["flows"]
            out["flows"] = _column_records(t) if isinstance(t, dict) else _records(t)
        return out

    def save(self, folder: str | Path, meta: dict | None = None) -> list[Path]:
        """Write flows.parquet, ports.parquet, summary.json, fct.txt, pfc.txt into ``folder``, each
        atomically (a temporary file renamed into place: a reader never sees half a file).
        ``meta`` adds keys to summary.json."""
        d = Path(folder)
        d.mkdir(parents=True, exist_ok=True)
        paths = [d / "flows.parquet", d / "ports.parquet", d / "summary.json", d / "fct.txt", d / "pfc.txt"]
        atomic_write(paths[0], lambda p: _parquet(self.flows, p, "flows"))
        atomic_write(paths[1], lambda p: _parquet(self.ports, p, "ports"))
        summary = {
            "scenario": self.scenario,
            "summary": _jsonable(self.summary),
            "engine": _jsonable(self.engine),
            **(meta or {}),
            "columns": COLUMNS,
        }
        atomic_write(paths[2], lambda p: p.write_text(json.dumps(summary, indent=2) + "\n"))
        offset = int(self.extra.get("start_offset_ns", 0))
        atomic_write(paths[3], lambda p: write_fct_txt(self.flows, p, offset_ns=offset))
        atomic_write(paths[4], lambda p: write_pfc_txt(self.pfc_log, p))
        return paths


# every file name a results folder may hold (packet or flow mode): --force replaces exactly these
RESULT_FILES = (
    "flows.parquet",
    "ports.parquet",
    "links.parquet",
    "summary.json",
    "fct.txt",
    "pfc.txt",
    "flows.json",
)


def atomic_write(path: str | Path, write) -> Path:
    """Call ``write(tmp)`` on a temporary name in ``path``'s folder, then rename it to ``path``
    (``os.replace``: atomic on POSIX). The temporary is removed if ``write`` fails."""
    import os

    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def save_flow_mode(folder: str | Path, res: dict, flows_df, links_df) -> list[Path]:
    """Write a flow-mode run (:func:`aifabric.flow.scenario.simulate_flow_scenario`'s dict): its
    flows and links tables as Parquet, summary.json (scenario, summary, engine, collective when
    there is one) and flows.json (the ``--json`` flow records), each atomically."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    paths = [d / "flows.parquet", d / "links.parquet", d / "summary.json", d / "flows.json"]
    flows_df = flows_df.copy()
    flows_df.attrs = {}  # per-link arrays: in links.parquet, not in the flows table's metadata
    atomic_write(paths[0], lambda p: _parquet(flows_df, p, "flow_mode_flows"))
    atomic_write(paths[1], lambda p: _parquet(links_df, p, "links"))
    meta = {k: v for k, v in res.items() if k != "flows"}
    meta["columns"] = {"flows": COLUMNS["flow_mode_flows"], "links": COLUMNS["links"]}
    atomic_write(paths[2], lambda p: p.write_text(dumps_strict(meta, indent=2) + "\n"))
    atomic_write(paths[3], lambda p: p.write_text(dumps_strict(res.get("flows", [])) + "\n"))
    return paths


def dumps_strict(obj, **kw) -> str:
    """``json.dumps`` that never writes NaN / Infinity (invalid JSON): one fast encoding when every
    number is finite, else :func:`clean_json` first (non-finite numbers become ``null``)."""

    def default(o):
        if isinstance(o, np.generic):
            return o.item()
        raise TypeError(f"not JSON serialisable: {type(o).__name__}")

    try:
        return json.dumps(obj, allow_nan=False, default=default, **kw)
    except ValueError:
        return json.dumps(clean_json(obj), allow_nan=False, default=default, **kw)


def clean_json(obj):
    """``obj`` with numpy scalars made Python numbers and NaN / ±Infinity made ``None``, so
    ``json.dumps`` writes strict JSON (recursing into dicts, lists and tuples)."""
    if isinstance(obj, dict):
        return {k: clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def _parquet(df: pd.DataFrame, path: Path, table: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.Table.from_pandas(df, preserve_index=False)
    desc = COLUMNS.get(table, {})
    fields = [f.with_metadata({"description": desc.get(f.name, "")}) for f in t.schema]
    t = t.cast(pa.schema(fields, metadata=t.schema.metadata))
    pq.write_table(t, path)


def load(folder: str | Path) -> Results:
    """Read a folder written by :meth:`Results.save`."""
    import pandas as pd

    d = Path(folder)
    meta = json.loads((d / "summary.json").read_text())
    return Results(
        scenario=meta["scenario"],
        flows=pd.read_parquet(d / "flows.parquet"),
        ports=pd.read_parquet(d / "ports.parquet"),
        summary=meta["summary"],
        engine=meta["engine"],
        pfc_log=read_pfc_txt(d / "pfc.txt"),
    )


def _jsonable(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, float) and not np.isfinite(v):
            v = None
        out[k] = v
    return out


def _records(df: pd.DataFrame) -> list[dict]:
    recs = df.to_dict(orient="records")
    return [_jsonable(r) for r in recs]


def _column_records(cols: dict) -> list[dict]:
    """:func:`_records` of ``pandas.DataFrame(cols)`` without building it: ``tolist`` gives the
    same Python scalars as ``DataFrame.to_dict(orient="records")`` for numeric and bool columns."""
    names = list(cols)
    lists = [np.asarray(cols[c]).tolist() for c in names]
    return [_jsonable(dict(zip(names, row, strict=True))) for row in zip(*lists, strict=True)]


def ns3_ip(node) -> np.ndarray:
    node = np.asarray(node, dtype=np.int64)
    return 0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100


def write_fct_txt(flows: pd.DataFrame, path: str | Path, offset_ns: int = 0) -> None:
    """Completed flows in ns-3 HPCC's fct.txt format (``%08x %08x %u %u %lu %lu %lu %lu``)."""
    done = flows[flows["completed"]] if "completed" in flows else flows
    lines = []
    for r in done.itertuples(index=False):
        start_ns = round(r.start_us * 1000) + offset_ns
        lines.append(
            f"{int(ns3_ip(r.src)):08x} {int(ns3_ip(r.dst)):08x} {int(r.sport)} {int(r.dport)} "
            f"{int(r.size_bytes)} {start_ns} {round(r.fct_us * 1000)} {round(r.ideal_fct_us * 1000)}"
        )
    Path(path).write_text("".join(line + "\n" for line in lines))


def read_fct_txt(path: str | Path) -> pd.DataFrame:
    import pandas as pd

    cols = ["src_ip", "dst_ip", "sport", "dport", "size_bytes", "start_ns", "fct_ns", "standalone_fct_ns"]
    rows = [ln.split() for ln in Path(path).read_text().splitlines() if ln.strip()]
    df = pd.DataFrame(rows, columns=cols)
    for c in cols[:2]:
        df[c] = df[c].map(lambda x: int(x, 16))
    for c in cols[2:]:
        df[c] = df[c].astype(np.int64)
    return df


def write_pfc_txt(log: pd.DataFrame, path: str | Path) -> None:
    lines = [
        f"{int(r.time_ns)} {int(r.node)} {int(r.node_type)} {int(r.if_index)} {int(r.type)}"
        for r in log.itertuples(index=False)
    ]
    Path(path).write_text("".join(line + "\n" for line in lines))


def read_pfc_txt(path: str | Path) -> pd.DataFrame:
    import pandas as pd

    rows = [[int(x) for x in ln.split()] for ln in Path(path).read_text().splitlines() if ln.strip()]
    return (
        pd.DataFrame(rows, columns=["time_ns", "node", "node_type", "if_index", "type"], dtype=np.int64)
        if rows
        else pd.DataFrame(
            {c: pd.Series(dtype=np.int64) for c in ["time_ns", "node", "node_type", "if_index", "type"]}
        )
    )
