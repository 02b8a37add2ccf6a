"""The results database of a study: Parquet files appended as points finish, queried with DuckDB.

Layout of a study folder::

    DIR/study.json                    the study (canonical form), its input columns, point count
    DIR/results/points/part-*.parquet one row per finished point: inputs, status, summary
    DIR/results/<table>/part-*.parquet the command's detail rows (compare: fabrics; collective: sizes)
    DIR/report.html                   the study report (aifabric.sweep.report)

A batch of finished points is written as one new file per table, each written to a temporary
name and renamed into place (atomic); the detail files first, the points file last, so a point
counts as finished exactly when its row is in ``results/points``. A study killed at any moment
therefore resumes with every finished point kept and none run twice. Detail rows carry the
``attempt`` id of the point row they belong to; rows of an attempt whose point row never landed
are ignored by the views. :meth:`ResultStore.compact` merges the parts into one file per table
(the views drop the duplicates a crash during compaction could leave).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import uuid
from pathlib import Path
from typing import Any

from aifabric.errors import InputError


def column(key: str) -> str:
    """The column name of a dotted input key: ``advisor.gpus`` → ``advisor_gpus``."""
    return key.replace(".", "_").replace("-", "_")


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"tmp-{uuid.uuid4().hex}.partial")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if v is None or isinstance(v, bool | int | float | str | _dt.datetime):
        return v
    return json.dumps(v, sort_keys=True, default=str)


def _arrow_table(rows: list[dict]):
    """A pyarrow table from dict rows; a column that mixes numbers and text is stored as text."""
    import pyarrow as pa

    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    arrays = {}
    for c in cols:
        vals = [_clean(r.get(c)) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if str in kinds and len(kinds) > 1:
            vals = [None if v is None else str(v) for v in vals]
        elif (bool in kinds and len(kinds) > 1) or kinds == {int, float}:
            vals = [None if v is None else float(v) for v in vals]
        arrays[c] = pa.array(vals)
    return pa.table(arrays)


def _write_parquet(path: Path, rows: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(_arrow_table(rows), sink, compression="zstd")
    _atomic_write_bytes(path, sink.getvalue().to_pybytes())


class ResultStore:
    """One study folder's results (see the module docstring)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.results = self.folder / "results"

    # ---- writing -------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self):
        """Hold the folder for one writer; a second ``aifabric sweep`` on it is refused."""
        import fcntl

        if self.folder.exists() and not self.folder.is_dir():
            raise InputError(
                "not a folder", field="--out", value=str(self.folder), allowed="a new or study folder"
            )
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create the folder: {exc.strerror or exc}", field="--out", value=str(self.folder)
            ) from None
        with open(self.folder / ".lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise InputError(
                    "another aifabric sweep is writing to this folder",
                    field="--out",
                    value=str(self.folder),
                    allowed="wait for it to finish, or use another folder",
                ) from None
            yield self

    def init_study(self, study, columns: dict[str, str]) -> None:
        """Record the study, or check that the folder holds results of this same study."""
        meta = {
            "name": study.name,
            "command": study.command,
            "study": study.canonical(),
            "input_columns": columns,
            "points": len(study.points),
            "tables": list(_tables_of(study.command)),
        }
        path = self.folder / "study.json"
        if path.exists():
            try:
                old = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                old = {}
            if old.get("study") != meta["study"]:
                raise InputError(
                    f"holds the results of another study ({old.get('name', '?')!r}); a folder holds one study",
                    field="--out",
                    value=str(self.folder),
                    allowed="the same study file to resume it, or a new folder",
                )
            return
        if self.folder.exists() and any(
            p.name not in (".lock", "study.json", "results") for p in self.folder.iterdir()
        ):
            raise InputError(
                "folder is not empty and holds no study",
                field="--out",
                value=str(self.folder),
                allowed="a new or empty folder, or a study folder to resume",
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        _atomic_write_bytes(path, json.dumps(meta, indent=2, default=str).encode())

    def meta(self) -> dict:
        path = self.folder / "study.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise InputError(
                "not a study folder (no study.json)",
                field="DIR",
                value=str(self.folder),
                allowed="a folder written by aifabric sweep --out",
            ) from None

    def append(self, rows: list[dict], tables: dict[str, list[dict]]) -> None:
        """Add finished points (``rows``) and their detail rows, atomically per file: details
        first, points last."""
        if not rows:
            return
        stamp = f"{_dt.datetime.now(_dt.UTC).strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}"
        for name, trows in tables.items():
            if trows:
                d = self.results / name
                d.mkdir(parents=True, exist_ok=True)
                _write_parquet(d / f"part-{stamp}.parquet", trows)
        d = self.results / "points"
        d.mkdir(parents=True, exist_ok=True)
        _write_parquet(d / f"part-{stamp}.parquet", rows)

    def compact(self) -> None:
        """Merge each table's parts into one file (the views drop duplicates a crash between the
        write and the removal could leave)."""
        import pyarrow.parquet as pq

        for d in sorted(p for p in self.results.glob("*") if p.is_dir()):
            parts = sorted(d.glob("*.parquet"))
            if len(parts) < 2:
                continue
            con = self.connect()
            name = d.name
            df = con.sql(f"SELECT * FROM {_ident(name)}").arrow()
            if hasattr(df, "read_all"):
                df = df.read_all()
            import pyarrow as pa

            sink = pa.BufferOutputStream()
            pq.write_table(df, sink, compression="zstd")
            stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%f")
            _atomic_write_bytes(d / f"part-{stamp}-compact.parquet", sink.getvalue().to_pybytes())
            con.close()
            for p in parts:
                p.unlink()

    # ---- reading -------------------------------------------------------------------------
    def finished(self) -> dict[str, str]:
        """``{point_id: status}`` of every finished point."""
        con = self.connect()
        try:
            return dict(con.sql("SELECT point_id, status FROM points").fetchall())
        finally:
            con.close()

    def tables(self) -> list[str]:
        return ["points"] + sorted(
            p.name for p in self.results.glob("*") if p.is_dir() and p.name != "points"
        )

    def connect(self):
        """An in-memory DuckDB connection with one view per table: ``points`` (one row per
        finished point, in study order), ``fabrics`` / ``sizes`` (detail rows of those points)
        and ``<table>_raw`` (every stored row)."""
        import duckdb

        con = duckdb.connect()
        names = set(_tables_of(self._command())) | {p.name for p in self.results.glob("*") if p.is_dir()}
        names.add("points")
        for name in sorted(names, key=lambda n: n != "points"):
            files = sorted(str(p) for p in (self.results / name).glob("*.parquet"))
            raw = f"{name}_raw"
            if files:
                lst = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
                con.sql(f"CREATE VIEW {_ident(raw)} AS SELECT * FROM read_parquet({lst}, union_by_name=true)")
            else:
                extra = (
                    "NULL::VARCHAR AS status, NULL::VARCHAR AS error, NULL::TIMESTAMP AS finished_at"
                    if name == "points"
                    else "NULL::BIGINT AS row_index"
                )
                con.sql(
                    f"CREATE VIEW {_ident(raw)} AS SELECT NULL::VARCHAR AS point_id, NULL::BIGINT AS point_index, "
                    f"NULL::VARCHAR AS attempt, {extra} WHERE false"
                )
            if name == "points":
                con.sql(
                    "CREATE VIEW points AS SELECT * FROM points_raw QUALIFY row_number() OVER "
                    "(PARTITION BY point_id ORDER BY finished_at DESC, attempt) = 1 ORDER BY point_index"
                )
            else:
                con.sql(
                    f"CREATE VIEW {_ident(name)} AS SELECT t.* FROM {_ident(raw)} t "
                    "WHERE t.attempt IN (SELECT attempt FROM points) QUALIFY row_number() OVER "
                    "(PARTITION BY t.attempt, t.row_index ORDER BY t.attempt) = 1 ORDER BY t.point_index, t.row_index"
                )
        return con

    def _command(self) -> str:
        try:
            return json.loads((self.folder / "study.json").read_text(encoding="utf-8"))["command"]
        except (OSError, ValueError, KeyError):
            return ""


