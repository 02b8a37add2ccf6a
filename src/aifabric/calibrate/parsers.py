"""Readers for a user's own measurements: nccl-tests (text and ``-J`` JSON, with ``NCCL_DEBUG=INFO``
lines when present) and perftest (``ib_*_bw`` / ``ib_*_lat`` text and ``--out_json``).

Formats: ``shared/reference/formats.md`` §2 (nccl-tests ``src/util.cu`` v2.19, perftest
``src/perftest_parameters.{h,c}``). Every reader returns a frozen record, or raises one
:class:`~aifabric.errors.InputError` naming the file, the line and what was expected. Units are
kept honest: nccl-tests GB/s are 1e9 bytes/s; perftest ``Gb/sec`` is 1e9 bit/s, ``MiB/sec`` 2^20
bytes/s, and the old ``MB/sec`` label was computed with the same 2^20 factor (the label was later
renamed, not the factor).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from aifabric.errors import InputError

#: nccl-tests binary → our collective name (``None``: read, not modelled by the collective model)
NCCL_TESTS = {
    "all_reduce_perf": "all-reduce",
    "all_gather_perf": "all-gather",
    "reduce_scatter_perf": "reduce-scatter",
    "alltoall_perf": "all-to-all",
    "broadcast_perf": "broadcast",
    "reduce_perf": "reduce",
    "sendrecv_perf": "sendrecv",
    "gather_perf": "gather",
    "scatter_perf": "scatter",
    "hypercube_perf": "hypercube",
}
_BUSBW_FAMILY = {  # busbw / algbw as a function of n (formats.md §2.1)
    "all-reduce": lambda n: 2 * (n - 1) / n,
    "all-gather": lambda n: (n - 1) / n,
    "reduce-scatter": lambda n: (n - 1) / n,
    "all-to-all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}
#: launcher prefixes: ``srun --label`` (``0: ``), OpenMPI ``--tag-output`` (``[1,0]<stdout>:``),
#: ``[rank 0] `` (Python launchers);
#: MPICH / pdsh style host tags (``host: ``) are not stripped (they look like data otherwise)
_PREFIX = re.compile(r"^\s*(?:\d+:\s|\[\d+,\d+\]<(?:stdout|stderr)>:\s?|\[rank \d+\]\s)")
_INT = re.compile(r"^[0-9]+$")
_NUM = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{2}:\d{2}:\d{2}$")
_DEVICE = re.compile(
    r"#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*)$"
)
_GPU_IDS = (("gb200", "b200"), ("b200", "b200"), ("h200", "h200"), ("h100", "h100"), ("h800", "h100"))
_ALGO_IDX = ["tree", "ring", "collnet-direct", "collnet-chain", "nvls", "nvls-tree", "pat"]
_PROTO_IDX = ["ll", "ll128", "simple"]
_ALGO_NAMES = {
    "ring": "ring",
    "tree": "tree",
    "nvls": "nvls",
    "nvlstree": "nvls-tree",
    "collnetdirect": "collnet-direct",
    "collnetchain": "collnet-chain",
    "pat": "pat",
}
MAX_BYTES = 64 * 2**20  # measurement files are text tables; refuse anything larger


@dataclass(frozen=True)
class NcclRow:
    """One nccl-tests size: out-of-place (and in-place when printed) time in µs and GB/s."""

    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    in_place_time_us: float | None = None
    in_place_busbw_gbps: float | None = None
    line: int = 0


@dataclass(frozen=True)
class NcclInfo:
    """What ``NCCL_DEBUG=INFO`` lines say (each None / empty when absent)."""

    transport: str | None = None  # ib | roce | efa | socket
    transport_line: str | None = None
    version: str | None = None
    ranks: int | None = None
    nodes: int | None = None
    local_ranks: int | None = None
    algorithm: str | None = None  # forced (NCCL_ALGO)
    protocol: str | None = None
    tuning: tuple[tuple[int, str, str], ...] = ()  # (bytes, algorithm, protocol) from TUNING lines
    nvls: bool = False
    nic_speeds_mbps: tuple[int, ...] = ()  # per NIC device, from "NET/IB … speed=400000"


@dataclass(frozen=True)
class NcclTestsRun:
    """A parsed nccl-tests output."""

    source: str
    test: str | None  # e.g. all_reduce_perf
    op: str | None  # our collective name
    rows: tuple[NcclRow, ...]
    ranks: int | None
    nodes: int | None
    gpu: str | None  # h100 | h200 | b200 when the device line names one
    gpu_name: str | None
    hosts: tuple[str, ...] = ()
    info: NcclInfo = field(default_factory=NcclInfo)
    ranks_from: str = ""  # how ``ranks`` was found
    kind: str = "nccl-tests"

    @property
    def transport(self) -> str | None:
        return self.info.transport


@dataclass(frozen=True)
class PerftestRow:
    size_bytes: int
    iterations: int
    values: dict  # bw: peak_gbps, avg_gbps, msg_rate_mpps; lat: t_min_us, t_typical_us, t_avg_us, ...
    line: int = 0


@dataclass(frozen=True)
class PerftestRun:
    """A parsed perftest output (one test)."""

    source: str
    test: str  # e.g. "RDMA_Write BW Test"
    kind: str  # perftest-bw | perftest-lat
    bidirectional: bool
    transport: str | None  # ib | roce (from "Link type")
    rows: tuple[PerftestRow, ...]
    device: str | None = None
    mtu_bytes: int | None = None
    unit: str = "Gb/sec"


def _fail(path, line: int | None, problem: str, expected: str) -> InputError:
    where = f"line {line}" if line else None
    return InputError(problem, file=str(path), field=where, allowed=expected)


def read_text(path) -> str:
    """The file's text (UTF-8, undecodable bytes replaced), or a one-line InputError."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise InputError("file too large for a measurement table", file=str(p), allowed="≤ 64 MiB")
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", file=str(p)) from None
    return data.decode("utf-8", errors="replace")


