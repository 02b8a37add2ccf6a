"""Synthetic traffic and flow-file readers → one flows table.

Every generator returns a :class:`pandas.DataFrame` with columns ``id``, ``src``, ``dst`` (node
ids), ``size_bytes``, ``start_ps`` (int), ``dport``. ``attrs["start_offset_ps"]`` holds a time
subtracted from the file's start times (ns-3 HPCC flow files begin at 2 s, the apps' start; the
fct.txt writer adds it back). :func:`flow_columns` is :func:`flows_for` without pandas: the same
table as :class:`FlowColumns` (numpy columns), which :func:`aifabric.sim.simulate` uses so that a
run that never reads a DataFrame never imports pandas.

* :func:`permutation` — a seeded uniform derangement (nobody sends to itself; two hosts swap),
  :func:`aifabric.flow.draws.derangement`, the same draw as the flow model's generator so both
  engines see the same flows.
* :func:`incast` — N senders (the first N hosts other than the receiver) → one receiver.
* :func:`all_to_all` — every ordered pair.
* :func:`poisson` — per-host Poisson arrivals at a load from a flow-size CDF (``websearch``,
  ``fb_hadoop`` shipped, or a file path), destinations uniform among other hosts.
* :func:`read_hpcc_flows` (ns-3 HPCC ``flow.txt``) and :func:`read_htsim_cm` (htsim ``.cm``).
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from aifabric.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

HPCC_DPORT = 100
MAX_ID = 1 << 31  # host ids in flow files
MAX_FLOW_BYTES = 10**15  # 1 PB, as scenario sizes
MAX_START_S = 1e5  # flow start times: as scenario times (10^17 ps)
ROCE_DPORT = 4791
CDFS = ("websearch", "fb_hadoop")


class FlowColumns:
    """A flows table as numpy columns (name → 1-d array, all the same length) plus ``attrs``: what
    the generators build; :meth:`to_frame` gives the :class:`pandas.DataFrame` the public functions
    return. Supports the reads the packet engine makes of a flows table (``len``, ``t[name]``,
    ``name in t.columns``, ``t.attrs``)."""

    def __init__(self, cols: dict[str, np.ndarray], attrs: dict | None = None):
        self.cols = dict(cols)
        self.attrs = dict(attrs or {})

    def __len__(self) -> int:
        return len(next(iter(self.cols.values()))) if self.cols else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    def __contains__(self, name: str) -> bool:
        return name in self.cols

    @property
    def columns(self) -> list[str]:
        return list(self.cols)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        df = pd.DataFrame(self.cols)
        df.attrs.update(self.attrs)
        return df


def _columns(src, dst, size, start_ps, dport=ROCE_DPORT, offset_ps: int = 0) -> FlowColumns:
    src = np.asarray(src, dtype=np.int64)
    return FlowColumns(
        {
            "id": np.arange(len(src), dtype=np.int64),
            "src": src,
            "dst": np.asarray(dst, dtype=np.int64),
            "size_bytes": np.broadcast_to(np.asarray(size, dtype=np.int64), src.shape).copy(),
            "start_ps": np.broadcast_to(np.asarray(start_ps, dtype=np.int64), src.shape).copy(),
            "dport": np.broadcast_to(np.asarray(dport, dtype=np.int64), src.shape).copy(),
        },
        {"start_offset_ps": int(offset_ps)},
    )


def _table(src, dst, size, start_ps, dport=ROCE_DPORT, offset_ps: int = 0) -> pd.DataFrame:
    return _columns(src, dst, size, start_ps, dport, offset_ps).to_frame()


def permutation(hosts: np.ndarray, size_bytes: int, seed: int, start_ps: int = 0) -> pd.DataFrame:
    """Host ``hosts[i]`` sends to ``hosts[perm[i]]``, ``perm`` a seeded derangement."""
    return _permutation(hosts, size_bytes, seed, start_ps).to_frame()


def _permutation(hosts: np.ndarray, size_bytes: int, seed: int, start_ps: int = 0) -> FlowColumns:
    from aifabric.flow.draws import derangement

    perm = derangement(len(hosts), np.random.default_rng(seed))
    return _columns(hosts, hosts[perm], size_bytes, start_ps)


def incast(
    hosts: np.ndarray, senders: int, receiver: int, size_bytes: int, start_ps: int = 0
) -> pd.DataFrame:
    """``senders`` hosts (the first ones other than host index ``receiver``) → ``hosts[receiver]``."""
    return _incast(hosts, senders, receiver, size_bytes, start_ps).to_frame()


def _incast(
    hosts: np.ndarray, senders: int, receiver: int, size_bytes: int, start_ps: int = 0
) -> FlowColumns:
    if receiver >= len(hosts):
        raise InputError(
            "receiver is not a host",
            field="workload.receiver",
            value=receiver,
            allowed=f"0..{len(hosts) - 1}",
        )
    others = hosts[hosts != hosts[receiver]]
    if senders > len(others):
        raise InputError(
            "more senders than hosts", field="workload.senders", value=senders, allowed=f"1..{len(others)}"
        )
    src = others[:senders]
    return _columns(src, np.full(len(src), hosts[receiver]), size_bytes, start_ps)


def all_to_all(hosts: np.ndarray, size_bytes: int, start_ps: int = 0) -> pd.DataFrame:
    return _all_to_all(hosts, size_bytes, start_ps).to_frame()


def _all_to_all(hosts: np.ndarray, size_bytes: int, start_ps: int = 0) -> FlowColumns:
    n = len(hosts)
    s, d = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    m = s != d
    return _columns(hosts[s[m]], hosts[d[m]], size_bytes, start_ps)


# ---- CDF-driven Poisson -----------------------------------------------------------------------
def read_cdf(name_or_path: str) -> np.ndarray:
    """``(k, 2)`` array of (size_bytes, cumulative fraction) from a shipped name or a file with
    ``size percent`` lines (``#`` comments)."""
    if name_or_path in CDFS:
        text = resources.files("aifabric.data").joinpath(f"cdfs/{name_or_path}.txt").read_text()
        where = f"{name_or_path} (shipped)"
    else:
        from aifabric.memory import read_text

        p = Path(name_or_path)
        try:
            text = read_text(p, "flow-size CDF")
        except InputError as exc:
            raise InputError(
                exc.problem,
                field="workload.cdf",
                value=name_or_path,
                allowed=", ".join(CDFS) + " or a file path",
            ) from None
        where = str(p)
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            size, pct = float(parts[0]), float(parts[1])
            if not (math.isfinite(size) and math.isfinite(pct) and 0 <= size <= MAX_FLOW_BYTES and pct >= 0):
                raise ValueError
        except ValueError:
            raise InputError(
                "expected 'size_bytes cumulative_percent' (finite, size 0..1e15, percent 0..100)",
                file=where,
                field=f"line {n}",
                value=line,
            ) from None
        rows.append((size, pct / 100.0))
    cdf = np.asarray(rows, dtype=np.float64)
    if len(cdf) < 2 or np.any(np.diff(cdf[:, 1]) < 0) or np.any(np.diff(cdf[:, 0]) < 0) or cdf[-1, 1] != 1.0:
        raise InputError("a CDF needs ≥ 2 non-decreasing points ending at 100 %", file=where)
    if cdf_mean(cdf) < 1:
        raise InputError(
            "the CDF's mean flow size is below 1 byte", file=where, allowed="flow sizes of 1 byte or more"
        )
    return cdf


def cdf_mean(cdf: np.ndarray) -> float:
    """Mean of the piecewise-linear CDF (uniform between points)."""
    dp = np.diff(cdf[:, 1])
    mid = (cdf[1:, 0] + cdf[:-1, 0]) / 2
    return float((dp * mid).sum())


def poisson(
    hosts: np.ndarray, load: float, cdf: np.ndarray, duration_ps: int, host_rate_bps: float, seed: int
) -> pd.DataFrame:
    """Per-host Poisson flow arrivals so each host offers ``load`` × its link rate on average."""
    return _poisson(hosts, load, cdf, duration_ps, host_rate_bps, seed).to_frame()


def _poisson(
    hosts: np.ndarray, load: float, cdf: np.ndarray, duration_ps: int, host_rate_bps: float, seed: int
) -> FlowColumns:
    rng = np.random.default_rng(seed)
    mean = cdf_mean(cdf)
    lam_per_ps = load * host_rate_bps / (mean * 8) / 1e12
    src, dst, size, start = [], [], [], []
    n = len(hosts)
    if n < 2:
        raise InputError("poisson traffic needs ≥ 2 hosts", field="workload.hosts")
    for i, h in enumerate(hosts.tolist()):
        t = 0.0
        expect = int(duration_ps * lam_per_ps * 1.5) + 16
        gaps = rng.exponential(1 / lam_per_ps, expect)
        times = np.cumsum(gaps)
        times = times[times < duration_ps]
        k = len(times)
        d = rng.integers(0, n - 1, k)
        d = np.where(d >= i, d + 1, d)
        u = rng.random(k)
        sz = np.maximum(1, np.round(np.interp(u, cdf[:, 1], cdf[:, 0]))).astype(np.int64)
        src.append(np.full(k, h))
        dst.append(hosts[d])
        size.append(sz)
        start.append(times.astype(np.int64))
        del t
    src_a, dst_a, size_a, start_a = (
        np.concatenate(x) if x else np.zeros(0, np.int64) for x in (src, dst, size, start)
    )
    order = np.lexsort((src_a, start_a))
    return _columns(src_a[order], dst_a[order], size_a[order], start_a[order])


# ---- flow files -------------------------------------------------------------------------------
def _read_text(path: Path, what: str) -> str:
    """A text file's contents, or a one-line InputError (missing, unreadable, not a regular file,
    too big for memory, not UTF-8 text)."""
    from aifabric.memory import read_text

    return read_text(path, what)


def _bad(path, n, problem, line) -> InputError:
    return InputError(problem, file=str(path), field=f"line {n}", value=line.strip()[:80])


def read_hpcc_flows(path: str | Path, shift_to_zero: bool = True) -> pd.DataFrame:
    """ns-3 HPCC ``flow.txt``: first line the flow count, then ``src dst pg dport size start_s``.
    With ``shift_to_zero`` the earliest start becomes t = 0 (ns-3 experiments start apps at 2 s);
    the shift is kept in ``attrs["start_offset_ps"]``."""
    return _read_hpcc_flows(path, shift_to_zero).to_frame()


def _read_hpcc_flows(path: str | Path, shift_to_zero: bool = True) -> FlowColumns:
    path = Path(path)
    lines = _read_text(path, "flow file").splitlines()
    body = [(n, ln) for n, ln in enumerate(lines, 1) if ln.strip()]
    if not body:
        raise InputError("empty flow file", file=str(path))
    n0, first = body[0]
    try:
        head = first.split()
        if len(head) != 1:
            raise ValueError
        count = int(head[0])
    except ValueError:
        raise _bad(path, n0, "first line must be the number of flows (one integer)", first) from None
    rows = body[1:]
    if len(rows) != count:
        raise InputError(
            f"header says {count} flows, file has {len(rows)}", file=str(path), field=f"line {n0}"
        )
    src, dst, dport, size, start = [], [], [], [], []
    for n, ln in rows:
        parts = ln.split()
        if len(parts) < 6:
            raise _bad(path, n, "expected 'src dst priority dport size_bytes start_s'", ln)
        if len(parts) > 6:
            raise _bad(path, n, "expected 6 fields 'src dst priority dport size_bytes start_s'", ln)
        try:
            s, d, pg, dp, sz = (int(x) for x in parts[:5])
            t = float(parts[5])
        except ValueError:
            raise _bad(
                path, n, "expected integers src dst priority dport size_bytes and a start time in s", ln
            ) from None
        if not (0 <= s < MAX_ID and 0 <= d < MAX_ID):
            raise _bad(path, n, f"host ids must be in 0..{MAX_ID - 1}", ln)
        if not 0 < sz <= MAX_FLOW_BYTES:
            raise _bad(path, n, f"size must be in 1..{MAX_FLOW_BYTES} bytes", ln)
        if not (math.isfinite(t) and 0 <= t <= MAX_START_S):
            raise _bad(path, n, f"start must be a number of seconds in 0..{MAX_START_S:g}", ln)
        if not (0 <= pg <= 7 and 0 <= dp <= 65535):
            raise _bad(path, n, "priority must be in 0..7 and dport in 0..65535", ln)
        src.append(s)
        dst.append(d)
        dport.append(dp)
        size.append(sz)
        start.append(round(t * 1e12))
    start_a = np.asarray(start, dtype=np.int64)
    offset = int(start_a.min()) if shift_to_zero and len(start_a) else 0
    return _columns(src, dst, size, start_a - offset, dport=dport, offset_ps=offset)


def read_htsim_cm(path: str | Path) -> pd.DataFrame:
    """htsim connection matrix: ``Nodes N``, ``Connections C`` (optional ``Triggers``/``Failures``
    headers), then ``SRC->DST [id I] [start T] [size BYTES] ...`` with ``start`` in picoseconds:
    csg-htsim's ``ConnectionMatrix::load`` of this format stores it as is ("start is in picoseconds
    already"; only its old header-less format read µs). The peer files all start at 0."""
    return _read_htsim_cm(path).to_frame()


def _read_htsim_cm(path: str | Path) -> FlowColumns:
    path = Path(path)
    lines = _read_text(path, "connection matrix").splitlines()
    conns = None
    src, dst, size, start = [], [], [], []
    for n, ln in enumerate(lines, 1):
        parts = ln.split()
        if not parts or parts[0].startswith("#"):
            continue
        head = parts[0]
        if head in ("Nodes", "Triggers", "Failures", "Connections"):
            try:
                if len(parts) != 2 or int(parts[1]) < 0:
                    raise ValueError
                value = int(parts[1])
            except ValueError:
                raise _bad(path, n, f"expected '{head} N' (N a non-negative integer)", ln) from None
            if head == "Connections":
                conns = value
            continue
        if "->" not in head:
            if head.startswith("trigger") or head.startswith("failure"):
                continue
            raise _bad(path, n, "expected 'SRC->DST ...' or a header (Nodes, Connections)", ln)
        try:
            s, d = (int(x) for x in head.split("->"))
        except ValueError:
            raise _bad(path, n, "expected integer host ids 'SRC->DST'", ln) from None
        if len(parts) % 2 == 0:
            raise _bad(path, n, "expected 'SRC->DST' then 'key value' pairs (id, start, size, ...)", ln)
        fields = {}
        for k in range(1, len(parts) - 1, 2):
            if parts[k] in fields:
                raise _bad(path, n, f"key {parts[k]!r} given twice", ln)
            fields[parts[k]] = parts[k + 1]
        try:
            sz = int(fields["size"])
            t_ps = float(fields.get("start", 0))
            if "id" in fields:
                int(fields["id"])
        except KeyError:
            raise _bad(path, n, "connection needs 'size BYTES'", ln) from None
        except ValueError:
            raise _bad(path, n, "size and id must be integers and start a number (ps)", ln) from None
        if not (0 <= s < MAX_ID and 0 <= d < MAX_ID):
            raise _bad(path, n, f"host ids must be in 0..{MAX_ID - 1}", ln)
        if not 0 < sz <= MAX_FLOW_BYTES:
            raise _bad(path, n, f"size must be in 1..{MAX_FLOW_BYTES} bytes", ln)
        if not (math.isfinite(t_ps) and 0 <= t_ps <= MAX_START_S * 1e12):
            raise _bad(path, n, f"start must be a number of picoseconds in 0..{MAX_START_S * 1e12:g}", ln)
        src.append(s)
        dst.append(d)
        size.append(sz)
        start.append(round(t_ps))
    if conns is not None and conns != len(src):
        raise InputError(f"header says {conns} connections, file has {len(src)}", file=str(path))
    return _columns(src, dst, size, start)


def read_flow_file(path: str | Path, fmt: str | None = "auto") -> pd.DataFrame:
    """Dispatch on ``fmt`` (``hpcc``, ``htsim``; ``auto`` = ``.cm`` → htsim, else hpcc)."""
    return _read_flow_file(path, fmt).to_frame()


def _read_flow_file(path: str | Path, fmt: str | None = "auto") -> FlowColumns:
    if fmt in (None, "auto"):
        fmt = "htsim" if str(path).endswith(".cm") else "hpcc"
    return _read_htsim_cm(path) if fmt == "htsim" else _read_hpcc_flows(path)


def _count_lines(path: str | Path) -> int:
    """Lines of a file, counted in 1 MiB blocks (no parsing): a flow file's row count bound."""
    n = 0
    if not Path(path).is_file():  # a folder, a device such as /dev/zero: the reader reports it
        return 0
    try:
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                n += block.count(b"\n")
    except OSError:
        return 0  # the reader reports the problem
    return n + 1


def estimate_flow_count(scenario, topo) -> int:
    """How many flows (QPs, after ``fabric.qp_split``) :func:`flow_columns` will build, computed
    without building them, so a memory guard can refuse first. Poisson: the expected arrivals
    × 1.5 (the generator's draw); a flow file: its line count."""
    w = scenario.workload
    if w is None:
        return 0
    hosts = topo.num_hosts
    n = min(w.hosts or hosts, hosts)
    if w.kind == "permutation":
        count = n
    elif w.kind == "incast":
        count = w.senders
    elif w.kind == "all-to-all":
        count = n * (n - 1)
    elif w.kind == "poisson":
        try:
            mean = cdf_mean(read_cdf(w.cdf))
        except InputError:
            return 0  # reported when the flows are built
        rate = float(topo.link_rate_bps[0]) if topo.num_links else 1.0
        count = int(n * (w.duration * w.load * rate / (max(mean, 1.0) * 8) / 1e12 * 1.5 + 16))
    elif w.kind == "flows-file":
        count = _count_lines(w.path)
    else:
        return 0
    return int(count) * int(getattr(scenario.fabric, "qp_split", 1) or 1)


def flows_for(scenario, topo) -> pd.DataFrame:
    """The flows table of ``scenario.workload`` on ``topo``; checks endpoints are hosts."""
    return flow_columns(scenario, topo).to_frame()


def flow_columns(scenario, topo) -> FlowColumns:
    """:func:`flows_for` as :class:`FlowColumns` (no pandas)."""
    w = scenario.workload
    hosts = topo.hosts
    start = w.start or 0
    if w.hosts is not None and w.hosts > len(hosts):
        raise InputError(
            "more hosts than the topology has",
            field="workload.hosts",
            value=w.hosts,
            allowed=f"2..{len(hosts)}",
        )
    if w.kind == "permutation":
        df = _permutation(hosts[: (w.hosts or len(hosts))], w.flow_size_bytes, scenario.seed, start)
    elif w.kind == "incast":
        df = _incast(hosts, w.senders, int(w.receiver or 0), w.flow_size_bytes, start)
    elif w.kind == "all-to-all":
        df = _all_to_all(hosts[: (w.hosts or len(hosts))], w.flow_size_bytes, start)
    elif w.kind == "poisson":
        rate = float(topo.link_rate_bps[0]) if topo.num_links else 1.0
        df = _poisson(
            hosts[: (w.hosts or len(hosts))], w.load, read_cdf(w.cdf), w.duration, rate, scenario.seed
        )
    elif w.kind == "flows-file":
        df = _read_flow_file(w.path, w.format)
    else:
        raise InputError(
            "no single flows table for this workload (a collective runs step by step: aifabric.sim.simulate)",
            field="workload.kind",
            value=w.kind,
            allowed="permutation, incast, all-to-all, poisson, flows-file",
        )
    is_host = np.zeros(topo.num_nodes + 1, dtype=bool)
    is_host[hosts] = True
    for col in ("src", "dst"):
        ids = df[col]
        bad = (ids < 0) | (ids >= topo.num_nodes) | ~is_host[np.clip(ids, 0, topo.num_nodes)]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"flow {i}: {col} {int(ids[i])} is not a host of the topology",
                file=w.path,
                field="workload",
                allowed=f"host ids {hosts.min()}..{hosts.max()}",
            )
    same = df["src"] == df["dst"]
    if same.any():
        i = int(np.flatnonzero(same)[0])
        raise InputError(
            f"flow {i} sends from host {int(df['src'][i])} to itself", file=w.path, field="workload"
        )
    k = int(getattr(scenario.fabric, "qp_split", 1) or 1)
    return _split_qps(df, k) if k > 1 else df