def _tables_of(command: str) -> tuple[str, ...]:
    from aifabric.sweep.commands import COMMANDS

    return COMMANDS[command].tables if command in COMMANDS else ()


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def point_rows(study, point, outcome: dict, attempts: int, columns: dict[str, str]):
    """The points row and the detail rows of one finished point."""
    attempt = uuid.uuid4().hex
    inputs = {columns[k]: _clean(point.assignments.get(k)) for k in columns}
    row: dict[str, Any] = {
        "point_id": point.point_id,
        "point_index": point.index,
        **inputs,
        "status": outcome["status"],
        "error": outcome.get("error"),
        "attempts": attempts,
        "wall_s": outcome.get("wall_s"),
        "worker": outcome.get("worker"),
        "finished_at": _dt.datetime.now(_dt.UTC).replace(tzinfo=None),
        "attempt": attempt,
    }
    taken = set(row)
    for k, v in (outcome.get("summary") or {}).items():
        row[f"out_{k}" if k in taken else k] = v
    row["inputs_json"] = json.dumps(point.scenario, sort_keys=True, default=str)
    row["options_json"] = json.dumps(point.options, sort_keys=True, default=str)
    details: dict[str, list[dict]] = {}
    for name, trows in (outcome.get("tables") or {}).items():
        out = []
        for i, r in enumerate(trows):
            d = {
                "point_id": point.point_id,
                "attempt": attempt,
                "point_index": point.index,
                "row_index": i,
                **inputs,
            }
            for k, v in r.items():
                d[
                    f"out_{k}"
                    if k in inputs or k in ("point_id", "attempt", "point_index", "row_index")
                    else k
                ] = v
            out.append(d)
        details[name] = out
    return row, details