def strip_prefix(line: str) -> str:
    """A line without its launcher prefix (``0: `` or ``[1,0]<stdout>:``)."""
    return _PREFIX.sub("", line, count=1).rstrip("\r\n")


def gpu_id(name: str | None) -> str | None:
    low = (name or "").lower().replace(" ", "")
    return next((gid for key, gid in _GPU_IDS if key in low), None)


# ---- nccl-tests ------------------------------------------------------------------------------
def _float(tok: str) -> float:
    if tok.lower() in ("n/a", "nan", "-nan", "inf", "-inf"):
        return math.nan
    return float(tok)


def _parse_nccl_info(lines: list[tuple[int, str]]) -> NcclInfo:
    transport = tline = version = algo = proto = None
    ranks = nodes = local = None
    tuning: list[tuple[int, str, str]] = []
    nvls = False
    speeds: dict[str, int] = {}
    for _, ln in lines:
        if "NCCL INFO" not in ln and "NCCL version" not in ln:
            continue
        m = re.search(r"NCCL version (\S+)", ln)
        if m:
            version = m.group(1)
        if transport is None:
            if "NET/OFI" in ln or "Libfabric" in ln or re.search(r"\bprovider\b.*\befa\b", ln, re.I):
                transport, tline = "efa", ln.strip()
            elif re.search(r"NET/IB\s*:\s*Using", ln):
                transport = "roce" if "/RoCE" in ln else "ib"
                tline = ln.strip()
            elif re.search(r"NET/Socket\s*:\s*Using", ln):
                transport, tline = "socket", ln.strip()
        m = re.search(r"nRanks (\d+) nNodes (\d+) localRanks (\d+)", ln)
        if m:
            ranks, nodes, local = (int(x) for x in m.groups())
        m = re.search(r"NCCL_ALGO set by environment to (\S+)", ln)
        if m:
            algo = _ALGO_NAMES.get(m.group(1).split(",")[0].lower())
        m = re.search(r"NCCL_PROTO set by environment to (\S+)", ln)
        if m:
            proto = m.group(1).split(",")[0].lower()
        m = re.search(r"(\d+) Bytes -> Algo (\d+) proto (\d+)", ln)
        if m and int(m.group(2)) < len(_ALGO_IDX) and int(m.group(3)) < len(_PROTO_IDX):
            tuning.append((int(m.group(1)), _ALGO_IDX[int(m.group(2))], _PROTO_IDX[int(m.group(3))]))
        sp = re.search(r"speed=(\d+)", ln) if "NET/IB" in ln else None
        dev = re.search(r"NET/IB.*?(?:Device \d+ \[|\[\d+\]\s*)([A-Za-z][\w.]*)", ln) if sp else None
        if sp and dev:
            speeds[dev.group(1)] = int(sp.group(1))
        if transport is None:
            m = re.search(r"Using network (\w+)", ln)
            if m:
                word = m.group(1).lower()
                transport = {"ib": None, "socket": "socket", "aws": "efa", "roce": "roce"}.get(word)
                tline = ln.strip() if transport else None
        if "NVLS multicast support is available" in ln or "Connected NVLS" in ln:
            nvls = True
    return NcclInfo(
        transport,
        tline,
        version,
        ranks,
        nodes,
        local,
        algo,
        proto,
        tuple(tuning),
        nvls,
        tuple(speeds.values()),
    )


