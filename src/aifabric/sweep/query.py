"""Queries of a study's results (``aifabric results``): SQL, or filters on one table; CSV export."""

from __future__ import annotations

import re
from pathlib import Path

from aifabric.errors import InputError
from aifabric.sweep.store import ResultStore, column

_WHERE = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(=|==|!=|<=|>=|<|>)\s*(.*?)\s*$")


def _value(text: str):
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def query(
    folder: str | Path,
    *,
    sql: str | None = None,
    where: list[str] | tuple[str, ...] = (),
    table: str = "points",
    columns: str | None = None,
    ci: str | None = None,
    limit: int | None = None,
):
    """The rows asked for, as a pandas DataFrame (see ``aifabric results --help``)."""
    import duckdb

    store = ResultStore(folder)
    if not Path(folder).is_dir():
        raise InputError(
            "folder not found",
            field="DIR",
            value=str(folder),
            allowed="a folder written by aifabric sweep --out",
        )
    meta = store.meta()
    if limit is not None and limit < 0:
        raise InputError("must be ≥ 0", field="--limit", value=limit)
    con = store.connect()
    try:
        if sql is not None:
            if where or table != "points" or ci:
                raise InputError("--sql cannot be combined with --where, --table or --ci", field="--sql")
            try:
                rel = con.sql(sql)
                df = rel.df() if rel is not None else None
            except duckdb.Error as exc:
                raise InputError(
                    f"query failed: {str(exc).splitlines()[0]}",
                    field="--sql",
                    allowed="DuckDB SQL over the views " + ", ".join(store.tables()),
                ) from None
            if df is None:
                raise InputError("the statement returned no rows", field="--sql", allowed="a SELECT query")
        else:
            tables = store.tables()
            if table not in tables:
                raise InputError(
                    "no such table in this study", field="--table", value=table, allowed=", ".join(tables)
                )
            cols = [d[0] for d in con.sql(f'SELECT * FROM "{table}" LIMIT 0').description]
            clauses, params = [], []
            for w in where:
                m = _WHERE.match(w)
                if not m:
                    raise InputError(
                        "cannot read the filter",
                        field="--where",
                        value=w,
                        allowed="KEY OP VALUE, e.g. advisor.gpus>=1024",
                    )
                key, op, val = m.groups()
                name = key if key in cols else column(key)
                if name not in cols:
                    raise InputError(
                        f"no column {key!r} in {table}", field="--where", value=w, allowed=", ".join(cols)
                    )
                clauses.append(f'"{name}" {"=" if op == "==" else op} ?')
                params.append(_value(val))
            q = f'SELECT * FROM "{table}"' + (" WHERE " + " AND ".join(clauses) if clauses else "")
            df = con.execute(q, params).df()
            if ci:
                df = _ci(df, meta, ci)
        if columns:
            want = [c.strip() for c in columns.split(",") if c.strip()]
            want = [c if c in df.columns else column(c) for c in want]
            missing = [c for c in want if c not in df.columns]
            if missing:
                raise InputError(
                    f"no column {missing[0]!r}", field="--columns", allowed=", ".join(map(str, df.columns))
                )
            df = df[want]
        if limit is not None:
            df = df.head(limit)
        return df.reset_index(drop=True)
    finally:
        con.close()


def _ci(df, meta: dict, ci: str):
    from aifabric.sweep.report import ci_table

    inputs = [c for c in meta["input_columns"].values() if c in df.columns]
    if "seed" not in inputs:
        raise InputError(
            "the study has no seed axis", field="--ci", allowed="a study with axes: {seed: [1, 2, 3]}"
        )
    metrics = [m.strip() for m in ci.split(",") if m.strip()]
    for m in metrics:
        if m not in df.columns:
            raise InputError(f"no column {m!r}", field="--ci", allowed=", ".join(map(str, df.columns)))
    return ci_table(df, inputs, metrics)


def write_csv(df, path: str | Path) -> Path:
    """Write ``df`` to ``path`` as CSV (temp file + rename)."""
    import os
    import tempfile

    p = Path(path)
    if not p.parent.is_dir():
        raise InputError("folder does not exist", field="--csv", value=str(p))
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=".csv")
    os.close(fd)
    try:
        df.to_csv(tmp, index=False)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p