def split_qps(df: pd.DataFrame, k: int) -> pd.DataFrame:
    """Each flow becomes ``k`` QPs (sub-flows) between the same hosts, each with its own UDP source
    port (new flow ids, so ECMP hashes them independently), sizes as even as whole bytes allow;
    ``parent_id`` names the original flow (NCCL's NCCL_IB_QPS_PER_CONNECTION /
    SPLIT_DATA_ON_QPS idea)."""
    return _split_qps(FlowColumns({c: df[c].to_numpy() for c in df.columns}, df.attrs), k).to_frame()


def _split_qps(t: FlowColumns, k: int) -> FlowColumns:
    """:func:`split_qps` on :class:`FlowColumns` (the one implementation of the split)."""
    n = len(t)
    part = np.tile(np.arange(k), n)
    size = t["size_bytes"].astype(np.int64)
    base, extra = np.repeat(size // k, k), np.repeat(size % k, k)
    cols = {c: np.repeat(v, k) for c, v in t.cols.items()}
    cols["size_bytes"] = base + (part < extra)
    keep = cols["size_bytes"] > 0
    cols = {c: v[keep] for c, v in cols.items()}
    cols["parent_id"] = cols["id"].astype(np.int64)
    cols["id"] = np.arange(len(cols["parent_id"]), dtype=np.int64)
    return FlowColumns(cols, t.attrs)