def _nccl_row(path, lineno: int, toks: list[str], has_root: bool | None) -> NcclRow:
    expected = "size count type redop [root] time algbw busbw #wrong [in-place time algbw busbw #wrong]"
    toks = [t for t in toks if not _DATE.match(t)]  # -S timestamp column
    if len(toks) < 7 or not _INT.match(toks[1]) or _NUM.match(toks[2]) or _NUM.match(toks[3]):
        raise _fail(path, lineno, "not an nccl-tests result row", expected)
    rest = toks[4:]
    if has_root is None:  # no column header seen: a root column is an integer and leaves an even rest
        has_root = bool(re.match(r"^-?\d+$", rest[0])) and (len(rest) - 1) % 2 == 0 and len(rest) >= 5
    root = -1
    if has_root:
        if not re.match(r"^-?\d+$", rest[0]):
            raise _fail(path, lineno, f"root column is not an integer ({rest[0]!r})", expected)
        root, rest = int(rest[0]), rest[1:]
    if len(rest) < 3:
        raise _fail(path, lineno, "too few columns", expected)
    half = len(rest) // 2 if len(rest) % 2 == 0 and len(rest) >= 6 else len(rest)
    try:
        t, a, b = (_float(x) for x in rest[:3])
        ip_t = ip_b = None
        if half < len(rest):
            ip_t, ip_b = _float(rest[half]), _float(rest[half + 2])
    except ValueError:
        raise _fail(path, lineno, "time / algbw / busbw are not numbers", expected) from None
    if not (t > 0) or min(a, b) < 0 or math.isinf(t):
        raise _fail(path, lineno, f"time {rest[0]} µs is not positive or bandwidth is negative", expected)
    size = int(toks[0])
    if size <= 0 or size > 2**50:
        raise _fail(path, lineno, f"size {size} B out of range", "1 B … 1 PiB")
    return NcclRow(size, int(toks[1]), toks[2], toks[3], root, t, a, b, ip_t, ip_b, lineno)


def _infer_ranks(op: str | None, rows: list[NcclRow]) -> int | None:
    """n from busbw / algbw at the size with the largest algbw (the most significant digits)."""
    if op not in _BUSBW_FAMILY or op in ("broadcast", "reduce", "sendrecv"):
        return None
    good = [r for r in rows if r.algbw_gbps >= 1.0 and r.busbw_gbps > 0]
    if not good:
        return None
    r = max(good, key=lambda r: r.algbw_gbps)
    ratio = r.busbw_gbps / r.algbw_gbps
    denom = (2 - ratio) if op == "all-reduce" else (1 - ratio)
    if denom <= 1e-6:
        return None
    n = round((2 if op == "all-reduce" else 1) / denom)
    if n < 2 or abs(_BUSBW_FAMILY[op](n) - ratio) > 0.01 * ratio:
        return None
    return n


def _op_from_name(text: str) -> tuple[str | None, str | None]:
    for test, op in NCCL_TESTS.items():
        if test in text or test.replace("_perf", "") + "." in text:
            return test, op
    return None, None


def parse_nccl_tests_text(path, text: str | None = None) -> NcclTestsRun:
    """nccl-tests text output (any ``*_perf``; prefixes, ``-I``/``-S``/``-C``, exponent numbers)."""
    text = read_text(path) if text is None else text
    lines = [(i + 1, strip_prefix(ln)) for i, ln in enumerate(text.splitlines())]
    test = op = None
    has_root: bool | None = None
    devices: dict[int, tuple[str, str]] = {}
    rows: list[NcclRow] = []
    for lineno, ln in lines:
        s = ln.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = re.search(r"Collective test (?:starting|concluded):\s*(\S+)", s)
            if m:
                test, op = m.group(1), NCCL_TESTS.get(m.group(1))
            m = _DEVICE.search(s)
            if m:
                devices[int(m.group(1))] = (m.group(2), m.group(3).strip())
            toks = s.lstrip("#").split()
            if toks[:2] == ["size", "count"]:
                has_root = "root" in toks
            continue
        toks = s.split()
        if toks[0] == "0" and len(toks) >= 2 and toks[1] == "0":
            continue  # nccl-tests -b 0 prints an empty collective first: nothing to fit
        if _INT.match(toks[0]) and len(toks) >= 7 and not _NUM.match(toks[2]) and _INT.match(toks[1]):
            rows.append(_nccl_row(path, lineno, toks, has_root))
        elif _INT.match(toks[0]) and len(toks) >= 5 and has_root is not None and not _NUM.match(toks[2]):
            rows.append(_nccl_row(path, lineno, toks, has_root))  # a header was seen: a short row is bad
    if not rows:
        raise _fail(
            path,
            None,
            "no nccl-tests result rows",
            "lines like '  1048576  262144  float  sum  -1  123.2  8.51  15.95  0 …' (nccl-tests *_perf output)",
        )
    sizes = [r.size_bytes for r in rows]
    if len(set(sizes)) != len(sizes):
        dup = next(
            r for r in rows if sizes.count(r.size_bytes) > 1 and r is not rows[sizes.index(r.size_bytes)]
        )
        raise _fail(
            path,
            dup.line,
            f"size {dup.size_bytes} B appears twice (two runs in one file?)",
            "one run per file",
        )
    if op is None:
        test, op = _op_from_name(Path(str(path)).name)
    info = _parse_nccl_info(lines)
    hosts = tuple(dict.fromkeys(h for h, _ in devices.values()))
    gpu_name = next(iter(devices.values()))[1] if devices else None
    ranks, ranks_from = None, ""
    if devices:
        ranks, ranks_from = len(devices), "# Using devices"
    elif info.ranks:
        ranks, ranks_from = info.ranks, "NCCL INFO nRanks"
    else:
        ranks = _infer_ranks(op, rows)
        ranks_from = "busbw / algbw" if ranks else ""
    nodes = len(hosts) if hosts else info.nodes
    return NcclTestsRun(
        str(path), test, op, tuple(rows), ranks, nodes, gpu_id(gpu_name), gpu_name, hosts, info, ranks_from
    )


def parse_nccl_tests_json(path, data: dict) -> NcclTestsRun:
    """nccl-tests ``-J`` JSON (formats.md §2.2)."""
    if not isinstance(data.get("results"), list):
        raise _fail(path, None, "no 'results' list", "nccl-tests -J JSON with results[]")
    rows = []
    for i, r in enumerate(data["results"]):
        where = f"results[{i}]"
        try:
            oop = r["out_of_place"]
            t = _float(str(oop.get("time", oop.get("cpu_time"))))
            a, b = _float(str(oop["alg_bw"])), _float(str(oop["bus_bw"]))
            ip = r.get("in_place") or {}
            ip_t = ip.get("time", ip.get("cpu_time"))
            ip_b = ip.get("bus_bw")
            row = NcclRow(
                int(r["size"]),
                int(r.get("count", 0)),
                str(r.get("type", "")),
                str(r.get("redop", "")),
                int(r.get("root", -1)),
                t,
                a,
                b,
                None if ip_t is None else _float(str(ip_t)),
                None if ip_b is None else _float(str(ip_b)),
                i + 1,
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(
                "not an nccl-tests result",
                file=str(path),
                field=where,
                allowed="{size, count, type, redop, root, out_of_place: {time, alg_bw, bus_bw}, in_place}",
            ) from None
        if math.isnan(t) or math.isnan(b) or row.size_bytes == 0:
            continue
        if not (t > 0) or row.size_bytes <= 0 or row.size_bytes > 2**50 or min(a, b) < 0 or math.isinf(t):
            raise InputError("time must be > 0 and sizes/bandwidths ≥ 0", file=str(path), field=where)
        rows.append(row)
    if not rows:
        raise _fail(path, None, "no usable results (all empty or nan)", "nccl-tests -J JSON with results[]")
    devs = data.get("devices") if isinstance(data.get("devices"), list) else []
    hosts = tuple(
        dict.fromkeys(str(d.get("hostname")) for d in devs if isinstance(d, dict) and d.get("hostname"))
    )
    gpu_name = next(
        (str(d.get("device_info")) for d in devs if isinstance(d, dict) and d.get("device_info")), None
    )
    text = " ".join(str(data.get(k, "")) for k in ("test", "collective", "name", "args", "command"))
    test, op = _op_from_name(text + " " + Path(str(path)).name)
    ranks = len(devs) or _infer_ranks(op, rows)
    return NcclTestsRun(
        str(path),
        test,
        op,
        tuple(rows),
        ranks or None,
        len(hosts) or None,
        gpu_id(gpu_name),
        gpu_name,
        hosts,
        NcclInfo(),
        "devices[]" if devs else ("busbw / algbw" if ranks else ""),
    )


# ---- perftest --------------------------------------------------------------------------------
_PT_TITLE = re.compile(
    r"^\s*((?:RDMA_Write|RDMA_Read|Send|Atomic\w*|Fetch_and_Add|Compare_and_Swap)[\w ]*?(?:BW|Latency) Test)\s*$"
)
_PT_UNITS = {"Gb/sec": 1.0, "MiB/sec": 8 * 2**20 / 1e9, "MB/sec": 8 * 2**20 / 1e9}
_LAT_COLS = [
    ("t_min", "t_min_us"),
    ("t_max", "t_max_us"),
    ("t_typical", "t_typical_us"),
    ("t_avg", "t_avg_us"),
    ("t_stdev", "t_stdev_us"),
    ("99.9%", "p99_9_us"),
    ("99%", "p99_us"),
    ("tps", "tps"),
]


def _lat_columns(header: str) -> list[str]:
    found = []
    for key, name in _LAT_COLS:
        for m in re.finditer(re.escape(key), header):
            if key == "99%" and header[max(0, m.start() - 2) : m.start()] == "9.":
                continue
            found.append((m.start(), name))
    return [n for _, n in sorted(found)]


def parse_perftest_text(path, text: str | None = None) -> PerftestRun:
    """perftest text output (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_*_lat``)."""
    text = read_text(path) if text is None else text
    title = transport = device = None
    mtu = None
    header: str | None = None
    header_line = 0
    rows: list[PerftestRow] = []
    unit = "Gb/sec"
    cols: list[str] = []
    for i, raw in enumerate(text.splitlines()):
        lineno = i + 1
        ln = strip_prefix(raw).replace("\t", "    ")
        s = ln.strip()
        m = _PT_TITLE.match(ln)
        if m and title is None:
            title = m.group(1).strip()
            continue
        m = re.match(r"^\s*Link type\s*:\s*(\w+)", ln)
        if m and transport != "efa":
            transport = {"ib": "ib", "ethernet": "roce"}.get(m.group(1).lower(), m.group(1).lower())
        if re.search(r"Connection type\s*:\s*SRD", ln):
            transport = "efa"  # EFA's Scalable Reliable Datagram (its Link type reads IB)
        m = re.search(r"Device\s*:\s*(\S+)", ln)
        if m and device is None:
            device = m.group(1)
        m = re.match(r"^\s*Mtu\s*:\s*(\d+)", ln)
        if m:
            mtu = int(m.group(1))
        if s.startswith("#bytes"):
            if header is not None and rows:
                break  # a second table: one test per file
            header, header_line = s, lineno
            if "BW" in s:
                m = re.search(r"\[(Gb/sec|MiB/sec|MB/sec)\]", s)
                if not m:
                    raise _fail(
                        path, lineno, "unknown bandwidth unit", "BW peak[Gb/sec], [MiB/sec] or [MB/sec]"
                    )
                unit = m.group(1)
                cols = ["peak", "avg", "msg_rate_mpps"]
            else:
                cols = _lat_columns(s)
                if not cols:
                    raise _fail(path, lineno, "unknown latency columns", "t_min[usec] … or t_avg[usec] (-D)")
            continue
        if header is None or not s:
            continue
        if s.startswith("---"):
            if rows:
                break
            continue
        toks = s.split()
        if not _INT.match(toks[0]):
            continue  # warning lines between the header and the rows
        if len(toks) < 2 + len(cols) - (
            1 if header and "BW" not in header and "tps" in cols else 0
        ) or not _INT.match(toks[1]):
            raise _fail(
                path, lineno, "row has too few columns", f"#bytes #iterations then: {', '.join(cols)}"
            )
        try:
            nums = [float(t) for t in toks[2 : 2 + len(cols)]]
        except ValueError:
            raise _fail(
                path, lineno, "row values are not numbers", f"#bytes #iterations {' '.join(cols)}"
            ) from None
        if any(not math.isfinite(v) or v < 0 for v in nums):
            raise _fail(
                path, lineno, "row values must be finite and ≥ 0", f"#bytes #iterations {' '.join(cols)}"
            )
        size = int(toks[0])
        if size <= 0 or size > 2**40:
            raise _fail(path, lineno, f"size {size} B out of range", "1 B … 1 TiB")
        vals = dict(zip(cols, nums, strict=False))
        if "peak" in vals:
            f = _PT_UNITS[unit]
            vals = {
                "peak_gbps": vals["peak"] * f,
                "avg_gbps": vals["avg"] * f,
                "msg_rate_mpps": vals.get("msg_rate_mpps", math.nan),
            }
        rows.append(PerftestRow(size, int(toks[1]), vals, lineno))
    if title is None and header is None:
        raise _fail(
            path,
            None,
            "not perftest output",
            "a perftest title ('RDMA_Write BW Test' …) and a '#bytes' table",
        )
    if not rows:
        raise _fail(
            path,
            header_line or None,
            "no perftest result rows",
            "rows like '65536  5000  392.38  392.34  0.748336' after '#bytes'",
        )
    title = title or ("BW Test" if "BW" in (header or "") else "Latency Test")
    kind = "perftest-bw" if "BW" in (header or "") else "perftest-lat"
    return PerftestRun(
        str(path), title, kind, "Bidirectional" in title, transport, tuple(rows), device, mtu, unit
    )


def _find_dicts(obj, key: str, out: list, depth: int = 0) -> list:
    if depth > 20:
        return out
    if isinstance(obj, dict):
        if key in obj:
            out.append(obj)
        for v in obj.values():
            _find_dicts(v, key, out, depth + 1)
    elif isinstance(obj, list):
        for v in obj:
            _find_dicts(v, key, out, depth + 1)
    return out


def _find_key(obj, names: tuple[str, ...], depth: int = 0):
    if depth > 20:
        return None
    if isinstance(obj, dict):
        for k, v in obj.items():
            if str(k).lower().replace(" ", "_") in names and isinstance(v, str):
                return v
        for v in obj.values():
            r = _find_key(v, names, depth + 1)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj:
            r = _find_key(v, names, depth + 1)
            if r is not None:
                return r
    return None


def parse_perftest_json(path, data) -> PerftestRun:
    """perftest ``--out_json`` (records with ``MsgSize``; BW assumed in the unit a ``*unit*`` or
    ``report_fmt`` key names, else Gb/s as with ``--report_gbits``)."""
    recs = _find_dicts(data, "MsgSize", [])
    if not recs:
        raise _fail(
            path, None, "no perftest records", "JSON records with MsgSize, BW_peak/BW_average or t_typical"
        )
    unit_txt = str(_find_key(data, ("unit", "bw_unit", "report_fmt", "units")) or "Gb/sec")
    unit = next((u for u in _PT_UNITS if u.lower() in unit_txt.lower()), "Gb/sec")
    link = _find_key(data, ("link_type", "linktype", "link"))
    transport = {"ib": "ib", "ethernet": "roce"}.get(str(link).lower()) if link else None
    rows = []
    kind = "perftest-bw" if "BW_peak" in recs[0] or "BW_average" in recs[0] else "perftest-lat"
    names = {
        "t_min": "t_min_us",
        "t_max": "t_max_us",
        "t_typical": "t_typical_us",
        "t_avg": "t_avg_us",
        "t_stdev": "t_stdev_us",
        "percentile_99": "p99_us",
        "percentile_99.9": "p99_9_us",
    }
    for i, r in enumerate(recs):
        try:
            size = int(r["MsgSize"])
            iters = int(r.get("n_iterations", 0))
            if kind == "perftest-bw":
                f = _PT_UNITS[unit]
                vals = {
                    "peak_gbps": float(r.get("BW_peak", r.get("BW_average"))) * f,
                    "avg_gbps": float(r.get("BW_average", r.get("BW_peak"))) * f,
                    "msg_rate_mpps": float(r.get("MsgRate", math.nan)),
                }
            else:
                vals = {v: float(r[k]) for k, v in names.items() if k in r}
                if "t_typical_us" not in vals and "t_avg_us" not in vals:
                    raise KeyError("t_typical")
        except (KeyError, TypeError, ValueError):
            raise InputError(
                "not a perftest record",
                file=str(path),
                field=f"record {i}",
                allowed="MsgSize with BW_peak/BW_average (bw) or t_typical/t_avg (lat)",
            ) from None
        if (
            size <= 0
            or size > 2**40
            or any(not math.isfinite(v) or v < 0 for k, v in vals.items() if k != "msg_rate_mpps")
        ):
            raise InputError(
                "values out of range",
                file=str(path),
                field=f"record {i}",
                allowed="size > 0, finite ≥ 0 values",
            )
        rows.append(PerftestRow(size, iters, vals, i + 1))
    test = str(
        _find_key(data, ("test", "test_name", "title"))
        or ("BW Test" if kind == "perftest-bw" else "Latency Test")
    )
    return PerftestRun(
        str(path), test, kind, "bidirectional" in test.lower(), transport, tuple(rows), None, None, unit
    )


def parse_measurement(path) -> NcclTestsRun | PerftestRun:
    """Any supported measurement file, recognised by its content."""
    text = read_text(path)
    s = text.lstrip()
    if (s.startswith("{") or s.startswith("[")) and not _PREFIX.match(s):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _fail(
                path, exc.lineno, f"invalid JSON ({exc.msg})", "nccl-tests -J or perftest --out_json"
            ) from None
        if (
            isinstance(data, dict)
            and isinstance(data.get("results"), list)
            and any(isinstance(r, dict) and ("out_of_place" in r or "size" in r) for r in data["results"])
        ):
            return parse_nccl_tests_json(path, data)
        return parse_perftest_json(path, data)
    lines = [strip_prefix(ln) for ln in text.splitlines()]
    if any(ln.lstrip().startswith("#bytes") for ln in lines) or any(_PT_TITLE.match(ln) for ln in lines[:80]):
        return parse_perftest_text(path, text)
    return parse_nccl_tests_text(path, text)


__all__ = [
    "NCCL_TESTS",
    "NcclInfo",
    "NcclRow",
    "NcclTestsRun",
    "PerftestRow",
    "PerftestRun",
    "parse_measurement",
    "parse_nccl_tests_json",
    "parse_nccl_tests_text",
    "parse_perftest_json",
    "parse_perftest_text",
]
